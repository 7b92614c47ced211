// The change feed's crash test: a child process running the feed is killed with SIGKILL at random
// moments under a concurrent write load (small and large transactions, a table created midway),
// restarted each time; then the history of every table, replayed in `_sort_by` order, must equal
// the source table exactly.
//
// The test runs its own binary as the child: when SLUICE_CDF_CRASH_CONNINFO is set, the binary
// runs the feed from a static initializer, before any test, until it is killed. The random seed is
// printed; SLUICE_CRASH_SEED replays a run's kill times.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <iostream>
#include <random>
#include <thread>

#include "pg_change_feed_testing.h"
#include "sluice/connectors/pg_change_feed.h"
#include "sluice/connectors/pg_connection.h"
#include "sluice/connectors/pgoutput.h"
#include "sluice/connectors/testing/postgres_fixture.h"
#include "testing/child_process.h"
#include "testing/crash_seed.h"
#include "testing/temp_dir.h"

namespace sluice::connectors {
namespace {

constexpr int kKills = 30;

ChangeFeedConfig CrashConfig(const std::string& conninfo, const std::string& warehouse, const std::string& slot) {
  ChangeFeedConfig config;
  config.conninfo = conninfo;
  config.schema = "public";
  config.warehouse = warehouse;
  config.target_catalog = "main";
  config.target_schema = "cdc";
  config.slot_name = slot;
  config.publication_name = slot;
  config.flush_interval = std::chrono::milliseconds(50);
  // Small enough that the large transactions are flushed in parts.
  config.max_buffered_rows = 700;
  return config;
}

[[maybe_unused]] const bool kIsCrashChild = [] {
  const char* conninfo = std::getenv("SLUICE_CDF_CRASH_CONNINFO");
  const char* warehouse = std::getenv("SLUICE_CDF_CRASH_WAREHOUSE");
  const char* slot = std::getenv("SLUICE_CDF_CRASH_SLOT");
  if (conninfo == nullptr || warehouse == nullptr || slot == nullptr) return false;
  std::atomic<bool> never{false};
  auto feed = PgChangeFeed::Start(CrashConfig(conninfo, warehouse, slot));
  Status status = feed.ok() ? (*feed)->Run(never) : feed.status();
  std::fprintf(stderr, "the crash child ended before it was killed: %s\n", status.ToString().c_str());
  std::_Exit(3);
}();

pid_t SpawnChild(const std::string& conninfo, const std::string& warehouse, const std::string& slot) {
  return sluice::testing::SpawnSelf({"SLUICE_CDF_CRASH_CONNINFO=" + conninfo, "SLUICE_CDF_CRASH_WAREHOUSE=" + warehouse,
                                     "SLUICE_CDF_CRASH_SLOT=" + slot},
                                    warehouse + "/child.log");
}

std::multiset<std::string> SourceRows(testing::PostgresTestDatabase& db, const std::string& select) {
  std::multiset<std::string> out;
  auto rows = db.Query(select);
  EXPECT_TRUE(rows.ok()) << rows.status().ToString();
  if (!rows.ok()) return out;
  for (const auto& row : *rows) {
    std::string text;
    for (size_t i = 0; i < row.size(); ++i) text += (i > 0 ? "," : "") + (row[i] == "NULL" ? "null" : row[i]);
    out.insert(text);
  }
  return out;
}

TEST(ChangeFeedCrashTest, HistoryReplaysToTheSourceAfterRepeatedKills) {
  const uint64_t seed = sluice::testing::CrashSeed();
  std::mt19937_64 random(seed);

  auto db = testing::PostgresTestDatabase::Create();
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  sluice::testing::TempDir dir("sluice-cdf-crash");
  const std::string slot = "cdf_crash_" + (*db)->name();
  ASSERT_TRUE((*db)
                  ->Execute("CREATE TABLE accounts (id int PRIMARY KEY, balance int, note text);"
                            "ALTER TABLE accounts REPLICA IDENTITY FULL;"
                            "INSERT INTO accounts SELECT g, 100, 'n' || g FROM generate_series(1, 1000) g")
                  .ok());

  std::atomic<bool> writing{true};
  std::atomic<int> transactions{0};
  std::thread writer([&] {
    auto conn = PgConnection::Connect((*db)->connection_string());
    ASSERT_TRUE(conn.ok());
    std::mt19937 pick(static_cast<uint32_t>(seed));
    for (int n = 1; writing.load(); ++n) {
      std::string sql;
      if (n == 40) {
        sql = "CREATE TABLE ledger (id int, account int, amount int); ALTER TABLE ledger REPLICA IDENTITY FULL";
      } else if (n > 40 && n % 50 == 0) {
        // A transaction larger than the feed's buffer.
        sql = "INSERT INTO ledger SELECT g, g % 1000, 1 FROM generate_series(" + std::to_string(n * 10000) + ", " +
              std::to_string(n * 10000 + 1500) + ") g";
      } else {
        int id = static_cast<int>(pick() % (1000 + n)) + 1;
        sql = "BEGIN; INSERT INTO accounts VALUES (" + std::to_string(1000 + n) + ", 1, 'new');" +
              "UPDATE accounts SET balance = balance + 1, note = 'u" + std::to_string(n) + "' WHERE id = " +
              std::to_string(id) + ";" + (n % 4 == 0 ? "DELETE FROM accounts WHERE id = " + std::to_string(id / 2 + 1) + ";" : "") +
              (n > 40 ? "INSERT INTO ledger VALUES (" + std::to_string(n) + ", " + std::to_string(id) + ", 5);" : "") +
              "COMMIT";
      }
      ASSERT_TRUE((*conn)->Execute(sql).ok());
      ++transactions;
      std::this_thread::sleep_for(std::chrono::milliseconds(4));
    }
  });

  const std::string conninfo = (*db)->connection_string();
  for (int kill = 0; kill < kKills; ++kill) {
    pid_t child = SpawnChild(conninfo, dir.path(), slot);
    ASSERT_GT(child, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<int>(150, 900)(random)));
    ASSERT_EQ(::kill(child, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the child exited by itself; its log:\n"
                                     << LocalFileSystem()->ReadFile(dir.Join("child.log")).value_or("");
  }
  writing = false;
  writer.join();
  std::cout << transactions.load() << " transactions written under " << kKills << " kills\n";

  // One last run catches up with everything written, then is killed too.
  auto settle_start = std::chrono::steady_clock::now();
  pid_t child = SpawnChild(conninfo, dir.path(), slot);
  ASSERT_GT(child, 0);
  auto target = (*db)->QueryValue("SELECT pg_current_wal_lsn()");
  ASSERT_TRUE(target.ok());
  bool caught_up = false;
  for (auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
       !caught_up && std::chrono::steady_clock::now() < deadline;) {
    auto confirmed = (*db)->QueryValue("SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = '" +
                                       slot + "'");
    caught_up = confirmed.ok() && *ParseLsn(*confirmed) >= *ParseLsn(*target);
    if (!caught_up) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  std::cout << "the last run caught up in "
            << std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - settle_start)
                   .count()
            << " ms\n";
  ASSERT_TRUE(caught_up) << LocalFileSystem()->ReadFile(dir.Join("child.log")).value_or("");

  auto accounts = cdf_testing::ReadHistory(dir.Join("main/cdc/lb_accounts_history"));
  ASSERT_TRUE(accounts.ok()) << accounts.status().ToString();
  EXPECT_EQ(cdf_testing::Replay(*accounts), SourceRows(**db, "SELECT id, balance, note FROM accounts"));
  auto ledger = cdf_testing::ReadHistory(dir.Join("main/cdc/lb_ledger_history"));
  ASSERT_TRUE(ledger.ok()) << ledger.status().ToString();
  EXPECT_EQ(cdf_testing::Replay(*ledger), SourceRows(**db, "SELECT id, account, amount FROM ledger"));
  std::cout << accounts->rows.size() << " + " << ledger->rows.size() << " history rows replayed\n";

  // Leave no slot behind on the shared server.
  EXPECT_TRUE(DropChangeFeedSlot(CrashConfig(conninfo, dir.path(), slot)).ok());
}

}  // namespace
}  // namespace sluice::connectors
