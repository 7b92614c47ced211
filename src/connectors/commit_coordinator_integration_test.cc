// The PostgreSQL commit coordinator (storage/commit_coordinator.h) in front of an S3 store whose
// conditional writes are stripped by a proxy (an older S3-compatible server): racing writers get
// exactly one winner per path, a claim left by a killed writer is finished by the next one, and
// two Delta writers committing concurrently lose no commit. The embedded PostgreSQL is the
// coordinator's database; moto is the store.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "sluice/connectors/testing/postgres_fixture.h"
#include "sluice/core/builder.h"
#include "sluice/core/error_classes.h"
#include "sluice/delta/snapshot.h"
#include "sluice/delta/transaction.h"
#include "sluice/delta/writer.h"
#include "sluice/storage/commit_coordinator.h"
#include "sluice/storage/s3_file_system.h"
#include "testing/faulty_http_proxy.h"
#include "testing/s3_server.h"

namespace sluice::connectors {
namespace {

class CommitCoordinatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = testing::PostgresTestDatabase::Create();
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(db).value();
    setenv("SLUICE_TEST_COORDINATOR", db_->connection_string().c_str(), 1);
    auto& server = sluice::testing::S3Server::Shared();
    bucket_uri_ = server.NewBucketUri();
    auto proxy = sluice::testing::FaultyHttpProxy::Start(server.port());
    ASSERT_TRUE(proxy.ok());
    proxy_ = std::move(proxy).value();
    proxy_->set_strip_if_none_match(true);  // the store overwrites: PutObject ignores If-None-Match
  }

  std::shared_ptr<storage::ObjectStoreFileSystem> Store(bool coordinated) {
    std::map<std::string, std::string> options{{"endpoint", proxy_->endpoint()}};
    if (coordinated) options["commit_coordinator"] = "${env:SLUICE_TEST_COORDINATOR}";
    return storage::NewS3FileSystem(bucket_uri_.substr(5), storage::S3OptionsFrom(options).value());
  }
  std::string Path(const std::string& key) const { return bucket_uri_ + "/" + key; }

  std::unique_ptr<testing::PostgresTestDatabase> db_;
  std::string bucket_uri_;
  std::unique_ptr<sluice::testing::FaultyHttpProxy> proxy_;
};

TEST_F(CommitCoordinatorTest, RacingWritersHaveExactlyOneWinnerPerPath) {
  // Without the coordinator such a store is refused for commits.
  EXPECT_EQ(Store(false)->PutIfAbsent(Path("t/0.json"), "x").error_class(),
            errors::kStorageConditionalWriteUnsupported);
  for (int round = 0; round < 3; ++round) {
    const std::string path = Path(fmt::format("t/_delta_log/{:020d}.json", round));
    std::atomic<int> winners{0}, losers{0};
    std::atomic<int> winner_id{-1};
    std::vector<std::thread> writers;
    for (int writer = 0; writer < 6; ++writer) {
      writers.emplace_back([&, writer] {
        auto fs = Store(true);  // a process of its own, as far as the store and database can tell
        Status put = fs->PutIfAbsent(path, fmt::format("writer {}", writer));
        if (put.ok()) {
          ++winners;
          winner_id = writer;
        } else if (put.error_class() == errors::kFileAlreadyExists) {
          ++losers;
        } else {
          ADD_FAILURE() << put.ToString();
        }
      });
    }
    for (auto& writer : writers) writer.join();
    EXPECT_EQ(winners.load(), 1) << "round " << round;
    EXPECT_EQ(losers.load(), 5) << "round " << round;
    EXPECT_EQ(Store(false)->ReadFile(path).value(), fmt::format("writer {}", winner_id.load()));
  }
  EXPECT_EQ(db_->QueryValue("SELECT count(*) FROM sluice_commit_coordinator WHERE complete").value(), "3");
}

