#include "sluice/pipeline/pipeline_spec.h"

#include <gtest/gtest.h>

#include "sluice/connectors/register_formats.h"
#include "sluice/core/error_classes.h"
#include "sluice/pipeline/feed_catalog.h"
#include "testing/temp_dir.h"

namespace sluice::pipeline {
namespace {

constexpr std::string_view kValid = R"(
name: orders
storage: /var/lib/sluice/orders
warehouse: /var/lib/sluice/warehouse
sinks:
  lake: {format: delta, table: main.sales.orders}
  screen: {format: console, options: {numRows: 5}}
flows:
  - name: generate
    source: {format: rate, options: {rowsPerSecond: 100}}
    where: value % 10 <> 3
    select: [timestamp, value, value * 2 AS doubled]
    expectations:
      - {name: non_negative, expect_or_fail: value >= 0}
      - {name: not_seven, expect_or_drop: value % 10 <> 7}
      - {name: small, expect: value < 1000000}
    sink: lake
    trigger: {kind: processing_time, interval: 1 second}
  - name: copy
    source: {format: delta, table: main.sales.orders}
    sink: screen
    trigger: available_now
)";

std::string Messages(const std::vector<Status>& problems) {
  std::string text;
  for (const Status& problem : problems) text += problem.ToString() + "\n";
  return text;
}

TEST(PipelineSpecTest, ParsesACompleteFile) {
  Result<PipelineSpec> spec = ParsePipelineSpec(kValid);
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->name, "orders");
  ASSERT_EQ(spec->flows.size(), 2u);
  const FlowSpec& generate = spec->flows[0];
  EXPECT_EQ(generate.source.format, "rate");
  EXPECT_EQ(generate.source.options.at("rowsPerSecond"), "100");
  EXPECT_EQ(*generate.where, "value % 10 <> 3");
  EXPECT_EQ(generate.select, (std::vector<std::string>{"timestamp", "value", "value * 2 AS doubled"}));
  ASSERT_EQ(generate.expectations.size(), 3u);
  EXPECT_EQ(generate.expectations[0].action, ExpectationAction::kFail);
  EXPECT_EQ(generate.expectations[1].action, ExpectationAction::kDrop);
  EXPECT_EQ(generate.expectations[2].action, ExpectationAction::kWarn);
  EXPECT_EQ(generate.trigger, "processing_time");
  EXPECT_EQ(generate.trigger_interval, "1 second");
  EXPECT_EQ(generate.output_mode, "append");
  EXPECT_EQ(spec->flows[1].trigger, "available_now");
  EXPECT_EQ(spec->CheckpointOf(generate), "/var/lib/sluice/orders/checkpoints/generate");
  EXPECT_EQ(spec->ResolvedOptions(spec->sinks.at("lake"))->at("path"), "/var/lib/sluice/warehouse/main/sales/orders");
}

// Storage and warehouse on object stores, with their options; file:// as the local path it names;
// a malformed URI or unknown store option refused by the storage layer's class.
TEST(PipelineSpecTest, StoragePlacesMayBeUris) {
  Result<PipelineSpec> spec = ParsePipelineSpec(R"(
name: lake
storage: file:///var/lib/sluice/../sluice/lake
warehouse: s3://my-lake/warehouse
object_stores:
  s3://my-lake: {endpoint: "http://127.0.0.1:9000", region: eu-west-1}
sinks:
  lake: {format: delta, table: main.s.t}
flows:
  - name: generate
    source: {format: rate}
    sink: lake
)");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->storage, "/var/lib/sluice/lake");
  EXPECT_EQ(spec->CheckpointOf(spec->flows[0]), "/var/lib/sluice/lake/checkpoints/generate");
  EXPECT_EQ(spec->ResolvedOptions(spec->sinks.at("lake"))->at("path"), "s3://my-lake/warehouse/main/s/t");
  EXPECT_EQ(spec->object_stores.at("s3://my-lake").at("region"), "eu-west-1");
  EXPECT_TRUE(ConfigureObjectStores(*spec).ok());
  spec->object_stores["s3://my-lake"]["regoin"] = "x";
  EXPECT_EQ(ConfigureObjectStores(*spec).error_class(), errors::kInvalidStorageUri);
  spec->warehouse = "s3://My_Lake/warehouse";
  std::vector<Status> problems = ValidatePipeline(*spec, connectors::AllFormatsRegistry());
  ASSERT_FALSE(problems.empty());
  EXPECT_EQ(problems[0].error_class(), errors::kInvalidStorageUri) << problems[0].ToString();
}

