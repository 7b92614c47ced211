#include "sluice/expr/select.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sluice/core/ascii.h"
#include "sluice/core/error_classes.h"
#include "expr/ast.h"
#include "expr/parser.h"

namespace sluice::expr {
namespace {

constexpr std::string_view kAggregateFunctions[] = {"count",        "sum",       "avg",         "mean",
                                                    "min",          "max",       "first",       "last",
                                                    "collect_list", "array_agg", "collect_set", "approx_count_distinct"};

bool ContainsAggregate(const Node& n) {
  if (n.kind == NodeKind::kCall && IsAggregateFunction(n.name)) return true;
  for (const NodePtr& arg : n.args) {
    if (ContainsAggregate(*arg)) return true;
  }
  return false;
}

// Whether two trees are the same expression: the same SQL, column names compared as Spark
// compares them (case-insensitively).
bool SameExpression(const Node& a, const Node& b) {
  if (a.kind == NodeKind::kColumn && b.kind == NodeKind::kColumn) {
    if (a.path.size() != b.path.size()) return false;
    for (size_t i = 0; i < a.path.size(); ++i) {
      if (!EqualsIgnoreCase(a.path[i], b.path[i])) return false;
    }
    return true;
  }
  return PrintSql(a) == PrintSql(b);
}

NodePtr ColumnNode(const std::string& field, const Node& at) {
  auto n = std::make_shared<Node>();
  n->kind = NodeKind::kColumn;
  n->line = at.line;
  n->column = at.column;
  n->path = {field};
  return n;
}

NodePtr CastNode(const NodePtr& operand, TypePtr type) {
  auto n = std::make_shared<Node>();
  n->kind = NodeKind::kCast;
  n->line = operand->line;
  n->column = operand->column;
  n->args = {operand};
  n->cast_type = std::move(type);
  n->height = operand->height + 1;
  return n;
}

// A call of `name` over `args`, where `at` is written.
NodePtr CallNode(const Node& at, std::string name, std::vector<NodePtr> args) {
  auto n = std::make_shared<Node>();
  n->kind = NodeKind::kCall;
  n->line = at.line;
  n->column = at.column;
  n->name = std::move(name);
  int height = 0;
  for (const NodePtr& arg : args) height = std::max(height, arg->height);
  n->height = height + 1;
  n->args = std::move(args);
  return n;
}

// Whether a grouping key is a time window (window(ts, ...)).
bool IsWindowKey(const Expression& key) { return key.node().kind == NodeKind::kCall && key.node().name == "window"; }

// The first grouping key that is a time window, or null.
NodePtr WindowKey(const std::vector<Expression>& group_by) {
  for (const Expression& key : group_by) {
    if (IsWindowKey(key)) return key.node_ptr();
  }
  return nullptr;
}

// `n` with the column `window` (and paths into it, `window.start`) read as `window`, the grouping
// key: Spark's name for the time window a grouping makes.
NodePtr SubstituteWindowColumn(const NodePtr& n, const NodePtr& window) {
  if (n->kind == NodeKind::kColumn && EqualsIgnoreCase(n->path[0], "window")) {
    NodePtr out = window;
    for (size_t i = 1; i < n->path.size(); ++i) {
      auto field = std::make_shared<Node>();
      field->line = n->line;
      field->column = n->column;
      field->literal.type = DataType::String();
      field->literal.text = n->path[i];
      out = CallNode(*n, "get_field", {out, field});
    }
    return out;
  }
  if (n->args.empty() || n->kind == NodeKind::kLambda) return n;
  auto copy = std::make_shared<Node>(*n);
  for (NodePtr& arg : copy->args) arg = SubstituteWindowColumn(arg, window);
  return copy;
}

// Rewrites the per-group expressions (select items, HAVING) to read the grouped schema: grouping
// keys and aggregate calls become references to its fields.
class GroupRewriter {
 public:
  explicit GroupRewriter(const std::vector<Expression>& keys) : keys_(keys) {}

