// `sluice delta history|describe|show PATH`: looking at a Delta table's history, metadata and rows;
// `sluice delta update|delete|merge PATH`: changing its rows.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/row_printer.h"
#include "cli/warehouse.h"
#include "sluice/core/builder.h"
#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/json_text.h"
#include "sluice/delta/alter.h"
#include "sluice/delta/dml.h"
#include "sluice/delta/log.h"
#include "sluice/delta/maintenance.h"
#include "sluice/delta/scan.h"
#include "sluice/delta/snapshot.h"
#include "sluice/expr/dml.h"
#include "sluice/parquet/reader.h"
#include "sluice/storage/file_systems.h"

namespace sluice::cli {
namespace {

struct DeltaOptions {
  std::string table;
  std::string warehouse;  // where catalog.schema.table names live
  int64_t version = -1;
  int64_t limit = 20;
  std::vector<std::string> columns;
  std::string where;
  RowPrinting rows;  // show
  bool json = false;  // history: one JSON object per version; describe: one object
};

void Print(const std::string& text) { std::fwrite(text.data(), 1, text.size(), stdout); }

std::string MapJson(const delta::StringMap& map) {
  std::string out;
  AppendJsonStringMap(&out, map);
  return out;
}

std::string MapText(const delta::StringMap& map) {
  std::string out = "{";
  for (const auto& [key, value] : map) {
    if (out.size() > 1) out += ", ";
    out += key + "=" + value;
  }
  return out + "}";
}

// One row per version, newest first, like Spark's DESCRIBE HISTORY: a table, or JSON lines.
Status RunHistory(const DeltaOptions& options) {
  auto fs = storage::DefaultFileSystem();
  SLUICE_ASSIGN_OR_RETURN(delta::LogListing listing, delta::ListLog(*fs, options.table));
  if (listing.commit_versions.empty()) {
    return Status::Error(errors::kDeltaTableNotFound, fmt::format("no Delta commits under '{}'", options.table));
  }
  // A hole after the latest checkpoint is DELTA_LOG_CORRUPT, found by loading the snapshot; older
  // commits are history only as far back as they are contiguous.
  SLUICE_RETURN_IF_ERROR(delta::Snapshot::Load(fs, options.table).status());
  std::string out;
  std::vector<std::vector<std::string>> table;  // the text form: a table in `delta show`'s style
  int64_t printed = 0;
  for (auto it = listing.commit_versions.rbegin(); it != listing.commit_versions.rend(); ++it) {
    if (options.limit >= 0 && printed++ >= options.limit) break;
    if (it != listing.commit_versions.rbegin() && *it != *std::prev(it) - 1) break;
    SLUICE_ASSIGN_OR_RETURN(std::vector<delta::Action> actions, delta::ReadCommit(*fs, options.table, *it));
    const delta::CommitInfo* info = nullptr;
    for (const delta::Action& action : actions) {
      if ((info = std::get_if<delta::CommitInfo>(&action)) != nullptr) break;
    }
    if (info == nullptr && options.json) {
      out += fmt::format("{{\"version\":{}}}\n", *it);
      continue;
    }
    if (info == nullptr) {
      table.push_back({std::to_string(*it), "NULL", "NULL", "NULL", "NULL", "NULL"});
      continue;
    }
    const std::string timestamp = info->timestamp ? TimestampText(*info->timestamp * 1000) : "";
    if (options.json) {
      // Spark's DESCRIBE HISTORY columns.
      out += fmt::format("{{\"version\":{},\"timestamp\":{},\"operation\":{},\"operationParameters\":{},"
                         "\"operationMetrics\":{},\"engineInfo\":{}}}\n",
                         *it, info->timestamp ? JsonString(timestamp) : "null", JsonString(info->operation),
                         MapJson(info->operation_parameters),
                         MapJson(info->operation_metrics.value_or(delta::StringMap{})),
                         info->engine_info ? JsonString(*info->engine_info) : "null");
      continue;
    }
    table.push_back({std::to_string(*it), timestamp, info->operation, MapText(info->operation_parameters),
                     MapText(info->operation_metrics.value_or(delta::StringMap{})), info->engine_info.value_or("")});
  }
  if (!options.json) {
    out = TextTable({"version", "timestamp", "operation", "operationParameters", "operationMetrics", "engineInfo"},
                    table);
  }
  Print(out);
  return Status::OK();
}

Result<delta::SnapshotPtr> Load(const DeltaOptions& options) {
  delta::SnapshotOptions snapshot_options;
  if (options.version >= 0) snapshot_options.version = options.version;
  return delta::Snapshot::Load(storage::DefaultFileSystem(), options.table, snapshot_options);
}

Status RunDescribe(const DeltaOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(delta::SnapshotPtr snapshot, Load(options));
  const delta::Protocol& protocol = snapshot->protocol();
  const delta::Metadata& metadata = snapshot->metadata();
  // From the files' statistics: unknown when a file has none.
  const std::optional<int64_t> records = snapshot->num_records();
  if (options.json) {
    auto list = [](const std::vector<std::string>& names) {
      std::string out;
      AppendJsonStringArray(&out, names);
      return out;
    };
    auto features = [&](const std::optional<std::vector<std::string>>& names) {
      return names ? list(*names) : std::string("null");
    };
    Print(fmt::format("{{\"table\":{},\"version\":{},\"id\":{},\"name\":{},\"description\":{},"
                      "\"protocol\":{{\"minReaderVersion\":{},\"minWriterVersion\":{},\"readerFeatures\":{},"
                      "\"writerFeatures\":{}}},\"partitionColumns\":{},\"properties\":{},\"numFiles\":{},"
                      "\"sizeInBytes\":{},\"numRecords\":{},\"schema\":{}}}\n",
                      JsonString(snapshot->table_path()), snapshot->version(), JsonString(metadata.id),
                      metadata.name ? JsonString(*metadata.name) : "null",
                      metadata.description ? JsonString(*metadata.description) : "null", protocol.min_reader_version,
                      protocol.min_writer_version, features(protocol.reader_features),
                      features(protocol.writer_features), list(metadata.partition_columns),
                      MapJson(metadata.configuration), snapshot->files().size(), snapshot->total_size_bytes(),
                      records ? std::to_string(*records) : "null", snapshot->schema()->ToJson()));
    return Status::OK();
  }
  std::string out = fmt::format("table: {}\nversion: {}\nid: {}\n", snapshot->table_path(), snapshot->version(), metadata.id);
  if (metadata.name) out += fmt::format("name: {}\n", *metadata.name);
  if (metadata.description) out += fmt::format("description: {}\n", *metadata.description);
  out += fmt::format("protocol: reader {} / writer {}\n", protocol.min_reader_version, protocol.min_writer_version);
  if (protocol.reader_features) out += fmt::format("reader features: {}\n", fmt::join(*protocol.reader_features, ", "));
  if (protocol.writer_features) out += fmt::format("writer features: {}\n", fmt::join(*protocol.writer_features, ", "));
  out += fmt::format("partition columns: {}\n", fmt::join(metadata.partition_columns, ", "));
  out += fmt::format("properties: {}\n", MapText(metadata.configuration));
  out += fmt::format("files: {}\nsize: {} bytes\nrows: {}\n", snapshot->files().size(), snapshot->total_size_bytes(),
                     records ? std::to_string(*records) : "unknown (a file has no statistics)");
  out += "schema:\n";
  for (const Field& field : snapshot->schema()->fields()) {
    out += fmt::format("  {}: {}{}\n", field.name, field.type->ToString(), field.nullable ? "" : " not null");
  }
  Print(out);
  return Status::OK();
}

// The top-level column a dot path starts with ("value.user.id" -> value; "`a.b`.c" -> a.b).
std::string TopLevelColumn(const std::string& path) {
  if (path.starts_with('`')) {
    const size_t close = path.find('`', 1);
    return close == std::string::npos ? path : path.substr(1, close - 1);
  }
  return path.substr(0, path.find('.'));
}

// Rows as `sluice parquet cat` prints them, optionally projected (`--columns` names columns or dot
// paths into structs) and filtered (files that the filter rules out by partition values or
// statistics are not read).
Status RunShow(const DeltaOptions& options) {
  SLUICE_RETURN_IF_ERROR(CheckRowPrinting(options.rows));
  SLUICE_ASSIGN_OR_RETURN(delta::SnapshotPtr snapshot, Load(options));
  // Rows may be sorted by columns that are not printed: the projection carries them until sorted.
  std::vector<std::string> carried = options.columns;
  if (!carried.empty()) {
    for (const std::string& key : options.rows.order_by) {
      if (std::find(carried.begin(), carried.end(), key) == carried.end()) carried.push_back(key);
    }
  }
  delta::ScanOptions scan_options;
  for (const std::string& path : carried) {
    std::string column = TopLevelColumn(path);
    if (std::find(scan_options.columns.begin(), scan_options.columns.end(), column) == scan_options.columns.end()) {
      scan_options.columns.push_back(std::move(column));
    }
  }
  if (!options.where.empty()) scan_options.filter = options.where;
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<delta::TableScan> scan, delta::TableScan::Open(snapshot, scan_options));
  // The table's rows are known from its statistics when no filter leaves some out.
  const std::optional<int64_t> total = options.where.empty() ? snapshot->num_records() : std::nullopt;
  if (options.columns.empty()) return PrintRows(scan->schema(), [&] { return scan->Next(); }, options.rows, total);
  // Each printed column is its path's value, named by the path.
  auto project = [](const BatchPtr& batch, const std::vector<std::string>& paths) -> Result<BatchPtr> {
    std::vector<Field> fields;
    std::vector<ColumnPtr> columns;
    for (const std::string& path : paths) {
      SLUICE_ASSIGN_OR_RETURN(ColumnPtr column, batch->ColumnAt(path));
      fields.push_back(Field{path, column->type, true});
      columns.push_back(std::move(column));
    }
    SLUICE_ASSIGN_OR_RETURN(TypePtr schema, DataType::Struct(std::move(fields)));
    return RecordBatch::Make(std::move(schema), std::move(columns), batch->num_rows());
  };
  SLUICE_ASSIGN_OR_RETURN(BatchPtr carried_shape, project(RecordBatch::Empty(scan->schema()), carried));
  std::function<Result<BatchPtr>()> rows = [&]() -> Result<BatchPtr> {
    SLUICE_ASSIGN_OR_RETURN(BatchPtr batch, scan->Next());
    if (batch == nullptr) return batch;
    return project(batch, carried);
  };
  RowPrinting printing = options.rows;
  if (!printing.order_by.empty()) {
    SLUICE_ASSIGN_OR_RETURN(rows, SortedRows(carried_shape->schema(), rows, printing.order_by));
    printing.order_by.clear();
  }
  // The printed columns are the carried ones' first.
  auto printed = [&](const BatchPtr& batch) -> Result<BatchPtr> {
    const size_t n = options.columns.size();
    std::vector<Field> fields(batch->schema()->fields().begin(), batch->schema()->fields().begin() + n);
    std::vector<ColumnPtr> columns;
    for (size_t i = 0; i < n; ++i) columns.push_back(batch->column(static_cast<int>(i)));
    SLUICE_ASSIGN_OR_RETURN(TypePtr schema, DataType::Struct(std::move(fields)));
    return RecordBatch::Make(std::move(schema), std::move(columns), batch->num_rows());
  };
  SLUICE_ASSIGN_OR_RETURN(BatchPtr shape, printed(carried_shape));
  return PrintRows(shape->schema(), [&]() -> Result<BatchPtr> {
    SLUICE_ASSIGN_OR_RETURN(BatchPtr batch, rows());
    if (batch == nullptr) return batch;
    return printed(batch);
  }, printing, total);
}

struct DmlOptions {
  std::string table;
  std::string warehouse;  // where catalog.schema.table names live
  std::vector<std::string> set;   // update: `col = expr`
  std::string where;              // update, delete
  std::string source;             // merge: a Delta table or a Parquet file
  std::string on;                 // merge
  std::vector<std::string> when;  // merge: `MATCHED [AND c] THEN action`, ...
  std::string target_alias = "t";
  std::string source_alias = "s";
  bool schema_evolution = false;
};

std::string Summary(const delta::DmlResult& result) {
  auto count = [](int64_t n, std::string_view one) { return fmt::format("{} {}{}", n, one, n == 1 ? "" : "s"); };
  std::string vectors;
  if (result.num_deletion_vectors_added > 0) {
    vectors = "; " + count(result.num_deletion_vectors_added, "file") + " marked by deletion vectors";
  }
  return fmt::format("version {}: {} updated, {} deleted, {} inserted ({} copied; {} removed, {} added{})\n",
                     result.version, count(result.num_rows_updated, "row"), result.num_rows_deleted,
                     result.num_rows_inserted, count(result.num_rows_copied, "row"),
                     count(result.num_files_removed, "file"), result.num_files_added, vectors);
}

// A subcommand's end: what it printed flushed, and a failure on stderr with exit code 1.
void ExitOnFailure(const std::string& name, const Status& status) {
  std::fflush(stdout);
  if (!status.ok()) {
    std::fprintf(stderr, "sluice delta %s: %s\n", name.c_str(), status.ToString().c_str());
    throw CLI::RuntimeError(1);
  }
}

Result<expr::Expression> ParseOption(const std::string& flag, const std::string& text) {
  Result<expr::Expression> parsed = expr::Expression::Parse(text);
  if (!parsed.ok()) return parsed.status().WithContext(flag);
  return parsed;
}

Status RunUpdate(const DmlOptions& options) {
  delta::UpdateSpec spec{.target_alias = options.target_alias};
  for (const std::string& assignment : options.set) {
    // `--set 'col = expr'` is parsed as the SET list of an UPDATE.
    Result<expr::DmlStatement> parsed = expr::ParseDml("UPDATE t SET " + assignment);
    if (parsed.ok() && std::get<expr::UpdateStatement>(*parsed).where) {
      parsed = Status::Error(errors::kParseSyntaxError, "a WHERE belongs in --where");
    }
    if (!parsed.ok()) return parsed.status().WithContext(fmt::format("--set '{}'", assignment));
    expr::DmlStatement& statement = *parsed;
    for (expr::Assignment& a : std::get<expr::UpdateStatement>(statement).assignments) spec.assignments.push_back(std::move(a));
  }
  if (!options.where.empty()) {
    SLUICE_ASSIGN_OR_RETURN(spec.where, ParseOption("--where", options.where));
  }
  SLUICE_ASSIGN_OR_RETURN(delta::DmlResult result, delta::UpdateTable(storage::DefaultFileSystem(), options.table, spec));
  Print(Summary(result));
  return Status::OK();
}

Status RunDelete(const DmlOptions& options) {
  delta::DeleteSpec spec{.target_alias = options.target_alias};
  SLUICE_ASSIGN_OR_RETURN(spec.where, ParseOption("--where", options.where));
  SLUICE_ASSIGN_OR_RETURN(delta::DmlResult result, delta::DeleteFromTable(storage::DefaultFileSystem(), options.table, spec));
  Print(Summary(result));
  return Status::OK();
}

// The rows of a Delta table (a directory with _delta_log) or of a Parquet file.
Result<std::vector<BatchPtr>> ReadSource(const std::string& path) {
  auto fs = storage::DefaultFileSystem();
  std::vector<BatchPtr> batches;
  SLUICE_ASSIGN_OR_RETURN(bool is_table, fs->Exists(path + "/_delta_log"));
  if (is_table) {
    SLUICE_ASSIGN_OR_RETURN(delta::SnapshotPtr snapshot, delta::Snapshot::Load(fs, path));
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<delta::TableScan> scan, delta::TableScan::Open(snapshot));
    while (true) {
      SLUICE_ASSIGN_OR_RETURN(BatchPtr batch, scan->Next());
      if (batch == nullptr) break;
      batches.push_back(std::move(batch));
    }
    if (batches.empty()) batches.push_back(RecordBatch::Empty(scan->schema()));
    return batches;
  }
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<parquet::ParquetReader> reader, parquet::ParquetReader::Open(*fs, path));
  SLUICE_ASSIGN_OR_RETURN(BatchPtr all, reader->ReadAll());
  batches.push_back(std::move(all));
  return batches;
}

