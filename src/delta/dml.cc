#include "sluice/delta/dml.h"

#include <algorithm>
#include <limits>
#include <span>
#include <utility>

#include <fmt/format.h>

#include "core/group_keys.h"
#include "delta/column_mapping.h"
#include "delta/data_files.h"
#include "delta/file_pruning.h"
#include "delta/json_writer.h"
#include "sluice/core/json_text.h"
#include "sluice/core/ascii.h"
#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "sluice/delta/deletion_vector.h"
#include "sluice/delta/features.h"
#include "sluice/delta/scan.h"
#include "sluice/delta/transaction.h"
#include "sluice/delta/writer.h"

namespace sluice::delta {
namespace {

using expr::MergeActionKind;
using expr::MergeMatch;


std::string Quoted(std::string_view name) {
  std::string out = "`";
  for (char c : name) {
    if (c == '`') out += '`';
    out += c;
  }
  return out + "`";
}

// The rows of one or two tables as expressions see them: each table with an alias as a struct
// column of that name (`t.id`), and each column only one of the tables has by its own name too.
class RowView {
 public:
  struct Side {
    std::string alias;
    TypePtr schema;
  };

  static Result<RowView> Make(std::vector<Side> sides) {
    RowView view;
    std::vector<Field> fields;
    auto taken = [&](std::string_view name) {
      return std::any_of(fields.begin(), fields.end(), [&](const Field& f) { return EqualsIgnoreCase(f.name, name); });
    };
    for (size_t s = 0; s < sides.size(); ++s) {
      if (sides[s].alias.empty()) continue;
      if (taken(sides[s].alias)) {
        return Status::Error(errors::kInvalidArgument,
                             fmt::format("the target and the source have one alias, `{}`", sides[s].alias));
      }
      fields.push_back(Field{sides[s].alias, sides[s].schema, false});
      view.entries_.push_back({static_cast<int>(s), -1});
    }
    for (size_t s = 0; s < sides.size(); ++s) {
      for (int f = 0; f < sides[s].schema->num_fields(); ++f) {
        const Field& field = sides[s].schema->field(f);
        bool in_other = false;
        for (size_t o = 0; o < sides.size(); ++o) {
          if (o != s && sides[o].schema->FieldIndexIgnoreCase(field.name) >= 0) in_other = true;
        }
        if (in_other || taken(field.name)) continue;
        fields.push_back(field);
        view.entries_.push_back({static_cast<int>(s), f});
      }
    }
    view.sides_ = std::move(sides);
    SLUICE_ASSIGN_OR_RETURN(view.schema_, DataType::Struct(std::move(fields)));
    return view;
  }

  const TypePtr& schema() const { return schema_; }

  // The view of the sides' rows (one batch per side, of its schema, all of `rows` rows).
  Result<BatchPtr> Rows(const std::vector<BatchPtr>& sides, int64_t rows) const {
    std::vector<ColumnPtr> columns;
    for (const Entry& entry : entries_) {
      const BatchPtr& batch = sides[static_cast<size_t>(entry.side)];
      if (entry.field >= 0) {
        columns.push_back(batch->column(entry.field));
        continue;
      }
      auto whole = std::make_shared<Column>();
      whole->type = sides_[static_cast<size_t>(entry.side)].schema;
      whole->length = rows;
      whole->children.assign(batch->columns().begin(), batch->columns().end());
      columns.push_back(std::move(whole));
    }
    return RecordBatch::Make(schema_, std::move(columns), rows);
  }

 private:
  struct Entry {
    int side;
    int field;  // -1: the side's whole row, as its alias
  };
  std::vector<Side> sides_;
  std::vector<Entry> entries_;
  TypePtr schema_;
};

// `expression` bound to `schema`, cast to `type` when it has another type.
Result<expr::BoundExpression> BindAs(const expr::Expression& expression, const TypePtr& schema, const TypePtr& type,
                                     expr::SqlOptions sql) {
  SLUICE_ASSIGN_OR_RETURN(expr::BoundExpression bound, expr::Bind(expression, schema, sql));
  if (bound.result_type()->Equals(*type)) return bound;
  SLUICE_ASSIGN_OR_RETURN(expr::Expression cast,
                          expr::Expression::Parse(fmt::format("CAST(({}) AS {})", expression.ToSql(), type->ToString())));
  return expr::Bind(cast, schema, sql);
}

// The row ids and commit versions of target rows, on a table that tracks row ids (else null).
struct RowIds {
  ColumnPtr row_ids;
  ColumnPtr row_commit_versions;

  // Of the rows at `indices`: the ids, and the versions when `keep_versions` (a copied row keeps
  // its version, an updated one takes the commit's).
  RowIds Take(std::span<const int64_t> indices, bool keep_versions) const {
    if (!row_ids) return {};
    return {sluice::Take(row_ids, indices), keep_versions ? sluice::Take(row_commit_versions, indices) : nullptr};
  }
};

// Where one column of a written row comes from.
struct ColumnValue {
  enum Kind {
    kTarget,  // the target row's value (columns an UPDATE does not assign)
    kNull,    // columns an INSERT does not assign
    kView,    // an expression over the clause's view
    kSource,  // an expression over the source row alone (UPDATE SET *, INSERT *)
  } kind = kTarget;
  std::optional<expr::BoundExpression> expression;
};

struct BoundClause {
  MergeMatch match;
  MergeActionKind action;
  std::optional<expr::BoundExpression> condition;
  std::vector<ColumnValue> values;  // per table column, for updates and inserts
  std::string condition_sql;
};

// The column an assignment names: its path without the target's alias, one top-level column.
Result<int> AssignedColumn(const expr::Assignment& assignment, const std::string& target_alias, const DataType& table) {
  std::vector<std::string> path = assignment.column;
  if (path.size() > 1 && !target_alias.empty() && EqualsIgnoreCase(path[0], target_alias)) path.erase(path.begin());
  std::string written;
  for (const std::string& part : assignment.column) written += (written.empty() ? "" : ".") + part;
  if (path.size() != 1) {
    return Status::Error(errors::kUnresolvedColumn,
                         fmt::format("`{}` is not a column of the target table (nested fields are assigned as a "
                                     "whole struct)",
                                     written));
  }
  int index = table.FieldIndexIgnoreCase(path[0]);
  if (index < 0) {
    return Status::Error(errors::kUnresolvedColumn, fmt::format("`{}` is not a column of the target table", written));
  }
  return index;
}

class MergeRun {
 public:
  MergeRun(std::shared_ptr<FileSystem> fs, std::string table_path, const MergeSpec& spec)
      : fs_(std::move(fs)), table_path_(std::move(table_path)), spec_(spec) {}

