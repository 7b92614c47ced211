// Commits and snapshots together: what a commit writes is what a snapshot reads back, and
// concurrent writers never lose or duplicate a commit.
#include "sluice/delta/transaction.h"

#include <sys/wait.h>
#include <unistd.h>
#include <utime.h>

#include <gtest/gtest.h>

#include "sluice/core/error_classes.h"
#include "sluice/core/fault_injection.h"
#include "sluice/delta/log.h"
#include "testing/store_root.h"
#include "testing/temp_dir.h"

namespace sluice::delta {
namespace {

constexpr std::string_view kSchema =
    R"({"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},)"
    R"({"name":"day","type":"string","nullable":true,"metadata":{}}]})";

Metadata TableMetadata(std::string schema = std::string(kSchema)) {
  Metadata metadata;
  metadata.id = "af23c9d7-fff1-4a5a-a2c8-55c59bd782aa";
  metadata.schema_string = std::move(schema);
  metadata.partition_columns = {"day"};
  metadata.created_time = 1700000000000;
  return metadata;
}

AddFile File(std::string path, int64_t size = 100) {
  AddFile add;
  add.path = std::move(path);
  add.partition_values = {{"day", "2026-01-01"}};
  add.size = size;
  add.modification_time = 1700000000000;
  return add;
}

RemoveFile Tombstone(std::string path) {
  RemoveFile remove;
  remove.path = std::move(path);
  remove.deletion_timestamp = 1700000000001;
  return remove;
}

// Every test runs on the local disk and on S3 (moto on loopback).
class TransactionTest : public ::testing::TestWithParam<sluice::testing::Store> {
 protected:
  void CreateTable() {
    auto txn = Transaction::Start(fs_, table_);
    ASSERT_TRUE(txn.ok()) << txn.status().ToString();
    ASSERT_TRUE((*txn)->SetMetadata(TableMetadata()).ok());
    auto version = (*txn)->Commit(kOperationCreateTable, {});
    ASSERT_TRUE(version.ok()) << version.status().ToString();
    ASSERT_EQ(*version, 0);
  }

  int64_t Append(std::vector<std::string> paths) {
    auto txn = Transaction::Start(fs_, table_);
    EXPECT_TRUE(txn.ok()) << txn.status().ToString();
    for (auto& path : paths) (*txn)->Add(File(path));
    auto version = (*txn)->Commit(kOperationWrite, {{"mode", "Append"}});
    EXPECT_TRUE(version.ok()) << version.status().ToString();
    return version.value_or(-1);
  }

  SnapshotPtr Load(SnapshotOptions options = {}) {
    auto snapshot = Snapshot::Load(fs_, table_, options);
    EXPECT_TRUE(snapshot.ok()) << snapshot.status().ToString();
    return snapshot.ok() ? *snapshot : nullptr;
  }

  static std::vector<std::string> Paths(const Snapshot& snapshot) {
    std::vector<std::string> paths;
    for (const AddFile& file : snapshot.files()) paths.push_back(file.path);
    return paths;
  }

  void WriteCommit(int64_t version, const std::vector<Action>& actions) {
    ASSERT_TRUE(fs_->PutIfAbsent(CommitPath(table_, version), SerializeActions(actions)).ok());
  }

  sluice::testing::StoreRoot dir_{GetParam()};
  std::string table_ = dir_.Join("table");
  std::shared_ptr<FileSystem> fs_ = dir_.file_system();
};

TEST_P(TransactionTest, CreatingATableWritesCommitInfoFirstThenProtocolAndMetadata) {
  CreateTable();
  auto actions = ReadCommit(*fs_, table_, 0);
  ASSERT_TRUE(actions.ok());
  ASSERT_EQ(actions->size(), 3u);
  const auto& info = std::get<CommitInfo>((*actions)[0]);
  EXPECT_EQ(info.operation, "CREATE TABLE");
  EXPECT_EQ(info.engine_info, EngineInfo());
  EXPECT_TRUE(info.timestamp.has_value());
  EXPECT_FALSE(info.read_version.has_value());
  EXPECT_EQ(std::get<Protocol>((*actions)[1]), (Protocol{1, 2, std::nullopt, std::nullopt}));
  EXPECT_EQ(std::get<Metadata>((*actions)[2]), TableMetadata());
  EXPECT_EQ(EngineInfo().substr(0, 7), "sluice/");
}

