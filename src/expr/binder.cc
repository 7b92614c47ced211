// Binding: resolves columns, checks and coerces types as Spark does, rewrites the sugar
// (BETWEEN, IF, NULLIF, simple CASE) into primitive ops and folds constants.
#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <utility>

#include <fmt/format.h>

#include "sluice/core/ascii.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/edit_distance.h"
#include "sluice/expr/expression.h"
#include "sluice/expr/generator.h"
#include "expr/bound.h"
#include "expr/coercion.h"
#include "expr/datetime.h"
#include "expr/json_functions.h"
#include "expr/like.h"
#include "expr/number_format.h"
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

bool IsBinary(const BoundPtr& b) { return b->type != nullptr && b->type->id() == TypeId::kBinary; }

NodePtr MakeNullLiteral(const Node& at) {
  auto n = std::make_shared<Node>();
  n->kind = NodeKind::kLiteral;
  n->line = at.line;
  n->column = at.column;
  n->literal.is_null = true;
  return n;
}

NodePtr IntegerLiteral(const Node& at, int64_t value) {
  auto n = std::make_shared<Node>();
  n->kind = NodeKind::kLiteral;
  n->line = at.line;
  n->column = at.column;
  n->literal.type = DataType::Integer();
  n->literal.integer = value;
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
                             fmt::format("at {}:{}: '*' is allowed only in count(*)", n.line, n.column));
      case NodeKind::kLambda:
        return Status::Error(errors::kInvalidLambdaFunctionCall,
                             fmt::format("the lambda function {} at {}:{} is allowed only as an argument of a "
                                         "higher-order function (transform, filter, exists, forall, aggregate, "
                                         "zip_with, array_sort)",
                                         PrintSql(n), n.line, n.column));
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
                    node->op != Op::kUuid && node->op != Op::kRand && node->op != Op::kRandn &&
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
    for (auto it = lambda_scope_.rbegin(); it != lambda_scope_.rend(); ++it) {
      if (EqualsIgnoreCase(it->name, n.path[0])) return BindLambdaVariable(n, *it);
    }
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

  // --- lambdas ---
  struct LambdaVariable {
    std::string name;
    int id;
    TypePtr type;
    bool nullable;
  };

  // A lambda parameter, then the struct fields its path names (`x.a.b`).
  Result<BoundPtr> BindLambdaVariable(const Node& n, const LambdaVariable& variable) {
    auto node = NewNode(Op::kLambdaVariable, variable.type);
    node->slot = variable.id;
    node->nullable = variable.nullable;
    node->name = QuoteIdentifier(variable.name);
    BoundPtr current = node;
    for (size_t i = 1; i < n.path.size(); ++i) {
      if (current->type->id() != TypeId::kStruct) {
        return Unresolved(n, fmt::format("{} is {}, not a struct", PrintBound(*current), current->type->ToString()));
      }
      int index = current->type->FieldIndexIgnoreCase(n.path[i]);
      if (index == -2) index = current->type->FieldIndex(n.path[i]);
      if (index < 0) return Unresolved(n, fmt::format("{} has no field {}", PrintBound(*current), QuoteIdentifier(n.path[i])));
      const Field& field = current->type->field(index);
      auto get = NewNode(Op::kGetField, field.type, {current});
      get->slot = index;
      get->nullable = current->nullable || field.nullable;
      current = get;
    }
    return current;
  }

  // Binds a lambda argument of a higher-order function whose parameters get `parameters` (type,
  // nullable) in order; it must name at least `min_parameters` of them.
  Result<BoundPtr> BindLambda(const Node& call, const Node& lambda, const std::vector<std::pair<TypePtr, bool>>& parameters,
                              size_t min_parameters) {
    if (lambda.kind != NodeKind::kLambda) {
      // An expression where a lambda function is taken is one of no parameters, as in Spark:
      // transform(a, 1) is transform(a, () -> 1).
      SLUICE_ASSIGN_OR_RETURN(BoundPtr body, Bind(lambda));
      auto node = NewNode(Op::kLambda, body->type, {body});
      node->slot = lambda_variable_count_;
      node->nullable = body->nullable;
      return BoundPtr(node);
    }
    if (lambda.path.size() < min_parameters || lambda.path.size() > parameters.size()) {
      return Status::Error(errors::kInvalidLambdaFunctionCall,
                           fmt::format("the lambda function {} of {} at {}:{} takes {} parameter{}, not {}", PrintSql(lambda),
                                       call.name, lambda.line, lambda.column,
                                       min_parameters == parameters.size()
                                           ? std::to_string(min_parameters)
                                           : fmt::format("{} or {}", min_parameters, parameters.size()),
                                       parameters.size() == 1 ? "" : "s", lambda.path.size()));
    }
    const int first = lambda_variable_count_;
    const size_t scope = lambda_scope_.size();
    std::string names;
    for (size_t i = 0; i < lambda.path.size(); ++i) {
      lambda_scope_.push_back({lambda.path[i], lambda_variable_count_++, parameters[i].first, parameters[i].second});
      names += (i > 0 ? ", " : "") + QuoteIdentifier(lambda.path[i]);
    }
    Result<BoundPtr> body = Bind(*lambda.args[0]);
    lambda_scope_.resize(scope);
    SLUICE_RETURN_IF_ERROR(body.status());
    auto node = NewNode(Op::kLambda, (*body)->type, {*body});
    node->slot = first;
    node->parameters = static_cast<int>(lambda.path.size());
    node->nullable = (*body)->nullable;
    node->name = std::move(names);
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

  friend class Call;

  TypePtr schema_;
  const bool ansi_;
  // The mode of the nodes being made: ANSI or non-ANSI, TRY while a try_ function is bound.
  EvalMode mode_;
  std::vector<std::vector<int>> slot_paths_;
  // Arguments of a try_ function, bound before it in the session's mode.
  std::map<const Node*, BoundPtr> prebound_;
  // The lambda parameters in scope, innermost last, and how many ids have been given out.
  std::vector<LambdaVariable> lambda_scope_;
  int lambda_variable_count_ = 0;
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
  node->nullable = AnyNullable(node->args) || op == Op::kDivide || op == Op::kRemainder || op == Op::kPmod || op == Op::kIntDivide ||
                   result->id() == TypeId::kDecimal;
  return Finish(node);
}

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
    // Operators, reachable as calls too, and the calls BindCall rewrites into them.
    {"and", 2, 2}, {"or", 2, 2}, {"not", 1, 1}, {"=", 2, 2}, {"<=>", 2, 2}, {"!=", 2, 2}, {"<", 2, 2}, {"<=", 2, 2},
    {">", 2, 2}, {">=", 2, 2}, {"+", 2, 2}, {"-", 2, 2}, {"*", 2, 2}, {"/", 2, 2}, {"%", 2, 2}, {"div", 2, 2},
    {"||", 2, kAny}, {"between", 3, 3}, {"nullif", 2, 2}, {"if", 3, 3}, {"iff", 3, 3}, {"mod", 2, 2}, {"pmod", 2, 2},
    {"try_add", 2, 2}, {"try_subtract", 2, 2}, {"try_multiply", 2, 2}, {"try_divide", 2, 2}, {"try_mod", 2, 2},
    {"try_element_at", 2, 2}, {"try_to_timestamp", 1, 2}, {"overlay", 3, 4},
    // Spark's cast functions.
    {"boolean", 1, 1}, {"tinyint", 1, 1}, {"smallint", 1, 1}, {"int", 1, 1}, {"bigint", 1, 1}, {"float", 1, 1},
    {"double", 1, 1}, {"decimal", 1, 1}, {"string", 1, 1}, {"binary", 1, 1}, {"date", 1, 1}, {"timestamp", 1, 1},
};

class Call;
// One function: a name, the number of arguments it takes (checked before binding), and the
// binder that checks and coerces its arguments and makes its node.
struct FunctionDef {
  std::string_view name;
  size_t min;
  size_t max;
  Result<BoundPtr> (*bind)(Call& call);
  // Takes lambda functions: its lambda arguments are bound by `bind` (Call::Lambda), not before.
  bool higher_order = false;
};
const FunctionDef* FindFunction(std::string_view name);

// The arguments a call of `name` takes; false when there is no such operator or function.
bool FindCall(std::string_view name, CallArity* arity) {
  for (const CallArity& c : kCalls) {
    if (c.name == name) return *arity = c, true;
  }
  if (const FunctionDef* def = FindFunction(name)) return *arity = CallArity{def->name, def->min, def->max}, true;
  return false;
}

Result<BoundPtr> Binder::BindCall(const Node& n) {
  const std::string& f = n.name;
  CallArity call;
  if (!FindCall(f, &call)) {
    if (IsGeneratorFunction(f)) {
      return Status::Error(errors::kUnsupportedGenerator,
                           fmt::format("OUTSIDE_SELECT: the generator {} at {}:{} may only be a whole item of a "
                                       "select list without aggregation",
                                       f, n.line, n.column));
    }
    std::string_view best;
    size_t best_distance = SIZE_MAX;
    for (std::string_view candidate : CallableNames()) {
      if (!std::isalpha(static_cast<unsigned char>(candidate[0]))) continue;
      size_t d = EditDistance(f, candidate);
      if (d < best_distance) best_distance = d, best = candidate;
    }
    std::string message = fmt::format("unknown function {} at {}:{}", f, n.line, n.column);
    if (best_distance <= 3) message += fmt::format("; did you mean {}?", best);
    return Status::Error(errors::kUnresolvedRoutine, message);
  }
  SLUICE_RETURN_IF_ERROR(CheckArgs(n, call.min, call.max));
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
  if (f == "pmod") return BindArithmetic(n, Op::kPmod);
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
  if (f == "||") return Bind(*MakeCall(n, "concat", n.args));
  if (f == "decode" && n.args.size() >= 3) {
    // decode(expr, search, result, ..., [default]): the result of the first search equal to expr
    // (NULL equal to NULL), else the default or NULL.
    std::vector<NodePtr> branches;
    for (size_t i = 1; i + 1 < n.args.size(); i += 2) {
      branches.push_back(MakeCall(n, "<=>", {n.args[0], n.args[i]}));
      branches.push_back(n.args[i + 1]);
    }
    // Without a default, Spark's is a NULL of type string, which takes part in the result's type.
    if (n.args.size() % 2 == 0) {
      branches.push_back(n.args.back());
    } else {
      auto null_string = std::make_shared<Node>(n);
      null_string->kind = NodeKind::kCast;
      null_string->args = {MakeNullLiteral(n)};
      null_string->cast_type = DataType::String();
      branches.push_back(null_string);
    }
    return Bind(*MakeCase(n, std::move(branches), true));
  }
  // Spark's cast functions: int(x) is CAST(x AS INT).
  static const std::map<std::string, TypePtr, std::less<>> kCastFunctions = {
      {"boolean", DataType::Boolean()}, {"tinyint", DataType::Byte()},     {"smallint", DataType::Short()},
      {"int", DataType::Integer()},     {"bigint", DataType::Long()},      {"float", DataType::Float()},
      {"double", DataType::Double()},   {"decimal", DataType::Decimal(10, 0).value()},
      {"string", DataType::String()},   {"binary", DataType::Binary()},    {"date", DataType::Date()},
      {"timestamp", DataType::Timestamp()}};
  if (auto it = kCastFunctions.find(f); it != kCastFunctions.end()) {
    auto cast = std::make_shared<Node>(n);
    cast->kind = NodeKind::kCast;
    cast->cast_type = it->second;
    return BindCast(*cast);
  }
  static const std::map<std::string, std::string> kTryFunctions = {
      {"try_add", "+"},  {"try_subtract", "-"},           {"try_multiply", "*"},
      {"try_divide", "/"}, {"try_mod", "%"},              {"try_element_at", "element_at"},
      {"try_to_timestamp", "to_timestamp"}};
  if (auto it = kTryFunctions.find(f); it != kTryFunctions.end()) return BindTry(n, it->second);
  if (f == "overlay") {
    // overlay(input, replace, pos[, len]) is input's characters before pos, replace, then input's
    // characters from pos + len (len the length of replace when not given or negative), as Spark.
    const NodePtr& input = n.args[0];
    const NodePtr& replace = n.args[1];
    const NodePtr& pos = n.args[2];
    // Strings, or binary values (in bytes), not one of each.
    SLUICE_ASSIGN_OR_RETURN(BoundPtr bound_input, Bind(*input));
    SLUICE_ASSIGN_OR_RETURN(BoundPtr bound_replace, Bind(*replace));
    if (IsBinary(bound_input) != IsBinary(bound_replace)) {
      return Mismatch(n, fmt::format("the input and the replacement of overlay are both strings or both binary, not {} and {}",
                                     TypeName(bound_input->type), TypeName(bound_replace->type)));
    }
    NodePtr length = MakeCall(n, "length", {replace});
    if (n.args.size() == 4) {
      length = MakeCase(n, {MakeCall(n, ">=", {n.args[3], IntegerLiteral(n, 0)}), n.args[3], length}, true);
    }
    NodePtr before = MakeCall(n, "substring", {input, IntegerLiteral(n, 1), MakeCall(n, "-", {pos, IntegerLiteral(n, 1)})});
    NodePtr after = MakeCall(n, "substring", {input, MakeCall(n, "+", {pos, length})});
    return Bind(*MakeCall(n, "concat", {before, replace, after}));
  }
  if ((f == "timestampadd" || f == "timestampdiff") && n.args[0]->kind == NodeKind::kColumn && n.args[0]->path.size() == 1) {
    // The unit is a keyword (timestampadd(HOUR, 1, ts)), not a column: read as its name.
    auto unit = std::make_shared<Node>(*n.args[0]);
    unit->kind = NodeKind::kLiteral;
    unit->literal.type = DataType::String();
    unit->literal.text = AsciiUpper(n.args[0]->path[0]);
    unit->path.clear();
    auto call = std::make_shared<Node>(n);
    call->args[0] = unit;
    return BindFunction(*call);
  }
  return BindFunction(n);
}


bool IsConstantString(const BoundPtr& b) {
  return b->op == Op::kConstant && b->type != nullptr && b->type->id() == TypeId::kString;
}

// One call of a function of the table below being bound: its node and bound arguments, and the
// checks and coercions the functions share.
class Call {
 public:
  Call(Binder& binder, const Node& node, std::vector<BoundPtr> args)
      : node(node), args(std::move(args)), binder_(binder) {}

