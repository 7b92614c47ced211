// A pipeline file: what flows run, from which sources, through which filters and expectations,
// into which sinks. Parsing checks the file's shape; ValidatePipeline checks everything else that
// can be checked without touching data (formats, options, expressions, references, the graph),
// so that `sluice validate` lists every problem at once.
//
//   name: orders
//   storage: /var/lib/sluice/orders          # checkpoints and the event log
//   warehouse: /var/lib/sluice/warehouse     # catalog.schema.table -> <warehouse>/catalog/schema/table
//   sinks:
//     lake: {format: delta, table: main.sales.orders}
//   flows:
//     - name: generate
//       source: {format: rate, options: {rowsPerSecond: 100}}
//       where: value % 10 <> 3
//       select: [timestamp, value, value * 2 AS doubled]
//       expectations:
//         - {name: non_negative, expect_or_fail: value >= 0}
//         - {name: not_seven, expect_or_drop: value % 10 <> 7}
//       sink: lake
//       trigger: {kind: processing_time, interval: 1 second}
//       output_mode: append
//
// All functions are thread-safe.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/status.h"
#include "sluice/engine/registry.h"
#include "sluice/engine/streaming_query.h"
#include "sluice/expr/expression.h"
#include "sluice/formats/decoder.h"
#include "sluice/pipeline/catalog.h"

namespace sluice::connectors {
struct ChangeFeedConfig;
}  // namespace sluice::connectors

