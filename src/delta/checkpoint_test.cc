#include "sluice/delta/checkpoint.h"

#include <chrono>

#include <gtest/gtest.h>

#include "sluice/core/error_classes.h"
#include "sluice/delta/log.h"
#include "sluice/delta/transaction.h"
#include "sluice/parquet/writer.h"
#include "testing/temp_dir.h"

namespace sluice::delta {
namespace {

constexpr std::string_view kSchema =
    R"({"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},)"
    R"({"name":"day","type":"string","nullable":true,"metadata":{}}]})";
constexpr int64_t kNow = 1800000000000;

class CheckpointTest : public ::testing::Test {
 protected:
  void Commit(const std::vector<std::string>& adds, const std::vector<std::string>& removes = {},
              std::optional<int64_t> txn = std::nullopt, const StringMap& properties = {}) {
    auto transaction = Transaction::Start(fs_, table_);
    ASSERT_TRUE(transaction.ok()) << transaction.status().ToString();
    if (!(*transaction)->read_snapshot()) {
      Metadata metadata;
      metadata.id = "0b4dc0e6-2c59-4bd2-a3be-7d3a1b0c5f00";
      metadata.schema_string = std::string(kSchema);
      metadata.partition_columns = {"day"};
      metadata.configuration = {{"delta.checkpointInterval", "10"}};
      metadata.configuration.insert(properties.begin(), properties.end());
      ASSERT_TRUE((*transaction)->SetMetadata(metadata).ok());
    }
    for (const std::string& path : adds) {
      AddFile add;
      add.path = path;
      add.partition_values = {{"day", path.size() % 2 ? std::optional<std::string>("2026-01-01") : std::nullopt}};
      add.size = static_cast<int64_t>(path.size());
      add.modification_time = kNow;
      add.stats = R"({"numRecords":3})";
      (*transaction)->Add(add);
    }
    for (const std::string& path : removes) {
      RemoveFile remove;
      remove.path = path;
      remove.deletion_timestamp = kNow;
      (*transaction)->Remove(remove);
    }
    if (txn) (*transaction)->SetTransactionVersion("query", *txn);
    ASSERT_TRUE((*transaction)->Commit(kOperationWrite, {}).ok());
  }

  // 25 commits: versions 10 and 20 are checkpointed.
  void MakeHistory() {
    Commit({});
    for (int i = 1; i <= 24; ++i) {
      std::vector<std::string> removes;
      if (i % 3 == 0) removes.push_back("f" + std::to_string(i - 2) + ".parquet");
      Commit({"f" + std::to_string(i) + ".parquet"}, removes, i);
    }
  }

  // The same table's commits alone, in another directory: a replay without checkpoints.
  SnapshotPtr ReplayWithoutCheckpoints(int64_t version) {
    std::string copy = dir_.Join("copy-" + std::to_string(version));
    for (int64_t v = 0; v <= version; ++v) {
      auto text = fs_->ReadFile(CommitPath(table_, v));
      EXPECT_TRUE(text.ok());
      EXPECT_TRUE(fs_->AtomicWrite(CommitPath(copy, v), *text).ok());
    }
    auto snapshot = Snapshot::Load(fs_, copy);
    EXPECT_TRUE(snapshot.ok()) << snapshot.status().ToString();
    EXPECT_EQ((*snapshot)->checkpoint_version(), -1);
    return *snapshot;
  }

  static void ExpectSameState(const Snapshot& a, const Snapshot& b) {
    EXPECT_EQ(a.version(), b.version());
    EXPECT_EQ(a.protocol(), b.protocol());
    EXPECT_EQ(a.metadata(), b.metadata());
    EXPECT_EQ(a.files(), b.files());
    EXPECT_EQ(a.tombstones(), b.tombstones());
    EXPECT_EQ(a.transactions().size(), b.transactions().size());
    for (const auto& [app_id, txn] : a.transactions()) EXPECT_EQ(b.TransactionVersion(app_id), txn.version);
  }

  sluice::testing::TempDir dir_{"delta-checkpoint"};
  std::string table_ = dir_.Join("table");
  std::shared_ptr<FileSystem> fs_ = LocalFileSystem();
};

TEST_F(CheckpointTest, CommitsCheckpointEveryIntervalAndPointToTheLast) {
  MakeHistory();
  EXPECT_TRUE(fs_->Exists(ClassicCheckpointPath(table_, 10)).value());
  EXPECT_TRUE(fs_->Exists(ClassicCheckpointPath(table_, 20)).value());
  EXPECT_FALSE(fs_->Exists(ClassicCheckpointPath(table_, 24)).value());
  auto pointer = ParseLastCheckpoint(fs_->ReadFile(LastCheckpointPath(table_)).value());
  ASSERT_TRUE(pointer.ok());
  EXPECT_EQ(pointer->version, 20);
  EXPECT_GT(pointer->size_in_bytes.value_or(0), 0);
}