  const Node& node;
  std::vector<BoundPtr> args;

  bool ansi() const { return binder_.ansi_; }
  std::string TypeOf(size_t i) const { return TypeName(args[i]->type); }
  Status Mismatch(std::string_view detail) const { return Binder::Mismatch(node, detail); }
  Status WrongArgs(std::string_view expected) const { return Binder::WrongArgs(node, expected); }
  Status BadParameter(std::string_view detail) const { return Binder::BadParameter(node, detail); }
  std::shared_ptr<BoundNode> NewNode(Op op, TypePtr type, std::vector<BoundPtr> node_args = {}) {
    return binder_.NewNode(op, std::move(type), std::move(node_args));
  }
  Result<BoundPtr> Finish(std::shared_ptr<BoundNode> bound) { return binder_.Finish(std::move(bound)); }
  Result<BoundPtr> CastTo(BoundPtr arg, const TypePtr& to) { return binder_.CastTo(std::move(arg), to); }

  // A constant argument the call supplies itself (a default, a rewrite's operand).
  BoundPtr Constant(const TypePtr& type, const LiteralValue& value) {
    auto node = NewNode(Op::kConstant, type);
    node->constant = LiteralColumn(value, type);
    node->nullable = false;
    return node;
  }
  BoundPtr IntegerConstant(int32_t value) { return Constant(DataType::Integer(), LiteralValue{.integer = value}); }
  BoundPtr BooleanConstant(bool value) { return Constant(DataType::Boolean(), LiteralValue{.boolean = value}); }

  // A node of `op` over the arguments as they are now, named after the function.
  std::shared_ptr<BoundNode> Make(Op op, TypePtr type, bool nullable = true) {
    auto bound = NewNode(op, std::move(type), args);
    bound->nullable = nullable;
    bound->name = node.name;
    return bound;
  }
  // Argument i implicitly cast to `type`, or DATATYPE_MISMATCH.
  Status Expect(size_t i, const TypePtr& type) {
    SLUICE_ASSIGN_OR_RETURN(args[i], binder_.Expect(node, args[i], type, i));
    return Status::OK();
  }
  Status ExpectStrings(size_t from, size_t to) {
    for (size_t i = from; i < std::min(to, args.size()); ++i) SLUICE_RETURN_IF_ERROR(Expect(i, DataType::String()));
    return Status::OK();
  }
  // Every argument cast to their wider common type (string promotion as Spark's for IN, CASE ...).
  Result<TypePtr> CommonType(bool string_promotion) {
    TypePtr common;
    bool ok = true;
    for (const BoundPtr& a : args) {
      common = WiderCommonType(common, a->type, string_promotion, ansi(), &ok);
      if (!ok) return Mismatch(fmt::format("the arguments of {} have incompatible types", node.name));
    }
    if (common == nullptr) common = DataType::Boolean();
    for (BoundPtr& a : args) {
      SLUICE_ASSIGN_OR_RETURN(a, CastTo(a, common));
    }
    return common;
  }
  // A function of one string (implicitly cast) returning `type`.
  Result<BoundPtr> StringUnary(Op op, TypePtr type) {
    SLUICE_RETURN_IF_ERROR(ExpectStrings(0, 1));
    return Finish(Make(op, std::move(type), args[0]->nullable));
  }
  // Argument i as `want` (a date or timestamp), from a date, timestamp or string.
  Status DatetimeArg(size_t i, const TypePtr& want) {
    if (args[i]->type == nullptr || args[i]->type->id() == TypeId::kString || IsDatetime(*args[i]->type)) {
      return Expect(i, want);
    }
    return Mismatch(fmt::format("argument {} of {} must be a date or timestamp, got {}", i + 1, node.name, TypeOf(i)));
  }
  // A constant regex pattern (argument i) compiled once into node's state; INVALID_PARAMETER_VALUE
  // when it does not compile. A pattern read from a column is compiled by the kernel.
  Status CompileConstantRegex(size_t i, BoundNode* bound) {
    if (!IsConstantString(args[i]) || !args[i]->constant->IsValid(0)) return Status::OK();
    auto compiled = CompileRegex(args[i]->constant->View(0));
    if (!compiled.ok()) return BadParameter(compiled.status().message());
    bound->state = *compiled;
    return Status::OK();
  }
  // Argument i, a lambda function, bound with its parameters' (type, nullable).
  Status Lambda(size_t i, const std::vector<std::pair<TypePtr, bool>>& parameters, size_t min_parameters) {
    SLUICE_ASSIGN_OR_RETURN(args[i], binder_.BindLambda(node, *node.args[i], parameters, min_parameters));
    return Status::OK();
  }
  // Argument i an array (an untyped NULL is a null array of strings).
  Status ArrayArg(size_t i) {
    if (args[i] == nullptr) return Mismatch(fmt::format("argument {} of {} must be an array, not a lambda function", i + 1, node.name));
    if (args[i]->type == nullptr) {
      SLUICE_ASSIGN_OR_RETURN(args[i], CastTo(args[i], DataType::Array(DataType::String())));
    }
    if (args[i]->type->id() != TypeId::kArray) {
      return Mismatch(fmt::format("argument {} of {} must be an array, got {}", i + 1, node.name, TypeOf(i)));
    }
    return Status::OK();
  }

  // Argument i a number; a string or NULL is read as a double.
  Status NumericArg(size_t i) {
    if (args[i]->type == nullptr || args[i]->type->id() == TypeId::kString) return Expect(i, DataType::Double());
    if (!args[i]->type->is_numeric()) {
      return Mismatch(fmt::format("argument {} of {} must be numeric, got {}", i + 1, node.name, TypeOf(i)));
    }
    return Status::OK();
  }

 private:
  Binder& binder_;
};

// --- the functions, one binder each ---