  // `operation` and `parameters` are the commit's (MERGE, UPDATE or DELETE).
  Result<DmlResult> Run(const std::vector<BatchPtr>& source, std::string_view operation, StringMap parameters) {
    SLUICE_ASSIGN_OR_RETURN(txn_, Transaction::Start(fs_, table_path_));
    snapshot_ = txn_->read_snapshot();
    if (!snapshot_) return Status::Error(errors::kDeltaTableNotFound, fmt::format("no Delta table at '{}'", table_path_));
    if (AllTransactionsRecorded()) {
      DmlResult skipped;
      skipped.version = snapshot_->version();
      skipped.skipped = true;
      return skipped;
    }
    if (source.empty()) return Status::Error(errors::kInvalidArgument, "a MERGE needs the source's schema: give a batch");
    SLUICE_ASSIGN_OR_RETURN(source_, Concatenate(source));
    result_.num_source_rows = source_->num_rows();
    SLUICE_RETURN_IF_ERROR(expr::CheckMergeClauses(spec_.clauses));
    SLUICE_RETURN_IF_ERROR(PrepareSchema());
    SLUICE_RETURN_IF_ERROR(Bind());
    SLUICE_RETURN_IF_ERROR(BuildSourceKeys());
    now_ = NowMs();
    // Rows are marked deleted instead of files rewritten when the table asks for it and its
    // protocol has the feature (a table that asks without it is rewritten, as Delta does).
    const auto& features = snapshot_->protocol().writer_features;
    deletion_vectors_ = snapshot_->Property(kEnableDeletionVectors, "false") == "true" && features &&
                        std::find(features->begin(), features->end(), "deletionVectors") != features->end();
    if (deletion_vectors_) deciding_columns_ = DecidingColumns();
    row_tracking_ = TracksRowIds(snapshot_->protocol());
    std::vector<AddFile> candidates = CandidateFiles();
    txn_->ReadFiles(candidates);
    result_.num_files_scanned = static_cast<int64_t>(candidates.size());
    result_.num_files_total = static_cast<int64_t>(snapshot_->files().size());
    source_matched_.assign(static_cast<size_t>(source_->num_rows()), false);
    for (const AddFile& file : candidates) SLUICE_RETURN_IF_ERROR(MergeFile(file));
    SLUICE_RETURN_IF_ERROR(InsertUnmatched());
    std::vector<AddFile> adds;
    if (writer_) {
      SLUICE_ASSIGN_OR_RETURN(adds, writer_->Finish());
    }
    result_.num_files_added = static_cast<int64_t>(adds.size());
    for (AddFile& add : adds) txn_->Add(std::move(add));
    for (const SetTransaction& app : spec_.transactions) txn_->SetTransactionVersion(app.app_id, app.version);
    SLUICE_ASSIGN_OR_RETURN(result_.version, txn_->Commit(operation, std::move(parameters), Metrics(operation)));
    return result_;
  }

 private:
  bool AllTransactionsRecorded() {
    if (spec_.transactions.empty()) return false;
    for (const SetTransaction& app : spec_.transactions) {
      std::optional<int64_t> recorded = txn_->TransactionVersion(app.app_id);
      if (!recorded || *recorded < app.version) return false;
    }
    return true;
  }

  // The table schema the commit leaves: the snapshot's, with the source's new columns when the
  // schema evolves.
  Status PrepareSchema() {
    mapped_schema_ = snapshot_->schema();
    table_schema_ = WithoutColumnMapping(mapped_schema_);
    const bool star = std::any_of(spec_.clauses.begin(), spec_.clauses.end(), [](const expr::MergeClause& c) {
      return c.action == MergeActionKind::kUpdateAll || c.action == MergeActionKind::kInsertAll;
    });
    if (!spec_.merge_schema || !star) return Status::OK();
    SLUICE_ASSIGN_OR_RETURN(TypePtr merged, MergeSchemas(table_schema_, source_->schema()));
    if (merged->Equals(*table_schema_)) return Status::OK();
    Metadata metadata = snapshot_->metadata();
    metadata.schema_string = merged->ToJson();
    SLUICE_ASSIGN_OR_RETURN(mapped_schema_, txn_->SetMetadata(std::move(metadata)));
    table_schema_ = WithoutColumnMapping(mapped_schema_);
    return Status::OK();
  }

  Status Bind() {
    SLUICE_ASSIGN_OR_RETURN(target_view_, RowView::Make({{spec_.target_alias, table_schema_}}));
    SLUICE_ASSIGN_OR_RETURN(source_view_, RowView::Make({{spec_.source_alias, source_->schema()}}));
    SLUICE_ASSIGN_OR_RETURN(joined_view_, RowView::Make({{spec_.target_alias, table_schema_},
                                                         {spec_.source_alias, source_->schema()}}));
    SLUICE_ASSIGN_OR_RETURN(on_, expr::BindPredicate(spec_.on, joined_view_->schema(), spec_.sql));
    for (const expr::MergeClause& clause : spec_.clauses) {
      BoundClause bound{clause.match, clause.action, std::nullopt, {}, ""};
      const RowView& view = ViewOf(clause.match);
      if (clause.condition) {
        SLUICE_ASSIGN_OR_RETURN(bound.condition, expr::BindPredicate(*clause.condition, view.schema(), spec_.sql));
        bound.condition_sql = clause.condition->ToSql();
      }
      SLUICE_RETURN_IF_ERROR(BindValues(clause, view, &bound.values));
      if (clause.match == MergeMatch::kMatched) has_matched_ = true;
      if (clause.match == MergeMatch::kNotMatchedBySource) has_not_matched_by_source_ = true;
      clauses_.push_back(std::move(bound));
    }
    return Status::OK();
  }

  const RowView& ViewOf(MergeMatch match) const {
    switch (match) {
      case MergeMatch::kMatched: return *joined_view_;
      case MergeMatch::kNotMatched: return *source_view_;
      case MergeMatch::kNotMatchedBySource: return *target_view_;
    }
    return *joined_view_;
  }

