// Registration of the `sluice` subcommands that live outside main.cc. Each function adds one
// subcommand to `app`; the subcommand runs from its CLI11 callback and reports failure by throwing
// CLI::RuntimeError with the exit code (after printing the error to stderr).
#pragma once

#include <functional>
#include <string>

#include "sluice/core/status.h"
#include "sluice/engine/registry.h"
#include "sluice/pipeline/change_feed_status.h"
#include "sluice/pipeline/pipeline_runner.h"
#include "sluice/pipeline/pipeline_spec.h"

namespace CLI {
class App;
}

namespace sluice::cli {

// `sluice kafka-embedded --brokers N --topic name:partitions ...`: a mock Kafka cluster in the
// foreground until SIGINT/SIGTERM; prints the bootstrap servers as the first stdout line.
void RegisterKafkaEmbeddedCommand(CLI::App& app);

// `sluice postgres-embedded --dir DIR`: a private PostgreSQL server in the foreground until
// SIGINT/SIGTERM; prints a libpq connection string as the first stdout line.
void RegisterPostgresEmbeddedCommand(CLI::App& app);

// `sluice demo [--dir DIR]`: a short end-to-end run on the embedded services.
void RegisterDemoCommand(CLI::App& app);
// The foreachBatch functions of the demo pipeline (`demo_summary`), so that `sluice run` and
// `sluice validate` take the pipeline file the demo leaves behind.
Status RegisterDemoFunctions(engine::Registry* registry);

// `sluice parquet schema|meta|cat FILE`: the schema, the metadata (row groups, column chunks,
// encodings, codecs, sizes, statistics) or the rows (--columns, --limit, --format
// table|jsonl|csv) of a Parquet file.
void RegisterParquetCommand(CLI::App& app);

// `sluice delta history|describe|show PATH`: a Delta table's versions (time, operation,
// parameters, metrics), its metadata (schema, protocol, properties, files, size) or its rows
// (--version, --limit).
void RegisterDeltaCommand(CLI::App& app);

// `sluice cdf check|set-replica-identity|start|stop|status`: the PostgreSQL change feed of a
// schema into Delta history tables (docs/change-feed.md).
void RegisterCdfCommand(CLI::App& app);

// `sluice connection create|list|describe|delete [--warehouse DIR]`: the named connections kept in
// the warehouse's catalog (docs/connections.md).
void RegisterConnectionCommand(CLI::App& app);

// `sluice copy --from SPEC --to SPEC [--warehouse DIR]`: a one-off copy, such as a PostgreSQL query
// into a Delta table of the warehouse (docs/batch.md).
void RegisterCopyCommand(CLI::App& app);

// `sluice run FILE [--flow NAME...] [--full-refresh NAME...|--full-refresh-all] [--metrics-port N]`,
// `sluice validate FILE` and `sluice status FILE`.
void RegisterPipelineCommands(CLI::App& app);

// `sluice events FILE | --warehouse DIR [--stream NAME] [--flow F] [--level L] [--type T] [--follow]
// [--json]`: an event log, pretty-printed or as JSON lines.
void RegisterEventsCommand(CLI::App& app);

// `sluice help [COMMAND...]`, `sluice completion bash|zsh|fish` and `sluice man`, from the commands
// `app` has.
void RegisterHelpCommands(CLI::App& app);

// `sluice stream create FILE|get NAME|list|delete NAME|run NAME [--warehouse DIR]`: the streams
// of a warehouse's catalog (docs/streams.md).
void RegisterStreamCommand(CLI::App& app);

// `sluice serve [--warehouse DIR] [--metrics-port N]`: every stream of the catalog, run and
// followed (pipeline::CatalogServer) until SIGINT/SIGTERM.
void RegisterServeCommand(CLI::App& app);

// Runs a pipeline's flows in the foreground as `sluice run` does: a progress line on a terminal,
// SIGINT/SIGTERM stop after the batches in progress, optional metrics endpoint; throws
// CLI::RuntimeError (exit 2: invalid pipeline, 1: a failure) after printing the error. When
// `should_stop` is given it is asked every half second, and the run stops (after the batches in
// progress) once it returns true; RunInForeground then returns true, and false otherwise.
bool RunInForeground(const pipeline::PipelineSpec& spec, pipeline::RunOptions options, int metrics_port,
                     const std::string& metrics_address, const std::function<bool()>& should_stop = nullptr);

// A change feed's status (status.json) for people, as `sluice cdf status` and `sluice status`
// print it: the slot's line (and the feed's error), then a table of its source tables, each
// with its history table, status, rows, committed LSN, last write and a note (why it is skipped
// or failed, or that its updates carry only the key).
std::string ChangeFeedStatusText(const pipeline::ChangeFeedStatusView& view);

// The registry commands use: the built-in formats, every connector's and the demo's functions,
// registered once.
engine::Registry& CommandRegistry();

// A pipeline file, parsed (FILE_NOT_FOUND, INVALID_PIPELINE), with the plugin formats it names
// loaded. A relative storage or warehouse is taken from the file's directory. With `shape`, the
// parse keeps going (pipeline::ParsePipelineSpecKeepingGoing): the
// problems of shape go to `*shape` and the parts that parsed are returned.
Result<pipeline::PipelineSpec> LoadPipelineFile(const std::string& path, Status* shape = nullptr);

}  // namespace sluice::cli