Result<BoundPtr> BindAggregate(Call& c) {
  const std::string& f = c.node.name;
  TypePtr arg_type = c.args.empty() ? nullptr : c.args[0]->type;  // count(*) has no bound argument
  TypePtr result;
  if (f == "count" || f == "approx_count_distinct") {
    result = DataType::Long();
  } else if (f == "collect_list" || f == "collect_set" || f == "array_agg") {
    result = DataType::Array(arg_type != nullptr ? arg_type : DataType::String(), false);
  } else if (f == "min" || f == "max" || f == "first" || f == "last") {
    result = arg_type != nullptr ? arg_type : DataType::Boolean();
  } else {
    if (arg_type != nullptr && arg_type->id() == TypeId::kString) arg_type = DataType::Double();
    if (arg_type != nullptr && !arg_type->is_numeric()) {
      return c.Mismatch(fmt::format("{} needs a numeric argument, got {}", f, arg_type->ToString()));
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
  auto node = c.NewNode(Op::kAggregate, result, std::move(c.args));
  node->name = f;
  node->nullable = f != "count" && f != "approx_count_distinct" && f.rfind("collect_", 0) != 0 && f != "array_agg";
  return BoundPtr(node);
}

Result<BoundPtr> BindIsNull(Call& c) {
  const std::string& f = c.node.name;
  return c.Finish(c.Make(f == "isnull" ? Op::kIsNull : Op::kIsNotNull, DataType::Boolean(), false));
}

Result<BoundPtr> BindIsTrueOrFalse(Call& c) {
  const std::string& f = c.node.name;
  if (c.args[0]->type != nullptr && c.args[0]->type->id() != TypeId::kBoolean) {
    return c.Mismatch(fmt::format("IS {} needs a boolean operand, got {}", f == "istrue" ? "TRUE" : "FALSE", c.TypeOf(0)));
  }
  SLUICE_RETURN_IF_ERROR(c.Expect(0, DataType::Boolean()));
  auto node = c.Make(f == "istrue" ? Op::kIsTrue : Op::kIsFalse, DataType::Boolean(), false);
  node->negated = c.node.negated;
  return c.Finish(node);
}

Result<BoundPtr> BindUnarySign(Call& c) {
  const std::string& f = c.node.name;
  // A number; a string is read as a double. Unary plus leaves the number as it is.
  if (c.args[0]->type == nullptr || c.args[0]->type->id() == TypeId::kString) SLUICE_RETURN_IF_ERROR(c.Expect(0, DataType::Double()));
  if (!c.args[0]->type->is_numeric()) {
    return c.Mismatch(fmt::format("unary {} needs a numeric operand, got {}", f == "positive" ? "+" : "-", c.TypeOf(0)));
  }
  if (f == "positive") return c.args[0];
  return c.Finish(c.Make(Op::kNegate, c.args[0]->type, c.args[0]->nullable));
}

Result<BoundPtr> BindIn(Call& c) {
  SLUICE_ASSIGN_OR_RETURN(TypePtr common, c.CommonType(true));
  if (common->is_nested()) return c.Mismatch("IN cannot compare nested values");
  auto node = c.Make(Op::kIn, DataType::Boolean(), AnyNullable(c.args));
  node->negated = c.node.negated;
  return c.Finish(node);
}

Result<BoundPtr> BindLike(Call& c) {
  const std::string& f = c.node.name;
  // Also reachable as calls, like(x, p[, escape]), with any arguments.
  if (c.args.size() == 3 && (!IsConstantString(c.args[2]) || c.args[2]->constant->IsNull(0) ||
                           c.args[2]->constant->View(0).size() != 1)) {
    return c.BadParameter("the escape of LIKE is a string literal of one character");
  }
  SLUICE_RETURN_IF_ERROR(c.ExpectStrings(0, 2));
  char escape = '\\';
  if (c.args.size() == 3) {
    escape = c.args[2]->constant->View(0)[0];
    c.args.pop_back();
  }
  auto node = c.Make(Op::kLike, DataType::Boolean(), AnyNullable(c.args));
  node->negated = c.node.negated;
  node->ilike = f == "ilike";
  node->escape = escape;
  if (IsConstantString(c.args[1]) && c.args[1]->constant->IsValid(0)) {
    auto compiled = LikePattern::Compile(c.args[1]->constant->View(0), escape, node->ilike);
    if (!compiled.ok()) return c.BadParameter(compiled.status().message());
    node->state = *compiled;
  }
  return c.Finish(node);
}

Result<BoundPtr> BindRLike(Call& c) {
  SLUICE_RETURN_IF_ERROR(c.ExpectStrings(0, 2));
  auto node = c.Make(Op::kRLike, DataType::Boolean(), AnyNullable(c.args));
  node->negated = c.node.negated;
  SLUICE_RETURN_IF_ERROR(c.CompileConstantRegex(1, node.get()));
  return c.Finish(node);
}

Result<BoundPtr> BindCoalesce(Call& c) {
  SLUICE_ASSIGN_OR_RETURN(TypePtr common, c.CommonType(true));
  bool nullable = std::all_of(c.args.begin(), c.args.end(), [](const BoundPtr& a) { return a->nullable; });
  // Arguments after the first one that can never be null are never reached.
  for (size_t i = 0; i < c.args.size(); ++i) {
    if (!c.args[i]->nullable) {
      c.args.resize(i + 1);
      break;
    }
  }
  if (c.args.size() == 1) return c.args[0];
  return c.Finish(c.Make(Op::kCoalesce, common, nullable));
}

Result<BoundPtr> BindGreatestOrLeast(Call& c) {
  const std::string& f = c.node.name;
  SLUICE_ASSIGN_OR_RETURN(TypePtr common, c.CommonType(false));
  if (common->is_nested()) return c.Mismatch(fmt::format("{} cannot order {}", f, common->ToString()));
  bool nullable = std::all_of(c.args.begin(), c.args.end(), [](const BoundPtr& a) { return a->nullable; });
  return c.Finish(c.Make(f == "greatest" ? Op::kGreatest : Op::kLeast, common, nullable));
}

Result<BoundPtr> BindLower(Call& c) {
  return c.StringUnary(Op::kLower, DataType::String());
}

Result<BoundPtr> BindUpper(Call& c) {
  return c.StringUnary(Op::kUpper, DataType::String());
}

Result<BoundPtr> BindLength(Call& c) {
  if (c.args[0]->type == nullptr || c.args[0]->type->id() != TypeId::kBinary) SLUICE_RETURN_IF_ERROR(c.ExpectStrings(0, 1));
  return c.Finish(c.Make(Op::kLength, DataType::Integer(), c.args[0]->nullable));
}

Result<BoundPtr> BindTrim(Call& c) {
  const std::string& f = c.node.name;
  SLUICE_RETURN_IF_ERROR(c.ExpectStrings(0, 2));
  const Op op = f == "ltrim" ? Op::kLTrim : f == "rtrim" ? Op::kRTrim : Op::kTrim;  // trim, btrim
  return c.Finish(c.Make(op, DataType::String(), AnyNullable(c.args)));
}

// substring(s, pos[, len]): characters of a string, bytes of a binary value (which stays binary).
Result<BoundPtr> BindSubstring(Call& c) {
  const bool binary = IsBinary(c.args[0]);
  if (!binary) SLUICE_RETURN_IF_ERROR(c.ExpectStrings(0, 1));
  for (size_t i = 1; i < c.args.size(); ++i) SLUICE_RETURN_IF_ERROR(c.Expect(i, DataType::Integer()));
  return c.Finish(c.Make(Op::kSubstring, binary ? DataType::Binary() : DataType::String(), AnyNullable(c.args)));
}

Result<BoundPtr> BindConcat(Call& c) {
  bool all_binary = !c.args.empty() && std::all_of(c.args.begin(), c.args.end(), IsBinary);
  TypePtr type = all_binary ? DataType::Binary() : DataType::String();
  if (!all_binary) SLUICE_RETURN_IF_ERROR(c.ExpectStrings(0, c.args.size()));
  return c.Finish(c.Make(Op::kConcat, type, AnyNullable(c.args)));
}

Result<BoundPtr> BindConcatWs(Call& c) {
  for (size_t i = 0; i < c.args.size(); ++i) {
    const TypePtr& t = c.args[i]->type;
    if (i > 0 && t != nullptr && t->id() == TypeId::kArray) {
      if (t->element_type()->id() != TypeId::kString) {
        return c.Mismatch(fmt::format("argument {} of concat_ws must be a string or array<string>, got {}", i + 1, c.TypeOf(i)));
      }
      continue;
    }
    SLUICE_RETURN_IF_ERROR(c.Expect(i, DataType::String()));
  }
  return c.Finish(c.Make(Op::kConcatWs, DataType::String(), c.args[0]->nullable));
}

Result<BoundPtr> BindReplace(Call& c) {
  SLUICE_RETURN_IF_ERROR(c.ExpectStrings(0, 3));
  return c.Finish(c.Make(Op::kReplace, DataType::String(), AnyNullable(c.args)));
}

Result<BoundPtr> BindSplit(Call& c) {
  SLUICE_RETURN_IF_ERROR(c.ExpectStrings(0, 2));
  if (c.args.size() == 3) SLUICE_RETURN_IF_ERROR(c.Expect(2, DataType::Integer()));
  auto node = c.Make(Op::kSplit, DataType::Array(DataType::String(), false), AnyNullable(c.args));
  SLUICE_RETURN_IF_ERROR(c.CompileConstantRegex(1, node.get()));
  return c.Finish(node);
}

Result<BoundPtr> BindRegexpExtract(Call& c) {
  SLUICE_RETURN_IF_ERROR(c.ExpectStrings(0, 2));
  if (c.args.size() == 2) {
    c.args.push_back(c.IntegerConstant(1));
  }
  SLUICE_RETURN_IF_ERROR(c.Expect(2, DataType::Integer()));
  const bool all = c.node.name == "regexp_extract_all";
  auto node = c.Make(all ? Op::kRegexpExtractAll : Op::kRegexpExtract,
                     all ? DataType::Array(DataType::String(), false) : DataType::String(), AnyNullable(c.args));
  if (IsConstantString(c.args[1]) && c.args[1]->constant->IsValid(0)) {
    auto compiled = CompileRegex(c.args[1]->constant->View(0));
    if (!compiled.ok()) return c.BadParameter(compiled.status().message());
    // regexp_extract_all checks the group per match, as Spark: no match, no error.
    if (!all && c.args[2]->op == Op::kConstant && c.args[2]->constant->IsValid(0)) {
      int group = c.args[2]->constant->Value<int32_t>(0);
      if (group < 0 || group > (*compiled)->groups) {
        return c.BadParameter(fmt::format("the regex has {} groups but group {} was asked for", (*compiled)->groups, group));
      }
    }
    node->state = *compiled;
  }
  return c.Finish(node);
}

Result<BoundPtr> BindStringPredicate(Call& c) {
  const std::string& f = c.node.name;
  // Two binary values are compared as bytes, as Spark does; otherwise both are strings.
  const bool binary = IsBinary(c.args[0]) && IsBinary(c.args[1]);
  if (!binary) SLUICE_RETURN_IF_ERROR(c.ExpectStrings(0, 2));
  return c.Finish(c.Make(f == "startswith" ? Op::kStartsWith : f == "endswith" ? Op::kEndsWith : Op::kContains,
                     DataType::Boolean(), AnyNullable(c.args)));
}

Result<BoundPtr> BindAbs(Call& c) {
  SLUICE_RETURN_IF_ERROR(c.NumericArg(0));
  return c.Finish(c.Make(Op::kAbs, c.args[0]->type, c.args[0]->nullable));
}

Result<BoundPtr> BindRound(Call& c) {
  SLUICE_RETURN_IF_ERROR(c.NumericArg(0));
  int scale = 0;
  // A NULL scale makes the result NULL, typed as for scale 0 (as Spark types it).
  const bool null_scale = c.args.size() == 2 && c.args[1]->op == Op::kConstant && c.args[1]->constant->IsNull(0);
  if (null_scale) c.args[1] = c.IntegerConstant(0);
  if (c.args.size() == 2) {
    if (c.args[1]->op != Op::kConstant || c.args[1]->type == nullptr || !c.args[1]->type->is_integral() || c.args[1]->constant->IsNull(0)) {
      return c.Mismatch("the scale of round must be a constant integer");
    }
    SLUICE_RETURN_IF_ERROR(c.Expect(1, DataType::Integer()));
    scale = c.args[1]->constant->Value<int32_t>(0);
  } else {
    c.args.push_back(c.IntegerConstant(0));
  }
  TypePtr type = c.args[0]->type;
  if (type->id() == TypeId::kDecimal) {
    int p = type->precision(), s = type->scale();
    int new_scale = std::clamp(scale, 0, s);
    type = BoundedDecimal(p - s + 1 + new_scale, new_scale);
  }
  if (null_scale) {
    auto null = c.NewNode(Op::kConstant, type);
    null->constant = MakeNullColumn(type, 1);
    return BoundPtr(null);
  }
  return c.Finish(c.Make(Op::kRound, type, c.args[0]->nullable));
}

Result<BoundPtr> BindFloorOrCeil(Call& c) {
  const std::string& f = c.node.name;
  SLUICE_RETURN_IF_ERROR(c.NumericArg(0));
  TypePtr type = DataType::Long();
  if (c.args[0]->type->id() == TypeId::kDecimal) {
    type = BoundedDecimal(c.args[0]->type->precision() - c.args[0]->type->scale() + 1, 0);
  }
  return c.Finish(c.Make(f == "floor" ? Op::kFloor : Op::kCeil, type, c.args[0]->nullable));
}

Result<BoundPtr> BindSqrt(Call& c) {
  SLUICE_RETURN_IF_ERROR(c.NumericArg(0));
  SLUICE_RETURN_IF_ERROR(c.Expect(0, DataType::Double()));
  return c.Finish(c.Make(Op::kSqrt, DataType::Double(), c.args[0]->nullable));
}

Result<BoundPtr> BindPow(Call& c) {
  for (size_t i = 0; i < 2; ++i) {
    SLUICE_RETURN_IF_ERROR(c.NumericArg(i));
    SLUICE_RETURN_IF_ERROR(c.Expect(i, DataType::Double()));
  }
  return c.Finish(c.Make(Op::kPow, DataType::Double(), AnyNullable(c.args)));
}

Result<BoundPtr> BindHash(Call& c) {
  for (size_t i = 0; i < c.args.size(); ++i) {
    if (c.args[i]->type != nullptr && c.args[i]->type->id() == TypeId::kMap) {
      return c.Mismatch(fmt::format("{} cannot take map values", c.node.name));
    }
  }
  if (c.node.name == "xxhash64") return c.Finish(c.Make(Op::kXxHash64, DataType::Long(), false));
  return c.Finish(c.Make(Op::kHash, DataType::Integer(), false));
}

Result<BoundPtr> BindMd5(Call& c) {
  const std::string& f = c.node.name;
  if (c.args[0]->type == nullptr || c.args[0]->type->id() != TypeId::kBinary) SLUICE_RETURN_IF_ERROR(c.Expect(0, DataType::Binary()));
  if (f == "sha2") SLUICE_RETURN_IF_ERROR(c.Expect(1, DataType::Integer()));
  return c.Finish(c.Make(f == "md5" ? Op::kMd5 : Op::kSha2, DataType::String(), true));
}

Result<BoundPtr> BindCurrentTimestamp(Call& c) {
  return c.Finish(c.Make(Op::kCurrentTimestamp, DataType::Timestamp(), false));
}

// A call's place in the expression's text: what tells apart the draws of two calls of uuid() or
// rand() in one expression.
int PlaceInText(const Node& node) { return node.line * 65536 + node.column; }

// uuid(): random-looking version 4 UUIDs that a replayed batch makes again (see EvalUuid).
Result<BoundPtr> BindUuid(Call& c) {
  auto node = c.Make(Op::kUuid, DataType::String(), false);
  node->slot = PlaceInText(c.node);
  return c.Finish(node);
}

// rand([seed]), random([seed]), randn([seed]): doubles, uniform in [0, 1) or standard normal, from
// Spark's generator (EvalRandom). The seed is an INT or BIGINT constant (NULL: 0); without one,
// the batch's time and the call's place seed it, so a replayed batch gets the same values.
Result<BoundPtr> BindRandom(Call& c) {
  if (c.args.size() == 1) {
    const BoundPtr& seed = c.args[0];
    if (seed->op != Op::kConstant) {
      return c.Mismatch(fmt::format("the seed of {} must be a constant INT or BIGINT", c.node.name));
    }
    int64_t value = 0;
    if (!seed->constant->IsNull(0)) {
      const TypeId id = seed->type->id();
      if (id != TypeId::kInteger && id != TypeId::kLong) {
        return c.Mismatch(fmt::format("the seed of {} must be an INT or BIGINT, not {}", c.node.name,
                                      seed->type->ToString()));
      }
      value = id == TypeId::kInteger ? seed->constant->Value<int32_t>(0) : seed->constant->Value<int64_t>(0);
    }
    c.args[0] = c.Constant(DataType::Long(), LiteralValue{.integer = value});
  }
  auto node = c.Make(c.node.name == "randn" ? Op::kRandn : Op::kRand, DataType::Double(), false);
  node->slot = PlaceInText(c.node);
  return c.Finish(node);
}

Result<BoundPtr> BindCurrentDate(Call& c) {
  return c.Finish(c.Make(Op::kCurrentDate, DataType::Date(), false));
}

Result<BoundPtr> BindToTimestampOrDate(Call& c) {
  const std::string& f = c.node.name;
  TypePtr target = f == "to_date" ? DataType::Date() : DataType::Timestamp();
  if (c.args.size() == 1) {
    SLUICE_RETURN_IF_ERROR(c.DatetimeArg(0, target));
    return c.args[0];
  }
  SLUICE_RETURN_IF_ERROR(c.ExpectStrings(0, 2));
  return c.Finish(c.Make(f == "to_date" ? Op::kToDate : Op::kToTimestamp, target, true));
}

Result<BoundPtr> BindDateTrunc(Call& c) {
  SLUICE_RETURN_IF_ERROR(c.ExpectStrings(0, 1));
  SLUICE_RETURN_IF_ERROR(c.DatetimeArg(1, DataType::Timestamp()));
  return c.Finish(c.Make(Op::kDateTrunc, DataType::Timestamp(), true));
}

Result<BoundPtr> BindDateFormat(Call& c) {
  SLUICE_RETURN_IF_ERROR(c.DatetimeArg(0, DataType::Timestamp()));
  SLUICE_RETURN_IF_ERROR(c.ExpectStrings(1, 2));
  return c.Finish(c.Make(Op::kDateFormat, DataType::String(), true));
}

// window(ts, duration[, slide[, start]]): the window holding each time, as struct<start, end> of
// ts's type (a string or date is read as a timestamp). The durations are constants: interval
// strings ('10 minutes') or microseconds. With a slide shorter than the duration a time is in
// several windows (sliding windows): only a GROUP BY key can be one (SlidingWindowsOf).
Result<BoundPtr> BindTimeWindow(Call& c) {
  const TypePtr& t = c.args[0]->type;
  const bool ntz = t != nullptr && t->id() == TypeId::kTimestampNtz;
  if (!ntz) {
    if (t != nullptr && t->id() != TypeId::kString && t->id() != TypeId::kDate && t->id() != TypeId::kTimestamp) {
      return c.Mismatch(fmt::format("window takes a timestamp, not {}", c.TypeOf(0)));
    }
    SLUICE_RETURN_IF_ERROR(c.Expect(0, DataType::Timestamp()));
  }
  // Each duration: a constant string or integer (microseconds).
  auto duration = [&c](size_t i, std::string_view what) -> Result<int64_t> {
    const BoundPtr& a = c.args[i];
    if (a->op == Op::kConstant && a->type != nullptr && a->type->is_integral() && a->constant->IsValid(0)) {
      return a->type->id() == TypeId::kLong ? a->constant->Value<int64_t>(0) : a->constant->Value<int32_t>(0);
    }
    if (!IsConstantString(a) || a->constant->IsNull(0)) {
      return c.Mismatch(fmt::format("the {} of window must be an integer, long or string literal", what));
    }
    bool month_or_year = false;
    std::optional<int64_t> micros = ParseDurationMicros(a->constant->View(0), &month_or_year);
    if (!micros) {
      return c.BadParameter(fmt::format("the {} of window, '{}', is {}", what, a->constant->View(0),
                                        month_or_year ? "longer than a month can be: give weeks, days or less"
                                                      : "not an interval such as '10 minutes'"));
    }
    return *micros;
  };
  auto window = std::make_shared<TimeWindow>();
  SLUICE_ASSIGN_OR_RETURN(window->duration, duration(1, "window duration"));
  int64_t& slide = window->slide;
  slide = window->duration;
  if (c.args.size() > 2) {
    SLUICE_ASSIGN_OR_RETURN(slide, duration(2, "slide duration"));
  }
  if (c.args.size() > 3) {
    SLUICE_ASSIGN_OR_RETURN(window->start, duration(3, "start time"));
  }
  if (window->duration <= 0 || slide <= 0) return c.Mismatch("the window and slide durations of window must be positive");
  if (slide > window->duration) return c.Mismatch("the slide duration of window must not exceed its window duration");
  if (window->start <= -slide || window->start >= slide) {
    return c.Mismatch("the start time of window must be shorter than its slide duration");
  }
  const TypePtr time = ntz ? DataType::TimestampNtz() : DataType::Timestamp();
  SLUICE_ASSIGN_OR_RETURN(TypePtr type, DataType::Struct({Field{"start", time, true}, Field{"end", time, true}}));
  c.args.resize(1);
  auto bound = c.Make(Op::kTimeWindow, std::move(type), c.args[0]->nullable);
  bound->state = std::move(window);
  return c.Finish(bound);
}

// window_time(w): the last microsecond of a window that window() made.
Result<BoundPtr> BindWindowTime(Call& c) {
  const TypePtr& t = c.args[0]->type;
  const bool is_window = t != nullptr && t->id() == TypeId::kStruct && t->fields().size() == 2 &&
                         t->field(0).name == "start" && t->field(1).name == "end" &&
                         (t->field(0).type->id() == TypeId::kTimestamp || t->field(0).type->id() == TypeId::kTimestampNtz) &&
                         t->field(1).type->Equals(*t->field(0).type);
  if (!is_window) return c.Mismatch(fmt::format("window_time takes the window column window() makes, not {}", c.TypeOf(0)));
  return c.Finish(c.Make(Op::kWindowTime, t->field(1).type, true));
}

// year, month, day ... of a date; hour, minute, second of a timestamp.
Result<BoundPtr> BindDatePart(Call& c) {
  static const std::map<std::string, Op, std::less<>> kDateParts = {
      {"year", Op::kYear},           {"month", Op::kMonth},           {"day", Op::kDay},
      {"dayofmonth", Op::kDay},      {"quarter", Op::kQuarter},       {"dayofweek", Op::kDayOfWeek},
      {"dayofyear", Op::kDayOfYear}, {"weekofyear", Op::kWeekOfYear}, {"hour", Op::kHour},
      {"minute", Op::kMinute},       {"second", Op::kSecond}};
  const Op op = kDateParts.at(c.node.name);
  const bool of_time = op == Op::kHour || op == Op::kMinute || op == Op::kSecond;
  SLUICE_RETURN_IF_ERROR(c.DatetimeArg(0, of_time ? DataType::Timestamp() : DataType::Date()));
  return c.Finish(c.Make(op, DataType::Integer(), c.args[0]->nullable));
}

// extract(field FROM source) and date_part('field', source): the field names one of the date
// part functions, under Spark's names and abbreviations.
Result<BoundPtr> BindExtract(Call& c) {
  if (!IsConstantString(c.args[0]) || c.args[0]->constant->IsNull(0)) {
    return c.Mismatch("the field of date_part must be a constant string, such as 'YEAR'");
  }
  static const std::map<std::string, std::string, std::less<>> kFields = {
      {"YEAR", "year"},       {"Y", "year"},           {"YEARS", "year"},      {"YR", "year"},
      {"YRS", "year"},        {"QUARTER", "quarter"},  {"QTR", "quarter"},     {"MONTH", "month"},
      {"MON", "month"},       {"MONS", "month"},       {"MONTHS", "month"},    {"WEEK", "weekofyear"},
      {"W", "weekofyear"},    {"WEEKS", "weekofyear"}, {"DAY", "day"},         {"D", "day"},
      {"DAYS", "day"},        {"DAYOFWEEK", "dayofweek"}, {"DOW", "dayofweek"}, {"DAYOFWEEK_ISO", "dow_iso"},
      {"DOW_ISO", "dow_iso"}, {"DOY", "dayofyear"},    {"HOUR", "hour"},       {"H", "hour"},
      {"HOURS", "hour"},      {"HR", "hour"},          {"HRS", "hour"},        {"MINUTE", "minute"},
      {"M", "minute"},        {"MIN", "minute"},       {"MINS", "minute"},     {"MINUTES", "minute"},
      {"SECOND", "second"},   {"S", "second"},         {"SEC", "second"},      {"SECONDS", "second"},
      {"SECS", "second"}};
  const std::string field = AsciiUpper(c.args[0]->constant->View(0));
  auto it = kFields.find(field);
  if (it == kFields.end()) {
    return Status::Error(errors::kInvalidExtractField,
                         fmt::format("cannot extract {} at {}:{}: the fields are YEAR, QUARTER, MONTH, WEEK, DAY, DAYOFWEEK, "
                                     "DAYOFWEEK_ISO, DOY, HOUR, MINUTE, SECOND (and their abbreviations)",
                                     field, c.node.line, c.node.column));
  }
  c.args.erase(c.args.begin());
  if (it->second == "second") {
    SLUICE_RETURN_IF_ERROR(c.DatetimeArg(0, DataType::Timestamp()));
    return c.Finish(c.Make(Op::kSecondWithFraction, *DataType::Decimal(8, 6), c.args[0]->nullable));
  }
  const bool dow_iso = it->second == "dow_iso";
  const Op op = std::map<std::string, Op, std::less<>>{
      {"year", Op::kYear},           {"quarter", Op::kQuarter},       {"month", Op::kMonth},
      {"weekofyear", Op::kWeekOfYear}, {"day", Op::kDay},             {"dayofweek", Op::kDayOfWeek},
      {"dow_iso", Op::kDayOfWeek},   {"dayofyear", Op::kDayOfYear},   {"hour", Op::kHour},
      {"minute", Op::kMinute}}.at(it->second);
  const bool of_time = op == Op::kHour || op == Op::kMinute;
  SLUICE_RETURN_IF_ERROR(c.DatetimeArg(0, of_time ? DataType::Timestamp() : DataType::Date()));
  SLUICE_ASSIGN_OR_RETURN(BoundPtr part, c.Finish(c.Make(op, DataType::Integer(), c.args[0]->nullable)));
  if (!dow_iso) return part;
  // Monday 1 ... Sunday 7: (dayofweek + 5) % 7 + 1.
  auto plus_five = c.NewNode(Op::kAdd, DataType::Integer(), {part, c.IntegerConstant(5)});
  plus_five->nullable = part->nullable;
  auto modulo = c.NewNode(Op::kRemainder, DataType::Integer(), {plus_five, c.IntegerConstant(7)});
  modulo->nullable = part->nullable;
  auto iso = c.NewNode(Op::kAdd, DataType::Integer(), {modulo, c.IntegerConstant(1)});
  iso->nullable = part->nullable;
  return c.Finish(iso);
}

// months_between(end, start[, round_off]), next_day(date, day), make_timestamp(y, m, d, h, mi, s),
// timestampadd(unit, n, ts), timestampdiff(unit, start, end).
Result<BoundPtr> BindTimestampArithmetic(Call& c) {
  const std::string& f = c.node.name;
  if (f == "months_between") {
    SLUICE_RETURN_IF_ERROR(c.DatetimeArg(0, DataType::Timestamp()));
    SLUICE_RETURN_IF_ERROR(c.DatetimeArg(1, DataType::Timestamp()));
    if (c.args.size() == 2) c.args.push_back(c.BooleanConstant(true));
    if (c.args[2]->op != Op::kConstant || c.args[2]->type == nullptr || c.args[2]->type->id() != TypeId::kBoolean ||
        c.args[2]->constant->IsNull(0)) {
      return c.Mismatch("the round-off of months_between must be a constant boolean");
    }
    return c.Finish(c.Make(Op::kMonthsBetween, DataType::Double(), c.args[0]->nullable || c.args[1]->nullable));
  }
  if (f == "next_day") {
    SLUICE_RETURN_IF_ERROR(c.DatetimeArg(0, DataType::Date()));
    SLUICE_RETURN_IF_ERROR(c.ExpectStrings(1, 2));
    return c.Finish(c.Make(Op::kNextDay, DataType::Date(), true));
  }
  if (f == "make_timestamp") {
    for (size_t i = 0; i < 5; ++i) SLUICE_RETURN_IF_ERROR(c.Expect(i, DataType::Integer()));
    SLUICE_RETURN_IF_ERROR(c.Expect(5, *DataType::Decimal(16, 6)));
    return c.Finish(c.Make(Op::kMakeTimestamp, DataType::Timestamp(), true));
  }
  // timestampadd, timestampdiff: the unit is a constant (the keyword, rewritten into its name).
  static constexpr std::string_view kUnits[] = {"MICROSECOND", "MILLISECOND", "SECOND", "MINUTE", "HOUR", "DAY",
                                                "DAYOFYEAR",   "WEEK",        "MONTH",  "QUARTER", "YEAR"};
  const std::string unit = IsConstantString(c.args[0]) && c.args[0]->constant->IsValid(0)
                               ? AsciiUpper(c.args[0]->constant->View(0)) : std::string();
  if (std::find(std::begin(kUnits), std::end(kUnits), unit) == std::end(kUnits)) {
    return c.Mismatch(fmt::format("the unit of {} is one of MICROSECOND, MILLISECOND, SECOND, MINUTE, HOUR, DAY, "
                                  "DAYOFYEAR, WEEK, MONTH, QUARTER, YEAR, not {}",
                                  f, unit.empty() ? PrintSql(*c.node.args[0]) : unit));
  }
  c.args.erase(c.args.begin());
  if (f == "timestampadd") {
    SLUICE_RETURN_IF_ERROR(c.Expect(0, DataType::Long()));
    SLUICE_RETURN_IF_ERROR(c.DatetimeArg(1, DataType::Timestamp()));
  } else {
    SLUICE_RETURN_IF_ERROR(c.DatetimeArg(0, DataType::Timestamp()));
    SLUICE_RETURN_IF_ERROR(c.DatetimeArg(1, DataType::Timestamp()));
  }
  auto node = c.Make(f == "timestampadd" ? Op::kTimestampAddUnits : Op::kTimestampDiffUnits,
                     f == "timestampadd" ? DataType::Timestamp() : DataType::Long(), AnyNullable(c.args));
  node->name = unit;
  return c.Finish(node);
}

// date_add(d, n), date_sub(d, n): d plus or minus n days.
Result<BoundPtr> BindDateAdd(Call& c) {
  SLUICE_RETURN_IF_ERROR(c.DatetimeArg(0, DataType::Date()));
  if (c.args[1]->type != nullptr && c.args[1]->type->id() != TypeId::kString && !c.args[1]->type->is_integral()) {
    return c.Mismatch(fmt::format("the days of {} must be an integer, got {}", c.node.name, c.TypeOf(1)));
  }
  SLUICE_RETURN_IF_ERROR(c.Expect(1, DataType::Integer()));
  BoundPtr days = c.args[1];
  if (c.node.name == "date_sub") {
    SLUICE_ASSIGN_OR_RETURN(days, c.Finish(c.NewNode(Op::kNegate, DataType::Integer(), {days})));
  }
  auto node = c.NewNode(Op::kDateAddDays, DataType::Date(), {c.args[0], days});
  node->nullable = AnyNullable(node->args);
  return c.Finish(node);
}

// datediff(end, start) in days; add_months(d, n); last_day(d); make_date(y, m, d).
Result<BoundPtr> BindDateArithmetic(Call& c) {
  const std::string& f = c.node.name;
  if (f == "make_date") {
    for (size_t i = 0; i < 3; ++i) SLUICE_RETURN_IF_ERROR(c.Expect(i, DataType::Integer()));
    return c.Finish(c.Make(Op::kMakeDate, DataType::Date()));
  }
  SLUICE_RETURN_IF_ERROR(c.DatetimeArg(0, DataType::Date()));
  if (f == "datediff") {
    SLUICE_RETURN_IF_ERROR(c.DatetimeArg(1, DataType::Date()));
    return c.Finish(c.Make(Op::kDateDiff, DataType::Integer(), AnyNullable(c.args)));
  }
  if (f == "add_months") {
    SLUICE_RETURN_IF_ERROR(c.Expect(1, DataType::Integer()));
    return c.Finish(c.Make(Op::kAddMonths, DataType::Date(), AnyNullable(c.args)));
  }
  return c.Finish(c.Make(Op::kLastDay, DataType::Date(), c.args[0]->nullable));
}

// regexp_replace(s, regex, replacement) and regexp_count(s, regex).
Result<BoundPtr> BindRegexp(Call& c) {
  const bool replace = c.node.name == "regexp_replace";
  SLUICE_RETURN_IF_ERROR(c.ExpectStrings(0, c.args.size()));
  auto node = c.Make(replace ? Op::kRegexpReplace : Op::kRegexpCount, replace ? DataType::String() : DataType::Integer(),
                     AnyNullable(c.args));
  SLUICE_RETURN_IF_ERROR(c.CompileConstantRegex(1, node.get()));
  return c.Finish(node);
}

// split_part(s, delimiter, n): the n-th part (from the end when negative), '' beyond the parts.
Result<BoundPtr> BindSplitPart(Call& c) {
  SLUICE_RETURN_IF_ERROR(c.ExpectStrings(0, 2));
  SLUICE_RETURN_IF_ERROR(c.Expect(2, DataType::Integer()));
  return c.Finish(c.Make(Op::kSplitPart, DataType::String(), AnyNullable(c.args)));
}

// instr(s, sub), locate(sub, s[, start]), position(sub, s[, start]): 1-based, 0 when absent.
Result<BoundPtr> BindLocate(Call& c) {
  if (c.node.name == "instr") std::swap(c.args[0], c.args[1]);
  SLUICE_RETURN_IF_ERROR(c.ExpectStrings(0, 2));
  if (c.args.size() == 2) {
    c.args.push_back(c.IntegerConstant(1));
  }
  SLUICE_RETURN_IF_ERROR(c.Expect(2, DataType::Integer()));
  return c.Finish(c.Make(Op::kLocate, DataType::Integer(), c.args[0]->nullable || c.args[1]->nullable));
}

// lpad(s, n[, pad]), rpad(s, n[, pad]): pad defaults to a space.
Result<BoundPtr> BindPad(Call& c) {
  SLUICE_RETURN_IF_ERROR(c.ExpectStrings(0, 1));
  SLUICE_RETURN_IF_ERROR(c.Expect(1, DataType::Integer()));
  if (c.args.size() == 2) {
    c.args.push_back(c.Constant(DataType::String(), LiteralValue{.text = " "}));
  }
  SLUICE_RETURN_IF_ERROR(c.ExpectStrings(2, 3));
  return c.Finish(c.Make(c.node.name == "lpad" ? Op::kLPad : Op::kRPad, DataType::String(), AnyNullable(c.args)));
}

// repeat(s, n), left(s, n), right(s, n): a string and a count. left and right count the bytes
// of a binary value; left gives binary, right a string, as Spark's.
Result<BoundPtr> BindStringAndCount(Call& c) {
  const std::string& f = c.node.name;
  const bool bytes = f != "repeat" && IsBinary(c.args[0]);
  if (!bytes) SLUICE_RETURN_IF_ERROR(c.ExpectStrings(0, 1));
  SLUICE_RETURN_IF_ERROR(c.Expect(1, DataType::Integer()));
  const Op op = f == "repeat" ? Op::kRepeat : f == "left" ? Op::kLeft : Op::kRight;
  if (!bytes) return c.Finish(c.Make(op, DataType::String(), AnyNullable(c.args)));
  SLUICE_ASSIGN_OR_RETURN(BoundPtr kept, c.Finish(c.Make(op, DataType::Binary(), AnyNullable(c.args))));
  return op == Op::kLeft ? kept : c.CastTo(kept, DataType::String());
}

// reverse(s), initcap(s); translate(s, from, to).
Result<BoundPtr> BindStringRewrite(Call& c) {
  const std::string& f = c.node.name;
  if (f == "translate") {
    SLUICE_RETURN_IF_ERROR(c.ExpectStrings(0, 3));
    return c.Finish(c.Make(Op::kTranslate, DataType::String(), AnyNullable(c.args)));
  }
  return c.StringUnary(f == "reverse" ? Op::kReverse : Op::kInitCap, DataType::String());
}

// hex(x) of a bigint (two's complement), string or binary; unhex(s); base64(bin); unbase64(s).
// encode(text, charset), decode(bytes, charset): the charsets Spark (Java) always has.
Result<BoundPtr> BindCharset(Call& c) {
  const bool encode = c.node.name == "encode";
  SLUICE_RETURN_IF_ERROR(encode ? c.ExpectStrings(0, 1) : c.Expect(0, DataType::Binary()));
  static constexpr std::string_view kCharsets[] = {"US-ASCII", "ISO-8859-1", "UTF-8", "UTF-16BE", "UTF-16LE", "UTF-16"};
  const std::string charset =
      IsConstantString(c.args[1]) && c.args[1]->constant->IsValid(0) ? AsciiUpper(c.args[1]->constant->View(0)) : "";
  if (std::find(std::begin(kCharsets), std::end(kCharsets), charset) == std::end(kCharsets)) {
    return c.BadParameter(fmt::format("the charset of {} is a constant, one of US-ASCII, ISO-8859-1, UTF-8, UTF-16BE, "
                                      "UTF-16LE, UTF-16 (any case), not {}",
                                      c.node.name, PrintBound(*c.args[1])));
  }
  return c.Finish(c.Make(encode ? Op::kEncode : Op::kDecode, encode ? DataType::Binary() : DataType::String(),
                         c.args[0]->nullable));
}

// to_binary(text[, format]): format hex (the default), utf-8 or base64, as unhex, a cast and unbase64.
Result<BoundPtr> BindToBinary(Call& c) {
  std::string format = "HEX";
  if (c.args.size() == 2) {
    if (!IsConstantString(c.args[1]) || c.args[1]->constant->IsNull(0)) {
      return c.BadParameter("the format of to_binary is a constant: 'hex', 'utf-8' or 'base64'");
    }
    format = AsciiUpper(c.args[1]->constant->View(0));
  }
  SLUICE_RETURN_IF_ERROR(c.ExpectStrings(0, 1));
  if (format == "UTF-8" || format == "UTF8") return c.CastTo(c.args[0], DataType::Binary());
  if (format != "HEX" && format != "BASE64") {
    return c.BadParameter(fmt::format("the format of to_binary is 'hex', 'utf-8' or 'base64', not '{}'", format));
  }
  c.args.resize(1);
  return c.Finish(c.Make(format == "HEX" ? Op::kUnhex : Op::kUnbase64, DataType::Binary(), true));
}

// format_string(pattern, values...) and printf: Java's Formatter over the values as Spark hands
// them over (dates as day numbers, timestamps as microseconds, decimals as text). Values Spark
// prints as the addresses or internals of its objects (binary, arrays, maps, structs) are refused.
Result<BoundPtr> BindFormatString(Call& c) {
  SLUICE_RETURN_IF_ERROR(c.ExpectStrings(0, 1));
  for (size_t i = 1; i < c.args.size(); ++i) {
    if (c.args[i]->type == nullptr) {
      SLUICE_RETURN_IF_ERROR(c.Expect(i, DataType::String()));
    } else if (c.args[i]->type->is_nested() || c.args[i]->type->id() == TypeId::kBinary) {
      return c.Mismatch(fmt::format("{} formats atomic values, not {} (argument {})", c.node.name, c.TypeOf(i), i + 1));
    }
  }
  return c.Finish(c.Make(Op::kFormatString, DataType::String(), true));
}

// typeof(x): the name of x's type as Spark writes it ("int", "decimal(10,2)", "array<string>", "void").
Result<BoundPtr> BindTypeof(Call& c) {
  return c.Constant(DataType::String(), LiteralValue{.text = TypeName(c.args[0]->type)});
}

// The number format a call's argument i gives (a constant string: number_format.h), or null for a
// NULL format; DATATYPE_MISMATCH when it is not a constant, INVALID_FORMAT when Spark refuses it.
Result<std::shared_ptr<const NumberFormat>> ConstantNumberFormat(Call& c, size_t i) {
  SLUICE_RETURN_IF_ERROR(c.ExpectStrings(i, i + 1));
  if (!IsConstantString(c.args[i])) {
    return c.Mismatch(fmt::format("the format of {} must be a constant string, such as '999.99'", c.node.name));
  }
  if (c.args[i]->constant->IsNull(0)) return std::shared_ptr<const NumberFormat>();
  Result<std::shared_ptr<const NumberFormat>> format = NumberFormat::Make(c.args[i]->constant->View(0));
  if (!format.ok()) {
    return format.status().WithContext(fmt::format("{} at {}:{}", c.node.name, c.node.line, c.node.column));
  }
  return format;
}

// to_number(text, format) and try_to_number: the text read by a constant number format, which
// gives the decimal type; a NULL format gives NULL as DECIMAL(10,0), as Spark.
Result<BoundPtr> BindToNumber(Call& c) {
  SLUICE_RETURN_IF_ERROR(c.ExpectStrings(0, 1));
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<const NumberFormat> format, ConstantNumberFormat(c, 1));
  if (format == nullptr) return c.CastTo(c.args[1], DataType::Decimal(10, 0).value());
  if (format->precision() > 38) {
    return Status::Error(errors::kNumericValueOutOfRange,
                         fmt::format("the format of {} at {}:{} has {} digits; a decimal has at most 38", c.node.name,
                                     c.node.line, c.node.column, format->precision()));
  }
  const bool try_ = c.node.name == "try_to_number";
  SLUICE_ASSIGN_OR_RETURN(TypePtr type, DataType::Decimal(format->precision(), format->scale()));
  auto bound = c.Make(try_ ? Op::kTryToNumber : Op::kToNumber, std::move(type), true);
  bound->state = std::move(format);
  return c.Finish(bound);
}

// to_char(value, format) and to_varchar: a date or timestamp as date_format does; binary as
// 'base64', 'hex' or 'utf-8'; a number, or a string read as a decimal, by a constant number format.
Result<BoundPtr> BindToChar(Call& c) {
  const TypePtr& t = c.args[0]->type;
  if (t != nullptr && IsDatetime(*t)) return BindDateFormat(c);
  if (IsBinary(c.args[0])) {
    if (!IsConstantString(c.args[1]) || c.args[1]->constant->IsNull(0)) {
      return c.Mismatch(fmt::format("the format of {} over binary must be a constant: 'base64', 'hex' or 'utf-8'", c.node.name));
    }
    const std::string format = AsciiUpper(c.args[1]->constant->View(0));
    if (format == "UTF-8") return c.CastTo(c.args[0], DataType::String());
    if (format != "HEX" && format != "BASE64") {
      return c.BadParameter(fmt::format("BINARY_FORMAT: {} formats binary as 'base64', 'hex' or 'utf-8', not '{}'",
                                        c.node.name, c.args[1]->constant->View(0)));
    }
    c.args.resize(1);
    return c.Finish(c.Make(format == "HEX" ? Op::kHex : Op::kBase64, DataType::String(), c.args[0]->nullable));
  }
  // Spark's implicit decimal of each type.
  TypePtr decimal;
  if (t == nullptr || t->id() == TypeId::kString) {
    decimal = DataType::Decimal(38, 18).value();
  } else if (t->id() == TypeId::kDecimal) {
    decimal = t;
  } else if (t->id() == TypeId::kFloat) {
    decimal = DataType::Decimal(14, 7).value();
  } else if (t->id() == TypeId::kDouble) {
    decimal = DataType::Decimal(30, 15).value();
  } else if (t->is_numeric()) {
    decimal = DecimalForIntegral(*t);
  } else {
    return c.Mismatch(fmt::format("{} formats a number, a date, a timestamp or binary, not {}", c.node.name, c.TypeOf(0)));
  }
  SLUICE_RETURN_IF_ERROR(c.Expect(0, decimal));
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<const NumberFormat> format, ConstantNumberFormat(c, 1));
  if (format == nullptr) return c.args[1];
  auto bound = c.Make(Op::kToChar, DataType::String(), c.args[0]->nullable);
  bound->state = std::move(format);
  return c.Finish(bound);
}