Status RunMerge(const DmlOptions& options) {
  delta::MergeSpec spec{.target_alias = options.target_alias, .source_alias = options.source_alias,
                        .merge_schema = options.schema_evolution};
  SLUICE_ASSIGN_OR_RETURN(spec.on, ParseOption("--on", options.on));
  for (const std::string& when : options.when) {
    // Each `--when` is one clause of the statement, written without its WHEN.
    Result<expr::DmlStatement> parsed = expr::ParseDml("MERGE INTO t USING s ON true WHEN " + when);
    if (!parsed.ok()) return parsed.status().WithContext(fmt::format("--when '{}'", when));
    for (expr::MergeClause& clause : std::get<expr::MergeStatement>(*parsed).clauses) spec.clauses.push_back(std::move(clause));
  }
  SLUICE_RETURN_IF_ERROR(expr::CheckMergeClauses(spec.clauses));
  SLUICE_ASSIGN_OR_RETURN(std::vector<BatchPtr> source, ReadSource(options.source));
  SLUICE_ASSIGN_OR_RETURN(delta::DmlResult result, delta::MergeInto(storage::DefaultFileSystem(), options.table, source, spec));
  Print(Summary(result));
  return Status::OK();
}

void AddDmlCommand(CLI::App* parent, const std::string& name, const std::string& description,
                   Status (*run)(const DmlOptions&)) {
  auto options = std::make_shared<DmlOptions>();
  CLI::App* command = parent->add_subcommand(name, description);
  AddTableArguments(command, &options->table, &options->warehouse);
  if (name == "update") {
    command->add_option("--set", options->set, "An assignment `column = expression` (repeat for more columns)")
        ->required();
  }
  if (name == "update" || name == "delete") {
    auto* where = command->add_option("--where", options->where, "The rows to change: a Spark SQL predicate");
    if (name == "delete") where->required();
  }
  if (name == "merge") {
    command->add_option("--source", options->source, "The source rows: a Delta table's directory or a Parquet file")
        ->required();
    command->add_option("--on", options->on, "The merge condition, e.g. `t.id = s.id`")->required();
    command->add_option("--when", options->when,
                        "A clause without its WHEN, in order: `MATCHED [AND cond] THEN UPDATE SET * | UPDATE SET c = e, "
                        "... | DELETE`, `NOT MATCHED [AND cond] THEN INSERT * | INSERT (c, ...) VALUES (e, ...)`, "
                        "`NOT MATCHED BY SOURCE [AND cond] THEN UPDATE SET c = e, ... | DELETE`")
        ->required();
    command->add_option("--source-alias", options->source_alias, "The source's name in expressions")->capture_default_str();
    command->add_flag("--schema-evolution", options->schema_evolution,
                      "Add the source's new columns to the table (with UPDATE SET * / INSERT *)");
  }
  command->add_option("--target-alias", options->target_alias, "The table's name in expressions")->capture_default_str();
  command->callback([options, run, name] {
    ExitOnFailure(name, [&]() -> Status {
      SLUICE_ASSIGN_OR_RETURN(options->table, TablePathArgument(options->table, options->warehouse));
      if (!options->source.empty()) {
        SLUICE_ASSIGN_OR_RETURN(options->source, TablePathArgument(options->source, options->warehouse));
      }
      return run(*options);
    }());
  });
}

