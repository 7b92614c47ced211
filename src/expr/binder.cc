// Binding: resolves columns, checks and coerces types as Spark does, rewrites the sugar
// (BETWEEN, IF, NULLIF, simple CASE) into primitive ops and folds constants.
#include <algorithm>
#include <map>
#include <regex>
#include <utility>

#include <fmt/format.h>

#include "sluice/core/ascii.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/edit_distance.h"
#include "sluice/expr/expression.h"
#include "expr/bound.h"
#include "expr/coercion.h"
#include "expr/datetime.h"
#include "expr/like.h"
#include "expr/parser.h"

namespace sluice::expr {
namespace {

// Every dot path of a schema, for suggestions. Bounded so that huge schemas stay cheap.
void CollectPaths(const DataType& type, const std::string& prefix, int depth, std::vector<std::string>* out) {
  if (type.id() != TypeId::kStruct || depth > 8 || out->size() > 10000) return;
  for (const Field& f : type.fields()) {
    std::string path = prefix.empty() ? QuoteIdentifier(f.name) : prefix + "." + QuoteIdentifier(f.name);
    out->push_back(path);
    CollectPaths(*f.type, path, depth + 1, out);
  }
}

bool AnyNullable(const std::vector<BoundPtr>& args) {
  return std::any_of(args.begin(), args.end(), [](const BoundPtr& a) { return a->nullable; });
}

NodePtr MakeCall(const Node& at, std::string name, std::vector<NodePtr> args, bool negated = false) {
  auto n = std::make_shared<Node>();
  n->kind = NodeKind::kCall;
  n->line = at.line;
  n->column = at.column;
  n->name = std::move(name);
  n->args = std::move(args);
  n->negated = negated;
  return n;
}

NodePtr MakeNullLiteral(const Node& at) {
  auto n = std::make_shared<Node>();
  n->kind = NodeKind::kLiteral;
  n->line = at.line;
  n->column = at.column;
  n->literal.is_null = true;
  return n;
}

NodePtr MakeCase(const Node& at, std::vector<NodePtr> args, bool has_else) {
  auto n = std::make_shared<Node>();
  n->kind = NodeKind::kCase;
  n->line = at.line;
  n->column = at.column;
  n->args = std::move(args);
  n->case_has_else = has_else;
  return n;
}

// An INTERVAL literal, possibly negated: its months and micros.
bool IntervalOf(const Node& n, int32_t* months, int64_t* micros) {
  if (n.kind == NodeKind::kLiteral && n.literal.is_interval) {
    *months = n.literal.interval_months;
    *micros = n.literal.interval_micros;
    return true;
  }
  if (n.kind == NodeKind::kCall && n.name == "positive" && n.args.size() == 1) return IntervalOf(*n.args[0], months, micros);
  if (n.kind == NodeKind::kCall && n.name == "negative" && n.args.size() == 1 && IntervalOf(*n.args[0], months, micros)) {
    *months = -*months;
    *micros = -*micros;
    return true;
  }
  return false;
}

class Binder {
 public:
  Binder(const TypePtr& schema, SqlOptions options)
      : schema_(schema), ansi_(options.ansi), mode_(options.ansi ? EvalMode::kAnsi : EvalMode::kLegacy) {}

  std::vector<std::vector<int>> TakeSlotPaths() { return std::move(slot_paths_); }

  Result<BoundPtr> Bind(const Node& n) {
    if (auto it = prebound_.find(&n); it != prebound_.end()) return it->second;
    switch (n.kind) {
      case NodeKind::kLiteral: return BindLiteral(n);
      case NodeKind::kColumn: return BindColumn(n);
      case NodeKind::kCall: return BindCall(n);
      case NodeKind::kCase: return BindCase(n);
      case NodeKind::kCast: return BindCast(n);
      case NodeKind::kStar:
        return Status::Error(errors::kParseSyntaxError,
                             fmt::format("at {}:{}: '*' is allowed only as the argument of count", n.line, n.column));
    }
    return Status::Error(errors::kInternalError, "unknown expression node");
  }

 private:
  // --- errors ---
  static Status Mismatch(const Node& n, std::string_view detail) {
    return Status::Error(errors::kDatatypeMismatch,
                         fmt::format("cannot resolve {} at {}:{}: {}", PrintSql(n), n.line, n.column, detail));
  }
  static Status WrongArgs(const Node& n, std::string_view expected) {
    return Status::Error(errors::kWrongNumArgs,
                         fmt::format("function {} at {}:{} takes {} but {} were given", n.name, n.line, n.column, expected,
                                     n.args.size()));
  }
  static Status BadParameter(const Node& n, std::string_view detail) {
    return Status::Error(errors::kInvalidParameterValue,
                         fmt::format("{} at {}:{}: {}", PrintSql(n), n.line, n.column, detail));
  }

  // --- building blocks ---
  // A new node evaluated in the current mode.
  std::shared_ptr<BoundNode> NewNode(Op op, TypePtr type, std::vector<BoundPtr> args = {}) {
    auto node = std::make_shared<BoundNode>();
    node->op = op;
    node->type = std::move(type);
    node->args = std::move(args);
    node->mode = mode_;
    return node;
  }

  // Folds a node whose arguments are all constant. A constant that fails to evaluate as a value can
  // (1 / 0 in ANSI mode) is left unfolded, to fail only if a row reaches it, as in Spark; other
  // failures (a bad constant pattern) are binding errors.
  Result<BoundPtr> Finish(std::shared_ptr<BoundNode> node) {
    bool foldable = node->op != Op::kCurrentTimestamp && node->op != Op::kCurrentDate && node->op != Op::kAggregate &&
                    node->op != Op::kUnixTimestamp && node->op != Op::kColumn && node->op != Op::kConstant;
    if (node->op == Op::kUnixTimestamp && !node->args.empty()) foldable = true;
    for (const BoundPtr& a : node->args) foldable = foldable && a->op == Op::kConstant;
    if (!foldable) return BoundPtr(node);
    Result<ColumnPtr> folded = EvaluateConstant(*node);
    if (!folded.ok()) {
      if (MayFail(*node)) return BoundPtr(node);
      return folded.status();
    }
    ColumnPtr value = *std::move(folded);
    auto constant = NewNode(Op::kConstant, node->type);
    constant->nullable = value->IsNull(0);
    constant->constant = std::move(value);
    return BoundPtr(constant);
  }

  Result<BoundPtr> CastTo(BoundPtr arg, const TypePtr& to) {
    if (arg->type != nullptr && arg->type->Equals(*to)) return arg;
    if (arg->type == nullptr) {
      auto constant = NewNode(Op::kConstant, to);
      constant->constant = MakeNullColumn(to, 1);
      return BoundPtr(constant);
    }
    auto cast = NewNode(Op::kCast, to, {arg});
    cast->nullable = true;
    return Finish(cast);
  }

  // An argument that must be implicitly castable to `to`.
  Result<BoundPtr> Expect(const Node& call, BoundPtr arg, const TypePtr& to, size_t index) {
    if (!CanImplicitCast(arg->type, to)) {
      return Mismatch(call, fmt::format("argument {} of {} must be {}, got {}", index + 1, call.name, to->ToString(),
                                        TypeName(arg->type)));
    }
    return CastTo(std::move(arg), to);
  }

  Result<std::vector<BoundPtr>> BindArgs(const Node& n) {
    std::vector<BoundPtr> args;
    for (const NodePtr& a : n.args) {
      SLUICE_ASSIGN_OR_RETURN(BoundPtr b, Bind(*a));
      args.push_back(std::move(b));
    }
    return args;
  }

  Status CheckArgs(const Node& n, size_t min, size_t max) {
    if (n.args.size() >= min && n.args.size() <= max) return Status::OK();
    if (min == max) return WrongArgs(n, fmt::format("{} argument{}", min, min == 1 ? "" : "s"));
    if (max == SIZE_MAX) return WrongArgs(n, fmt::format("at least {} argument{}", min, min == 1 ? "" : "s"));
    return WrongArgs(n, fmt::format("{} to {} arguments", min, max));
  }

