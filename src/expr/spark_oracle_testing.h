// For the differential tests against Spark (src/expr/spark_conformance_integration_test.cc,
// src/engine/aggregation_conformance_integration_test.cc): running an oracle script of
// tests/tools (pyspark in the tools' virtualenv), and a value as the oracles print it.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include "sluice/core/column.h"
#include "sluice/core/compute.h"
#include "sluice/core/json_text.h"
#include "testing/paths.h"

namespace sluice::expr {

// Runs tests/tools/`script` with the arguments `modes` ("legacy ansi"), `input` (JSON text) on its
// standard input; its JSON output, or nullopt after a test failure that shows the oracle's log.
inline std::optional<std::string> RunSparkOracle(const std::string& script, const std::string& input,
                                                 std::string_view modes) {
  namespace fs = std::filesystem;
  const std::string dir = fs::temp_directory_path() / fmt::format("sluice-{}-{}", script, getpid());
  fs::create_directories(dir);
  std::ofstream(dir + "/input.json") << input;
  const std::string command =
      fmt::format("cd '{}/tests/tools' && venv/bin/python '{}' {} < '{}/input.json' > '{}/output.json' 2> '{}/log'",
                  sluice::testing::SourceDir(), script, modes, dir, dir, dir);
  const int status = std::system(command.c_str());
  std::stringstream log, output;
  log << std::ifstream(dir + "/log").rdbuf();
  output << std::ifstream(dir + "/output.json").rdbuf();
  fs::remove_all(dir);
  if (status != 0) {
    ADD_FAILURE() << "the Spark oracle " << script << " failed (run scripts/install-test-tools.sh):\n" << log.str();
    return std::nullopt;
  }
  return output.str();
}

inline std::string RenderDouble(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char text[64];
  std::snprintf(text, sizeof(text), "%.17g", value);
  return text;
}

// The canonical text of tests/tools/spark_oracle.py (see its header) of one value.
inline std::string Render(const Column& column, int64_t row) {
  if (column.IsNull(row)) return "null";
  const DataType& type = *column.type;
  switch (type.id()) {
    case TypeId::kBoolean: return column.Value<uint8_t>(row) ? "true" : "false";
    case TypeId::kByte: return std::to_string(column.Value<int8_t>(row));
    case TypeId::kShort: return std::to_string(column.Value<int16_t>(row));
    case TypeId::kInteger: return std::to_string(column.Value<int32_t>(row));
    case TypeId::kLong: return std::to_string(column.Value<int64_t>(row));
    case TypeId::kFloat: return RenderDouble(column.Value<float>(row));
    case TypeId::kDouble: return RenderDouble(column.Value<double>(row));
    case TypeId::kDecimal: return DecimalText(column.Value<int128_t>(row), type.scale());
    case TypeId::kString: return JsonString(column.View(row));
    case TypeId::kBinary: {
      std::string hex = "x'";
      for (unsigned char c : column.View(row)) hex += fmt::format("{:02x}", c);
      return hex + "'";
    }
    case TypeId::kArray: {
      std::string out = "[";
      for (int64_t i = column.offsets[row]; i < column.offsets[row + 1]; ++i) {
        if (i > column.offsets[row]) out += ", ";
        out += Render(*column.children[0], i);
      }
      return out + "]";
    }
    case TypeId::kMap: {
      std::string out = "{";
      for (int64_t i = column.offsets[row]; i < column.offsets[row + 1]; ++i) {
        if (i > column.offsets[row]) out += ", ";
        out += Render(*column.children[0], i) + " -> " + Render(*column.children[1], i);
      }
      return out + "}";
    }
    case TypeId::kStruct: {
      std::string out = "{";
      for (size_t f = 0; f < column.children.size(); ++f) {
        if (f > 0) out += ", ";
        out += type.fields()[f].name + ": " + Render(*column.children[f], row);
      }
      return out + "}";
    }
    default: return "<unrendered " + type.ToString() + ">";
  }
}

}  // namespace sluice::expr
