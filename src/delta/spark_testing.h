// Test support: Apache Spark with Delta Lake as an independent reader of the tables sluice writes
// (tests/tools/delta_spark.py; Spark, the Delta jars and their virtual environment installed by
// scripts/install-test-tools.sh). For tests only.
#pragma once

#include <gtest/gtest.h>
#include <simdjson.h>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "delta/delta_replay_testing.h"
#include "parquet/duckdb_testing.h"
#include "testing/temp_dir.h"

namespace sluice::delta::testing {

// What Spark gave for each command of delta_spark.py (`read:PATH`, `sql:QUERY`, ...): its rows,
// each a compact JSON array of the values, sorted; a command that failed fails the calling test.
inline std::map<std::string, std::vector<std::string>> RunSpark(const std::vector<std::string>& commands) {
  using parquet::testing::ShellQuote;
  using parquet::testing::ToolsDir;
  const std::string python = ToolsDir() + "/delta-spark/venv/bin/python";
  EXPECT_TRUE(std::ifstream(python).good()) << "Spark with Delta is not installed for the tests: run scripts/install-test-tools.sh";
  std::string command = ShellQuote(python) + " " + ShellQuote(ToolsDir() + "/delta_spark.py");
  for (const std::string& c : commands) command += " " + ShellQuote(c);
  // Spark's log goes to a file: stdout holds the JSON alone.
  sluice::testing::TempDir log;
  const std::string out = CommandOutput("(" + command + " 2> " + ShellQuote(log.Join("spark.log")) + ")");
  std::map<std::string, std::vector<std::string>> result;
  simdjson::dom::parser parser;
  simdjson::dom::object object;
  EXPECT_EQ(parser.parse(simdjson::padded_string(out)).get(object), simdjson::SUCCESS) << out.substr(0, 2000);
  for (auto [key, value] : object) {
    simdjson::dom::array lines;
    if (value.get(lines) != simdjson::SUCCESS) {
      ADD_FAILURE() << key << ": " << simdjson::minify(value);
      continue;
    }
    std::vector<std::string>& rows = result[std::string(key)];
    for (simdjson::dom::element line : lines) rows.emplace_back(line.get_string().value());
  }
  return result;
}

}  // namespace sluice::delta::testing