  Result<NodePtr> Rewrite(const NodePtr& n, std::string_view what) {
    for (const Expression& key : keys_) {
      if (SameExpression(*n, key.node())) return ColumnNode(PrintSql(key.node()), *n);
    }
    if (n->kind == NodeKind::kCall && IsAggregateFunction(n->name)) {
      for (const NodePtr& arg : n->args) {
        if (ContainsAggregate(*arg)) {
          return Status::Error(errors::kNestedAggregateFunction,
                               fmt::format("{}: it is not allowed to use an aggregate function in the argument of "
                                           "another aggregate function ({})",
                                           what, PrintSql(*n)));
        }
      }
      std::string sql = PrintSql(*n);
      bool known = false;
      for (const NodePtr& seen : aggregates_) known = known || PrintSql(*seen) == sql;
      if (!known) aggregates_.push_back(n);
      return ColumnNode(sql, *n);
    }
    if (n->kind == NodeKind::kLambda) return n;  // its body reads its parameters, bound with it
    if (n->kind == NodeKind::kColumn) {
      return Status::Error(errors::kMissingAggregation,
                           fmt::format("{}: the non-aggregating expression {} is based on columns which are not "
                                       "participating in the GROUP BY clause; add it to GROUP BY, or wrap it in an "
                                       "aggregate function such as first() or max()",
                                       what, PrintSql(*n)));
    }
    if (n->args.empty()) return n;
    auto copy = std::make_shared<Node>(*n);
    for (NodePtr& arg : copy->args) {
      SLUICE_ASSIGN_OR_RETURN(arg, Rewrite(arg, what));
    }
    return NodePtr(copy);
  }

  const std::vector<NodePtr>& aggregates() const { return aggregates_; }