TEST(PipelineSpecTest, ListsEveryProblemOfShapeWithItsPlace) {
  Result<PipelineSpec> spec = ParsePipelineSpec(R"(
name: broken
sinks:
  lake: {fromat: delta}
flows:
  - name: a
    source: {format: rate, options: [1, 2]}
    expectations:
      - {name: both, expect: x > 0, expect_or_drop: x > 1}
    trigger: {kind: once, every: 1s}
)");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().error_class(), errors::kInvalidPipeline);
  std::string_view message = spec.status().message();
  for (std::string_view expected : {"storage: missing", "sinks.lake.fromat: unknown key", "sinks.lake.format: missing",
                                    "flows[0].source.options: expected a map",
                                    "flows[0].expectations[0]: needs exactly one of", "flows[0].sink: missing",
                                    "flows[0].trigger.every: unknown key"}) {
    EXPECT_NE(message.find(expected), std::string_view::npos) << expected << "\nin:\n" << message;
  }
}

// Every name that becomes a folder is one path segment: none can point outside the storage or
// the warehouse, whichever name it is.
TEST(PipelineSpecTest, NamesThatWouldLeaveTheirFolderAreRefused) {
  std::string valid(kValid);
  auto replaced = [&](std::string_view from, std::string_view to) {
    std::string text = valid;
    text.replace(text.find(from), from.size(), to);
    return text;
  };
  for (std::string hostile : {"../../victim", "..", ".", "a/b", "/etc", "x\\0y", "-rf", "a b", "caf\u00e9", ""}) {
    SCOPED_TRACE(hostile);
    for (auto [from, to] : {std::pair<std::string, std::string>{"- name: generate", "- name: \"" + hostile + "\""},
                            {"name: orders", "name: \"" + hostile + "\""},
                            {"  lake: {", "  \"" + hostile + "\": {"}}) {
      Result<PipelineSpec> parsed = ParsePipelineSpec(replaced(from, to));
      ASSERT_FALSE(parsed.ok()) << to;
      EXPECT_EQ(parsed.status().error_class(), errors::kInvalidPipeline);
      EXPECT_NE(parsed.status().message().find("it names a folder"), std::string::npos) << parsed.status().ToString();
    }
    // A table becomes its folder when the pipeline is validated or run.
    Result<PipelineSpec> spec = ParsePipelineSpec(valid);
    ASSERT_TRUE(spec.ok());
    for (std::string table : {"main." + hostile + ".orders", hostile + ".s.t", "main.s." + hostile}) {
      Result<std::string> path = spec->TablePath(table);
      EXPECT_EQ(path.status().error_class(), errors::kInvalidPipeline) << table << " -> " << path.value_or("");
    }
  }
  EXPECT_TRUE(ParsePipelineSpec(replaced("- name: generate", "- name: gen-erate_2")).ok());
  // A change feed's name becomes its state folder, in a pipeline file and in the catalog alike.
  for (std::string hostile : {"../../victim", "..", "a/b", "/etc", "-rf", "a b", ""}) {
    SCOPED_TRACE(hostile);
    const std::string feed = "name: \"" + hostile + "\"\nschema: public\n";
    Result<PipelineSpec> parsed = ParsePipelineSpec("name: p\nstorage: /s\nchange_feeds:\n  - {name: \"" + hostile +
                                                    "\", schema: public}\n");
    EXPECT_EQ(parsed.status().error_class(), errors::kInvalidPipeline) << parsed.status().ToString();
    testing::TempDir dir;
    FeedCatalog feeds(LocalFileSystem(), dir.path(), &connectors::AllFormatsRegistry());
    EXPECT_EQ(feeds.Create(feed).status().error_class(), errors::kInvalidPipeline);
    EXPECT_EQ(feeds.Get(hostile).status().error_class(), errors::kInvalidPipeline);
  }
}