TEST_P(TransactionTest, TimestampNtzColumnsGetTheTableFeatureInBothLists) {
  auto txn = Transaction::Start(fs_, table_);
  ASSERT_TRUE(txn.ok());
  ASSERT_TRUE((*txn)->SetMetadata(TableMetadata(
      R"({"type":"struct","fields":[{"name":"s","type":{"type":"struct","fields":[)"
      R"({"name":"t","type":"timestamp_ntz","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}},)"
      R"({"name":"day","type":"string","nullable":true,"metadata":{}}]})")).ok());
  ASSERT_TRUE((*txn)->Commit(kOperationCreateTable, {}).ok());
  SnapshotPtr snapshot = Load();
  ASSERT_TRUE(snapshot);
  EXPECT_EQ(snapshot->protocol(), (Protocol{3, 7, std::vector<std::string>{"timestampNtz"},
                                            std::vector<std::string>{"timestampNtz"}}));
}

// Writers of a table of features must know every feature its metadata uses: a field that is not
// nullable (at any depth) is a NOT NULL invariant, delta.appendOnly the appendOnly feature (Delta
// Spark refuses a table whose metadata uses a feature its protocol does not list); a legacy
// protocol (writer 2) implies both and stays.
TEST_P(TransactionTest, TablesOfFeaturesListTheWriterFeaturesTheirMetadataUses) {
  const std::string kNotNullInside =
      R"({"type":"struct","fields":[{"name":"s","type":{"type":"struct","fields":[)"
      R"({"name":"t","type":"timestamp_ntz","nullable":true,"metadata":{}},)"
      R"({"name":"k","type":"long","nullable":false,"metadata":{}}]},"nullable":true,"metadata":{}}]})";
  auto txn = Transaction::Start(fs_, table_);
  ASSERT_TRUE(txn.ok());
  Metadata metadata = TableMetadata(kNotNullInside);
  metadata.partition_columns.clear();
  metadata.configuration["delta.appendOnly"] = "true";
  ASSERT_TRUE((*txn)->SetMetadata(metadata).ok());
  ASSERT_TRUE((*txn)->Commit(kOperationCreateTable, {}).ok());
  EXPECT_EQ(Load()->protocol(), (Protocol{3, 7, std::vector<std::string>{"timestampNtz"},
                                          std::vector<std::string>{"timestampNtz", "appendOnly", "invariants"}}));

  // A legacy table that gains a timestamp_ntz column lists the features writer 2 implied.
  const std::string legacy = table_ + "_legacy";
  auto create = Transaction::Start(fs_, legacy);
  Metadata ids = TableMetadata(R"({"type":"struct","fields":[{"name":"id","type":"long","nullable":false,"metadata":{}}]})");
  ids.partition_columns.clear();
  ASSERT_TRUE((*create)->SetMetadata(ids).ok());
  ASSERT_TRUE((*create)->Commit(kOperationCreateTable, {}).ok());
  auto snapshot = Snapshot::Load(fs_, legacy);
  ASSERT_TRUE(snapshot.ok());
  EXPECT_EQ((*snapshot)->protocol(), (Protocol{1, 2, std::nullopt, std::nullopt}));
  auto evolve = Transaction::Start(fs_, legacy);
  Metadata evolved = TableMetadata(R"({"type":"struct","fields":[{"name":"id","type":"long","nullable":false,"metadata":{}},)"
                                   R"({"name":"t","type":"timestamp_ntz","nullable":true,"metadata":{}}]})");
  evolved.partition_columns.clear();
  ASSERT_TRUE((*evolve)->SetMetadata(evolved).ok());
  ASSERT_TRUE((*evolve)->Commit(kOperationWrite, {}).ok());
  snapshot = Snapshot::Load(fs_, legacy);
  ASSERT_TRUE(snapshot.ok());
  EXPECT_EQ((*snapshot)->protocol(), (Protocol{3, 7, std::vector<std::string>{"timestampNtz"},
                                               std::vector<std::string>{"appendOnly", "invariants", "timestampNtz"}}));
}

