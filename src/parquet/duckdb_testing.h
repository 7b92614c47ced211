// Test support for comparing sluice with DuckDB (installed from npm into tests/tools by
// scripts/install-test-tools.sh): running DuckDB SQL through tests/tools/duckdb_query.mjs, and
// printing sluice values in the same canonical JSON form that script prints (see its header),
// so that rows compare as strings. For tests only; finds the tools through testing/paths.h.
#pragma once

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sluice/core/civil_date.h"
#include "sluice/core/compute.h"
#include "sluice/core/record_batch.h"
#include "testing/paths.h"

namespace sluice::parquet::testing {

inline std::string ToolsDir() { return sluice::testing::SourceDir() + "/tests/tools"; }

// Fails the calling test (not skips) when DuckDB is not installed.
inline void RequireDuckDb() {
  std::ifstream probe(ToolsDir() + "/node_modules/@duckdb/node-api/package.json");
  ASSERT_TRUE(probe.good()) << "DuckDB is not installed for the tests: run scripts/install-test-tools.sh";
}

inline std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

// Runs the statements in one DuckDB session; returns the last one's rows as canonical JSON
// lines. *ok is false (and the output holds stderr) when DuckDB failed.
inline std::vector<std::string> DuckDbRows(const std::vector<std::string>& statements, bool* ok,
                                           std::string* error = nullptr) {
  std::string command = "cd " + ShellQuote(ToolsDir()) + " && node duckdb_query.mjs";
  for (const auto& s : statements) command += " " + ShellQuote(s);
  const std::string err_file = std::string(::testing::TempDir()) + "/duckdb_stderr_" + std::to_string(getpid());
  command += " 2>" + ShellQuote(err_file);
  FILE* pipe = popen(command.c_str(), "r");
  std::string out;
  if (pipe) {
    std::array<char, 65536> buffer;
    size_t n;
    while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), n);
  }
  const int status = pipe ? pclose(pipe) : -1;
  *ok = status == 0;
  if (!*ok && error) {
    std::ifstream in(err_file);
    std::stringstream ss;
    ss << in.rdbuf();
    *error = ss.str();
  }
  std::remove(err_file.c_str());
  std::vector<std::string> rows;
  std::stringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) rows.push_back(line);
  return rows;
}

// A double as JavaScript's Number.prototype.toString prints it (shortest round trip).
inline std::string JsNumber(double v) {
  if (std::isnan(v)) return "\"NaN\"";
  if (std::isinf(v)) return v > 0 ? "\"Infinity\"" : "\"-Infinity\"";
  if (v == 0) return "0";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  std::string sci(buf, r.ptr);
  std::string sign;
  if (sci[0] == '-') {
    sign = "-";
    sci = sci.substr(1);
  }
  const size_t e = sci.find('e');
  std::string digits = sci.substr(0, e);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  const int exponent = std::stoi(sci.substr(e + 1));
  const int k = static_cast<int>(digits.size());
  const int n = exponent + 1;
  std::string out;
  if (k <= n && n <= 21) {
    out = digits + std::string(n - k, '0');
  } else if (0 < n && n <= 21) {
    out = digits.substr(0, n) + "." + digits.substr(n);
  } else if (-6 < n && n <= 0) {
    out = "0." + std::string(-n, '0') + digits;
  } else {
    out = digits.substr(0, 1) + (k > 1 ? "." + digits.substr(1) : "") + "e" + (n - 1 >= 0 ? "+" : "-") +
          std::to_string(std::abs(n - 1));
  }
  return sign + out;
}

inline std::string JsonString(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

inline std::string IsoDate(int64_t days) {
  const auto [y, m, d] = CivilFromDays(days);
  char buf[96];
  std::snprintf(buf, sizeof(buf), "%s%04lld-%02lld-%02lld", y < 0 ? "-" : "", static_cast<long long>(y < 0 ? -y : y),
                static_cast<long long>(m), static_cast<long long>(d));
  return buf;
}

inline std::string IsoTimestamp(int64_t micros, bool utc) {
  const int64_t per_day = 86400000000LL;
  int64_t days = micros / per_day;
  if (micros % per_day < 0) --days;
  int64_t rest = micros - days * per_day;
  char buf[128];
  std::snprintf(buf, sizeof(buf), "T%02lld:%02lld:%02lld.%06lld%s", static_cast<long long>(rest / 3600000000LL),
                static_cast<long long>(rest / 60000000LL % 60), static_cast<long long>(rest / 1000000LL % 60),
                static_cast<long long>(rest % 1000000LL), utc ? "Z" : "");
  return IsoDate(days) + buf;
}

inline std::string CanonicalJson(const Column& column, int64_t row) {
  if (column.IsNull(row)) return "null";
  const DataType& type = *column.type;
  switch (type.id()) {
    case TypeId::kBoolean:
      return column.Value<uint8_t>(row) ? "true" : "false";
    case TypeId::kByte:
      return std::to_string(column.Value<int8_t>(row));
    case TypeId::kShort:
      return std::to_string(column.Value<int16_t>(row));
    case TypeId::kInteger:
      return std::to_string(column.Value<int32_t>(row));
    case TypeId::kLong:
      return "\"" + std::to_string(column.Value<int64_t>(row)) + "\"";
    case TypeId::kFloat:
      return JsNumber(column.Value<float>(row));
    case TypeId::kDouble:
      return JsNumber(column.Value<double>(row));
    case TypeId::kDecimal:
      return "\"" + DecimalText(column.Value<int128_t>(row), type.scale()) + "\"";
    case TypeId::kString:
      return JsonString(column.View(row));
    case TypeId::kBinary:
      {
      std::string text = "\"";
      AppendBase64(column.View(row), &text);
      return text + "\"";
    }
    case TypeId::kDate:
      return "\"" + IsoDate(column.Value<int32_t>(row)) + "\"";
    case TypeId::kTimestamp:
      return "\"" + IsoTimestamp(column.Value<int64_t>(row), true) + "\"";
    case TypeId::kTimestampNtz:
      return "\"" + IsoTimestamp(column.Value<int64_t>(row), false) + "\"";
    case TypeId::kStruct: {
      std::string out = "{";
      for (int i = 0; i < type.num_fields(); ++i) {
        if (i) out += ",";
        out += JsonString(type.field(i).name) + ":" + CanonicalJson(*column.children[i], row);
      }
      return out + "}";
    }
    case TypeId::kArray: {
      std::string out = "[";
      for (int64_t i = column.offsets[row]; i < column.offsets[row + 1]; ++i) {
        if (i > column.offsets[row]) out += ",";
        out += CanonicalJson(*column.children[0], i);
      }
      return out + "]";
    }
    case TypeId::kMap: {
      std::string out = "[";
      for (int64_t i = column.offsets[row]; i < column.offsets[row + 1]; ++i) {
        if (i > column.offsets[row]) out += ",";
        out += "{\"key\":" + CanonicalJson(*column.children[0], i) +
               ",\"value\":" + CanonicalJson(*column.children[1], i) + "}";
      }
      return out + "]";
    }
  }
  return "?";
}

inline std::vector<std::string> CanonicalRows(const RecordBatch& batch) {
  std::vector<std::string> rows;
  for (int64_t r = 0; r < batch.num_rows(); ++r) {
    std::string row = "[";
    for (int c = 0; c < batch.num_columns(); ++c) {
      if (c) row += ",";
      row += CanonicalJson(*batch.column(c), r);
    }
    rows.push_back(row + "]");
  }
  return rows;
}

}  // namespace sluice::parquet::testing
