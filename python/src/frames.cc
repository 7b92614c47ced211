// Frames, batch reads and writes, and Delta DML for the Python module. The GIL is released while
// the engine works: every call below that reads or writes drops it first.
#include <pybind11/stl.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <tuple>

#include "binding.h"
#include "sluice/connectors/register_formats.h"
#include "sluice/core/arrow_c.h"
#include "sluice/core/clock.h"
#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/file_system.h"
#include "sluice/delta/alter.h"
#include "sluice/delta/dml.h"
#include "sluice/delta/log.h"
#include "sluice/delta/maintenance.h"
#include "sluice/delta/snapshot.h"
#include "sluice/core/options.h"
#include "sluice/engine/batch_write.h"
#include "sluice/engine/checkpoint.h"
#include "sluice/expr/dml.h"
#include "sluice/expr/select.h"
#include "sluice/pipeline/catalog.h"
#include "sluice/pipeline/copy.h"
#include "sluice/pipeline/flow_operators.h"
#include "sluice/pipeline/pipeline_spec.h"
#include "sluice/storage/file_systems.h"

namespace sluice::python {
namespace {

using Options = std::map<std::string, std::string>;

void DeleteStreamCapsule(PyObject* capsule) {
  auto* stream = static_cast<ArrowArrayStream*>(PyCapsule_GetPointer(capsule, "arrow_array_stream"));
  if (stream == nullptr) {
    PyErr_Clear();
    return;
  }
  if (stream->release != nullptr) stream->release(stream);
  delete stream;
}

// The PyCapsule protocol's stream: what pyarrow.table(frame) and other Arrow libraries take.
py::object ArrowStream(const FramePtr& frame, const py::object& requested_schema) {
  if (!requested_schema.is_none()) {
    // Casting on request is optional in the protocol; the consumer casts what it gets.
  }
  auto* stream = new ArrowArrayStream;
  ExportStream(frame->schema, frame->batches, stream);
  return py::reinterpret_steal<py::object>(PyCapsule_New(stream, "arrow_array_stream", DeleteStreamCapsule));
}

// An object with __arrow_c_stream__ (a pyarrow Table or RecordBatchReader, pandas, polars ...).
FramePtr FromArrow(const py::object& data) {
  if (!py::hasattr(data, "__arrow_c_stream__")) {
    Throw(Status::Error(errors::kInvalidArgument, "the data has no __arrow_c_stream__ (the Arrow PyCapsule interface)"));
  }
  py::object capsule = data.attr("__arrow_c_stream__")();
  auto* source = static_cast<ArrowArrayStream*>(PyCapsule_GetPointer(capsule.ptr(), "arrow_array_stream"));
  if (source == nullptr) throw py::error_already_set();
  // Moved out of the capsule, as the protocol has consumers do: the capsule no longer owns it.
  ArrowArrayStream stream = *source;
  source->release = nullptr;
  auto frame = std::make_shared<Frame>();
  {
    py::gil_scoped_release nogil;
    ImportedStream imported = Check(ImportStream(&stream));
    frame->schema = std::move(imported.schema);
    frame->batches = std::move(imported.batches);
  }
  return frame;
}

expr::SqlOptions Sql(bool ansi) { return expr::SqlOptions{.ansi = ansi}; }

// The rows of `frame` through a flow's operators as one batch at the time of the call.
FramePtr RunFlowOnce(const pipeline::FlowSpec& flow, const FramePtr& frame, bool ansi) {
  engine::OperatorChain chain(
      Check(pipeline::MakeFlowOperators(flow, Sql(ansi), engine::OutputMode::kComplete)).operators);
  engine::ChainOutput output = Check(engine::RunChainOnce(chain, frame->schema, frame->batches, SystemClock()->NowMicros()));
  auto out = std::make_shared<Frame>();
  out->schema = std::move(output.schema);
  out->batches = std::move(output.batches);
  return out;
}

// where, then select (either may be empty), with a flow's meaning.
FramePtr Transform(const FramePtr& frame, const std::string& where, const std::vector<std::string>& select, bool ansi) {
  pipeline::FlowSpec flow;
  flow.name = "dataframe";
  if (!where.empty()) flow.where = where;
  flow.select = select;
  py::gil_scoped_release nogil;
  return RunFlowOnce(flow, frame, ansi);
}

std::string MakeTemporaryDirectory() {
  std::string pattern = (std::filesystem::temp_directory_path() / "sluice-read-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    Throw(Status::Error(errors::kInternalError, "cannot make a temporary directory under " +
                                                    std::filesystem::temp_directory_path().string()));
  }
  return pattern;
}