  // --- leaves ---
  Result<BoundPtr> BindLiteral(const Node& n) {
    if (n.literal.is_interval) {
      return Mismatch(n, "an INTERVAL can only be added to or subtracted from a timestamp or a date");
    }
    auto constant = NewNode(Op::kConstant, n.literal.is_null ? nullptr : n.literal.type);
    constant->nullable = n.literal.is_null;
    constant->constant = n.literal.is_null ? MakeNullColumn(DataType::Boolean(), 1) : LiteralColumn(n.literal, n.literal.type);
    return BoundPtr(constant);
  }

  Result<BoundPtr> BindColumn(const Node& n) {
    const DataType* current = schema_.get();
    std::vector<int> path;
    std::string resolved;
    bool nullable = false;
    for (size_t i = 0; i < n.path.size(); ++i) {
      if (current->id() != TypeId::kStruct) {
        return Unresolved(n, fmt::format("{} is {}, not a struct", resolved, current->ToString()));
      }
      int index = current->FieldIndexIgnoreCase(n.path[i]);
      if (index == -2) index = current->FieldIndex(n.path[i]);
      if (index == -2 || index < 0) {
        if (current->FieldIndexIgnoreCase(n.path[i]) == -2) {
          return Unresolved(n, fmt::format("the name is ambiguous: several fields match `{}` ignoring case", n.path[i]));
        }
        return Unresolved(n, "");
      }
      const Field& f = current->field(index);
      path.push_back(index);
      resolved += (i > 0 ? "." : "") + QuoteIdentifier(f.name);
      nullable = nullable || f.nullable;
      current = f.type.get();
      if (i + 1 < n.path.size() && current->id() != TypeId::kStruct) {
        return Unresolved(n, fmt::format("{} is {}, not a struct", resolved, current->ToString()));
      }
    }
    auto node = NewNode(Op::kColumn, nullptr);
    // Walk again for the TypePtr (the loop above holds raw pointers).
    TypePtr type = schema_;
    for (int index : path) type = type->field(index).type;
    node->type = type;
    node->nullable = nullable;
    node->name = resolved;
    auto it = std::find(slot_paths_.begin(), slot_paths_.end(), path);
    node->slot = static_cast<int>(it - slot_paths_.begin());
    if (it == slot_paths_.end()) slot_paths_.push_back(path);
    return BoundPtr(node);
  }

  Status Unresolved(const Node& n, std::string_view why) {
    std::string written;
    for (size_t i = 0; i < n.path.size(); ++i) written += (i > 0 ? "." : "") + QuoteIdentifier(n.path[i]);
    std::string message = fmt::format("column {} at {}:{} cannot be resolved", written, n.line, n.column);
    if (!why.empty()) message += fmt::format(" ({})", why);
    std::vector<std::string> candidates;
    CollectPaths(*schema_, "", 0, &candidates);
    // Rank by edit distance to the written path; a name that contains the written one ranks
    // as if one edit away.
    std::string target = AsciiLower(written);
    auto score = [&](const std::string& candidate) {
      std::string plain = AsciiLower(candidate);
      plain.erase(std::remove(plain.begin(), plain.end(), '`'), plain.end());
      size_t d = EditDistance(target, plain);
      if (target.size() >= 3 && plain.find(target) != std::string::npos) d = std::min<size_t>(d, 1);
      return d;
    };
    std::stable_sort(candidates.begin(), candidates.end(),
                     [&](const std::string& a, const std::string& b) { return score(a) < score(b); });
    if (candidates.size() > 5) candidates.resize(5);
    if (!candidates.empty()) {
      message += "; did you mean one of: ";
      for (size_t i = 0; i < candidates.size(); ++i) message += (i > 0 ? ", " : "") + candidates[i];
    }
    return Status::Error(errors::kUnresolvedColumn, message);
  }

  // --- CASE and CAST ---
  Result<BoundPtr> BindCase(const Node& n) {
    if (n.case_has_operand) {
      // CASE x WHEN v THEN r ... is CASE WHEN x = v THEN r ...
      std::vector<NodePtr> args;
      size_t end = n.args.size() - (n.case_has_else ? 1 : 0);
      for (size_t i = 1; i + 1 < end + 1 && i < end; i += 2) {
        args.push_back(MakeCall(*n.args[i], "=", {n.args[0], n.args[i]}));
        args.push_back(n.args[i + 1]);
      }
      if (n.case_has_else) args.push_back(n.args.back());
      return BindCase(*MakeCase(n, std::move(args), n.case_has_else));
    }
    SLUICE_ASSIGN_OR_RETURN(std::vector<BoundPtr> args, BindArgs(n));
    if (!n.case_has_else) {
      auto null_else = NewNode(Op::kConstant, nullptr);
      null_else->constant = MakeNullColumn(DataType::Boolean(), 1);
      args.push_back(null_else);
    }
    // args: (when, then)* else. The branches' values are indices 1, 3, ... and the last.
    std::vector<size_t> values;
    for (size_t i = 1; i + 1 < args.size(); i += 2) values.push_back(i);
    values.push_back(args.size() - 1);
    TypePtr result;
    bool ok = true;
    for (size_t i : values) {
      result = WiderCommonType(result, args[i]->type, true, ansi_, &ok);
      if (!ok) return Mismatch(n, "the THEN and ELSE branches have incompatible types");
    }
    if (result == nullptr) result = DataType::Boolean();
    for (size_t i = 0; i + 1 < args.size(); i += 2) {
      if (args[i]->type != nullptr && args[i]->type->id() != TypeId::kBoolean) {
        return Mismatch(n, fmt::format("a WHEN condition must be boolean, got {}", args[i]->type->ToString()));
      }
      SLUICE_ASSIGN_OR_RETURN(args[i], CastTo(args[i], DataType::Boolean()));
    }
    for (size_t i : values) {
      SLUICE_ASSIGN_OR_RETURN(args[i], CastTo(args[i], result));
    }
    // Drop branches whose condition folded to false or null; stop at one that folded to true.
    std::vector<BoundPtr> kept;
    for (size_t i = 0; i + 1 < args.size(); i += 2) {
      if (args[i]->op == Op::kConstant) {
        const Column& c = *args[i]->constant;
        if (c.IsNull(0) || c.Value<uint8_t>(0) == 0) continue;
        if (kept.empty()) return args[i + 1];
        kept.push_back(args[i + 1]);
        auto node = NewNode(Op::kCase, result, std::move(kept));
        node->nullable = AnyNullable(node->args);
        return BoundPtr(node);
      }
      kept.push_back(args[i]);
      kept.push_back(args[i + 1]);
    }
    if (kept.empty()) return args.back();
    kept.push_back(args.back());
    auto node = NewNode(Op::kCase, result, std::move(kept));
    node->nullable = true;
    return BoundPtr(node);
  }

  Result<BoundPtr> BindCast(const Node& n) {
    SLUICE_ASSIGN_OR_RETURN(BoundPtr arg, Bind(*n.args[0]));
    if (arg->type != nullptr && !CanCast(*arg->type, *n.cast_type, ansi_)) {
      return Mismatch(n, fmt::format("cannot cast {} to {}{}", arg->type->ToString(), n.cast_type->ToString(),
                                     ansi_ && CanCast(*arg->type, *n.cast_type, false) ? " in ANSI mode (sql.ansi)" : ""));
    }
    if (arg->type != nullptr && arg->type->Equals(*n.cast_type)) return arg;
    if (arg->type == nullptr) return CastTo(arg, n.cast_type);
    auto cast = NewNode(Op::kCast, n.cast_type, {arg});
    if (n.try_cast) cast->mode = EvalMode::kTry;
    return Finish(cast);
  }

  // --- operators and functions ---
  Result<BoundPtr> BindCall(const Node& n);
  Result<BoundPtr> BindArithmetic(const Node& n, Op op);
  Result<BoundPtr> BindIntervalArithmetic(const Node& n, bool subtract, bool* handled);
  Result<BoundPtr> BindComparison(const Node& n, Op op);
  Result<BoundPtr> BindLogic(const Node& n, Op op);
  Result<BoundPtr> BindFunction(const Node& n);
  Result<BoundPtr> BindTry(const Node& n, std::string_view function);