TEST_P(TransactionTest, SnapshotReconcilesAddsRemovesAndTxns) {
  CreateTable();
  EXPECT_EQ(Append({"a.parquet", "b.parquet"}), 1);
  {
    auto txn = Transaction::Start(fs_, table_);
    ASSERT_TRUE(txn.ok());
    EXPECT_EQ((*txn)->TransactionVersion("query-1"), std::nullopt);
    (*txn)->Remove(Tombstone("a.parquet"));
    (*txn)->Add(File("c.parquet"));
    (*txn)->SetTransactionVersion("query-1", 7);
    (*txn)->SetTransactionVersion("query-2", 3);
    auto version = (*txn)->Commit(kOperationStreamingUpdate, {{"outputMode", "Append"}});
    ASSERT_TRUE(version.ok()) << version.status().ToString();
    EXPECT_EQ(*version, 2);
  }
  SnapshotPtr snapshot = Load();
  ASSERT_TRUE(snapshot);
  EXPECT_EQ(snapshot->version(), 2);
  EXPECT_EQ(Paths(*snapshot), (std::vector<std::string>{"b.parquet", "c.parquet"}));
  ASSERT_EQ(snapshot->tombstones().size(), 1u);
  EXPECT_EQ(snapshot->tombstones()[0].path, "a.parquet");
  EXPECT_EQ(snapshot->TransactionVersion("query-1"), 7);
  EXPECT_EQ(snapshot->TransactionVersion("query-2"), 3);
  EXPECT_EQ(snapshot->TransactionVersion("query-3"), std::nullopt);
  EXPECT_EQ(snapshot->total_size_bytes(), 200);
  EXPECT_EQ(snapshot->schema()->num_fields(), 2);

  // Re-adding a removed file brings it back and clears its tombstone.
  EXPECT_EQ(Append({"a.parquet"}), 3);
  snapshot = Load();
  EXPECT_EQ(Paths(*snapshot), (std::vector<std::string>{"a.parquet", "b.parquet", "c.parquet"}));
  EXPECT_TRUE(snapshot->tombstones().empty());
}

TEST_P(TransactionTest, TimeTravelByVersionAndByTimestamp) {
  CreateTable();
  Append({"a.parquet"});
  Append({"b.parquet"});
  EXPECT_EQ(Paths(*Load({.version = 1})), std::vector<std::string>{"a.parquet"});
  EXPECT_EQ(Load({.version = 0})->files().size(), 0u);
  if (GetParam() == sluice::testing::Store::kLocal) {
    // Give the commits known times, 1 s apart (an object store sets its own).
    for (int64_t version = 0; version <= 2; ++version) {
      struct utimbuf times{};
      times.actime = times.modtime = 1800000000 + version;
      ASSERT_EQ(utime(CommitPath(table_, version).c_str(), &times), 0);
    }
    EXPECT_EQ(Load({.timestamp_ms = 1800000001500})->version(), 1);
    EXPECT_EQ(Load({.timestamp_ms = 1800000002000})->version(), 2);
  }
  const int64_t last_commit_ms = fs_->Stat(CommitPath(table_, 2)).value().modification_time_ms;
  EXPECT_EQ(Load({.timestamp_ms = last_commit_ms + 3'600'000})->version(), 2);
  EXPECT_EQ(Load({.timestamp_ms = 1900000000000})->version(), 2);
  EXPECT_EQ(Snapshot::Load(fs_, table_, {.timestamp_ms = 1700000000000}).status().error_class(),
            errors::kDeltaVersionNotFound);
  EXPECT_EQ(Snapshot::Load(fs_, table_, {.version = 3}).status().error_class(), errors::kDeltaVersionNotFound);
}