// What a reading command prints: its versions (history), one summary (describe) or rows (show).
enum class Prints { kVersions, kSummary, kRows };

void AddCommand(CLI::App* parent, const std::string& name, const std::string& description,
                Status (*run)(const DeltaOptions&), bool with_version, Prints prints) {
  auto options = std::make_shared<DeltaOptions>();
  CLI::App* command = parent->add_subcommand(name, description);
  AddTableArguments(command, &options->table, &options->warehouse);
  if (with_version) command->add_option("--version", options->version, "Time travel: read this version");
  if (prints == Prints::kVersions) {
    command->add_option("--limit", options->limit, "Print at most this many versions")->capture_default_str();
  }
  if (prints != Prints::kRows) {
    command->add_flag("--json", options->json,
                      prints == Prints::kVersions ? "One JSON object per version (Spark's DESCRIBE HISTORY columns)"
                                                  : "One JSON object");
  }
  if (prints == Prints::kRows) {
    command->add_option("--columns", options->columns, "Columns to print, in this order: names or dot paths into structs")
        ->delimiter(',');
    command->add_option("--where", options->where, "Only rows for which this Spark SQL predicate is true");
    AddRowPrintingOptions(command, &options->rows, "20");
  }
  command->callback([options, run, name] {
    ExitOnFailure(name, [&]() -> Status {
      SLUICE_ASSIGN_OR_RETURN(options->table, TablePathArgument(options->table, options->warehouse));
      return run(*options);
    }());
  });
}

