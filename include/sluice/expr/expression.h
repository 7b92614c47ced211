// Spark SQL expressions: parse once, bind to a schema, evaluate over whole record batches.
//
//   SLUICE_ASSIGN_OR_RETURN(auto expr, expr::Expression::Parse("value.amount > 10.0"));
//   SLUICE_ASSIGN_OR_RETURN(auto bound, expr::Bind(expr, batch->schema()));
//   SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> rows, bound.Filter(*batch));
//   BatchPtr kept = Take(batch, rows);
//
// The language, coercion rules and null semantics are Spark SQL's, in ANSI mode (Spark 4's
// default) or not, as SqlOptions say (docs/sql-expressions.md). Errors of binding:
//   PARSE_SYNTAX_ERROR   the text is not an expression; the message starts "at line:column:".
//   UNRESOLVED_COLUMN    a column path names no field; the message lists the closest names.
//   UNRESOLVED_ROUTINE   an unknown function; WRONG_NUM_ARGS a wrong number of arguments.
//   DATATYPE_MISMATCH    operand types that the operator or function cannot take, or a
//                        non-boolean filter.
//   INVALID_PARAMETER_VALUE  a constant argument with a bad value (regex pattern, sha2 bits).
//   NOT_IMPLEMENTED      evaluating an aggregate function row by row: aggregates are computed by
//                        an aggregation (select.h, engine/hash_aggregation.h), not here.
// Errors of evaluation, in ANSI mode, for a row whose value cannot be computed (docs/errors.md):
//   CAST_INVALID_INPUT, CAST_OVERFLOW, NUMERIC_VALUE_OUT_OF_RANGE, ARITHMETIC_OVERFLOW,
//   DIVIDE_BY_ZERO, REMAINDER_BY_ZERO, INVALID_ARRAY_INDEX, INVALID_ARRAY_INDEX_IN_ELEMENT_AT,
//   CANNOT_PARSE_TIMESTAMP; and in every mode INVALID_INDEX_OF_ZERO. Rows a CASE, IF, coalesce,
//   AND or OR does not pass to an argument never fail in it.
//
// Expression and BoundExpression are immutable values, cheap to copy (they share their tree),
// and safe to use from several threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sluice/core/column.h"
#include "sluice/core/record_batch.h"
#include "sluice/core/status.h"
#include "sluice/core/types.h"

namespace sluice::expr {

struct Node;
struct BoundRoot;
struct ColumnComparison;

// A parsed, not yet type-checked expression.
class Expression {
 public:
  static Result<Expression> Parse(std::string_view sql);

  // SQL text that parses back to the same tree (operators fully parenthesized).
  std::string ToSql() const;
  // The top-level column names the expression reads (first element of each dot path, as written).
  std::vector<std::string> ReferencedColumns() const;
  // The operands of the expression's top-level AND chain, or the expression alone: a row passes
  // the expression exactly when it passes every one of them.
  std::vector<Expression> Conjuncts() const;
  // The expression as a comparison of one column with a constant, when it is one.
  std::optional<ColumnComparison> AsColumnComparison() const;
  // The path of a column reference (`id`, `t.id`, `value.amount`), when the expression is one.
  std::optional<std::vector<std::string>> AsColumnPath() const;
  // The two operands of `a = b` (or `a == b`), when the expression is one.
  std::optional<std::pair<Expression, Expression>> AsEquality() const;
  // The expression with every column path that starts with `qualifier.` (a table alias, matched
  // ignoring case) shortened by it: `t.amount > 0` without `t` is `amount > 0`.
  Expression WithoutQualifier(std::string_view qualifier) const;

  const Node& node() const { return *root_; }
  const std::shared_ptr<const Node>& node_ptr() const { return root_; }
  explicit Expression(std::shared_ptr<const Node> root) : root_(std::move(root)) {}