TEST(CommitTimesTest, AreMadeStrictlyIncreasing) {
  EXPECT_EQ(MonotonicCommitTimes({5, 5, 3, 10}), (std::vector<int64_t>{5, 6, 7, 10}));
}

TEST_P(TransactionTest, MissingTablesAndBrokenLogsAreReported) {
  EXPECT_EQ(Snapshot::Load(fs_, table_).status().error_class(), errors::kDeltaTableNotFound);
  CreateTable();
  Append({"a.parquet"});
  Append({"b.parquet"});
  ASSERT_TRUE(fs_->Delete(CommitPath(table_, 1)).ok());
  EXPECT_EQ(Snapshot::Load(fs_, table_).status().error_class(), errors::kDeltaLogCorrupt);
  ASSERT_TRUE(fs_->Delete(CommitPath(table_, 0)).ok());
  EXPECT_EQ(Snapshot::Load(fs_, table_).status().error_class(), errors::kDeltaVersionNotFound);
}

TEST_P(TransactionTest, TablesNeedingUnimplementedReaderFeaturesAreRefusedByName) {
  Metadata metadata = TableMetadata();
  WriteCommit(0, {Protocol{3, 7, std::vector<std::string>{"variantType"}, std::vector<std::string>{"variantType"}},
                  metadata});
  Status status = Snapshot::Load(fs_, table_).status();
  EXPECT_EQ(status.error_class(), errors::kDeltaProtocolUnsupported);
  EXPECT_NE(status.message().find("variantType"), std::string_view::npos);

  metadata.configuration["delta.columnMapping.mode"] = "names";
  WriteCommit(1, {Protocol{2, 5, std::nullopt, std::nullopt}, metadata});
  status = Snapshot::Load(fs_, table_).status();
  EXPECT_EQ(status.error_class(), errors::kDeltaProtocolUnsupported);
  EXPECT_NE(status.message().find("'names'"), std::string_view::npos) << status.ToString();
}

// A table another writer widened loads when each recorded change is one sluice widens on reading,
// and is refused naming the change otherwise.
TEST_P(TransactionTest, TypeChangesAreReadWhenSluiceWidensThemAndRefusedOtherwise) {
  Metadata metadata = TableMetadata();
  metadata.partition_columns.clear();
  const Protocol widening{3, 7, std::vector<std::string>{"typeWidening"}, std::vector<std::string>{"typeWidening"}};
  metadata.schema_string =
      R"({"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":)"
      R"({"delta.typeChanges":[{"fromType":"short","toType":"integer"},{"fromType":"integer","toType":"long"}]}}]})";
  WriteCommit(0, {widening, metadata});
  EXPECT_TRUE(Snapshot::Load(fs_, table_).ok()) << Snapshot::Load(fs_, table_).status().ToString();
  metadata.schema_string =
      R"j({"type":"struct","fields":[{"name":"d","type":"decimal(12,2)","nullable":true,"metadata":)j"
      R"j({"delta.typeChanges":[{"fromType":"decimal(10,2)","toType":"decimal(12,2)"}]}}]})j";
  WriteCommit(1, {metadata});
  EXPECT_TRUE(Snapshot::Load(fs_, table_).ok()) << Snapshot::Load(fs_, table_).status().ToString();
  metadata.schema_string =
      R"j({"type":"struct","fields":[{"name":"x","type":"double","nullable":true,"metadata":)j"
      R"j({"delta.typeChanges":[{"fromType":"long","toType":"double"}]}}]})j";
  WriteCommit(2, {metadata});
  Status status = Snapshot::Load(fs_, table_).status();
  EXPECT_EQ(status.error_class(), errors::kDeltaProtocolUnsupported);
  EXPECT_NE(status.message().find("from long to double"), std::string_view::npos) << status.ToString();
}

