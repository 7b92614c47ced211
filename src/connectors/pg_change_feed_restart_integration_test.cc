// The change feed when its PostgreSQL server goes away mid-stream: a restart (fast shutdown) and a
// crash (SIGKILL of every server process, then crash recovery, after which the replication slot's
// position may be older than what the feed had confirmed). In both the feed ends with an error
// and status FAILED, a new start resumes, and every history replays to its source table.
//
// These tests restart the shared test server: its port changes, so each start of the feed reads
// the current one (ChangeFeedTest::Config).
#include <gtest/gtest.h>

#include <atomic>
#include <iostream>
#include <random>
#include <thread>

#include "pg_change_feed_testing.h"
#include "sluice/connectors/pg_change_feed.h"
#include "sluice/connectors/pg_connection.h"

namespace sluice::connectors {
namespace {

using cdf_testing::ChangeFeedTest;
using cdf_testing::History;
using cdf_testing::ReadHistory;
using cdf_testing::Replay;

// Writes small transactions (an insert, an update, sometimes a delete) until stopped, reconnecting
// when the server goes away; a transaction cut off by the server either committed or did not,
// and the test compares with what the table holds in the end.
class Writer {
 public:
  explicit Writer(testing::PostgresTestDatabase* db) : db_(db) {
    thread_ = std::thread([this] { Loop(); });
  }
  ~Writer() { Stop(); }

  void Stop() {
    running_ = false;
    if (thread_.joinable()) thread_.join();
  }
  int committed() const { return committed_.load(); }

 private:
  void Loop() {
    std::mt19937 random(11);
    std::unique_ptr<PgConnection> conn;
    for (int n = 1; running_.load(); ++n) {
      if (conn == nullptr) {
        auto connected = PgConnection::Connect(db_->connection_string());
        if (!connected.ok()) {
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
          continue;
        }
        conn = std::move(*connected);
      }
      int id = static_cast<int>(random() % 500) + 1;
      std::string sql = "BEGIN; INSERT INTO accounts VALUES (" + std::to_string(1000 + n) + ", 1, 'new');" +
                        "UPDATE accounts SET balance = balance + 1, note = 'u" + std::to_string(n) +
                        "' WHERE id = " + std::to_string(id) + ";" +
                        (n % 3 == 0 ? "DELETE FROM accounts WHERE id = " + std::to_string(id / 2 + 1) + ";" : "") +
                        "COMMIT";
      if ((conn)->Execute(sql).ok()) {
        ++committed_;
      } else {
        conn.reset();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(3));
    }
  }

  testing::PostgresTestDatabase* db_;
  std::atomic<bool> running_{true};
  std::atomic<int> committed_{0};
  std::thread thread_;
};

class ChangeFeedServerRestartTest : public ChangeFeedTest {
 protected:
  void CreateAccounts() {
    Execute("CREATE TABLE accounts (id int PRIMARY KEY, balance int, note text);"
            "ALTER TABLE accounts REPLICA IDENTITY FULL;"
            "INSERT INTO accounts SELECT g, 100, 'n' || g FROM generate_series(1, 500) g");
  }

  // The test's own connection learns of the new server at its first failed query.
  void Reconnect() { (void)db_->QueryValue("SELECT 1"); }

  // The feed ended on the server's going away, and said so in status.json.
  void ExpectFeedFailedCleanly() {
    Status ended = FeedEnds();
    EXPECT_EQ(ended.error_class(), "PG_CONNECTION_FAILED") << ended.ToString();
    std::cout << "the feed ended with " << ended.ToString() << "\n";
    auto status = ChangeFeedStatus(Config());
    ASSERT_TRUE(status.ok());
    EXPECT_NE(status->find("{\"status\":\"FAILED\",\"error\":"), std::string::npos) << *status;
    EXPECT_EQ(RunningChangeFeedPid(Config()), 0);
  }

  void ExpectHistoryReplaysToTheSource() {
    auto history = ReadHistory(HistoryPath("lb_accounts_history"));
    ASSERT_TRUE(history.ok()) << history.status().ToString();
    EXPECT_EQ(Replay(*history), SourceRows("SELECT id, balance, note FROM accounts"));
    std::cout << history->rows.size() << " history rows replayed\n";
  }

  Lsn SlotPosition() {
    auto text = db_->QueryValue("SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = '" +
                                Config().slot_name + "'");
    EXPECT_TRUE(text.ok()) << text.status().ToString();
    return text.ok() ? ParseLsn(*text).value_or(0) : 0;
  }
};

TEST_F(ChangeFeedServerRestartTest, ARestartMidStreamEndsTheFeedCleanlyAndANewStartResumes) {
  CreateAccounts();
  StartFeed();
  Writer writer(db_.get());
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  // A fast shutdown waits for the feed to confirm what it was sent, then closes the stream.
  ASSERT_TRUE(db_->server().Restart().ok());
  Reconnect();
  ExpectFeedFailedCleanly();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  StartFeed();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  writer.Stop();
  CatchUp();
  std::cout << writer.committed() << " transactions committed across the restart\n";
  ExpectHistoryReplaysToTheSource();
}

TEST_F(ChangeFeedServerRestartTest, AServerCrashWithTheSlotMovedBackwardsWritesEveryChangeOnce) {
  CreateAccounts();
  StartFeed();
  Writer writer(db_.get());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // The slot's position reaches disk at checkpoints (and when the server saves the slot for its
  // own reasons); what the feed confirms after this one is lost in the crash.
  ASSERT_TRUE(db_->Execute("CHECKPOINT").ok());
  CatchUp();
  const Lsn checkpointed = SlotPosition();
  // The feed's state as it was here: restored after the crash, it is behind the history tables,
  // as after a crash of sluice between its Delta commits and state.json.
  const std::string state_path = Config().state_directory() + "/state.json";
  auto early_state = LocalFileSystem()->ReadFile(state_path);
  ASSERT_TRUE(early_state.ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  CatchUp();
  const Lsn confirmed = feed_->confirmed_lsn();

  ASSERT_TRUE(db_->server().Kill9().ok());
  ExpectFeedFailedCleanly();
  ASSERT_TRUE(LocalFileSystem()->AtomicWrite(state_path, *early_state).ok());
  ASSERT_TRUE(db_->server().Start().ok());
  Reconnect();
  const Lsn recovered = SlotPosition();
  std::cout << "slot position: " << FormatLsn(checkpointed) << " at the checkpoint, " << FormatLsn(confirmed)
            << " confirmed before the crash, " << FormatLsn(recovered) << " after recovery\n";
  EXPECT_LT(recovered, confirmed) << "the crash should have taken the slot back";

  StartFeed();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  writer.Stop();
  CatchUp();
  std::cout << writer.committed() << " transactions committed across the crash\n";
  // ReadHistory fails on two rows sharing a _sort_by: a change written twice.
  ExpectHistoryReplaysToTheSource();
}

}  // namespace
}  // namespace sluice::connectors
