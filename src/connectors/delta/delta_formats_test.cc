#include "sluice/connectors/delta/formats.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "sluice/core/builder.h"
#include "sluice/core/clock.h"
#include "sluice/core/error_classes.h"
#include "sluice/delta/scan.h"
#include "sluice/delta/writer.h"
#include "sluice/engine/memory_sink.h"
#include "sluice/engine/registry.h"
#include "sluice/engine/streaming_query.h"
#include "connectors/delta/delta_formats_testing.h"
#include "testing/temp_dir.h"

namespace sluice::connectors {

using engine::OutputMode;
using engine::QueryConfig;
using engine::SinkContext;
using engine::StreamingQuery;
using engine::Trigger;

namespace {

// Every `value` in the table, sorted.
std::vector<int64_t> TableValues(const std::string& path) {
  auto snapshot = delta::Snapshot::Load(LocalFileSystem(), path);
  EXPECT_TRUE(snapshot.ok()) << snapshot.status().ToString();
  auto scan = delta::TableScan::Open(*snapshot, delta::ScanOptions{{"value"}}).value();
  std::vector<int64_t> values;
  while (true) {
    BatchPtr batch = scan->Next().value();
    if (!batch) break;
    for (int64_t row = 0; row < batch->num_rows(); ++row) values.push_back(batch->column(0)->Value<int64_t>(row));
  }
  std::sort(values.begin(), values.end());
  return values;
}

std::vector<int64_t> Range(int64_t from, int64_t to) {
  std::vector<int64_t> values;
  for (int64_t v = from; v < to; ++v) values.push_back(v);
  return values;
}

class DeltaFormatsTest : public ::testing::Test {
 protected:
  Status RunOnce(std::map<std::string, std::string> source_options, const std::string& sink_format,
                 std::map<std::string, std::string> sink_options, Trigger trigger = Trigger::Once(),
                 const std::string& checkpoint = "checkpoint") {
    SLUICE_ASSIGN_OR_RETURN(auto source, delta_testing::DeltaFormatsRegistry().MakeSource(source_format_, source_options));
    SLUICE_ASSIGN_OR_RETURN(auto sink, delta_testing::DeltaFormatsRegistry().MakeSink(sink_format, sink_options));
    QueryConfig config;
    config.checkpoint_location = dir_.Join(checkpoint);
    config.clock = clock_;
    config.trigger = trigger;
    SLUICE_ASSIGN_OR_RETURN(auto query, StreamingQuery::Start(std::move(source), std::move(sink), std::move(config)));
    return query->Run();
  }