// YAML leaves a key given twice to the reader's choice; sluice takes neither and names both lines,
// in every map of the file.
TEST(PipelineSpecTest, AKeyGivenTwiceIsRefusedWithBothLines) {
  for (std::string_view text : {
           "name: a\nname: b\nstorage: /s\nflows: []\n",
           "name: a\nstorage: /s\nsinks:\n  out: {format: memory}\n  out: {format: console}\nflows: []\n",
           "name: a\nstorage: /s\nflows:\n  - name: f\n    sink: x\n    sink: y\n    source: {format: rate}\n",
           "name: a\nstorage: /s\nflows:\n  - name: f\n    sink: x\n    source: {format: rate, options: {rowsPerSecond: 1, rowsPerSecond: 2}}\n",
       }) {
    SCOPED_TRACE(text);
    Result<PipelineSpec> parsed = ParsePipelineSpec(text);
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.status().error_class(), errors::kInvalidPipeline);
    EXPECT_NE(parsed.status().message().find("given twice, on lines"), std::string::npos) << parsed.status().ToString();
  }
  Result<StreamSpec> stream = ParseStreamSpec("name: a.b.c\nname: a.b.d\nsource: {format: kafka}\n");
  ASSERT_FALSE(stream.ok());
  EXPECT_NE(stream.status().message().find("given twice, on lines 1 and 2"), std::string::npos) << stream.status().ToString();
}

// `libraries:` lists Python files; a pipeline may then declare no flows of its own (its libraries
// do, docs/python.md). Anything but a list of non-empty paths is a problem of shape.
TEST(PipelineSpecTest, LibrariesAreAListOfPythonFilesThatMayStandInForFlows) {
  const std::string head = "name: p\nstorage: /s\n";
  Result<PipelineSpec> spec = ParsePipelineSpec(head + "libraries: [transformations/*.py, more.py]\n");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->libraries, (std::vector<std::string>{"transformations/*.py", "more.py"}));
  EXPECT_TRUE(spec->flows.empty());
  for (const auto& [libraries, problem] : std::vector<std::pair<std::string, std::string>>{
           {"libraries: lib.py", "libraries: expected a list of Python files"},
           {"libraries: [\"\"]", "libraries[0]: expected a file path or glob pattern"},
           {"libraries: [{a: b}]", "libraries[0]: expected a file path or glob pattern"},
           {"libraries: []", "flows: missing"}}) {
    Result<PipelineSpec> wrong = ParsePipelineSpec(head + libraries + "\n");
    ASSERT_FALSE(wrong.ok()) << libraries;
    EXPECT_EQ(wrong.status().error_class(), errors::kInvalidPipeline) << libraries;
    EXPECT_NE(wrong.status().message().find(problem), std::string::npos) << libraries << ": " << wrong.status().ToString();
  }
}