  TypePtr schema_;
  const bool ansi_;
  // The mode of the nodes being made: ANSI or non-ANSI, TRY while a try_ function is bound.
  EvalMode mode_;
  std::vector<std::vector<int>> slot_paths_;
  // Arguments of a try_ function, bound before it in the session's mode.
  std::map<const Node*, BoundPtr> prebound_;
};

// try_add(a, b) is a + b, ... with its own coercions and op in TRY mode (null where ANSI would
// fail); its arguments keep the session's mode (try_add(CAST('x' AS INT), 1) fails in ANSI).
Result<BoundPtr> Binder::BindTry(const Node& n, std::string_view function) {
  for (const NodePtr& a : n.args) {
    int32_t months = 0;
    int64_t micros = 0;
    if (IntervalOf(*a, &months, &micros)) continue;  // read by the op itself, not bound
    SLUICE_ASSIGN_OR_RETURN(BoundPtr bound, Bind(*a));
    prebound_[a.get()] = std::move(bound);
  }
  const EvalMode outer = mode_;
  mode_ = EvalMode::kTry;
  Result<BoundPtr> result = Bind(*MakeCall(n, std::string(function), n.args));
  mode_ = outer;
  for (const NodePtr& a : n.args) prebound_.erase(a.get());
  return result;
}

Result<BoundPtr> Binder::BindLogic(const Node& n, Op op) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<BoundPtr> args, BindArgs(n));
  for (BoundPtr& a : args) {
    if (a->type != nullptr && a->type->id() != TypeId::kBoolean) {
      return Mismatch(n, fmt::format("{} needs boolean operands, got {}", op == Op::kAnd ? "AND" : op == Op::kOr ? "OR" : "NOT",
                                     a->type->ToString()));
    }
    SLUICE_ASSIGN_OR_RETURN(a, CastTo(a, DataType::Boolean()));
  }
  // x AND FALSE is FALSE and x OR TRUE is TRUE whatever x is; x AND TRUE is x.
  if (op == Op::kAnd || op == Op::kOr) {
    uint8_t absorbing = op == Op::kAnd ? 0 : 1;
    for (int i = 0; i < 2; ++i) {
      const BoundPtr& c = args[i];
      if (c->op != Op::kConstant || c->constant->IsNull(0)) continue;
      if (c->constant->Value<uint8_t>(0) == absorbing) return c;
      return args[1 - i];
    }
  }
  auto node = NewNode(op, DataType::Boolean(), std::move(args));
  node->nullable = AnyNullable(node->args);
  return Finish(node);
}

Result<BoundPtr> Binder::BindComparison(const Node& n, Op op) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<BoundPtr> args, BindArgs(n));
  bool ok = true;
  TypePtr common = ComparisonType(args[0]->type, args[1]->type, ansi_, &ok);
  if (!ok || (common != nullptr && common->is_nested())) {
    return Mismatch(n, fmt::format("operator {} cannot compare {} with {}", n.name, TypeName(args[0]->type),
                                   TypeName(args[1]->type)));
  }
  if (common == nullptr) common = DataType::Boolean();
  for (BoundPtr& a : args) {
    SLUICE_ASSIGN_OR_RETURN(a, CastTo(a, common));
  }
  auto node = NewNode(op, DataType::Boolean(), std::move(args));
  node->nullable = op != Op::kNullSafeEq && AnyNullable(node->args);
  return Finish(node);
}

Result<BoundPtr> Binder::BindIntervalArithmetic(const Node& n, bool subtract, bool* handled) {
  int32_t months = 0;
  int64_t micros = 0;
  *handled = false;
  const Node* other = nullptr;
  if (IntervalOf(*n.args[1], &months, &micros)) {
    other = n.args[0].get();
  } else if (!subtract && IntervalOf(*n.args[0], &months, &micros)) {
    other = n.args[1].get();
  } else {
    return BoundPtr();
  }
  *handled = true;
  SLUICE_ASSIGN_OR_RETURN(BoundPtr base, Bind(*other));
  if (base->type == nullptr || (base->type->id() == TypeId::kString)) {
    SLUICE_ASSIGN_OR_RETURN(base, CastTo(base, DataType::Timestamp()));
  }
  if (!IsDatetime(*base->type)) {
    return Mismatch(n, fmt::format("an INTERVAL can only be added to a timestamp or a date, not {}", base->type->ToString()));
  }
  bool date_result = base->type->id() == TypeId::kDate && micros % kMicrosPerDay == 0;
  if (base->type->id() == TypeId::kDate) {
    SLUICE_ASSIGN_OR_RETURN(base, CastTo(base, DataType::Timestamp()));
  }
  auto node = NewNode(Op::kTimestampAddInterval, base->type, {base});
  node->interval_months = subtract ? -months : months;
  node->interval_micros = subtract ? -micros : micros;
  node->nullable = base->nullable;
  SLUICE_ASSIGN_OR_RETURN(BoundPtr result, Finish(node));
  if (date_result) return CastTo(result, DataType::Date());
  return result;
}

