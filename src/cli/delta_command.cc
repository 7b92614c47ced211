// `sluice delta history|describe|show PATH`: looking at a Delta table's history, metadata and rows.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/row_printer.h"
#include "cli/warehouse.h"
#include "sluice/core/builder.h"
#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "sluice/delta/log.h"
#include "sluice/delta/scan.h"
#include "sluice/delta/snapshot.h"

namespace sluice::cli {
namespace {

struct DeltaOptions {
  std::string table;
  int64_t version = -1;
  int64_t limit = 20;
  std::vector<std::string> columns;
  std::string where;
  std::string format = "table";
};

void Print(const std::string& text) { std::fwrite(text.data(), 1, text.size(), stdout); }

std::string MapText(const delta::StringMap& map) {
  std::string out = "{";
  for (const auto& [key, value] : map) {
    if (out.size() > 1) out += ", ";
    out += key + "=" + value;
  }
  return out + "}";
}

// One line per version, newest first, like Spark's DESCRIBE HISTORY.
Status RunHistory(const DeltaOptions& options) {
  auto fs = LocalFileSystem();
  SLUICE_ASSIGN_OR_RETURN(delta::LogListing listing, delta::ListLog(*fs, options.table));
  if (listing.commit_versions.empty()) {
    return Status::Error(errors::kDeltaTableNotFound, fmt::format("no Delta commits under '{}'", options.table));
  }
  // A hole after the latest checkpoint is DELTA_LOG_CORRUPT, found by loading the snapshot; older
  // commits are history only as far back as they are contiguous.
  SLUICE_RETURN_IF_ERROR(delta::Snapshot::Load(fs, options.table).status());
  std::string out = "version\ttimestamp\toperation\tparameters\tmetrics\tengine\n";
  int64_t printed = 0;
  for (auto it = listing.commit_versions.rbegin(); it != listing.commit_versions.rend(); ++it) {
    if (options.limit >= 0 && printed++ >= options.limit) break;
    if (it != listing.commit_versions.rbegin() && *it != *std::prev(it) - 1) break;
    SLUICE_ASSIGN_OR_RETURN(std::vector<delta::Action> actions, delta::ReadCommit(*fs, options.table, *it));
    const delta::CommitInfo* info = nullptr;
    for (const delta::Action& action : actions) {
      if ((info = std::get_if<delta::CommitInfo>(&action)) != nullptr) break;
    }
    if (info == nullptr) {
      out += fmt::format("{}\t\t\t\t\t\n", *it);
      continue;
    }
    std::string timestamp;
    if (info->timestamp) {
      Int64Builder builder(DataType::Timestamp());
      builder.Append(*info->timestamp * 1000);
      timestamp = FormatValue(*builder.Finish(), 0);
    }
    out += fmt::format("{}\t{}\t{}\t{}\t{}\t{}\n", *it, timestamp, info->operation, MapText(info->operation_parameters),
                       MapText(info->operation_metrics.value_or(delta::StringMap{})), info->engine_info.value_or(""));
  }
  Print(out);
  return Status::OK();
}

Result<delta::SnapshotPtr> Load(const DeltaOptions& options) {
  delta::SnapshotOptions snapshot_options;
  if (options.version >= 0) snapshot_options.version = options.version;
  return delta::Snapshot::Load(LocalFileSystem(), options.table, snapshot_options);
}

Status RunDescribe(const DeltaOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(delta::SnapshotPtr snapshot, Load(options));
  const delta::Protocol& protocol = snapshot->protocol();
  const delta::Metadata& metadata = snapshot->metadata();
  std::string out = fmt::format("table: {}\nversion: {}\nid: {}\n", snapshot->table_path(), snapshot->version(), metadata.id);
  if (metadata.name) out += fmt::format("name: {}\n", *metadata.name);
  if (metadata.description) out += fmt::format("description: {}\n", *metadata.description);
  out += fmt::format("protocol: reader {} / writer {}\n", protocol.min_reader_version, protocol.min_writer_version);
  if (protocol.reader_features) out += fmt::format("reader features: {}\n", fmt::join(*protocol.reader_features, ", "));
  if (protocol.writer_features) out += fmt::format("writer features: {}\n", fmt::join(*protocol.writer_features, ", "));
  out += fmt::format("partition columns: {}\n", fmt::join(metadata.partition_columns, ", "));
  out += fmt::format("properties: {}\n", MapText(metadata.configuration));
  out += fmt::format("files: {}\nsize: {} bytes\n", snapshot->files().size(), snapshot->total_size_bytes());
  out += "schema:\n";
  for (const Field& field : snapshot->schema()->fields()) {
    out += fmt::format("  {}: {}{}\n", field.name, field.type->ToString(), field.nullable ? "" : " not null");
  }
  Print(out);
  return Status::OK();
}

// Rows as `sluice parquet cat` prints them, optionally projected and filtered (files that the
// filter rules out by partition values or statistics are not read).
Status RunShow(const DeltaOptions& options) {
  SLUICE_RETURN_IF_ERROR(CheckRowFormat(options.format));
  SLUICE_ASSIGN_OR_RETURN(delta::SnapshotPtr snapshot, Load(options));
  delta::ScanOptions scan_options{.columns = options.columns};
  if (!options.where.empty()) scan_options.filter = options.where;
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<delta::TableScan> scan, delta::TableScan::Open(snapshot, scan_options));
  return PrintRows(scan->schema(), [&] { return scan->Next(); }, options.format, options.limit);
}

void AddCommand(CLI::App* parent, const std::string& name, const std::string& description,
                Status (*run)(const DeltaOptions&), bool with_version, bool with_rows) {
  auto options = std::make_shared<DeltaOptions>();
  CLI::App* command = parent->add_subcommand(name, description);
  command->add_option("PATH", options->table, "The table's directory")->required();
  if (with_version) command->add_option("--version", options->version, "Time travel: read this version");
  command->add_option("--limit", options->limit, with_rows ? "Print at most this many rows" : "Print at most this many versions")
      ->capture_default_str();
  if (with_rows) {
    command->add_option("--columns", options->columns, "Columns to print, in this order")->delimiter(',');
    command->add_option("--where", options->where, "Only rows for which this Spark SQL predicate is true");
    command->add_option("--format", options->format, "table, jsonl or csv")->capture_default_str();
  }
  command->callback([options, run, name] {
    // The file system takes absolute paths only; a table is usually named relative to here.
    options->table = AbsolutePath(options->table);
    Status status = run(*options);
    std::fflush(stdout);
    if (!status.ok()) {
      std::fprintf(stderr, "sluice delta %s: %s\n", name.c_str(), status.ToString().c_str());
      throw CLI::RuntimeError(1);
    }
  });
}

}  // namespace

void RegisterDeltaCommand(CLI::App& app) {
  CLI::App* delta = app.add_subcommand("delta", "Inspect Delta tables: history, metadata, rows");
  delta->require_subcommand(1);
  AddCommand(delta, "history", "Print the versions of the table, newest first: time, operation, parameters, metrics",
             RunHistory, false, false);
  AddCommand(delta, "describe", "Print the schema, protocol, properties, file count and size", RunDescribe, true, false);
  AddCommand(delta, "show", "Print the rows of the table (at --version)", RunShow, true, true);
}

}  // namespace sluice::cli