TEST_F(CheckpointTest, CheckpointPlusReplayEqualsReplayAlone) {
  MakeHistory();
  auto latest = Snapshot::Load(fs_, table_);
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  EXPECT_EQ((*latest)->checkpoint_version(), 20);
  EXPECT_EQ((*latest)->version(), 24);
  ExpectSameState(**latest, *ReplayWithoutCheckpoints(24));
  EXPECT_EQ((*latest)->TransactionVersion("query"), 24);

  auto travelled = Snapshot::Load(fs_, table_, {.version = 15});
  ASSERT_TRUE(travelled.ok());
  EXPECT_EQ((*travelled)->checkpoint_version(), 10);
  ExpectSameState(**travelled, *ReplayWithoutCheckpoints(15));
}

TEST_F(CheckpointTest, StaleMissingOrGarbledPointersAreTolerated) {
  MakeHistory();
  SnapshotPtr expected = ReplayWithoutCheckpoints(24);
  for (std::string pointer : {SerializeLastCheckpoint({.version = 10}), SerializeLastCheckpoint({.version = 30}), std::string("{garbage")}) {
    ASSERT_TRUE(fs_->AtomicWrite(LastCheckpointPath(table_), pointer).ok());
    auto snapshot = Snapshot::Load(fs_, table_);
    ASSERT_TRUE(snapshot.ok()) << pointer << ": " << snapshot.status().ToString();
    ExpectSameState(**snapshot, *expected);
  }
  ASSERT_TRUE(fs_->Delete(LastCheckpointPath(table_)).ok());
  ExpectSameState(*Snapshot::Load(fs_, table_).value(), *expected);
}

TEST_F(CheckpointTest, MultiPartCheckpointsAreReadAndIncompleteOnesIgnored) {
  MakeHistory();
  SnapshotPtr expected = ReplayWithoutCheckpoints(24);
  // Version 20 as a two-part checkpoint: every action in part 1, none in part 2.
  std::string log = LogDirectory(table_);
  std::string part1 = log + "/00000000000000000020.checkpoint.0000000001.0000000002.parquet";
  std::string part2 = log + "/00000000000000000020.checkpoint.0000000002.0000000002.parquet";
  ASSERT_TRUE(fs_->Rename(ClassicCheckpointPath(table_, 20), part1, true).ok());
  ASSERT_TRUE(fs_->Delete(LastCheckpointPath(table_)).ok());
  auto incomplete = Snapshot::Load(fs_, table_);
  ASSERT_TRUE(incomplete.ok()) << incomplete.status().ToString();
  EXPECT_EQ((*incomplete)->checkpoint_version(), 10);
  ExpectSameState(**incomplete, *expected);

  auto writer = parquet::ParquetWriter::Open(fs_->OpenForWrite(part2).value(), CheckpointSchema());
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->Close().ok());
  auto complete = Snapshot::Load(fs_, table_);
  ASSERT_TRUE(complete.ok()) << complete.status().ToString();
  EXPECT_EQ((*complete)->checkpoint_version(), 20);
  ExpectSameState(**complete, *expected);
}

// A V2 checkpoint: a UUID-named top-level file (JSON or Parquet) whose sidecars, under
// _delta_log/_sidecars, hold the actions. Built here from a classic checkpoint of version 20 (its
// Parquet file becomes a sidecar); the commits before it are deleted, so only the checkpoint can
// give the state.
TEST_F(CheckpointTest, V2CheckpointsAreReadWithTheirSidecars) {
  MakeHistory();
  SnapshotPtr expected = ReplayWithoutCheckpoints(24);
  const std::string log = LogDirectory(table_);
  ASSERT_TRUE(fs_->CreateDirectories(log + "/_sidecars").ok());
  ASSERT_TRUE(fs_->Rename(ClassicCheckpointPath(table_, 20), log + "/_sidecars/part one.parquet", true).ok());
  ASSERT_TRUE(fs_->Delete(LastCheckpointPath(table_)).ok());
  for (int64_t version = 0; version < 20; ++version) ASSERT_TRUE(fs_->Delete(CommitPath(table_, version)).ok());
  const std::string v2 = log + "/00000000000000000020.checkpoint.3a0d65cd-72ea-4f1b-8a39-2c5b3d5a5c49.json";
  ASSERT_TRUE(fs_->AtomicWrite(v2, "{\"checkpointMetadata\":{\"version\":20}}\n"
                                   "{\"sidecar\":{\"path\":\"part%20one.parquet\",\"sizeInBytes\":1,"
                                   "\"modificationTime\":1}}\n")
                  .ok());
  // The path of a sidecar is a URI path: part%20one names "part one".
  auto snapshot = Snapshot::Load(fs_, table_);
  ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString();
  EXPECT_EQ((*snapshot)->checkpoint_version(), 20);
  ExpectSameState(**snapshot, *expected);

  // Names that are not checkpoints are not read as ones.
  for (std::string name : {"00000000000000000022.checkpoint.not-a-uuid.json",
                           "00000000000000000022.checkpoint.3a0d65cd-72ea-4f1b-8a39-2c5b3d5a5c49.avro",
                           "00000000000000000022.checkpoint.3a0d65cd72ea4f1b8a392c5b3d5a5c49abcd.json"}) {
    ASSERT_TRUE(fs_->AtomicWrite(log + "/" + name, "garbage").ok());
  }
  EXPECT_EQ(ListLog(*fs_, table_).value().checkpoints.rbegin()->first, 20);
  ExpectSameState(*Snapshot::Load(fs_, table_).value(), *expected);

  // A sidecar that is gone, and a sidecar line without its path, fail the load.
  ASSERT_TRUE(fs_->AtomicWrite(v2, "{\"checkpointMetadata\":{\"version\":20}}\n"
                                   "{\"sidecar\":{\"path\":\"gone.parquet\"}}\n")
                  .ok());
  EXPECT_FALSE(Snapshot::Load(fs_, table_).ok());
  ASSERT_TRUE(fs_->AtomicWrite(v2, "{\"sidecar\":{\"sizeInBytes\":3}}\n").ok());
  EXPECT_FALSE(Snapshot::Load(fs_, table_).ok());
}