Result<BoundPtr> Binder::BindArithmetic(const Node& n, Op op) {
  if (op == Op::kAdd || op == Op::kSubtract) {
    bool handled = false;
    SLUICE_ASSIGN_OR_RETURN(BoundPtr interval, BindIntervalArithmetic(n, op == Op::kSubtract, &handled));
    if (handled) return interval;
  }
  SLUICE_ASSIGN_OR_RETURN(std::vector<BoundPtr> args, BindArgs(n));
  // date + n and date - n add days, as Spark's date_add / date_sub.
  if ((op == Op::kAdd || op == Op::kSubtract) && args[0]->type != nullptr && args[1]->type != nullptr) {
    int date_index = args[0]->type->id() == TypeId::kDate ? 0 : (op == Op::kAdd && args[1]->type->id() == TypeId::kDate ? 1 : -1);
    if (date_index >= 0 && args[1 - date_index]->type->is_integral()) {
      SLUICE_ASSIGN_OR_RETURN(BoundPtr days, CastTo(args[1 - date_index], DataType::Integer()));
      if (op == Op::kSubtract) {
        auto negated = NewNode(Op::kNegate, DataType::Integer(), {days});
        SLUICE_ASSIGN_OR_RETURN(days, Finish(negated));
      }
      auto node = NewNode(Op::kDateAddDays, DataType::Date(), {args[date_index], days});
      node->nullable = AnyNullable(node->args);
      return Finish(node);
    }
  }
  // A date or timestamp plus an untyped NULL is a NULL timestamp, as Spark resolves it (the NULL
  // read as an interval).
  if (op == Op::kAdd) {
    for (int i = 0; i < 2; ++i) {
      const TypePtr& side = args[i]->type;
      if (args[1 - i]->type == nullptr && side != nullptr && IsDatetime(*side)) {
        return CastTo(args[1 - i], side->id() == TypeId::kTimestampNtz ? DataType::TimestampNtz() : DataType::Timestamp());
      }
    }
  }
  // Strings in arithmetic are read as doubles; in ANSI mode as bigints beside an integral type,
  // and two strings are no numbers. NULL takes the other side's type.
  const auto is_string = [](const BoundPtr& a) { return a->type != nullptr && a->type->id() == TypeId::kString; };
  if (ansi_ && is_string(args[0]) && is_string(args[1])) {
    return Mismatch(n, fmt::format("operator {} needs numeric operands, got string and string", n.name));
  }
  for (size_t i = 0; i < 2; ++i) {
    if (!is_string(args[i])) continue;
    const TypePtr& other = args[1 - i]->type;
    const bool as_long = ansi_ && other != nullptr && other->is_integral();
    SLUICE_ASSIGN_OR_RETURN(args[i], CastTo(args[i], as_long ? DataType::Long() : DataType::Double()));
  }
  for (int i = 0; i < 2; ++i) {
    if (args[i]->type == nullptr) {
      TypePtr other = args[1 - i]->type != nullptr ? args[1 - i]->type : DataType::Double();
      SLUICE_ASSIGN_OR_RETURN(args[i], CastTo(args[i], other));
    }
  }
  const TypePtr& a = args[0]->type;
  const TypePtr& b = args[1]->type;
  if (!a->is_numeric() || !b->is_numeric()) {
    return Mismatch(n, fmt::format("operator {} needs numeric operands, got {} and {}", n.name, a->ToString(), b->ToString()));
  }
  bool da = a->id() == TypeId::kDecimal, db = b->id() == TypeId::kDecimal;
  bool floating = a->id() == TypeId::kFloat || a->id() == TypeId::kDouble || b->id() == TypeId::kFloat ||
                  b->id() == TypeId::kDouble;
  TypePtr result;
  if (op == Op::kIntDivide) {
    if ((da || db) && !floating) {
      TypePtr wide = WiderDecimal(da ? *a : *DecimalForIntegral(*a), db ? *b : *DecimalForIntegral(*b));
      for (BoundPtr& x : args) {
        SLUICE_ASSIGN_OR_RETURN(x, CastTo(x, wide));
      }
    } else {
      for (BoundPtr& x : args) {
        SLUICE_ASSIGN_OR_RETURN(x, CastTo(x, DataType::Long()));
      }
    }
    result = DataType::Long();
  } else if ((da || db) && !floating) {
    // Decimal arithmetic keeps each operand's own decimal type; the kernel computes exactly and
    // rounds into the result type (Spark's DecimalPrecision). An integral literal becomes the
    // narrowest decimal that holds its value, as Spark's literalPickMinimumPrecision does
    // (`price * 3` is decimal(p+2, s), not decimal(p+11, s)).
    for (size_t i = 0; i < args.size(); ++i) {
      BoundPtr& x = args[i];
      if (x->type->id() == TypeId::kDecimal) continue;
      const bool literal = n.args[i]->kind == NodeKind::kLiteral && !n.args[i]->literal.is_null;
      SLUICE_ASSIGN_OR_RETURN(x, CastTo(x, literal ? DecimalForIntegralLiteral(n.args[i]->literal.integer)
                                                   : DecimalForIntegral(*x->type)));
    }
    int p1 = args[0]->type->precision(), s1 = args[0]->type->scale();
    int p2 = args[1]->type->precision(), s2 = args[1]->type->scale();
    switch (op) {
      case Op::kAdd:
      case Op::kSubtract: {
        int scale = std::max(s1, s2);
        result = AdjustedDecimal(std::max(p1 - s1, p2 - s2) + scale + 1, scale);
        break;
      }
      case Op::kMultiply: result = AdjustedDecimal(p1 + p2 + 1, s1 + s2); break;
      case Op::kDivide: {
        int scale = std::max(6, s1 + p2 + 1);
        result = AdjustedDecimal(p1 - s1 + s2 + scale, scale);
        break;
      }
      default: {  // remainder
        int scale = std::max(s1, s2);
        result = AdjustedDecimal(std::min(p1 - s1, p2 - s2) + scale, scale);
        break;
      }
    }
  } else if (op == Op::kDivide) {
    for (BoundPtr& x : args) {
      SLUICE_ASSIGN_OR_RETURN(x, CastTo(x, DataType::Double()));
    }
    result = DataType::Double();
  } else {
    bool ok = true;
    result = TightestCommonType(a, b, ansi_, &ok);
    for (BoundPtr& x : args) {
      SLUICE_ASSIGN_OR_RETURN(x, CastTo(x, result));
    }
  }
  auto node = NewNode(op, result, std::move(args));
  node->nullable = AnyNullable(node->args) || op == Op::kDivide || op == Op::kRemainder || op == Op::kIntDivide ||
                   result->id() == TypeId::kDecimal;
  return Finish(node);
}

