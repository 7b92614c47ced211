#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "sluice/core/builder.h"
#include "sluice/core/error_classes.h"
#include "sluice/delta/scan.h"
#include "sluice/delta/snapshot.h"
#include "sluice/connectors/delta/formats.h"
#include "testing/temp_dir.h"

namespace sluice::connectors {

using engine::OutputMode;
using engine::SinkContext;

namespace {

class DeltaSinkModeTest : public ::testing::Test {
 protected:
  // Writes rows [from, to) as batch `batch_id` of query `query_id` through a fresh sink.
  Status Write(const std::string& mode, const std::string& query_id, int64_t batch_id, int64_t from, int64_t to) {
    SLUICE_ASSIGN_OR_RETURN(auto options,
                            ValidateOptions("delta sink", kDeltaSinkOptions, {{"path", table_}, {"mode", mode}}));
    SLUICE_ASSIGN_OR_RETURN(auto sink, MakeDeltaSink(options));
    SLUICE_RETURN_IF_ERROR(sink->Open(SinkContext{query_id, OutputMode::kAppend, LocalFileSystem()}));
    Int64Builder values(DataType::Long());
    for (int64_t v = from; v < to; ++v) values.Append(v);
    TypePtr schema = DataType::Struct({{"value", DataType::Long()}}).value();
    SLUICE_ASSIGN_OR_RETURN(BatchPtr batch, RecordBatch::Make(schema, {values.Finish()}, to - from));
    return AddBatch(*sink, batch_id, *batch);
  }

  std::vector<int64_t> Values() {
    auto snapshot = delta::Snapshot::Load(LocalFileSystem(), table_).value();
    auto scan = delta::TableScan::Open(snapshot, delta::ScanOptions{{"value"}}).value();
    std::vector<int64_t> values;
    while (BatchPtr batch = scan->Next().value()) {
      for (int64_t row = 0; row < batch->num_rows(); ++row) values.push_back(batch->column(0)->Value<int64_t>(row));
    }
    std::sort(values.begin(), values.end());
    return values;
  }

  int64_t Version() { return delta::Snapshot::Load(LocalFileSystem(), table_).value()->version(); }