  Status BindValues(const expr::MergeClause& clause, const RowView& view, std::vector<ColumnValue>* values) {
    const int columns = table_schema_->num_fields();
    const bool insert = clause.action == MergeActionKind::kInsert || clause.action == MergeActionKind::kInsertAll;
    values->assign(static_cast<size_t>(columns), ColumnValue{insert ? ColumnValue::kNull : ColumnValue::kTarget, {}});
    if (clause.action == MergeActionKind::kDelete) return Status::OK();
    if (clause.action == MergeActionKind::kUpdateAll || clause.action == MergeActionKind::kInsertAll) {
      for (int c = 0; c < columns; ++c) {
        const Field& column = table_schema_->field(c);
        int in_source = source_->schema()->FieldIndexIgnoreCase(column.name);
        if (in_source < 0) {
          if (spec_.merge_schema) continue;
          return Status::Error(
              errors::kUnresolvedColumn,
              fmt::format("{}: the source has no column `{}` of the target table (with schema evolution the "
                          "column would be left {})",
                          insert ? "INSERT *" : "UPDATE SET *", column.name, insert ? "NULL" : "as it is"));
        }
        SLUICE_ASSIGN_OR_RETURN(expr::Expression reference,
                                expr::Expression::Parse(Quoted(source_->schema()->field(in_source).name)));
        SLUICE_ASSIGN_OR_RETURN(expr::BoundExpression bound,
                                BindAs(reference, source_->schema(), column.type, spec_.sql));
        (*values)[static_cast<size_t>(c)] = ColumnValue{ColumnValue::kSource, std::move(bound)};
      }
      return Status::OK();
    }
    std::vector<bool> assigned(static_cast<size_t>(columns), false);
    for (const expr::Assignment& assignment : clause.assignments) {
      SLUICE_ASSIGN_OR_RETURN(int c, AssignedColumn(assignment, spec_.target_alias, *table_schema_));
      if (assigned[static_cast<size_t>(c)]) {
        return Status::Error(errors::kInvalidArgument,
                             fmt::format("column `{}` is assigned twice in one clause", table_schema_->field(c).name));
      }
      assigned[static_cast<size_t>(c)] = true;
      SLUICE_ASSIGN_OR_RETURN(expr::BoundExpression bound,
                              BindAs(assignment.value, view.schema(), table_schema_->field(c).type, spec_.sql));
      (*values)[static_cast<size_t>(c)] = ColumnValue{ColumnValue::kView, std::move(bound)};
    }
    return Status::OK();
  }

  // Which side of the join an expression reads: 1 target, 2 source, 3 both, 0 neither.
  int SidesRead(const expr::Expression& expression) const {
    int sides = 0;
    for (const std::string& name : expression.ReferencedColumns()) {
      if (!spec_.target_alias.empty() && EqualsIgnoreCase(name, spec_.target_alias)) {
        sides |= 1;
      } else if (!spec_.source_alias.empty() && EqualsIgnoreCase(name, spec_.source_alias)) {
        sides |= 2;
      } else {
        const bool in_target = table_schema_->FieldIndexIgnoreCase(name) >= 0;
        const bool in_source = source_->schema()->FieldIndexIgnoreCase(name) >= 0;
        sides |= in_target && in_source ? 3 : in_target ? 1 : in_source ? 2 : 3;
      }
    }
    return sides;
  }

  // The ON condition's equalities of a target expression and a source expression become hash
  // join keys (the whole condition is still evaluated on every pair the keys make); its
  // target-only conjuncts help choose the files to read.
  Status BuildSourceKeys() {
    for (const expr::Expression& conjunct : spec_.on.Conjuncts()) {
      const int sides = SidesRead(conjunct);
      if (sides == 1) target_conjuncts_.push_back(conjunct.WithoutQualifier(spec_.target_alias));
      std::optional<std::pair<expr::Expression, expr::Expression>> equality = conjunct.AsEquality();
      if (!equality || sides != 3) continue;
      auto [target_side, source_side] = *equality;
      if (SidesRead(target_side) == 2 && SidesRead(source_side) == 1) std::swap(target_side, source_side);
      if (SidesRead(target_side) != 1 || SidesRead(source_side) != 2) continue;
      SLUICE_ASSIGN_OR_RETURN(expr::BoundExpression t, expr::Bind(target_side, target_view_->schema(), spec_.sql));
      SLUICE_ASSIGN_OR_RETURN(expr::BoundExpression s, expr::Bind(source_side, source_view_->schema(), spec_.sql));
      const TypePtr& tt = t.result_type();
      const TypePtr& st = s.result_type();
      if (!tt->Equals(*st)) {
        // Integers of different widths meet as bigint; other pairs of types are left to the
        // condition alone (no key), since their common type is not known here.
        if (!tt->is_integral() || !st->is_integral()) continue;
        SLUICE_ASSIGN_OR_RETURN(t, BindAs(target_side, target_view_->schema(), DataType::Long(), spec_.sql));
        SLUICE_ASSIGN_OR_RETURN(s, BindAs(source_side, source_view_->schema(), DataType::Long(), spec_.sql));
      }
      target_keys_.push_back(std::move(t));
      source_keys_.push_back(std::move(s));
      key_targets_.push_back(target_side.WithoutQualifier(spec_.target_alias));
    }
    if (target_keys_.empty() || source_->num_rows() == 0) return Status::OK();
    SLUICE_ASSIGN_OR_RETURN(BatchPtr view, source_view_->Rows({source_}, source_->num_rows()));
    std::vector<Field> key_fields;
    for (size_t k = 0; k < source_keys_.size(); ++k) {
      SLUICE_ASSIGN_OR_RETURN(ColumnPtr column, source_keys_[k].Evaluate(*view));
      key_fields.push_back(Field{fmt::format("k{}", k), column->type, true});
      source_key_columns_.push_back(std::move(column));
    }
    SLUICE_ASSIGN_OR_RETURN(TypePtr key_schema, DataType::Struct(std::move(key_fields)));
    keys_ = std::make_unique<GroupKeys>(key_schema);
    // Rows with a NULL key pair with nothing under `=`: they stay out of the table.
    std::vector<int64_t> keyed;
    for (int64_t row = 0; row < source_->num_rows(); ++row) {
      if (!AnyNull(source_key_columns_, row)) keyed.push_back(row);
    }
    std::vector<ColumnPtr> keyed_columns;
    for (const ColumnPtr& column : source_key_columns_) keyed_columns.push_back(Take(column, keyed));
    std::vector<int32_t> groups;
    std::vector<int64_t> new_rows;
    SLUICE_RETURN_IF_ERROR(keys_->Assign(keyed_columns, static_cast<int64_t>(keyed.size()), &groups, &new_rows));
    // The source rows of each key, grouped (CSR: group_start_[g] .. group_start_[g + 1]).
    group_start_.assign(static_cast<size_t>(keys_->size()) + 1, 0);
    for (int32_t g : groups) ++group_start_[static_cast<size_t>(g) + 1];
    for (size_t g = 1; g < group_start_.size(); ++g) group_start_[g] += group_start_[g - 1];
    group_rows_.resize(keyed.size());
    std::vector<int64_t> fill(group_start_.begin(), group_start_.end() - 1);
    for (size_t i = 0; i < keyed.size(); ++i) group_rows_[static_cast<size_t>(fill[static_cast<size_t>(groups[i])]++)] = keyed[i];
    return Status::OK();
  }