// conv(number, from_base, to_base), elt(n, strings...), width_bucket(value, min, max, buckets).
Result<BoundPtr> BindNumberText(Call& c) {
  const std::string& f = c.node.name;
  if (f == "conv") {
    SLUICE_RETURN_IF_ERROR(c.ExpectStrings(0, 1));
    SLUICE_RETURN_IF_ERROR(c.Expect(1, DataType::Integer()));
    SLUICE_RETURN_IF_ERROR(c.Expect(2, DataType::Integer()));
    return c.Finish(c.Make(Op::kConv, DataType::String(), true));
  }
  if (f == "elt") {
    SLUICE_RETURN_IF_ERROR(c.Expect(0, DataType::Integer()));
    SLUICE_RETURN_IF_ERROR(c.ExpectStrings(1, c.args.size()));
    return c.Finish(c.Make(Op::kElt, DataType::String(), true));
  }
  for (size_t i = 0; i < 3; ++i) {
    SLUICE_RETURN_IF_ERROR(c.NumericArg(i));
    SLUICE_RETURN_IF_ERROR(c.Expect(i, DataType::Double()));
  }
  SLUICE_RETURN_IF_ERROR(c.Expect(3, DataType::Long()));
  return c.Finish(c.Make(Op::kWidthBucket, DataType::Long(), true));
}

