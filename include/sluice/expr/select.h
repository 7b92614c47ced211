// A flow's SQL: one SELECT statement, and the aggregation it may describe, bound to the schema of
// the rows it reads.
//
//   SELECT item_id, sum(quantity) AS total FROM STREAM(main.cdc.lb_orders_history)
//   WHERE quantity > 0 GROUP BY item_id HAVING count(*) > 1
//
// Binding an aggregation splits it into what is computed per input row (the grouping keys and
// the aggregate functions' arguments) and what is computed per group (the select items and
// HAVING, over the keys and the aggregates' results). Errors, besides the expression errors of
// expression.h:
//   MISSING_AGGREGATION        a select item or HAVING reads a column outside an aggregate
//                              function that is not a grouping key.
//   NESTED_AGGREGATE_FUNCTION  an aggregate function inside another one's argument.
//   INVALID_WHERE_CONDITION    an aggregate function in WHERE.
//   UNSUPPORTED_GROUPING_EXPRESSION  an aggregate function in GROUP BY.
// The values are immutable once made and safe to share between threads.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/status.h"
#include "sluice/core/types.h"
#include "sluice/expr/expression.h"

namespace sluice::expr {

struct SelectStatement {
  std::vector<NamedExpression> items;  // empty for `SELECT *`
  std::vector<std::string> from;       // the table name's parts, as written; empty without FROM
  bool streaming = false;              // FROM STREAM(name): read incrementally
  std::optional<Expression> where;
  std::vector<Expression> group_by;
  std::optional<Expression> having;

  // GROUP BY, HAVING, or an aggregate function among the items: one row per group.
  bool is_aggregation() const;
  // The table name as one dotted string ("main.cdc.orders").
  std::string from_name() const;
  // The names of the items that are grouping keys as they are (`item_id`, `k AS key`), in item
  // order, when they cover every key: together they identify a row of the result (a sink's
  // upsert key). nullopt when some key is not selected as it is, or when there is no GROUP BY.
  std::optional<std::vector<std::string>> GroupKeyColumns() const;
};
// Without FROM the items are over one row of no columns (`SELECT 1 AS id`), as in Spark.
// PARSE_SYNTAX_ERROR (with line:column) for text that is not one SELECT statement of this form;
// `SELECT *` with GROUP BY or HAVING is refused there too.
Result<SelectStatement> ParseSelect(std::string_view sql);

// Whether `name` is an aggregate function (count, sum, avg, mean, min, max, first, last,
// collect_list, array_agg, collect_set, approx_count_distinct).
bool IsAggregateFunction(std::string_view name);

// One aggregate function of an aggregation.
struct AggregateCall {
  // Canonical lower-case name: "mean" is "avg", "array_agg" is "collect_list", and
  // count(DISTINCT x) is "count_distinct".
  std::string function;
  // Rows are counted or accumulated when every argument is non-null (count); first/last with
  // ignore_nulls skip null values, without it take the first/last row's value, null or not.
  bool ignore_nulls = false;
  // The arguments over the input rows (none for count(*)), already of the type the function
  // accumulates: sum over integral values gets bigint, sum over floating point or text and avg
  // over anything but decimals double.
  std::vector<BoundExpression> arguments;
  TypePtr result_type;
  std::string sql;  // as written, for messages and column names ("sum(quantity)")
  double relative_sd = 0.05;  // approx_count_distinct's second argument (Spark's default)
};

struct BoundAggregation {
  std::vector<BoundExpression> keys;  // the GROUP BY expressions over the input rows
  std::vector<AggregateCall> aggregates;
  // The schema the per-group expressions read: one field per key, then one per aggregate, each
  // named by its SQL text.
  TypePtr grouped_schema;
  std::vector<BoundExpression> outputs;  // the select items over grouped_schema
  TypePtr output_schema;                 // the items' names and types
  std::optional<BoundExpression> having;  // over grouped_schema
};

// Binds the aggregation of `select` (which must be one) to `input_schema`, the rows after WHERE.
Result<BoundAggregation> BindAggregation(const SelectStatement& select, const TypePtr& input_schema,
                                         SqlOptions options = {});

}  // namespace sluice::expr
