// format_string / printf: each row's pattern applied to its values by Java's Formatter rules;
// to_number, try_to_number and to_char: decimals read and written by a number format.
#include <vector>

#include "expr/java_format.h"
#include "expr/kernel_util.h"
#include "expr/kernels.h"
#include "expr/number_format.h"
#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"

namespace sluice::expr {
namespace {

// Row `row` of `value` as the formatter takes it; `text` holds a decimal's text.
FormatArgument ArgumentAt(const Datum& value, int64_t row, std::string* text) {
  FormatArgument a;
  if (!ReadValidity(value)(row)) return a;
  const Column& column = *value.column;
  const int64_t at = value.scalar ? 0 : row + value.offset;
  switch (column.type->id()) {
    case TypeId::kBoolean:
      a.kind = FormatArgument::Kind::kBoolean;
      a.boolean = column.Value<uint8_t>(at) != 0;
      return a;
    case TypeId::kByte: a.integral = column.Value<int8_t>(at), a.bits = 8; break;
    case TypeId::kShort: a.integral = column.Value<int16_t>(at), a.bits = 16; break;
    case TypeId::kInteger: case TypeId::kDate: a.integral = column.Value<int32_t>(at), a.bits = 32; break;
    case TypeId::kLong: case TypeId::kTimestamp: case TypeId::kTimestampNtz:
      a.integral = column.Value<int64_t>(at);
      break;
    case TypeId::kFloat:
      a.kind = FormatArgument::Kind::kFloating;
      a.floating = column.Value<float>(at);
      a.is_float = true;
      return a;
    case TypeId::kDouble:
      a.kind = FormatArgument::Kind::kFloating;
      a.floating = column.Value<double>(at);
      return a;
    case TypeId::kDecimal:
      *text = DecimalText(column.Value<int128_t>(at), column.type->scale());
      a.kind = FormatArgument::Kind::kText;
      a.text = *text;
      return a;
    default:  // string
      a.kind = FormatArgument::Kind::kText;
      a.text = column.View(at);
      return a;
  }
  a.kind = FormatArgument::Kind::kIntegral;
  return a;
}

}  // namespace

Result<Datum> EvalFormatString(const BoundNode& node, const std::vector<Datum>& args, int64_t rows) {
  StringReader pattern = ReadString(args[0]);
  ValidityReader pattern_valid = ReadValidity(args[0]);
  StringWriter writer(node.type, rows);
  std::vector<FormatArgument> arguments(args.size() - 1);
  std::vector<std::string> texts(args.size() - 1);
  std::string out;
  for (int64_t row = 0; row < rows; ++row) {
    if (!pattern_valid(row)) {
      writer.AppendNull();
      continue;
    }
    for (size_t i = 1; i < args.size(); ++i) arguments[i - 1] = ArgumentAt(args[i], row, &texts[i - 1]);
    out.clear();
    Status formatted = AppendJavaFormat(pattern[row], arguments, &out);
    if (!formatted.ok()) return formatted.WithContext(node.name);
    writer.Append(out);
  }
  return Datum{writer.Finish(), false};
}

Result<Datum> EvalNumberFormat(const BoundNode& node, const std::vector<Datum>& args, int64_t rows) {
  const auto& format = static_cast<const NumberFormat&>(*node.state);
  if (node.op == Op::kToChar) {
    const int scale = args[0].column->type->scale();
    ValidityReader valid = ReadValidity(args[0]);
    FixedReader<int128_t> value = ReadFixed<int128_t>(args[0]);
    StringWriter writer(node.type, rows);
    std::string text;
    for (int64_t row = 0; row < rows; ++row) {
      if (!valid(row)) {
        writer.AppendNull();
        continue;
      }
      format.Format(value[row], scale, &text);
      writer.Append(text);
    }
    return Datum{writer.Finish(), false};
  }
  StringReader text = ReadString(args[0]);
  const bool fails = node.op == Op::kToNumber;  // try_to_number gives NULL for a mismatch
  return FixedKernel<int128_t>(node, {args[0]}, rows, [&](int64_t row, int128_t* value) -> Result<bool> {
    switch (format.Parse(text[row], value)) {
      case NumberFormat::Parsed::kValue: return true;
      case NumberFormat::Parsed::kMismatch:
        if (!fails) return false;
        return Status::Error(errors::kInvalidFormat, "MISMATCH_INPUT: the input '" + std::string(text[row]) +
                                                         "' does not match the number format '" + format.text() + "'");
      case NumberFormat::Parsed::kTooManyDigits:  // an error even for try_to_number, as Spark
        return Status::Error(errors::kNumericValueOutOfRange,
                             "'" + std::string(text[row]) + "' read by the number format '" + format.text() +
                                 "' cannot be represented as " + node.type->ToString());
    }
    return false;
  });
}

}  // namespace sluice::expr