  static bool AnyNull(const std::vector<ColumnPtr>& columns, int64_t row) {
    return std::any_of(columns.begin(), columns.end(), [&](const ColumnPtr& c) { return c->IsNull(row); });
  }

  // A pruner for the conjuncts, or none when they do not make one.
  std::optional<FilePruner> PrunerOf(const std::vector<std::string>& texts) const {
    if (texts.empty()) return std::nullopt;
    std::string all;
    for (const std::string& text : texts) all += (all.empty() ? "(" : " AND (") + text + ")";
    Result<expr::Expression> filter = expr::Expression::Parse(all);
    if (!filter.ok()) return std::nullopt;
    Result<FilePruner> pruner = FilePruner::Make(*filter, mapped_schema_, snapshot_->metadata().partition_columns);
    if (!pruner.ok()) return std::nullopt;
    return std::move(pruner).value();
  }

  // The files that may hold a row the MERGE changes.
  std::vector<AddFile> CandidateFiles() const {
    const std::vector<AddFile>& files = snapshot_->files();
    // Rows paired with a source row: only when the source has rows and a clause acts on pairs
    // (the pairs also decide which source rows are inserted).
    const bool pairs_matter = source_->num_rows() > 0;
    std::optional<FilePruner> join;
    if (pairs_matter) {
      std::vector<std::string> texts;
      for (const expr::Expression& conjunct : target_conjuncts_) texts.push_back(conjunct.ToSql());
      join = PrunerOf(texts);
    }
    // Rows paired with none: those a WHEN NOT MATCHED BY SOURCE condition may take.
    bool every_unpaired = false;
    std::optional<FilePruner> unpaired;
    if (has_not_matched_by_source_) {
      std::string any;
      for (const expr::MergeClause& clause : spec_.clauses) {
        if (clause.match != MergeMatch::kNotMatchedBySource) continue;
        if (!clause.condition) {
          every_unpaired = true;
          break;
        }
        any += (any.empty() ? "(" : " OR (") + clause.condition->WithoutQualifier(spec_.target_alias).ToSql() + ")";
      }
      if (!every_unpaired) {
        unpaired = PrunerOf({any});
        every_unpaired = !unpaired;
      }
    }
    // Each key on a plain column of the table: its source values, against the files' statistics.
    std::vector<std::pair<KeyValues, std::vector<std::string>>> key_values;
    for (size_t k = 0; pairs_matter && k < source_key_columns_.size(); ++k) {
      std::optional<std::vector<std::string>> path = key_targets_[k].AsColumnPath();
      std::optional<std::vector<std::string>> names = path ? PhysicalPath(mapped_schema_, *path) : std::nullopt;
      std::optional<KeyValues> values = KeyValues::Of(*source_key_columns_[k]);
      if (names && values) key_values.emplace_back(std::move(*values), std::move(*names));
    }
    std::vector<AddFile> candidates;
    for (const AddFile& file : files) {
      const bool by_pairs = pairs_matter && (!join || join->MayMatch(file)) &&
                            std::all_of(key_values.begin(), key_values.end(),
                                        [&](const auto& key) { return key.first.MayBeIn(file, key.second); });
      const bool by_unpaired = has_not_matched_by_source_ && (every_unpaired || unpaired->MayMatch(file));
      if (by_pairs || by_unpaired) candidates.push_back(file);
    }
    return candidates;
  }

  // The file's rows in the table schema, or null when it has none. With `columns`, only those are
  // read and the others are NULL. On a table that tracks row ids, `*ids` gets the rows' ids and
  // commit versions.
  Result<BatchPtr> ReadFile(const AddFile& file, const std::optional<std::vector<std::string>>& columns,
                            RowIds* ids) const {
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<TableScan> scan,
                            TableScan::Open(snapshot_, {.columns = columns.value_or(std::vector<std::string>{}),
                                                        .files = std::vector<AddFile>{file},
                                                        .row_tracking = row_tracking_}));
    std::vector<BatchPtr> parts;
    while (true) {
      SLUICE_ASSIGN_OR_RETURN(BatchPtr part, scan->Next());
      if (part == nullptr) break;
      parts.push_back(std::move(part));
    }
    if (parts.empty()) return BatchPtr();
    SLUICE_ASSIGN_OR_RETURN(BatchPtr rows, Concatenate(parts));
    if (row_tracking_) {
      const int n = rows->num_columns();
      *ids = RowIds{rows->column(n - 2), rows->column(n - 1)};
      std::vector<Field> fields(rows->schema()->fields().begin(), rows->schema()->fields().end() - 2);
      SLUICE_ASSIGN_OR_RETURN(TypePtr schema, DataType::Struct(std::move(fields)));
      std::vector<ColumnPtr> data(rows->columns().begin(), rows->columns().end() - 2);
      SLUICE_ASSIGN_OR_RETURN(rows, RecordBatch::Make(std::move(schema), std::move(data), rows->num_rows()));
    }
    if (!columns) return ConformToSchema(rows, table_schema_);
    std::vector<ColumnPtr> all;
    for (const Field& field : table_schema_->fields()) {
      const int index = rows->schema()->FieldIndex(field.name);
      all.push_back(index >= 0 ? rows->column(index) : MakeNullColumn(field.type, rows->num_rows()));
    }
    return RecordBatch::Make(table_schema_, std::move(all), rows->num_rows());
  }