struct MaintenanceOptions {
  std::string table;
  std::string warehouse;  // where catalog.schema.table names live
  std::string where;
  std::vector<std::string> zorder_by;
  int64_t target_file_size = 0;
  std::optional<double> retain_hours;
  bool dry_run = false;
  bool force = false;
  std::optional<int64_t> version;
  std::optional<std::string> timestamp;
};

Status RunOptimize(const MaintenanceOptions& options) {
  delta::OptimizeSpec spec{.target_file_size = options.target_file_size, .zorder_by = options.zorder_by};
  if (!options.where.empty()) {
    SLUICE_ASSIGN_OR_RETURN(spec.where, ParseOption("--where", options.where));
  }
  SLUICE_ASSIGN_OR_RETURN(delta::OptimizeResult result, delta::Optimize(storage::DefaultFileSystem(), options.table, spec));
  if (result.skipped) {
    Print(fmt::format("version {}: nothing to compact\n", result.version));
    return Status::OK();
  }
  Print(fmt::format("version {}: {} files compacted into {} ({} bytes into {}) in {} partition(s)\n", result.version,
                    result.num_files_removed, result.num_files_added, result.num_bytes_removed, result.num_bytes_added,
                    result.num_partitions_optimized));
  return Status::OK();
}

Status RunVacuum(const MaintenanceOptions& options) {
  delta::VacuumSpec spec{.retention_hours = options.retain_hours, .dry_run = options.dry_run, .force = options.force};
  SLUICE_ASSIGN_OR_RETURN(delta::VacuumResult result, delta::Vacuum(storage::DefaultFileSystem(), options.table, spec));
  std::string out = fmt::format("{} {} file(s), {} bytes\n", options.dry_run ? "would delete" : "deleted",
                                result.files.size(), result.bytes);
  if (options.dry_run) {
    for (const std::string& file : result.files) out += file + "\n";
  }
  Print(out);
  return Status::OK();
}