TEST_P(TransactionTest, WritingIsRefusedWhenAWriterFeatureIsInUse) {
  Metadata metadata = TableMetadata();
  metadata.configuration["delta.constraints.positive"] = "id > 0";
  WriteCommit(0, {Protocol{1, 3, std::nullopt, std::nullopt}, metadata});
  ASSERT_TRUE(Load());
  auto txn = Transaction::Start(fs_, table_);
  ASSERT_TRUE(txn.ok());
  (*txn)->Add(File("a.parquet"));
  Status status = (*txn)->Commit(kOperationWrite, {}).status();
  EXPECT_EQ(status.error_class(), errors::kDeltaProtocolUnsupported);
  EXPECT_NE(status.message().find("checkConstraints"), std::string_view::npos);
}

TEST_P(TransactionTest, AppendOnlyTablesRefuseRemovingData) {
  Metadata metadata = TableMetadata();
  metadata.configuration["delta.appendOnly"] = "true";
  auto create = Transaction::Start(fs_, table_);
  ASSERT_TRUE((*create)->SetMetadata(metadata).ok());
  ASSERT_TRUE((*create)->Commit(kOperationCreateTable, {}).ok());
  Append({"a.parquet"});
  auto txn = Transaction::Start(fs_, table_);
  (*txn)->Remove(Tombstone("a.parquet"));
  EXPECT_EQ((*txn)->Commit(kOperationTruncate, {}).status().error_class(), errors::kInvalidArgument);
}

TEST_P(TransactionTest, BlindAppendsFromTheSameSnapshotBothCommit) {
  CreateTable();
  auto first = Transaction::Start(fs_, table_);
  auto second = Transaction::Start(fs_, table_);
  (*first)->Add(File("a.parquet"));
  (*second)->Add(File("b.parquet"));
  EXPECT_EQ((*first)->Commit(kOperationWrite, {}).value_or(-1), 1);
  EXPECT_EQ((*second)->Commit(kOperationWrite, {}).value_or(-1), 2);
  EXPECT_EQ(Paths(*Load()), (std::vector<std::string>{"a.parquet", "b.parquet"}));
  auto actions = ReadCommit(*fs_, table_, 2);
  EXPECT_EQ(std::get<CommitInfo>(actions->at(0)).read_version, 0);
}