Result<BoundPtr> BindEncoding(Call& c) {
  const std::string& f = c.node.name;
  const TypePtr& t = c.args[0]->type;
  if (f == "hex") {
    if (t != nullptr && t->is_numeric()) {
      SLUICE_RETURN_IF_ERROR(c.Expect(0, DataType::Long()));
    } else if (t == nullptr || t->id() != TypeId::kBinary) {
      SLUICE_RETURN_IF_ERROR(c.ExpectStrings(0, 1));
    }
    return c.Finish(c.Make(Op::kHex, DataType::String(), c.args[0]->nullable));
  }
  if (f == "base64") {
    if (t == nullptr || t->id() != TypeId::kBinary) SLUICE_RETURN_IF_ERROR(c.Expect(0, DataType::Binary()));
    return c.Finish(c.Make(Op::kBase64, DataType::String(), c.args[0]->nullable));
  }
  SLUICE_RETURN_IF_ERROR(c.ExpectStrings(0, 1));
  return c.Finish(c.Make(f == "unhex" ? Op::kUnhex : Op::kUnbase64, DataType::Binary()));
}

// map_keys(m), map_values(m).
Result<BoundPtr> BindMapPart(Call& c) {
  const TypePtr& t = c.args[0]->type;
  if (t == nullptr || t->id() != TypeId::kMap) return c.Mismatch(fmt::format("{} needs a map, got {}", c.node.name, c.TypeOf(0)));
  const bool keys = c.node.name == "map_keys";
  TypePtr type = keys ? DataType::Array(t->key_type(), false) : DataType::Array(t->value_type(), t->value_contains_null());
  return c.Finish(c.Make(keys ? Op::kMapKeys : Op::kMapValues, std::move(type), c.args[0]->nullable));
}

// The array functions. Elements are compared as Spark compares atomic values; arrays of structs,
// arrays or maps are refused where elements are compared.
// flatten, get, array_insert, sequence, arrays_zip, map_from_arrays, map_concat.
Result<BoundPtr> BindCollection(Call& c) {
  const std::string& f = c.node.name;
  if (f == "sequence") {
    TypePtr common;
    for (size_t i = 0; i < c.args.size(); ++i) {
      if (c.args[i]->type != nullptr && !c.args[i]->type->is_integral()) {
        return c.Mismatch(fmt::format("sequence takes integral numbers, not {}", c.TypeOf(i)));
      }
      bool ok = true;
      if (i < 2) common = WiderCommonType(common, c.args[i]->type, false, c.ansi(), &ok);
    }
    if (common == nullptr) common = DataType::Integer();
    for (BoundPtr& a : c.args) {
      SLUICE_ASSIGN_OR_RETURN(a, c.CastTo(a, common));
    }
    return c.Finish(c.Make(Op::kSequence, DataType::Array(common, false), AnyNullable(c.args)));
  }
  if (f == "arrays_zip") {
    std::vector<Field> fields;
    for (size_t i = 0; i < c.args.size(); ++i) {
      SLUICE_RETURN_IF_ERROR(c.ArrayArg(i));
      const Node& written = *c.node.args[i];
      fields.push_back({written.kind == NodeKind::kColumn ? written.path.back() : std::to_string(i),
                        c.args[i]->type->element_type(), true});
    }
    SLUICE_ASSIGN_OR_RETURN(TypePtr element, DataType::Struct(std::move(fields)));
    return c.Finish(c.Make(Op::kArraysZip, DataType::Array(element, false), AnyNullable(c.args)));
  }
  if (f == "map_concat") {
    for (size_t i = 0; i < c.args.size(); ++i) {
      if (c.args[i]->type == nullptr || c.args[i]->type->id() != TypeId::kMap) {
        return c.Mismatch(fmt::format("map_concat takes maps, not {}", c.TypeOf(i)));
      }
    }
    if (c.args.empty()) return c.Finish(c.Make(Op::kMapConcat, DataType::Map(DataType::String(), DataType::String()), false));
    // Keys and values each widen to their common type, as Spark coerces map_concat.
    TypePtr key, value;
    bool ok = true, value_null = false;
    for (const BoundPtr& a : c.args) {
      key = WiderCommonType(key, a->type->key_type(), false, c.ansi(), &ok);
      value = ok ? WiderCommonType(value, a->type->value_type(), false, c.ansi(), &ok) : value;
      value_null = value_null || a->type->value_contains_null();
      if (!ok) return c.Mismatch("the maps of map_concat have incompatible key or value types");
    }
    const TypePtr common = DataType::Map(key, value, value_null);
    for (BoundPtr& a : c.args) {
      SLUICE_ASSIGN_OR_RETURN(a, c.CastTo(a, common));
    }
    return c.Finish(c.Make(Op::kMapConcat, common, AnyNullable(c.args)));
  }
  if (f == "map_from_arrays") {
    SLUICE_RETURN_IF_ERROR(c.ArrayArg(0));
    SLUICE_RETURN_IF_ERROR(c.ArrayArg(1));
    return c.Finish(c.Make(Op::kMapFromArrays,
                           DataType::Map(c.args[0]->type->element_type(), c.args[1]->type->element_type(),
                                         c.args[1]->type->contains_null()),
                           AnyNullable(c.args)));
  }
  SLUICE_RETURN_IF_ERROR(c.ArrayArg(0));
  const TypePtr array = c.args[0]->type;
  if (f == "flatten") {
    if (array->element_type()->id() != TypeId::kArray) {
      return c.Mismatch(fmt::format("flatten takes an array of arrays, not {}", array->ToString()));
    }
    return c.Finish(c.Make(Op::kFlatten, array->element_type(), true));
  }
  SLUICE_RETURN_IF_ERROR(c.Expect(1, DataType::Integer()));
  if (f == "get") return c.Finish(c.Make(Op::kGet, array->element_type(), true));
  // array_insert: the array and the value meet at their tightest common type.
  bool ok = true;
  TypePtr common = TightestCommonType(array->element_type(), c.args[2]->type, c.ansi(), &ok);
  if (!ok || common == nullptr) {
    return c.Mismatch(fmt::format("array_insert cannot put a {} into an array of {}", c.TypeOf(2), array->element_type()->ToString()));
  }
  SLUICE_ASSIGN_OR_RETURN(c.args[0], c.CastTo(c.args[0], DataType::Array(common, true)));
  SLUICE_ASSIGN_OR_RETURN(c.args[2], c.CastTo(c.args[2], common));
  return c.Finish(c.Make(Op::kArrayInsert, c.args[0]->type, AnyNullable({c.args[0], c.args[1]})));
}