Status RunRestore(const MaintenanceOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(
      delta::RestoreResult result,
      delta::Restore(storage::DefaultFileSystem(), options.table, {.version = options.version, .timestamp = options.timestamp}));
  Print(fmt::format("version {}: the rows of version {} ({} file(s) restored, {} removed; {} files, {} bytes)\n",
                    result.version, result.restored_version, result.num_files_restored, result.num_files_removed,
                    result.num_files_after_restore, result.table_size_after_restore));
  return Status::OK();
}

void AddMaintenanceCommand(CLI::App* parent, const std::string& name, const std::string& description,
                           Status (*run)(const MaintenanceOptions&)) {
  auto options = std::make_shared<MaintenanceOptions>();
  CLI::App* command = parent->add_subcommand(name, description);
  AddTableArguments(command, &options->table, &options->warehouse);
  if (name == "optimize") {
    command->add_option("--where", options->where, "Only the partitions this predicate over partition columns holds for");
    command->add_option("--zorder-by", options->zorder_by,
                        "Order each partition's rows along a Z-order curve over these columns (rewrites every file)")
        ->delimiter(',');
    command->add_option("--target-file-size", options->target_file_size,
                        "Bytes to aim each file at (default: delta.targetFileSize, else 128 MiB)")
        ->check(CLI::PositiveNumber);
  }
  if (name == "vacuum") {
    command->add_option("--retain", options->retain_hours,
                        "Hours a removed file is kept (default: delta.deletedFileRetentionDuration, 1 week)")
        ->check(CLI::NonNegativeNumber);
    command->add_flag("--dry-run", options->dry_run, "List the files that would be deleted; delete nothing");
    command->add_flag("--force", options->force, "Allow a retention below delta.deletedFileRetentionDuration");
  }
  if (name == "restore") {
    CLI::Option* version = command->add_option("--version", options->version, "The version whose rows the table gets back");
    CLI::Option* timestamp = command->add_option(
        "--timestamp", options->timestamp,
        "Or the latest version committed at or before this time (yyyy-MM-dd[ HH:mm:ss[.f]][zone], UTC by default)");
    version->excludes(timestamp);
  }
  command->callback([options, run, name] {
    if (name == "restore" && !options->version && !options->timestamp) throw CLI::RequiredError("--version or --timestamp");
    ExitOnFailure(name, [&]() -> Status {
      SLUICE_ASSIGN_OR_RETURN(options->table, TablePathArgument(options->table, options->warehouse));
      return run(*options);
    }());
  });
}