// Row tracking: fresh files get ids above the table's high-water mark and their commit's version,
// also when a concurrent append took the ids first (the retry assigns after the winner's mark);
// a file without numRecords cannot be given ids; a file re-added keeps its ids while the file a
// rewrite adds gets fresh ones (the rows it copied keep theirs in its materialized columns).
TEST_P(TransactionTest, AppendsToARowTrackingTableGetFreshRowIdsAfterEveryWinner) {
  WriteCommit(0, {Protocol{1, 7, std::nullopt, std::vector<std::string>{"rowTracking", "domainMetadata"}},
                  TableMetadata()});
  auto counted = [](std::string path, int64_t rows) {
    AddFile add = File(std::move(path));
    add.stats = "{\"numRecords\":" + std::to_string(rows) + "}";
    return add;
  };
  auto first = Transaction::Start(fs_, table_);
  auto second = Transaction::Start(fs_, table_);
  (*first)->Add(counted("a.parquet", 10));
  (*first)->Add(counted("b.parquet", 5));
  (*second)->Add(counted("c.parquet", 7));
  ASSERT_EQ((*first)->Commit(kOperationWrite, {}).value_or(-1), 1);
  ASSERT_EQ((*second)->Commit(kOperationWrite, {}).value_or(-1), 2);
  SnapshotPtr snapshot = Load();
  std::map<std::string, std::pair<int64_t, int64_t>> ids;
  for (const AddFile& file : snapshot->files()) {
    ids[file.path] = {file.base_row_id.value_or(-9), file.default_row_commit_version.value_or(-9)};
  }
  EXPECT_EQ(ids, (std::map<std::string, std::pair<int64_t, int64_t>>{
                     {"a.parquet", {0, 1}}, {"b.parquet", {10, 1}}, {"c.parquet", {15, 2}}}));
  EXPECT_EQ(snapshot->domains().at("delta.rowTracking").configuration, R"({"rowIdHighWaterMark":21})");

  auto uncounted = Transaction::Start(fs_, table_);
  (*uncounted)->Add(File("d.parquet"));
  EXPECT_EQ((*uncounted)->Commit(kOperationWrite, {}).status().error_class(), errors::kInternalError);
  auto inserting = Transaction::Start(fs_, table_);
  (*inserting)->Add(counted("e.parquet", 2));
  ASSERT_EQ((*inserting)->Commit(kOperationMerge, {}).value_or(-1), 3) << "a MERGE that only inserts";
  EXPECT_EQ(Load()->domains().at("delta.rowTracking").configuration, R"({"rowIdHighWaterMark":23})");
  auto copying = Transaction::Start(fs_, table_);
  (*copying)->Remove(Tombstone("a.parquet"));
  (*copying)->Add(counted("a2.parquet", 9));
  std::vector<AddFile> files = Load()->files();
  AddFile marked = *std::find_if(files.begin(), files.end(), [](const AddFile& f) { return f.path == "b.parquet"; });
  marked.deletion_vector = DeletionVectorDescriptor{"i", "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L", std::nullopt, 36, 1};
  (*copying)->Remove(Tombstone(marked.path));
  (*copying)->Add(marked);
  ASSERT_EQ((*copying)->Commit(kOperationDelete, {}).value_or(-1), 4);
  ids.clear();
  snapshot = Load();
  for (const AddFile& file : snapshot->files()) {
    ids[file.path] = {file.base_row_id.value_or(-9), file.default_row_commit_version.value_or(-9)};
  }
  EXPECT_EQ(ids, (std::map<std::string, std::pair<int64_t, int64_t>>{
                     {"a2.parquet", {24, 4}}, {"b.parquet", {10, 1}}, {"c.parquet", {15, 2}}, {"e.parquet", {22, 3}}}));
  EXPECT_EQ(Load()->domains().at("delta.rowTracking").configuration, R"({"rowIdHighWaterMark":32})");
}

TEST_P(TransactionTest, ConcurrentTxnForTheSameApplicationConflicts) {
  CreateTable();
  auto first = Transaction::Start(fs_, table_);
  auto second = Transaction::Start(fs_, table_);
  for (auto* txn : {first->get(), second->get()}) {
    EXPECT_EQ(txn->TransactionVersion("query"), std::nullopt);
    txn->SetTransactionVersion("query", 0);
    txn->Add(File(txn == first->get() ? "a.parquet" : "b.parquet"));
  }
  ASSERT_TRUE((*first)->Commit(kOperationStreamingUpdate, {}).ok());
  Status status = (*second)->Commit(kOperationStreamingUpdate, {}).status();
  EXPECT_EQ(status.error_class(), errors::kDeltaConcurrentModification);
  EXPECT_NE(status.message().find("ConcurrentTransaction"), std::string_view::npos) << status.ToString();
  EXPECT_EQ(Paths(*Load()), std::vector<std::string>{"a.parquet"});
}

TEST_P(TransactionTest, OverwriteConflictsWithConcurrentAppendAndDelete) {
  CreateTable();
  Append({"a.parquet"});
  auto overwrite = Transaction::Start(fs_, table_);
  (*overwrite)->ReadWholeTable();
  (*overwrite)->Remove(Tombstone("a.parquet"));
  (*overwrite)->Add(File("new.parquet"));
  Append({"b.parquet"});
  Status status = (*overwrite)->Commit(kOperationWrite, {{"mode", "Overwrite"}}).status();
  EXPECT_NE(status.message().find("ConcurrentAppend"), std::string_view::npos) << status.ToString();

  auto first = Transaction::Start(fs_, table_);
  auto second = Transaction::Start(fs_, table_);
  (*first)->Remove(Tombstone("b.parquet"));
  (*second)->Remove(Tombstone("b.parquet"));
  ASSERT_TRUE((*first)->Commit(kOperationWrite, {}).ok());
  status = (*second)->Commit(kOperationWrite, {}).status();
  EXPECT_NE(status.message().find("ConcurrentDeleteDelete"), std::string_view::npos) << status.ToString();
}

