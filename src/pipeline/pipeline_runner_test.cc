// A pipeline run, as users see it: flows with filters, projections and expectations, the event
// log they leave, full refresh, the metrics, and what happens when things go wrong.
#include "sluice/pipeline/pipeline_runner.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <simdjson.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>

#include "sluice/connectors/register_formats.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/fault_injection.h"
#include "sluice/delta/scan.h"
#include "sluice/delta/snapshot.h"
#include "sluice/engine/checkpoint.h"
#include "sluice/engine/memory_sink.h"
#include "sluice/pipeline/checkpoint_owner.h"
#include "sluice/pipeline/full_refresh.h"
#include "sluice/pipeline/metrics_server.h"
#include "testing/temp_dir.h"

namespace sluice::pipeline {
namespace {

// The rate source's rows are due at start + i / rate; with a manual clock ten seconds after the
// start at 10 rows per second, `available_now` reads exactly the values 0..99.
constexpr int64_t kStartMillis = 1'767'225'600'000;  // 2026-01-01T00:00:00Z
constexpr int64_t kNowMicros = (kStartMillis + 10'000) * 1000;

std::string RateSource() {
  return "{format: rate, options: {rowsPerSecond: 10, startTimestamp: " + std::to_string(kStartMillis) + "}}";
}

std::vector<int64_t> MemoryValues(const std::string& name, int column = 0) {
  std::vector<int64_t> values;
  for (const BatchPtr& batch : engine::MemoryTable::Named(name)->batches()) {
    for (int64_t row = 0; row < batch->num_rows(); ++row) values.push_back(batch->column(column)->Value<int64_t>(row));
  }
  return values;
}

std::vector<int64_t> DeltaValues(const std::string& table) {
  std::vector<int64_t> values;
  auto snapshot = delta::Snapshot::Load(LocalFileSystem(), table);
  EXPECT_TRUE(snapshot.ok()) << snapshot.status().ToString();
  if (!snapshot.ok()) return values;
  auto scan = delta::TableScan::Open(*snapshot, {.columns = {"value"}});
  EXPECT_TRUE(scan.ok()) << scan.status().ToString();
  while (true) {
    Result<BatchPtr> batch = (*scan)->Next();
    EXPECT_TRUE(batch.ok()) << batch.status().ToString();
    if (!batch.ok() || *batch == nullptr) break;
    for (int64_t row = 0; row < (*batch)->num_rows(); ++row) values.push_back((*batch)->column(0)->Value<int64_t>(row));
  }
  std::sort(values.begin(), values.end());
  return values;
}

std::vector<int64_t> Range(int64_t begin, int64_t end) {
  std::vector<int64_t> values;
  for (int64_t v = begin; v < end; ++v) values.push_back(v);
  return values;
}

// The events of a log, parsed.
struct LoggedEvent {
  int64_t sequence;
  std::string level, type, flow, message, details;
};

std::vector<LoggedEvent> Events(const std::string& storage) {
  std::vector<LoggedEvent> events;
  auto lines = EventLog::ReadLines(EventLog::PathFor(storage));
  EXPECT_TRUE(lines.ok());
  simdjson::dom::parser parser;
  for (const std::string& line : *lines) {
    simdjson::dom::element doc = parser.parse(line);
    LoggedEvent event;
    event.sequence = doc["sequence"].get_int64();
    event.level = std::string(doc["level"].get_string().value());
    event.type = std::string(doc["event_type"].get_string().value());
    std::string_view flow;
    if (doc["origin"]["flow"].get(flow) == simdjson::SUCCESS) event.flow = flow;
    event.message = std::string(doc["message"].get_string().value());
    event.details = simdjson::minify(doc["details"]);
    EXPECT_EQ(std::string(doc["origin"]["pipeline"].get_string().value()), "shop");
    EXPECT_EQ(doc["id"].get_string().value().size(), 36u);
    events.push_back(std::move(event));
  }
  return events;
}

std::vector<LoggedEvent> OfType(const std::vector<LoggedEvent>& events, const std::string& type) {
  std::vector<LoggedEvent> found;
  for (const LoggedEvent& event : events) {
    if (event.type == type) found.push_back(event);
  }
  return found;
}

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

class PipelineRunTest : public ::testing::Test {
 protected:
  PipelineSpec Spec(const std::string& flows_and_sinks) {
    std::string yaml = "name: shop\nstorage: " + dir_.path() + "/storage\nwarehouse: " + dir_.path() + "/warehouse\n" +
                       flows_and_sinks;
    Result<PipelineSpec> spec = ParsePipelineSpec(yaml);
    EXPECT_TRUE(spec.ok()) << spec.status().ToString();
    return *spec;
  }

  Status Run(const PipelineSpec& spec, RunOptions options = {}) {
    options.clock = clock_;
    SLUICE_ASSIGN_OR_RETURN(auto run, PipelineRun::Start(spec, std::move(options)));
    Status status = run->Wait();
    last_metrics_ = run->PrometheusText();
    last_figures_ = run->flows();
    return status;
  }

  std::string Storage() const { return dir_.path() + "/storage"; }

  // For nth = 1, 2, ...: from an empty storage and warehouse, `prepare(spec)`, then a run with
  // `cut` options whose nth file operation and every later one fail (as after a kill), then a
  // plain run, then `check()`. Stops once a cut run completes, and says whether one did.
  bool CutAtEachFileOperation(const std::string& yaml, RunOptions cut,
                              const std::function<void(const PipelineSpec&)>& prepare,
                              const std::function<void()>& check) {
    auto fs = LocalFileSystem();
    for (int64_t nth = 1; nth < 400; ++nth) {
      SCOPED_TRACE(nth);
      EXPECT_TRUE(fs->DeleteRecursively(Storage()).ok());
      EXPECT_TRUE(fs->DeleteRecursively(dir_.path() + "/warehouse").ok());
      clock_ = std::make_shared<ManualClock>(kNowMicros);
      PipelineSpec spec = Spec(yaml);
      prepare(spec);
      if (HasFatalFailure()) return false;
      auto faulty = std::make_shared<FaultInjectionFileSystem>(fs);
      faulty->InjectFault({.nth = nth, .sticky = true});
      cut.file_system = faulty;
      const bool completed = Run(spec, cut).ok();
      Status next = Run(spec);
      EXPECT_TRUE(next.ok()) << next.ToString();
      check();
      if (HasFailure()) return false;
      if (completed) return true;
    }
    return false;
  }

  testing::TempDir dir_;
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>(kNowMicros);
  std::string last_metrics_;
  std::vector<FlowFigures> last_figures_;
};

TEST_F(PipelineRunTest, FiltersProjectsAndJudgesRowsBeforeTheSink) {
  PipelineSpec spec = Spec(R"(
sinks:
  out: {format: memory, options: {queryName: shaped}}
flows:
  - name: shape
    source: )" + RateSource() + R"(
    where: value % 2 = 0
    select: [value, value * 10 AS tenfold]
    expectations:
      - {name: small, expect: value < 50}
      - {name: no_fours, expect_or_drop: value % 10 <> 4}
    sink: out
    trigger: available_now
)");
  ASSERT_TRUE(Run(spec).ok());

  std::vector<int64_t> expected;
  for (int64_t v = 0; v < 100; v += 2) {
    if (v % 10 != 4) expected.push_back(v);
  }
  EXPECT_EQ(MemoryValues("shaped", 0), expected);
  std::vector<int64_t> tenfold;
  for (int64_t v : expected) tenfold.push_back(v * 10);
  EXPECT_EQ(MemoryValues("shaped", 1), tenfold);
  BatchPtr first = engine::MemoryTable::Named("shaped")->batches().at(0);
  EXPECT_EQ(first->field(0).name, "value");
  EXPECT_EQ(first->field(1).name, "tenfold");

  // 50 even rows reach the expectations: 25 are below 50, 10 end in 4 and are dropped.
  std::vector<LoggedEvent> quality = OfType(Events(Storage()), "data_quality");
  ASSERT_EQ(quality.size(), 1u);
  EXPECT_EQ(quality[0].flow, "shape");
  EXPECT_EQ(quality[0].details,
            R"({"data_quality":{"batch_id":0,"dropped_records":10,"expectations":[)"
            R"({"name":"small","dataset":"out","action":"expect","passed_records":25,"failed_records":25,"dropped_records":0},)"
            R"({"name":"no_fours","dataset":"out","action":"expect_or_drop","passed_records":40,"failed_records":10,"dropped_records":10}]}})");
  ASSERT_EQ(last_figures_.size(), 1u);
  EXPECT_EQ(last_figures_[0].state, "COMPLETED");
  EXPECT_EQ(last_figures_[0].input_rows, 100);
  EXPECT_EQ(last_figures_[0].output_rows, 40);
}

TEST_F(PipelineRunTest, NullFailsAnExpectation) {
  PipelineSpec spec = Spec(R"(
sinks:
  out: {format: memory, options: {queryName: nulls}}
flows:
  - name: judge
    source: )" + RateSource() + R"(
    select: [value, "CASE WHEN value < 30 THEN value END AS low"]
    expectations:
      - {name: has_low, expect_or_drop: low >= 0}
    sink: out
    trigger: once
)");
  ASSERT_TRUE(Run(spec).ok());
  EXPECT_EQ(MemoryValues("nulls"), Range(0, 30));
}

TEST_F(PipelineRunTest, ExpectOrFailStopsTheFlowBeforeWriting) {
  PipelineSpec spec = Spec(R"(
sinks:
  out: {format: memory, options: {queryName: failing}}
flows:
  - name: strict
    source: )" + RateSource() + R"(
    expectations:
      - {name: below_ninety, expect_or_fail: value < 90}
    sink: out
    trigger: available_now
)");
  Status status = Run(spec);
  EXPECT_EQ(status.error_class(), errors::kExpectationViolation);
  EXPECT_TRUE(Contains(status.ToString(), "below_ninety")) << status.ToString();
  EXPECT_TRUE(Contains(status.ToString(), "failed on 10 of 100 rows")) << status.ToString();
  EXPECT_TRUE(engine::MemoryTable::Named("failing")->batches().empty());

  std::vector<LoggedEvent> events = Events(Storage());
  std::vector<LoggedEvent> errors_logged = OfType(events, "error");
  ASSERT_EQ(errors_logged.size(), 1u);
  EXPECT_EQ(errors_logged[0].level, "ERROR");
  EXPECT_EQ(errors_logged[0].flow, "strict");
  EXPECT_TRUE(Contains(errors_logged[0].details, "\"class\":\"EXPECTATION_VIOLATION\"")) << errors_logged[0].details;
  EXPECT_TRUE(Contains(events.back().details, "\"status\":\"FAILED\"")) << events.back().details;
  EXPECT_EQ(last_figures_.at(0).state, "FAILED");
  EXPECT_EQ(last_figures_.at(0).errors, 1);
}

// ANSI mode is the default: a value a flow's expression cannot compute stops the flow with Spark's
// error class and the value, before anything of the batch is written; `sql: {ansi: false}`
// gives NULL for the same rows, and the TRY form gives NULL in either mode.
TEST_F(PipelineRunTest, AnAnsiErrorStopsTheFlowNamingTheValueAndNonAnsiModeGivesNull) {
  const std::string flows = R"(
flows:
  - name: ratio
    source: )" + RateSource() + R"(
    select: [value, "100 div (value - 42) AS ratio"]
    sink: out
    trigger: available_now
)";
  PipelineSpec ansi = Spec("sinks:\n  out: {format: memory, options: {queryName: ansi_ratio}}\n" + flows);
  EXPECT_TRUE(ansi.sql.ansi);
  Status status = Run(ansi);
  EXPECT_EQ(status.error_class(), errors::kDivideByZero) << status.ToString();
  EXPECT_TRUE(Contains(status.ToString(), "division by zero of 100")) << status.ToString();
  EXPECT_TRUE(Contains(status.ToString(), "ratio")) << status.ToString();
  EXPECT_TRUE(engine::MemoryTable::Named("ansi_ratio")->batches().empty());
  std::vector<LoggedEvent> errors_logged = OfType(Events(Storage()), "error");
  ASSERT_EQ(errors_logged.size(), 1u);
  EXPECT_TRUE(Contains(errors_logged[0].details, "\"class\":\"DIVIDE_BY_ZERO\"")) << errors_logged[0].details;

  auto ratios = [](const std::string& table) {
    std::vector<std::optional<int64_t>> values;
    for (const BatchPtr& batch : engine::MemoryTable::Named(table)->batches()) {
      for (int64_t row = 0; row < batch->num_rows(); ++row) {
        const Column& ratio = *batch->column(1);
        values.push_back(ratio.IsNull(row) ? std::nullopt : std::optional<int64_t>(ratio.Value<int64_t>(row)));
      }
    }
    return values;
  };
  std::vector<std::optional<int64_t>> expected;
  for (int64_t v = 0; v < 100; ++v) expected.push_back(v == 42 ? std::nullopt : std::optional<int64_t>(100 / (v - 42)));

  PipelineSpec non_ansi = Spec("sql: {ansi: false}\nsinks:\n  out: {format: memory, options: {queryName: legacy_ratio}}\n" + flows);
  non_ansi.storage += "-legacy";
  EXPECT_FALSE(non_ansi.sql.ansi);
  ASSERT_TRUE(Run(non_ansi).ok());
  EXPECT_EQ(ratios("legacy_ratio"), expected);

  std::string tolerant = flows;
  tolerant.replace(tolerant.find("100 div (value - 42)"), std::string("100 div (value - 42)").size(),
                   "CAST(try_divide(100, value - 42) AS bigint)");
  PipelineSpec with_try = Spec("sinks:\n  out: {format: memory, options: {queryName: try_ratio}}\n" + tolerant);
  with_try.storage += "-try";
  ASSERT_TRUE(Run(with_try).ok());
  EXPECT_EQ(ratios("try_ratio"), expected);
}

TEST_F(PipelineRunTest, TheEventLogRecordsDefinitionsAndProgressInSequence) {
  ASSERT_TRUE(connectors::AllFormatsRegistry()
                  .RegisterForeachBatch("count_rows_for_event_test", [](const RecordBatch&, const engine::BatchContext&) { return Status::OK(); })
                  .ok());
  PipelineSpec spec = Spec(R"(
sinks:
  counter: {format: foreachBatch, options: {function: count_rows_for_event_test}}
flows:
  - name: count
    source: )" + RateSource() + R"(
    sink: counter
    trigger: once
)");
  ASSERT_TRUE(Run(spec).ok());
  ASSERT_TRUE(Run(spec).ok());  // a second run adds to the same log

  std::vector<LoggedEvent> events = Events(Storage());
  for (size_t i = 0; i < events.size(); ++i) EXPECT_EQ(events[i].sequence, static_cast<int64_t>(i));
  std::vector<LoggedEvent> sinks = OfType(events, "sink_definition");
  ASSERT_EQ(sinks.size(), 2u);
  EXPECT_EQ(sinks[0].details,
            R"({"sink_definition":{"name":"counter","format":"foreachBatch","options":{"function":"count_rows_for_event_test"}}})");
  std::vector<LoggedEvent> definitions = OfType(events, "flow_definition");
  ASSERT_EQ(definitions.size(), 2u);
  EXPECT_TRUE(Contains(definitions[0].details, R"("output_dataset":"counter","source_format":"rate")"))
      << definitions[0].details;
  EXPECT_TRUE(Contains(definitions[0].details, R"("trigger":"once","output_mode":"append")")) << definitions[0].details;

  std::vector<LoggedEvent> progress;
  for (const LoggedEvent& event : OfType(events, "flow_progress")) {
    if (event.level == "METRICS") progress.push_back(event);
  }
  ASSERT_EQ(progress.size(), 1u);  // the second run found no new rows
  EXPECT_TRUE(Contains(progress[0].details, R"("metrics":{"num_input_rows":100,"num_output_rows":100})"))
      << progress[0].details;
  EXPECT_TRUE(Contains(progress[0].details, R"("progress":{"id":")")) << progress[0].details;
  EXPECT_TRUE(Contains(progress[0].details, R"("batchId":0)")) << progress[0].details;
  std::vector<std::string> statuses;
  for (const LoggedEvent& event : OfType(events, "flow_progress")) {
    simdjson::dom::parser parser;
    statuses.emplace_back(parser.parse(event.details)["flow_progress"]["status"].get_string().value());
  }
  EXPECT_EQ(statuses, (std::vector<std::string>{"RUNNING", "RUNNING", "COMPLETED", "RUNNING", "COMPLETED"}));
}

TEST_F(PipelineRunTest, SecretsNeverReachTheEventLog) {
  PipelineSpec spec = Spec(R"(
sinks:
  pg: {format: postgresql, options: {host: "${env:SLUICE_TEST_EVENT_HOST}", port: 1, password: "${env:SLUICE_TEST_EVENT_SECRET}", dbtable: t, maxretries: 0}}
flows:
  - name: to_pg
    source: )" + RateSource() + R"(
    sink: pg
    trigger: once
)");
  ::setenv("SLUICE_TEST_EVENT_SECRET", "hunter2", 1);
  ::setenv("SLUICE_TEST_EVENT_HOST", "localhost", 1);
  RunOptions options;
  options.registry = &connectors::AllFormatsRegistry();
  Status status = Run(spec, options);  // nothing listens on port 1
  EXPECT_FALSE(status.ok());
  auto lines = EventLog::ReadLines(EventLog::PathFor(Storage()));
  ASSERT_TRUE(lines.ok());
  std::string all;
  for (const std::string& line : *lines) all += line + "\n";
  EXPECT_TRUE(Contains(all, "\"event_type\":\"error\"")) << all;
  EXPECT_TRUE(Contains(all, R"("password":"[REDACTED]")")) << all;
  EXPECT_FALSE(Contains(all, "hunter2")) << all;
  EXPECT_FALSE(Contains(all, "localhost")) << all;  // the host came from a reference
}

// The query of a flow into a postgresql sink with checkpointLocation keeps its checkpoint there
// (the sink's server is away: the run fails after the checkpoint is made).
TEST_F(PipelineRunTest, APostgresSinksCheckpointLocationHoldsTheQuerysCheckpoint) {
  const std::string location = dir_.path() + "/pg-checkpoint";
  PipelineSpec spec = Spec(R"(
sinks:
  pg: {format: postgresql, options: {host: 127.0.0.1, port: 1, dbtable: t, maxretries: 0, checkpointLocation: )" +
                           location + R"(}}
flows:
  - {name: to_pg, source: )" + RateSource() + R"(, sink: pg, trigger: once}
)");
  RunOptions options;
  options.registry = &connectors::AllFormatsRegistry();
  EXPECT_FALSE(Run(spec, options).ok());
  EXPECT_TRUE(std::filesystem::exists(location + "/metadata"));
  EXPECT_FALSE(std::filesystem::exists(Storage() + "/checkpoints/to_pg"));
}

// One flow of the rate source into the Delta table main.shop.numbers.
std::string NumbersIntoLake() {
  return R"(
sinks:
  lake: {format: delta, table: main.shop.numbers}
flows:
  - name: numbers
    source: )" + RateSource() + R"(
    sink: lake
    trigger: available_now
)";
}

TEST_F(PipelineRunTest, FullRefreshTruncatesTheTableAndReplaysTheSource) {
  PipelineSpec spec = Spec(NumbersIntoLake());
  const std::string table = dir_.path() + "/warehouse/main/shop/numbers";
  ASSERT_TRUE(Run(spec).ok());
  EXPECT_EQ(DeltaValues(table), Range(0, 100));
  clock_->AdvanceBy(std::chrono::seconds(5));
  ASSERT_TRUE(Run(spec).ok());
  EXPECT_EQ(DeltaValues(table), Range(0, 150));

  // The rows now in the table came from two runs; a full refresh rebuilds it from the source alone.
  RunOptions refresh;
  refresh.full_refresh = {"numbers"};
  ASSERT_TRUE(Run(spec, refresh).ok());
  EXPECT_EQ(DeltaValues(table), Range(0, 150));
  auto snapshot = delta::Snapshot::Load(LocalFileSystem(), table);
  ASSERT_TRUE(snapshot.ok());
  EXPECT_EQ((*snapshot)->version(), 3);  // two appends, the truncation, the replay
  std::vector<LoggedEvent> warnings = OfType(Events(Storage()), "warning");
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_TRUE(Contains(warnings[0].message, "flow 'numbers' starts over")) << warnings[0].message;
  EXPECT_TRUE(Contains(warnings[1].message, "truncated")) << warnings[1].message;
}

// A full refresh cut short at any of its file operations (every later call failing, as after a
// kill), then a plain run: the table holds each source row exactly once. Before the refresh was
// one step, a cut between the checkpoint's deletion and the truncation left duplicates.
TEST_F(PipelineRunTest, AFullRefreshCutShortAnywhereIsFinishedByTheNextRun) {
  const std::string table = dir_.path() + "/warehouse/main/shop/numbers";
  RunOptions refresh;
  refresh.full_refresh = {"numbers"};
  EXPECT_TRUE(CutAtEachFileOperation(
      NumbersIntoLake(), refresh,
      [&](const PipelineSpec& spec) {
        ASSERT_TRUE(Run(spec).ok());
        clock_->AdvanceBy(std::chrono::seconds(5));
        ASSERT_TRUE(Run(spec).ok());
        ASSERT_EQ(DeltaValues(table), Range(0, 150));
      },
      [&] {
        ASSERT_EQ(DeltaValues(table), Range(0, 150));
        EXPECT_FALSE(LocalFileSystem()->Exists(FullRefreshPlanPath(Storage())).value());
      }));
}

// A flow started afresh (its checkpoint and table deleted after an earlier run, whose query the
// pipeline still records), the start cut short at any of its file operations (every later call
// failing, as after a kill), then a plain run: the flow starts and the table holds each source
// row once. A cut between creating the checkpoint and recording its query as the flow's used to
// leave a checkpoint no later run accepted (CHECKPOINT_CORRUPT, "it is another query's").
TEST_F(PipelineRunTest, AFreshStartCutShortAnywhereLeavesAFlowTheNextRunStarts) {
  const std::string table = dir_.path() + "/warehouse/main/shop/numbers";
  EXPECT_TRUE(CutAtEachFileOperation(
      NumbersIntoLake(), {},
      [&](const PipelineSpec& spec) {
        auto fs = LocalFileSystem();
        ASSERT_TRUE(Run(spec).ok());
        ASSERT_TRUE(fs->DeleteRecursively(Storage() + "/checkpoints").ok());
        ASSERT_TRUE(fs->DeleteRecursively(dir_.path() + "/warehouse").ok());
      },
      [&] { ASSERT_EQ(DeltaValues(table), Range(0, 100)); }));
}

// Only a checkpoint is deleted by a full refresh: a flow whose `checkpoint:` names a folder of
// other files is refused before anything is touched, and the folder keeps its files.
TEST_F(PipelineRunTest, AFullRefreshNeverDeletesAFolderThatIsNotACheckpoint) {
  auto fs = LocalFileSystem();
  const std::string precious = dir_.path() + "/precious";
  ASSERT_TRUE(fs->CreateDirectories(precious + "/sub").ok());
  ASSERT_TRUE(fs->AtomicWrite(precious + "/sub/thesis.txt", "years of work").ok());
  PipelineSpec spec = Spec(R"(
sinks:
  out: {format: memory, options: {queryName: precious_out}}
flows:
  - name: numbers
    source: )" + RateSource() + R"(
    sink: out
    trigger: available_now
    checkpoint: )" + precious + R"(
)");
  for (bool refresh : {false, true}) {
    RunOptions options;
    if (refresh) options.full_refresh = {"numbers"};
    Status status = Run(spec, options);
    EXPECT_EQ(status.error_class(), errors::kCheckpointCorrupt) << status.ToString();
    EXPECT_EQ(fs->ReadFile(precious + "/sub/thesis.txt").value_or(""), "years of work");
  }
}

// A flow never runs on, and a full refresh never deletes, a checkpoint another query made: here
// another pipeline's, named by an explicit `checkpoint:`. The owner's own refresh still works.
TEST_F(PipelineRunTest, AFullRefreshNeverDeletesAnotherQuerysCheckpoint) {
  auto fs = LocalFileSystem();
  PipelineSpec owner = Spec(R"(
sinks:
  out: {format: memory, options: {queryName: owner_out}}
flows:
  - {name: numbers, source: )" + RateSource() + R"(, sink: out, trigger: available_now}
)");
  ASSERT_TRUE(Run(owner).ok());
  const std::string theirs = Storage() + "/checkpoints/numbers";
  auto their_id = engine::CheckpointQueryId(*fs, theirs);
  ASSERT_TRUE(their_id.ok() && their_id->has_value());

  auto other = [&](const std::string& checkpoint) {
    std::string yaml = "name: other\nstorage: " + dir_.path() + "/other\nwarehouse: " + dir_.path() +
                       "/warehouse\nsinks:\n  out: {format: memory, options: {queryName: other_out}}\nflows:\n"
                       "  - {name: copy, source: " + RateSource() + ", sink: out, trigger: available_now" +
                       (checkpoint.empty() ? "" : ", checkpoint: " + checkpoint) + "}\n";
    return ParsePipelineSpec(yaml).value();
  };
  // Never run, the other pipeline's flow cannot tell: its full refresh refuses a checkpoint that
  // is not at the default place; so does a run of a flow that has a query of its own already.
  RunOptions refresh;
  refresh.full_refresh = {"copy"};
  Status refused = Run(other(theirs), refresh);
  EXPECT_EQ(refused.error_class(), errors::kCheckpointCorrupt) << refused.ToString();
  EXPECT_NE(refused.message().find("no run of flow 'copy' has recorded"), std::string_view::npos) << refused.ToString();
  ASSERT_TRUE(Run(other("")).ok());
  for (bool full_refresh : {false, true}) {
    Status wrong = Run(other(theirs), full_refresh ? refresh : RunOptions{});
    EXPECT_EQ(wrong.error_class(), errors::kCheckpointCorrupt) << wrong.ToString();
    EXPECT_NE(wrong.message().find("it is another query's"), std::string_view::npos) << wrong.ToString();
  }
  EXPECT_EQ(engine::CheckpointQueryId(*fs, theirs).value(), *their_id) << "the owner's checkpoint is untouched";
  EXPECT_EQ(fs->ReadFile(FlowQueryRecordPath(Storage(), "numbers")).value_or(""), **their_id);

  // The owner's own full refresh deletes it and records the new query.
  RunOptions own;
  own.full_refresh = {"numbers"};
  ASSERT_TRUE(Run(owner, own).ok());
  auto new_id = engine::CheckpointQueryId(*fs, theirs);
  ASSERT_TRUE(new_id.ok() && new_id->has_value());
  EXPECT_NE(**new_id, **their_id);
  EXPECT_EQ(fs->ReadFile(FlowQueryRecordPath(Storage(), "numbers")).value_or(""), **new_id);
}

TEST_F(PipelineRunTest, FullRefreshOfOneFlowResetsEveryFlowWritingTheSameTable) {
  PipelineSpec spec = Spec(R"(
sinks:
  lake: {format: delta, table: main.shop.merged}
flows:
  - name: low
    source: )" + RateSource() + R"(
    where: value < 50
    sink: lake
    trigger: available_now
  - name: high
    source: )" + RateSource() + R"(
    where: value >= 50
    sink: lake
    trigger: available_now
)");
  const std::string table = dir_.path() + "/warehouse/main/shop/merged";
  Status first = Run(spec);
  ASSERT_TRUE(first.ok()) << first.ToString();
  EXPECT_EQ(DeltaValues(table), Range(0, 100));
  RunOptions refresh;
  refresh.full_refresh = {"low"};
  ASSERT_TRUE(Run(spec, refresh).ok());
  EXPECT_EQ(DeltaValues(table), Range(0, 100));
}

TEST_F(PipelineRunTest, RunsOnlyTheNamedFlows) {
  PipelineSpec spec = Spec(R"(
sinks:
  a: {format: memory, options: {queryName: only_a}}
  b: {format: memory, options: {queryName: only_b}}
flows:
  - {name: fa, source: )" + RateSource() + R"(, sink: a, trigger: once}
  - {name: fb, source: )" + RateSource() + R"(, sink: b, trigger: once}
)");
  RunOptions options;
  options.flows = {"fb"};
  ASSERT_TRUE(Run(spec, options).ok());
  EXPECT_TRUE(engine::MemoryTable::Named("only_a")->batches().empty());
  EXPECT_EQ(MemoryValues("only_b", 1), Range(0, 100));

  options.flows = {"fc"};
  Status unknown = Run(spec, options);
  EXPECT_EQ(unknown.error_class(), errors::kInvalidPipeline);
  EXPECT_TRUE(Contains(unknown.ToString(), "no flow named 'fc'; its flows: fa, fb")) << unknown.ToString();
  RunOptions refresh_other;
  refresh_other.flows = {"fa"};
  refresh_other.full_refresh = {"fb"};
  EXPECT_EQ(Run(spec, refresh_other).error_class(), errors::kInvalidPipeline);
}

TEST_F(PipelineRunTest, AnInvalidPipelineListsEveryProblemAndTouchesNothing) {
  PipelineSpec spec = Spec(R"(
sinks:
  out: {format: memory, options: {queryName: never}}
flows:
  - {name: one, source: {format: nope}, sink: out}
  - {name: two, source: )" + RateSource() + R"(, sink: missing, where: "value >"}
)");
  Status status = Run(spec);
  EXPECT_EQ(status.error_class(), errors::kInvalidPipeline);
  EXPECT_TRUE(Contains(status.ToString(), "3 problem(s)")) << status.ToString();
  EXPECT_TRUE(Contains(status.ToString(), "DATA_SOURCE_NOT_FOUND")) << status.ToString();
  EXPECT_TRUE(Contains(status.ToString(), "PARSE_SYNTAX_ERROR")) << status.ToString();
  EXPECT_TRUE(Contains(status.ToString(), "sink 'missing'")) << status.ToString();
  EXPECT_FALSE(std::filesystem::exists(Storage()));
}

TEST_F(PipelineRunTest, ASecondRunOfTheSamePipelineFailsFast) {
  PipelineSpec spec = Spec(R"(
sinks:
  out: {format: memory, options: {queryName: locked}}
flows:
  - {name: forever, source: )" + RateSource() + R"(, sink: out, trigger: {kind: processing_time, interval: 1 second}}
)");
  auto clock = std::make_shared<ManualClock>(kNowMicros, ManualClock::SleepMode::kBlockUntilAdvanced);
  RunOptions options;
  options.clock = clock;
  auto first = PipelineRun::Start(spec, options);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto second = PipelineRun::Start(spec, options);
  EXPECT_EQ(second.status().error_class(), errors::kConcurrentQuery);
  EXPECT_TRUE((*first)->ready());
  (*first)->Stop();
  clock->AdvanceBy(std::chrono::seconds(1));
  EXPECT_TRUE((*first)->Wait().ok());
  EXPECT_EQ((*first)->flows().at(0).state, "STOPPED");
  // The refused run's events and the running one's share the log and never a sequence number.
  std::vector<LoggedEvent> events = Events(Storage());
  std::set<int64_t> sequences;
  for (const LoggedEvent& event : events) EXPECT_TRUE(sequences.insert(event.sequence).second) << event.sequence;
  EXPECT_FALSE(OfType(events, "error").empty()) << "the refused run says why";
}

TEST_F(PipelineRunTest, MetricsCountEachFlow) {
  PipelineSpec spec = Spec(R"(
sinks:
  out: {format: memory, options: {queryName: metered}}
flows:
  - {name: metered, source: )" + RateSource() + R"(, sink: out, trigger: once, where: value < 40}
)");
  ASSERT_TRUE(Run(spec).ok());
  EXPECT_TRUE(Contains(last_metrics_, "# TYPE sluice_flow_input_rows_total counter\n")) << last_metrics_;
  EXPECT_TRUE(Contains(last_metrics_, "sluice_flow_input_rows_total{pipeline=\"shop\",flow=\"metered\"} 100\n"))
      << last_metrics_;
  EXPECT_TRUE(Contains(last_metrics_, "sluice_flow_output_rows_total{pipeline=\"shop\",flow=\"metered\"} 40\n"))
      << last_metrics_;
  EXPECT_TRUE(Contains(last_metrics_, "sluice_flow_last_committed_batch{pipeline=\"shop\",flow=\"metered\"} 0\n"))
      << last_metrics_;
  EXPECT_TRUE(Contains(last_metrics_, "sluice_flow_errors_total{pipeline=\"shop\",flow=\"metered\"} 0\n"))
      << last_metrics_;
  // The rate source's newest row (99) is due 9.9 s after its start, the clock stands at 10 s.
  EXPECT_TRUE(Contains(last_metrics_, "sluice_flow_event_time_lag_seconds{pipeline=\"shop\",flow=\"metered\"} 0.1\n"))
      << last_metrics_;
  ASSERT_TRUE(last_figures_.at(0).event_time_lag_seconds.has_value());
  EXPECT_DOUBLE_EQ(*last_figures_.at(0).event_time_lag_seconds, 0.1);
}

TEST_F(PipelineRunTest, AFullRefreshStartsForeachBatchIdsAgainAtZero) {
  static std::vector<int64_t> seen;
  seen.clear();
  ASSERT_TRUE(connectors::AllFormatsRegistry()
                  .RegisterForeachBatch("record_ids_for_refresh_test",
                                        [](const RecordBatch&, const engine::BatchContext& context) {
                                          const int64_t batch_id = context.batch_id;
                                          seen.push_back(batch_id);
                                          return Status::OK();
                                        })
                  .ok());
  PipelineSpec spec = Spec(R"(
sinks:
  ids: {format: foreachBatch, options: {function: record_ids_for_refresh_test}}
flows:
  - {name: counted, source: )" + RateSource() + R"(, sink: ids, trigger: once}
)");
  ASSERT_TRUE(Run(spec).ok());
  clock_->AdvanceBy(std::chrono::seconds(1));
  ASSERT_TRUE(Run(spec).ok());
  RunOptions refresh;
  refresh.full_refresh_all = true;
  ASSERT_TRUE(Run(spec, refresh).ok());
  EXPECT_EQ(seen, (std::vector<int64_t>{0, 1, 0}));
}

// One HTTP exchange with the server; returns the whole response.
std::string HttpExchange(int port, const std::string& request) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    ::close(fd);
    return "";
  }
  ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string response;
  char buffer[4096];
  ssize_t n;
  while ((n = ::recv(fd, buffer, sizeof(buffer), 0)) > 0) response.append(buffer, static_cast<size_t>(n));
  ::close(fd);
  return response;
}

TEST(MetricsServerTest, ServesMetricsAndReadiness) {
  std::atomic<bool> ready{false};
  auto server = MetricsServer::Start("127.0.0.1", 0, [] { return std::string("sluice_up 1\n"); },
                                     [&] { return ready.load(); });
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  int port = (*server)->port();
  ASSERT_GT(port, 0);

  std::string metrics = HttpExchange(port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_TRUE(Contains(metrics, "HTTP/1.1 200 OK\r\n")) << metrics;
  EXPECT_TRUE(Contains(metrics, "Content-Type: text/plain; version=0.0.4")) << metrics;
  EXPECT_TRUE(Contains(metrics, "\r\n\r\nsluice_up 1\n")) << metrics;
  EXPECT_TRUE(Contains(HttpExchange(port, "GET /ready HTTP/1.1\r\n\r\n"), "HTTP/1.1 503 ")) << "not ready yet";
  ready = true;
  EXPECT_TRUE(Contains(HttpExchange(port, "GET /ready HTTP/1.1\r\n\r\n"), "HTTP/1.1 200 OK"));
  EXPECT_TRUE(Contains(HttpExchange(port, "GET /other HTTP/1.1\r\n\r\n"), "HTTP/1.1 404 "));
  EXPECT_TRUE(Contains(HttpExchange(port, "POST /metrics HTTP/1.1\r\n\r\n"), "HTTP/1.1 405 "));
  EXPECT_TRUE(Contains(HttpExchange(port, "garbage\r\n\r\n"), "HTTP/1.1 400 "));
  EXPECT_TRUE(Contains(HttpExchange(port, std::string(9000, 'x')), "HTTP/1.1 431 "));
}

TEST(MetricsServerTest, RefusesABadAddress) {
  auto server = MetricsServer::Start("not-an-address", 0, [] { return std::string(); }, [] { return true; });
  EXPECT_EQ(server.status().error_class(), errors::kInvalidArgument);
}

}  // namespace
}  // namespace sluice::pipeline