// Everything the source has now, read once as a batch query reads it.
FramePtr Read(const std::string& format, const Options& options) {
  py::gil_scoped_release nogil;
  std::unique_ptr<engine::Source> source =
      Check(pipeline::MakeBatchSource(connectors::AllFormatsRegistry(), format, options));
  std::string state = MakeTemporaryDirectory();
  struct Cleanup {
    std::string path;
    ~Cleanup() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  } cleanup{state};
  engine::SourceContext context{engine::NewUuid(), storage::DefaultFileSystem(), state, SystemClock()};
  Check(source->Open(context));
  std::string start = Check(source->InitialOffset());
  engine::ReadLimit everything;
  everything.all_available = true;
  std::string end = Check(source->LatestOffset(start, everything));
  auto frame = std::make_shared<Frame>();
  frame->schema = source->schema();
  if (end != start) {
    for (BatchPtr& batch : Check(source->Read(start, end))) {
      if (batch->num_rows() > 0) frame->batches.push_back(std::move(batch));
    }
  }
  return frame;
}

void Write(const FramePtr& frame, const std::string& format, const Options& options) {
  py::gil_scoped_release nogil;
  Check(engine::WriteBatch(connectors::AllFormatsRegistry(), format, options, *frame->Whole()));
}

py::dict ResultOf(const delta::DmlResult& result) {
  py::dict out;
  out["version"] = result.version;
  out["skipped"] = result.skipped;
  out["num_source_rows"] = result.num_source_rows;
  out["num_affected_rows"] = result.num_rows_inserted + result.num_rows_updated + result.num_rows_deleted;
  out["num_inserted_rows"] = result.num_rows_inserted;
  out["num_updated_rows"] = result.num_rows_updated;
  out["num_deleted_rows"] = result.num_rows_deleted;
  out["num_copied_rows"] = result.num_rows_copied;
  out["num_files_added"] = result.num_files_added;
  out["num_files_removed"] = result.num_files_removed;
  out["num_deletion_vectors_added"] = result.num_deletion_vectors_added;
  return out;
}

std::vector<delta::SetTransaction> TransactionsOf(const std::optional<std::string>& app_id,
                                                   std::optional<int64_t> version) {
  if (app_id.has_value() != version.has_value()) {
    Throw(Status::Error(errors::kInvalidOptions, "txnAppId and txnVersion go together: give both or neither"));
  }
  if (!app_id) return {};
  return {delta::SetTransaction{*app_id, *version, std::nullopt}};
}

expr::Expression Parse(const std::string& sql) { return Check(expr::Expression::Parse(sql)); }

// `clauses`: (match, condition or None, action) with match one of "matched", "not_matched",
// "not_matched_by_source" and the action as a MERGE writes it after THEN.
py::dict Merge(const std::string& path, const FramePtr& source, const std::string& target_alias,
               const std::string& source_alias, const std::string& on,
               const std::vector<std::tuple<std::string, std::optional<std::string>, std::string>>& clauses,
               bool schema_evolution, const std::optional<std::string>& txn_app_id,
               std::optional<int64_t> txn_version, bool ansi) {
  delta::MergeSpec spec{.target_alias = target_alias, .source_alias = source_alias, .on = Parse(on)};
  for (const auto& [match_name, condition, action] : clauses) {
    expr::MergeMatch match = match_name == "matched"       ? expr::MergeMatch::kMatched
                             : match_name == "not_matched" ? expr::MergeMatch::kNotMatched
                                                           : expr::MergeMatch::kNotMatchedBySource;
    expr::MergeClause clause = Check(expr::ParseMergeAction(match, action));
    if (condition) clause.condition = Parse(*condition);
    spec.clauses.push_back(std::move(clause));
  }
  Check(expr::CheckMergeClauses(spec.clauses));
  spec.merge_schema = schema_evolution;
  spec.transactions = TransactionsOf(txn_app_id, txn_version);
  spec.sql = Sql(ansi);
  std::vector<BatchPtr> batches = source->batches;
  if (batches.empty()) batches.push_back(RecordBatch::Empty(source->schema));
  delta::DmlResult result;
  {
    py::gil_scoped_release nogil;
    result = Check(delta::MergeInto(storage::DefaultFileSystem(), path, batches, spec));
  }
  return ResultOf(result);
}