namespace sluice::pipeline {

// A source or a sink: a format and its options. `table` (catalog.schema.table) names a Delta
// table in the warehouse and becomes the `path` option of the delta format.
struct Endpoint {
  std::string format;
  std::map<std::string, std::string> options;
  std::optional<std::string> table;
};

enum class ExpectationAction {
  kWarn,  // `expect`: count the rows that fail, keep them
  kDrop,  // `expect_or_drop`: drop the rows that fail
  kFail,  // `expect_or_fail`: stop the flow when a row fails
};

struct Expectation {
  std::string name;
  std::string condition;  // a SQL boolean expression
  ExpectationAction action = ExpectationAction::kWarn;
};

struct FlowSpec {
  std::string name;
  // A flow may be one SELECT statement instead of source, where and select (docs/sql.md):
  // `SELECT ... FROM STREAM(catalog.schema.table) [WHERE] [GROUP BY] [HAVING]`. Its source is then
  // that Delta table read incrementally (`source` holds it, as if written out); with a bare
  // `FROM catalog.schema.table`, the table's snapshot read whole, once (`reads_whole`).
  std::optional<std::string> sql;
  bool reads_whole = false;
  // A `materialized_views:` entry (docs/sql.md): named catalog.schema.table, writing the Delta
  // table of that name through a sink of that name, complete when it aggregates.
  bool materialized_view = false;
  Endpoint source;
  std::optional<std::string> where;
  std::vector<std::string> select;  // empty: every column
  // `dedup: [columns]`: Spark's dropDuplicates over the rows `select` gives, before the
  // expectations: a row whose key an earlier row had is dropped (the keys kept in the checkpoint).
  std::vector<std::string> dedup;
  std::vector<Expectation> expectations;
  std::string sink;  // the name of an entry of PipelineSpec::sinks
  std::string trigger = "processing_time";
  std::string trigger_interval;  // empty: the trigger's default
  std::string output_mode = "append";
  // Empty: <storage>/checkpoints/<flow name>.
  std::string checkpoint;
  // What the flow does when its Delta source is rewritten (DELTA_SOURCE_DATA_DELETED: a change
  // feed re-snapshotted the history table it reads, an overwrite): "reset" starts the flow over
  // (a full refresh of it and of the table it writes), "fail" fails it. Empty: reset for a change
  // feed's history table, fail for any other table.
  std::string on_source_reset;
};

// A stream: Kafka topics ingested into a Delta ingestion table (ingestion_sink.h), run by
// `sluice run` beside the flows:
//
//   streams:
//     - name: main.raw.orders                      # catalog.schema.stream
//       source: {format: kafka, options: {bootstrap_servers: "k:9092", subscribe: orders}}
//       schema_config:
//         value: {format: json, schema: '{"type":"object","properties":{...}}'}
//         key: {format: protobuf, schema: 'syntax = "proto3"; ...', message_name: shop.Key}
//       record_type_filter: value.kind = 'order'
//       excluded_columns: [value.card_number]
//       ingestion_config: {table: main.raw.orders, backfill_source: main.history.orders,
//                          deduplication_columns: [value.id]}
//       trigger: available_now
struct StreamSpec {
  std::string name;
  Endpoint source;
  std::optional<formats::DecoderSpec> key_schema;
  std::optional<formats::DecoderSpec> value_schema;
  std::optional<std::string> record_type_filter;
  std::vector<std::string> excluded_columns;
  std::string table;  // catalog.schema.table of the ingestion table
  // ingestion_config's backfill (ingestion_sink.h): a Delta table catalog.schema.table merged once,
  // deduplicated on these columns (empty: key, value, stream_record_timestamp), when the overlap
  // is reached or the longest wait has passed (durations; empty: 1 hour and 2 days).
  std::optional<std::string> backfill_source;
  std::vector<std::string> deduplication_columns;
  std::string backfill_overlap;
  std::string backfill_max_wait;
  std::string trigger = "processing_time";
  std::string trigger_interval;
  // `scale: {group: true, group_id: ...}`: run by a workers group, every process that runs it one
  // member of the Kafka consumer group `group_id` (default `sluice-<name>`; give another when two
  // warehouses run a stream of one name against one cluster) (group_ingestion.h,
  // docs/scale-out.md).
  bool workers_group = false;
  std::string workers_group_id;
  // The consumer group of a stream in a workers group.
  std::string WorkersGroupId() const { return workers_group_id.empty() ? "sluice-" + name : workers_group_id; }
};

// A PostgreSQL change feed (docs/change-feed.md) run by `sluice run` beside the flows: every
// change of the tables of `schema` appended to Delta history tables `lb_<table>_history` in the
// warehouse's `target` catalog.schema, which flows of the pipeline may read as Delta streams:
//
//   change_feeds:
//     - name: shop_changes
//       connection: shop_db          # or host, port, user, password, database, sslmode, ...
//       schema: public
//       target: main.cdc
//       flush_interval: 1 second     # and slot_name, publication_name
struct ChangeFeedSpec {
  std::string name;
  // Every other key of the entry, named as connectors::ChangeFeedOptionSpecs() names them, and
  // `connection`.
  std::map<std::string, std::string> options;
};

struct PipelineSpec;

// Hands the spec's `object_stores` to the storage layer (storage::ConfigureObjectStore), checking
// each: INVALID_STORAGE_URI, UNRESOLVED_SECRET or CONNECTION_LITERAL_SECRET naming the entry.
Status ConfigureObjectStores(const PipelineSpec& spec);

struct PipelineSpec {
  std::string name;
  std::string storage;
  std::string warehouse;
  // `sql: {ansi: true|false}`: how every expression of the pipeline (where, select, expectations,
  // record_type_filter) is typed and evaluated; ANSI by default, as in Spark 4.
  expr::SqlOptions sql;
  // `state: {store: memory|rocksdb}`: where every flow with state (an aggregation, a
  // deduplication) keeps it; memory by default, rocksdb for state larger than memory.
  engine::StateStoreKind state_store = engine::StateStoreKind::kMemory;
  // Connections of this file (`connections: {name: {type: postgresql, host: ..., ...}}`); an
  // endpoint's `connection: NAME` option names one of these, or else one of the warehouse's
  // catalog (catalog.h).
  std::map<std::string, Connection> connections;
  // `object_stores: {s3://bucket[/prefix]: {endpoint: ..., region: ..., ...}}`: the options of the
  // object stores the pipeline's paths name (docs/storage.md). ConfigureObjectStores applies them.
  std::map<std::string, std::map<std::string, std::string>> object_stores;
  std::map<std::string, Endpoint> sinks;
  std::vector<FlowSpec> flows;
  std::vector<StreamSpec> streams;
  std::vector<ChangeFeedSpec> change_feeds;
  // `libraries: [transformations/*.py]`: Python files (glob patterns, relative to the pipeline
  // file) whose decorators declare more tables, flows and sinks (docs/python.md). A pipeline with
  // libraries runs in Python (`python -m sluice run FILE`, which `sluice run` hands it to).
  std::vector<std::string> libraries;

