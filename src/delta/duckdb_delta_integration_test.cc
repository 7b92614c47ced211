// Independence check: a table written by sluice is replayed by a separate reader
// (tests/tools/delta_replay.mjs, which reads the checkpoint with DuckDB and the JSON commits on
// its own) and its live files are read with DuckDB's read_parquet. The rows must be exactly the
// ones sluice wrote.
#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "delta/delta_replay_testing.h"
#include "parquet/duckdb_testing.h"
#include "sluice/core/builder.h"
#include "sluice/core/utf8.h"
#include "sluice/delta/writer.h"
#include "sluice/expr/expression.h"
#include "testing/temp_dir.h"

namespace sluice::delta {
namespace {

using parquet::testing::DuckDbRows;
using parquet::testing::RequireDuckDb;
using parquet::testing::ShellQuote;
using parquet::testing::ToolsDir;
using testing::FileList;
using testing::Replay;

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

std::string Hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

// Any bytes at all, made strings the way a flow makes them (CAST of binary), leave the table
// readable by an independent reader: the log parses and DuckDB reads every value back.
TEST(DuckDbDeltaIntegrationTest, AnyBytesCastToStringLeaveTheTableReadable) {
  RequireDuckDb();
  sluice::testing::TempDir dir("delta-duckdb-bytes");
  std::string table = dir.Join("bytes");
  auto fs = LocalFileSystem();
  std::mt19937 random(7);
  TypePtr input = ParseTypeString("struct<id:bigint,raw:binary>").value();
  expr::Expression cast = expr::Expression::Parse("CAST(raw AS STRING)").value();
  expr::BoundExpression bound = expr::Bind(cast, input).value();
  std::vector<std::string> expected;
  int64_t id = 0;
  for (int commit = 0; commit < 5; ++commit) {
    Int64Builder ids(DataType::Long());
    BinaryBuilder raws(DataType::Binary());
    for (int row = 0; row < 40; ++row) {
      std::string bytes(random() % 40, '\0');
      for (char& c : bytes) c = static_cast<char>(random() % 256);
      if (row == 0) bytes = "\xFF\x41";
      ids.Append(id);
      raws.Append(bytes);
      expected.push_back("[\"" + std::to_string(id) + "\",\"" + Hex(MakeValidUtf8(bytes)) + "\"]");
      ++id;
    }
    BatchPtr raw = RecordBatch::Make(input, {ids.Finish(), raws.Finish()}, 40).value();
    ColumnPtr names = bound.Evaluate(*raw).value();
    TypePtr schema = ParseTypeString("struct<id:bigint,name:string>").value();
    BatchPtr batch = RecordBatch::Make(schema, {raw->column(0), names}, 40).value();
    auto written = WriteTable(fs, table, {batch});
    ASSERT_TRUE(written.ok()) << written.status().ToString();
  }
  std::string replay = Replay(table);
  ASSERT_NE(replay.find("\"version\":4"), std::string::npos) << replay;
  bool ok = false;
  std::string error;
  std::vector<std::string> rows =
      DuckDbRows({"SELECT id, hex(name) FROM read_parquet(" + FileList(replay) + ") ORDER BY id"}, &ok, &error);
  ASSERT_TRUE(ok) << error;
  EXPECT_EQ(rows, expected);
}

}  // namespace
}  // namespace sluice::delta
