// Flows given as SQL: selections and streaming aggregations with their state in the checkpoint.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/file_system.h"
#include "sluice/delta/scan.h"
#include "sluice/delta/snapshot.h"
#include "sluice/engine/memory_sink.h"
#include "sluice/parquet/reader.h"
#include "sluice/pipeline/event_log.h"
#include "sluice/pipeline/pipeline_runner.h"
#include "testing/temp_dir.h"

namespace sluice::pipeline {
namespace {

constexpr int64_t kStartMillis = 1'767'225'600'000;  // 2026-01-01T00:00:00Z
// Ten seconds after the start at 10 rows per second: available_now reads the values 0..99.
constexpr int64_t kNowMicros = (kStartMillis + 10'000) * 1000;

// Rows as "v1|v2|...", sorted.
std::vector<std::string> Rows(const std::vector<BatchPtr>& batches) {
  std::vector<std::string> rows;
  for (const BatchPtr& batch : batches) {
    for (int64_t r = 0; r < batch->num_rows(); ++r) {
      std::string row;
      for (int c = 0; c < batch->num_columns(); ++c) row += (c ? "|" : "") + FormatValue(*batch->column(c), r);
      rows.push_back(row);
    }
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

std::vector<std::string> DeltaRows(const std::string& table) {
  auto snapshot = delta::Snapshot::Load(LocalFileSystem(), table);
  EXPECT_TRUE(snapshot.ok()) << snapshot.status().ToString();
  if (!snapshot.ok()) return {};
  auto scan = delta::TableScan::Open(*snapshot, {});
  EXPECT_TRUE(scan.ok()) << scan.status().ToString();
  std::vector<BatchPtr> batches;
  while (scan.ok()) {
    Result<BatchPtr> batch = (*scan)->Next();
    EXPECT_TRUE(batch.ok()) << batch.status().ToString();
    if (!batch.ok() || *batch == nullptr) break;
    batches.push_back(*batch);
  }
  return Rows(batches);
}

// The expected groups of value % 5 over the values [0, n): "k|count|sum|max".
std::vector<std::string> Groups(int64_t n) {
  std::vector<std::string> rows;
  for (int64_t k = 0; k < 5; ++k) {
    int64_t count = 0, sum = 0, top = 0;
    for (int64_t v = k; v < n; v += 5) {
      ++count;
      sum += v;
      top = v;
    }
    rows.push_back(fmt::format("{}|{}|{}|{}", k, count, sum, top));
  }
  return rows;
}

class SqlFlowTest : public ::testing::Test {
 protected:
  Result<PipelineSpec> Spec(const std::string& name, const std::string& body) {
    return ParsePipelineSpec("name: " + name + "\nstorage: " + dir_.Join("storage-" + name) +
                             "\nwarehouse: " + dir_.Join("warehouse") + "\n" + body);
  }
  Status Run(const std::string& name, const std::string& body, std::vector<std::string> full_refresh = {}) {
    SLUICE_ASSIGN_OR_RETURN(PipelineSpec spec, Spec(name, body));
    RunOptions options;
    options.clock = clock_;
    options.full_refresh = std::move(full_refresh);
    SLUICE_ASSIGN_OR_RETURN(auto run, PipelineRun::Start(spec, std::move(options)));
    return run->Wait();
  }
  // The rate source's values so far into main.shop.numbers.
  Status Feed() {
    return Run("feed", "sinks:\n  lake: {format: delta, table: main.shop.numbers}\nflows:\n"
                       "  - {name: numbers, sink: lake, trigger: available_now, source: {format: rate, options: "
                       "{rowsPerSecond: 10, startTimestamp: " +
                           std::to_string(kStartMillis) + "}}}\n");
  }
  std::string Table(const std::string& name) const { return dir_.Join("warehouse/main/shop/" + name); }
  // The last batch progress event of `flow` in pipeline `name`'s event log.
  std::string LastProgress(const std::string& name, const std::string& flow) const {
    std::string last;
    for (const std::string& line : EventLog::ReadLines(EventLog::PathFor(dir_.Join("storage-" + name))).value()) {
      if (line.find("\"stateOperators\"") != std::string::npos &&
          line.find("\"flow\":\"" + flow + "\"") != std::string::npos) {
        last = line;
      }
    }
    return last;
  }

  testing::TempDir dir_;
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>(kNowMicros);
};

constexpr const char* kGroupsSql =
    "SELECT value % 5 AS k, count(*) AS n, sum(value) AS total, max(value) AS top "
    "FROM STREAM(main.shop.numbers) GROUP BY value % 5";

std::string AggregatingPipeline(const std::string& memory_name) {
  return fmt::format(R"(
sinks:
  lake: {{format: delta, table: main.shop.by_k}}
  changes: {{format: memory, options: {{queryName: {}}}}}
flows:
  - name: complete_groups
    sql: {}
    sink: lake
    output_mode: complete
    trigger: available_now
  - name: changed_groups
    sql: {}
    sink: changes
    output_mode: update
    trigger: available_now
)",
                     memory_name, kGroupsSql, kGroupsSql);
}

TEST_F(SqlFlowTest, AnAggregationKeepsItsGroupsAcrossBatchesAndRuns) {
  ASSERT_TRUE(Feed().ok());
  Status first = Run("groups", AggregatingPipeline("sql_changed_groups"));
  ASSERT_TRUE(first.ok()) << first.ToString();
  EXPECT_EQ(DeltaRows(Table("by_k")), Groups(100));
  auto changes = engine::MemoryTable::Named("sql_changed_groups");
  EXPECT_EQ(Rows(changes->batches()), Groups(100));

  // Fifty more values: the groups go on from their state, and the complete table is replaced.
  clock_->AdvanceBy(std::chrono::seconds(5));
  ASSERT_TRUE(Feed().ok());
  ASSERT_TRUE(Run("groups", AggregatingPipeline("sql_changed_groups")).ok());
  EXPECT_EQ(DeltaRows(Table("by_k")), Groups(150));
  std::vector<BatchPtr> batches = changes->batches();
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(Rows({batches[1]}), Groups(150));

  // The progress reports the groups held and changed, as Spark's stateOperators.
  const std::string last_progress = LastProgress("groups", "complete_groups");
  EXPECT_NE(last_progress.find("\"stateOperators\":[{\"operatorName\":\"stateStoreSave\",\"numRowsTotal\":5,"
                                "\"numRowsUpdated\":5,"),
            std::string::npos)
      << last_progress;

  // The state is in the checkpoint, one version per batch, and readable as Parquet.
  const std::string state = dir_.Join("storage-groups/checkpoints/complete_groups/state/0");
  EXPECT_TRUE(std::filesystem::exists(state + "/0.delta.parquet"));
  EXPECT_TRUE(std::filesystem::exists(state + "/1.delta.parquet"));
}

// An aggregation in update mode keeps a Delta table current through a MERGE per batch (the
// sink's `merge`): the changed groups update their rows, new groups are inserted.
TEST_F(SqlFlowTest, UpdatedGroupsAreMergedIntoADeltaTable) {
  const std::string body = fmt::format(R"(
sinks:
  lake:
    format: delta
    table: main.shop.merged_k
    merge:
      on: t.k = s.k
      when_matched:
        - {{condition: s.n > 1000, action: DELETE}}
        - UPDATE SET *
      when_not_matched: INSERT *
flows:
  - name: merged_groups
    sql: {}
    sink: lake
    output_mode: update
    trigger: available_now
)",
                                       kGroupsSql);
  ASSERT_TRUE(Feed().ok());
  Status first = Run("merged", body);
  ASSERT_TRUE(first.ok()) << first.ToString();
  EXPECT_EQ(DeltaRows(Table("merged_k")), Groups(100));
  clock_->AdvanceBy(std::chrono::seconds(5));
  ASSERT_TRUE(Feed().ok());
  ASSERT_TRUE(Run("merged", body).ok());
  EXPECT_EQ(DeltaRows(Table("merged_k")), Groups(150));
  // Each batch is one MERGE commit recording the flow's batch: a replay of the last batch (its
  // commit in the checkpoint lost) changes nothing.
  auto snapshot = delta::Snapshot::Load(LocalFileSystem(), Table("merged_k")).value();
  const int64_t version = snapshot->version();
  const std::string checkpoint = dir_.Join("storage-merged/checkpoints/merged_groups");
  std::filesystem::remove(checkpoint + "/commits/1");
  ASSERT_TRUE(Run("merged", body).ok());
  EXPECT_EQ(delta::Snapshot::Load(LocalFileSystem(), Table("merged_k")).value()->version(), version);
  EXPECT_EQ(DeltaRows(Table("merged_k")), Groups(150));
}

TEST_F(SqlFlowTest, AMergingSinkIsCheckedWhenThePipelineIsRead) {
  struct Case {
    std::string sink;
    std::string problem;
  };
  const Case cases[] = {
      {"{format: delta, table: main.shop.m, merge: {when_matched: DELETE}}", "merge.on: missing"},
      {"{format: delta, table: main.shop.m, merge: {on: t.k = s.k}}", "no clause"},
      {"{format: delta, table: main.shop.m, merge: {on: t.k = s.k, when_matched: [{condition: x}]}}", "action: missing"},
      {"{format: delta, table: main.shop.m, merge: {on: t.k = s.k, when_matched: INSERT *}}", "expected UPDATE or DELETE"},
      {"{format: delta, table: main.shop.m, merge: {on: t.k = s.k, when_matched: DELETE, whenever: DELETE}}", "whenever"},
      {"{format: delta, table: main.shop.m, options: {mode: merge}}", "needs the option `merge`"},
      {"{format: memory, options: {queryName: m}, merge: {on: t.k = s.k, when_matched: DELETE}}", "unknown option"},
  };
  for (const Case& c : cases) {
    const std::string body = "sinks:\n  lake: " + c.sink +
                             "\nflows:\n  - {name: f, sink: lake, trigger: available_now, source: {format: rate}}\n";
    Status status = Spec("bad", body).status();
    if (status.ok()) status = Run("bad", body);
    EXPECT_FALSE(status.ok()) << c.sink;
    EXPECT_NE(status.message().find(c.problem), std::string_view::npos) << c.sink << ": " << status.ToString();
  }
}

// A batch run again after its state was written but before its commit was logged starts from
// the state its first run started from: the result is the same, not counted twice.
TEST_F(SqlFlowTest, ABatchRunAgainStartsFromTheStateBeforeIt) {
  ASSERT_TRUE(Feed().ok());
  ASSERT_TRUE(Run("groups", AggregatingPipeline("sql_replayed")).ok());
  clock_->AdvanceBy(std::chrono::seconds(5));
  ASSERT_TRUE(Feed().ok());
  ASSERT_TRUE(Run("groups", AggregatingPipeline("sql_replayed")).ok());
  const std::string checkpoint = dir_.Join("storage-groups/checkpoints/complete_groups");
  ASSERT_TRUE(std::filesystem::exists(checkpoint + "/commits/1"));
  std::filesystem::remove(checkpoint + "/commits/1");
  ASSERT_TRUE(Run("groups", AggregatingPipeline("sql_replayed")).ok());
  EXPECT_EQ(DeltaRows(Table("by_k")), Groups(150));
  EXPECT_TRUE(std::filesystem::exists(checkpoint + "/commits/1"));

  // A state version the next batch needs is gone: the flow stops and says which.
  clock_->AdvanceBy(std::chrono::seconds(5));
  ASSERT_TRUE(Feed().ok());
  std::filesystem::remove(checkpoint + "/state/0/1.delta.parquet");
  Status lost = Run("groups", AggregatingPipeline("sql_replayed"));
  EXPECT_EQ(lost.error_class(), errors::kCannotLoadStateStore) << lost.ToString();
  EXPECT_NE(lost.message().find("1.delta.parquet"), std::string_view::npos) << lost.ToString();
  EXPECT_EQ(DeltaRows(Table("by_k")), Groups(150));
}

TEST_F(SqlFlowTest, ASelectionWithoutAggregatesIsAnAppendFlow) {
  ASSERT_TRUE(Feed().ok());
  Status run = Run("evens", R"(
sinks:
  evens: {format: memory, options: {queryName: sql_evens}}
flows:
  - name: evens
    sql: SELECT value * 10 AS tens FROM STREAM(main.shop.numbers) WHERE value % 2 = 0 AND value < 10
    sink: evens
    trigger: available_now
)");
  ASSERT_TRUE(run.ok()) << run.ToString();
  EXPECT_EQ(Rows(engine::MemoryTable::Named("sql_evens")->batches()),
            (std::vector<std::string>{"0", "20", "40", "60", "80"}));
}

// Materialized views over a table a flow of the same run writes, and over each other: they wait
// for the tables they read, keep a selection appended and an aggregation whole, with expectations.
TEST_F(SqlFlowTest, MaterializedViewsFollowTheTablesTheyReadInOneRun) {
  const std::string body = R"(
sinks:
  lake: {format: delta, table: main.shop.numbers}
flows:
  - name: numbers
    sink: lake
    trigger: available_now
    source: {format: rate, options: {rowsPerSecond: 10, startTimestamp: )" + std::to_string(kStartMillis) + R"(}}
materialized_views:
  - name: main.shop.by_m
    sql: SELECT m, count(*) AS n, sum(value) AS s FROM main.shop.evens GROUP BY m
    expectations:
      - {name: enough, expect_or_drop: n > 16}
    trigger: available_now
  - name: main.shop.evens
    sql: SELECT value, value % 3 AS m FROM STREAM(main.shop.numbers) WHERE value % 2 = 0
    trigger: available_now
    partition_cols: [M]
)";
  Status run = Run("views", body);
  ASSERT_TRUE(run.ok()) << run.ToString();
  auto partitioned = delta::Snapshot::Load(LocalFileSystem(), Table("evens")).value();
  EXPECT_EQ(partitioned->metadata().partition_columns, std::vector<std::string>{"m"});
  std::set<std::string> directories;
  for (const delta::AddFile& file : partitioned->files()) directories.insert(file.path.substr(0, file.path.find('/')));
  EXPECT_EQ(directories, (std::set<std::string>{"m=0", "m=1", "m=2"}));
  std::vector<std::string> evens;
  for (int64_t v = 0; v < 100; v += 2) evens.push_back(std::to_string(v) + "|" + std::to_string(v % 3));
  std::sort(evens.begin(), evens.end());
  EXPECT_EQ(DeltaRows(Table("evens")), evens);
  EXPECT_EQ(DeltaRows(Table("by_m")), (std::vector<std::string>{"0|17|816", "2|17|850"}));

  // The next run goes on from the views' checkpoints.
  clock_->AdvanceBy(std::chrono::seconds(5));
  ASSERT_TRUE(Run("views", body).ok());
  EXPECT_EQ(DeltaRows(Table("evens")).size(), 75u);
  EXPECT_EQ(DeltaRows(Table("by_m")), (std::vector<std::string>{"0|25|1800", "1|25|1900", "2|25|1850"}));

  for (const auto& [view, says] : std::vector<std::pair<std::string, std::string>>{
           {"{name: shop.by_m, sql: SELECT count(*) FROM main.shop.evens}", "is not catalog.schema.table"},
           {"{name: main.shop.x, sql: SELECT count(*) FROM main.shop.evens, sink: lake}", "sink"},
           {"{name: main.shop.x, sql: SELECT nothing FROM}", "PARSE_SYNTAX_ERROR"},
           {"{name: main.shop.x}", "sql"},
           {"{name: main.shop.x, sql: SELECT 1 AS one}", "a materialized view reads a table: add FROM name"},
           {"{name: main.shop.x, sql: SELECT 1 AS one FROM main.shop.evens, partition_cols: one}",
            "partition_cols: expected a list of column names"},
           {"{name: main.shop.x, sql: SELECT 1 AS one FROM main.shop.evens, partition_cols: []}",
            "partition_cols: expected a list of column names"},
           {"{name: main.shop.x, sql: SELECT 1 AS one FROM main.shop.evens, partition: [one]}", "partition"},
       }) {
    Result<PipelineSpec> spec = Spec("bad", "materialized_views:\n  - " + view + "\n");
    EXPECT_EQ(spec.status().error_class(), errors::kInvalidPipeline) << view;
    EXPECT_NE(spec.status().message().find(says), std::string_view::npos) << spec.status().ToString();
  }
}

// A bare FROM reads the table as it is, whole and once: later runs add nothing until a full
// refresh of the flow reads it again.
TEST_F(SqlFlowTest, ABareFromReadsTheTableWholeOnceUntilAFullRefresh) {
  ASSERT_TRUE(Feed().ok());
  const std::string body = fmt::format(R"(
sinks:
  lake: {{format: delta, table: main.shop.by_k_once}}
  copy: {{format: delta, table: main.shop.copy_once}}
flows:
  - {{name: groups_once, sql: "{}", sink: lake, output_mode: complete, trigger: available_now}}
  - {{name: copy_once, sql: "SELECT value FROM main.shop.numbers WHERE value % 10 = 0", sink: copy,
     trigger: available_now}}
)",
                                       "SELECT value % 5 AS k, count(*) AS n, sum(value) AS total, max(value) AS top "
                                       "FROM main.shop.numbers GROUP BY value % 5");
  auto tens = [](int64_t n) {
    std::vector<std::string> rows;
    for (int64_t v = 0; v < n; v += 10) rows.push_back(std::to_string(v));
    std::sort(rows.begin(), rows.end());
    return rows;
  };
  Status first = Run("once", body);
  ASSERT_TRUE(first.ok()) << first.ToString();
  EXPECT_EQ(DeltaRows(Table("by_k_once")), Groups(100));
  EXPECT_EQ(DeltaRows(Table("copy_once")), tens(100));
  const int64_t version = delta::Snapshot::Load(LocalFileSystem(), Table("copy_once")).value()->version();