  // The table columns that decide what happens to a target row (those the ON condition and the
  // clauses' conditions read), or nullopt when an expression reads the target row whole.
  std::optional<std::vector<std::string>> DecidingColumns() const {
    std::vector<expr::Expression> deciding = {spec_.on};
    for (const expr::MergeClause& clause : spec_.clauses) {
      if (clause.condition) deciding.push_back(*clause.condition);
    }
    std::vector<std::string> columns;
    for (const expr::Expression& expression : deciding) {
      for (const std::string& name : expression.WithoutQualifier(spec_.target_alias).ReferencedColumns()) {
        if (!spec_.target_alias.empty() && EqualsIgnoreCase(name, spec_.target_alias)) return std::nullopt;
        const int index = table_schema_->FieldIndexIgnoreCase(name);
        if (index < 0 || index >= snapshot_->schema()->num_fields()) continue;  // a source or evolved column
        const std::string& field = table_schema_->field(index).name;
        if (std::find(columns.begin(), columns.end(), field) == columns.end()) columns.push_back(field);
      }
    }
    if (columns.empty()) columns.push_back(snapshot_->schema()->field(0).name);
    return columns;
  }

  // The pairs (target row, source row) that the target rows' keys (or, without keys, the cross
  // product) propose, for target rows [begin, end).
  Status ProposePairs(const std::vector<ColumnPtr>& target_keys, int64_t begin, int64_t end,
                      std::vector<int64_t>* pair_target, std::vector<int64_t>* pair_source) const {
    pair_target->clear();
    pair_source->clear();
    if (source_->num_rows() == 0) return Status::OK();
    if (target_keys_.empty()) {
      for (int64_t t = begin; t < end; ++t) {
        for (int64_t s = 0; s < source_->num_rows(); ++s) {
          pair_target->push_back(t);
          pair_source->push_back(s);
        }
      }
      return Status::OK();
    }
    std::vector<int32_t> groups;
    SLUICE_RETURN_IF_ERROR(keys_->Find(target_keys, static_cast<int64_t>(target_keys[0]->length), &groups));
    for (int64_t t = begin; t < end; ++t) {
      const int32_t g = groups[static_cast<size_t>(t)];
      if (g < 0 || AnyNull(target_keys, t)) continue;
      for (int64_t i = group_start_[static_cast<size_t>(g)]; i < group_start_[static_cast<size_t>(g) + 1]; ++i) {
        pair_target->push_back(t);
        pair_source->push_back(group_rows_[static_cast<size_t>(i)]);
      }
    }
    return Status::OK();
  }

  // The rows of `clause` (over `view_rows`, the clause view of `candidates`) that its condition
  // accepts, as indexes into `candidates`, removed from it.
  static Result<std::vector<int64_t>> TakeAccepted(const BoundClause& clause, const BatchPtr& view_rows,
                                                   std::vector<int64_t>* candidates) {
    if (!clause.condition) return std::exchange(*candidates, {});
    BatchPtr subset = Take(view_rows, *candidates);
    SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> passing, clause.condition->Filter(*subset));
    std::vector<int64_t> accepted, rest;
    size_t next = 0;
    for (size_t i = 0; i < candidates->size(); ++i) {
      if (next < passing.size() && passing[next] == static_cast<int64_t>(i)) {
        accepted.push_back((*candidates)[i]);
        ++next;
      } else {
        rest.push_back((*candidates)[i]);
      }
    }
    *candidates = std::move(rest);
    return accepted;
  }

  // The written rows of an update or insert clause: `view` is the clause view of the rows,
  // `target` the target rows (updates), `source` the source rows (UPDATE SET *, INSERT *).
  Result<BatchPtr> Values(const BoundClause& clause, const BatchPtr& view, const BatchPtr& target,
                          const BatchPtr& source) const {
    std::vector<ColumnPtr> columns;
    const int64_t n = view->num_rows();
    for (size_t c = 0; c < clause.values.size(); ++c) {
      const ColumnValue& value = clause.values[c];
      switch (value.kind) {
        case ColumnValue::kTarget: columns.push_back(target->column(static_cast<int>(c))); break;
        case ColumnValue::kNull: columns.push_back(MakeNullColumn(table_schema_->field(static_cast<int>(c)).type, n)); break;
        case ColumnValue::kView: {
          SLUICE_ASSIGN_OR_RETURN(ColumnPtr column, value.expression->Evaluate(*view));
          columns.push_back(std::move(column));
          break;
        }
        case ColumnValue::kSource: {
          SLUICE_ASSIGN_OR_RETURN(ColumnPtr column, value.expression->Evaluate(*source));
          columns.push_back(std::move(column));
          break;
        }
      }
    }
    return RecordBatch::Make(table_schema_, std::move(columns), n);
  }

  // Writes rows of the table schema. On a table that tracks row ids, `ids` are the rows' ids and
  // commit versions to keep: the ids of rows copied or updated, the versions of rows copied (an
  // updated row takes the commit's version, an inserted one a new id too).
  Status Write(const BatchPtr& rows, RowIds ids = {}) {
    if (rows->num_rows() == 0) return Status::OK();
    if (!writer_) {
      SLUICE_ASSIGN_OR_RETURN(writer_, DataFileWriter::Open(*fs_, table_path_, mapped_schema_,
                                                            *txn_->effective_metadata(), now_, row_tracking_));
    }
    if (!row_tracking_) return writer_->Write(rows);
    std::vector<Field> fields = rows->schema()->fields();
    std::vector<ColumnPtr> columns = rows->columns();
    for (const auto& [name, column] : {std::pair{kRowIdColumn, ids.row_ids}, {kRowCommitVersionColumn, ids.row_commit_versions}}) {
      fields.push_back(Field{std::string(name), DataType::Long(), true});
      columns.push_back(column ? column : MakeNullColumn(DataType::Long(), rows->num_rows()));
    }
    SLUICE_ASSIGN_OR_RETURN(TypePtr schema, DataType::Struct(std::move(fields)));
    SLUICE_ASSIGN_OR_RETURN(BatchPtr tracked, RecordBatch::Make(std::move(schema), std::move(columns), rows->num_rows()));
    return writer_->Write(tracked);
  }

