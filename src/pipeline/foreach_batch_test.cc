// foreachBatch in pipelines: callbacks from plugins, the context they get, idempotent writes to
// two targets across a failure, and several flows into one foreachBatch sink.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "sluice/connectors/register_formats.h"
#include "sluice/core/error_classes.h"
#include "sluice/delta/scan.h"
#include "sluice/delta/snapshot.h"
#include "sluice/engine/registry.h"
#include "sluice/parquet/reader.h"
#include "sluice/pipeline/event_log.h"
#include "sluice/pipeline/pipeline_runner.h"
#include "sluice/pipeline/pipeline_spec.h"
#include "testing/temp_dir.h"
#include "testing/paths.h"

namespace sluice::pipeline {
namespace {

constexpr int64_t kStartMillis = 1'767'225'600'000;  // 2026-01-01T00:00:00Z
constexpr int64_t kNowMicros = (kStartMillis + 10'000) * 1000;

// 10 rows per second from kStartMillis: ten seconds later, `once` reads the values 0..99.
std::string RateSource(int rows_per_second = 10) {
  return "{format: rate, options: {rowsPerSecond: " + std::to_string(rows_per_second) +
         ", startTimestamp: " + std::to_string(kStartMillis) + "}}";
}

std::string PluginFunction(const std::string& function) {
  return "plugin:" + sluice::testing::BinaryDir() + "/libsluice_two_tables_plugin.so:" + function;
}

std::vector<int64_t> Range(int64_t begin, int64_t end) {
  std::vector<int64_t> values;
  for (int64_t v = begin; v < end; ++v) values.push_back(v);
  return values;
}

std::vector<int64_t> DeltaValues(const std::string& table) {
  std::vector<int64_t> values;
  auto snapshot = delta::Snapshot::Load(LocalFileSystem(), table);
  EXPECT_TRUE(snapshot.ok()) << snapshot.status().ToString();
  if (!snapshot.ok()) return values;
  auto scan = delta::TableScan::Open(*snapshot, {.columns = {"value"}}).value();
  while (BatchPtr batch = scan->Next().value()) {
    for (int64_t row = 0; row < batch->num_rows(); ++row) values.push_back(batch->column(0)->Value<int64_t>(row));
  }
  std::sort(values.begin(), values.end());
  return values;
}

// The `value` column of every Parquet data file in `directory` (files starting with `_` are not
// data, as every reader of such a directory treats them).
std::vector<int64_t> ParquetValues(const std::string& directory) {
  std::vector<int64_t> values;
  if (!std::filesystem::exists(directory)) return values;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    if (!entry.is_regular_file() || entry.path().filename().string().starts_with("_")) continue;
    auto reader = parquet::ParquetReader::Open(*LocalFileSystem(), entry.path().string()).value();
    int column = reader->schema()->FieldIndex("value");
    auto batches = reader->NewBatchReader({}).value();
    while (BatchPtr batch = batches->Next().value()) {
      for (int64_t row = 0; row < batch->num_rows(); ++row) values.push_back(batch->column(column)->Value<int64_t>(row));
    }
  }
  std::sort(values.begin(), values.end());
  return values;
}

class ForeachBatchTest : public ::testing::Test {
 protected:
  PipelineSpec Spec(const std::string& flows_and_sinks) {
    std::string yaml = "name: shop\nstorage: " + Storage() + "\nwarehouse: " + dir_.path() + "/warehouse\n" +
                       flows_and_sinks;
    Result<PipelineSpec> spec = ParsePipelineSpec(yaml);
    EXPECT_TRUE(spec.ok()) << spec.status().ToString();
    return *spec;
  }

  Status Run(const PipelineSpec& spec) {
    RunOptions options;
    options.clock = clock_;
    SLUICE_ASSIGN_OR_RETURN(auto run, PipelineRun::Start(spec, std::move(options)));
    return run->Wait();
  }

  std::string Storage() const { return dir_.path() + "/storage"; }

