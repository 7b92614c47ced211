#include "delta/file_pruning.h"

#include <algorithm>
#include <charconv>
#include <limits>

#include <fmt/format.h>
#include <simdjson.h>

#include "delta/column_mapping.h"
#include "sluice/core/builder.h"
#include "sluice/core/iso_datetime.h"
#include "sluice/delta/scan.h"

namespace sluice::delta {
namespace {

constexpr int64_t kMicrosPerMilli = 1000;
// The string bounds writers keep are cut to this many characters (Delta's default).
constexpr int64_t kStringBoundLength = 32;
// What sluice appends to a cut maximum (U+10FFFF) so that it still bounds the values.
constexpr std::string_view kCutMarker = "\xF4\x8F\xBF\xBF";

int64_t CodePoints(std::string_view text) {
  return std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; });
}

// "~" and "/" inside a JSON pointer token.
std::string PointerToken(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// The field a dot path names (case-insensitively) and the JSON pointer of its statistics (by the
// physical names).
std::optional<std::pair<Field, std::string>> ResolvePath(const TypePtr& schema, const std::vector<std::string>& path) {
  const DataType* type = schema.get();
  std::string pointer;
  std::optional<Field> field;
  for (const std::string& part : path) {
    if (type == nullptr || type->id() != TypeId::kStruct) return std::nullopt;
    int index = type->FieldIndexIgnoreCase(part);
    if (index < 0) return std::nullopt;
    field = type->field(index);
    pointer += "/" + PointerToken(PhysicalName(*field));
    type = field->type.get();
  }
  if (!field) return std::nullopt;
  return std::make_pair(*field, pointer);
}

// Whether a comparison's bounds on a column of `type` can be trusted for the minimum/maximum.
void UsableBounds(TypeId type, bool* min, bool* max) {
  switch (type) {
    case TypeId::kByte:
    case TypeId::kShort:
    case TypeId::kInteger:
    case TypeId::kLong:
    case TypeId::kDate:
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz:
    case TypeId::kString:
      return;
    case TypeId::kFloat:
    case TypeId::kDouble:
      *max = false;
      return;
    default:
      *min = *max = false;
  }
}

// A one-row column of `type` holding a bound as the statistics JSON wrote it; nullopt when the
// bound is absent, of an unexpected JSON type, or not trustworthy.
std::optional<ColumnPtr> BoundColumn(simdjson::dom::element value, const TypePtr& type, bool is_max) {
  std::string text;
  switch (type->id()) {
    case TypeId::kByte:
    case TypeId::kShort:
    case TypeId::kInteger:
    case TypeId::kLong: {
      int64_t number = 0;
      if (value.get_int64().get(number) != simdjson::SUCCESS) return std::nullopt;
      text = std::to_string(number);
      break;
    }
    case TypeId::kFloat:
    case TypeId::kDouble: {
      double number = 0;
      if (value.get_double().get(number) != simdjson::SUCCESS) return std::nullopt;
      text = fmt::format("{}", number);
      break;
    }
    case TypeId::kString: {
      std::string_view bound;
      if (value.get_string().get(bound) != simdjson::SUCCESS) return std::nullopt;
      if (is_max && CodePoints(bound) >= kStringBoundLength && !bound.ends_with(kCutMarker)) return std::nullopt;
      text = bound;
      break;
    }
    case TypeId::kDate:
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: {
      std::string_view bound;
      if (value.get_string().get(bound) != simdjson::SUCCESS) return std::nullopt;
      text = bound;
      break;
    }
    default:
      return std::nullopt;
  }
  Result<ColumnPtr> column = PartitionValueColumn(text, type, 1);
  if (!column.ok()) return std::nullopt;
  if (is_max && (type->id() == TypeId::kTimestamp || type->id() == TypeId::kTimestampNtz)) {
    // Statistics keep milliseconds; a writer that truncated would understate the maximum.
    Int64Builder widened(type);
    widened.Append((*column)->Value<int64_t>(0) + kMicrosPerMilli);
    return widened.Finish();
  }
  return *column;
}

// Whether `predicate` (over struct<bound>) can hold for the bound at `pointer` of `stats`: true
// when the bound is missing or unusable, or the predicate is TRUE or NULL for it.
bool BoundAllows(simdjson::dom::element stats, const std::string& pointer, const TypePtr& type, const TypePtr& schema,
                 bool is_max, const expr::BoundExpression& predicate) {
  simdjson::dom::element value;
  if (stats.at_pointer(pointer).get(value) != simdjson::SUCCESS) return true;
  std::optional<ColumnPtr> column = BoundColumn(value, type, is_max);
  if (!column) return true;
  Result<BatchPtr> batch = RecordBatch::Make(schema, {*column}, 1);
  if (!batch.ok()) return true;
  Result<ColumnPtr> result = predicate.Evaluate(**batch);
  if (!result.ok()) return true;
  return (*result)->IsNull(0) || (*result)->Value<uint8_t>(0) != 0;
}

}  // namespace