  Status MergeFile(const AddFile& file) {
    // With deletion vectors, unchanged rows are never written again: the columns that decide
    // what happens to each row are read first, and the whole rows only of a file with updates.
    const std::optional<std::vector<std::string>> columns =
        deletion_vectors_ ? deciding_columns_ : std::optional<std::vector<std::string>>();
    RowIds ids;
    SLUICE_ASSIGN_OR_RETURN(BatchPtr rows, ReadFile(file, columns, &ids));
    const int64_t n = rows ? rows->num_rows() : 0;
    if (n == 0) return Status::OK();
    SLUICE_ASSIGN_OR_RETURN(BatchPtr target_rows_view, target_view_->Rows({rows}, n));
    std::vector<ColumnPtr> target_keys;
    for (const expr::BoundExpression& key : target_keys_) {
      SLUICE_ASSIGN_OR_RETURN(ColumnPtr column, key.Evaluate(*target_rows_view));
      target_keys.push_back(std::move(column));
    }
    // Per target row: -1 unpaired, else the number of pairs counted for the ambiguity check;
    // and the clause (index into clauses_) that acts on it with the pair it acts with.
    std::vector<int32_t> pair_count(static_cast<size_t>(n), 0);
    std::vector<int32_t> row_clause(static_cast<size_t>(n), -1);
    std::vector<int64_t> row_pair_source(static_cast<size_t>(n), -1);
    std::vector<bool> paired(static_cast<size_t>(n), false);
    // Without keys every target row pairs with every source row: chunks bound the pairs held.
    const int64_t chunk = target_keys_.empty() ? std::max<int64_t>(1, (int64_t{1} << 20) / std::max<int64_t>(1, source_->num_rows())) : n;
    std::vector<int64_t> pair_target, pair_source;
    for (int64_t begin = 0; begin < n; begin += chunk) {
      const int64_t end = std::min(n, begin + chunk);
      SLUICE_RETURN_IF_ERROR(ProposePairs(target_keys, begin, end, &pair_target, &pair_source));
      if (pair_target.empty()) continue;
      SLUICE_ASSIGN_OR_RETURN(BatchPtr joined, joined_view_->Rows({Take(rows, pair_target), Take(source_, pair_source)},
                                                                  static_cast<int64_t>(pair_target.size())));
      SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> on, on_->Filter(*joined));
      if (on.empty()) continue;
      for (int64_t p : on) {
        paired[static_cast<size_t>(pair_target[static_cast<size_t>(p)])] = true;
        source_matched_[static_cast<size_t>(pair_source[static_cast<size_t>(p)])] = true;
      }
      if (!has_matched_) continue;
      // Each pair takes the first WHEN MATCHED clause whose condition holds.
      std::vector<int32_t> pair_clause(on.size(), -1);
      std::vector<int64_t> remaining(on.size());
      for (size_t i = 0; i < on.size(); ++i) remaining[i] = static_cast<int64_t>(i);
      BatchPtr on_pairs = Take(joined, on);
      for (size_t c = 0; c < clauses_.size() && !remaining.empty(); ++c) {
        if (clauses_[c].match != MergeMatch::kMatched) continue;
        SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> accepted, TakeAccepted(clauses_[c], on_pairs, &remaining));
        for (int64_t i : accepted) pair_clause[static_cast<size_t>(i)] = static_cast<int32_t>(c);
      }
      for (size_t i = 0; i < on.size(); ++i) {
        const int64_t t = pair_target[static_cast<size_t>(on[i])];
        if (!matched_only_counting() || pair_clause[i] >= 0) ++pair_count[static_cast<size_t>(t)];
        if (pair_clause[i] >= 0) {
          row_clause[static_cast<size_t>(t)] = pair_clause[i];
          row_pair_source[static_cast<size_t>(t)] = pair_source[static_cast<size_t>(on[i])];
        }
      }
    }
    if (has_matched_ && !single_unconditional_delete()) {
      for (int64_t t = 0; t < n; ++t) {
        if (pair_count[static_cast<size_t>(t)] > 1) {
          return Status::Error(errors::kDeltaMultipleSourceRowMatchingTargetRowInMerge,
                               fmt::format("cannot perform MERGE into '{}': {} source rows matched the same target row "
                                           "(of data file {}) and tried to modify it; make the source rows unique on "
                                           "the join condition `{}`",
                                           table_path_, pair_count[static_cast<size_t>(t)], file.path, spec_.on.ToSql()));
        }
      }
    }
    // Unpaired target rows take the first WHEN NOT MATCHED BY SOURCE clause whose condition holds.
    if (has_not_matched_by_source_) {
      std::vector<int64_t> unpaired;
      for (int64_t t = 0; t < n; ++t) {
        if (!paired[static_cast<size_t>(t)]) unpaired.push_back(t);
      }
      for (size_t c = 0; c < clauses_.size() && !unpaired.empty(); ++c) {
        if (clauses_[c].match != MergeMatch::kNotMatchedBySource) continue;
        SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> accepted, TakeAccepted(clauses_[c], target_rows_view, &unpaired));
        for (int64_t t : accepted) row_clause[static_cast<size_t>(t)] = static_cast<int32_t>(c);
      }
    }
    // The file is rewritten when a row of it is updated or deleted.
    std::vector<int64_t> copied;
    std::vector<std::vector<int64_t>> updated(clauses_.size());
    int64_t deleted = 0;
    for (int64_t t = 0; t < n; ++t) {
      const int32_t c = row_clause[static_cast<size_t>(t)];
      if (c < 0) {
        copied.push_back(t);
      } else if (clauses_[static_cast<size_t>(c)].action == MergeActionKind::kDelete) {
        ++deleted;
      } else {
        updated[static_cast<size_t>(c)].push_back(t);
      }
    }
    if (copied.size() == static_cast<size_t>(n)) return Status::OK();
    if (deletion_vectors_ && !copied.empty()) {
      SLUICE_RETURN_IF_ERROR(MarkDeleted(file, copied, n));
    } else {
      SLUICE_RETURN_IF_ERROR(Write(Take(rows, copied), ids.Take(copied, true)));
      result_.num_rows_copied += static_cast<int64_t>(copied.size());
      result_.num_files_removed += 1;
      txn_->Remove(RemovalOf(file, now_));
    }
    BatchPtr whole = rows;
    const bool any_update = std::any_of(updated.begin(), updated.end(), [](const auto& rows) { return !rows.empty(); });
    if (columns && any_update) {
      SLUICE_ASSIGN_OR_RETURN(whole, ReadFile(file, std::nullopt, &ids));
      if (whole == nullptr || whole->num_rows() != n) {
        return Status::Error(errors::kIoError,
                             fmt::format("data file '{}' gave another number of rows when read again", file.path));
      }
    }
    for (size_t c = 0; c < clauses_.size(); ++c) {
      const std::vector<int64_t>& targets = updated[c];
      if (targets.empty()) continue;
      BatchPtr target = Take(whole, targets);
      BatchPtr view, source;
      if (clauses_[c].match == MergeMatch::kMatched) {
        std::vector<int64_t> sources;
        for (int64_t t : targets) sources.push_back(row_pair_source[static_cast<size_t>(t)]);
        source = Take(source_, sources);
        SLUICE_ASSIGN_OR_RETURN(view, joined_view_->Rows({target, source}, target->num_rows()));
      } else {
        SLUICE_ASSIGN_OR_RETURN(view, target_view_->Rows({target}, target->num_rows()));
      }
      SLUICE_ASSIGN_OR_RETURN(BatchPtr values, Values(clauses_[c], view, target, source));
      SLUICE_RETURN_IF_ERROR(Write(values, ids.Take(targets, false)));
      result_.num_rows_updated += values->num_rows();
    }
    result_.num_rows_deleted += deleted;
    return Status::OK();
  }

  // Leaves `file` in place with a deletion vector that also deletes its live rows other than
  // `kept` (indexes among its `live` rows, ascending): the file is removed and added again with
  // the new vector, which holds the old one's rows too.
  Status MarkDeleted(const AddFile& file, const std::vector<int64_t>& kept, int64_t live) {
    RowRanges old_deleted;
    if (file.deletion_vector) {
      SLUICE_ASSIGN_OR_RETURN(old_deleted, LoadDeletionVector(*fs_, table_path_, *file.deletion_vector));
    }
    // The physical row index of each live row not kept.
    std::vector<uint64_t> removed;
    removed.reserve(static_cast<size_t>(live) - kept.size());
    size_t next_kept = 0, next_range = 0;
    uint64_t physical = 0;
    for (int64_t index = 0; index < live; ++index, ++physical) {
      while (next_range < old_deleted.size() && old_deleted[next_range].first <= physical) {
        physical = std::max(physical, old_deleted[next_range].second);
        ++next_range;
      }
      if (next_kept < kept.size() && kept[next_kept] == index) {
        ++next_kept;
      } else {
        removed.push_back(physical);
      }
    }
    const RowRanges deleted = UnionOf(old_deleted, RangesOf(removed));
    SLUICE_ASSIGN_OR_RETURN(DeletionVectorDescriptor descriptor, StoreDeletionVector(*fs_, table_path_, deleted));
    AddFile marked = file;
    marked.deletion_vector = std::move(descriptor);
    marked.data_change = true;
    marked.modification_time = now_;
    // The statistics describe the data file: after the deletion their bounds are wide.
    if (marked.stats && marked.stats->starts_with("{") && marked.stats->find("\"tightBounds\"") == std::string::npos) {
      marked.stats = "{\"tightBounds\":false" + (marked.stats->size() > 2 ? "," + marked.stats->substr(1) : "}");
    }
    txn_->Remove(RemovalOf(file, now_));
    txn_->Add(std::move(marked));
    result_.num_deletion_vectors_added += 1;
    return Status::OK();
  }

  // Source rows paired with no target row take the first WHEN NOT MATCHED clause whose condition
  // holds.
  Status InsertUnmatched() {
    std::vector<int64_t> unmatched;
    for (int64_t s = 0; s < source_->num_rows(); ++s) {
      if (!source_matched_[static_cast<size_t>(s)]) unmatched.push_back(s);
    }
    if (unmatched.empty()) return Status::OK();
    SLUICE_ASSIGN_OR_RETURN(BatchPtr view, source_view_->Rows({source_}, source_->num_rows()));
    for (const BoundClause& clause : clauses_) {
      if (clause.match != MergeMatch::kNotMatched || unmatched.empty()) continue;
      SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> accepted, TakeAccepted(clause, view, &unmatched));
      if (accepted.empty()) continue;
      SLUICE_ASSIGN_OR_RETURN(BatchPtr values, Values(clause, Take(view, accepted), nullptr, Take(source_, accepted)));
      SLUICE_RETURN_IF_ERROR(Write(values));
      result_.num_rows_inserted += values->num_rows();
    }
    return Status::OK();
  }

  // With WHEN MATCHED clauses only, a pair counts toward ambiguity when a clause accepts it.
  bool matched_only_counting() const {
    return std::all_of(clauses_.begin(), clauses_.end(), [](const BoundClause& c) { return c.match == MergeMatch::kMatched; });
  }
  bool single_unconditional_delete() const {
    int matched = 0;
    bool unconditional_delete = false;
    for (const BoundClause& c : clauses_) {
      if (c.match != MergeMatch::kMatched) continue;
      ++matched;
      unconditional_delete = c.action == MergeActionKind::kDelete && !c.condition;
    }
    return matched == 1 && unconditional_delete;
  }

  StringMap Metrics(std::string_view operation) const {
    auto text = [](int64_t v) { return std::to_string(v); };
    if (operation == kOperationMerge) {
      return {{"numSourceRows", text(result_.num_source_rows)},
              {"numTargetRowsInserted", text(result_.num_rows_inserted)},
              {"numTargetRowsUpdated", text(result_.num_rows_updated)},
              {"numTargetRowsDeleted", text(result_.num_rows_deleted)},
              {"numTargetRowsCopied", text(result_.num_rows_copied)},
              {"numTargetFilesAdded", text(result_.num_files_added)},
              {"numTargetFilesRemoved", text(result_.num_files_removed)},
              {"numTargetFilesBeforeSkipping", text(result_.num_files_total)},
              {"numTargetDeletionVectorsAdded", text(result_.num_deletion_vectors_added)},
              {"numTargetFilesAfterSkipping", text(result_.num_files_scanned)},
              {"numOutputRows", text(result_.num_rows_inserted + result_.num_rows_updated + result_.num_rows_copied)}};
    }
    StringMap metrics = {{"numAddedFiles", text(result_.num_files_added)},
                         {"numDeletionVectorsAdded", text(result_.num_deletion_vectors_added)},
                         {"numRemovedFiles", text(result_.num_files_removed)},
                         {"numCopiedRows", text(result_.num_rows_copied)}};
    if (operation == kOperationUpdate) metrics.emplace("numUpdatedRows", text(result_.num_rows_updated));
    if (operation == kOperationDelete) metrics.emplace("numDeletedRows", text(result_.num_rows_deleted));
    return metrics;
  }

  std::shared_ptr<FileSystem> fs_;
  std::string table_path_;
  const MergeSpec& spec_;
  std::unique_ptr<Transaction> txn_;
  SnapshotPtr snapshot_;
  BatchPtr source_;
  // The schema the commit leaves, as rows hold it (table_schema_) and with its column mapping
  // (mapped_schema_: the physical names of statistics, partition values and data files).
  TypePtr table_schema_;
  TypePtr mapped_schema_;
  std::optional<RowView> target_view_, source_view_, joined_view_;
  std::optional<expr::BoundExpression> on_;
  std::vector<BoundClause> clauses_;
  bool has_matched_ = false;
  bool has_not_matched_by_source_ = false;
  std::vector<expr::BoundExpression> target_keys_, source_keys_;
  std::vector<expr::Expression> key_targets_;        // the target side of each key, unqualified
  std::vector<expr::Expression> target_conjuncts_;   // ON conjuncts over the target alone, unqualified
  std::vector<ColumnPtr> source_key_columns_;
  std::unique_ptr<GroupKeys> keys_;
  std::vector<int64_t> group_start_, group_rows_;
  std::vector<bool> source_matched_;
  std::unique_ptr<DataFileWriter> writer_;
  bool deletion_vectors_ = false;
  std::optional<std::vector<std::string>> deciding_columns_;  // with deletion vectors
  bool row_tracking_ = false;
  int64_t now_ = 0;
  DmlResult result_;
};