// A table with delta.checkpointPolicy = v2 has the v2Checkpoint feature, and its checkpoints are V2:
// a UUID-named JSON file ending with checkpointMetadata, pointed at by _last_checkpoint, from which
// the table loads alone once the commits before it are gone.
TEST_F(CheckpointTest, ATableWithV2CheckpointsGetsV2Checkpoints) {
  Commit({}, {}, std::nullopt, {{"delta.checkpointPolicy", "v2"}});
  for (int i = 1; i <= 12; ++i) {
    std::vector<std::string> removes;
    if (i % 3 == 0) removes.push_back("f" + std::to_string(i - 2) + ".parquet");
    Commit({"f" + std::to_string(i) + ".parquet"}, removes, i);
  }
  SnapshotPtr expected = ReplayWithoutCheckpoints(12);
  const Protocol& protocol = expected->protocol();
  ASSERT_TRUE(protocol.reader_features && protocol.writer_features);
  EXPECT_NE(std::find(protocol.reader_features->begin(), protocol.reader_features->end(), "v2Checkpoint"),
            protocol.reader_features->end());
  LogListing listing = ListLog(*fs_, table_).value();
  ASSERT_EQ(listing.checkpoints.size(), 1u);
  ASSERT_EQ(listing.checkpoints.begin()->first, 10);
  const std::string path = listing.checkpoints.begin()->second.paths.at(0);
  EXPECT_TRUE(path.ends_with(".json") && path.find("/00000000000000000010.checkpoint.") != std::string::npos) << path;
  EXPECT_FALSE(fs_->Exists(ClassicCheckpointPath(table_, 10)).value());
  const std::string text = fs_->ReadFile(path).value();
  EXPECT_TRUE(text.ends_with("{\"checkpointMetadata\":{\"version\":10}}\n")) << text;
  EXPECT_EQ(ParseLastCheckpoint(fs_->ReadFile(LastCheckpointPath(table_)).value()).value().version, 10);
  for (int64_t version = 0; version <= 10; ++version) ASSERT_TRUE(fs_->Delete(CommitPath(table_, version)).ok());
  auto snapshot = Snapshot::Load(fs_, table_);
  ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString();
  EXPECT_EQ((*snapshot)->checkpoint_version(), 10);
  ExpectSameState(**snapshot, *expected);
}

TEST_F(CheckpointTest, EveryActionKindSurvivesACheckpoint) {
  Commit({});
  auto transaction = Transaction::Start(fs_, table_);
  AddFile add;
  add.path = "day=__HIVE_DEFAULT_PARTITION__/part%20one.parquet";
  add.partition_values = {{"day", std::nullopt}};
  add.size = 5;
  add.modification_time = 6;
  add.tags = StringMap{{"INSERTION_TIME", "1"}};
  add.base_row_id = 9;
  (*transaction)->Add(add);
  (*transaction)->SetDomainMetadata(DomainMetadata{"com.example", "{}", false});
  ASSERT_TRUE((*transaction)->Commit(kOperationWrite, {}).ok());
  SnapshotPtr snapshot = Snapshot::Load(fs_, table_).value();
  ASSERT_TRUE(WriteCheckpoint(*snapshot, kNow).ok());

  auto reloaded = Snapshot::Load(fs_, table_);
  ASSERT_TRUE(reloaded.ok()) << reloaded.status().ToString();
  EXPECT_EQ((*reloaded)->checkpoint_version(), 1);
  ExpectSameState(**reloaded, *snapshot);
  ASSERT_EQ((*reloaded)->domains().size(), 1u);
  EXPECT_EQ((*reloaded)->domains().at("com.example").configuration, "{}");
}