Result<FilePruner> FilePruner::Make(const expr::Expression& filter, const TypePtr& table_schema,
                                    const std::vector<std::string>& partition_columns) {
  SLUICE_RETURN_IF_ERROR(expr::BindPredicate(filter, table_schema).status());
  auto partition_field = [&](const std::string& name) -> std::optional<Field> {
    int index = table_schema->FieldIndexIgnoreCase(name);
    if (index < 0) return std::nullopt;
    const Field& field = table_schema->field(index);
    if (std::find(partition_columns.begin(), partition_columns.end(), field.name) == partition_columns.end()) {
      return std::nullopt;
    }
    return field;
  };

  FilePruner pruner;
  for (const expr::Expression& conjunct : filter.Conjuncts()) {
    std::vector<std::string> columns = conjunct.ReferencedColumns();
    if (columns.empty()) continue;
    if (std::all_of(columns.begin(), columns.end(), [&](const std::string& c) { return partition_field(c).has_value(); })) {
      std::vector<Field> fields;
      for (const std::string& name : columns) {
        Field field = *partition_field(name);
        if (std::none_of(fields.begin(), fields.end(), [&](const Field& f) { return f.name == field.name; })) {
          fields.push_back(std::move(field));
        }
      }
      SLUICE_ASSIGN_OR_RETURN(TypePtr schema, DataType::Struct(fields));
      Result<expr::BoundExpression> predicate = expr::BindPredicate(conjunct, schema);
      if (!predicate.ok()) continue;
      std::vector<std::string> physical_names;
      for (const Field& field : fields) physical_names.push_back(PhysicalName(field));
      pruner.partition_tests_.push_back({std::move(fields), std::move(physical_names), schema, std::move(predicate).value()});
      continue;
    }

    std::optional<expr::ColumnComparison> comparison = conjunct.AsColumnComparison();
    if (!comparison) continue;
    std::optional<std::pair<Field, std::string>> resolved = ResolvePath(table_schema, comparison->path);
    if (!resolved) continue;
    const TypePtr& type = resolved->first.type;
    bool use_min = comparison->op == "=" || comparison->op == "<" || comparison->op == "<=";
    bool use_max = comparison->op == "=" || comparison->op == ">" || comparison->op == ">=";
    UsableBounds(type->id(), &use_min, &use_max);
    if (!use_min && !use_max) continue;
    BoundsTest test;
    test.stats_pointer = resolved->second;
    test.type = type;
    SLUICE_ASSIGN_OR_RETURN(test.schema, DataType::Struct({Field{"bound", type, true}}));
    auto bind = [&](std::string_view op) -> std::optional<expr::BoundExpression> {
      Result<expr::Expression> parsed = expr::Expression::Parse(fmt::format("`bound` {} {}", op, comparison->constant.ToSql()));
      if (!parsed.ok()) return std::nullopt;
      Result<expr::BoundExpression> bound = expr::BindPredicate(*parsed, test.schema);
      if (!bound.ok()) return std::nullopt;
      return std::move(bound).value();
    };
    if (use_min) test.on_min = bind(comparison->op == "=" ? "<=" : comparison->op);
    if (use_max) test.on_max = bind(comparison->op == "=" ? ">=" : comparison->op);
    if (test.on_min || test.on_max) pruner.bounds_tests_.push_back(std::move(test));
  }
  return pruner;
}

bool FilePruner::PassesPartitionTest(const PartitionTest& test, const AddFile& file) const {
  std::vector<ColumnPtr> columns;
  for (size_t i = 0; i < test.fields.size(); ++i) {
    const Field& field = test.fields[i];
    auto value = file.partition_values.find(test.physical_names[i]);
    std::optional<std::string> text = value == file.partition_values.end() ? std::nullopt : value->second;
    Result<ColumnPtr> column = PartitionValueColumn(text, field.type, 1);
    // A value that does not parse is the scan's error to report, when it reads the file.
    if (!column.ok()) return true;
    columns.push_back(std::move(column).value());
  }
  Result<BatchPtr> batch = RecordBatch::Make(test.schema, std::move(columns), 1);
  if (!batch.ok()) return true;
  Result<ColumnPtr> result = test.predicate.Evaluate(**batch);
  if (!result.ok()) return true;
  return (*result)->IsValid(0) && (*result)->Value<uint8_t>(0) != 0;
}

