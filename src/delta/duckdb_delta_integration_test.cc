// Independence check: a table written by sluice is replayed by a separate reader
// (tests/tools/delta_replay.mjs, which reads the checkpoint with DuckDB and the JSON commits on
// its own) and its live files are read with DuckDB's read_parquet. The rows must be exactly the
// ones sluice wrote.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "parquet/duckdb_testing.h"
#include "sluice/core/builder.h"
#include "sluice/delta/writer.h"
#include "testing/temp_dir.h"

namespace sluice::delta {
namespace {

using parquet::testing::DuckDbRows;
using parquet::testing::RequireDuckDb;
using parquet::testing::ShellQuote;
using parquet::testing::ToolsDir;

BatchPtr Rows(int64_t first_id, int count, const std::string& day) {
  TypePtr schema = ParseTypeString("struct<id:bigint,name:string,day:string>").value();
  Int64Builder ids(DataType::Long());
  BinaryBuilder names(DataType::String());
  BinaryBuilder days(DataType::String());
  for (int i = 0; i < count; ++i) {
    ids.Append(first_id + i);
    names.Append("name \"" + std::to_string(first_id + i) + "\"");
    days.Append(day);
  }
  return RecordBatch::Make(schema, {ids.Finish(), names.Finish(), days.Finish()}, count).value();
}

// The output of delta_replay.mjs: the version and the live files.
std::string Replay(const std::string& table) {
  std::string command = "cd " + ShellQuote(ToolsDir()) + " && node delta_replay.mjs " + ShellQuote(table);
  FILE* pipe = popen(command.c_str(), "r");
  std::string out;
  char buffer[4096];
  size_t n;
  while (pipe != nullptr && (n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) out.append(buffer, n);
  EXPECT_EQ(pipe != nullptr ? pclose(pipe) : -1, 0) << out;
  return out;
}

// The "files" of the replay as a DuckDB list literal.
std::string FileList(const std::string& replay) {
  size_t start = replay.find('[');
  size_t end = replay.rfind(']');
  std::string list = replay.substr(start, end - start + 1);
  for (char& c : list) {
    if (c == '"') c = '\'';
  }
  return list;
}

TEST(DuckDbDeltaIntegrationTest, AnIndependentReplayReadsExactlyWhatWasWritten) {
  RequireDuckDb();
  sluice::testing::TempDir dir("delta-duckdb");
  std::string table = dir.Join("events");
  auto fs = LocalFileSystem();
  // 13 commits: a checkpoint at version 10, an overwrite at 5, two partitions.
  std::vector<std::string> expected;
  for (int version = 0; version <= 12; ++version) {
    WriteOptions options{.partition_columns = {"day"}};
    if (version == 5) {
      options.mode = WriteMode::kOverwrite;
      expected.clear();
    }
    std::string day = version % 2 ? "2026-01-01" : "2026-01-02";
    auto result = WriteTable(fs, table, {Rows(version * 10, 3, day)}, options);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    ASSERT_EQ(result->version, version);
    for (int i = 0; i < 3; ++i) {
      int64_t id = version * 10 + i;
      expected.push_back("[\"" + std::to_string(id) + "\",\"name \\\"" + std::to_string(id) + "\\\"\",\"" + day + "\"]");
    }
  }
  ASSERT_TRUE(fs->Exists(table + "/_delta_log/00000000000000000010.checkpoint.parquet").value());

  std::string replay = Replay(table);
  EXPECT_NE(replay.find("\"version\":12"), std::string::npos) << replay;
  bool ok = false;
  std::string error;
  std::vector<std::string> rows =
      DuckDbRows({"SELECT id, name, day FROM read_parquet(" + FileList(replay) +
                  ", hive_partitioning = true, hive_types = {'day': VARCHAR}) ORDER BY id"},
                 &ok, &error);
  ASSERT_TRUE(ok) << error;
  std::sort(expected.begin(), expected.end(), [](const std::string& a, const std::string& b) {
    return std::stoll(a.substr(2)) < std::stoll(b.substr(2));
  });
  EXPECT_EQ(rows, expected);
}

}  // namespace
}  // namespace sluice::delta