 private:
  const std::vector<Expression>& keys_;
  std::vector<NodePtr> aggregates_;
};

// HAVING with the select items' aliases replaced by their expressions (`HAVING total > 10` for
// `sum(x) AS total`), as Spark resolves HAVING against the aggregate's output first.
NodePtr SubstituteAliases(const NodePtr& n, const std::vector<NamedExpression>& items) {
  if (n->kind == NodeKind::kColumn && n->path.size() == 1) {
    for (const NamedExpression& item : items) {
      const Node& expression = item.expression.node();
      bool plain_column = expression.kind == NodeKind::kColumn && EqualsIgnoreCase(expression.path.back(), item.name);
      if (EqualsIgnoreCase(item.name, n->path[0]) && !plain_column) return item.expression.node_ptr();
    }
    return n;
  }
  if (n->args.empty()) return n;
  auto copy = std::make_shared<Node>(*n);
  for (NodePtr& arg : copy->args) arg = SubstituteAliases(arg, items);
  return copy;
}

Result<AggregateCall> BindAggregateCall(const NodePtr& call, const TypePtr& input_schema, SqlOptions options) {
  AggregateCall aggregate;
  aggregate.function = call->name == "mean" ? "avg" : call->name == "array_agg" ? "collect_list" : call->name;
  aggregate.sql = PrintSql(*call);
  if (call->distinct) {
    // count(DISTINCT x) counts the distinct values; DISTINCT changes nothing for min, max and
    // collect_set, and the others take it as Spark does only through count.
    if (aggregate.function == "count" && call->args.size() == 1) {
      aggregate.function = "count_distinct";
    } else if (aggregate.function != "min" && aggregate.function != "max" && aggregate.function != "collect_set") {
      return Status::Error(errors::kNotImplemented,
                           fmt::format("{}: DISTINCT is supported in count(DISTINCT x), min, max and collect_set",
                                       aggregate.sql));
    }
  }
  // The whole call binds as a typed aggregate: its argument checks and its result type.
  SLUICE_ASSIGN_OR_RETURN(BoundExpression whole, Bind(Expression(call), input_schema, options));
  aggregate.result_type = whole.result_type();

  std::vector<NodePtr> arguments;
  for (const NodePtr& arg : call->args) {
    if (arg->kind != NodeKind::kStar) arguments.push_back(arg);
  }
  if (aggregate.function == "approx_count_distinct" && arguments.size() == 2) {
    // The relative standard deviation sets the sketch's size: a literal in (0, 0.39], as Spark.
    const Node& rsd = *arguments[1];
    const bool literal = rsd.kind == NodeKind::kLiteral && !rsd.literal.is_null && rsd.literal.type != nullptr;
    double value = !literal                                        ? -1
                   : rsd.literal.type->id() == TypeId::kDecimal    ? static_cast<double>(rsd.literal.decimal) /
                                                                     std::pow(10.0, rsd.literal.type->scale())
                   : rsd.literal.type->is_integral()               ? static_cast<double>(rsd.literal.integer)
                   : rsd.literal.type->id() == TypeId::kDouble ||
                           rsd.literal.type->id() == TypeId::kFloat ? rsd.literal.floating
                                                                    : -1;
    if (!(value > 0 && value <= 0.39)) {
      return Status::Error(errors::kInvalidParameterValue,
                           fmt::format("{}: the relative standard deviation must be a number in (0, 0.39]",
                                       aggregate.sql));
    }
    aggregate.relative_sd = value;
    arguments.pop_back();
  }
  if (aggregate.function == "first" || aggregate.function == "last") {
    if (arguments.size() == 2) {
      const Node& flag = *arguments[1];
      if (flag.kind != NodeKind::kLiteral || flag.literal.is_null || flag.literal.type == nullptr ||
          flag.literal.type->id() != TypeId::kBoolean) {
        return Status::Error(errors::kDatatypeMismatch,
                             fmt::format("{}: the second argument (ignoreNulls) must be TRUE or FALSE", aggregate.sql));
      }
      aggregate.ignore_nulls = flag.literal.boolean;
      arguments.pop_back();
    }
  }
  for (NodePtr arg : arguments) {
    SLUICE_ASSIGN_OR_RETURN(BoundExpression bound, Bind(Expression(arg), input_schema, options));
    if (aggregate.function == "sum" || aggregate.function == "avg") {
      const DataType& type = *bound.result_type();
      // Spark sums integral values as bigint, and averages everything but decimals as double.
      TypePtr accumulated = type.is_integral() && aggregate.function == "sum" ? DataType::Long()
                            : type.id() == TypeId::kDecimal ? nullptr
                                                            : DataType::Double();
      if (accumulated != nullptr && !type.Equals(*accumulated)) {
        SLUICE_ASSIGN_OR_RETURN(bound, Bind(Expression(CastNode(arg, accumulated)), input_schema, options));
      }
    }
    aggregate.arguments.push_back(std::move(bound));
  }
  return aggregate;
}

}  // namespace

bool IsAggregateFunction(std::string_view name) {
  for (std::string_view f : kAggregateFunctions) {
    if (EqualsIgnoreCase(f, name)) return true;
  }
  return false;
}

bool SelectStatement::is_aggregation() const {
  if (!group_by.empty() || having) return true;
  for (const NamedExpression& item : items) {
    if (ContainsAggregate(item.expression.node())) return true;
  }
  return false;
}

std::string SelectStatement::from_name() const {
  std::string name;
  for (const std::string& part : from) name += (name.empty() ? "" : ".") + part;
  return name;
}

std::optional<std::vector<std::string>> SelectStatement::GroupKeyColumns() const {
  if (group_by.empty()) return std::nullopt;
  std::vector<std::string> columns;
  for (const Expression& key : group_by) {
    bool selected = false;
    for (const NamedExpression& item : items) {
      if (SameExpression(item.expression.node(), key.node())) {
        if (!selected) columns.push_back(item.name);
        selected = true;
      }
    }
    if (!selected) return std::nullopt;
  }
  return columns;
}

Result<SelectStatement> ParseSelect(std::string_view sql) {
  SLUICE_ASSIGN_OR_RETURN(SelectTree tree, ParseSelectTree(sql));
  SelectStatement select;
  for (NamedTree& item : tree.items) select.items.push_back(ToNamedExpression(std::move(item)));
  select.from = std::move(tree.from);
  select.streaming = tree.streaming;
  if (tree.where) select.where = Expression(std::move(tree.where));
  for (NodePtr& key : tree.group_by) select.group_by.emplace_back(std::move(key));
  if (tree.having) select.having = Expression(std::move(tree.having));
  // As Spark, a row whose time is NULL is in no time window: a grouping by window leaves it out.
  if (NodePtr window = WindowKey(select.group_by); window != nullptr && !window->args.empty()) {
    NodePtr known = CallNode(*window, "isnotnull", {window->args[0]});
    select.where = Expression(select.where ? CallNode(*window, "and", {select.where->node_ptr(), known}) : known);
  }
  if (select.items.empty() && select.is_aggregation()) {
    return Status::Error(errors::kParseSyntaxError,
                         "SELECT * cannot be grouped: name the grouping keys and aggregates to select");
  }
  return select;
}

Result<BoundAggregation> BindAggregation(const SelectStatement& select, const TypePtr& input_schema,
                                         SqlOptions options) {
  if (select.where && ContainsAggregate(select.where->node())) {
    return Status::Error(errors::kInvalidWhereCondition,
                         fmt::format("the WHERE condition {} contains an aggregate function; filter groups with "
                                     "HAVING instead",
                                     select.where->ToSql()));
  }
  // Grouped by a time window, the items and HAVING may name it `window` (unless a column is so
  // named).
  std::vector<NamedExpression> items = select.items;
  std::optional<Expression> having_given = select.having;
  if (NodePtr window = WindowKey(select.group_by); window != nullptr && input_schema->FieldIndexIgnoreCase("window") < 0) {
    for (NamedExpression& item : items) {
      item.expression = Expression(SubstituteWindowColumn(item.expression.node_ptr(), window));
    }
    if (having_given) having_given = Expression(SubstituteWindowColumn(having_given->node_ptr(), window));
  }
  if (std::count_if(select.group_by.begin(), select.group_by.end(), IsWindowKey) > 1) {
    return Status::Error(errors::kUnsupportedGroupingExpression,
                         "GROUP BY: more than one time window would put every row in the product of their windows; "
                         "group by one");
  }
  BoundAggregation bound;
  std::vector<Field> grouped;
  for (const Expression& key : select.group_by) {
    if (ContainsAggregate(key.node())) {
      return Status::Error(errors::kUnsupportedGroupingExpression,
                           fmt::format("GROUP BY {}: an aggregate function cannot be a grouping key", key.ToSql()));
    }
    Result<BoundExpression> bound_key = Bind(key, input_schema, options);
    if (!bound_key.ok()) return bound_key.status().WithContext("GROUP BY " + key.ToSql());
    grouped.push_back(Field{key.ToSql(), bound_key->result_type(), bound_key->nullable()});
    bound.keys.push_back(std::move(bound_key).value());
  }

  // Each item and HAVING must bind as written first (unknown columns and functions, types), as
  // Spark resolves them before it checks the grouping.
  for (const NamedExpression& item : items) {
    Result<BoundExpression> as_written = Bind(item.expression, input_schema, options);
    if (!as_written.ok()) return as_written.status().WithContext("SELECT " + item.name);
  }
  std::optional<Expression> having_written;
  if (having_given) having_written = Expression(SubstituteAliases(having_given->node_ptr(), items));
  if (having_written) {
    Result<BoundExpression> as_written = Bind(*having_written, input_schema, options);
    if (!as_written.ok()) return as_written.status().WithContext("HAVING");
  }

  GroupRewriter rewriter(select.group_by);
  std::vector<NodePtr> outputs;
  for (const NamedExpression& item : items) {
    SLUICE_ASSIGN_OR_RETURN(NodePtr output, rewriter.Rewrite(item.expression.node_ptr(), "SELECT " + item.name));
    outputs.push_back(std::move(output));
  }
  NodePtr having;
  if (having_written) {
    SLUICE_ASSIGN_OR_RETURN(having, rewriter.Rewrite(having_written->node_ptr(), "HAVING"));
  }

  for (const NodePtr& call : rewriter.aggregates()) {
    Result<AggregateCall> aggregate = BindAggregateCall(call, input_schema, options);
    if (!aggregate.ok()) return aggregate.status().WithContext("SELECT " + PrintSql(*call));
    grouped.push_back(Field{aggregate->sql, aggregate->result_type, aggregate->function != "count"});
    bound.aggregates.push_back(std::move(aggregate).value());
  }
  SLUICE_ASSIGN_OR_RETURN(bound.grouped_schema, DataType::Struct(std::move(grouped)));

  std::vector<Field> output_fields;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const NamedExpression& item = items[i];
    Result<BoundExpression> output = Bind(Expression(outputs[i]), bound.grouped_schema, options);
    if (!output.ok()) return output.status().WithContext("SELECT " + item.name);
    output_fields.push_back(Field{item.name, output->result_type(), output->nullable()});
    bound.outputs.push_back(std::move(output).value());
  }
  SLUICE_ASSIGN_OR_RETURN(bound.output_schema, DataType::Struct(std::move(output_fields)));
  if (having) {
    Result<BoundExpression> condition = BindPredicate(Expression(having), bound.grouped_schema, options);
    if (!condition.ok()) return condition.status().WithContext("HAVING");
    bound.having = std::move(condition).value();
  }
  return bound;
}

}  // namespace sluice::expr