namespace {

// Every name a call may have, with the number of arguments it takes: checked once, before any
// binding code reads an argument, since the parser makes a call of any name followed by '('
// (keywords and the internal names of operators included).
struct CallArity {
  std::string_view name;
  size_t min;
  size_t max;
};
constexpr size_t kAny = SIZE_MAX;
constexpr CallArity kCalls[] = {
    // Operators, reachable as calls too.
    {"and", 2, 2}, {"or", 2, 2}, {"not", 1, 1}, {"=", 2, 2}, {"<=>", 2, 2}, {"!=", 2, 2}, {"<", 2, 2}, {"<=", 2, 2},
    {">", 2, 2}, {">=", 2, 2}, {"+", 2, 2}, {"-", 2, 2}, {"*", 2, 2}, {"/", 2, 2}, {"%", 2, 2}, {"div", 2, 2},
    {"||", 2, kAny}, {"between", 3, 3}, {"in", 2, kAny}, {"isnull", 1, 1}, {"isnotnull", 1, 1}, {"istrue", 1, 1},
    {"isfalse", 1, 1}, {"negative", 1, 1}, {"positive", 1, 1}, {"get_field", 2, 2}, {"subscript", 2, 2}, {"rlike", 2, 2},
    {"like", 2, 3}, {"ilike", 2, 3},
    // Functions.
    {"coalesce", 1, kAny}, {"nullif", 2, 2}, {"ifnull", 2, 2}, {"nvl", 2, 2}, {"if", 3, 3}, {"iff", 3, 3},
    {"greatest", 2, kAny}, {"least", 2, kAny}, {"lower", 1, 1}, {"upper", 1, 1}, {"lcase", 1, 1}, {"ucase", 1, 1},
    {"length", 1, 1}, {"char_length", 1, 1}, {"trim", 1, 2}, {"ltrim", 1, 2}, {"rtrim", 1, 2}, {"substring", 2, 3},
    {"substr", 2, 3}, {"concat", 0, kAny}, {"concat_ws", 1, kAny}, {"replace", 2, 3}, {"split", 2, 3},
    {"regexp_extract", 2, 3}, {"startswith", 2, 2}, {"endswith", 2, 2}, {"contains", 2, 2}, {"abs", 1, 1},
    {"round", 1, 2}, {"floor", 1, 1}, {"ceil", 1, 1}, {"ceiling", 1, 1}, {"sqrt", 1, 1}, {"pow", 2, 2},
    {"power", 2, 2}, {"mod", 2, 2}, {"hash", 1, kAny}, {"md5", 1, 1}, {"sha2", 2, 2}, {"current_timestamp", 0, 0},
    {"now", 0, 0}, {"current_date", 0, 0}, {"to_timestamp", 1, 2}, {"to_date", 1, 2}, {"date_trunc", 2, 2},
    {"date_format", 2, 2}, {"year", 1, 1}, {"month", 1, 1}, {"day", 1, 1}, {"dayofmonth", 1, 1}, {"hour", 1, 1},
    {"unix_timestamp", 0, 2}, {"from_unixtime", 1, 2}, {"get_json_object", 2, 2}, {"size", 1, 1},
    {"element_at", 2, 2}, {"struct", 0, kAny}, {"named_struct", 2, kAny}, {"array", 0, kAny}, {"map", 0, kAny},
    // The TRY forms: null where ANSI mode fails.
    {"try_add", 2, 2}, {"try_subtract", 2, 2}, {"try_multiply", 2, 2}, {"try_divide", 2, 2}, {"try_mod", 2, 2},
    {"try_element_at", 2, 2}, {"try_to_timestamp", 1, 2},
    // Aggregates.
    {"count", 1, kAny}, {"sum", 1, 1}, {"min", 1, 1}, {"max", 1, 1}, {"avg", 1, 1}, {"mean", 1, 1}, {"first", 1, 2},
    {"last", 1, 2}};

const CallArity* FindCall(std::string_view name) {
  for (const CallArity& c : kCalls) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

bool IsConstantString(const BoundPtr& b) {
  return b->op == Op::kConstant && b->type != nullptr && b->type->id() == TypeId::kString;
}

}  // namespace

Result<BoundPtr> Binder::BindCall(const Node& n) {
  const std::string& f = n.name;
  const CallArity* call = FindCall(f);
  if (call == nullptr) {
    std::string_view best;
    size_t best_distance = SIZE_MAX;
    for (const CallArity& candidate : kCalls) {
      if (!std::isalpha(static_cast<unsigned char>(candidate.name[0]))) continue;
      size_t d = EditDistance(f, candidate.name);
      if (d < best_distance) best_distance = d, best = candidate.name;
    }
    std::string message = fmt::format("unknown function {} at {}:{}", f, n.line, n.column);
    if (best_distance <= 3) message += fmt::format("; did you mean {}?", best);
    return Status::Error(errors::kUnresolvedRoutine, message);
  }
  SLUICE_RETURN_IF_ERROR(CheckArgs(n, call->min, call->max));
  if (f == "and") return BindLogic(n, Op::kAnd);
  if (f == "or") return BindLogic(n, Op::kOr);
  if (f == "not") return BindLogic(n, Op::kNot);
  static const std::map<std::string, Op> kComparisons = {{"=", Op::kEq}, {"<=>", Op::kNullSafeEq}, {"!=", Op::kNe},
                                                         {"<", Op::kLt}, {"<=", Op::kLe},       {">", Op::kGt},
                                                         {">=", Op::kGe}};
  if (auto it = kComparisons.find(f); it != kComparisons.end()) return BindComparison(n, it->second);
  static const std::map<std::string, Op> kArithmetic = {{"+", Op::kAdd},       {"-", Op::kSubtract},
                                                        {"*", Op::kMultiply},  {"/", Op::kDivide},
                                                        {"%", Op::kRemainder}, {"div", Op::kIntDivide}};
  if (auto it = kArithmetic.find(f); it != kArithmetic.end()) return BindArithmetic(n, it->second);
  if (f == "mod") {
    return BindArithmetic(*MakeCall(n, "%", n.args), Op::kRemainder);
  }
  if (f == "between") {
    NodePtr both = MakeCall(n, "and", {MakeCall(n, ">=", {n.args[0], n.args[1]}), MakeCall(n, "<=", {n.args[0], n.args[2]})});
    return Bind(n.negated ? *MakeCall(n, "not", {both}) : *both);
  }
  if (f == "nullif") {
    return Bind(*MakeCase(n, {MakeCall(n, "=", {n.args[0], n.args[1]}), MakeNullLiteral(n), n.args[0]}, true));
  }
  if (f == "if" || f == "iff") {
    return Bind(*MakeCase(n, {n.args[0], n.args[1], n.args[2]}, true));
  }
  if (f == "||") return BindFunction(*MakeCall(n, "concat", n.args));
  static const std::map<std::string, std::string> kTryFunctions = {
      {"try_add", "+"},  {"try_subtract", "-"},           {"try_multiply", "*"},
      {"try_divide", "/"}, {"try_mod", "%"},              {"try_element_at", "element_at"},
      {"try_to_timestamp", "to_timestamp"}};
  if (auto it = kTryFunctions.find(f); it != kTryFunctions.end()) return BindTry(n, it->second);
  return BindFunction(n);
}


Result<BoundPtr> Binder::BindFunction(const Node& n) {
  const std::string& f = n.name;
  // Aggregates: typed as Spark types them, evaluated by the aggregation layer.
  if (f == "count" || f == "sum" || f == "min" || f == "max" || f == "avg" || f == "mean" || f == "first" || f == "last") {
    std::vector<BoundPtr> args;
    TypePtr arg_type;
    if (n.args[0]->kind != NodeKind::kStar) {
      SLUICE_ASSIGN_OR_RETURN(args, BindArgs(n));
      arg_type = args[0]->type;
    } else if (f != "count") {
      return Status::Error(errors::kParseSyntaxError, fmt::format("at {}:{}: '*' is allowed only in count(*)", n.line, n.column));
    }
    TypePtr result;
    if (f == "count") {
      result = DataType::Long();
    } else if (f == "min" || f == "max" || f == "first" || f == "last") {
      result = arg_type != nullptr ? arg_type : DataType::Boolean();
    } else {
      if (arg_type != nullptr && arg_type->id() == TypeId::kString) arg_type = DataType::Double();
      if (arg_type != nullptr && !arg_type->is_numeric()) {
        return Mismatch(n, fmt::format("{} needs a numeric argument, got {}", f, arg_type->ToString()));
      }
      if (arg_type != nullptr && arg_type->id() == TypeId::kDecimal) {
        int p = arg_type->precision(), s = arg_type->scale();
        result = f == "sum" ? BoundedDecimal(p + 10, s) : BoundedDecimal(p + 4, s + 4);
      } else if (f == "sum" && arg_type != nullptr && arg_type->is_integral()) {
        result = DataType::Long();
      } else {
        result = DataType::Double();
      }
    }
    auto node = NewNode(Op::kAggregate, result, std::move(args));
    node->name = f;
    node->nullable = f != "count";
    return BoundPtr(node);
  }
  SLUICE_ASSIGN_OR_RETURN(std::vector<BoundPtr> args, BindArgs(n));
  auto type_of = [&](size_t i) { return TypeName(args[i]->type); };
  auto make = [&](Op op, TypePtr type, bool nullable = true) {
    auto node = NewNode(op, std::move(type), args);
    node->nullable = nullable;
    node->name = f;
    return node;
  };
  auto expect = [&](size_t i, const TypePtr& type) -> Status {
    SLUICE_ASSIGN_OR_RETURN(args[i], Expect(n, args[i], type, i));
    return Status::OK();
  };
  auto expect_strings = [&](size_t from, size_t to) -> Status {
    for (size_t i = from; i < std::min(to, args.size()); ++i) SLUICE_RETURN_IF_ERROR(expect(i, DataType::String()));
    return Status::OK();
  };
  auto common_type = [&](bool string_promotion) -> Result<TypePtr> {
    TypePtr common;
    bool ok = true;
    for (const BoundPtr& a : args) {
      common = WiderCommonType(common, a->type, string_promotion, ansi_, &ok);
      if (!ok) return Mismatch(n, fmt::format("the arguments of {} have incompatible types", f));
    }
    if (common == nullptr) common = DataType::Boolean();
    for (BoundPtr& a : args) {
      SLUICE_ASSIGN_OR_RETURN(a, CastTo(a, common));
    }
    return common;
  };
  // A function of one string (implicitly cast) returning `type`.
  auto string_unary = [&](Op op, TypePtr type) -> Result<BoundPtr> {
    SLUICE_RETURN_IF_ERROR(expect_strings(0, 1));
    return Finish(make(op, std::move(type), args[0]->nullable));
  };
  auto datetime_arg = [&](size_t i, const TypePtr& want) -> Status {
    if (args[i]->type == nullptr || args[i]->type->id() == TypeId::kString || IsDatetime(*args[i]->type)) {
      return expect(i, want);
    }
    return Mismatch(n, fmt::format("argument {} of {} must be a date or timestamp, got {}", i + 1, f, type_of(i)));
  };

  if (f == "isnull" || f == "isnotnull") {
    return Finish(make(f == "isnull" ? Op::kIsNull : Op::kIsNotNull, DataType::Boolean(), false));
  }
  if (f == "istrue" || f == "isfalse") {
    if (args[0]->type != nullptr && args[0]->type->id() != TypeId::kBoolean) {
      return Mismatch(n, fmt::format("IS {} needs a boolean operand, got {}", f == "istrue" ? "TRUE" : "FALSE", type_of(0)));
    }
    SLUICE_RETURN_IF_ERROR(expect(0, DataType::Boolean()));
    auto node = make(f == "istrue" ? Op::kIsTrue : Op::kIsFalse, DataType::Boolean(), false);
    node->negated = n.negated;
    return Finish(node);
  }
  if (f == "positive" || f == "negative") {
    // A number; a string is read as a double. Unary plus leaves the number as it is.
    if (args[0]->type == nullptr || args[0]->type->id() == TypeId::kString) SLUICE_RETURN_IF_ERROR(expect(0, DataType::Double()));
    if (!args[0]->type->is_numeric()) {
      return Mismatch(n, fmt::format("unary {} needs a numeric operand, got {}", f == "positive" ? "+" : "-", type_of(0)));
    }
    if (f == "positive") return args[0];
    return Finish(make(Op::kNegate, args[0]->type, args[0]->nullable));
  }
  if (f == "in") {
    SLUICE_ASSIGN_OR_RETURN(TypePtr common, common_type(true));
    if (common->is_nested()) return Mismatch(n, "IN cannot compare nested values");
    auto node = make(Op::kIn, DataType::Boolean(), AnyNullable(args));
    node->negated = n.negated;
    return Finish(node);
  }
  if (f == "like" || f == "ilike") {
    // Also reachable as calls, like(x, p[, escape]), with any arguments.
    if (args.size() == 3 && (!IsConstantString(args[2]) || args[2]->constant->IsNull(0) ||
                             args[2]->constant->View(0).size() != 1)) {
      return BadParameter(n, "the escape of LIKE is a string literal of one character");
    }
    SLUICE_RETURN_IF_ERROR(expect_strings(0, 2));
    char escape = '\\';
    if (args.size() == 3) {
      escape = args[2]->constant->View(0)[0];
      args.pop_back();
    }
    auto node = make(Op::kLike, DataType::Boolean(), AnyNullable(args));
    node->negated = n.negated;
    node->ilike = f == "ilike";
    node->escape = escape;
    if (IsConstantString(args[1]) && args[1]->constant->IsValid(0)) {
      auto compiled = LikePattern::Compile(args[1]->constant->View(0), escape, node->ilike);
      if (!compiled.ok()) return BadParameter(n, compiled.status().message());
      node->state = *compiled;
    }
    return Finish(node);
  }
  if (f == "rlike") {
    SLUICE_RETURN_IF_ERROR(expect_strings(0, 2));
    auto node = make(Op::kRLike, DataType::Boolean(), AnyNullable(args));
    node->negated = n.negated;
    if (IsConstantString(args[1]) && args[1]->constant->IsValid(0)) {
      auto compiled = CompileRegex(args[1]->constant->View(0));
      if (!compiled.ok()) return BadParameter(n, compiled.status().message());
      node->state = *compiled;
    }
    return Finish(node);
  }
  if (f == "coalesce" || f == "ifnull" || f == "nvl") {
    SLUICE_ASSIGN_OR_RETURN(TypePtr common, common_type(true));
    bool nullable = std::all_of(args.begin(), args.end(), [](const BoundPtr& a) { return a->nullable; });
    // Arguments after the first one that can never be null are never reached.
    for (size_t i = 0; i < args.size(); ++i) {
      if (!args[i]->nullable) {
        args.resize(i + 1);
        break;
      }
    }
    if (args.size() == 1) return args[0];
    return Finish(make(Op::kCoalesce, common, nullable));
  }
  if (f == "greatest" || f == "least") {
    SLUICE_ASSIGN_OR_RETURN(TypePtr common, common_type(false));
    if (common->is_nested()) return Mismatch(n, fmt::format("{} cannot order {}", f, common->ToString()));
    bool nullable = std::all_of(args.begin(), args.end(), [](const BoundPtr& a) { return a->nullable; });
    return Finish(make(f == "greatest" ? Op::kGreatest : Op::kLeast, common, nullable));
  }
  if (f == "lower" || f == "lcase") return string_unary(Op::kLower, DataType::String());
  if (f == "upper" || f == "ucase") return string_unary(Op::kUpper, DataType::String());
  if (f == "length" || f == "char_length") {
    if (args[0]->type == nullptr || args[0]->type->id() != TypeId::kBinary) SLUICE_RETURN_IF_ERROR(expect_strings(0, 1));
    return Finish(make(Op::kLength, DataType::Integer(), args[0]->nullable));
  }
  if (f == "trim" || f == "ltrim" || f == "rtrim") {
    SLUICE_RETURN_IF_ERROR(expect_strings(0, 2));
    return Finish(make(f == "trim" ? Op::kTrim : f == "ltrim" ? Op::kLTrim : Op::kRTrim, DataType::String(), AnyNullable(args)));
  }
  if (f == "substring" || f == "substr") {
    SLUICE_RETURN_IF_ERROR(expect_strings(0, 1));
    for (size_t i = 1; i < args.size(); ++i) SLUICE_RETURN_IF_ERROR(expect(i, DataType::Integer()));
    return Finish(make(Op::kSubstring, DataType::String(), AnyNullable(args)));
  }
  if (f == "concat") {
    bool all_binary = !args.empty() && std::all_of(args.begin(), args.end(), [](const BoundPtr& a) {
      return a->type != nullptr && a->type->id() == TypeId::kBinary;
    });
    TypePtr type = all_binary ? DataType::Binary() : DataType::String();
    if (!all_binary) SLUICE_RETURN_IF_ERROR(expect_strings(0, args.size()));
    return Finish(make(Op::kConcat, type, AnyNullable(args)));
  }
  if (f == "concat_ws") {
    for (size_t i = 0; i < args.size(); ++i) {
      const TypePtr& t = args[i]->type;
      if (i > 0 && t != nullptr && t->id() == TypeId::kArray) {
        if (t->element_type()->id() != TypeId::kString) {
          return Mismatch(n, fmt::format("argument {} of concat_ws must be a string or array<string>, got {}", i + 1, type_of(i)));
        }
        continue;
      }
      SLUICE_RETURN_IF_ERROR(expect(i, DataType::String()));
    }
    return Finish(make(Op::kConcatWs, DataType::String(), args[0]->nullable));
  }
  if (f == "replace") {
    SLUICE_RETURN_IF_ERROR(expect_strings(0, 3));
    return Finish(make(Op::kReplace, DataType::String(), AnyNullable(args)));
  }
  if (f == "split") {
    SLUICE_RETURN_IF_ERROR(expect_strings(0, 2));
    if (args.size() == 3) SLUICE_RETURN_IF_ERROR(expect(2, DataType::Integer()));
    auto node = make(Op::kSplit, DataType::Array(DataType::String(), false), AnyNullable(args));
    if (IsConstantString(args[1]) && args[1]->constant->IsValid(0)) {
      auto compiled = CompileRegex(args[1]->constant->View(0));
      if (!compiled.ok()) return BadParameter(n, compiled.status().message());
      node->state = *compiled;
    }
    return Finish(node);
  }
  if (f == "regexp_extract") {
    SLUICE_RETURN_IF_ERROR(expect_strings(0, 2));
    if (args.size() == 2) {
      auto one = NewNode(Op::kConstant, DataType::Integer());
      LiteralValue v;
      v.integer = 1;
      one->constant = LiteralColumn(v, DataType::Integer());
      one->nullable = false;
      args.push_back(one);
    }
    SLUICE_RETURN_IF_ERROR(expect(2, DataType::Integer()));
    auto node = make(Op::kRegexpExtract, DataType::String(), AnyNullable(args));
    if (IsConstantString(args[1]) && args[1]->constant->IsValid(0)) {
      auto compiled = CompileRegex(args[1]->constant->View(0));
      if (!compiled.ok()) return BadParameter(n, compiled.status().message());
      if (args[2]->op == Op::kConstant && args[2]->constant->IsValid(0)) {
        int group = args[2]->constant->Value<int32_t>(0);
        if (group < 0 || group > (*compiled)->groups) {
          return BadParameter(n, fmt::format("the regex has {} groups but group {} was asked for", (*compiled)->groups, group));
        }
      }
      node->state = *compiled;
    }
    return Finish(node);
  }
  if (f == "startswith" || f == "endswith" || f == "contains") {
    // Two binary values are compared as bytes, as Spark does; otherwise both are strings.
    const bool binary = args[0]->type != nullptr && args[1]->type != nullptr &&
                        args[0]->type->id() == TypeId::kBinary && args[1]->type->id() == TypeId::kBinary;
    if (!binary) SLUICE_RETURN_IF_ERROR(expect_strings(0, 2));
    return Finish(make(f == "startswith" ? Op::kStartsWith : f == "endswith" ? Op::kEndsWith : Op::kContains,
                       DataType::Boolean(), AnyNullable(args)));
  }
  auto numeric_arg = [&](size_t i) -> Status {
    if (args[i]->type == nullptr || args[i]->type->id() == TypeId::kString) return expect(i, DataType::Double());
    if (!args[i]->type->is_numeric()) {
      return Mismatch(n, fmt::format("argument {} of {} must be numeric, got {}", i + 1, f, type_of(i)));
    }
    return Status::OK();
  };
  if (f == "abs") {
    SLUICE_RETURN_IF_ERROR(numeric_arg(0));
    return Finish(make(Op::kAbs, args[0]->type, args[0]->nullable));
  }
  if (f == "round") {
    SLUICE_RETURN_IF_ERROR(numeric_arg(0));
    int scale = 0;
    if (args.size() == 2) {
      if (args[1]->op != Op::kConstant || args[1]->type == nullptr || !args[1]->type->is_integral() || args[1]->constant->IsNull(0)) {
        return Mismatch(n, "the scale of round must be a constant integer");
      }
      SLUICE_RETURN_IF_ERROR(expect(1, DataType::Integer()));
      scale = args[1]->constant->Value<int32_t>(0);
    } else {
      auto zero = NewNode(Op::kConstant, DataType::Integer());
      zero->constant = LiteralColumn(LiteralValue{}, DataType::Integer());
      zero->nullable = false;
      args.push_back(zero);
    }
    TypePtr type = args[0]->type;
    if (type->id() == TypeId::kDecimal) {
      int p = type->precision(), s = type->scale();
      int new_scale = std::clamp(scale, 0, s);
      type = BoundedDecimal(p - s + 1 + new_scale, new_scale);
    }
    return Finish(make(Op::kRound, type, args[0]->nullable));
  }
  if (f == "floor" || f == "ceil" || f == "ceiling") {
    SLUICE_RETURN_IF_ERROR(numeric_arg(0));
    TypePtr type = DataType::Long();
    if (args[0]->type->id() == TypeId::kDecimal) {
      type = BoundedDecimal(args[0]->type->precision() - args[0]->type->scale() + 1, 0);
    }
    return Finish(make(f == "floor" ? Op::kFloor : Op::kCeil, type, args[0]->nullable));
  }
  if (f == "sqrt") {
    SLUICE_RETURN_IF_ERROR(numeric_arg(0));
    SLUICE_RETURN_IF_ERROR(expect(0, DataType::Double()));
    return Finish(make(Op::kSqrt, DataType::Double(), args[0]->nullable));
  }
  if (f == "pow" || f == "power") {
    for (size_t i = 0; i < 2; ++i) {
      SLUICE_RETURN_IF_ERROR(numeric_arg(i));
      SLUICE_RETURN_IF_ERROR(expect(i, DataType::Double()));
    }
    return Finish(make(Op::kPow, DataType::Double(), AnyNullable(args)));
  }
  if (f == "hash") {
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i]->type != nullptr && args[i]->type->id() == TypeId::kMap) {
        return Mismatch(n, "hash cannot take map values");
      }
    }
    return Finish(make(Op::kHash, DataType::Integer(), false));
  }
  if (f == "md5" || f == "sha2") {
    if (args[0]->type == nullptr || args[0]->type->id() != TypeId::kBinary) SLUICE_RETURN_IF_ERROR(expect(0, DataType::Binary()));
    if (f == "sha2") SLUICE_RETURN_IF_ERROR(expect(1, DataType::Integer()));
    return Finish(make(f == "md5" ? Op::kMd5 : Op::kSha2, DataType::String(), true));
  }
  if (f == "current_timestamp" || f == "now") {
    return Finish(make(Op::kCurrentTimestamp, DataType::Timestamp(), false));
  }
  if (f == "current_date") {
    return Finish(make(Op::kCurrentDate, DataType::Date(), false));
  }
  if (f == "to_timestamp" || f == "to_date") {
    TypePtr target = f == "to_date" ? DataType::Date() : DataType::Timestamp();
    if (args.size() == 1) {
      SLUICE_RETURN_IF_ERROR(datetime_arg(0, target));
      return args[0];
    }
    SLUICE_RETURN_IF_ERROR(expect_strings(0, 2));
    return Finish(make(f == "to_date" ? Op::kToDate : Op::kToTimestamp, target, true));
  }
  if (f == "date_trunc") {
    SLUICE_RETURN_IF_ERROR(expect_strings(0, 1));
    SLUICE_RETURN_IF_ERROR(datetime_arg(1, DataType::Timestamp()));
    return Finish(make(Op::kDateTrunc, DataType::Timestamp(), true));
  }
  if (f == "date_format") {
    SLUICE_RETURN_IF_ERROR(datetime_arg(0, DataType::Timestamp()));
    SLUICE_RETURN_IF_ERROR(expect_strings(1, 2));
    return Finish(make(Op::kDateFormat, DataType::String(), true));
  }
  if (f == "year" || f == "month" || f == "day" || f == "dayofmonth") {
    SLUICE_RETURN_IF_ERROR(datetime_arg(0, DataType::Date()));
    return Finish(make(f == "year" ? Op::kYear : f == "month" ? Op::kMonth : Op::kDay, DataType::Integer(), args[0]->nullable));
  }
  if (f == "hour") {
    SLUICE_RETURN_IF_ERROR(datetime_arg(0, DataType::Timestamp()));
    return Finish(make(Op::kHour, DataType::Integer(), args[0]->nullable));
  }
  if (f == "unix_timestamp") {
    if (args.size() == 2) {
      SLUICE_RETURN_IF_ERROR(expect_strings(0, 2));
    } else if (args.size() == 1) {
      SLUICE_RETURN_IF_ERROR(datetime_arg(0, DataType::Timestamp()));
    }
    return Finish(make(Op::kUnixTimestamp, DataType::Long(), !args.empty()));
  }
  if (f == "from_unixtime") {
    SLUICE_RETURN_IF_ERROR(expect(0, DataType::Long()));
    SLUICE_RETURN_IF_ERROR(expect_strings(1, 2));
    return Finish(make(Op::kFromUnixtime, DataType::String(), AnyNullable(args)));
  }
  if (f == "get_json_object") {
    SLUICE_RETURN_IF_ERROR(expect_strings(0, 2));
    return Finish(make(Op::kGetJsonObject, DataType::String(), true));
  }
  if (f == "size") {
    // An untyped NULL is a null array: size -1, as in Spark.
    if (args[0]->type == nullptr) {
      SLUICE_ASSIGN_OR_RETURN(args[0], CastTo(args[0], DataType::Array(DataType::String())));
    }
    if (args[0]->type->id() != TypeId::kArray && args[0]->type->id() != TypeId::kMap) {
      return Mismatch(n, fmt::format("size needs an array or a map, got {}", type_of(0)));
    }
    return Finish(make(Op::kSize, DataType::Integer(), ansi_ && args[0]->nullable));
  }
  if (f == "element_at" || f == "subscript") {
    const TypePtr& t = args[0]->type;
    if (t != nullptr && t->id() == TypeId::kArray) {
      SLUICE_RETURN_IF_ERROR(expect(1, DataType::Integer()));
      return Finish(make(f == "element_at" ? Op::kElementAt : Op::kSubscript, t->element_type(), true));
    }
    if (t != nullptr && t->id() == TypeId::kMap) {
      SLUICE_RETURN_IF_ERROR(expect(1, t->key_type()));
      return Finish(make(Op::kElementAt, t->value_type(), true));
    }
    return Mismatch(n, fmt::format("{} needs an array or a map, got {}", f == "subscript" ? "[]" : f, type_of(0)));
  }
  if (f == "get_field") {
    const TypePtr& t = args[0]->type;
    if (t == nullptr || t->id() != TypeId::kStruct) return Mismatch(n, fmt::format("field access needs a struct, got {}", type_of(0)));
    if (!IsConstantString(args[1]) || args[1]->constant->IsNull(0)) {
      return Mismatch(n, "the field name of get_field is a string literal");
    }
    std::string_view name = args[1]->constant->View(0);
    int index = t->FieldIndexIgnoreCase(name);
    if (index < 0) return Mismatch(n, fmt::format("{} has no field named {}", t->ToString(), name));
    auto node = NewNode(Op::kGetField, t->field(index).type, {args[0]});
    node->slot = index;
    return Finish(node);
  }
  if (f == "struct" || f == "named_struct") {
    std::vector<Field> fields;
    std::vector<BoundPtr> values;
    if (f == "named_struct") {
      if (args.size() % 2 != 0) return WrongArgs(n, "an even number of arguments (name, value pairs)");
      for (size_t i = 0; i < args.size(); i += 2) {
        if (!IsConstantString(args[i]) || args[i]->constant->IsNull(0)) {
          return Mismatch(n, fmt::format("argument {} of named_struct must be a constant string (a field name)", i + 1));
        }
        values.push_back(args[i + 1]);
        fields.push_back(Field{std::string(args[i]->constant->View(0)), args[i + 1]->type, args[i + 1]->nullable});
      }
    } else {
      for (size_t i = 0; i < args.size(); ++i) {
        const Node& a = *n.args[i];
        std::string name = a.kind == NodeKind::kColumn ? a.path.back() : fmt::format("col{}", i + 1);
        values.push_back(args[i]);
        fields.push_back(Field{name, args[i]->type, args[i]->nullable});
      }
    }
    for (size_t i = 0; i < values.size(); ++i) {
      if (values[i]->type == nullptr) {
        SLUICE_ASSIGN_OR_RETURN(values[i], CastTo(values[i], DataType::String()));
        fields[i].type = DataType::String();
      }
    }
    Result<TypePtr> type = DataType::Struct(std::move(fields));
    if (!type.ok()) return Mismatch(n, type.status().message());
    auto node = NewNode(Op::kStruct, *type, std::move(values));
    node->nullable = false;
    return Finish(node);
  }
  if (f == "array") {
    SLUICE_ASSIGN_OR_RETURN(TypePtr element, common_type(true));
    if (args.empty()) element = DataType::String();
    return Finish(make(Op::kArray, DataType::Array(element, AnyNullable(args)), false));
  }
  if (f == "map") {
    // map(k1, v1, k2, v2, ...): keys of their common type, values of theirs.
    if (args.size() % 2 != 0) return WrongArgs(n, "an even number of arguments (key, value pairs)");
    TypePtr key, value;
    bool ok = true;
    for (size_t i = 0; i < args.size() && ok; i += 2) {
      key = WiderCommonType(key, args[i]->type, true, ansi_, &ok);
      if (ok) value = WiderCommonType(value, args[i + 1]->type, true, ansi_, &ok);
    }
    if (!ok) return Mismatch(n, "the keys, or the values, of map have incompatible types");
    if (key == nullptr) key = DataType::String();
    if (value == nullptr) value = DataType::String();
    if (key->id() == TypeId::kMap) return Mismatch(n, "a map key cannot be a map");
    bool value_nullable = false;
    for (size_t i = 0; i < args.size(); i += 2) {
      SLUICE_ASSIGN_OR_RETURN(args[i], CastTo(args[i], key));
      SLUICE_ASSIGN_OR_RETURN(args[i + 1], CastTo(args[i + 1], value));
      value_nullable = value_nullable || args[i + 1]->nullable;
    }
    return Finish(make(Op::kMap, DataType::Map(key, value, value_nullable), false));
  }
  return Status::Error(errors::kUnresolvedRoutine, fmt::format("function {} at {}:{} is not supported here", f, n.line, n.column));
}

}  // namespace

