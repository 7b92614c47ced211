// Tree -> SQL text. Every operator is parenthesized so that the text re-parses to the same tree
// without the printer having to reason about precedence.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "expr/ast.h"
#include "expr/datetime.h"
#include "sluice/core/decimal.h"
#include "sluice/core/compute.h"

namespace sluice::expr {
namespace {

bool IsPlainWord(const std::string& name) {
  static constexpr std::string_view kReserved[] = {
      "and", "or", "not", "is", "in", "between", "like", "ilike", "rlike", "regexp", "case", "when", "then",
      "else", "end", "as", "div", "escape", "from", "for", "distinct", "null", "true", "false", "interval",
      "date", "timestamp", "timestamp_ntz", "timestamp_ltz", "cast", "try_cast", "current_date", "current_timestamp"};
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) return false;
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string_view r : kReserved) {
    if (lower == r) return false;
  }
  return true;
}

std::string QuoteString(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    switch (c) {
      case '\'': out += "\\'"; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      // Three octal digits: `\0` followed by digits would read as another octal escape.
      case '\0': out += "\\000"; break;
      default: out += c;
    }
  }
  out += '\'';
  return out;
}

template <typename F>
std::string FloatingText(F value, char suffix, std::string_view type_name) {
  if (std::isnan(value)) return fmt::format("CAST('NaN' AS {})", type_name);
  if (std::isinf(value)) return fmt::format("CAST('{}Infinity' AS {})", value < 0 ? "-" : "", type_name);
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  std::string text(buf, end);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  text += suffix;
  return value < 0 || std::signbit(value) ? "(" + text + ")" : text;
}

std::string Negatable(std::string text, bool negative) { return negative ? "(" + text + ")" : text; }

std::string JoinArgs(const std::vector<NodePtr>& args, size_t from = 0) {
  std::string out;
  for (size_t i = from; i < args.size(); ++i) {
    if (i > from) out += ", ";
    out += PrintSql(*args[i]);
  }
  return out;
}

std::string_view InfixOperator(const std::string& name) {
  static constexpr std::string_view kInfix[] = {"+", "-", "*", "/", "%", "||", "=", "<=>", "!=", "<", "<=", ">", ">="};
  for (std::string_view op : kInfix) {
    if (name == op) return op;
  }
  if (name == "and") return "AND";
  if (name == "or") return "OR";
  if (name == "div") return "div";
  return {};
}

std::string PrintCall(const Node& n) {
  const auto& a = n.args;
  // `*` stands only as the one argument of a call: in(*) has no operator form.
  if (a.size() == 1 && a[0]->kind == NodeKind::kStar) return fmt::format("{}(*)", n.name);
  // A lambda is read only as an argument written in call form.
  if (std::any_of(a.begin(), a.end(), [](const NodePtr& x) { return x->kind == NodeKind::kLambda; })) {
    return fmt::format("{}({})", n.name, JoinArgs(a));
  }
  std::string_view infix = InfixOperator(n.name);
  if (!infix.empty() && a.size() == 2) return fmt::format("({} {} {})", PrintSql(*a[0]), infix, PrintSql(*a[1]));
  std::string_view not_word = n.negated ? "NOT " : "";
  if (n.name == "not" && a.size() == 1) return fmt::format("(NOT {})", PrintSql(*a[0]));
  if (n.name == "negative" && a.size() == 1) {
    // A minus written before a number is part of the literal: the negated literal keeps its own
    // parentheses to stay a negation.
    if (a[0]->kind == NodeKind::kLiteral) return fmt::format("(- ({}))", PrintSql(*a[0]));
    return fmt::format("(- {})", PrintSql(*a[0]));
  }
  if (n.name == "positive" && a.size() == 1) return fmt::format("(+ {})", PrintSql(*a[0]));
  if (n.name == "isnull" && a.size() == 1) return fmt::format("({} IS NULL)", PrintSql(*a[0]));
  if (n.name == "isnotnull" && a.size() == 1) return fmt::format("({} IS NOT NULL)", PrintSql(*a[0]));
  if ((n.name == "istrue" || n.name == "isfalse") && a.size() == 1) {
    return fmt::format("({} IS {}{})", PrintSql(*a[0]), not_word, n.name == "istrue" ? "TRUE" : "FALSE");
  }
  if (n.name == "in" && a.size() >= 2) return fmt::format("({} {}IN ({}))", PrintSql(*a[0]), not_word, JoinArgs(a, 1));
  if (n.name == "between" && a.size() == 3) {
    return fmt::format("({} {}BETWEEN {} AND {})", PrintSql(*a[0]), not_word, PrintSql(*a[1]), PrintSql(*a[2]));
  }
  // Only what the parser reads there prints as the ESCAPE of LIKE (a string literal of one byte)
  // or as a field name after a dot (a string literal): anything else written there in a call reads
  // back only as that call.
  auto is_string_literal = [](const Node& x) {
    return x.kind == NodeKind::kLiteral && !x.literal.is_null && x.literal.type != nullptr &&
           x.literal.type->id() == TypeId::kString;
  };
  auto is_escape = [&](const Node& x) { return is_string_literal(x) && x.literal.text.size() == 1; };
  if ((n.name == "like" || n.name == "ilike") && (a.size() == 2 || (a.size() == 3 && is_escape(*a[2])))) {
    std::string text = fmt::format("({} {}{} {}", PrintSql(*a[0]), not_word, n.name == "like" ? "LIKE" : "ILIKE", PrintSql(*a[1]));
    if (a.size() == 3) text += " ESCAPE " + PrintSql(*a[2]);
    return text + ")";
  }
  if (n.name == "rlike" && a.size() == 2) return fmt::format("({} {}RLIKE {})", PrintSql(*a[0]), not_word, PrintSql(*a[1]));
  // A literal base is parenthesized: `2 .e1` printed as `2.e1` would read back as a number.
  auto base = [&] { return a[0]->kind == NodeKind::kLiteral ? "(" + PrintSql(*a[0]) + ")" : PrintSql(*a[0]); };
  if (n.name == "get_field" && a.size() == 2 && is_string_literal(*a[1])) {
    return fmt::format("{}.{}", base(), QuoteIdentifier(a[1]->literal.text));
  }
  if (n.name == "subscript" && a.size() == 2) return fmt::format("{}[{}]", base(), PrintSql(*a[1]));
  if (!n.aliases.empty()) {
    std::string text;
    for (size_t i = 0; i < a.size(); ++i) {
      text += (i > 0 ? ", " : "") + PrintSql(*a[i]);
      if (!n.aliases[i].empty()) text += " AS " + QuoteIdentifier(n.aliases[i]);
    }
    return fmt::format("{}({})", n.name, text);
  }
  return fmt::format("{}({}{})", n.name, n.distinct ? "DISTINCT " : "", JoinArgs(a));
}

}  // namespace