 private:
  std::shared_ptr<const Node> root_;
};

// `c > 5`, `5 < c`, `c = DATE '2026-01-31'`: a column compared with an expression that reads no
// column, written either way round.
struct ColumnComparison {
  std::vector<std::string> path;  // the column's dot path, as written
  std::string op;                 // "=", "<", "<=", ">" or ">=", read with the column on the left
  Expression constant;
};

// One item of a select list: `expr`, `expr AS name` or `expr name`.
struct NamedExpression {
  Expression expression;
  // The alias, or the name Spark would give the column: the last path element of a column
  // reference, else the expression's SQL text.
  std::string name;
};
Result<NamedExpression> ParseNamedExpression(std::string_view sql);

// An expression resolved against an input schema: every column found, every type known,
// implicit casts inserted, constant sub-expressions folded.
class BoundExpression {
 public:
  const TypePtr& result_type() const;
  // Whether the result can be null for some input (conservative: true unless provably not).
  bool nullable() const;

  // One value per row of `batch`, whose schema must equal the schema bound to (else
  // INVALID_ARGUMENT). The column has batch.num_rows() rows.
  Result<ColumnPtr> Evaluate(const RecordBatch& batch) const;
  // Evaluate() at the time `now_micros`: what current_timestamp() returns and uuid() draws from.
  // A caller that evaluates a batch again (a replay) and passes the same time gets the same values.
  // `first_row`: when `batch` is one piece of a larger batch, the number of rows in the pieces
  // before it, so that uuid() never gives two rows of the larger batch one value.
  Result<ColumnPtr> Evaluate(const RecordBatch& batch, int64_t now_micros, int64_t first_row = 0) const;
  // The rows (ascending) for which the expression is TRUE; false and null rows are dropped.
  // DATATYPE_MISMATCH unless result_type() is boolean.
  Result<std::vector<int64_t>> Filter(const RecordBatch& batch) const;
  // Filter() into `rows`, replacing its content but keeping its capacity: a caller that filters
  // batch after batch with the same vector touches no fresh memory once it has grown, which is
  // most of a selective filter's cost on large batches.
  Status Filter(const RecordBatch& batch, std::vector<int64_t>* rows) const;
  // Filter() into `rows` at the time `now_micros`, as Evaluate(batch, now_micros, first_row).
  Status Filter(const RecordBatch& batch, int64_t now_micros, std::vector<int64_t>* rows,
                int64_t first_row = 0) const;

  // The resolved expression as SQL, implicit casts included.
  std::string ToSql() const;

  const BoundRoot& root() const { return *root_; }
  explicit BoundExpression(std::shared_ptr<const BoundRoot> root) : root_(std::move(root)) {}

 private:
  std::shared_ptr<const BoundRoot> root_;
};

// How expressions are typed and evaluated: Spark SQL's session settings that sluice honours.
struct SqlOptions {
  // spark.sql.ansi.enabled (a pipeline's `sql: {ansi: ...}`): invalid casts, overflow, division by
  // zero and out-of-range indexes fail the evaluation with Spark's error class instead of giving
  // NULL, casts and implicit coercions follow ANSI's rules, and size(NULL) is NULL, not -1.
  bool ansi = true;
};

// Resolves `expression` against `input_schema` (a struct type).
Result<BoundExpression> Bind(const Expression& expression, const TypePtr& input_schema, SqlOptions options = {});
// Bind() for a filter or condition: additionally DATATYPE_MISMATCH unless the result is boolean.
Result<BoundExpression> BindPredicate(const Expression& expression, const TypePtr& input_schema,
                                      SqlOptions options = {});

// The windows of a GROUP BY key `window(ts, duration, slide[, start])` whose slide is shorter than
// its duration (Spark's sliding windows): a row is in every window that holds its time.
struct SlidingWindows {
  std::vector<int64_t> rows;  // per window of a row: the row's index in the batch, ascending
  ColumnPtr windows;          // the windows, as the key's struct<start, end>
};
// Whether the bound `key` is such a sliding window.
bool IsSlidingWindow(const BoundExpression& key);
// The windows of the rows of `batch` (of the key's input schema); a row whose time is null is in
// none. Errors are those of evaluating the key's time.
Result<SlidingWindows> SlidingWindowsOf(const BoundExpression& key, const RecordBatch& batch, int64_t now_micros);

// Every name Bind() accepts as a call (functions, aggregates, and operators written as calls).
std::vector<std::string_view> CallableNames();

}  // namespace sluice::expr
