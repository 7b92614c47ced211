// SQL text of a bound tree: like the parser's printer, with implicit casts and folded constants
// visible (used in error messages and the event log).
#include <fmt/format.h>

#include "sluice/core/compute.h"
#include "expr/ast.h"
#include "expr/bound.h"

namespace sluice::expr {
namespace {

std::string ConstantSql(const BoundNode& node) {
  const Column& c = *node.constant;
  if (c.IsNull(0)) return node.type == nullptr ? "NULL" : fmt::format("CAST(NULL AS {})", node.type->ToString());
  LiteralValue v;
  v.type = c.type;
  switch (c.type->id()) {
    case TypeId::kBoolean: v.boolean = c.Value<uint8_t>(0) != 0; break;
    case TypeId::kByte: v.integer = c.Value<int8_t>(0); break;
    case TypeId::kShort: v.integer = c.Value<int16_t>(0); break;
    case TypeId::kInteger:
    case TypeId::kDate: v.integer = c.Value<int32_t>(0); break;
    case TypeId::kLong:
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: v.integer = c.Value<int64_t>(0); break;
    case TypeId::kFloat: v.floating = c.Value<float>(0); break;
    case TypeId::kDouble: v.floating = c.Value<double>(0); break;
    case TypeId::kDecimal: {
      v.decimal = c.Value<int128_t>(0);
      std::string text = PrintLiteral(v);
      return fmt::format("CAST({} AS {})", text, c.type->ToString());
    }
    case TypeId::kString:
    case TypeId::kBinary: v.text = std::string(c.View(0)); break;
    default: return FormatValue(c, 0);
  }
  return PrintLiteral(v);
}

std::string_view Infix(Op op) {
  switch (op) {
    case Op::kAdd: return "+";
    case Op::kSubtract: return "-";
    case Op::kMultiply: return "*";
    case Op::kDivide: return "/";
    case Op::kRemainder: return "%";
    case Op::kIntDivide: return "div";
    case Op::kEq: return "=";
    case Op::kNullSafeEq: return "<=>";
    case Op::kNe: return "!=";
    case Op::kLt: return "<";
    case Op::kLe: return "<=";
    case Op::kGt: return ">";
    case Op::kGe: return ">=";
    case Op::kAnd: return "AND";
    case Op::kOr: return "OR";
    default: return {};
  }
}

std::string Args(const BoundNode& node, size_t from = 0) {
  std::string out;
  for (size_t i = from; i < node.args.size(); ++i) {
    if (i > from) out += ", ";
    out += PrintBound(*node.args[i]);
  }
  return out;
}

}  // namespace

std::string PrintBound(const BoundNode& node) {
  const auto& a = node.args;
  std::string_view infix = Infix(node.op);
  if (!infix.empty()) return fmt::format("({} {} {})", PrintBound(*a[0]), infix, PrintBound(*a[1]));
  std::string_view not_word = node.negated ? "NOT " : "";
  switch (node.op) {
    case Op::kConstant: return ConstantSql(node);
    case Op::kColumn: return node.name;
    case Op::kLambdaVariable: return node.name;
    case Op::kLambda: return fmt::format("({}) -> {}", node.name, PrintBound(*a[0]));
    case Op::kCast: return fmt::format("{}({} AS {})", node.mode == EvalMode::kTry ? "TRY_CAST" : "CAST", PrintBound(*a[0]), node.type->ToString());
    case Op::kNegate: return fmt::format("(- {})", PrintBound(*a[0]));
    case Op::kNot: return fmt::format("(NOT {})", PrintBound(*a[0]));
    case Op::kIsNull: return fmt::format("({} IS NULL)", PrintBound(*a[0]));
    case Op::kIsNotNull: return fmt::format("({} IS NOT NULL)", PrintBound(*a[0]));
    case Op::kIsTrue: return fmt::format("({} IS {}TRUE)", PrintBound(*a[0]), not_word);
    case Op::kIsFalse: return fmt::format("({} IS {}FALSE)", PrintBound(*a[0]), not_word);
    case Op::kIn: return fmt::format("({} {}IN ({}))", PrintBound(*a[0]), not_word, Args(node, 1));
    case Op::kLike:
      return fmt::format("({} {}{} {})", PrintBound(*a[0]), not_word, node.ilike ? "ILIKE" : "LIKE", PrintBound(*a[1]));
    case Op::kRLike: return fmt::format("({} {}RLIKE {})", PrintBound(*a[0]), not_word, PrintBound(*a[1]));
    case Op::kTimestampAddInterval: {
      LiteralValue v;
      v.is_interval = true;
      v.interval_months = node.interval_months;
      v.interval_micros = node.interval_micros;
      return fmt::format("({} + {})", PrintBound(*a[0]), PrintLiteral(v));
    }
    case Op::kDateAddDays: return fmt::format("date_add({})", Args(node));
    case Op::kPmod: return fmt::format("pmod({})", Args(node));
    case Op::kTimestampAddUnits: return fmt::format("timestampadd({}, {})", node.name, Args(node));
    case Op::kTimestampDiffUnits: return fmt::format("timestampdiff({}, {})", node.name, Args(node));
    case Op::kCase: {
      std::string out = "CASE";
      for (size_t i = 0; i + 1 < a.size(); i += 2) {
        out += fmt::format(" WHEN {} THEN {}", PrintBound(*a[i]), PrintBound(*a[i + 1]));
      }
      return out + fmt::format(" ELSE {} END", PrintBound(*a.back()));
    }
    case Op::kGetField: return fmt::format("{}.{}", PrintBound(*a[0]), QuoteIdentifier(a[0]->type->field(node.slot).name));
    case Op::kSubscript: return fmt::format("{}[{}]", PrintBound(*a[0]), PrintBound(*a[1]));
    default: return fmt::format("{}({})", node.name, Args(node));
  }
}

}  // namespace sluice::expr