std::string QuoteIdentifier(const std::string& name) {
  if (IsPlainWord(name)) return name;
  std::string out = "`";
  for (char c : name) {
    if (c == '`') out += '`';
    out += c;
  }
  return out + "`";
}

std::string PrintLiteral(const LiteralValue& v) {
  if (v.is_interval) {
    std::string out = "INTERVAL";
    if (v.interval_months != 0 || v.interval_micros == 0) out += fmt::format(" {} MONTHS", v.interval_months);
    if (v.interval_micros != 0) out += fmt::format(" {} MICROSECONDS", v.interval_micros);
    return out;
  }
  if (v.is_null || v.type == nullptr) return "NULL";
  switch (v.type->id()) {
    case TypeId::kBoolean: return v.boolean ? "TRUE" : "FALSE";
    case TypeId::kByte: return Negatable(fmt::format("{}Y", v.integer), v.integer < 0);
    case TypeId::kShort: return Negatable(fmt::format("{}S", v.integer), v.integer < 0);
    case TypeId::kInteger: return Negatable(fmt::format("{}", v.integer), v.integer < 0);
    case TypeId::kLong: return Negatable(fmt::format("{}L", v.integer), v.integer < 0);
    case TypeId::kFloat: return FloatingText(static_cast<float>(v.floating), 'F', "FLOAT");
    case TypeId::kDouble: return FloatingText(v.floating, 'D', "DOUBLE");
    case TypeId::kDecimal: {
      std::string text = DecimalText(v.decimal, v.type->scale());
      if (v.type->scale() == 0) text += "BD";
      return Negatable(text, v.decimal < 0);
    }
    case TypeId::kString: return QuoteString(v.text);
    case TypeId::kBinary: {
      std::string out = "X'";
      for (unsigned char c : v.text) out += fmt::format("{:02X}", c);
      return out + "'";
    }
    case TypeId::kDate: return "DATE '" + FormatDate(static_cast<int32_t>(v.integer)) + "'";
    case TypeId::kTimestamp: return "TIMESTAMP '" + FormatTimestamp(v.integer) + "'";
    case TypeId::kTimestampNtz: return "TIMESTAMP_NTZ '" + FormatTimestamp(v.integer) + "'";
    default: return "NULL";
  }
}

std::string PrintSql(const Node& n) {
  switch (n.kind) {
    case NodeKind::kLiteral: return PrintLiteral(n.literal);
    case NodeKind::kStar: return "*";
    case NodeKind::kLambda: {
      std::string parameters;
      for (const std::string& p : n.path) parameters += (parameters.empty() ? "" : ", ") + QuoteIdentifier(p);
      return fmt::format("({}) -> {}", parameters, PrintSql(*n.args[0]));
    }
    case NodeKind::kColumn: {
      std::string out;
      for (size_t i = 0; i < n.path.size(); ++i) {
        if (i > 0) out += '.';
        out += QuoteIdentifier(n.path[i]);
      }
      return out;
    }
    case NodeKind::kCall: return PrintCall(n);
    case NodeKind::kCast:
      return fmt::format("{}({} AS {})", n.try_cast ? "TRY_CAST" : "CAST", PrintSql(*n.args[0]), n.cast_type->ToString());
    case NodeKind::kCase: {
      std::string out = "CASE";
      size_t i = 0;
      if (n.case_has_operand) out += " " + PrintSql(*n.args[i++]);
      size_t pairs_end = n.args.size() - (n.case_has_else ? 1 : 0);
      for (; i + 1 < pairs_end + 1 && i < pairs_end; i += 2) {
        out += fmt::format(" WHEN {} THEN {}", PrintSql(*n.args[i]), PrintSql(*n.args[i + 1]));
      }
      if (n.case_has_else) out += " ELSE " + PrintSql(*n.args.back());
      return out + " END";
    }
  }
  return "";
}

}  // namespace sluice::expr
