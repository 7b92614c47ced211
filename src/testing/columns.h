// Small columns from literal values, for tests: nullopt is a null.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sluice/core/builder.h"

namespace sluice::testing {

// A fixed-width column of `type` whose C++ value type is T (uint8_t for boolean, int32_t for
// integer and date, int64_t for long and timestamps, int128_t for decimal...).
template <typename T>
ColumnPtr Fixed(TypePtr type, const std::vector<std::optional<T>>& values) {
  FixedWidthBuilder<T> builder(std::move(type));
  for (const auto& v : values) {
    if (v) {
      builder.Append(*v);
    } else {
      builder.AppendNull();
    }
  }
  return builder.Finish();
}

// A string (or, with `type`, binary) column.
inline ColumnPtr Strings(const std::vector<std::optional<std::string>>& values, TypePtr type = DataType::String()) {
  BinaryBuilder builder(std::move(type));
  for (const auto& v : values) {
    if (v) {
      builder.Append(*v);
    } else {
      builder.AppendNull();
    }
  }
  return builder.Finish();
}

}  // namespace sluice::testing
