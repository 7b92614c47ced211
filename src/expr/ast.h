// The parsed (unbound) expression tree. Internal to the expr layer: other layers hold it only
// through sluice::expr::Expression.
//
// Operators and functions are both kCall nodes named by a lower-case canonical name ("+", "=",
// "and", "like", "coalesce"); the printer knows which names are operators. Nodes are immutable
// once parsed and shared between Expression copies.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sluice/core/types.h"

namespace sluice::expr {

// A literal value as written in SQL text. `type` is null for the NULL literal and for intervals.
struct LiteralValue {
  TypePtr type;
  bool is_null = false;
  bool is_interval = false;
  bool boolean = false;
  int64_t integer = 0;    // byte, short, integer, long, date (days), timestamps (micros)
  double floating = 0;    // float, double
  int128_t decimal = 0;   // unscaled decimal value
  std::string text;       // string and binary bytes
  int32_t interval_months = 0;
  int64_t interval_micros = 0;
};

enum class NodeKind : uint8_t {
  kLiteral,
  kColumn,  // a dot path: path = {"value", "user", "email"}
  kCall,    // operator or function: name, args
  kCase,    // args = [operand?] (when, then)* [else?]
  kCast,    // args = {operand}; cast_type
  kStar,    // the `*` in count(*)
  kLambda,  // x -> body, (x, y) -> body: path = the parameters, args = {body}; only as a function argument
};

struct Node;
using NodePtr = std::shared_ptr<const Node>;

struct Node {
  NodeKind kind = NodeKind::kLiteral;
  int line = 1;    // where the node's text starts, 1-based
  int column = 1;
  LiteralValue literal;           // kLiteral
  std::vector<std::string> path;  // kColumn, as written (quotes removed)
  std::string name;               // kCall: canonical lower-case name
  std::vector<NodePtr> args;
  // kCall of struct: the field name each argument was given with AS ("" where none), as many as
  // the arguments, or none when no argument has one.
  std::vector<std::string> aliases;
  bool negated = false;      // NOT IN, NOT LIKE, NOT BETWEEN, NOT RLIKE
  bool distinct = false;     // count(DISTINCT x)
  bool case_has_operand = false;  // CASE x WHEN ...
  bool case_has_else = false;
  bool try_cast = false;     // TRY_CAST
  bool cast_postfix = false;  // written x::type
  TypePtr cast_type;
  int height = 1;             // 1 + the greatest height of the arguments; the parser bounds it
};

// SQL text of a tree, re-parseable to an equal tree. Operators are fully parenthesized where
// precedence requires it; identifiers are back-quoted when they are not plain words.
std::string PrintSql(const Node& node);
// A single identifier as it would be written in SQL (back-quoted when needed).
std::string QuoteIdentifier(const std::string& name);
// A literal as SQL text ("'it''s'", "DATE '2026-01-31'", "10L").
std::string PrintLiteral(const LiteralValue& value);

}  // namespace sluice::expr