  testing::TempDir dir_{"sluice-delta-batch"};
  std::string table_ = dir_.Join("table");
};

TEST_F(DeltaSinkModeTest, AppendAddsRowsOfEveryQuery) {
  ASSERT_TRUE(Write("append", "first", 0, 0, 2).ok());
  ASSERT_TRUE(Write("append", "second", 0, 2, 4).ok());
  EXPECT_EQ(Values(), (std::vector<int64_t>{0, 1, 2, 3}));
}

TEST_F(DeltaSinkModeTest, OverwriteReplacesEveryRowInOneCommit) {
  ASSERT_TRUE(Write("append", "first", 0, 0, 3).ok());
  int64_t before = Version();
  ASSERT_TRUE(Write("overwrite", "second", 0, 10, 12).ok());
  EXPECT_EQ(Values(), (std::vector<int64_t>{10, 11}));
  EXPECT_EQ(Version(), before + 1);
}

TEST_F(DeltaSinkModeTest, AReplayedOverwriteIsSkipped) {
  ASSERT_TRUE(Write("overwrite", "copy", 0, 10, 12).ok());
  ASSERT_TRUE(Write("append", "other", 0, 20, 21).ok());
  int64_t before = Version();
  // The same batch of the same query again, as after a crash before the engine logged its commit.
  ASSERT_TRUE(Write("overwrite", "copy", 0, 10, 12).ok());
  EXPECT_EQ(Version(), before);
  EXPECT_EQ(Values(), (std::vector<int64_t>{10, 11, 20}));
}

TEST_F(DeltaSinkModeTest, OverwriteCreatesAMissingTable) {
  ASSERT_TRUE(Write("overwrite", "copy", 0, 5, 7).ok());
  EXPECT_EQ(Values(), (std::vector<int64_t>{5, 6}));
}

// Rows (value, `day=of,week` = value % 2) as batch `batch_id` through a sink of these options.
Status WriteParities(const std::map<std::string, std::string>& given, int64_t batch_id, int64_t from, int64_t to) {
  SLUICE_ASSIGN_OR_RETURN(auto options, ValidateOptions("delta sink", kDeltaSinkOptions, given));
  SLUICE_ASSIGN_OR_RETURN(auto sink, MakeDeltaSink(options));
  SLUICE_RETURN_IF_ERROR(sink->Open(SinkContext{"query", OutputMode::kAppend, LocalFileSystem()}));
  Int64Builder values(DataType::Long());
  Int64Builder parities(DataType::Long());
  for (int64_t v = from; v < to; ++v) {
    values.Append(v);
    parities.Append(v % 2);
  }
  TypePtr schema = DataType::Struct({{"value", DataType::Long()}, {"day=of,week", DataType::Long()}}).value();
  SLUICE_ASSIGN_OR_RETURN(BatchPtr batch, RecordBatch::Make(schema, {values.Finish(), parities.Finish()}, to - from));
  return AddBatch(*sink, batch_id, *batch);
}

TEST_F(DeltaSinkModeTest, PartitionByPartitionsATableTheSinkCreatesInEveryMode) {
  const std::vector<std::map<std::string, std::string>> modes = {
      {},
      {{"mode", "overwrite"}},
      {{"mode", "merge"}, {"merge", "MERGE INTO t USING s ON t.value = s.value WHEN NOT MATCHED THEN INSERT *"}},
  };
  for (size_t m = 0; m < modes.size(); ++m) {
    const std::string table = dir_.Join("partitioned" + std::to_string(m));
    std::map<std::string, std::string> options = modes[m];
    options["path"] = table;
    options["partitionBy"] = " `DAY=OF,WEEK` ";
    ASSERT_TRUE(WriteParities(options, 0, 0, 5).ok()) << m;
    ASSERT_TRUE(WriteParities(options, 1, 4, 6).ok()) << m;  // an overwrite leaves 4 and 5
    auto snapshot = delta::Snapshot::Load(LocalFileSystem(), table).value();
    EXPECT_EQ(snapshot->metadata().partition_columns, std::vector<std::string>{"day=of,week"}) << m;
    std::set<std::optional<std::string>> parities;
    for (const delta::AddFile& file : snapshot->files()) {
      // The name needs column mapping: the values are under its physical name, the only one.
      ASSERT_EQ(file.partition_values.size(), 1u);
      parities.insert(file.partition_values.begin()->second);
    }
    EXPECT_EQ(parities, (std::set<std::optional<std::string>>{"0", "1"})) << m;
    // Another partitioning of the same table: refused, nothing written.
    options["partitionBy"] = "value";
    Status other = WriteParities(options, 2, 6, 8);
    EXPECT_EQ(other.error_class(), errors::kDeltaMetadataMismatch) << m << ": " << other.ToString();
    EXPECT_EQ(delta::Snapshot::Load(LocalFileSystem(), table).value()->version(), snapshot->version()) << m;
  }
  for (std::string_view bad : {"", "a,,b", "`a", "a,"}) {
    auto options = ValidateOptions("delta sink", kDeltaSinkOptions, {{"path", table_}, {"partitionBy", std::string(bad)}});
    EXPECT_EQ(options.status().error_class(), errors::kInvalidOptions) << bad;
  }
  EXPECT_EQ(WriteParities({{"path", table_}, {"partitionBy", "nosuch"}}, 0, 0, 2).error_class(),
            errors::kDeltaPartitionColumnNotFound);
}

TEST_F(DeltaSinkModeTest, OverwriteSchemaRepartitionsATableInAnOverwrite) {
  // A column-mapped table (its partition column's name needs mapping), partitioned by that column.
  std::map<std::string, std::string> options = {{"path", table_}, {"partitionBy", "`day=of,week`"}};
  ASSERT_TRUE(WriteParities(options, 0, 0, 4).ok());
  const std::string id = delta::Snapshot::Load(LocalFileSystem(), table_).value()->metadata().id;
  // Appends never change the partitioning; merge has no overwrite to do it in.
  options["partitionBy"] = "value";
  options["overwriteSchema"] = "true";
  EXPECT_EQ(WriteParities(options, 1, 4, 6).error_class(), errors::kDeltaMetadataMismatch);
  options["mode"] = "merge";
  options["merge"] = "MERGE INTO t USING s ON t.value = s.value WHEN NOT MATCHED THEN INSERT *";
  EXPECT_EQ(WriteParities(options, 1, 4, 6).error_class(), errors::kInvalidOptions);
  options.erase("merge");
  EXPECT_EQ(Version(), 0);

  options["mode"] = "overwrite";
  ASSERT_TRUE(WriteParities(options, 1, 10, 13).ok());
  auto snapshot = delta::Snapshot::Load(LocalFileSystem(), table_).value();
  EXPECT_EQ(snapshot->metadata().partition_columns, std::vector<std::string>{"value"});
  EXPECT_EQ(snapshot->metadata().id, id);
  EXPECT_EQ(Values(), (std::vector<int64_t>{10, 11, 12}));
  EXPECT_EQ(snapshot->files().size(), 3u) << "one folder per value";
  // Back to no partitioning.
  options.erase("partitionBy");
  ASSERT_TRUE(WriteParities(options, 3, 20, 22).ok());
  snapshot = delta::Snapshot::Load(LocalFileSystem(), table_).value();
  EXPECT_TRUE(snapshot->metadata().partition_columns.empty());
  EXPECT_EQ(Values(), (std::vector<int64_t>{20, 21}));
  auto not_bool = ValidateOptions("delta sink", kDeltaSinkOptions, {{"path", table_}, {"overwriteSchema", "yes"}});
  EXPECT_EQ(not_bool.status().error_class(), errors::kInvalidOptions);
}

TEST_F(DeltaSinkModeTest, OnlyAppendAndOverwriteAreModes) {
  auto options = ValidateOptions("delta sink", kDeltaSinkOptions, {{"path", table_}, {"mode", "ignore"}});
  EXPECT_EQ(options.status().error_class(), errors::kInvalidOptions);
}

}  // namespace
}  // namespace sluice::connectors