// `assignments` as `column = expression` texts.
py::dict Update(const std::string& path, const std::vector<std::string>& assignments,
                const std::optional<std::string>& where, bool ansi) {
  std::string set;
  for (const std::string& assignment : assignments) set += (set.empty() ? "" : ", ") + assignment;
  auto parsed = Check(expr::ParseDml("UPDATE t SET " + set));
  delta::UpdateSpec spec{.assignments = std::get<expr::UpdateStatement>(parsed).assignments};
  if (where) spec.where = Parse(*where);
  spec.sql = Sql(ansi);
  delta::DmlResult result;
  {
    py::gil_scoped_release nogil;
    result = Check(delta::UpdateTable(storage::DefaultFileSystem(), path, spec));
  }
  return ResultOf(result);
}

py::dict Delete(const std::string& path, const std::optional<std::string>& where, bool ansi) {
  delta::DeleteSpec spec;
  if (where) spec.where = Parse(*where);
  spec.sql = Sql(ansi);
  delta::DmlResult result;
  {
    py::gil_scoped_release nogil;
    result = Check(delta::DeleteFromTable(storage::DefaultFileSystem(), path, spec));
  }
  return ResultOf(result);
}

py::dict Optimize(const std::string& path, const std::optional<std::string>& where, int64_t target_file_size,
                  const std::vector<std::string>& zorder_by, bool ansi) {
  delta::OptimizeSpec spec{.target_file_size = target_file_size, .zorder_by = zorder_by, .sql = Sql(ansi)};
  if (where) spec.where = Parse(*where);
  delta::OptimizeResult result;
  {
    py::gil_scoped_release nogil;
    result = Check(delta::Optimize(storage::DefaultFileSystem(), path, spec));
  }
  py::dict out;
  out["version"] = result.version;
  out["skipped"] = result.skipped;
  out["numFilesRemoved"] = result.num_files_removed;
  out["numFilesAdded"] = result.num_files_added;
  out["numBytesRemoved"] = result.num_bytes_removed;
  out["numBytesAdded"] = result.num_bytes_added;
  out["partitionsOptimized"] = result.num_partitions_optimized;
  out["numDeletionVectorsRemoved"] = result.num_deletion_vectors_removed;
  return out;
}

std::vector<std::string> Vacuum(const std::string& path, std::optional<double> retention_hours, bool dry_run,
                                bool force) {
  delta::VacuumSpec spec{.retention_hours = retention_hours, .dry_run = dry_run, .force = force};
  py::gil_scoped_release nogil;
  return Check(delta::Vacuum(storage::DefaultFileSystem(), path, spec)).files;
}

py::dict Restore(const std::string& path, std::optional<int64_t> version, std::optional<std::string> timestamp) {
  delta::RestoreResult result;
  {
    py::gil_scoped_release nogil;
    result = Check(delta::Restore(storage::DefaultFileSystem(), path, {.version = version, .timestamp = timestamp}));
  }
  py::dict out;
  out["table_size_after_restore"] = result.table_size_after_restore;
  out["num_of_files_after_restore"] = result.num_files_after_restore;
  out["num_removed_files"] = result.num_files_removed;
  out["num_restored_files"] = result.num_files_restored;
  out["version"] = result.version;
  return out;
}

