// format_string / printf: each row's pattern applied to its values by Java's Formatter rules.
#include <vector>

#include "expr/java_format.h"
#include "expr/kernel_util.h"
#include "expr/kernels.h"
#include "sluice/core/compute.h"

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

}  // namespace sluice::expr
