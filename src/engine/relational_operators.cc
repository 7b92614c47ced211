#include "sluice/engine/relational_operators.h"

#include "sluice/core/compute.h"
#include "sluice/core/ascii.h"
#include "sluice/core/error_classes.h"

namespace sluice::engine {

FilterOperator::FilterOperator(expr::Expression condition, expr::SqlOptions sql, std::string context)
    : condition_(std::move(condition)), sql_(sql), context_(std::move(context)) {}

Result<TypePtr> FilterOperator::Bind(const TypePtr& input) {
  Result<expr::BoundExpression> bound = expr::BindPredicate(condition_, input, sql_);
  if (!bound.ok()) return bound.status().WithContext(context_);
  bound_ = std::move(bound).value();
  return input;
}

Status FilterOperator::BeginBatch(const BatchStart& /*batch*/) {
  batch_rows_ = 0;
  return Status::OK();
}

Result<BatchPtr> FilterOperator::Push(const BatchStart& batch, const BatchPtr& piece) {
  // Rows are numbered across the batch's pieces, so that uuid() never repeats within a batch.
  SLUICE_RETURN_IF_ERROR(bound_->Filter(*piece, batch.timestamp_micros, &selection_, batch_rows_));
  batch_rows_ += piece->num_rows();
  if (static_cast<int64_t>(selection_.size()) == piece->num_rows()) return piece;
  return Take(piece, selection_);
}

ProjectOperator::ProjectOperator(std::vector<expr::NamedExpression> items, expr::SqlOptions sql, std::string context)
    : items_(std::move(items)), sql_(sql), context_(std::move(context)) {
  for (const expr::NamedExpression& item : items_) generates_ = generates_ || expr::IsGeneratorCall(item.expression);
}

Result<TypePtr> ProjectOperator::Bind(const TypePtr& input) {
  std::vector<BoundItem> bound;
  std::vector<Field> fields;
  for (const expr::NamedExpression& item : items_) {
    const std::string item_context = context_ + " '" + item.name + "'";
    if (expr::IsGeneratorCall(item.expression)) {
      Result<expr::BoundGenerator> generator = expr::BindGenerator(item, input, sql_);
      if (!generator.ok()) return generator.status().WithContext(item_context);
      for (const Field& field : generator->fields()) fields.push_back(field);
      bound.push_back(BoundItem{std::nullopt, std::move(generator).value()});
      continue;
    }
    Result<expr::BoundExpression> expression = expr::Bind(item.expression, input, sql_);
    if (!expression.ok()) {
      Status status = expression.status();
      // A generator inside another expression: Spark's class for it, not the binder's.
      if (status.error_class() == errors::kUnsupportedGenerator) {
        status = Status::Error(errors::kUnsupportedGenerator,
                               "NESTED_IN_EXPRESSIONS: a generator cannot be nested in an expression, as in " +
                                   item.expression.ToSql());
      }
      return status.WithContext(item_context);
    }
    fields.push_back(Field{item.name, expression->result_type(), expression->nullable()});
    bound.push_back(BoundItem{std::move(expression).value(), std::nullopt});
  }
  Result<TypePtr> schema = DataType::Struct(std::move(fields));
  if (!schema.ok()) return schema.status().WithContext(context_);
  bound_ = std::move(bound);
  output_schema_ = std::move(schema).value();
  return output_schema_;
}

Status ProjectOperator::BeginBatch(const BatchStart& /*batch*/) {
  batch_rows_ = 0;
  return Status::OK();
}

Result<BatchPtr> ProjectOperator::Push(const BatchStart& batch, const BatchPtr& piece) {
  const int64_t first_row = batch_rows_;
  batch_rows_ += piece->num_rows();
  // Each item's columns, all over the same rows: at first the piece's, then those each generator
  // gives (each evaluated over the rows the generators before it gave).
  std::vector<std::vector<ColumnPtr>> columns(bound_.size());
  for (size_t i = 0; i < bound_.size(); ++i) {
    if (!bound_[i].expression) continue;
    SLUICE_ASSIGN_OR_RETURN(ColumnPtr column, bound_[i].expression->Evaluate(*piece, batch.timestamp_micros, first_row));
    columns[i].push_back(std::move(column));
  }
  BatchPtr rows = piece;
  int64_t length = piece->num_rows();
  size_t generators_left = 0;
  for (const BoundItem& item : bound_) generators_left += item.generator ? 1 : 0;
  for (size_t i = 0; i < bound_.size(); ++i) {
    if (!bound_[i].generator) continue;
    SLUICE_ASSIGN_OR_RETURN(expr::GeneratedRows generated, bound_[i].generator->Generate(*rows, batch.timestamp_micros, first_row));
    for (std::vector<ColumnPtr>& item_columns : columns) {
      for (ColumnPtr& column : item_columns) column = Take(column, generated.parents);
    }
    columns[i] = std::move(generated.columns);
    length = static_cast<int64_t>(generated.parents.size());
    if (--generators_left > 0) rows = Take(rows, generated.parents);
  }
  return Assemble(std::move(columns), length);
}

Result<BatchPtr> ProjectOperator::Assemble(std::vector<std::vector<ColumnPtr>> columns, int64_t length) const {
  std::vector<ColumnPtr> flat;
  flat.reserve(output_schema_->fields().size());
  for (std::vector<ColumnPtr>& item_columns : columns) {
    for (ColumnPtr& column : item_columns) flat.push_back(std::move(column));
  }
  return RecordBatch::Make(output_schema_, std::move(flat), length);
}

AggregateOperator::AggregateOperator(expr::SelectStatement statement, OutputMode mode, expr::SqlOptions sql,
                                     std::string context)
    : statement_(std::move(statement)), mode_(mode), sql_(sql), context_(std::move(context)) {}

namespace {

bool NamedAny(std::string_view name, std::initializer_list<std::string_view> names) {
  for (std::string_view candidate : names) {
    if (EqualsIgnoreCase(name, candidate)) return true;
  }
  return false;
}

// The column telling a change row's kind: a change feed's history has `_pg_change_type`, Delta's
// change data feed `_change_type` (insert, update_preimage, update_postimage, delete).
bool IsChangeTypeColumn(std::string_view name) { return NamedAny(name, {"_pg_change_type", "_change_type"}); }

// The columns describing a change rather than a row's values.
bool IsChangeColumn(std::string_view name) {
  return IsChangeTypeColumn(name) ||
         NamedAny(name, {"_pg_lsn", "_pg_xid", "_timestamp", "_commit_version", "_commit_timestamp"});
}

// Over a changelog each row is a change, not a current row. sum, count and avg weigh changes as
// the statement says (the inventory example's CASE on the change type), but min and max of a
// row's values would keep values that rows held before they were updated or deleted, which no
// weighing takes back: refused, unless the argument reads the change type (it says how each
// change counts) or only reads the change columns (max(_timestamp): the last change).
Status CheckChangelogAggregates(const TypePtr& input, const expr::BoundAggregation& plan) {
  bool changelog = false;
  for (const Field& field : input->fields()) changelog = changelog || IsChangeTypeColumn(field.name);
  if (!changelog) return Status::OK();
  for (const expr::AggregateCall& call : plan.aggregates) {
    if (call.function != "min" && call.function != "max") continue;
    Result<expr::Expression> parsed = expr::Expression::Parse(call.sql);
    if (!parsed.ok()) continue;
    bool reads_change_type = false;
    bool reads_values = false;
    for (const std::string& column : parsed->ReferencedColumns()) {
      reads_change_type = reads_change_type || IsChangeTypeColumn(column);
      reads_values = reads_values || !IsChangeColumn(column);
    }
    if (reads_values && !reads_change_type) {
      return Status::Error(
          errors::kUnsupportedChangelogAggregate,
          call.sql + " over a changelog (its rows are changes, with a _pg_change_type or _change_type column) would "
                     "keep values that rows held before they were updated or deleted; aggregate the change columns "
                     "(max(_timestamp)), or read the change type in the argument to say how each change counts "
                     "(max(CASE WHEN _pg_change_type <> 'delete' THEN x END): the highest value any row ever held)");
    }
  }
  return Status::OK();
}

}  // namespace

Result<TypePtr> AggregateOperator::Bind(const TypePtr& input) {
  Result<expr::BoundAggregation> plan = expr::BindAggregation(statement_, input, sql_);
  if (!plan.ok()) return plan.status().WithContext(context_);
  if (Status changes = CheckChangelogAggregates(input, *plan); !changes.ok()) return changes.WithContext(context_);
  TypePtr output_schema = plan->output_schema;
  Result<std::unique_ptr<HashAggregation>> groups = HashAggregation::Make(std::move(plan).value(), sql_);
  if (!groups.ok()) return groups.status().WithContext(context_);
  groups_ = std::move(groups).value();
  no_rows_ = RecordBatch::Empty(output_schema);
  return output_schema;
}

Status AggregateOperator::BeginBatch(const BatchStart& /*batch*/) {
  groups_->NewBatch();
  return Status::OK();
}

Result<BatchPtr> AggregateOperator::Push(const BatchStart& batch, const BatchPtr& piece) {
  SLUICE_RETURN_IF_ERROR(groups_->Add(*piece, batch.timestamp_micros));
  return no_rows_;
}

Result<BatchPtr> AggregateOperator::Finish(const BatchStart& batch) {
  return groups_->Output(mode_, batch.timestamp_micros);
}

DeduplicateOperator::DeduplicateOperator(std::vector<std::string> columns, expr::SqlOptions sql, std::string context)
    : columns_(std::move(columns)), sql_(sql), context_(std::move(context)) {}

Result<TypePtr> DeduplicateOperator::Bind(const TypePtr& input) {
  Result<std::unique_ptr<Deduplication>> seen = Deduplication::Make(columns_, input, sql_);
  if (!seen.ok()) return seen.status().WithContext(context_);
  seen_ = std::move(seen).value();
  return input;
}

}  // namespace sluice::engine