TEST_P(TransactionTest, ADmlCommitIsWriteSerializableBesideBlindAppends) {
  CreateTable();
  Append({"a.parquet", "b.parquet"});
  // A DML commit that read a.parquet commits after a concurrent blind append.
  auto dml = Transaction::Start(fs_, table_);
  (*dml)->ReadFiles({File("a.parquet")});
  (*dml)->Remove(Tombstone("a.parquet"));
  (*dml)->Add(File("a2.parquet"));
  Append({"c.parquet"});
  ASSERT_TRUE((*dml)->Commit(kOperationMerge, {}).ok());
  EXPECT_EQ(Paths(*Load()), (std::vector<std::string>{"a2.parquet", "b.parquet", "c.parquet"}));

  // It fails when the concurrent commit removed a file it read ...
  auto reader = Transaction::Start(fs_, table_);
  (*reader)->ReadFiles({File("b.parquet")});
  (*reader)->Add(File("d.parquet"));
  auto remover = Transaction::Start(fs_, table_);
  (*remover)->Remove(Tombstone("b.parquet"));
  ASSERT_TRUE((*remover)->Commit(kOperationDelete, {}).ok());
  Status status = (*reader)->Commit(kOperationMerge, {}).status();
  EXPECT_NE(status.message().find("ConcurrentDeleteRead"), std::string_view::npos) << status.ToString();

  // ... or added files without being a blind append (another DML commit).
  auto first = Transaction::Start(fs_, table_);
  auto second = Transaction::Start(fs_, table_);
  for (auto* txn : {first->get(), second->get()}) {
    txn->ReadFiles({File("c.parquet")});
    txn->Add(File(txn == first->get() ? "e.parquet" : "f.parquet"));
  }
  ASSERT_TRUE((*first)->Commit(kOperationUpdate, {}).ok());
  status = (*second)->Commit(kOperationUpdate, {}).status();
  EXPECT_NE(status.message().find("ConcurrentAppend"), std::string_view::npos) << status.ToString();
  // A blind append after a DML commit is not disturbed by it.
  auto append = Transaction::Start(fs_, table_);
  (*append)->Add(File("g.parquet"));
  auto dml_again = Transaction::Start(fs_, table_);
  (*dml_again)->ReadFiles({File("c.parquet")});
  (*dml_again)->Remove(Tombstone("c.parquet"));
  ASSERT_TRUE((*dml_again)->Commit(kOperationDelete, {}).ok());
  EXPECT_TRUE((*append)->Commit(kOperationWrite, {}).ok());
}

TEST_P(TransactionTest, MetadataChangeConflictsAndCreatingTwiceIsReported) {
  auto first = Transaction::Start(fs_, table_);
  auto second = Transaction::Start(fs_, table_);
  ASSERT_TRUE((*first)->SetMetadata(TableMetadata()).ok());
  ASSERT_TRUE((*second)->SetMetadata(TableMetadata()).ok());
  ASSERT_TRUE((*first)->Commit(kOperationCreateTable, {}).ok());
  EXPECT_EQ((*second)->Commit(kOperationCreateTable, {}).status().error_class(), errors::kDeltaTableAlreadyExists);

  auto append = Transaction::Start(fs_, table_);
  (*append)->Add(File("a.parquet"));
  auto alter = Transaction::Start(fs_, table_);
  Metadata changed = TableMetadata();
  changed.configuration["k"] = "v";
  ASSERT_TRUE((*alter)->SetMetadata(changed).ok());
  ASSERT_TRUE((*alter)->Commit("SET TBLPROPERTIES", {}).ok());
  Status status = (*append)->Commit(kOperationWrite, {}).status();
  EXPECT_NE(status.message().find("MetadataChanged"), std::string_view::npos) << status.ToString();
}