// A JSON array of the clauses of one kind: [{"predicate": ..., "actionType": ...}], as Delta's
// commitInfo writes them.
std::string ClausesParameter(const std::vector<expr::MergeClause>& clauses, MergeMatch match) {
  std::string out = "[";
  for (const expr::MergeClause& clause : clauses) {
    if (clause.match != match) continue;
    if (out.size() > 1) out += ',';
    bool first = true;
    out += '{';
    if (clause.condition) {
      json::AppendKey("predicate", &first, &out);
      json::AppendString(clause.condition->ToSql(), &out);
    }
    json::AppendKey("actionType", &first, &out);
    switch (clause.action) {
      case MergeActionKind::kUpdate: json::AppendString("update", &out); break;
      case MergeActionKind::kUpdateAll: json::AppendString("update_all", &out); break;
      case MergeActionKind::kDelete: json::AppendString("delete", &out); break;
      case MergeActionKind::kInsert: json::AppendString("insert", &out); break;
      case MergeActionKind::kInsertAll: json::AppendString("insert_all", &out); break;
    }
    out += '}';
  }
  return out + "]";
}

std::string PredicateParameter(const std::optional<expr::Expression>& predicate) {
  std::string out;
  AppendJsonStringArray(&out, {predicate ? predicate->ToSql() : std::string("true")});
  return out;
}