// `sql: {ansi: ...}` sets how the pipeline's expressions are typed: ANSI unless it says false;
// anything else under `sql` is a problem of shape. validate binds in the pipeline's mode.
TEST(PipelineSpecTest, TheSqlSettingsAreAnsiByDefaultAndCheckedForShape) {
  const std::string head = "name: p\nstorage: /s\n";
  const std::string flows = "flows:\n  - {name: f, source: {format: rate}, select: [\"value * 1.5F AS x\"], sink: out}\n"
                            "sinks:\n  out: {format: console}\n";
  EXPECT_TRUE(ParsePipelineSpec(head + flows)->sql.ansi);
  EXPECT_TRUE(ParsePipelineSpec(head + "sql: {ansi: true}\n" + flows)->sql.ansi);
  EXPECT_FALSE(ParsePipelineSpec(head + "sql: {ansi: false}\n" + flows)->sql.ansi);
  for (const auto& [sql, problem] : std::vector<std::pair<std::string, std::string>>{
           {"sql: {ansi: maybe}", "sql.ansi: expected true or false, got 'maybe'"},
           {"sql: {ansii: true}", "sql.ansii: unknown key; expected one of: ansi"},
           {"sql: [ansi]", "sql: expected a map of SQL settings (ansi)"},
           {"sql: {ansi: [true]}", "sql.ansi"}}) {
    Result<PipelineSpec> spec = ParsePipelineSpec(head + sql + "\n" + flows);
    ASSERT_FALSE(spec.ok()) << sql;
    EXPECT_EQ(spec.status().error_class(), errors::kInvalidPipeline) << sql;
    EXPECT_NE(spec.status().message().find(problem), std::string::npos) << sql << ": " << spec.status().ToString();
  }
  // `state: {store: ...}` chooses the state store of every flow with state; memory by default.
  EXPECT_EQ(ParsePipelineSpec(head + flows)->state_store, engine::StateStoreKind::kMemory);
  EXPECT_EQ(ParsePipelineSpec(head + "state: {store: rocksdb}\n" + flows)->state_store, engine::StateStoreKind::kRocksDb);
  EXPECT_EQ(ParsePipelineSpec(head + "state: {store: RocksDB}\n" + flows)->state_store, engine::StateStoreKind::kRocksDb);
  EXPECT_EQ(ParsePipelineSpec(head + "state: {store: memory}\n" + flows)->state_store, engine::StateStoreKind::kMemory);
  for (const auto& [state, problem] : std::vector<std::pair<std::string, std::string>>{
           {"state: {store: hdfs}", "state.store: expected memory or rocksdb, got 'hdfs'"},
           {"state: {stores: rocksdb}", "state.stores: unknown key; expected one of: store"},
           {"state: rocksdb", "state: expected a map of state settings (store)"},
           {"state: {store: [rocksdb]}", "state.store"}}) {
    Result<PipelineSpec> spec = ParsePipelineSpec(head + state + "\n" + flows);
    ASSERT_FALSE(spec.ok()) << state;
    EXPECT_EQ(spec.status().error_class(), errors::kInvalidPipeline) << state;
    EXPECT_NE(spec.status().message().find(problem), std::string::npos) << state << ": " << spec.status().ToString();
  }
  // The mode reaches validate's binding: ANSI refuses what non-ANSI casts to NULL.
  const std::string cast = "flows:\n  - {name: f, source: {format: rate}, select: [\"CAST(CAST(timestamp AS date) AS int) AS d\"], sink: out}\n"
                           "sinks:\n  out: {format: console}\n";
  std::vector<Status> ansi = ValidatePipeline(*ParsePipelineSpec(head + cast), connectors::AllFormatsRegistry());
  ASSERT_EQ(ansi.size(), 1u);
  EXPECT_EQ(ansi[0].error_class(), errors::kDatatypeMismatch) << ansi[0].ToString();
  EXPECT_TRUE(ValidatePipeline(*ParsePipelineSpec(head + "sql: {ansi: false}\n" + cast), connectors::AllFormatsRegistry()).empty());
}

TEST(PipelineSpecTest, RejectsTextThatIsNotYaml) {
  Result<PipelineSpec> spec = ParsePipelineSpec("name: [unclosed");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().error_class(), errors::kInvalidPipeline);
  EXPECT_NE(spec.status().message().find("line 1"), std::string_view::npos);
}

TEST(ValidatePipelineTest, AValidPipelineHasNoProblems) {
  std::vector<Status> problems = ValidatePipeline(ParsePipelineSpec(kValid).value(), connectors::AllFormatsRegistry());
  EXPECT_TRUE(problems.empty()) << Messages(problems);
}

TEST(ValidatePipelineTest, ListsEveryProblemTogether) {
  PipelineSpec spec = ParsePipelineSpec(R"(
name: p
storage: /s
sinks:
  lake: {format: delta, table: only.two}
  out: {format: foreachBatch, options: {function: not_registered}}
flows:
  - name: a
    source: {format: rate, options: {rowsPerSecnd: 1}}
    where: value >
    sink: nowhere
    trigger: sometimes
    output_mode: everything
  - name: a
    source: {format: kafak}
    select: ["value AS"]
    expectations:
      - {name: e, expect: "value ="}
    sink: out
    checkpoint: /s/checkpoints/a
)").value();
  std::string text = Messages(ValidatePipeline(spec, connectors::AllFormatsRegistry()));
  for (std::string_view expected :
       {"INVALID_PIPELINE: sink 'lake': table 'only.two'", "FOREACH_BATCH_FUNCTION_NOT_FOUND: sink 'out'",
        "INVALID_OPTIONS: flow 'a' source", "rowsPerSecnd", "PARSE_SYNTAX_ERROR: flow 'a' where",
        "writes to sink 'nowhere', which is not declared", "flow 'a' trigger", "flow 'a' output_mode",
        "two flows are named 'a'", "shares its checkpoint", "DATA_SOURCE_NOT_FOUND: flow 'a' source",
        "flow 'a' select 'value AS'", "flow 'a' expectation 'e'"}) {
    EXPECT_NE(text.find(expected), std::string::npos) << expected << "\nin:\n" << text;
  }
}

