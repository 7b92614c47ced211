// Test support: a table's rows as text, for tests that compare what a scan returns. For tests only.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/compute.h"
#include "sluice/delta/scan.h"

namespace sluice::delta::testing {

// A row as its values (FormatValue) joined by `separator`.
inline std::string JoinedValues(const RecordBatch& batch, int64_t row, std::string_view separator) {
  std::string text;
  for (int c = 0; c < batch.num_columns(); ++c) {
    if (c > 0) text += separator;
    text += FormatValue(*batch.column(c), row);
  }
  return text;
}

// A row as a compact JSON array of its values (AppendValueJson), as tests/tools/delta_spark.py
// renders Spark's rows.
inline std::string JsonRow(const RecordBatch& batch, int64_t row) {
  std::string line = "[";
  for (int c = 0; c < batch.num_columns(); ++c) {
    if (c > 0) line.push_back(',');
    AppendValueJson(*batch.column(c), row, &line);
  }
  return line + "]";
}

// Every row a scan of the snapshot returns, rendered by `line` (default: values joined by ","),
// sorted. The calling test fails on a scan error.
inline std::vector<std::string> ScannedLines(
    const SnapshotPtr& snapshot, ScanOptions options = {},
    const std::function<std::string(const RecordBatch&, int64_t)>& line = [](const RecordBatch& batch, int64_t row) {
      return JoinedValues(batch, row, ",");
    }) {
  std::vector<std::string> lines;
  auto scan = TableScan::Open(snapshot, std::move(options));
  EXPECT_TRUE(scan.ok()) << scan.status().ToString();
  while (scan.ok()) {
    auto next = (*scan)->Next();
    EXPECT_TRUE(next.ok()) << next.status().ToString();
    if (!next.ok() || *next == nullptr) break;
    for (int64_t row = 0; row < (*next)->num_rows(); ++row) lines.push_back(line(**next, row));
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

}  // namespace sluice::delta::testing