// ALTER TABLE: one of the four changes of delta/alter.h; the version committed.
int64_t Alter(const std::string& path, const std::string& change, const std::map<std::string, std::string>& properties,
              const std::vector<std::string>& names, bool if_exists, const std::string& new_name) {
  py::gil_scoped_release nogil;
  auto fs = storage::DefaultFileSystem();
  if (change == "set_properties") return Check(delta::SetTableProperties(fs, path, properties));
  if (change == "unset_properties") return Check(delta::UnsetTableProperties(fs, path, names, if_exists));
  if (change == "rename_column") return Check(delta::RenameColumn(fs, path, names.at(0), new_name));
  return Check(delta::DropColumns(fs, path, names));
}

// A column's position as ALTER TABLE writes it: FIRST, AFTER `after`, or last.
delta::ColumnPosition PositionOf(bool first, const std::string& after) {
  delta::ColumnPosition position;
  if (first) position.kind = delta::ColumnPosition::Kind::kFirst;
  if (!after.empty()) position = {delta::ColumnPosition::Kind::kAfter, after};
  return position;
}

// ALTER TABLE ADD COLUMNS: each column a tuple (path, type text, nullable, comment, first, after).
int64_t AddColumns(const std::string& path,
                   const std::vector<std::tuple<std::string, std::string, bool, std::string, bool, std::string>>& columns) {
  py::gil_scoped_release nogil;
  std::vector<delta::NewColumn> added;
  for (const auto& [column_path, type, nullable, comment, first, after] : columns) {
    delta::NewColumn column;
    column.path = column_path;
    column.type = Check(ParseTypeString(type));
    column.nullable = nullable;
    column.comment = comment;
    column.position = PositionOf(first, after);
    added.push_back(std::move(column));
  }
  return Check(delta::AddColumns(storage::DefaultFileSystem(), path, added));
}

// ALTER TABLE ALTER|CHANGE COLUMN: what is None stays.
int64_t ChangeColumn(const std::string& path, const std::string& column, const std::optional<std::string>& type,
                     const std::optional<std::string>& comment, std::optional<bool> nullable, bool first,
                     const std::string& after) {
  py::gil_scoped_release nogil;
  delta::ColumnChange change;
  if (type) change.type = Check(ParseTypeString(*type));
  change.comment = comment;
  change.nullable = nullable;
  if (first || !after.empty()) change.position = PositionOf(first, after);
  return Check(delta::ChangeColumn(storage::DefaultFileSystem(), path, column, change));
}

// The table's versions, newest first (as DESCRIBE HISTORY), at most `limit` (-1: all).
py::list History(const std::string& path, int64_t limit) {
  auto fs = storage::DefaultFileSystem();
  std::vector<std::pair<int64_t, std::optional<delta::CommitInfo>>> versions;
  {
    py::gil_scoped_release nogil;
    delta::LogListing listing = Check(delta::ListLog(*fs, path));
    if (listing.commit_versions.empty()) {
      Throw(Status::Error(errors::kDeltaTableNotFound, "no Delta commits under '" + path + "'"));
    }
    Check(delta::Snapshot::Load(fs, path).status());
    for (auto it = listing.commit_versions.rbegin(); it != listing.commit_versions.rend(); ++it) {
      if (limit >= 0 && static_cast<int64_t>(versions.size()) >= limit) break;
      if (it != listing.commit_versions.rbegin() && *it != *std::prev(it) - 1) break;
      std::optional<delta::CommitInfo> info;
      for (delta::Action& action : Check(delta::ReadCommit(*fs, path, *it))) {
        if (auto* commit_info = std::get_if<delta::CommitInfo>(&action)) info = std::move(*commit_info);
      }
      versions.emplace_back(*it, std::move(info));
    }
  }
  py::list out;
  for (const auto& [version, info] : versions) {
    py::dict row;
    row["version"] = version;
    row["timestamp"] = info && info->timestamp ? py::cast(*info->timestamp) : py::none();
    row["operation"] = info ? py::cast(info->operation) : py::none();
    row["operationParameters"] = info ? py::cast(info->operation_parameters) : py::none();
    row["operationMetrics"] = info && info->operation_metrics ? py::cast(*info->operation_metrics) : py::none();
    row["readVersion"] = info && info->read_version ? py::cast(*info->read_version) : py::none();
    row["isolationLevel"] = info && info->isolation_level ? py::cast(*info->isolation_level) : py::none();
    row["isBlindAppend"] = info && info->is_blind_append ? py::cast(*info->is_blind_append) : py::none();
    row["engineInfo"] = info && info->engine_info ? py::cast(*info->engine_info) : py::none();
    out.append(std::move(row));
  }
  return out;
}