// A sink's checkpointLocation is the checkpoint of the flow writing it; two flows may not share
// one that way either, and a flow's checkpoint: may not name another directory.
TEST(ValidatePipelineTest, ASinksCheckpointLocationIsItsFlowsCheckpoint) {
  const std::string sinks = R"(
name: p
storage: /s
sinks:
  pg: {format: postgresql, options: {dbtable: t, checkpointLocation: /c/pg}}
  pg2: {format: postgresql, options: {dbtable: u}}
)";
  PipelineSpec spec = ParsePipelineSpec(sinks + R"(
flows:
  - {name: a, source: {format: rate}, sink: pg}
  - {name: b, source: {format: rate}, sink: pg2}
  - {name: c, source: {format: rate}, sink: pg2, checkpoint: /c/own}
)").value();
  EXPECT_EQ(spec.CheckpointOf(spec.flows[0]), "/c/pg");
  EXPECT_EQ(spec.CheckpointOf(spec.flows[1]), "/s/checkpoints/b");
  EXPECT_EQ(spec.CheckpointOf(spec.flows[2]), "/c/own");
  EXPECT_EQ(Messages(ValidatePipeline(spec, connectors::AllFormatsRegistry())), "");

  PipelineSpec shared = ParsePipelineSpec(sinks + R"(
flows:
  - {name: a, source: {format: rate}, sink: pg}
  - {name: b, source: {format: rate}, sink: pg}
  - {name: c, source: {format: rate}, sink: pg, checkpoint: /c/elsewhere}
)").value();
  std::string text = Messages(ValidatePipeline(shared, connectors::AllFormatsRegistry()));
  EXPECT_NE(text.find("flow 'b' shares its checkpoint /c/pg"), std::string::npos) << text;
  EXPECT_NE(text.find("flow 'c' names the checkpoint /c/elsewhere and its sink 'pg' the checkpointLocation /c/pg"),
            std::string::npos)
      << text;
}

TEST(ValidatePipelineTest, OnSourceResetIsResetOrFailAndForDeltaSources) {
  PipelineSpec spec = ParsePipelineSpec(R"(
name: p
storage: /s
sinks:
  out: {format: memory, options: {queryName: q}}
flows:
  - {name: a, source: {format: delta, options: {path: /t}}, sink: out, on_source_reset: fail}
  - {name: b, source: {format: rate}, sink: out, on_source_reset: reset}
)").value();
  EXPECT_EQ(spec.flows[0].on_source_reset, "fail");
  std::string text = Messages(ValidatePipeline(spec, connectors::AllFormatsRegistry()));
  EXPECT_NE(text.find("flow 'b' sets on_source_reset, which applies to a Delta source only"), std::string::npos) << text;
  EXPECT_EQ(text.find("flow 'a'"), std::string::npos) << text;
  auto refused = ParsePipelineSpec("name: p\nstorage: /s\nsinks: {out: {format: memory, options: {queryName: q}}}\n"
                                   "flows:\n  - {name: a, source: {format: delta}, sink: out, on_source_reset: later}\n");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().ToString().find("'later' is not one of reset, fail"), std::string::npos)
      << refused.status().ToString();
}

