// Files written by pyarrow (Arrow's C++ Parquet writer, the one pandas, Polars and most Python
// tools use) with the options that change their layout: legacy list names, INT96 timestamps, data
// pages v2 under each codec with all-null columns, per-column encodings, decimals on fixed-length
// byte arrays, the legacy converted types alone, no Arrow schema. sluice must read each exactly as
// DuckDB, a third implementation, reads it. The cases are tests/tools/pyarrow_write.py's.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "parquet/duckdb_testing.h"
#include "sluice/parquet/reader.h"
#include "testing/temp_dir.h"

namespace sluice::parquet {
namespace {

using testing::CanonicalRows;
using testing::DuckDbRows;
using testing::ShellQuote;
using testing::ToolsDir;

// Writes `path` with pyarrow as `name` says; fails the test (not skips) without pyarrow.
void WriteWithPyarrow(const std::string& name, const std::string& path) {
  const std::string python = ToolsDir() + "/venv/bin/python";
  ASSERT_TRUE(std::ifstream(python).good()) << "pyarrow is not installed for the tests: run scripts/install-test-tools.sh";
  std::string command = ShellQuote(python) + " " + ShellQuote(ToolsDir() + "/pyarrow_write.py") + " " + name + " " +
                        ShellQuote(path) + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) out.append(buffer, n);
  ASSERT_EQ(pclose(pipe), 0) << out;
}

class PyarrowWritesSluiceReads : public ::testing::TestWithParam<std::string> {};

TEST_P(PyarrowWritesSluiceReads, AsDuckDbReadsIt) {
  testing::RequireDuckDb();
  sluice::testing::TempDir dir("sluice-pyarrow");
  const std::string path = dir.Join(GetParam() + ".parquet");
  WriteWithPyarrow(GetParam(), path);
  bool ok = false;
  std::string error;
  // INT96 carries no zone: sluice reads it as a UTC timestamp, as Spark does; DuckDB as a local
  // one, so its values are compared as UTC.
  const std::string select =
      GetParam() == "int96" ? R"(id, "at"::TIMESTAMPTZ AS "at", "local"::TIMESTAMPTZ AS "local", "day")" : "*";
  std::vector<std::string> expected =
      DuckDbRows({"SET threads=1", "SET TimeZone='UTC'", "SELECT " + select + " FROM '" + path + "'"}, &ok, &error);
  ASSERT_TRUE(ok) << error;
  auto reader = ParquetReader::Open(*LocalFileSystem(), path);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  auto batch = (*reader)->ReadAll();
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  std::vector<std::string> actual = CanonicalRows(**batch);
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) ASSERT_EQ(actual[i], expected[i]) << "row " << i;
}

INSTANTIATE_TEST_SUITE_P(Layouts, PyarrowWritesSluiceReads,
                         ::testing::Values("v2_snappy_all_null", "v2_zstd_all_null", "v2_gzip", "legacy_list_names",
                                           "compliant_nested", "int96", "timestamps_millis_v1", "delta_encodings",
                                           "byte_stream_split", "length_byte_array", "decimals", "decimals_v1",
                                           "dictionary_small_pages", "no_arrow_schema"));

}  // namespace
}  // namespace sluice::parquet