bool FilePruner::MayMatch(const AddFile& file) const {
  for (const PartitionTest& test : partition_tests_) {
    if (!PassesPartitionTest(test, file)) return false;
  }
  if (bounds_tests_.empty() || !file.stats) return true;
  simdjson::dom::parser parser;
  simdjson::dom::element stats;
  if (parser.parse(*file.stats).get(stats) != simdjson::SUCCESS) return true;
  for (const BoundsTest& test : bounds_tests_) {
    if (test.on_min && !BoundAllows(stats, "/minValues" + test.stats_pointer, test.type, test.schema, false, *test.on_min)) {
      return false;
    }
    if (test.on_max && !BoundAllows(stats, "/maxValues" + test.stats_pointer, test.type, test.schema, true, *test.on_max)) {
      return false;
    }
  }
  return true;
}

std::optional<KeyValues> KeyValues::Of(const Column& column) {
  KeyValues values;
  const TypeId id = column.type->id();
  values.dates_ = id == TypeId::kDate;
  values.numeric_ = values.dates_ || id == TypeId::kByte || id == TypeId::kShort || id == TypeId::kInteger ||
                    id == TypeId::kLong;
  if (!values.numeric_ && id != TypeId::kString) return std::nullopt;
  for (int64_t row = 0; row < column.length; ++row) {
    if (column.IsNull(row)) continue;
    if (!values.numeric_) {
      values.texts_.emplace_back(column.View(row));
      continue;
    }
    switch (id) {
      case TypeId::kByte: values.numbers_.push_back(column.Value<int8_t>(row)); break;
      case TypeId::kShort: values.numbers_.push_back(column.Value<int16_t>(row)); break;
      case TypeId::kInteger:
      case TypeId::kDate: values.numbers_.push_back(column.Value<int32_t>(row)); break;
      default: values.numbers_.push_back(column.Value<int64_t>(row)); break;
    }
  }
  std::sort(values.numbers_.begin(), values.numbers_.end());
  values.numbers_.erase(std::unique(values.numbers_.begin(), values.numbers_.end()), values.numbers_.end());
  std::sort(values.texts_.begin(), values.texts_.end());
  values.texts_.erase(std::unique(values.texts_.begin(), values.texts_.end()), values.texts_.end());
  return values;
}

std::optional<int64_t> KeyValues::NumberOf(std::string_view text) const {
  if (dates_) {
    int32_t days = 0;
    if (!ParseIsoDate(text, &days)) return std::nullopt;
    return days;
  }
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

bool KeyValues::MayBeIn(const AddFile& file, const std::vector<std::string>& path) const {
  if (path.size() == 1) {
    auto partition = file.partition_values.find(path[0]);
    if (partition != file.partition_values.end()) {
      if (!partition->second) return false;  // a NULL partition: no key equals it
      if (!numeric_) return std::binary_search(texts_.begin(), texts_.end(), *partition->second);
      std::optional<int64_t> value = NumberOf(*partition->second);
      return !value || std::binary_search(numbers_.begin(), numbers_.end(), *value);
    }
  }
  if (!file.stats) return true;
  simdjson::dom::parser parser;
  simdjson::dom::element stats;
  if (parser.parse(*file.stats).get(stats) != simdjson::SUCCESS) return true;
  std::string pointer;
  for (const std::string& name : path) pointer += "/" + PointerToken(name);
  simdjson::dom::element min, max;
  const bool has_min = stats.at_pointer("/minValues" + pointer).get(min) == simdjson::SUCCESS;
  const bool has_max = stats.at_pointer("/maxValues" + pointer).get(max) == simdjson::SUCCESS;
  if (numeric_) {
    // Integer bounds are JSON numbers, date bounds "yyyy-MM-dd" strings; an unreadable one is none.
    auto bound = [&](bool has, simdjson::dom::element element, int64_t none) {
      int64_t number = 0;
      std::string_view text;
      if (!has) return none;
      if (!dates_) return element.get_int64().get(number) == simdjson::SUCCESS ? number : none;
      return element.get_string().get(text) == simdjson::SUCCESS ? NumberOf(text).value_or(none) : none;
    };
    const int64_t low = bound(has_min, min, std::numeric_limits<int64_t>::min());
    const int64_t high = bound(has_max, max, std::numeric_limits<int64_t>::max());
    auto first = std::lower_bound(numbers_.begin(), numbers_.end(), low);
    return first != numbers_.end() && *first <= high;
  }
  std::string_view low, high;
  if (has_min && min.get_string().get(low) != simdjson::SUCCESS) low = {};
  bool bounded = has_max && max.get_string().get(high) == simdjson::SUCCESS;
  // A maximum cut to 32 characters bounds the values only with the marker sluice appends.
  if (bounded && CodePoints(high) >= kStringBoundLength && !high.ends_with(kCutMarker)) bounded = false;
  auto first = std::lower_bound(texts_.begin(), texts_.end(), low);
  return first != texts_.end() && (!bounded || std::string_view(*first) <= high);
}

}  // namespace sluice::delta