Result<BoundPtr> BindArrayFunction(Call& c) {
  const std::string& f = c.node.name;
  if (c.args[0] == nullptr) return c.Mismatch(fmt::format("{} needs an array, not a lambda function", f));
  const TypePtr& t = c.args[0]->type;
  if (t == nullptr || t->id() != TypeId::kArray) return c.Mismatch(fmt::format("{} needs an array, got {}", f, c.TypeOf(0)));
  const TypePtr& element = t->element_type();
  auto atomic = [&]() -> Status {
    if (!element->is_nested()) return Status::OK();
    return c.Mismatch(fmt::format("{} compares elements, which {} cannot be", f, element->ToString()));
  };
  if (f == "array_size") {
    auto node = c.Make(Op::kSize, DataType::Integer());
    node->mode = EvalMode::kAnsi;  // Spark's array_size is size with NULL for a NULL array in either mode
    return c.Finish(node);
  }
  if (f == "array_contains" || f == "array_position" || f == "array_append" || f == "array_prepend") {
    // The elements and the value meet at their tightest common type, as Spark coerces them.
    bool ok = true;
    TypePtr common = TightestCommonType(element, c.args[1]->type, c.ansi(), &ok);
    if (!ok || common == nullptr) {
      return c.Mismatch(fmt::format("{} cannot take a {} into an array of {}", f, c.TypeOf(1), element->ToString()));
    }
    const bool adds = f == "array_append" || f == "array_prepend";
    if (!adds && c.args[1]->type == nullptr) {
      return c.Mismatch(fmt::format("{} cannot look for an untyped NULL; cast it to the element type", f));
    }
    SLUICE_ASSIGN_OR_RETURN(c.args[0], c.CastTo(c.args[0], DataType::Array(common, t->contains_null() || (adds && c.args[1]->nullable))));
    SLUICE_ASSIGN_OR_RETURN(c.args[1], c.CastTo(c.args[1], common));
    if (adds) {
      return c.Finish(c.Make(f == "array_append" ? Op::kArrayAppend : Op::kArrayPrepend, c.args[0]->type, c.args[0]->nullable));
    }
    SLUICE_RETURN_IF_ERROR(atomic());
    const bool contains = f == "array_contains";
    return c.Finish(c.Make(contains ? Op::kArrayContains : Op::kArrayPosition, contains ? DataType::Boolean() : DataType::Long()));
  }
  if (f == "array_max" || f == "array_min") {
    SLUICE_RETURN_IF_ERROR(atomic());
    return c.Finish(c.Make(f == "array_max" ? Op::kArrayMax : Op::kArrayMin, element));
  }
  if (f == "slice") {
    SLUICE_RETURN_IF_ERROR(c.Expect(1, DataType::Integer()));
    SLUICE_RETURN_IF_ERROR(c.Expect(2, DataType::Integer()));
    return c.Finish(c.Make(Op::kSlice, t));
  }
  if (f == "array_distinct") {
    SLUICE_RETURN_IF_ERROR(atomic());
    return c.Finish(c.Make(Op::kArrayDistinct, t, c.args[0]->nullable));
  }
  if (f == "array_compact") {
    return c.Finish(c.Make(Op::kArrayCompact, DataType::Array(element, false), c.args[0]->nullable));
  }
  if (f == "array_sort" && c.args.size() == 2) {
    // array_sort(a, (l, r) -> n): n < 0 puts l first, n > 0 r, 0 keeps their order.
    SLUICE_RETURN_IF_ERROR(c.Lambda(1, {{element, t->contains_null()}, {element, t->contains_null()}}, 2));
    if (c.args[1]->type == nullptr || c.args[1]->type->id() != TypeId::kInteger) {
      return c.Mismatch(fmt::format("the comparator of array_sort must return an int, not {}", c.TypeOf(1)));
    }
    return c.Finish(c.Make(Op::kArraySortWith, t, c.args[0]->nullable));
  }
  if (f == "sort_array" || f == "array_sort") {
    SLUICE_RETURN_IF_ERROR(atomic());
    if (f == "array_sort") {  // ascending, NULLs last
      c.args.push_back(c.BooleanConstant(true));
      c.args.push_back(c.BooleanConstant(false));
      return c.Finish(c.Make(Op::kSortArray, t, c.args[0]->nullable));
    }
    if (c.args.size() == 1) c.args.push_back(c.BooleanConstant(true));
    const BoundPtr& order = c.args[1];
    if (order->op != Op::kConstant || order->type == nullptr || order->type->id() != TypeId::kBoolean ||
        order->constant->IsNull(0)) {
      return c.Mismatch("the order of sort_array is a constant boolean (true for ascending)");
    }
    c.args.push_back(c.BooleanConstant(order->constant->Value<uint8_t>(0) != 0));  // NULLs first when ascending
    return c.Finish(c.Make(Op::kSortArray, t, c.args[0]->nullable));
  }
  // array_join(array, delimiter[, null_replacement]): elements read as strings.
  if (!CanImplicitCast(element, DataType::String())) {
    return c.Mismatch(fmt::format("array_join needs an array of strings, got {}", t->ToString()));
  }
  SLUICE_ASSIGN_OR_RETURN(c.args[0], c.CastTo(c.args[0], DataType::Array(DataType::String(), t->contains_null())));
  SLUICE_RETURN_IF_ERROR(c.ExpectStrings(1, c.args.size()));
  return c.Finish(c.Make(Op::kArrayJoin, DataType::String()));
}

// exp, ln, log10, sin, sign ... of one number (as a double); log(base, x); pi(), e().
Result<BoundPtr> BindMath(Call& c) {
  const std::string& f = c.node.name;
  if (f == "pi" || f == "e") {
    return c.Constant(DataType::Double(), LiteralValue{.floating = f == "pi" ? M_PI : M_E});
  }
  for (size_t i = 0; i < c.args.size(); ++i) {
    SLUICE_RETURN_IF_ERROR(c.NumericArg(i));
    SLUICE_RETURN_IF_ERROR(c.Expect(i, DataType::Double()));
  }
  if (f == "log" && c.args.size() == 1) {
    auto node = c.Make(Op::kMathUnary, DataType::Double());
    node->name = "ln";
    return c.Finish(node);
  }
  if (f == "log") return c.Finish(c.Make(Op::kLog, DataType::Double()));
  return c.Finish(c.Make(Op::kMathUnary, DataType::Double()));
}

// factorial(n): n! for 0 <= n <= 20, else NULL.
Result<BoundPtr> BindFactorial(Call& c) {
  SLUICE_RETURN_IF_ERROR(c.Expect(0, DataType::Integer()));
  return c.Finish(c.Make(Op::kFactorial, DataType::Long()));
}

// timestamp_seconds|millis|micros(n) of an integral number (timestamp_seconds also of a
// fraction: a float or double saturating, a decimal exactly); unix_seconds|millis|micros(ts),
// unix_date(d), date_from_unix_date(n).
Result<BoundPtr> BindUnixUnits(Call& c) {
  const std::string& f = c.node.name;
  const TypePtr& t = c.args[0]->type;
  if (f == "timestamp_seconds" && t != nullptr && (t->id() == TypeId::kFloat || t->id() == TypeId::kDouble)) {
    SLUICE_RETURN_IF_ERROR(c.Expect(0, DataType::Double()));
    return c.Finish(c.Make(Op::kTimestampFromUnits, DataType::Timestamp(), true));
  }
  if (f == "timestamp_seconds" && t != nullptr && t->id() == TypeId::kDecimal) {
    return c.Finish(c.Make(Op::kTimestampFromUnits, DataType::Timestamp(), c.args[0]->nullable));
  }
  if (f.starts_with("timestamp_")) {
    if (c.args[0]->type != nullptr && !c.args[0]->type->is_integral()) {
      return c.Mismatch(fmt::format("{} needs an integral number, got {}", f, c.TypeOf(0)));
    }
    SLUICE_RETURN_IF_ERROR(c.Expect(0, DataType::Long()));
    return c.Finish(c.Make(Op::kTimestampFromUnits, DataType::Timestamp(), c.args[0]->nullable));
  }
  if (f == "date_from_unix_date") {
    SLUICE_RETURN_IF_ERROR(c.Expect(0, DataType::Integer()));
    return c.Finish(c.Make(Op::kDateFromUnixDate, DataType::Date(), c.args[0]->nullable));
  }
  // Spark takes exactly a date (unix_date) or a timestamp here, not a string.
  const bool date = f == "unix_date";
  const TypePtr want = date ? DataType::Date() : DataType::Timestamp();
  if (c.args[0]->type != nullptr && !c.args[0]->type->Equals(*want)) {
    return c.Mismatch(fmt::format("{} needs a {}, got {}", f, want->ToString(), c.TypeOf(0)));
  }
  SLUICE_RETURN_IF_ERROR(c.Expect(0, want));
  return c.Finish(c.Make(date ? Op::kUnixDate : Op::kUnixUnits, date ? DataType::Integer() : DataType::Long(),
                         c.args[0]->nullable));
}

// levenshtein(a, b[, threshold]): the edit distance in characters, -1 above the threshold;
// soundex(s).
Result<BoundPtr> BindStringDistance(Call& c) {
  if (c.node.name == "soundex") return c.StringUnary(Op::kSoundex, DataType::String());
  SLUICE_RETURN_IF_ERROR(c.ExpectStrings(0, 2));
  if (c.args.size() == 3) SLUICE_RETURN_IF_ERROR(c.Expect(2, DataType::Integer()));
  return c.Finish(c.Make(Op::kLevenshtein, DataType::Integer(), AnyNullable(c.args)));
}

// ascii(s) (the first character's code point), chr(n)/char(n), space(n), bin(n), bit_length(x),
// octet_length(x) (of a string's UTF-8 bytes or a binary).
Result<BoundPtr> BindCharacterCode(Call& c) {
  const std::string& f = c.node.name;
  if (f == "ascii") return c.StringUnary(Op::kAscii, DataType::Integer());
  if (f == "bit_length" || f == "octet_length") {
    const TypePtr& t = c.args[0]->type;
    if (t == nullptr || t->id() != TypeId::kBinary) SLUICE_RETURN_IF_ERROR(c.ExpectStrings(0, 1));
    return c.Finish(c.Make(Op::kByteLength, DataType::Integer(), c.args[0]->nullable));
  }
  const bool space = f == "space";
  SLUICE_RETURN_IF_ERROR(c.Expect(0, space ? DataType::Integer() : DataType::Long()));
  return c.Finish(
      c.Make(space ? Op::kSpace : f == "bin" ? Op::kBin : Op::kChr, DataType::String(), c.args[0]->nullable));
}

// crc32(binary) (a string is read as its UTF-8 bytes).
Result<BoundPtr> BindCrc32(Call& c) {
  const TypePtr& t = c.args[0]->type;
  if (t == nullptr || t->id() != TypeId::kBinary) SLUICE_RETURN_IF_ERROR(c.Expect(0, DataType::Binary()));
  return c.Finish(c.Make(Op::kCrc32, DataType::Long(), c.args[0]->nullable));
}

Result<BoundPtr> BindUnixTimestamp(Call& c) {
  if (c.args.size() == 2) {
    SLUICE_RETURN_IF_ERROR(c.ExpectStrings(0, 2));
  } else if (c.args.size() == 1) {
    SLUICE_RETURN_IF_ERROR(c.DatetimeArg(0, DataType::Timestamp()));
  }
  return c.Finish(c.Make(Op::kUnixTimestamp, DataType::Long(), !c.args.empty()));
}

Result<BoundPtr> BindFromUnixtime(Call& c) {
  SLUICE_RETURN_IF_ERROR(c.Expect(0, DataType::Long()));
  SLUICE_RETURN_IF_ERROR(c.ExpectStrings(1, 2));
  return c.Finish(c.Make(Op::kFromUnixtime, DataType::String(), AnyNullable(c.args)));
}

Result<BoundPtr> BindGetJsonObject(Call& c) {
  SLUICE_RETURN_IF_ERROR(c.ExpectStrings(0, 2));
  return c.Finish(c.Make(Op::kGetJsonObject, DataType::String(), true));
}

// The options map of a JSON function (argument i, when given): a constant map<string,string>.
Result<std::shared_ptr<const JsonOptions>> JsonOptionsArg(Call& c, size_t i) {
  if (c.args.size() <= i) return ReadJsonOptions(c.node.name, nullptr);
  const BoundPtr& options = c.args[i];
  const bool string_map = options->type != nullptr && options->type->id() == TypeId::kMap &&
                          options->type->key_type()->id() == TypeId::kString &&
                          options->type->value_type()->id() == TypeId::kString;
  if (options->op != Op::kConstant || !string_map) {
    return c.Mismatch(fmt::format("the options of {} must be a constant map of strings, such as map('mode', 'FAILFAST')",
                                  c.node.name));
  }
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<const JsonOptions> read, ReadJsonOptions(c.node.name, options->constant.get()));
  c.args.resize(i);  // read once here; the kernel takes them from the node's state
  return read;
}