Result<Expression> Expression::Parse(std::string_view sql) {
  SLUICE_ASSIGN_OR_RETURN(NodePtr root, ParseTree(sql));
  return Expression(std::move(root));
}

std::string Expression::ToSql() const { return PrintSql(*root_); }

namespace {
void CollectColumns(const Node& n, std::vector<std::string>* out) {
  if (n.kind == NodeKind::kColumn && std::find(out->begin(), out->end(), n.path[0]) == out->end()) out->push_back(n.path[0]);
  for (const NodePtr& a : n.args) CollectColumns(*a, out);
}
}  // namespace

std::vector<std::string> Expression::ReferencedColumns() const {
  std::vector<std::string> out;
  CollectColumns(*root_, &out);
  return out;
}

std::vector<Expression> Expression::Conjuncts() const {
  std::vector<Expression> out;
  std::vector<NodePtr> pending = {root_};
  while (!pending.empty()) {
    NodePtr node = std::move(pending.back());
    pending.pop_back();
    if (node->kind == NodeKind::kCall && node->name == "and" && node->args.size() == 2) {
      pending.push_back(node->args[1]);
      pending.push_back(node->args[0]);
    } else {
      out.emplace_back(std::move(node));
    }
  }
  return out;
}

std::optional<ColumnComparison> Expression::AsColumnComparison() const {
  const Node& n = *root_;
  static constexpr std::pair<std::string_view, std::string_view> kMirrored[] = {
      {"=", "="}, {"<", ">"}, {"<=", ">="}, {">", "<"}, {">=", "<="}};
  if (n.kind != NodeKind::kCall || n.args.size() != 2) return std::nullopt;
  auto op = std::find_if(std::begin(kMirrored), std::end(kMirrored), [&](const auto& pair) { return pair.first == n.name; });
  if (op == std::end(kMirrored)) return std::nullopt;
  auto reads_columns = [](const NodePtr& node) {
    std::vector<std::string> columns;
    CollectColumns(*node, &columns);
    return !columns.empty();
  };
  for (int column_side = 0; column_side < 2; ++column_side) {
    const NodePtr& column = n.args[static_cast<size_t>(column_side)];
    const NodePtr& constant = n.args[static_cast<size_t>(1 - column_side)];
    if (column->kind == NodeKind::kColumn && !reads_columns(constant)) {
      return ColumnComparison{column->path, std::string(column_side == 0 ? op->first : op->second), Expression(constant)};
    }
  }
  return std::nullopt;
}

