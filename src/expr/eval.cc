// The evaluator's driver: walks the bound tree once per batch, evaluating each node's arguments
// and then its kernel over whole columns. Dispatch happens per node and batch, never per row.
#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "sluice/core/builder.h"
#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "sluice/expr/expression.h"
#include "expr/bound.h"
#include "expr/datetime.h"
#include "expr/kernel_util.h"
#include "expr/json_functions.h"
#include "expr/kernels.h"

namespace sluice::expr {
namespace {

int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

Result<Datum> EvalCast(const BoundNode& node, const Datum& arg) {
  Result<ColumnPtr> cast = CastColumn(*arg.column, node.type, node.mode);
  if (!cast.ok()) return AnsiError(cast.status().error_class(), node, cast.status().message(), "try_cast");
  return Datum{*std::move(cast), arg.scalar};
}

Datum EvalTimestampAddInterval(const BoundNode& node, const Datum& arg, int64_t rows);

}  // namespace

ColumnPtr LiteralColumn(const LiteralValue& v, const TypePtr& type) {
  if (type->id() == TypeId::kString || type->id() == TypeId::kBinary) {
    StringWriter writer(type, 1);
    writer.Append(v.text);
    return writer.Finish();
  }
  auto column = NewFixedColumn(type, 1);
  uint8_t* out = column->data.data();
  switch (type->id()) {
    case TypeId::kBoolean: out[0] = v.boolean ? 1 : 0; break;
    case TypeId::kByte: { int8_t x = static_cast<int8_t>(v.integer); std::memcpy(out, &x, 1); break; }
    case TypeId::kShort: { int16_t x = static_cast<int16_t>(v.integer); std::memcpy(out, &x, 2); break; }
    case TypeId::kInteger:
    case TypeId::kDate: { int32_t x = static_cast<int32_t>(v.integer); std::memcpy(out, &x, 4); break; }
    case TypeId::kFloat: { float x = static_cast<float>(v.floating); std::memcpy(out, &x, 4); break; }
    case TypeId::kDouble: std::memcpy(out, &v.floating, 8); break;
    case TypeId::kDecimal: std::memcpy(out, &v.decimal, 16); break;
    default: std::memcpy(out, &v.integer, 8); break;  // long, timestamps
  }
  return column;
}

Status AnsiError(std::string_view error_class, const BoundNode& node, std::string_view what,
                 std::string_view try_function) {
  return Status::Error(error_class, fmt::format("{} in {}; use {} to get NULL instead, or set sql.ansi: false", what,
                                                PrintBound(node), try_function));
}

bool MayFail(const BoundNode& node) {
  switch (node.op) {
    case Op::kAggregate:
    case Op::kElementAt:  // element_at(array, 0) fails in every mode
    case Op::kMap:        // a null or repeated key fails in every mode
    case Op::kMapFromArrays: case Op::kMapConcat: case Op::kArrayInsert: case Op::kSequence:
    case Op::kSlice:      // a start of 0 or a negative length fails in every mode
    case Op::kRepeat: case Op::kLPad: case Op::kRPad:  // a value beyond the size bound fails
      return true;
    case Op::kCast:
      if (node.mode == EvalMode::kAnsi && CastCanFail(*node.args[0]->type, *node.type)) return true;
      break;
    case Op::kAdd: case Op::kSubtract: case Op::kMultiply: case Op::kNegate: case Op::kAbs:
      // Floating-point results never fail; integral and decimal ones can overflow.
      if (node.mode == EvalMode::kAnsi && (node.type->is_integral() || node.type->id() == TypeId::kDecimal)) return true;
      break;
    case Op::kRound:
      if (node.mode == EvalMode::kAnsi && node.type->is_integral()) return true;
      break;
    case Op::kFloor: case Op::kCeil: {
      const TypeId from = node.args[0]->type->id();
      if (node.mode == EvalMode::kAnsi && (from == TypeId::kFloat || from == TypeId::kDouble)) return true;
      break;
    }
    case Op::kDivide: case Op::kRemainder: case Op::kIntDivide: case Op::kPmod: case Op::kSubscript:
    case Op::kToTimestamp: case Op::kToDate: case Op::kUnixTimestamp: case Op::kMakeDate:
    case Op::kNextDay: case Op::kMakeTimestamp: case Op::kConv: case Op::kElt:
    case Op::kEncode: case Op::kDecode:
      if (node.mode == EvalMode::kAnsi) return true;
      break;
    case Op::kTimestampFromUnits:  // overflow fails in both modes, as Spark's multiplyExact
    case Op::kFormatString:        // a pattern that does not fit its values, in both modes
    case Op::kToNumber: case Op::kTryToNumber:  // text that does not match or fit its format, in both modes
      return true;
    case Op::kFromJson:
      if (static_cast<const JsonOptions&>(*node.state).failfast) return true;
      break;
    case Op::kLike: case Op::kRLike: case Op::kSplit: case Op::kRegexpExtract: case Op::kRegexpExtractAll: case Op::kDateFormat:
    case Op::kFromUnixtime: case Op::kRegexpReplace: case Op::kRegexpCount:
      // A pattern that is not a constant was not checked at bind time.
      if (node.args.size() > 1 && node.args[1]->op != Op::kConstant) return true;
      break;
    default: break;
  }
  for (const BoundPtr& a : node.args) {
    if (MayFail(*a)) return true;
  }
  return false;
}

ColumnPtr Materialize(const Datum& datum, int64_t num_rows) {
  if (datum.scalar) {
    std::vector<int64_t> zeros(static_cast<size_t>(num_rows), 0);
    return Take(datum.column, zeros);
  }
  if (datum.offset == 0 && datum.column->length == num_rows) return datum.column;
  return Slice(datum.column, datum.offset, num_rows);
}

namespace {

// The slots and lambda variables a subtree reads.
void InputsOf(const BoundNode& node, std::vector<bool>* slots, std::vector<bool>* variables) {
  if (node.op == Op::kColumn) (*slots)[static_cast<size_t>(node.slot)] = true;
  if (node.op == Op::kLambdaVariable && static_cast<size_t>(node.slot) < variables->size()) {
    (*variables)[static_cast<size_t>(node.slot)] = true;
  }
  for (const BoundPtr& a : node.args) InputsOf(*a, slots, variables);
}

}  // namespace

EvalInput GatherInput(const BoundNode& node, const EvalInput& input, const std::vector<int64_t>& rows,
                      std::vector<ColumnPtr>* slots, std::vector<ColumnPtr>* variables,
                      std::vector<int64_t>* numbers) {
  std::vector<bool> used_slots(input.slots.size(), false), used_variables(input.variables.size(), false);
  InputsOf(node, &used_slots, &used_variables);
  std::vector<int64_t> absolute(rows);
  for (int64_t& row : absolute) row += input.row_offset;
  slots->assign(input.slots.size(), nullptr);
  for (size_t s = 0; s < input.slots.size(); ++s) {
    if (used_slots[s]) (*slots)[s] = Take(input.slots[s], absolute);
  }
  variables->assign(input.variables.size(), nullptr);
  for (size_t v = 0; v < input.variables.size(); ++v) {
    if (used_variables[v]) (*variables)[v] = Take(input.variables[v], rows);
  }
  numbers->resize(rows.size());
  for (size_t j = 0; j < rows.size(); ++j) (*numbers)[j] = RowNumber(input, rows[j]);
  return EvalInput{*slots, static_cast<int64_t>(rows.size()), input.now_micros, 0, *variables, 0, *numbers};
}

namespace {

// `node` evaluated on the given rows of the input only (ascending, in [0, input.num_rows)), as a
// datum of input.num_rows rows that are null elsewhere: the rows a conditional op does not pass
// to an argument never reach its kernels, so they cannot fail there.
Result<Datum> EvaluateOnRows(const BoundNode& node, const EvalInput& input, const std::vector<int64_t>& rows) {
  if (static_cast<int64_t>(rows.size()) == input.num_rows) return EvaluateNode(node, input);
  if (rows.empty()) return Datum{MakeNullColumn(node.type, 1), true};
  std::vector<ColumnPtr> slots, variables;
  std::vector<int64_t> numbers;
  const int64_t count = static_cast<int64_t>(rows.size());
  SLUICE_ASSIGN_OR_RETURN(Datum d, EvaluateNode(node, GatherInput(node, input, rows, &slots, &variables, &numbers)));
  if (d.scalar) return d;
  // Scatter back: every row not evaluated is null.
  std::vector<int64_t> indices(static_cast<size_t>(input.num_rows), -1);
  for (int64_t k = 0; k < count; ++k) indices[static_cast<size_t>(rows[static_cast<size_t>(k)])] = k;
  return Datum{GatherChild(Materialize(d, count), d.column->type, std::move(indices)), false};
}

// Of `rows`, those where the boolean datum is (not) `value`, as a CASE, AND or OR continues.
std::vector<int64_t> RowsWhere(const Datum& d, const std::vector<int64_t>& rows, bool keep_true, bool keep_false,
                               bool keep_null) {
  std::vector<int64_t> out;
  out.reserve(rows.size());
  FixedReader<uint8_t> value = ReadFixed<uint8_t>(d);
  ValidityReader valid = ReadValidity(d);
  for (int64_t row : rows) {
    bool keep = !valid(row) ? keep_null : (value[row] != 0 ? keep_true : keep_false);
    if (keep) out.push_back(row);
  }
  return out;
}

// The arguments of a CASE, coalesce, IN, AND or OR, each evaluated only on the rows that reach it
// (Spark evaluates them row by row and lazily). Only used when an argument after the first may
// fail; otherwise every argument is evaluated on every row, which is cheaper.
Result<std::vector<Datum>> EvaluateLazily(const BoundNode& node, const EvalInput& input) {
  std::vector<int64_t> remaining(static_cast<size_t>(input.num_rows));
  for (int64_t i = 0; i < input.num_rows; ++i) remaining[static_cast<size_t>(i)] = i;
  std::vector<Datum> args(node.args.size());
  switch (node.op) {
    case Op::kAnd:
    case Op::kOr: {
      // FALSE AND x is FALSE and TRUE OR x is TRUE whatever x is.
      SLUICE_ASSIGN_OR_RETURN(args[0], EvaluateNode(*node.args[0], input));
      const bool is_and = node.op == Op::kAnd;
      SLUICE_ASSIGN_OR_RETURN(args[1], EvaluateOnRows(*node.args[1], input,
                                                      RowsWhere(args[0], remaining, is_and, !is_and, true)));
      return args;
    }
    case Op::kIn: {
      // Candidates are read in order until one equals the value (and never for a null value).
      SLUICE_ASSIGN_OR_RETURN(args[0], EvaluateNode(*node.args[0], input));
      const Datum& value = args[0];
      std::erase_if(remaining, [&](int64_t row) { return !value.IsValid(row); });
      for (size_t a = 1; a < node.args.size(); ++a) {
        SLUICE_ASSIGN_OR_RETURN(args[a], EvaluateOnRows(*node.args[a], input, remaining));
        const Datum& candidate = args[a];
        std::erase_if(remaining, [&](int64_t row) {
          return candidate.IsValid(row) && RowsEqual(*value.column, value.scalar ? 0 : row + value.offset,
                                                     *candidate.column, candidate.scalar ? 0 : row + candidate.offset);
        });
      }
      return args;
    }
    case Op::kCoalesce:
      for (size_t a = 0; a < node.args.size(); ++a) {
        SLUICE_ASSIGN_OR_RETURN(args[a], EvaluateOnRows(*node.args[a], input, remaining));
        // The next argument is read only where every one before it was null.
        ValidityReader valid = ReadValidity(args[a]);
        std::erase_if(remaining, [&](int64_t row) { return valid(row); });
      }
      return args;
    default: {  // kCase: (when, then)*, else
      for (size_t a = 0; a + 1 < node.args.size(); a += 2) {
        SLUICE_ASSIGN_OR_RETURN(args[a], EvaluateOnRows(*node.args[a], input, remaining));
        SLUICE_ASSIGN_OR_RETURN(args[a + 1], EvaluateOnRows(*node.args[a + 1], input,
                                                            RowsWhere(args[a], remaining, true, false, false)));
        remaining = RowsWhere(args[a], remaining, false, true, true);
      }
      SLUICE_ASSIGN_OR_RETURN(args.back(), EvaluateOnRows(*node.args.back(), input, remaining));
      return args;
    }
  }
}

bool EvaluatesLazily(const BoundNode& node) {
  if (node.op != Op::kCase && node.op != Op::kCoalesce && node.op != Op::kAnd && node.op != Op::kOr &&
      node.op != Op::kIn) {
    return false;
  }
  for (size_t a = 1; a < node.args.size(); ++a) {
    if (MayFail(*node.args[a])) return true;
  }
  return false;
}

}  // namespace

Result<Datum> EvaluateNode(const BoundNode& node, const EvalInput& input) {
  switch (node.op) {
    case Op::kConstant: return Datum{node.constant, true};
    case Op::kColumn: return Datum{input.slots[static_cast<size_t>(node.slot)], false, input.row_offset};
    case Op::kLambdaVariable: return Datum{input.variables[static_cast<size_t>(node.slot)], false, 0};
    case Op::kUuid: return EvalUuid(node, input);
    case Op::kRand: case Op::kRandn: return EvalRandom(node, input);
    case Op::kTransform: case Op::kFilter: case Op::kExists: case Op::kForall: case Op::kAggregateArray:
    case Op::kZipWith: case Op::kArraySortWith:
      return EvalHigherOrderFunction(node, input);
    case Op::kLambda:
      return Status::Error(errors::kInternalError, "a lambda function is evaluated by its higher-order function");
    case Op::kAggregate:
      return Status::Error(errors::kNotImplemented,
                           fmt::format("the aggregate function {} cannot be evaluated row by row; use it in an aggregation", node.name));
    default: break;
  }
  std::vector<Datum> args;
  if (EvaluatesLazily(node)) {
    SLUICE_ASSIGN_OR_RETURN(args, EvaluateLazily(node, input));
  } else {
    args.reserve(node.args.size());
    for (const BoundPtr& a : node.args) {
      SLUICE_ASSIGN_OR_RETURN(Datum d, EvaluateNode(*a, input));
      args.push_back(std::move(d));
    }
  }
  // Most kernels read their inputs through offset-aware readers; the few that index columns
  // directly get windows copied to offset 0.
  bool offset_aware = node.op != Op::kCast && node.op != Op::kConcatWs && node.op != Op::kHash && node.op != Op::kSize &&
                      node.op != Op::kElementAt && node.op != Op::kSubscript && node.op != Op::kXxHash64;
  if (!offset_aware) {
    for (Datum& d : args) {
      if (!d.scalar && d.offset != 0) d = Datum{Materialize(d, input.num_rows), false, 0};
    }
  }
  // A node whose inputs are all constants yields a constant (folding missed only non-deterministic
  // inputs such as current_timestamp()).
  int64_t rows = input.num_rows;
  bool all_scalar = !args.empty();
  for (const Datum& d : args) all_scalar = all_scalar && d.scalar;
  if (all_scalar) rows = 1;
  Result<Datum> result = [&]() -> Result<Datum> {
    switch (node.op) {
      case Op::kCast: return EvalCast(node, args[0]);
      case Op::kAdd: case Op::kSubtract: case Op::kMultiply: case Op::kDivide: case Op::kRemainder:
      case Op::kIntDivide: case Op::kNegate: case Op::kDateAddDays: case Op::kPmod:
        return EvalArithmetic(node, args, rows);
      case Op::kTimestampAddInterval: return EvalTimestampAddInterval(node, args[0], rows);
      case Op::kEq: case Op::kNullSafeEq: case Op::kNe: case Op::kLt: case Op::kLe: case Op::kGt: case Op::kGe:
        return EvalComparison(node, args, rows);
      case Op::kAnd: case Op::kOr: case Op::kNot: case Op::kIsNull: case Op::kIsNotNull: case Op::kIsTrue:
      case Op::kIsFalse:
        return EvalLogic(node, args, rows);
      case Op::kIn: return EvalIn(node, args, rows);
      case Op::kCase: case Op::kCoalesce: case Op::kGreatest: case Op::kLeast: return EvalChoice(node, args, rows);
      case Op::kLike: case Op::kRLike: case Op::kLower: case Op::kUpper: case Op::kLength: case Op::kTrim:
      case Op::kLTrim: case Op::kRTrim: case Op::kSubstring: case Op::kConcat: case Op::kConcatWs:
      case Op::kReplace: case Op::kSplit: case Op::kRegexpExtract: case Op::kStartsWith: case Op::kEndsWith:
      case Op::kContains: case Op::kRegexpReplace: case Op::kRegexpCount: case Op::kSplitPart: case Op::kLocate:
      case Op::kLPad: case Op::kRPad: case Op::kRepeat: case Op::kReverse: case Op::kInitCap: case Op::kLeft:
      case Op::kRight: case Op::kTranslate: case Op::kHex: case Op::kUnhex: case Op::kBase64: case Op::kUnbase64:
      case Op::kEncode: case Op::kDecode: case Op::kConv: case Op::kElt: case Op::kRegexpExtractAll:
      case Op::kLevenshtein: case Op::kSoundex: case Op::kAscii: case Op::kChr: case Op::kSpace: case Op::kBin:
      case Op::kByteLength:
        return EvalStringFunction(node, args, rows);
      case Op::kAbs: case Op::kRound: case Op::kFloor: case Op::kCeil: case Op::kSqrt: case Op::kPow:
      case Op::kMathUnary: case Op::kLog: case Op::kFactorial: case Op::kWidthBucket:
        return EvalMathFunction(node, args, rows);
      case Op::kFormatString: return EvalFormatString(node, args, rows);
      case Op::kToNumber: case Op::kTryToNumber: case Op::kToChar: return EvalNumberFormat(node, args, rows);
      case Op::kHash: case Op::kXxHash64: case Op::kMd5: case Op::kSha2: case Op::kCrc32: return EvalHashFunction(node, args, rows);
      case Op::kCurrentTimestamp: case Op::kCurrentDate: case Op::kToTimestamp: case Op::kToDate:
      case Op::kDateTrunc: case Op::kDateFormat: case Op::kYear: case Op::kMonth: case Op::kDay: case Op::kHour:
      case Op::kQuarter: case Op::kDayOfWeek: case Op::kDayOfYear: case Op::kWeekOfYear: case Op::kMinute:
      case Op::kSecond: case Op::kUnixTimestamp: case Op::kFromUnixtime: case Op::kDateDiff: case Op::kAddMonths:
      case Op::kLastDay: case Op::kMakeDate: case Op::kTimestampFromUnits: case Op::kUnixUnits: case Op::kUnixDate:
      case Op::kDateFromUnixDate: case Op::kMonthsBetween: case Op::kNextDay: case Op::kMakeTimestamp:
      case Op::kSecondWithFraction: case Op::kTimestampAddUnits: case Op::kTimestampDiffUnits:
      case Op::kTimeWindow: case Op::kWindowTime:
        return EvalDatetimeFunction(node, args, args.empty() ? 1 : rows, input.now_micros);
      case Op::kGetJsonObject: case Op::kFromJson: case Op::kToJson: case Op::kSchemaOfJson: case Op::kJsonArrayLength:
      case Op::kJsonObjectKeys:
        return EvalJsonFunction(node, args, rows);
      case Op::kFlatten: case Op::kGet: case Op::kArrayInsert: case Op::kSequence: case Op::kArraysZip:
      case Op::kMapFromArrays: case Op::kMapConcat:
        return EvalCollectionFunction(node, args, rows);
      case Op::kSize: case Op::kElementAt: case Op::kSubscript: case Op::kGetField:
      case Op::kStruct: case Op::kArray: case Op::kMap: case Op::kMapKeys: case Op::kMapValues:
      case Op::kArrayContains: case Op::kArrayPosition: case Op::kArrayMax: case Op::kArrayMin: case Op::kSlice:
      case Op::kArrayDistinct: case Op::kSortArray: case Op::kArrayJoin: case Op::kArrayAppend:
      case Op::kArrayPrepend: case Op::kArrayCompact:
        return EvalNestedFunction(node, args, rows);
      default:
        return Status::Error(errors::kInternalError, "unknown bound operator");
    }
  }();
  if (!result.ok()) return result;
  result->scalar = all_scalar || args.empty();
  return result;
}

Result<ColumnPtr> EvaluateConstant(const BoundNode& node) {
  EvalInput input{{}, 1, NowMicros()};
  SLUICE_ASSIGN_OR_RETURN(Datum d, EvaluateNode(node, input));
  return Materialize(d, 1);
}

namespace {

Datum EvalTimestampAddInterval(const BoundNode& node, const Datum& arg, int64_t rows) {
  auto out = NewFixedColumn(node.type, rows);
  FixedReader<int64_t> in = ReadFixed<int64_t>(arg);
  int64_t* values = reinterpret_cast<int64_t*>(out->data.data());
  for (int64_t i = 0; i < rows; ++i) {
    int64_t t = in[i];
    if (node.interval_months != 0) {
      int64_t days = FloorDiv(t, kMicrosPerDay);
      int64_t time_of_day = t - days * kMicrosPerDay;
      t = AddMonths(days, node.interval_months) * kMicrosPerDay + time_of_day;
    }
    values[i] = static_cast<int64_t>(static_cast<uint64_t>(t) + static_cast<uint64_t>(node.interval_micros));
  }
  std::vector<Datum> inputs{arg};
  SetValidity(out.get(), CombinedValidity(inputs, rows));
  return Datum{out, false};
}

// Writes the rows (0-based) where a boolean datum is valid and true to the front of `rows`,
// which grows to at least `count` entries and never shrinks (it is reused), and returns how many.
int64_t SelectRows(const Datum& d, int64_t count, std::vector<int64_t>* rows) {
  if (static_cast<int64_t>(rows->size()) < count + 1) rows->resize(static_cast<size_t>(count) + 1);
  int64_t* dst = rows->data();
  if (d.scalar) {
    if (!d.column->IsValid(0) || d.column->Value<uint8_t>(0) == 0) return 0;
    for (int64_t i = 0; i < count; ++i) dst[i] = i;
    return count;
  }
  const uint8_t* values = ValuesOf<uint8_t>(d);
  const uint8_t* valid = d.column->validity.empty() ? nullptr : d.column->validity.data() + d.offset;
  int64_t n = 0;
  if (valid == nullptr) {
    for (int64_t i = 0; i < count; ++i) {
      dst[n] = i;
      n += values[i] != 0;
    }
  } else {
    for (int64_t i = 0; i < count; ++i) {
      dst[n] = i;
      n += (values[i] & valid[i]) != 0;
    }
  }
  return n;
}

// The conjuncts of a tree of ANDs, left to right.
void Conjuncts(const BoundPtr& node, std::vector<const BoundNode*>* out) {
  if (node->op == Op::kAnd) {
    Conjuncts(node->args[0], out);
    Conjuncts(node->args[1], out);
  } else {
    out->push_back(node.get());
  }
}

Status CheckSchema(const BoundRoot& root, const RecordBatch& batch) {
  if (batch.schema().get() != root.input_schema.get() && !batch.schema()->Equals(*root.input_schema)) {
    return Status::Error(errors::kInvalidArgument,
                         fmt::format("the expression was bound to {} but the batch is {}", root.input_schema->ToString(),
                                     batch.schema()->ToString()));
  }
  return Status::OK();
}

std::vector<ColumnPtr> ResolveSlots(const BoundRoot& root, const RecordBatch& batch) {
  std::vector<ColumnPtr> slots;
  slots.reserve(root.slot_paths.size());
  for (const std::vector<int>& path : root.slot_paths) {
    ColumnPtr c = batch.column(path[0]);
    for (size_t i = 1; i < path.size(); ++i) c = c->children[static_cast<size_t>(path[i])];
    slots.push_back(std::move(c));
  }
  return slots;
}

// Below this fraction of surviving rows, later conjuncts run only on the survivors (gathered);
// above it, gathering costs more than evaluating every row.
constexpr double kGatherFraction = 0.25;

}  // namespace

namespace {

// Large batches are evaluated in chunks of this many rows, read in place from the input columns:
// every intermediate column then stays small enough to live in the cache and to be recycled by
// the allocator, instead of costing fresh (page-faulting) memory per operator.
constexpr int64_t kChunkRows = 64 * 1024;

// Appends to `out` the rows of the chunk [start, start + rows) that pass every conjunct.
// `selected` and `positions` are scratch space kept by the caller across chunks.
Status FilterChunk(const std::vector<const BoundNode*>& conjuncts, const std::vector<ColumnPtr>& slots, int64_t start,
                   int64_t rows, int64_t now, int64_t first_row, std::vector<int64_t>* selected,
                   std::vector<int64_t>* positions, std::vector<int64_t>* out) {
  EvalInput input{slots, rows, now, start, {}, first_row};
  SLUICE_ASSIGN_OR_RETURN(Datum first, EvaluateNode(*conjuncts[0], input));
  int64_t count = SelectRows(first, rows, selected);
  int64_t* sel = selected->data();
  for (size_t c = 1; c < conjuncts.size() && count > 0; ++c) {
    const BoundNode& conjunct = *conjuncts[c];
    int64_t n = 0;
    // A conjunct that may fail must not see the rows earlier ones dropped (Spark's AND stops at
    // FALSE); one that cannot is evaluated on every row unless few survive.
    const bool gather = count < rows && (MayFail(conjunct) || static_cast<double>(count) < kGatherFraction * static_cast<double>(rows));
    if (gather) {
      // Short-circuit: evaluate on the surviving rows only, then map back to chunk rows.
      std::vector<ColumnPtr> gathered_slots, gathered_variables;
      std::vector<int64_t> gathered_numbers;
      const EvalInput sub = GatherInput(conjunct, input, std::vector<int64_t>(sel, sel + count), &gathered_slots,
                                        &gathered_variables, &gathered_numbers);
      SLUICE_ASSIGN_OR_RETURN(Datum d, EvaluateNode(conjunct, sub));
      int64_t kept = SelectRows(d, count, positions);
      for (int64_t k = 0; k < kept; ++k) sel[n++] = sel[(*positions)[static_cast<size_t>(k)]];
    } else {
      SLUICE_ASSIGN_OR_RETURN(Datum d, EvaluateNode(conjunct, input));
      if (d.scalar) {
        n = d.column->IsValid(0) && d.column->Value<uint8_t>(0) != 0 ? count : 0;
      } else {
        const uint8_t* values = ValuesOf<uint8_t>(d);
        const uint8_t* valid = d.column->validity.empty() ? nullptr : d.column->validity.data() + d.offset;
        for (int64_t k = 0; k < count; ++k) {
          int64_t row = sel[k];
          sel[n] = row;
          n += (values[row] != 0) & (valid == nullptr || valid[row] != 0);
        }
      }
    }
    count = n;
  }
  size_t old_size = out->size();
  out->resize(old_size + static_cast<size_t>(count));
  int64_t* dst = out->data() + old_size;
  for (int64_t k = 0; k < count; ++k) dst[k] = sel[k] + start;
  return Status::OK();
}

}  // namespace

Result<ColumnPtr> BoundExpression::Evaluate(const RecordBatch& batch) const { return Evaluate(batch, NowMicros()); }

Result<ColumnPtr> BoundExpression::Evaluate(const RecordBatch& batch, int64_t now, int64_t first_row) const {
  SLUICE_RETURN_IF_ERROR(CheckSchema(*root_, batch));
  std::vector<ColumnPtr> slots = ResolveSlots(*root_, batch);
  int64_t total = batch.num_rows();
  std::vector<ColumnPtr> chunks;
  // No rows: nothing is evaluated (so nothing fails), as in Spark.
  if (total == 0) return MakeNullColumn(root_->node->type, 0);
  for (int64_t start = 0; start < total; start += kChunkRows) {
    int64_t rows = std::min(kChunkRows, total - start);
    EvalInput input{slots, rows, now, start, {}, first_row};
    SLUICE_ASSIGN_OR_RETURN(Datum d, EvaluateNode(*root_->node, input));
    chunks.push_back(Materialize(d, rows));
  }
  if (chunks.size() == 1) return chunks[0];
  return Concatenate(chunks);
}

bool IsSlidingWindow(const BoundExpression& key) {
  const BoundNode& node = *key.root().node;
  if (node.op != Op::kTimeWindow) return false;
  const auto& window = static_cast<const TimeWindow&>(*node.state);
  return window.slide != window.duration;
}

Result<SlidingWindows> SlidingWindowsOf(const BoundExpression& key, const RecordBatch& batch, int64_t now_micros) {
  const BoundRoot& root = key.root();
  const auto& window = static_cast<const TimeWindow&>(*root.node->state);
  const BoundExpression time(std::make_shared<BoundRoot>(BoundRoot{root.node->args[0], root.input_schema, root.slot_paths}));
  SLUICE_ASSIGN_OR_RETURN(ColumnPtr times, time.Evaluate(batch, now_micros));
  const TypePtr& time_type = root.node->type->field(0).type;
  Int64Builder starts(time_type), ends(time_type);
  SlidingWindows out;
  // The latest window holding a time starts at time - (time - offset) mod slide, the earlier ones
  // a slide apart as long as they still hold it: `into` + j * slide < duration.
  for (int64_t row = 0; row < batch.num_rows(); ++row) {
    if (times->IsNull(row)) continue;
    const int64_t t = times->Value<int64_t>(row);
    int64_t into = (t - window.start) % window.slide;
    if (into < 0) into += window.slide;
    for (int64_t j = (window.duration - 1 - into) / window.slide; j >= 0; --j) {
      const int64_t start = t - into - j * window.slide;
      out.rows.push_back(row);
      starts.Append(start);
      ends.Append(start + window.duration);
    }
  }
  auto windows = std::make_shared<Column>();
  windows->type = root.node->type;
  windows->length = static_cast<int64_t>(out.rows.size());
  windows->children = {starts.Finish(), ends.Finish()};
  out.windows = std::move(windows);
  return out;
}

Result<std::vector<int64_t>> BoundExpression::Filter(const RecordBatch& batch) const {
  std::vector<int64_t> rows;
  // Reserving touches no memory; only the pages the selection fills are ever used.
  rows.reserve(static_cast<size_t>(batch.num_rows()));
  SLUICE_RETURN_IF_ERROR(Filter(batch, &rows));
  return rows;
}

Status BoundExpression::Filter(const RecordBatch& batch, std::vector<int64_t>* rows) const {
  return Filter(batch, NowMicros(), rows);
}

Status BoundExpression::Filter(const RecordBatch& batch, int64_t now, std::vector<int64_t>* rows,
                               int64_t first_row) const {
  rows->clear();
  if (result_type()->id() != TypeId::kBoolean) {
    return Status::Error(errors::kDatatypeMismatch,
                         fmt::format("a filter must be boolean, but {} is {}", ToSql(), result_type()->ToString()));
  }
  SLUICE_RETURN_IF_ERROR(CheckSchema(*root_, batch));
  std::vector<ColumnPtr> slots = ResolveSlots(*root_, batch);
  std::vector<const BoundNode*> conjuncts;
  Conjuncts(root_->node, &conjuncts);
  int64_t total = batch.num_rows();
  std::vector<int64_t> scratch, positions;
  for (int64_t start = 0; start < total; start += kChunkRows) {
    int64_t chunk_rows = std::min(kChunkRows, total - start);
    SLUICE_RETURN_IF_ERROR(FilterChunk(conjuncts, slots, start, chunk_rows, now, first_row, &scratch, &positions, rows));
  }
  return Status::OK();
}

}  // namespace sluice::expr