  clock_->AdvanceBy(std::chrono::seconds(5));
  ASSERT_TRUE(Feed().ok());  // the table now holds 0..149
  ASSERT_TRUE(Run("once", body).ok());
  EXPECT_EQ(DeltaRows(Table("by_k_once")), Groups(100));
  EXPECT_EQ(DeltaRows(Table("copy_once")), tens(100));
  EXPECT_EQ(delta::Snapshot::Load(LocalFileSystem(), Table("copy_once")).value()->version(), version);

  Status refreshed = Run("once", body, {"groups_once", "copy_once"});
  ASSERT_TRUE(refreshed.ok()) << refreshed.ToString();
  EXPECT_EQ(DeltaRows(Table("by_k_once")), Groups(150));
  EXPECT_EQ(DeltaRows(Table("copy_once")), tens(150));
}

// dedup: the first row of each key reaches the sink, across batches, runs and a replayed batch.
TEST_F(SqlFlowTest, DedupKeepsTheFirstRowOfEachKeyAcrossRunsAndReplays) {
  const std::string body = R"(
sinks:
  lake: {format: delta, table: main.shop.firsts}
flows:
  - name: firsts
    source: {format: rate, options: {rowsPerSecond: 10, startTimestamp: )" +
                           std::to_string(kStartMillis) + R"(}}
    select: [value % 13 AS k, value]
    dedup: [k]
    expectations:
      - {name: not_twelve, expect_or_drop: k <> 12}
    sink: lake
    trigger: available_now
)";
  ASSERT_TRUE(Run("dedup", body).ok());
  std::vector<std::string> firsts;
  for (int64_t v = 0; v < 12; ++v) firsts.push_back(fmt::format("{}|{}", v, v));
  std::sort(firsts.begin(), firsts.end());
  EXPECT_EQ(DeltaRows(Table("firsts")), firsts);
  EXPECT_NE(LastProgress("dedup", "firsts").find("\"operatorName\":\"dedupe\",\"numRowsTotal\":13,"), std::string::npos)
      << LastProgress("dedup", "firsts");

  // The batch run again after its state was written starts from the keys before it: its state
  // version holds all 13 keys again (had it started from its own version, none would be new).
  const std::string checkpoint = dir_.Join("storage-dedup/checkpoints/firsts");
  auto state_rows = [&](int version) {
    auto reader = parquet::ParquetReader::Open(*LocalFileSystem(),
                                               checkpoint + "/state/0/" + std::to_string(version) + ".delta.parquet");
    return reader.ok() ? (*reader)->num_rows() : -1;
  };
  EXPECT_EQ(state_rows(0), 13);
  ASSERT_FALSE(std::filesystem::exists(checkpoint + "/commits/1")) << "the test expects one batch";
  std::filesystem::remove(checkpoint + "/commits/0");
  Status replayed = Run("dedup", body);
  ASSERT_TRUE(replayed.ok()) << replayed.ToString();
  EXPECT_TRUE(std::filesystem::exists(checkpoint + "/commits/0"));
  EXPECT_EQ(state_rows(0), 13);
  EXPECT_EQ(DeltaRows(Table("firsts")), firsts);
  // Later batches find every key seen.
  clock_->AdvanceBy(std::chrono::seconds(5));
  ASSERT_TRUE(Run("dedup", body).ok());
  EXPECT_EQ(state_rows(1), 0);
  EXPECT_EQ(DeltaRows(Table("firsts")), firsts);

  Result<PipelineSpec> grouped = Spec("x", R"yaml(
sinks: {mem: {format: memory, options: {queryName: sql_dedup}}}
flows:
  - {name: f, sql: "SELECT count(*) FROM STREAM(main.shop.firsts)", dedup: [k], sink: mem}
)yaml");
  EXPECT_EQ(grouped.status().error_class(), errors::kInvalidPipeline);
  EXPECT_NE(grouped.status().message().find("one row per group already"), std::string_view::npos);
  Status unknown = Run("y", R"(
sinks: {mem: {format: memory, options: {queryName: sql_dedup}}}
flows:
  - {name: f, source: {format: rate}, dedup: [nope], sink: mem, trigger: available_now}
)");
  EXPECT_NE(unknown.ToString().find("UNRESOLVED_COLUMN"), std::string::npos) << unknown.ToString();
}

TEST_F(SqlFlowTest, WrongFlowsFailWithTheirClass) {
  ASSERT_TRUE(Feed().ok());
  auto flow = [](const std::string& sql, const std::string& mode, const std::string& sink) {
    return fmt::format(R"(
sinks:
  lake: {{format: delta, table: main.shop.out}}
  mem: {{format: memory, options: {{queryName: sql_wrong}}}}
flows:
  - name: f
    sql: "{}"
    sink: {}
    output_mode: {}
    trigger: available_now
)",
                       sql, sink, mode);
  };
  const std::string grouped = "SELECT value % 2 AS k, count(*) AS n FROM STREAM(main.shop.numbers) GROUP BY value % 2";
  const struct {
    std::string body;
    std::string_view error_class;
    std::string_view says;
  } cases[] = {
      {flow(grouped, "append", "lake"), errors::kUnsupportedOutputMode, "no group of an aggregation is ever final"},
      {flow(grouped, "update", "lake"), errors::kUnsupportedOutputMode, "does not support the update output mode"},
      {flow("SELECT value FROM STREAM(main.shop.numbers)", "complete", "lake"), errors::kUnsupportedOutputMode,
       "has no aggregation"},
      {flow("SELECT value, count(*) FROM STREAM(main.shop.numbers) GROUP BY value % 2", "update", "mem"),
       errors::kMissingAggregation, "value"},
      {flow("SELECT count(*) AS n", "update", "mem"), errors::kInvalidPipeline,
       "a flow reads a table: add FROM STREAM(name) or FROM name"},
      {flow("SELECT count(*) FROM STREAM(main.shop.numbers) GROUP", "update", "mem"), errors::kParseSyntaxError,
       "flows[0].sql"},
      {flow("SELECT * FROM STREAM(main.shop.numbers) GROUP BY value", "update", "mem"), errors::kParseSyntaxError,
       "SELECT * cannot be grouped"},
      {flow("SELECT count(*) AS n FROM STREAM(main.shop.nothing)", "update", "mem"), errors::kDeltaTableNotFound,
       "nothing"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.body);
    // The run checks the pipeline first: problems of shape or binding under INVALID_PIPELINE,
    // each with its own class.
    Status status = Run("wrong", c.body);
    EXPECT_FALSE(status.ok());
    EXPECT_NE(status.ToString().find(c.error_class), std::string::npos) << status.ToString();
    EXPECT_NE(status.ToString().find(c.says), std::string::npos) << status.ToString();
  }
  Result<PipelineSpec> both = Spec("both", R"yaml(
sinks: {mem: {format: memory, options: {queryName: sql_both}}}
flows:
  - {name: f, sql: "SELECT value FROM STREAM(main.shop.numbers)", source: {format: rate}, sink: mem}
)yaml");
  EXPECT_EQ(both.status().error_class(), errors::kInvalidPipeline);
  EXPECT_NE(both.status().message().find("flows[0].source"), std::string_view::npos) << both.status().ToString();
}

}  // namespace
}  // namespace sluice::pipeline