// `delta alter`: one kind of change per call, as one ALTER TABLE statement makes it.
struct AlterOptions {
  std::string table;
  std::string warehouse;  // where catalog.schema.table names live
  std::vector<std::string> set;     // KEY=VALUE
  std::vector<std::string> unset;   // KEY
  bool if_exists = false;
  std::string rename_column, to;
  std::vector<std::string> drop_columns;
  std::string add_column, alter_column;  // with the attributes below
  std::string type, comment, after;
  bool first = false, drop_not_null = false;
};

// The attributes --add-column and --alter-column share: a type, a comment and a position.
Result<TypePtr> AlterType(const AlterOptions& options) {
  if (options.type.empty()) return TypePtr(nullptr);
  return ParseTypeString(options.type);
}

std::optional<delta::ColumnPosition> AlterPosition(const AlterOptions& options) {
  if (options.first) return delta::ColumnPosition{delta::ColumnPosition::Kind::kFirst, ""};
  if (!options.after.empty()) return delta::ColumnPosition{delta::ColumnPosition::Kind::kAfter, options.after};
  return std::nullopt;
}

Status RunAlter(const AlterOptions& options) {
  auto fs = storage::DefaultFileSystem();
  Result<int64_t> version = Status::OK();
  std::string what;
  if (!options.set.empty()) {
    delta::StringMap properties;
    for (const std::string& assignment : options.set) {
      const size_t equals = assignment.find('=');
      if (equals == std::string::npos || equals == 0) {
        return Status::Error(errors::kInvalidArgument, "--set takes KEY=VALUE, not '" + assignment + "'");
      }
      properties[assignment.substr(0, equals)] = assignment.substr(equals + 1);
    }
    version = delta::SetTableProperties(fs, options.table, properties);
    what = fmt::format("{} propert{} set", properties.size(), properties.size() == 1 ? "y" : "ies");
  } else if (!options.unset.empty()) {
    version = delta::UnsetTableProperties(fs, options.table, options.unset, options.if_exists);
    what = fmt::format("{} propert{} unset", options.unset.size(), options.unset.size() == 1 ? "y" : "ies");
  } else if (!options.rename_column.empty()) {
    version = delta::RenameColumn(fs, options.table, options.rename_column, options.to);
    what = fmt::format("column {} renamed to {}", options.rename_column, options.to);
  } else if (!options.drop_columns.empty()) {
    version = delta::DropColumns(fs, options.table, options.drop_columns);
    what = fmt::format("{} column(s) dropped", options.drop_columns.size());
  } else if (!options.add_column.empty()) {
    SLUICE_ASSIGN_OR_RETURN(TypePtr type, AlterType(options));
    delta::NewColumn column;
    column.path = options.add_column;
    column.type = type;
    column.comment = options.comment;
    column.position = AlterPosition(options).value_or(delta::ColumnPosition{});
    version = delta::AddColumns(fs, options.table, {column});
    what = fmt::format("column {} added", options.add_column);
  } else {
    delta::ColumnChange change;
    SLUICE_ASSIGN_OR_RETURN(change.type, AlterType(options));
    if (!options.comment.empty()) change.comment = options.comment;
    if (options.drop_not_null) change.nullable = true;
    change.position = AlterPosition(options);
    version = delta::ChangeColumn(fs, options.table, options.alter_column, change);
    what = fmt::format("column {} changed", options.alter_column);
  }
  SLUICE_RETURN_IF_ERROR(version.status());
  Print(fmt::format("version {}: {}\n", *version, what));
  return Status::OK();
}

