#include "delta/type_widening.h"

#include <fmt/format.h>
#include <simdjson.h>

#include "delta/field_metadata.h"
#include "sluice/core/decimal.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/json_text.h"

namespace sluice::delta {
namespace {

// The integral types' order; 0 for others.
int IntegralRank(TypeId id) {
  switch (id) {
    case TypeId::kByte: return 1;
    case TypeId::kShort: return 2;
    case TypeId::kInteger: return 3;
    case TypeId::kLong: return 4;
    default: return 0;
  }
}

// The digits before the point a decimal needs to take an integral type's values: as the protocol
// widens them (Parquet stores byte, short and integer alike as 32-bit integers, which readers
// convert to decimal(10,0) and wider, longs to decimal(20,0) and wider), and as their values need.
int ProtocolDigits(TypeId id) { return id == TypeId::kLong ? 20 : 10; }
int ValueDigits(TypeId id) {
  switch (id) {
    case TypeId::kByte: return 3;
    case TypeId::kShort: return 5;
    case TypeId::kInteger: return 10;
    default: return 20;
  }
}

// IsTypeWidening, with `digits` the digits an integral type needs before a decimal point.
bool Widens(const DataType& from, const DataType& to, int (*digits)(TypeId)) {
  if (IsAutomaticTypeWidening(from, to)) return true;
  if (from.id() == TypeId::kDate) return to.id() == TypeId::kTimestampNtz;
  const int rank = IntegralRank(from.id());
  if (to.id() == TypeId::kDouble) return rank != 0 && rank < IntegralRank(TypeId::kLong);
  if (to.id() != TypeId::kDecimal) return false;
  if (rank != 0) return to.precision() - to.scale() >= digits(from.id());
  return from.id() == TypeId::kDecimal && !from.Equals(to) && to.scale() >= from.scale() &&
         to.precision() - to.scale() >= from.precision() - from.scale();
}

// A type as delta.typeChanges names it: its JSON form without the quotes of a primitive type.
std::string TypeChangeName(const DataType& type) {
  std::string json = type.ToJson();
  if (json.size() >= 2 && json.front() == '"') return json.substr(1, json.size() - 2);
  return json;
}

template <typename From, typename To, typename Convert>
ColumnPtr Converted(const Column& column, const TypePtr& target, Convert convert) {
  auto result = std::make_shared<Column>();
  result->type = target;
  result->length = column.length;
  result->null_count = column.null_count;
  result->validity = column.validity;
  result->data.resize(static_cast<size_t>(column.length) * sizeof(To));
  const From* in = column.values<From>();
  To* out = reinterpret_cast<To*>(result->data.data());
  for (int64_t row = 0; row < column.length; ++row) out[row] = convert(in[row]);
  return result;
}

template <typename From>
Result<ColumnPtr> WidenFrom(const Column& column, const TypePtr& target) {
  auto cast = [](auto to) { return [](From value) { return static_cast<decltype(to)>(value); }; };
  switch (target->id()) {
    case TypeId::kShort: return Converted<From, int16_t>(column, target, cast(int16_t{}));
    case TypeId::kInteger: return Converted<From, int32_t>(column, target, cast(int32_t{}));
    case TypeId::kLong: return Converted<From, int64_t>(column, target, cast(int64_t{}));
    case TypeId::kDouble: return Converted<From, double>(column, target, cast(double{}));
    case TypeId::kDecimal: {
      const int from_scale = column.type->id() == TypeId::kDecimal ? column.type->scale() : 0;
      const int128_t factor = Pow10(target->scale() - from_scale);
      return Converted<From, int128_t>(column, target,
                                       [factor](From value) { return static_cast<int128_t>(value) * factor; });
    }
    default:
      return Status::Error(errors::kInternalError, fmt::format("cannot widen {} to {}", column.type->ToString(),
                                                               target->ToString()));
  }
}

}  // namespace

bool IsAutomaticTypeWidening(const DataType& from, const DataType& to) {
  const int a = IntegralRank(from.id()), b = IntegralRank(to.id());
  if (a != 0 && b != 0) return a < b;
  return from.id() == TypeId::kFloat && to.id() == TypeId::kDouble;
}

bool IsTypeWidening(const DataType& from, const DataType& to) { return Widens(from, to, ProtocolDigits); }

bool ReadsWidened(const DataType& from, const DataType& to) { return Widens(from, to, ValueDigits); }

std::string WithTypeChanges(const std::string& metadata, const std::vector<TypeChange>& changes) {
  constexpr std::string_view kKey = "delta.typeChanges";
  // The changes recorded before, then these.
  std::string entries;
  simdjson::dom::parser parser;
  simdjson::dom::object object;
  simdjson::dom::array recorded;
  if (parser.parse(simdjson::padded_string(metadata)).get(object) == simdjson::SUCCESS &&
      object[kKey].get(recorded) == simdjson::SUCCESS) {
    for (simdjson::dom::element change : recorded) entries += (entries.empty() ? "" : ",") + simdjson::minify(change);
  }
  for (const TypeChange& change : changes) {
    if (!entries.empty()) entries += ",";
    entries += "{\"fromType\":" + JsonString(TypeChangeName(*change.from)) +
               ",\"toType\":" + JsonString(TypeChangeName(*change.to));
    if (!change.field_path.empty()) entries += ",\"fieldPath\":" + JsonString(change.field_path);
    entries += "}";
  }
  return EditedMetadata(metadata, [&](std::string_view key) { return key == kKey; },
                        JsonString(kKey) + ":[" + entries + "]");
}

Result<ColumnPtr> WidenColumn(const Column& column, const TypePtr& target) {
  if (!ReadsWidened(*column.type, *target)) {
    return Status::Error(errors::kInternalError, fmt::format("{} is not a widening of {}", target->ToString(),
                                                             column.type->ToString()));
  }
  switch (column.type->id()) {
    case TypeId::kByte: return WidenFrom<int8_t>(column, target);
    case TypeId::kShort: return WidenFrom<int16_t>(column, target);
    case TypeId::kInteger: return WidenFrom<int32_t>(column, target);
    case TypeId::kLong: return WidenFrom<int64_t>(column, target);
    case TypeId::kDecimal: return WidenFrom<int128_t>(column, target);
    case TypeId::kDate: {
      constexpr int64_t kMicrosPerDay = 86'400'000'000;
      return Converted<int32_t, int64_t>(column, target, [](int32_t days) { return days * kMicrosPerDay; });
    }
    default: return WidenFrom<float>(column, target);  // float -> double
  }
}

}  // namespace sluice::delta