  testing::TempDir dir_;
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>(kNowMicros);
};

// The plugin's function writes each batch into a Delta table and a Parquet directory with
// txnAppId/txnVersion. The first run fails after the Delta write (the Parquet directory cannot be
// made: a file stands in its way); the next run replays the batch, and the Delta table skips it.
TEST_F(ForeachBatchTest, APluginFunctionWritesTwoTargetsOnceAcrossAFailureBetweenThem) {
  const std::string delta = dir_.Join("lake/events"), parquet = dir_.Join("exports/events");
  PipelineSpec spec = Spec(R"(
sinks:
  both:
    format: foreachBatch
    options: {function: ")" + PluginFunction("write_two_tables") + R"(", arg.delta: )" + delta +
                           ", arg.parquet: " + parquet + R"(}
flows:
  - {name: copy_events, source: )" + RateSource() + R"(, sink: both, trigger: once}
)");
  std::ofstream(dir_.Join("exports")) << "in the way";
  Status failed = Run(spec);
  EXPECT_FALSE(failed.ok());
  EXPECT_NE(failed.ToString().find("write_two_tables"), std::string::npos) << failed.ToString();
  EXPECT_EQ(DeltaValues(delta), Range(0, 100)) << "the first write happened";

  std::filesystem::remove(dir_.Join("exports"));
  Status replayed = Run(spec);
  ASSERT_TRUE(replayed.ok()) << replayed.ToString();
  EXPECT_EQ(DeltaValues(delta), Range(0, 100)) << "the replayed batch is skipped by the table that has it";
  EXPECT_EQ(ParquetValues(parquet), Range(0, 100));

  clock_->AdvanceBy(std::chrono::seconds(1));
  ASSERT_TRUE(Run(spec).ok());
  EXPECT_EQ(DeltaValues(delta), Range(0, 110));
  EXPECT_EQ(ParquetValues(parquet), Range(0, 110));
}

TEST_F(ForeachBatchTest, PluginFunctionsAreFoundOrRefusedBeforeAnythingRuns) {
  struct Case {
    std::string function;
    std::string_view error_class;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {PluginFunction("no_such_function"), errors::kForeachBatchFunctionNotFound, "no_such_function"},
           {PluginFunction(""), errors::kPluginLoadFailed, "plugin:/path/libx.so:function"},
           {"plugin:" + sluice::testing::BinaryDir() + "/libsluice_two_tables_plugin.so", errors::kPluginLoadFailed,
            "is not of the form plugin:/path/libx.so:function"},
           {"plugin:relative/libx.so:f", errors::kPluginLoadFailed, "absolute path"},
           {"plugin:" + dir_.Join("missing.so") + ":f", errors::kPluginLoadFailed, "missing.so"},
           {"plugin:" + sluice::testing::BinaryDir() + "/libsluice_wrong_abi_test_plugin.so:f",
            errors::kPluginAbiMismatch, "ABI"},
       }) {
    SCOPED_TRACE(c.function);
    PipelineSpec spec = Spec("sinks:\n  s: {format: foreachBatch, options: {function: \"" + c.function +
                             "\"}}\nflows:\n  - {name: f, source: " + RateSource() + ", sink: s, trigger: once}\n");
    std::vector<Status> problems = ValidatePipeline(spec, connectors::AllFormatsRegistry());
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_EQ(problems[0].error_class(), c.error_class) << problems[0].ToString();
    EXPECT_NE(problems[0].ToString().find(c.message), std::string::npos) << problems[0].ToString();
    EXPECT_FALSE(Run(spec).ok());
  }
  EXPECT_TRUE(ValidatePipeline(Spec("sinks:\n  s: {format: foreachBatch, options: {function: \"" +
                                    PluginFunction("write_two_tables") + "\"}}\nflows:\n  - {name: f, source: " +
                                    RateSource() + ", sink: s, trigger: once}\n"),
                               connectors::AllFormatsRegistry())
                  .empty());
}

// What a callback is told: the batch id, the query id (the checkpoint's, stable across runs), the
// flow's name and the sink's arg.* options. Two flows into one foreachBatch sink each keep their
// own checkpoint and batch ids, and the event log defines the sink once per run.
TEST_F(ForeachBatchTest, SeveralFlowsIntoOneSinkKeepTheirOwnBatchIdsAndContext) {
  struct Call {
    std::string flow, query_id;
    int64_t batch_id;
    int64_t rows;
    std::map<std::string, std::string> arguments;
  };
  static std::mutex mutex;
  static std::vector<Call> calls;
  calls.clear();
  ASSERT_TRUE(connectors::AllFormatsRegistry()
                  .RegisterForeachBatch("record_context_for_test",
                                        [](const RecordBatch& batch, const engine::BatchContext& context) {
                                          std::lock_guard lock(mutex);
                                          calls.push_back({context.flow_name, context.query_id, context.batch_id,
                                                           batch.num_rows(), context.arguments});
                                          return Status::OK();
                                        })
                  .ok());
  PipelineSpec spec = Spec(R"(
sinks:
  shared: {format: foreachBatch, options: {function: record_context_for_test, arg.target: audit, arg.Mixed_Case: x}}
flows:
  - {name: slow, source: )" + RateSource(1) + R"(, sink: shared, trigger: once}
  - {name: fast, source: )" + RateSource(10) + R"(, sink: shared, trigger: once}
)");
  ASSERT_TRUE(Run(spec).ok());
  clock_->AdvanceBy(std::chrono::seconds(2));
  ASSERT_TRUE(Run(spec).ok());

  std::map<std::string, std::vector<std::pair<int64_t, int64_t>>> by_flow;  // flow -> (batch id, rows)
  std::map<std::string, std::set<std::string>> query_ids;
  for (const Call& call : calls) {
    by_flow[call.flow].emplace_back(call.batch_id, call.rows);
    query_ids[call.flow].insert(call.query_id);
    EXPECT_EQ(call.arguments, (std::map<std::string, std::string>{{"target", "audit"}, {"Mixed_Case", "x"}}));
  }
  EXPECT_EQ(by_flow["slow"], (std::vector<std::pair<int64_t, int64_t>>{{0, 10}, {1, 2}}));
  EXPECT_EQ(by_flow["fast"], (std::vector<std::pair<int64_t, int64_t>>{{0, 100}, {1, 20}}));
  // Each flow's query id is its checkpoint's, the same in both runs.
  for (const std::string flow : {"slow", "fast"}) {
    SCOPED_TRACE(flow);
    ASSERT_EQ(query_ids[flow].size(), 1u);
    std::ifstream metadata(Storage() + "/checkpoints/" + flow + "/metadata");
    std::string text((std::istreambuf_iterator<char>(metadata)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find(*query_ids[flow].begin()), std::string::npos) << text;
  }
  EXPECT_NE(*query_ids["slow"].begin(), *query_ids["fast"].begin());

  auto lines = EventLog::ReadLines(EventLog::PathFor(Storage())).value();
  int sink_definitions = 0, flow_definitions = 0;
  for (const std::string& line : lines) {
    if (line.find("\"event_type\":\"sink_definition\"") != std::string::npos) {
      ++sink_definitions;
      EXPECT_NE(line.find(R"("format":"foreachBatch")"), std::string::npos) << line;
    }
    flow_definitions += line.find("\"event_type\":\"flow_definition\"") != std::string::npos;
  }
  EXPECT_EQ(sink_definitions, 2) << "one per sink and run";
  EXPECT_EQ(flow_definitions, 4) << "one per flow and run";
}

}  // namespace
}  // namespace sluice::pipeline
