// The bound (resolved, typed) expression tree and its evaluator. Internal to expr.
//
// Binding turns operators into Ops over operands of agreed types: implicit casts are explicit
// kCast nodes, BETWEEN / IF / NULLIF / simple CASE are rewritten into the primitive ops, and
// constant sub-trees are folded into kConstant nodes holding a one-row column.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "sluice/core/column.h"
#include "sluice/core/status.h"
#include "expr/ast.h"

namespace sluice::expr {

enum class Op : uint8_t {
  kConstant,
  kColumn,
  kCast,
  // arithmetic (operands already of the result's type, except kIntDivide: long or decimal)
  kAdd, kSubtract, kMultiply, kDivide, kRemainder, kIntDivide, kNegate,
  kPmod,  // the remainder made positive (pmod), typed as %
  kTimestampAddInterval,  // args: timestamp, constant interval (months, micros)
  kDateAddDays,           // args: date, integer days
  // comparison (operands of one common type)
  kEq, kNullSafeEq, kNe, kLt, kLe, kGt, kGe,
  // logic and predicates
  kAnd, kOr, kNot, kIsNull, kIsNotNull, kIsTrue, kIsFalse,  // kIsTrue/kIsFalse honour `negated`
  kIn,     // args: value, candidates...; honours `negated`
  kLike,   // args: value, pattern, escape (constant pattern compiled at bind); `negated`, ilike
  kRLike,  // args: value, pattern; `negated`
  kCase,   // args: (when, then)*, else
  kCoalesce, kGreatest, kLeast,
  // strings
  kLower, kUpper, kLength, kTrim, kLTrim, kRTrim, kSubstring, kConcat, kConcatWs, kReplace, kSplit,
  kRegexpExtract, kRegexpExtractAll, kStartsWith, kEndsWith, kContains, kRegexpReplace, kRegexpCount, kSplitPart,
  kLocate,  // args: substring, string, start position (1-based)
  kLPad, kRPad, kRepeat, kReverse, kInitCap, kLeft, kRight, kTranslate,
  kHex, kUnhex, kBase64, kUnbase64, kLevenshtein, kSoundex, kAscii, kChr, kSpace, kBin,
  kByteLength,  // bit_length or octet_length: the node's name
  kEncode, kDecode,  // args: value, charset (a constant, checked when bound)
  kConv,             // args: number (text), from base, to base
  kElt,              // args: n, strings...
  kFormatString,     // args: pattern, values... (Java's Formatter; java_format.h)
  kToNumber, kTryToNumber,  // args: text, format; state: its NumberFormat (number_format.h)
  kToChar,                  // args: decimal, format; state: its NumberFormat
  // math
  kAbs, kRound, kFloor, kCeil, kSqrt, kPow,
  kMathUnary,  // a function of one double to a double, named by `name` (exp, ln, sin, ...)
  kLog,        // args: base, x
  kFactorial,
  kWidthBucket,  // args: value, min, max (doubles), buckets (bigint)
  // hashing
  kHash, kXxHash64, kMd5, kSha2, kCrc32,
  kUuid,  // slot: a salt telling apart the calls of one expression
  kRand, kRandn,  // slot as kUuid's; args: the seed (a bigint constant), or none
  // date and time
  kCurrentTimestamp, kCurrentDate, kToTimestamp, kToDate, kDateTrunc, kDateFormat, kYear, kMonth, kDay,
  kQuarter, kDayOfWeek, kDayOfYear, kWeekOfYear, kHour, kMinute, kSecond, kUnixTimestamp, kFromUnixtime,
  kDateDiff, kAddMonths, kLastDay, kMakeDate,
  kTimestampFromUnits,  // timestamp_seconds|millis|micros: the unit is the node's name
  kUnixUnits,           // unix_seconds|millis|micros of a timestamp: the unit is the node's name
  kUnixDate, kDateFromUnixDate,
  kMonthsBetween,       // args: end, start, round off (a constant boolean)
  kNextDay,             // args: date, day of week (text)
  kMakeTimestamp,       // args: year, month, day, hour, minute, seconds (decimal(16,6))
  kSecondWithFraction,  // date_part('SECOND', ts): decimal(8,6)
  kTimeWindow,          // window(ts, ...): args: ts; state: its TimeWindow
  kWindowTime,          // window_time(w): args: a window struct
  kTimestampAddUnits,   // timestampadd: args: quantity (bigint), timestamp; the unit is the node's name
  kTimestampDiffUnits,  // timestampdiff: args: start, end; the unit is the node's name
  // JSON and nested values
  kGetJsonObject, kFromJson, kToJson, kSchemaOfJson, kJsonArrayLength, kJsonObjectKeys,
  kSize, kElementAt, kSubscript, kGetField, kStruct, kArray,
  kMap,  // args: key, value, key, value, ...
  kMapKeys, kMapValues, kArrayContains, kArrayPosition, kArrayMax, kArrayMin, kSlice, kArrayDistinct,
  kSortArray,  // args: array, ascending, NULLs first (constant booleans)
  kFlatten, kGet, kArrayInsert, kSequence, kArraysZip, kMapFromArrays, kMapConcat,
  kArrayJoin, kArrayAppend, kArrayPrepend, kArrayCompact,
  kAggregate,  // count, sum, ...: typed but not evaluable here
  // lambda functions and the higher-order functions that call them
  kLambda,          // args: {body}; slot: the id of its first parameter (the others follow); name: the parameters
  kLambdaVariable,  // a lambda parameter: slot is its id, an index into EvalInput::variables
  kTransform, kFilter, kExists, kForall,  // args: array, lambda (element[, index])
  kAggregateArray,  // aggregate(array, zero, merge[, finish]): args: array, zero, lambda (acc, element)[, lambda (acc)]
  kZipWith,         // args: array, array, lambda (left, right)
  kArraySortWith,   // args: array, lambda (left, right) -> int
};

// How an op meets a value it cannot compute (Spark's EvalMode), fixed at bind time:
//   kLegacy  Spark's non-ANSI semantics: the row becomes null (integer overflow wraps as Java's);
//   kAnsi    the evaluation fails with Spark's error class naming the value (CAST_INVALID_INPUT,
//            ARITHMETIC_OVERFLOW, DIVIDE_BY_ZERO, ...); casts and parsing are strict;
//   kTry     strict as kAnsi, but the row becomes null instead of failing (try_cast, try_add ...).
enum class EvalMode : uint8_t { kLegacy, kAnsi, kTry };

struct BoundNode;
using BoundPtr = std::shared_ptr<const BoundNode>;

// State compiled once at bind time for one node (a regex, a LIKE matcher).
struct CompiledState {
  virtual ~CompiledState() = default;
};

// window(ts, duration[, slide[, start]]): the tumbling window of each time, in microseconds.
struct TimeWindow final : CompiledState {
  int64_t duration = 0;
  int64_t slide = 0;  // between window starts: the duration (tumbling) or less (sliding)
  int64_t start = 0;  // the windows' offset from the epoch, |start| < slide
};

struct BoundNode {
  Op op = Op::kConstant;
  TypePtr type;
  bool nullable = true;
  std::vector<BoundPtr> args;
  ColumnPtr constant;           // kConstant: one row
  int slot = -1;                // kColumn: index into the evaluator's input slots; kGetField: field index;
                                // kLambdaVariable: its id; kLambda: its first parameter's id
  char escape = '\\';           // kLike
  std::string name;             // kColumn: the resolved path as SQL; kAggregate/kCall: function name
  bool negated = false;
  EvalMode mode = EvalMode::kLegacy;
  bool ilike = false;
  int32_t interval_months = 0;  // kTimestampAddInterval
  int64_t interval_micros = 0;
  int parameters = 0;           // kLambda: how many parameters it names (ids slot, slot + 1, ...)
  std::shared_ptr<const CompiledState> state;
};

// What BoundExpression holds: the tree, the schema it was bound to, and the field path of each
// input slot (top-level column index, then struct field indexes).
struct BoundRoot {
  BoundPtr node;
  TypePtr input_schema;
  std::vector<std::vector<int>> slot_paths;
};

// A value during evaluation: rows [offset, offset + rows) of a column (an input column read in
// chunks has a non-zero offset; computed columns start at 0), or a one-row constant.
struct Datum {
  ColumnPtr column;
  bool scalar = false;
  int64_t offset = 0;
  bool IsValid(int64_t row) const { return column->IsValid(scalar ? 0 : row + offset); }
};

// What an expression reads from a batch: one column per slot, resolved by field path.
struct EvalInput {
  std::span<const ColumnPtr> slots;
  int64_t num_rows;
  int64_t now_micros;      // current_timestamp() for this evaluation
  int64_t row_offset = 0;  // the first slot row to read
  // The values of the lambda parameters in scope, by id (kLambdaVariable): num_rows rows from 0.
  std::span<const ColumnPtr> variables = {};
  // The number within its batch of the row at position 0 (the rows of the batch's earlier pieces
  // come before it), and for an input gathered from scattered rows each row's number instead:
  // what uuid() draws from, so that no two rows of a batch get one value (RowNumber).
  int64_t first_row = 0;
  std::span<const int64_t> row_numbers = {};
};

// The number within its batch of the input's row `i` (see EvalInput::first_row).
inline int64_t RowNumber(const EvalInput& input, int64_t i) {
  return input.row_numbers.empty() ? input.first_row + input.row_offset + i
                                   : input.row_numbers[static_cast<size_t>(i)];
}

Result<Datum> EvaluateNode(const BoundNode& node, const EvalInput& input);
// The input restricted to `rows` (ascending, in [0, input.num_rows)): the slots and lambda
// variables `node` reads, taken at those rows into `slots` and `variables`, and the rows' numbers
// into `numbers` (which the returned input points into); the others null.
EvalInput GatherInput(const BoundNode& node, const EvalInput& input, const std::vector<int64_t>& rows,
                      std::vector<ColumnPtr>* slots, std::vector<ColumnPtr>* variables,
                      std::vector<int64_t>* numbers);
// The datum as a column of exactly `num_rows` rows from offset 0 (broadcasting a scalar,
// copying an offset window).
ColumnPtr Materialize(const Datum& datum, int64_t num_rows);
// Folds a constant node: evaluates it over zero slots and one row.
Result<ColumnPtr> EvaluateConstant(const BoundNode& node);

// SQL of a bound tree (implicit casts shown).
std::string PrintBound(const BoundNode& node);

// Cast kernel shared by explicit and implicit casts: every value of `from` converted to `to`.
// A value that cannot be converted is null (kLegacy, kTry) or fails the cast (kAnsi:
// CAST_INVALID_INPUT for text, CAST_OVERFLOW for numbers, NUMERIC_VALUE_OUT_OF_RANGE for
// decimals); kAnsi and kTry parse strictly and check ranges where kLegacy truncates and wraps.
// The pair must have passed CanCast with the same `ansi`.
Result<ColumnPtr> CastColumn(const Column& from, const TypePtr& to, EvalMode mode);
// Whether CAST(from AS to) is allowed: ANSI refuses integral -> binary and date -> numeric or
// boolean, which non-ANSI Spark allows.
bool CanCast(const DataType& from, const DataType& to, bool ansi);
// Whether a strict cast from `from` to `to` can fail on some value (false for casts to string and
// widenings: integral to a wider integral, floating or decimal type, float to double, date and
// timestamp to each other).
bool CastCanFail(const DataType& from, const DataType& to);

// Whether evaluating the node (or any node below it) can fail on some input: conditional ops
// (CASE, coalesce, AND, OR) then evaluate such an argument only on the rows that reach it, as
// Spark's row-at-a-time evaluation does.
bool MayFail(const BoundNode& node);

// The error of an ANSI-mode op that cannot compute a row: "<what> in <the op's SQL>; use
// <try_function> to get NULL instead, or set sql.ansi: false", of class `error_class`. `what`
// names the offending values.
Status AnsiError(std::string_view error_class, const BoundNode& node, std::string_view what,
                 std::string_view try_function);

// Builds a one-row column holding a literal.
ColumnPtr LiteralColumn(const LiteralValue& value, const TypePtr& type);

}  // namespace sluice::expr
