// The Spark SQL expression parser: text -> unbound tree (ast.h). Internal to expr.
//
// A hand-written lexer and a recursive-descent parser with precedence climbing for binary
// operators. Precedence, lowest first (as Spark's grammar): OR; AND; NOT; predicates (IS, IN,
// BETWEEN, LIKE, RLIKE) and comparisons (= == <=> != <> < <= > >=); + - ||; * / % div; unary
// minus/plus; postfix (.field, [index], ::type). Every failure is PARSE_SYNTAX_ERROR whose
// message starts with the 1-based "line:column" of the offending token.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/status.h"
#include "sluice/expr/expression.h"
#include "expr/ast.h"

namespace sluice::expr {

Result<NodePtr> ParseTree(std::string_view sql);

struct NamedTree {
  NodePtr node;
  std::string alias;  // empty when the text gave none
};
// `expr`, `expr AS name` or `expr name`.
Result<NamedTree> ParseNamedTree(std::string_view sql);

struct SelectTree {
  std::vector<NamedTree> items;  // empty for `SELECT *`
  std::vector<std::string> from;  // the table name's parts, as written; empty without FROM
  bool streaming = false;         // FROM STREAM(name)
  NodePtr where;                  // null when absent
  std::vector<NodePtr> group_by;
  NodePtr having;                 // null when absent
};
// The select item: its alias, or the name Spark gives the column (the last path element of a
// column reference, else the expression's SQL text).
NamedExpression ToNamedExpression(NamedTree tree);

// One SELECT statement (a flow's `sql`), an optional `;` at the end.
Result<SelectTree> ParseSelectTree(std::string_view sql);

}  // namespace sluice::expr