// Everything a run would refuse before reading data, validate finds, all in one list: bounds of
// options, values the formats' own checks refuse, a trigger or output mode the sink cannot run,
// expressions bound to the source's schema, a relative storage.
TEST(ValidatePipelineTest, FindsWhatARunWouldRefuseBeforeReadingData) {
  PipelineSpec spec = ParsePipelineSpec(R"(
name: careless
storage: relative/storage
warehouse: /w
sinks:
  pg: {format: postgresql, options: {dbtable: "a.b.c", batchsize: 0, batchinterval: 0 seconds, tasks_per_connection: 100000, maxretries: -1}}
  pg_key: {format: postgresql, options: {dbtable: t, upsertkey: "id,,x"}}
  lake: {format: delta, table: main.s.t}
  two: {format: postgresql, options: {dbtable: t, mode: append, query: x}}
flows:
  - {name: slow, source: {format: rate, options: {rowsPerSecond: 0}}, sink: pg}
  - {name: keyed, source: {format: rate}, sink: pg_key}
  - {name: live, source: {format: rate}, sink: lake, trigger: real_time}
  - {name: whole, source: {format: rate}, sink: lake, output_mode: complete}
  - name: shaped
    source: {format: rate}
    select: [no_such_function(value) AS a]
    sink: lake
  - {name: arity, source: {format: rate}, select: ["abs(value, 2) AS b"], sink: lake}
  - {name: twice, source: {format: rate}, select: [value AS c, timestamp AS c], sink: lake}
  - {name: absent, source: {format: rate}, select: [missing + 1 AS d], sink: lake}
  - {name: filtered, source: {format: rate}, where: "value + 1", sink: lake}
  - {name: judged, source: {format: rate}, select: [value], expectations: [{name: e, expect: "timestamp > 0"}], sink: lake}
)").value();
  std::string text = Messages(ValidatePipeline(spec, connectors::AllFormatsRegistry()));
  for (std::string_view expected :
       {"storage `relative/storage` is not an absolute path", "option 'batchsize' must be at least 1",
        "option 'batchinterval' must be at least 1 microseconds", "option 'tasks_per_connection' must be at most 64",
        "option 'maxretries' must be at least 0", "option 'dbtable'", "option 'upsertkey' has an empty column name",
        "option 'rowsPerSecond' must be at least 1", "UNSUPPORTED_TRIGGER: flow 'live'",
        "UNSUPPORTED_OUTPUT_MODE: flow 'whole'", "flow 'shaped' select 'a'", "flow 'filtered' where",
        "flow 'judged' expectation 'e'", "unknown option 'query'", "UNRESOLVED_ROUTINE", "WRONG_NUM_ARGS: flow 'arity'",
        "INVALID_SCHEMA: flow 'twice' select", "UNRESOLVED_COLUMN: flow 'absent'"}) {
    EXPECT_NE(text.find(expected), std::string::npos) << expected << "\nin:\n" << text;
  }
}