  // The flow's checkpoint directory: its `checkpoint`, else its sink's `checkpointLocation` option
  // (the query's checkpoint, as Spark's writeStream names it), else <storage>/checkpoints/<flow>.
  std::string CheckpointOf(const FlowSpec& flow) const;
  // The checkpoint a flow has when neither it nor its sink names one: <storage>/checkpoints/<flow>.
  std::string DefaultCheckpointOf(const FlowSpec& flow) const;
  // <storage>/checkpoints/streams/<stream name>.
  std::string CheckpointOf(const StreamSpec& stream) const;
  // <warehouse>/catalog/schema/table; INVALID_PIPELINE unless `table` has three non-empty parts.
  Result<std::string> TablePath(std::string_view table) const;
  // The endpoint's options with a `table` resolved into `path` and a `connection` expanded into
  // its fields (explicit options win); CONNECTION_NOT_FOUND and the catalog's errors otherwise.
  Result<std::map<std::string, std::string>> ResolvedOptions(const Endpoint& endpoint) const;
  // The feed's configuration: its connection expanded, the warehouse made absolute, its options
  // checked (CDF_INVALID_OPTIONS, CONNECTION_NOT_FOUND, UNRESOLVED_SECRET ...) and a target required.
  Result<connectors::ChangeFeedConfig> ChangeFeedConfigOf(const ChangeFeedSpec& feed) const;
};

// One stream definition on its own (the map of a `streams:` entry), as `sluice stream create`
// takes it; INVALID_PIPELINE listing every problem of shape.
Result<StreamSpec> ParseStreamSpec(std::string_view yaml);
// One change feed definition (the YAML of one `change_feeds:` entry), as `sluice cdf create` takes
// it. INVALID_PIPELINE listing every problem of shape.
Result<ChangeFeedSpec> ParseChangeFeedSpec(std::string_view yaml);

// Sets `checkpointLocation` to the flow's checkpoint when the sink format declares that option
// (as Spark's sinks do) and the pipeline file does not give it: a flow's checkpoint is the
// pipeline's business, not something to repeat in every sink.
void AddCheckpointLocation(std::span<const OptionSpec> sink_options, const std::string& checkpoint,
                           std::map<std::string, std::string>* options);

// Sets `upsertkey` to the grouping keys of an aggregating flow in update mode when the sink
// format declares that option (the PostgreSQL sink) and the pipeline file does not give it: each
// group is then one row of the target table, upserted as it changes (and the key is the table's
// primary key when the sink creates it).
void AddUpsertKey(std::span<const OptionSpec> sink_options, const FlowSpec& flow,
                  std::map<std::string, std::string>* options);

// INVALID_PIPELINE listing every problem of shape (not YAML, a missing or misspelled key, a value
// of the wrong kind), each with its place in the file ("flows[1].source.format").
Result<PipelineSpec> ParsePipelineSpec(std::string_view yaml);
// Parses as ParsePipelineSpec does but keeps going for `sluice validate`, which reports every
// problem at once: `*shape` receives the problems of shape (OK when there are none), and the spec
// holds the parts that parsed cleanly — the flows, sinks, streams and change feeds with a problem
// of shape are left out (and flows writing to a sink left out), nothing is kept after a problem at
// the top level — so that ValidatePipeline can check the rest. Text that is not YAML is an error.
Result<PipelineSpec> ParsePipelineSpecKeepingGoing(std::string_view yaml, Status* shape);

// A relative `storage` or `warehouse` of the pipeline file at `file_path` made absolute: beside
// the file, as `sluice` and the Python runner take them.
void PlaceBesideFile(const std::string& file_path, PipelineSpec* spec);

// Every problem found, empty when the pipeline is valid: unknown source or sink formats, invalid
// options (the formats' own error classes), expressions that do not parse, unknown triggers and
// output modes, flows naming a sink that is not declared, duplicate flow names or checkpoints,
// cycles of flows through Delta tables, change feeds with invalid options, duplicate names or
// slots, and sinks writing into a change feed's history tables.
std::vector<Status> ValidatePipeline(const PipelineSpec& spec, const engine::Registry& registry);

// OK when `problems` is empty, else INVALID_PIPELINE listing them under "N problem(s) in <what>:",
// one per line (the catalogs' refusal of a definition `sluice validate` would refuse).
Status ProblemsOf(std::string_view what, const std::vector<Status>& problems);

}  // namespace sluice::pipeline