// from_json(json, schema [, options]): the schema a constant string (a DDL column list, a type, or
// Spark's JSON form of one, schema_of_json's result included).
Result<BoundPtr> BindFromJson(Call& c) {
  if (c.args[0]->type != nullptr && c.args[0]->type->id() != TypeId::kString) {
    return c.Mismatch(fmt::format("from_json reads a string, not {}", c.TypeOf(0)));
  }
  SLUICE_RETURN_IF_ERROR(c.ExpectStrings(0, 1));
  if (!IsConstantString(c.args[1]) || c.args[1]->constant->IsNull(0)) {
    return Status::Error(errors::kInvalidSchema,
                         fmt::format("the schema of from_json at {}:{} must be a constant string, such as 'a INT, b STRING'",
                                     c.node.line, c.node.column));
  }
  SLUICE_ASSIGN_OR_RETURN(TypePtr type, ReadJsonSchema(c.args[1]->constant->View(0)));
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<const JsonOptions> options, JsonOptionsArg(c, 2));
  c.args.resize(1);
  auto node = c.Make(Op::kFromJson, type, true);
  node->state = options;
  return c.Finish(node);
}

Result<BoundPtr> BindToJson(Call& c) {
  if (c.args[0]->type == nullptr) {  // an untyped NULL writes no JSON
    SLUICE_RETURN_IF_ERROR(JsonOptionsArg(c, 1).status());
    return c.CastTo(c.args[0], DataType::String());
  }
  const TypePtr& t = c.args[0]->type;
  if (t == nullptr || (t->id() != TypeId::kStruct && t->id() != TypeId::kArray && t->id() != TypeId::kMap)) {
    return c.Mismatch(fmt::format("to_json writes a struct, an array or a map, not {}", c.TypeOf(0)));
  }
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<const JsonOptions> options, JsonOptionsArg(c, 1));
  auto node = c.Make(Op::kToJson, DataType::String(), c.args[0]->nullable);
  node->state = options;
  return c.Finish(node);
}

// schema_of_json(json [, options]): of a constant, folded here, as Spark requires.
Result<BoundPtr> BindSchemaOfJson(Call& c) {
  SLUICE_RETURN_IF_ERROR(JsonOptionsArg(c, 1).status());
  if (!IsConstantString(c.args[0]) || c.args[0]->constant->IsNull(0)) {
    return c.Mismatch("schema_of_json takes a constant JSON string, such as '{\"a\": 1}'");
  }
  return c.Finish(c.Make(Op::kSchemaOfJson, DataType::String(), false));
}

Result<BoundPtr> BindJsonStructure(Call& c) {
  SLUICE_RETURN_IF_ERROR(c.ExpectStrings(0, 1));
  if (c.node.name == "json_array_length") return c.Finish(c.Make(Op::kJsonArrayLength, DataType::Integer(), true));
  return c.Finish(c.Make(Op::kJsonObjectKeys, DataType::Array(DataType::String()), true));
}

// transform, filter, exists, forall: an array and a lambda of its element (and, for transform and
// filter, its 0-based index).
Result<BoundPtr> BindArrayLambda(Call& c) {
  static const std::map<std::string_view, Op> kOps = {
      {"transform", Op::kTransform}, {"filter", Op::kFilter}, {"exists", Op::kExists}, {"forall", Op::kForall}};
  const Op op = kOps.at(c.node.name);
  SLUICE_RETURN_IF_ERROR(c.ArrayArg(0));
  const TypePtr array = c.args[0]->type;
  std::vector<std::pair<TypePtr, bool>> parameters = {{array->element_type(), array->contains_null()}};
  if (op == Op::kTransform || op == Op::kFilter) parameters.push_back({DataType::Integer(), false});
  SLUICE_RETURN_IF_ERROR(c.Lambda(1, parameters, 1));
  if (op == Op::kTransform) {
    return c.Finish(c.Make(op, DataType::Array(c.args[1]->type, c.args[1]->nullable), c.args[0]->nullable));
  }
  if (c.args[1]->type == nullptr || c.args[1]->type->id() != TypeId::kBoolean) {
    return c.Mismatch(fmt::format("the lambda function of {} must return a boolean, not {}", c.node.name, c.TypeOf(1)));
  }
  if (op == Op::kFilter) return c.Finish(c.Make(op, array, c.args[0]->nullable));
  return c.Finish(c.Make(op, DataType::Boolean(), true));
}

// aggregate(array, zero, (acc, x) -> merge[, acc -> finish]), also named reduce: the merge must
// give the zero's type, as Spark requires.
Result<BoundPtr> BindAggregateArray(Call& c) {
  SLUICE_RETURN_IF_ERROR(c.ArrayArg(0));
  if (c.args[1] == nullptr) return c.Mismatch(fmt::format("the start value of {} cannot be a lambda function", c.node.name));
  if (c.args[1]->type == nullptr) return c.Mismatch(fmt::format("the start value of {} needs a type, not an untyped NULL", c.node.name));
  // The accumulator may hold NULLs anywhere: the start value is made nullable throughout.
  const TypePtr zero = AsNullable(c.args[1]->type);
  SLUICE_ASSIGN_OR_RETURN(c.args[1], c.CastTo(c.args[1], zero));
  const TypePtr array = c.args[0]->type;
  SLUICE_RETURN_IF_ERROR(c.Lambda(2, {{zero, true}, {array->element_type(), array->contains_null()}}, 2));
  if (c.args[2]->type == nullptr || !EqualsIgnoringNullability(c.args[2]->type, zero)) {
    return c.Mismatch(fmt::format("the merge function of {} must return the start value's type {}, not {}", c.node.name,
                                  zero->ToString(), c.TypeOf(2)));
  }
  TypePtr result = zero;
  if (c.args.size() == 4) {
    SLUICE_RETURN_IF_ERROR(c.Lambda(3, {{zero, true}}, 1));
    result = c.args[3]->type;
    if (result == nullptr) return c.Mismatch(fmt::format("the finish function of {} returns an untyped NULL", c.node.name));
  }
  return c.Finish(c.Make(Op::kAggregateArray, result, true));
}

// zip_with(left, right, (x, y) -> f): elements paired by position, the shorter array padded with NULLs.
Result<BoundPtr> BindZipWith(Call& c) {
  SLUICE_RETURN_IF_ERROR(c.ArrayArg(0));
  SLUICE_RETURN_IF_ERROR(c.ArrayArg(1));
  const TypePtr left = c.args[0]->type, right = c.args[1]->type;
  SLUICE_RETURN_IF_ERROR(c.Lambda(2, {{left->element_type(), true}, {right->element_type(), true}}, 2));
  if (c.args[2]->type == nullptr) return c.Mismatch("the lambda function of zip_with returns an untyped NULL");
  return c.Finish(c.Make(Op::kZipWith, DataType::Array(c.args[2]->type, c.args[2]->nullable),
                         c.args[0]->nullable || c.args[1]->nullable));
}

Result<BoundPtr> BindSize(Call& c) {
  // An untyped NULL is a null array: size -1, as in Spark.
  if (c.args[0]->type == nullptr) {
    SLUICE_ASSIGN_OR_RETURN(c.args[0], c.CastTo(c.args[0], DataType::Array(DataType::String())));
  }
  if (c.args[0]->type->id() != TypeId::kArray && c.args[0]->type->id() != TypeId::kMap) {
    return c.Mismatch(fmt::format("size needs an array or a map, got {}", c.TypeOf(0)));
  }
  return c.Finish(c.Make(Op::kSize, DataType::Integer(), c.ansi() && c.args[0]->nullable));
}

Result<BoundPtr> BindElementAtOrSubscript(Call& c) {
  const std::string& f = c.node.name;
  const TypePtr& t = c.args[0]->type;
  if (t != nullptr && t->id() == TypeId::kArray) {
    SLUICE_RETURN_IF_ERROR(c.Expect(1, DataType::Integer()));
    return c.Finish(c.Make(f == "element_at" ? Op::kElementAt : Op::kSubscript, t->element_type(), true));
  }
  if (t != nullptr && t->id() == TypeId::kMap) {
    SLUICE_RETURN_IF_ERROR(c.Expect(1, t->key_type()));
    return c.Finish(c.Make(Op::kElementAt, t->value_type(), true));
  }
  return c.Mismatch(fmt::format("{} needs an array or a map, got {}", f == "subscript" ? "[]" : f, c.TypeOf(0)));
}

Result<BoundPtr> BindGetField(Call& c) {
  const TypePtr& t = c.args[0]->type;
  if (t == nullptr || t->id() != TypeId::kStruct) return c.Mismatch(fmt::format("field access needs a struct, got {}", c.TypeOf(0)));
  if (!IsConstantString(c.args[1]) || c.args[1]->constant->IsNull(0)) {
    return c.Mismatch("the field name of get_field is a string literal");
  }
  std::string_view name = c.args[1]->constant->View(0);
  int index = t->FieldIndexIgnoreCase(name);
  if (index < 0) return c.Mismatch(fmt::format("{} has no field named {}", t->ToString(), name));
  auto node = c.NewNode(Op::kGetField, t->field(index).type, {c.args[0]});
  node->slot = index;
  return c.Finish(node);
}

Result<BoundPtr> BindStructOrNamedStruct(Call& c) {
  const std::string& f = c.node.name;
  std::vector<Field> fields;
  std::vector<BoundPtr> values;
  if (f == "named_struct") {
    if (c.args.size() % 2 != 0) return c.WrongArgs("an even number of arguments (name, value pairs)");
    for (size_t i = 0; i < c.args.size(); i += 2) {
      if (!IsConstantString(c.args[i]) || c.args[i]->constant->IsNull(0)) {
        return c.Mismatch(fmt::format("argument {} of named_struct must be a constant string (a field name)", i + 1));
      }
      values.push_back(c.args[i + 1]);
      fields.push_back(Field{std::string(c.args[i]->constant->View(0)), c.args[i + 1]->type, c.args[i + 1]->nullable});
    }
  } else {
    for (size_t i = 0; i < c.args.size(); ++i) {
      const Node& a = *c.node.args[i];
      std::string name = i < c.node.aliases.size() && !c.node.aliases[i].empty() ? c.node.aliases[i]
                         : a.kind == NodeKind::kColumn                           ? a.path.back()
                                                                                 : fmt::format("col{}", i + 1);
      values.push_back(c.args[i]);
      fields.push_back(Field{name, c.args[i]->type, c.args[i]->nullable});
    }
  }
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i]->type == nullptr) {
      SLUICE_ASSIGN_OR_RETURN(values[i], c.CastTo(values[i], DataType::String()));
      fields[i].type = DataType::String();
    }
  }
  Result<TypePtr> type = DataType::Struct(std::move(fields));
  if (!type.ok()) return c.Mismatch(type.status().message());
  auto node = c.NewNode(Op::kStruct, *type, std::move(values));
  node->nullable = false;
  return c.Finish(node);
}

Result<BoundPtr> BindArray(Call& c) {
  SLUICE_ASSIGN_OR_RETURN(TypePtr element, c.CommonType(true));
  if (c.args.empty()) element = DataType::String();
  return c.Finish(c.Make(Op::kArray, DataType::Array(element, AnyNullable(c.args)), false));
}

Result<BoundPtr> BindMap(Call& c) {
  // map(k1, v1, k2, v2, ...): keys of their common type, values of theirs.
  if (c.args.size() % 2 != 0) return c.WrongArgs("an even number of arguments (key, value pairs)");
  TypePtr key, value;
  bool ok = true;
  for (size_t i = 0; i < c.args.size() && ok; i += 2) {
    key = WiderCommonType(key, c.args[i]->type, true, c.ansi(), &ok);
    if (ok) value = WiderCommonType(value, c.args[i + 1]->type, true, c.ansi(), &ok);
  }
  if (!ok) return c.Mismatch("the keys, or the values, of map have incompatible types");
  if (key == nullptr) key = DataType::String();
  if (value == nullptr) value = DataType::String();
  if (key->id() == TypeId::kMap) return c.Mismatch("a map key cannot be a map");
  bool value_nullable = false;
  for (size_t i = 0; i < c.args.size(); i += 2) {
    SLUICE_ASSIGN_OR_RETURN(c.args[i], c.CastTo(c.args[i], key));
    SLUICE_ASSIGN_OR_RETURN(c.args[i + 1], c.CastTo(c.args[i + 1], value));
    value_nullable = value_nullable || c.args[i + 1]->nullable;
  }
  return c.Finish(c.Make(Op::kMap, DataType::Map(key, value, value_nullable), false));
}