TEST(ValidatePipelineTest, AStreamInAWorkersGroupRunsUntilStoppedOnPartitionsTheBrokerAssigns) {
  auto stream = [](const std::string& name, const std::string& options, const std::string& rest) {
    return "  - name: main.raw." + name + "\n    source: {format: kafka, options: {bootstrap_servers: \"k:9092\", " +
           options + "}}\n    ingestion_config: {table: main.raw." + name + "}\n" + rest;
  };
  const std::string yaml = "name: scaled\nstorage: /s\nwarehouse: /w\nstreams:\n" +
                           stream("good", "subscribe: t", "    scale: {group: true, group_id: orders-prod}\n") +
                           stream("plain", "subscribe: t", "    scale: {group: false}\n") +
                           stream("ending", "subscribe: t", "    scale: {group: true}\n    trigger: available_now\n") +
                           stream("assigned", "assign: '{\"t\":[0]}'", "    scale: {group: true}\n");
  PipelineSpec spec = ParsePipelineSpec(yaml).value();
  ASSERT_EQ(spec.streams.size(), 4u);
  EXPECT_TRUE(spec.streams[0].workers_group);
  EXPECT_EQ(spec.streams[0].WorkersGroupId(), "orders-prod");
  EXPECT_FALSE(spec.streams[1].workers_group);
  EXPECT_EQ(spec.streams[2].WorkersGroupId(), "sluice-main.raw.ending");
  std::string text = Messages(ValidatePipeline(spec, connectors::AllFormatsRegistry()));
  EXPECT_EQ(text.find("'main.raw.good'"), std::string::npos) << text;
  EXPECT_EQ(text.find("'main.raw.plain'"), std::string::npos) << text;
  EXPECT_NE(text.find("stream 'main.raw.ending' runs in a workers group (scale: {group: true}), which runs until "
                      "stopped: its trigger must be processing_time, not available_now"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("stream 'main.raw.assigned' runs in a workers group"), std::string::npos) << text;

  // Shapes that are not a workers group's.
  for (const auto& [scale, problem] : std::vector<std::pair<std::string, std::string>>{
           {"scale: {group: yes please}", "scale.group: expected true or false"},
           {"scale: {groups: true}", "groups"},
           {"scale: true", "expected {group: true}"},
           {"scale: {group_id: x}", "give group: true too"}}) {
    Result<PipelineSpec> parsed =
        ParsePipelineSpec("name: p\nstorage: /s\nwarehouse: /w\nstreams:\n" + stream("s", "subscribe: t", "    " + scale + "\n"));
    ASSERT_FALSE(parsed.ok()) << scale;
    EXPECT_NE(parsed.status().message().find(problem), std::string::npos) << scale << ": " << parsed.status().ToString();
  }
}

// Bounds below zero and at zero, a literal secret in a sink's or a source's options, and an
// expression too deep to evaluate are found by validate, each named, the secret never shown.
TEST(ValidatePipelineTest, FindsBoundsSecretsAndTooDeepExpressionsBeforeReadingData) {
  std::string deep = "value";
  for (int i = 0; i < 5000; ++i) deep += " OR value = 1";
  PipelineSpec spec = ParsePipelineSpec(R"(
name: careless
storage: /s
warehouse: /w
sinks:
  pg: {format: postgresql, options: {dbtable: t, batchsize: -5}}
  pg_tasks: {format: postgresql, options: {dbtable: t, tasks_per_connection: 0}}
  pg_leaky: {format: postgresql, options: {dbtable: t, password: hunter2}}
  lake: {format: delta, table: main.s.t}
flows:
  - {name: negative, source: {format: rate, options: {rowsPerSecond: -3}}, sink: pg}
  - {name: tasks, source: {format: rate}, sink: pg_tasks}
  - {name: to_leaky, source: {format: rate}, sink: pg_leaky}
  - {name: leaky, source: {format: kafka, options: {subscribe: t, bootstrap_servers: "h:9092", password: swordfish}}, sink: lake}
  - {name: deep, source: {format: rate}, where: ")" + deep + R"(", sink: lake}
)").value();
  std::string text = Messages(ValidatePipeline(spec, connectors::AllFormatsRegistry()));
  for (std::string_view expected :
       {"option 'batchsize' must be at least 1", "option 'tasks_per_connection' must be at least 1",
        "option 'rowsPerSecond' must be at least 1", "CONNECTION_LITERAL_SECRET: sink 'pg_leaky'",
        "CONNECTION_LITERAL_SECRET: flow 'leaky' source", "PARSE_SYNTAX_ERROR: flow 'deep' where"}) {
    EXPECT_NE(text.find(expected), std::string::npos) << expected << "\nin:\n" << text;
  }
  EXPECT_EQ(text.find("hunter2"), std::string::npos) << text;
  EXPECT_EQ(text.find("swordfish"), std::string::npos) << text;
}

// A problem of shape in one flow does not hide the other flows' problems: the parse keeps going
// with what parsed cleanly, and validation checks that.
TEST(ValidatePipelineTest, ShapeProblemsDoNotHideTheRest) {
  Status shape;
  Result<PipelineSpec> spec = ParsePipelineSpecKeepingGoing(R"(
name: careless
storage: /s
sinks:
  lake: {format: delta, table: main.s.t}
  broken: {format: delta, tabel: main.s.u}
flows:
  - {name: misshapen, source: {format: rate}, sink: lake, trigr: once}
  - {name: slow, source: {format: rate, options: {rowsPerSecond: 0}}, sink: lake}
  - {name: to_broken, source: {format: rate}, sink: broken}
  - {name: bad_select, source: {format: rate}, select: [nope(value) AS x], sink: lake}
  - {name: undeclared, source: {format: rate}, sink: nowhere}
)", &shape);
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(shape.error_class(), errors::kInvalidPipeline);
  EXPECT_NE(shape.message().find("flows[0].trigr: unknown key"), std::string_view::npos) << shape.ToString();
  EXPECT_NE(shape.message().find("sinks.broken.tabel: unknown key"), std::string_view::npos) << shape.ToString();
  std::vector<std::string> kept;
  for (const FlowSpec& flow : spec->flows) kept.push_back(flow.name);
  EXPECT_EQ(kept, (std::vector<std::string>{"slow", "bad_select", "undeclared"}));
  std::string text = Messages(ValidatePipeline(*spec, connectors::AllFormatsRegistry()));
  EXPECT_NE(text.find("option 'rowsPerSecond' must be at least 1"), std::string::npos) << text;
  EXPECT_NE(text.find("UNRESOLVED_ROUTINE: flow 'bad_select'"), std::string::npos) << text;
  EXPECT_NE(text.find("flow 'undeclared' writes to sink 'nowhere', which is not declared"), std::string::npos) << text;
  // The same file parsed for a run is refused whole.
  EXPECT_FALSE(ParsePipelineSpec("name: a\nstorage: /s\nflows: [{name: f, source: {format: rate}, sink: x, trigr: 1}]\n").ok());
  // A problem at the top level leaves nothing to check.
  Result<PipelineSpec> top = ParsePipelineSpecKeepingGoing("name: a\nflows: [{name: f, source: {format: rate}, sink: x}]\n", &shape);
  ASSERT_TRUE(top.ok());
  EXPECT_NE(shape.message().find("storage: missing"), std::string_view::npos);
  EXPECT_TRUE(top->flows.empty());
}

TEST(ValidatePipelineTest, FindsCyclesThroughDeltaTables) {
  PipelineSpec spec = ParsePipelineSpec(R"(
name: loop
storage: /s
sinks:
  x: {format: delta, table: c.s.x}
  y: {format: delta, table: c.s.y}
flows:
  - {name: x_to_y, source: {format: delta, table: c.s.x}, sink: y}
  - {name: y_to_x, source: {format: delta, table: c.s.y}, sink: x}
)").value();
  std::string text = Messages(ValidatePipeline(spec, connectors::AllFormatsRegistry()));
  EXPECT_NE(text.find("cycle"), std::string::npos) << text;
}


TEST(PipelineConnectionsTest, AnEndpointTakesItsConnectionFromTheFileThenTheCatalog) {
  testing::TempDir dir;
  Catalog catalog(LocalFileSystem(), dir.Join("warehouse"));
  ASSERT_TRUE(catalog.Create({"shared_db", "postgresql", {{"host", "catalog.example"}, {"database", "shop"}}}).ok());
  PipelineSpec spec = ParsePipelineSpec(R"(
name: p
storage: /s
warehouse: )" + dir.Join("warehouse") + R"(
connections:
  orders_db: {type: postgresql, host: db.example, port: 6543, user: loader, password: "${env:ORDERS_PASSWORD}"}
sinks:
  own: {format: postgresql, options: {connection: orders_db, dbtable: public.orders, port: 5433}}
  shared: {format: postgresql, options: {connection: shared_db, dbtable: public.t}}
  missing: {format: postgresql, options: {connection: nowhere_db, dbtable: public.t}}
flows:
  - {name: a, source: {format: rate}, sink: own}
)").value();
  auto own = spec.ResolvedOptions(spec.sinks.at("own"));
  ASSERT_TRUE(own.ok()) << own.status().ToString();
  EXPECT_EQ(*own, (std::map<std::string, std::string>{{"host", "db.example"},
                                                      {"port", "5433"},
                                                      {"user", "loader"},
                                                      {"password", "${env:ORDERS_PASSWORD}"},
                                                      {"dbtable", "public.orders"}}));
  auto shared = spec.ResolvedOptions(spec.sinks.at("shared"));
  ASSERT_TRUE(shared.ok()) << shared.status().ToString();
  EXPECT_EQ(shared->at("host"), "catalog.example");
  EXPECT_EQ(shared->at("database"), "shop");
  EXPECT_EQ(spec.ResolvedOptions(spec.sinks.at("missing")).status().error_class(), errors::kConnectionNotFound);
}

TEST(PipelineConnectionsTest, ALiteralSecretInTheFileIsAProblem) {
  PipelineSpec spec = ParsePipelineSpec(R"(
name: p
storage: /s
connections:
  leaky: {type: postgresql, host: h, password: hunter2}
flows:
  - {name: a, source: {format: rate}, sink: out}
sinks:
  out: {format: memory, options: {queryName: q}}
)").value();
  std::string text = Messages(ValidatePipeline(spec, connectors::AllFormatsRegistry()));
  EXPECT_NE(text.find("CONNECTION_LITERAL_SECRET: connection 'leaky'"), std::string::npos) << text;
  EXPECT_EQ(text.find("hunter2"), std::string::npos) << text;
}

TEST(PipelineConnectionsTest, AConnectionNeedsAType) {
  Status status = ParsePipelineSpec("name: p\nstorage: /s\nconnections:\n  db: {host: h}\nflows: []\n").status();
  EXPECT_NE(status.ToString().find("connections.db.type: missing"), std::string::npos) << status.ToString();
}

}  // namespace
}  // namespace sluice::pipeline