void AddAlterCommand(CLI::App* parent) {
  auto options = std::make_shared<AlterOptions>();
  CLI::App* command = parent->add_subcommand(
      "alter", "Change the table's properties or columns without rewriting a file (one commit, as ALTER TABLE)");
  AddTableArguments(command, &options->table, &options->warehouse);
  CLI::Option* set = command->add_option("--set", options->set, "Set a table property KEY=VALUE (repeat for more)");
  CLI::Option* unset = command->add_option("--unset", options->unset, "Remove a table property (repeat for more)");
  command->add_flag("--if-exists", options->if_exists, "With --unset: a property the table lacks is no error")
      ->needs(unset);
  CLI::Option* rename = command->add_option("--rename-column", options->rename_column,
                                            "Rename this column (a dot path into structs; needs column mapping)");
  CLI::Option* to = command->add_option("--to", options->to, "The new name of --rename-column")->needs(rename);
  rename->needs(to);
  CLI::Option* drop = command->add_option("--drop-column", options->drop_columns,
                                          "Drop this column (a dot path; repeat for more; needs column mapping)");
  CLI::Option* add = command->add_option("--add-column", options->add_column,
                                         "Add this nullable column (a dot path into structs) of --type");
  CLI::Option* alter = command->add_option("--alter-column", options->alter_column,
                                           "Change this column: --type (a widening), --comment, --drop-not-null, "
                                           "--first or --after");
  const std::vector<CLI::Option*> kinds = {set, unset, rename, drop, add, alter};
  for (CLI::Option* one : kinds) {
    for (CLI::Option* other : kinds) {
      if (one != other) one->excludes(other);
    }
  }
  command->add_option("--type", options->type, "The column's type (int, decimal(10,2), ...)");
  command->add_option("--comment", options->comment, "The column's comment");
  CLI::Option* first = command->add_flag("--first", options->first, "Put the column first in its struct");
  CLI::Option* after = command->add_option("--after", options->after, "Put the column after this sibling");
  first->excludes(after);
  command->add_flag("--drop-not-null", options->drop_not_null, "With --alter-column: let the column hold nulls")
      ->needs(alter);
  command->callback([options, command] {
    if (options->set.empty() && options->unset.empty() && options->rename_column.empty() &&
        options->drop_columns.empty() && options->add_column.empty() && options->alter_column.empty()) {
      throw CLI::RequiredError("--set, --unset, --rename-column, --drop-column, --add-column or --alter-column");
    }
    const bool attributes = !options->type.empty() || !options->comment.empty() || options->first || !options->after.empty();
    if (attributes && options->add_column.empty() && options->alter_column.empty()) {
      throw CLI::RequiredError("--add-column or --alter-column (for --type, --comment, --first, --after)");
    }
    if (!options->add_column.empty() && options->type.empty()) throw CLI::RequiredError("--type (for --add-column)");
    ExitOnFailure(command->get_name(), [&]() -> Status {
      SLUICE_ASSIGN_OR_RETURN(options->table, TablePathArgument(options->table, options->warehouse));
      return RunAlter(*options);
    }());
  });
}

}  // namespace