// Every function: its names, the number of arguments it takes, and its binder.
constexpr FunctionDef kFunctions[] = {
    {"count", 1, kAny, BindAggregate},
    {"sum", 1, 1, BindAggregate},
    {"min", 1, 1, BindAggregate},
    {"max", 1, 1, BindAggregate},
    {"avg", 1, 1, BindAggregate},
    {"mean", 1, 1, BindAggregate},
    {"first", 1, 2, BindAggregate},
    {"last", 1, 2, BindAggregate},
    {"collect_list", 1, 1, BindAggregate},
    {"array_agg", 1, 1, BindAggregate},
    {"collect_set", 1, 1, BindAggregate},
    {"approx_count_distinct", 1, 2, BindAggregate},
    {"isnull", 1, 1, BindIsNull},
    {"isnotnull", 1, 1, BindIsNull},
    {"istrue", 1, 1, BindIsTrueOrFalse},
    {"isfalse", 1, 1, BindIsTrueOrFalse},
    {"positive", 1, 1, BindUnarySign},
    {"negative", 1, 1, BindUnarySign},
    {"in", 2, kAny, BindIn},
    {"like", 2, 3, BindLike},
    {"ilike", 2, 3, BindLike},
    {"rlike", 2, 2, BindRLike},
    {"coalesce", 1, kAny, BindCoalesce},
    {"ifnull", 2, 2, BindCoalesce},
    {"nvl", 2, 2, BindCoalesce},
    {"greatest", 2, kAny, BindGreatestOrLeast},
    {"least", 2, kAny, BindGreatestOrLeast},
    {"lower", 1, 1, BindLower},
    {"lcase", 1, 1, BindLower},
    {"upper", 1, 1, BindUpper},
    {"ucase", 1, 1, BindUpper},
    {"length", 1, 1, BindLength},
    {"char_length", 1, 1, BindLength},
    {"trim", 1, 2, BindTrim},
    {"ltrim", 1, 2, BindTrim},
    {"rtrim", 1, 2, BindTrim},
    {"substring", 2, 3, BindSubstring},
    {"substr", 2, 3, BindSubstring},
    {"concat", 0, kAny, BindConcat},
    {"concat_ws", 1, kAny, BindConcatWs},
    {"replace", 2, 3, BindReplace},
    {"split", 2, 3, BindSplit},
    {"regexp_extract", 2, 3, BindRegexpExtract},
    {"regexp_extract_all", 2, 3, BindRegexpExtract},
    {"startswith", 2, 2, BindStringPredicate},
    {"endswith", 2, 2, BindStringPredicate},
    {"contains", 2, 2, BindStringPredicate},
    {"abs", 1, 1, BindAbs},
    {"round", 1, 2, BindRound},
    {"bround", 1, 2, BindRound},
    {"floor", 1, 1, BindFloorOrCeil},
    {"ceil", 1, 1, BindFloorOrCeil},
    {"ceiling", 1, 1, BindFloorOrCeil},
    {"sqrt", 1, 1, BindSqrt},
    {"pow", 2, 2, BindPow},
    {"power", 2, 2, BindPow},
    {"hash", 1, kAny, BindHash},
    {"xxhash64", 1, kAny, BindHash},
    {"encode", 2, 2, BindCharset},
    {"decode", 2, kAny, BindCharset},  // 3+ arguments: BindCall rewrites it into a CASE
    {"to_binary", 1, 2, BindToBinary},
    {"conv", 3, 3, BindNumberText},
    {"elt", 2, kAny, BindNumberText},
    {"format_string", 1, kAny, BindFormatString},
    {"printf", 1, kAny, BindFormatString},
    {"typeof", 1, 1, BindTypeof},
    {"to_number", 2, 2, BindToNumber},
    {"try_to_number", 2, 2, BindToNumber},
    {"to_char", 2, 2, BindToChar},
    {"to_varchar", 2, 2, BindToChar},
    {"width_bucket", 4, 4, BindNumberText},
    {"md5", 1, 1, BindMd5},
    {"sha2", 2, 2, BindMd5},
    {"current_timestamp", 0, 0, BindCurrentTimestamp},
    {"now", 0, 0, BindCurrentTimestamp},
    {"uuid", 0, 0, BindUuid},
    {"rand", 0, 1, BindRandom},
    {"random", 0, 1, BindRandom},
    {"randn", 0, 1, BindRandom},
    {"current_date", 0, 0, BindCurrentDate},
    {"to_timestamp", 1, 2, BindToTimestampOrDate},
    {"to_date", 1, 2, BindToTimestampOrDate},
    {"date_trunc", 2, 2, BindDateTrunc},
    {"date_format", 2, 2, BindDateFormat},
    {"window", 2, 4, BindTimeWindow},
    {"window_time", 1, 1, BindWindowTime},
    {"year", 1, 1, BindDatePart},
    {"month", 1, 1, BindDatePart},
    {"day", 1, 1, BindDatePart},
    {"dayofmonth", 1, 1, BindDatePart},
    {"hour", 1, 1, BindDatePart},
    {"unix_timestamp", 0, 2, BindUnixTimestamp},
    {"from_unixtime", 1, 2, BindFromUnixtime},
    {"get_json_object", 2, 2, BindGetJsonObject},
    {"from_json", 2, 3, BindFromJson},
    {"to_json", 1, 2, BindToJson},
    {"schema_of_json", 1, 2, BindSchemaOfJson},
    {"json_array_length", 1, 1, BindJsonStructure},
    {"json_object_keys", 1, 1, BindJsonStructure},
    {"transform", 2, 2, BindArrayLambda, true},
    {"filter", 2, 2, BindArrayLambda, true},
    {"exists", 2, 2, BindArrayLambda, true},
    {"forall", 2, 2, BindArrayLambda, true},
    {"aggregate", 3, 4, BindAggregateArray, true},
    {"reduce", 3, 4, BindAggregateArray, true},
    {"zip_with", 3, 3, BindZipWith, true},
    {"size", 1, 1, BindSize},
    {"element_at", 2, 2, BindElementAtOrSubscript},
    {"subscript", 2, 2, BindElementAtOrSubscript},
    {"get_field", 2, 2, BindGetField},
    {"struct", 0, kAny, BindStructOrNamedStruct},
    {"named_struct", 2, kAny, BindStructOrNamedStruct},
    {"array", 0, kAny, BindArray},
    {"map", 0, kAny, BindMap},
    {"map_keys", 1, 1, BindMapPart},
    {"map_values", 1, 1, BindMapPart},
    {"array_size", 1, 1, BindArrayFunction},
    {"array_contains", 2, 2, BindArrayFunction},
    {"array_position", 2, 2, BindArrayFunction},
    {"array_max", 1, 1, BindArrayFunction},
    {"array_min", 1, 1, BindArrayFunction},
    {"slice", 3, 3, BindArrayFunction},
    {"array_distinct", 1, 1, BindArrayFunction},
    {"array_compact", 1, 1, BindArrayFunction},
    {"sort_array", 1, 2, BindArrayFunction},
    {"array_sort", 1, 2, BindArrayFunction, true},
    {"flatten", 1, 1, BindCollection},
    {"get", 2, 2, BindCollection},
    {"array_insert", 3, 3, BindCollection},
    {"sequence", 2, 3, BindCollection},
    {"arrays_zip", 0, kAny, BindCollection},
    {"map_from_arrays", 2, 2, BindCollection},
    {"map_concat", 0, kAny, BindCollection},
    {"array_join", 2, 3, BindArrayFunction},
    {"array_append", 2, 2, BindArrayFunction},
    {"array_prepend", 2, 2, BindArrayFunction},
    {"quarter", 1, 1, BindDatePart},
    {"dayofweek", 1, 1, BindDatePart},
    {"dayofyear", 1, 1, BindDatePart},
    {"weekofyear", 1, 1, BindDatePart},
    {"minute", 1, 1, BindDatePart},
    {"second", 1, 1, BindDatePart},
    {"date_add", 2, 2, BindDateAdd},
    {"date_sub", 2, 2, BindDateAdd},
    {"datediff", 2, 2, BindDateArithmetic},
    {"add_months", 2, 2, BindDateArithmetic},
    {"last_day", 1, 1, BindDateArithmetic},
    {"make_date", 3, 3, BindDateArithmetic},
    {"date_part", 2, 2, BindExtract},
    {"datepart", 2, 2, BindExtract},
    {"months_between", 2, 3, BindTimestampArithmetic},
    {"next_day", 2, 2, BindTimestampArithmetic},
    {"make_timestamp", 6, 6, BindTimestampArithmetic},
    {"timestampadd", 3, 3, BindTimestampArithmetic},
    {"timestampdiff", 3, 3, BindTimestampArithmetic},
    {"regexp_like", 2, 2, BindRLike},
    {"regexp_replace", 3, 3, BindRegexp},
    {"regexp_count", 2, 2, BindRegexp},
    {"split_part", 3, 3, BindSplitPart},
    {"instr", 2, 2, BindLocate},
    {"locate", 2, 3, BindLocate},
    {"position", 2, 3, BindLocate},
    {"lpad", 2, 3, BindPad},
    {"rpad", 2, 3, BindPad},
    {"repeat", 2, 2, BindStringAndCount},
    {"left", 2, 2, BindStringAndCount},
    {"right", 2, 2, BindStringAndCount},
    {"reverse", 1, 1, BindStringRewrite},
    {"initcap", 1, 1, BindStringRewrite},
    {"translate", 3, 3, BindStringRewrite},
    {"btrim", 1, 2, BindTrim},
    {"hex", 1, 1, BindEncoding},
    {"unhex", 1, 1, BindEncoding},
    {"base64", 1, 1, BindEncoding},
    {"unbase64", 1, 1, BindEncoding},
    {"pi", 0, 0, BindMath},
    {"e", 0, 0, BindMath},
    {"log", 1, 2, BindMath},
    {"exp", 1, 1, BindMath},
    {"expm1", 1, 1, BindMath},
    {"ln", 1, 1, BindMath},
    {"log10", 1, 1, BindMath},
    {"log2", 1, 1, BindMath},
    {"log1p", 1, 1, BindMath},
    {"cbrt", 1, 1, BindMath},
    {"sin", 1, 1, BindMath},
    {"cos", 1, 1, BindMath},
    {"tan", 1, 1, BindMath},
    {"asin", 1, 1, BindMath},
    {"acos", 1, 1, BindMath},
    {"atan", 1, 1, BindMath},
    {"sinh", 1, 1, BindMath},
    {"cosh", 1, 1, BindMath},
    {"tanh", 1, 1, BindMath},
    {"degrees", 1, 1, BindMath},
    {"radians", 1, 1, BindMath},
    {"sign", 1, 1, BindMath},
    {"signum", 1, 1, BindMath},
    {"cot", 1, 1, BindMath},
    {"sec", 1, 1, BindMath},
    {"csc", 1, 1, BindMath},
    {"asinh", 1, 1, BindMath},
    {"acosh", 1, 1, BindMath},
    {"atanh", 1, 1, BindMath},
    {"rint", 1, 1, BindMath},
    {"factorial", 1, 1, BindFactorial},
    {"timestamp_seconds", 1, 1, BindUnixUnits},
    {"timestamp_millis", 1, 1, BindUnixUnits},
    {"timestamp_micros", 1, 1, BindUnixUnits},
    {"unix_seconds", 1, 1, BindUnixUnits},
    {"unix_millis", 1, 1, BindUnixUnits},
    {"unix_micros", 1, 1, BindUnixUnits},
    {"unix_date", 1, 1, BindUnixUnits},
    {"date_from_unix_date", 1, 1, BindUnixUnits},
    {"levenshtein", 2, 3, BindStringDistance},
    {"soundex", 1, 1, BindStringDistance},
    {"crc32", 1, 1, BindCrc32},
    {"ascii", 1, 1, BindCharacterCode},
    {"chr", 1, 1, BindCharacterCode},
    {"char", 1, 1, BindCharacterCode},
    {"space", 1, 1, BindCharacterCode},
    {"bin", 1, 1, BindCharacterCode},
    {"bit_length", 1, 1, BindCharacterCode},
    {"octet_length", 1, 1, BindCharacterCode},
};

const FunctionDef* FindFunction(std::string_view name) {
  for (const FunctionDef& def : kFunctions) {
    if (def.name == name) return &def;
  }
  return nullptr;
}

Result<BoundPtr> Binder::BindFunction(const Node& n) {
  const FunctionDef* def = FindFunction(n.name);
  if (def == nullptr) {
    return Status::Error(errors::kUnresolvedRoutine,
                         fmt::format("function {} at {}:{} is not supported here", n.name, n.line, n.column));
  }
  // count(*) binds no argument; a '*' anywhere else is refused by Bind.
  std::vector<BoundPtr> args;
  if (def->higher_order) {
    for (const NodePtr& a : n.args) {
      if (a->kind == NodeKind::kLambda) {
        args.push_back(nullptr);  // bound by the function's binder, which knows the parameters' types
        continue;
      }
      SLUICE_ASSIGN_OR_RETURN(BoundPtr b, Bind(*a));
      args.push_back(std::move(b));
    }
  } else if (n.name != "count" || n.args[0]->kind != NodeKind::kStar) {
    SLUICE_ASSIGN_OR_RETURN(args, BindArgs(n));
  }
  Call call(*this, n, std::move(args));
  return def->bind(call);
}
}  // namespace

Result<Expression> Expression::Parse(std::string_view sql) {
  SLUICE_ASSIGN_OR_RETURN(NodePtr root, ParseTree(sql));
  return Expression(std::move(root));
}

std::string Expression::ToSql() const { return PrintSql(*root_); }

namespace {
// The columns a tree reads; a lambda's parameters are not columns within its body.
void CollectColumns(const Node& n, std::vector<std::string>* out, std::vector<std::string>* parameters) {
  if (n.kind == NodeKind::kColumn && std::find(out->begin(), out->end(), n.path[0]) == out->end() &&
      std::none_of(parameters->begin(), parameters->end(), [&](const std::string& p) { return EqualsIgnoreCase(p, n.path[0]); })) {
    out->push_back(n.path[0]);
  }
  const size_t scope = parameters->size();
  if (n.kind == NodeKind::kLambda) parameters->insert(parameters->end(), n.path.begin(), n.path.end());
  for (const NodePtr& a : n.args) CollectColumns(*a, out, parameters);
  parameters->resize(scope);
}

void CollectColumns(const Node& n, std::vector<std::string>* out) {
  std::vector<std::string> parameters;
  CollectColumns(n, out, &parameters);
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

std::optional<std::vector<std::string>> Expression::AsColumnPath() const {
  if (root_->kind != NodeKind::kColumn) return std::nullopt;
  return root_->path;
}

std::optional<std::pair<Expression, Expression>> Expression::AsEquality() const {
  const Node& n = *root_;
  if (n.kind != NodeKind::kCall || n.name != "=" || n.args.size() != 2) return std::nullopt;
  return std::make_pair(Expression(n.args[0]), Expression(n.args[1]));
}

namespace {
NodePtr WithoutQualifierNode(const NodePtr& n, std::string_view qualifier) {
  if (n->kind == NodeKind::kColumn) {
    if (n->path.size() < 2 || !EqualsIgnoreCase(n->path[0], qualifier)) return n;
    auto copy = std::make_shared<Node>(*n);
    copy->path.erase(copy->path.begin());
    return copy;
  }
  std::shared_ptr<Node> copy;
  for (size_t i = 0; i < n->args.size(); ++i) {
    NodePtr arg = WithoutQualifierNode(n->args[i], qualifier);
    if (arg == n->args[i]) continue;
    if (!copy) copy = std::make_shared<Node>(*n);
    copy->args[i] = std::move(arg);
  }
  return copy ? NodePtr(copy) : n;
}
}  // namespace

Expression Expression::WithoutQualifier(std::string_view qualifier) const {
  return Expression(WithoutQualifierNode(root_, qualifier));
}

NamedExpression ToNamedExpression(NamedTree tree) {
  std::string name = tree.alias;
  if (name.empty()) name = tree.node->kind == NodeKind::kColumn ? tree.node->path.back() : PrintSql(*tree.node);
  return NamedExpression{Expression(std::move(tree.node)), std::move(name)};
}

Result<NamedExpression> ParseNamedExpression(std::string_view sql) {
  SLUICE_ASSIGN_OR_RETURN(NamedTree tree, ParseNamedTree(sql));
  return ToNamedExpression(std::move(tree));
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
  for (const FunctionDef& def : kFunctions) names.push_back(def.name);
  return names;
}

}  // namespace sluice::expr
