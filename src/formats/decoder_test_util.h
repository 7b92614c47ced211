// Shared by the decoder tests: encoded values as the binary column a Decoder takes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sluice/core/builder.h"

namespace sluice::formats::testing {

// One row per value; std::nullopt is a null row (a Kafka tombstone).
inline ColumnPtr BinaryColumn(const std::vector<std::optional<std::string>>& values) {
  BinaryBuilder builder(DataType::Binary());
  for (const std::optional<std::string>& value : values) {
    if (value) {
      builder.Append(*value);
    } else {
      builder.AppendNull();
    }
  }
  return builder.Finish();
}

}  // namespace sluice::formats::testing
