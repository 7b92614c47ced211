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

#include "sluice/core/status.h"
#include "expr/ast.h"

namespace sluice::expr {

Result<NodePtr> ParseTree(std::string_view sql);

struct NamedTree {
  NodePtr node;
  std::string alias;  // empty when the text gave none
};
// `expr`, `expr AS name` or `expr name`.
Result<NamedTree> ParseNamedTree(std::string_view sql);

}  // namespace sluice::expr
