// Test support: delta-rs (the `deltalake` package in tests/tools/venv, installed by
// scripts/install-test-tools.sh) as an independent reader of Delta tables, through
// tests/tools/delta_rs_rows.py. For tests only.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "delta/delta_replay_testing.h"
#include "parquet/duckdb_testing.h"

namespace sluice::delta::testing {

// What delta_rs_rows.py prints for `arguments` (shell words, quoted by the caller: a table's
// path, or `--log` and one), a JSON text a line.
inline std::vector<std::string> DeltaRsLines(const std::string& arguments) {
  using parquet::testing::ShellQuote;
  using parquet::testing::ToolsDir;
  const std::string python = ToolsDir() + "/venv/bin/python";
  EXPECT_TRUE(std::ifstream(python).good()) << "deltalake is not installed for the tests: run scripts/install-test-tools.sh";
  const std::string out =
      CommandOutput(ShellQuote(python) + " " + ShellQuote(ToolsDir() + "/delta_rs_rows.py") + " " + arguments);
  std::vector<std::string> lines;
  for (size_t start = 0; start < out.size();) {
    const size_t end = std::min(out.find('\n', start), out.size());
    if (end > start) lines.push_back(out.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

}  // namespace sluice::delta::testing