  testing::TempDir dir_;
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>(0);
  std::string source_format_ = "rate";
  std::string table_ = dir_.Join("table");
};

TEST_F(DeltaFormatsTest, RateIntoDeltaAppendsEachBatchOnce) {
  std::map<std::string, std::string> rate = {{"rowsPerSecond", "10"}, {"startTimestamp", "0"}};
  clock_->AdvanceBy(std::chrono::seconds(1));
  ASSERT_TRUE(RunOnce(rate, "delta", {{"path", table_}}).ok());
  clock_->AdvanceBy(std::chrono::seconds(1));
  ASSERT_TRUE(RunOnce(rate, "delta", {{"path", table_}}).ok());
  EXPECT_EQ(TableValues(table_), Range(0, 20));
  auto snapshot = delta::Snapshot::Load(LocalFileSystem(), table_).value();
  EXPECT_EQ(snapshot->version(), 1);
}

TEST_F(DeltaFormatsTest, TheSinkSkipsABatchTheTableAlreadyHolds) {
  auto sink = delta_testing::DeltaFormatsRegistry().MakeSink("delta", {{"path", table_}}).value();
  ASSERT_TRUE(sink->Open(SinkContext{"query-1", OutputMode::kAppend, LocalFileSystem()}).ok());
  auto schema = DataType::Struct({Field{"value", DataType::Long()}}).value();
  Int64Builder values(DataType::Long());
  values.Append(42);
  auto batch = RecordBatch::Make(schema, {values.Finish()}, 1).value();
  ASSERT_TRUE(AddBatch(*sink, 0, *batch).ok());
  ASSERT_TRUE(AddBatch(*sink, 0, *batch).ok()) << "the replay of batch 0";
  ASSERT_TRUE(AddBatch(*sink, 1, *batch).ok());
  EXPECT_EQ(TableValues(table_), (std::vector<int64_t>{42, 42}));
  auto snapshot = delta::Snapshot::Load(LocalFileSystem(), table_).value();
  EXPECT_EQ(snapshot->TransactionVersion("query-1"), 1);
  EXPECT_EQ(snapshot->version(), 1) << "the replay committed nothing";
}

TEST_F(DeltaFormatsTest, TheSinkRefusesUpdateMode) {
  auto sink = delta_testing::DeltaFormatsRegistry().MakeSink("delta", {{"path", table_}}).value();
  QueryConfig config;
  config.checkpoint_location = dir_.Join("checkpoint");
  config.output_mode = OutputMode::kUpdate;
  auto source = delta_testing::DeltaFormatsRegistry().MakeSource("rate", {}).value();
  auto query = StreamingQuery::Start(std::move(source), std::move(sink), std::move(config));
  ASSERT_FALSE(query.ok());
  EXPECT_EQ(query.status().error_class(), errors::kUnsupportedOutputMode);
}

TEST_F(DeltaFormatsTest, DeltaSourceReadsAddedFilesInBatchesAndResumes) {
  auto schema = DataType::Struct({Field{"value", DataType::Long()}}).value();
  auto append = [&](int64_t from, int64_t to) {
    Int64Builder values(DataType::Long());
    for (int64_t v = from; v < to; ++v) values.Append(v);
    auto batch = RecordBatch::Make(schema, {values.Finish()}, to - from).value();
    ASSERT_TRUE(delta::WriteTable(LocalFileSystem(), table_, {batch}).ok());
  };
  append(0, 3);
  append(3, 5);
  append(5, 9);
  source_format_ = "delta";
  std::string copy = dir_.Join("copy");
  std::map<std::string, std::string> source = {{"path", table_}, {"maxFilesPerTrigger", "1"}};
  ASSERT_TRUE(RunOnce(source, "delta", {{"path", copy}}, Trigger::AvailableNow()).ok());
  EXPECT_EQ(TableValues(copy), Range(0, 9));
  EXPECT_EQ(delta::Snapshot::Load(LocalFileSystem(), copy).value()->version(), 2) << "one commit per source file";

  append(9, 12);
  ASSERT_TRUE(RunOnce(source, "delta", {{"path", copy}}, Trigger::AvailableNow()).ok());
  EXPECT_EQ(TableValues(copy), Range(0, 12));
}

TEST_F(DeltaFormatsTest, LatestStartsAfterWhatTheTableHeldAtTheFirstRun) {
  auto schema = DataType::Struct({Field{"value", DataType::Long()}}).value();
  auto append = [&](int64_t value) {
    Int64Builder values(DataType::Long());
    values.Append(value);
    ASSERT_TRUE(delta::WriteTable(LocalFileSystem(), table_, {RecordBatch::Make(schema, {values.Finish()}, 1).value()}).ok());
  };
  append(1);
  source_format_ = "delta";
  std::string copy = dir_.Join("copy");
  std::map<std::string, std::string> source = {{"path", table_}, {"startingVersion", "latest"}};
  ASSERT_TRUE(RunOnce(source, "delta", {{"path", copy}}).ok());
  EXPECT_FALSE(*LocalFileSystem()->Exists(copy + "/_delta_log")) << "nothing new yet";
  append(2);
  append(3);
  ASSERT_TRUE(RunOnce(source, "delta", {{"path", copy}}).ok());
  EXPECT_EQ(TableValues(copy), (std::vector<int64_t>{2, 3}));
}

TEST_F(DeltaFormatsTest, DeltaSourceOptionsAreChecked) {
  EXPECT_EQ(delta_testing::DeltaFormatsRegistry().MakeSource("delta", {{"path", "/t"}, {"startingVersion", "first"}}).status().error_class(),
            errors::kInvalidOptions);
  EXPECT_EQ(delta_testing::DeltaFormatsRegistry().MakeSource("delta", {}).status().error_class(), errors::kInvalidOptions);
  EXPECT_EQ(delta_testing::DeltaFormatsRegistry().MakeSink("delta", {{"path", "/t"}, {"mergeSchema", "maybe"}}).status().error_class(),
            errors::kInvalidOptions);
}

}  // namespace
}  // namespace sluice::connectors