// <warehouse>/catalog/schema/table for a table name, refused unless it stays under the warehouse.
std::string TablePath(const std::string& warehouse, const std::string& name) {
  pipeline::PipelineSpec spec;
  spec.warehouse = warehouse;
  return Check(spec.TablePath(name));
}

// The options with a `connection` named in them expanded from the warehouse's catalog.
Options ExpandConnection(const std::string& warehouse, const std::string& format, const Options& options) {
  pipeline::Catalog catalog(storage::DefaultFileSystem(), warehouse);
  return Check(pipeline::ExpandConnection(options, catalog, format));
}

bool IsDeltaPathName(const std::vector<std::string>& parts) {
  return parts.size() == 2 && (parts[0] == "delta" || parts[0] == "DELTA" || parts[0] == "Delta");
}

// Where a DML statement's tables are: the warehouse, and the catalog and schema of names with
// fewer than three parts (Spark's current catalog and database).
struct Namespace {
  std::string warehouse;
  std::string catalog;
  std::string schema;
};

// The directory a DML statement's table name means: delta.`/path` or [[catalog.]schema.]table.
std::string PathOfName(const Namespace& where, const std::vector<std::string>& parts) {
  if (IsDeltaPathName(parts)) return storage::AbsolutePath(parts[1]);
  std::vector<std::string> qualified = parts;
  if (qualified.size() == 1) qualified.insert(qualified.begin(), where.schema);
  if (qualified.size() == 2) qualified.insert(qualified.begin(), where.catalog);
  std::string name;
  for (const std::string& part : qualified) name += (name.empty() ? "" : ".") + part;
  return TablePath(where.warehouse, name);
}