TEST_P(TransactionTest, ALostReplyToTheCommitWriteStillCommitsOnce) {
  CreateTable();
  auto faulty = std::make_shared<FaultInjectionFileSystem>(fs_);
  faulty->InjectFault({.op = FileOp::kPutIfAbsent, .timing = FaultTiming::kAfter});
  auto txn = Transaction::Start(faulty, table_);
  (*txn)->Add(File("a.parquet"));
  EXPECT_EQ((*txn)->Commit(kOperationWrite, {}).value_or(-1), 1);
  EXPECT_EQ(Load()->version(), 1);

  faulty->InjectFault({.op = FileOp::kPutIfAbsent, .timing = FaultTiming::kBefore});
  txn = Transaction::Start(faulty, table_);
  (*txn)->Add(File("b.parquet"));
  EXPECT_FALSE((*txn)->Commit(kOperationWrite, {}).ok());
  EXPECT_EQ(Paths(*Load()), std::vector<std::string>{"a.parquet"});
}

TEST_P(TransactionTest, EveryInjectedFaultLeavesAReadableTableWithAllOrNothing) {
  // The nth file system call of a whole append fails (before or after taking effect), for every
  // n until the append makes fewer than n calls. Each case starts from the same fresh table.
  for (int nth = 1;; ++nth) {
    bool any_fired = false;
    for (FaultTiming timing : {FaultTiming::kBefore, FaultTiming::kAfter}) {
      table_ = dir_.Join("fault-" + std::to_string(nth) + (timing == FaultTiming::kBefore ? "-before" : "-after"));
      CreateTable();
      Append({"existing.parquet"});
      auto faulty = std::make_shared<FaultInjectionFileSystem>(fs_);
      faulty->InjectFault({.nth = nth, .timing = timing});
      auto txn = Transaction::Start(faulty, table_);
      Result<int64_t> version = Status::Error(errors::kIoError, "not started");
      if (txn.ok()) {
        (*txn)->Add(File("new.parquet"));
        version = (*txn)->Commit(kOperationWrite, {});
      }
      any_fired = any_fired || faulty->InjectedFailures() > 0;
      SnapshotPtr after = Load();
      ASSERT_TRUE(after);
      if (version.ok()) {
        EXPECT_EQ(after->version(), 2);
        EXPECT_EQ(Paths(*after), (std::vector<std::string>{"existing.parquet", "new.parquet"}));
      } else if (version.status().message().find("unknown outcome") == std::string_view::npos) {
        EXPECT_EQ(after->version(), 1) << version.status().ToString();
        EXPECT_EQ(Paths(*after), std::vector<std::string>{"existing.parquet"});
      }
    }
    if (!any_fired) break;
  }
}

TEST_P(TransactionTest, AppendsFromTwoProcessesAreNeitherLostNorDuplicated) {
  CreateTable();
  constexpr int kCommitsPerProcess = 25;
  pid_t children[2];
  for (int child = 0; child < 2; ++child) {
    children[child] = fork();
    ASSERT_GE(children[child], 0);
    if (children[child] == 0) {
      int failures = 0;
      for (int i = 0; i < kCommitsPerProcess; ++i) {
        auto txn = Transaction::Start(fs_, table_);
        if (!txn.ok()) {
          ++failures;
          continue;
        }
        (*txn)->Add(File("p" + std::to_string(child) + "-" + std::to_string(i) + ".parquet"));
        if (!(*txn)->Commit(kOperationWrite, {}).ok()) ++failures;
      }
      _exit(failures == 0 ? 0 : 1);
    }
  }
  for (pid_t child : children) {
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  SnapshotPtr snapshot = Load();
  EXPECT_EQ(snapshot->version(), 2 * kCommitsPerProcess);
  EXPECT_EQ(snapshot->files().size(), 2u * kCommitsPerProcess);
}

INSTANTIATE_TEST_SUITE_P(Stores, TransactionTest, ::testing::ValuesIn(sluice::testing::kAllStores),
                         sluice::testing::StoreName);

}  // namespace
}  // namespace sluice::delta