Result<NamedExpression> ParseNamedExpression(std::string_view sql) {
  SLUICE_ASSIGN_OR_RETURN(NamedTree tree, ParseNamedTree(sql));
  std::string name = tree.alias;
  if (name.empty()) name = tree.node->kind == NodeKind::kColumn ? tree.node->path.back() : PrintSql(*tree.node);
  return NamedExpression{Expression(std::move(tree.node)), std::move(name)};
}

Result<BoundExpression> Bind(const Expression& expression, const TypePtr& input_schema, SqlOptions options) {
  if (input_schema == nullptr || input_schema->id() != TypeId::kStruct) {
    return Status::Error(errors::kInvalidSchema, "an expression is bound to a struct schema");
  }
  Binder binder(input_schema, options);
  SLUICE_ASSIGN_OR_RETURN(BoundPtr node, binder.Bind(expression.node()));
  if (node->type == nullptr) {
    auto typed = std::make_shared<BoundNode>(*node);
    typed->type = DataType::Boolean();
    node = typed;
  }
  auto root = std::make_shared<BoundRoot>();
  root->node = std::move(node);
  root->input_schema = input_schema;
  root->slot_paths = binder.TakeSlotPaths();
  return BoundExpression(std::move(root));
}

Result<BoundExpression> BindPredicate(const Expression& expression, const TypePtr& input_schema, SqlOptions options) {
  SLUICE_ASSIGN_OR_RETURN(BoundExpression bound, Bind(expression, input_schema, options));
  if (bound.result_type()->id() != TypeId::kBoolean) {
    return Status::Error(errors::kDatatypeMismatch,
                         fmt::format("a filter must be boolean, but {} is {}", expression.ToSql(), bound.result_type()->ToString()));
  }
  return bound;
}

const TypePtr& BoundExpression::result_type() const { return root_->node->type; }
bool BoundExpression::nullable() const { return root_->node->nullable; }
std::string BoundExpression::ToSql() const { return PrintBound(*root_->node); }

std::vector<std::string_view> CallableNames() {
  std::vector<std::string_view> names;
  for (const CallArity& c : kCalls) names.push_back(c.name);
  return names;
}

}  // namespace sluice::expr