TEST_F(CheckpointTest, ACorruptCheckpointIsReportedAsSuch) {
  MakeHistory();
  ASSERT_TRUE(fs_->AtomicWrite(ClassicCheckpointPath(table_, 20), "not parquet at all").ok());
  EXPECT_EQ(Snapshot::Load(fs_, table_).status().error_class(), errors::kDeltaLogCorrupt);
}

// A commit missing between the checkpoint and the latest commit is a hole, wherever it is and
// whatever `_last_checkpoint` says: readers get DELTA_LOG_CORRUPT and writers stop, instead of
// taking the version before the hole for the latest and committing over it.
TEST_F(CheckpointTest, AHoleInTheLogStopsReadersAndWriters) {
  for (std::vector<int64_t> missing : {std::vector<int64_t>{21}, {22}, {23}, {21, 22}, {22, 23}, {21, 22, 23}}) {
    const int64_t hole = missing[0];
    SCOPED_TRACE(hole);
    sluice::testing::TempDir dir("delta-hole");
    table_ = dir.Join("table");
    MakeHistory();
    for (int64_t version : missing) ASSERT_TRUE(fs_->Delete(CommitPath(table_, version)).ok());
    Status load = Snapshot::Load(fs_, table_).status();
    EXPECT_EQ(load.error_class(), errors::kDeltaLogCorrupt) << load.ToString();
    EXPECT_NE(load.message().find(std::to_string(hole)), std::string::npos) << load.ToString();
    EXPECT_EQ(Transaction::Start(fs_, table_).status().error_class(), errors::kDeltaLogCorrupt);
    EXPECT_FALSE(fs_->Exists(CommitPath(table_, hole)).value());
    // Time travel to a version before the hole still works.
    EXPECT_TRUE(Snapshot::Load(fs_, table_, {.version = 20}).ok());
  }
}

// A commit file that holds no action (cut short before its first line, or blank) or only part
// of a line is not a commit.
TEST_F(CheckpointTest, EmptyOrTruncatedCommitsAreCorrupt) {
  MakeHistory();
  std::string whole = fs_->ReadFile(CommitPath(table_, 24)).value();
  for (std::string content : {std::string(), std::string("\n"), std::string(" \n\t\n"), whole.substr(0, whole.size() / 2)}) {
    SCOPED_TRACE(content);
    ASSERT_TRUE(fs_->AtomicWrite(CommitPath(table_, 24), content).ok());
    EXPECT_EQ(Snapshot::Load(fs_, table_).status().error_class(), errors::kDeltaLogCorrupt);
    EXPECT_EQ(Transaction::Start(fs_, table_).status().error_class(), errors::kDeltaLogCorrupt);
  }
}

TEST_F(CheckpointTest, LogCleanUpKeepsTheLatestStateAndDropsOldVersions) {
  MakeHistory();
  SnapshotPtr before = Snapshot::Load(fs_, table_).value();
  int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::system_clock::now().time_since_epoch()).count();
  // Nothing has expired yet: the default retention is 30 days.
  EXPECT_EQ(CleanUpExpiredLog(*fs_, *before, now).value_or(-1), 0);

  int64_t far_future = now + ParseIntervalMs("interval 3650 days").value();
  auto deleted = CleanUpExpiredLog(*fs_, *before, far_future);
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  EXPECT_EQ(*deleted, 21);  // commits 0..19 and the checkpoint of version 10
  ExpectSameState(*Snapshot::Load(fs_, table_).value(), *before);
  EXPECT_TRUE(Snapshot::Load(fs_, table_, {.version = 22}).ok());
  EXPECT_EQ(Snapshot::Load(fs_, table_, {.version = 5}).status().error_class(), errors::kDeltaVersionNotFound);
}

TEST(IntervalTest, ParsesSparkIntervals) {
  EXPECT_EQ(ParseIntervalMs("interval 1 week").value_or(-1), 604'800'000);
  EXPECT_EQ(ParseIntervalMs("interval 30 days").value_or(-1), 30 * 86'400'000LL);
  EXPECT_EQ(ParseIntervalMs("INTERVAL 2 HOURS").value_or(-1), 7'200'000);
  EXPECT_EQ(ParseIntervalMs("7 days").status().error_class(), errors::kInvalidOptions);
  EXPECT_EQ(ParseIntervalMs("interval 7 fortnights").status().error_class(), errors::kInvalidOptions);
}

}  // namespace
}  // namespace sluice::delta