void RegisterDeltaCommand(CLI::App& app) {
  CLI::App* delta =
      app.add_subcommand("delta", "Inspect and change Delta tables: history, metadata, rows, DML, maintenance");
  delta->require_subcommand(1);
  AddCommand(delta, "history", "Print the versions of the table, newest first: time, operation, parameters, metrics",
             RunHistory, false, Prints::kVersions);
  AddCommand(delta, "describe", "Print the schema, protocol, properties, file count and size", RunDescribe, true,
             Prints::kSummary);
  AddCommand(delta, "show", "Print the rows of the table (at --version)", RunShow, true, Prints::kRows);
  AddDmlCommand(delta, "update", "Set columns of the rows --where holds (one UPDATE commit)", RunUpdate);
  AddDmlCommand(delta, "delete", "Delete the rows --where holds (one DELETE commit; --where true for all)", RunDelete);
  AddDmlCommand(delta, "merge", "Merge a source's rows into the table (one MERGE commit, Delta's semantics)", RunMerge);
  AddMaintenanceCommand(delta, "optimize", "Compact small files into files of about the target size (one OPTIMIZE "
                        "commit; no row changes)", RunOptimize);
  AddMaintenanceCommand(delta, "vacuum", "Delete files no version within the retention period uses", RunVacuum);
  AddMaintenanceCommand(delta, "restore", "Give the table back the rows of an earlier version (one RESTORE commit)",
                        RunRestore);
  AddAlterCommand(delta);
}

}  // namespace sluice::cli
