// DuckDB, an independent reader, reads the parquet and csv files the file sinks write with the
// values sluice wrote (rows compared in the canonical JSON form of tests/tools/duckdb_query.mjs).
#include <gtest/gtest.h>

#include "connectors/files/file_formats_testing.h"
#include "parquet/duckdb_testing.h"
#include "sluice/connectors/files/formats.h"
#include "testing/temp_dir.h"

namespace sluice::connectors {

using engine::OutputMode;
using engine::SinkContext;

namespace {

using parquet::testing::CanonicalRows;
using parquet::testing::DuckDbRows;

class FileFormatsDuckDbTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(parquet::testing::RequireDuckDb()); }

  void Write(const std::string& format, const BatchPtr& batch) {
    auto sink = file_testing::FileFormatsRegistry().MakeSink(format, {{"path", dir_.Join(format)}});
    ASSERT_TRUE(sink.ok()) << sink.status().ToString();
    ASSERT_TRUE((*sink)->Open(SinkContext{"query", OutputMode::kAppend, LocalFileSystem()}).ok());
    Status written = AddBatch(**sink, 0, *batch);
    ASSERT_TRUE(written.ok()) << written.ToString();
  }

  std::vector<std::string> DuckDb(const std::string& query) {
    bool ok = false;
    std::string error;
    auto rows = DuckDbRows({"SET threads=1", "SET TimeZone='UTC'", query}, &ok, &error);
    EXPECT_TRUE(ok) << error;
    return rows;
  }

  sluice::testing::TempDir dir_{"sluice-files-duckdb"};
};

TEST_F(FileFormatsDuckDbTest, DuckDbReadsTheParquetWeWriteWithEqualValues) {
  BatchPtr batch = file_testing::EveryTypeBatch();
  ASSERT_NO_FATAL_FAILURE(Write("parquet", batch));
  EXPECT_EQ(DuckDb("SELECT * FROM read_parquet('" + dir_.Join("parquet") + "/*.parquet')"), CanonicalRows(*batch));
}

TEST_F(FileFormatsDuckDbTest, DuckDbReadsTheCsvWeWriteWithEqualValues) {
  BatchPtr every = file_testing::EveryTypeBatch();
  // CSV holds the scalar columns (nested ones are JSON text, which DuckDB reads as text).
  std::vector<Field> fields(every->schema()->fields().begin(), every->schema()->fields().begin() + 13);
  std::vector<ColumnPtr> columns(every->columns().begin(), every->columns().begin() + 13);
  BatchPtr batch = RecordBatch::Make(DataType::Struct(fields).value(), columns, every->num_rows()).value();
  ASSERT_NO_FATAL_FAILURE(Write("csv", batch));
  std::string columns_clause =
      "{'flag': 'BOOLEAN', 'tiny': 'TINYINT', 'small': 'SMALLINT', 'count': 'INTEGER', 'id': 'BIGINT', "
      "'ratio': 'FLOAT', 'score': 'DOUBLE', 'price': 'DECIMAL(38,10)', 'name': 'VARCHAR', 'blob': 'VARCHAR', "
      "'day': 'DATE', 'at': 'TIMESTAMPTZ', 'local': 'TIMESTAMP'}";
  std::string query = "SELECT * REPLACE (from_base64(blob) AS blob) FROM read_csv('" + dir_.Join("csv") +
                      "/*.csv', columns=" + columns_clause +
                      ", header=false, delim=',', quote='\"', escape='\\', nullstr='', allow_quoted_nulls=false, "
                      "auto_detect=false)";
  EXPECT_EQ(DuckDb(query), CanonicalRows(*batch));
}

}  // namespace
}  // namespace sluice::connectors