TEST_F(CommitCoordinatorTest, AClaimLeftByAKilledWriterIsFinishedByTheNextClaimant) {
  auto fs = Store(true);
  ASSERT_TRUE(fs->PutIfAbsent(Path("log/0.json"), "zero").ok());  // creates the table
  // A writer claimed version 1 and was killed before its PUT: the row holds its bytes, no object.
  const std::string uri = Path("log/1.json");
  ASSERT_TRUE(db_->Execute(fmt::format("INSERT INTO sluice_commit_coordinator (path, bytes) VALUES ('{}', "
                                       "convert_to('orphaned commit', 'UTF8'))",
                                       uri))
                  .ok());
  EXPECT_FALSE(fs->Exists(uri).value());
  EXPECT_EQ(fs->PutIfAbsent(uri, "a later writer").error_class(), errors::kFileAlreadyExists);
  EXPECT_EQ(fs->ReadFile(uri).value(), "orphaned commit");
  EXPECT_EQ(db_->QueryValue(fmt::format("SELECT complete FROM sluice_commit_coordinator WHERE path = '{}'", uri))
                .value(),
            "t");
  // A writer retrying its own claim (its reply lost) finds its bytes and goes on as the winner.
  ASSERT_TRUE(db_->Execute(fmt::format("INSERT INTO sluice_commit_coordinator (path, bytes) VALUES ('{}', "
                                       "convert_to('mine', 'UTF8'))",
                                       Path("log/2.json")))
                  .ok());
  EXPECT_TRUE(fs->PutIfAbsent(Path("log/2.json"), "mine").ok());
  EXPECT_EQ(fs->ReadFile(Path("log/2.json")).value(), "mine");
}

TEST_F(CommitCoordinatorTest, TwoDeltaWritersLoseNoCommit) {
  const std::string table = Path("orders");
  constexpr int kCommitsEach = 12;
  Int64Builder ids(DataType::Long());
  ids.Append(0);
  auto batch = RecordBatch::Make(ParseTypeString("struct<id:bigint>").value(), {ids.Finish()}, 1).value();
  ASSERT_TRUE(delta::WriteTable(Store(true), table, {batch}).ok());
  std::vector<std::thread> writers;
  for (int writer = 0; writer < 2; ++writer) {
    writers.emplace_back([&, writer] {
      auto fs = Store(true);
      for (int i = 0; i < kCommitsEach; ++i) {
        for (int attempt = 0;; ++attempt) {
          auto txn = delta::Transaction::Start(fs, table);
          ASSERT_TRUE(txn.ok()) << txn.status().ToString();
          delta::AddFile add;
          add.path = fmt::format("part-{}-{}.parquet", writer, i);
          add.size = 100;
          add.modification_time = 1800000000000;
          add.data_change = true;
          (*txn)->Add(add);
          Result<int64_t> committed = (*txn)->Commit(delta::kOperationWrite, {{"mode", "Append"}});
          if (committed.ok()) break;
          ASSERT_LT(attempt, 50) << committed.status().ToString();
        }
      }
    });
  }
  for (auto& writer : writers) writer.join();
  auto snapshot = delta::Snapshot::Load(Store(true), table);
  ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString();
  std::set<std::string> files;
  for (const auto& add : (*snapshot)->files()) files.insert(add.path);
  EXPECT_EQ(files.size(), 2u * kCommitsEach + 1);
  EXPECT_EQ((*snapshot)->version(), 2 * kCommitsEach);
}

TEST(CommitCoordinatorOptionsTest, BadTablesAndUnreachableServersAreRefusedByClass) {
  EXPECT_EQ(storage::ConnectPostgresCommitCoordinator("host=127.0.0.1", "bad-name").status().error_class(),
            errors::kInvalidStorageUri);
  EXPECT_EQ(storage::ConnectPostgresCommitCoordinator("host=127.0.0.1", "a.b.c").status().error_class(),
            errors::kInvalidStorageUri);
  auto unreachable = storage::ConnectPostgresCommitCoordinator(
      "postgresql://sluice:do-not-print@127.0.0.1:1/none?connect_timeout=2", "commits");
  ASSERT_FALSE(unreachable.ok());
  EXPECT_EQ(unreachable.status().error_class(), errors::kPgConnectionFailed);
  EXPECT_EQ(unreachable.status().message().find("do-not-print"), std::string_view::npos);
}

}  // namespace
}  // namespace sluice::connectors