// UPDATE and DELETE are a MERGE with no source rows whose one clause acts on every target row
// WHERE holds (WHEN NOT MATCHED BY SOURCE AND where).
Result<DmlResult> RunOnTarget(std::shared_ptr<FileSystem> fs, const std::string& table_path, expr::MergeClause clause,
                              const std::string& target_alias, std::vector<SetTransaction> transactions,
                              expr::SqlOptions sql, std::string_view operation) {
  MergeSpec spec;
  spec.target_alias = target_alias;
  SLUICE_ASSIGN_OR_RETURN(spec.on, expr::Expression::Parse("false"));
  clause.match = MergeMatch::kNotMatchedBySource;
  const std::optional<expr::Expression> where = clause.condition;
  spec.clauses = {std::move(clause)};
  spec.transactions = std::move(transactions);
  spec.sql = sql;
  SLUICE_ASSIGN_OR_RETURN(TypePtr nothing, DataType::Struct({}));
  SLUICE_ASSIGN_OR_RETURN(BatchPtr empty, RecordBatch::Make(nothing, {}, 0));
  MergeRun run(std::move(fs), table_path, spec);
  return run.Run({empty}, operation, {{"predicate", PredicateParameter(where)}});
}

}  // namespace

Result<DmlResult> MergeInto(std::shared_ptr<FileSystem> fs, const std::string& table_path,
                            const std::vector<BatchPtr>& source, const MergeSpec& spec) {
  StringMap parameters = {{"predicate", PredicateParameter(spec.on)},
                          {"matchedPredicates", ClausesParameter(spec.clauses, MergeMatch::kMatched)},
                          {"notMatchedPredicates", ClausesParameter(spec.clauses, MergeMatch::kNotMatched)},
                          {"notMatchedBySourcePredicates", ClausesParameter(spec.clauses, MergeMatch::kNotMatchedBySource)}};
  MergeRun run(std::move(fs), table_path, spec);
  return run.Run(source, kOperationMerge, std::move(parameters));
}

Result<DmlResult> UpdateTable(std::shared_ptr<FileSystem> fs, const std::string& table_path, const UpdateSpec& spec) {
  if (spec.assignments.empty()) return Status::Error(errors::kInvalidArgument, "an UPDATE needs at least one SET column");
  expr::MergeClause clause{.condition = spec.where, .action = MergeActionKind::kUpdate, .assignments = spec.assignments};
  return RunOnTarget(std::move(fs), table_path, std::move(clause), spec.target_alias, spec.transactions, spec.sql,
                     kOperationUpdate);
}

Result<DmlResult> DeleteFromTable(std::shared_ptr<FileSystem> fs, const std::string& table_path, const DeleteSpec& spec) {
  expr::MergeClause clause{.condition = spec.where, .action = MergeActionKind::kDelete};
  return RunOnTarget(std::move(fs), table_path, std::move(clause), spec.target_alias, spec.transactions, spec.sql,
                     kOperationDelete);
}

}  // namespace sluice::delta