// The rows a statement's FROM or USING names: a temporary view of the session (a one-part name,
// case-insensitive), else a Delta table's latest snapshot; without a name, one row of no columns.
FramePtr RowsOf(const std::vector<std::string>& name, const Namespace& where,
                const std::map<std::string, FramePtr>& views) {
  if (name.empty()) {  // a SELECT without FROM: one row of no columns
    auto frame = std::make_shared<Frame>();
    frame->schema = Check(DataType::Struct({}));
    frame->batches.push_back(Check(RecordBatch::Make(frame->schema, {}, 1)));
    return frame;
  }
  std::string view_name = name.size() == 1 ? name[0] : "";
  for (auto& c : view_name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (auto view = views.find(view_name); view != views.end()) return view->second;
  std::string path = PathOfName(where, name);
  if (!std::filesystem::is_directory(path + "/_delta_log")) {
    Throw(Status::Error(errors::kTableOrViewNotFound,
                        "`" + name.back() + "` is no temporary view of this session nor a table"));
  }
  return Read("delta", {{"path", path}});
}

// SELECT ... [FROM view-or-table] [WHERE] [GROUP BY] [HAVING], with a SQL flow's meaning
// (docs/sql.md), over the rows as they are now: an aggregation gives every group.
FramePtr RunSelect(const std::string& sql, const Namespace& where, const std::map<std::string, FramePtr>& views,
                   bool ansi) {
  expr::SelectStatement statement = Check(expr::ParseSelect(sql));
  FramePtr source = RowsOf(statement.from, where, views);
  pipeline::FlowSpec flow;
  flow.name = "sql";
  flow.sql = sql;
  py::gil_scoped_release nogil;
  return RunFlowOnce(flow, source, ansi);
}

// A MERGE, UPDATE or DELETE statement over the warehouse's tables, delta.`/path` tables and the
// session's temporary views (as MERGE sources).
py::dict RunDml(const std::string& sql, const Namespace& where, const std::map<std::string, FramePtr>& views,
                bool ansi) {
  expr::DmlStatement statement = Check(expr::ParseDml(sql));
  if (auto* merge = std::get_if<expr::MergeStatement>(&statement)) {
    FramePtr source = RowsOf(merge->source, where, views);
    delta::MergeSpec spec{.target_alias = merge->target_alias, .source_alias = merge->source_alias, .on = merge->on,
                          .clauses = merge->clauses, .merge_schema = merge->with_schema_evolution};
    spec.sql = Sql(ansi);
    std::vector<BatchPtr> batches = source->batches;
    if (batches.empty()) batches.push_back(RecordBatch::Empty(source->schema));
    std::string path = PathOfName(where, merge->target);
    py::gil_scoped_release nogil;
    delta::DmlResult result = Check(delta::MergeInto(storage::DefaultFileSystem(), path, batches, spec));
    py::gil_scoped_acquire gil;
    return ResultOf(result);
  }
  delta::DmlResult result;
  if (auto* update = std::get_if<expr::UpdateStatement>(&statement)) {
    delta::UpdateSpec spec{.target_alias = update->target_alias, .assignments = update->assignments,
                           .where = update->where};
    spec.sql = Sql(ansi);
    std::string path = PathOfName(where, update->target);
    py::gil_scoped_release nogil;
    result = Check(delta::UpdateTable(storage::DefaultFileSystem(), path, spec));
  } else {
    auto& remove = std::get<expr::DeleteStatement>(statement);
    delta::DeleteSpec spec{.target_alias = remove.target_alias, .where = remove.where};
    spec.sql = Sql(ansi);
    std::string path = PathOfName(where, remove.target);
    py::gil_scoped_release nogil;
    result = Check(delta::DeleteFromTable(storage::DefaultFileSystem(), path, spec));
  }
  return ResultOf(result);
}

}  // namespace

BatchPtr Frame::Whole() const {
  if (batches.empty()) return RecordBatch::Empty(schema);
  if (batches.size() == 1) return batches[0];
  return Check(Concatenate(batches));
}

