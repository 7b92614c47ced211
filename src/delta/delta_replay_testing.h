// Test support: a Delta table's live files as an independent reader sees them
// (tests/tools/delta_replay.mjs, which reads the checkpoint with DuckDB and the JSON commits on
// its own), for DuckDB to read with read_parquet; and the output of such tools. For tests only.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "parquet/duckdb_testing.h"

namespace sluice::delta::testing {

// The output of `command` run by the shell (stderr too); the calling test fails unless it exits 0.
inline std::string CommandOutput(const std::string& command) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  std::string out;
  char buffer[4096];
  size_t n;
  while (pipe != nullptr && (n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) out.append(buffer, n);
  EXPECT_EQ(pipe != nullptr ? pclose(pipe) : -1, 0) << out;
  return out;
}

// The output of delta_replay.mjs: the version and the live files.
inline std::string Replay(const std::string& table) {
  using parquet::testing::ShellQuote;
  return CommandOutput("cd " + ShellQuote(parquet::testing::ToolsDir()) + " && node delta_replay.mjs " +
                       ShellQuote(table));
}

// The "files" of the replay as a DuckDB list literal.
inline std::string FileList(const std::string& replay) {
  size_t start = replay.find('[');
  size_t end = replay.rfind(']');
  std::string list = replay.substr(start, end - start + 1);
  for (char& c : list) {
    if (c == '"') c = '\'';
  }
  return list;
}

}  // namespace sluice::delta::testing