void DefineFrames(py::module_& m) {
  py::class_<Frame, std::shared_ptr<Frame>>(m, "Frame", "Batches of one schema: the rows a sluice.DataFrame holds.")
      .def_property_readonly("schema_json", [](const Frame& f) { return f.schema->ToJson(); })
      .def_property_readonly("schema_string", [](const Frame& f) { return f.schema->ToString(); })
      .def_property_readonly("num_rows", &Frame::num_rows)
      .def_property_readonly("num_batches", [](const Frame& f) { return f.batches.size(); })
      .def("__arrow_c_stream__",
           [](const std::shared_ptr<Frame>& f, const py::object& requested_schema) {
             return ArrowStream(f, requested_schema);
           },
           py::arg("requested_schema") = py::none())
      .def_static("from_arrow", [](const py::object& data) { return FromArrow(data); })
      .def("transform",
           [](const std::shared_ptr<Frame>& f, const std::string& where, const std::vector<std::string>& select,
              bool ansi) { return Transform(f, where, select, ansi); },
           py::arg("where"), py::arg("select"), py::arg("ansi"))
      .def("union_all",
           [](const std::shared_ptr<Frame>& f, const std::shared_ptr<Frame>& other) {
             if (!f->schema->Equals(*other->schema)) {
               Throw(Status::Error(errors::kInvalidSchema, "union of " + f->schema->ToString() + " and " +
                                                               other->schema->ToString()));
             }
             auto out = std::make_shared<Frame>(*f);
             out->batches.insert(out->batches.end(), other->batches.begin(), other->batches.end());
             return out;
           })
      .def("limit",
           [](const std::shared_ptr<Frame>& f, int64_t n) {
             auto out = std::make_shared<Frame>();
             out->schema = f->schema;
             for (const BatchPtr& batch : f->batches) {
               if (n <= 0) break;
               out->batches.push_back(batch->num_rows() <= n ? batch : Slice(batch, 0, n));
               n -= out->batches.back()->num_rows();
             }
             return out;
           })
      .def("pretty", [](const Frame& f, int64_t n) { return PrettyPrint(*f.Whole(), n); });

  m.def("read", &Read, py::arg("format"), py::arg("options"));
  m.def("write", &Write, py::arg("frame"), py::arg("format"), py::arg("options"));
  m.def("merge", &Merge, py::arg("path"), py::arg("source"), py::arg("target_alias"), py::arg("source_alias"),
        py::arg("on"), py::arg("clauses"), py::arg("schema_evolution"), py::arg("txn_app_id"), py::arg("txn_version"),
        py::arg("ansi"));
  m.def("update", &Update, py::arg("path"), py::arg("assignments"), py::arg("where"), py::arg("ansi"));
  m.def("delete", &Delete, py::arg("path"), py::arg("where"), py::arg("ansi"));
  m.def("history", &History, py::arg("path"), py::arg("limit"));
  m.def("optimize", &Optimize, py::arg("path"), py::arg("where"), py::arg("target_file_size"), py::arg("zorder_by"),
        py::arg("ansi"));
  m.def("vacuum", &Vacuum, py::arg("path"), py::arg("retention_hours"), py::arg("dry_run"), py::arg("force"));
  m.def("restore", &Restore, py::arg("path"), py::arg("version") = py::none(), py::arg("timestamp") = py::none());
  m.def("alter", &Alter, py::arg("path"), py::arg("change"), py::arg("properties"), py::arg("names"),
        py::arg("if_exists"), py::arg("new_name"));
  m.def("add_columns", &AddColumns, py::arg("path"), py::arg("columns"));
  m.def("change_column", &ChangeColumn, py::arg("path"), py::arg("column"), py::arg("type"), py::arg("comment"),
        py::arg("nullable"), py::arg("first"), py::arg("after"));
  m.def(
      "sink_option_names",
      [](const std::string& format) {
        std::vector<std::string> names;
        if (const engine::SinkFormat* sink = connectors::AllFormatsRegistry().FindSinkFormat(format)) {
          for (const OptionSpec& option : sink->options) names.emplace_back(option.name);
        }
        return names;
      },
      py::arg("format"));
  m.def("table_path", &TablePath, py::arg("warehouse"), py::arg("name"));
  // Paths as every sluice path is taken: local (made absolute) or an object store's URI.
  m.def("absolute_path", [](const std::string& path) { return storage::AbsolutePath(path); }, py::arg("path"));
  m.def(
      "path_exists", [](const std::string& path) { return Check(storage::DefaultFileSystem()->Exists(path)); },
      py::arg("path"));
  m.def(
      "list_names",
      [](const std::string& path) {
        std::vector<std::string> names;
        for (const FileInfo& entry : Check(storage::DefaultFileSystem()->List(path))) {
          names.push_back(entry.path.substr(entry.path.rfind('/') + 1));
        }
        return names;
      },
      py::arg("path"));
  m.def("expand_connection", &ExpandConnection, py::arg("warehouse"), py::arg("format"), py::arg("options"));
  m.def(
      "run_dml",
      [](const std::string& sql, const std::string& warehouse, const std::string& catalog, const std::string& schema,
         const std::map<std::string, FramePtr>& views,
         bool ansi) { return RunDml(sql, Namespace{warehouse, catalog, schema}, views, ansi); },
      py::arg("sql"), py::arg("warehouse"), py::arg("catalog"), py::arg("schema"), py::arg("views"), py::arg("ansi"));
  m.def(
      "run_select",
      [](const std::string& sql, const std::string& warehouse, const std::string& catalog, const std::string& schema,
         const std::map<std::string, FramePtr>& views,
         bool ansi) { return RunSelect(sql, Namespace{warehouse, catalog, schema}, views, ansi); },
      py::arg("sql"), py::arg("warehouse"), py::arg("catalog"), py::arg("schema"), py::arg("views"), py::arg("ansi"));
}

}  // namespace sluice::python
