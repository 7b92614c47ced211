// WriteBatch and the txnAppId / txnVersion options of the sinks a foreachBatch callback writes
// with: Delta tables and the parquet, csv and json file sinks.
#include "sluice/engine/batch_write.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "sluice/core/builder.h"
#include "sluice/core/error_classes.h"
#include "sluice/delta/scan.h"
#include "sluice/delta/snapshot.h"
#include "sluice/connectors/files/formats.h"
#include "connectors/delta/delta_formats_testing.h"
#include "testing/temp_dir.h"

namespace sluice::connectors {

using engine::ReadLimit;
using engine::SourceContext;

namespace {

BatchPtr Values(int64_t from, int64_t to) {
  Int64Builder values(DataType::Long());
  for (int64_t v = from; v < to; ++v) values.Append(v);
  TypePtr schema = DataType::Struct({{"value", DataType::Long()}}).value();
  return RecordBatch::Make(schema, {values.Finish()}, to - from).value();
}

std::vector<int64_t> DeltaValues(const std::string& table) {
  auto snapshot = delta::Snapshot::Load(LocalFileSystem(), table).value();
  auto scan = delta::TableScan::Open(snapshot, delta::ScanOptions{{"value"}}).value();
  std::vector<int64_t> values;
  while (BatchPtr batch = scan->Next().value()) {
    for (int64_t row = 0; row < batch->num_rows(); ++row) values.push_back(batch->column(0)->Value<int64_t>(row));
  }
  std::sort(values.begin(), values.end());
  return values;
}

// The rows of a file sink's directory, read back through the format's own source.
std::vector<std::string> FileRows(const std::string& format, const std::string& path) {
  std::map<std::string, std::string> options = {{"path", path}};
  if (format != "parquet") options["schema"] = "value long";
  auto source = delta_testing::DeltaFormatsRegistry().MakeSource(format, options);
  EXPECT_TRUE(source.ok()) << source.status().ToString();
  std::vector<std::string> rows;
  if (!source.ok()) return rows;
  SourceContext context;
  context.file_system = LocalFileSystem();
  EXPECT_TRUE((*source)->Open(context).ok());
  std::string start = (*source)->InitialOffset().value();
  std::string end = (*source)->LatestOffset(start, ReadLimit{true, std::nullopt}).value();
  std::vector<BatchPtr> batches = (*source)->Read(start, end).value();
  for (const BatchPtr& batch : batches) {
    for (int64_t row = 0; row < batch->num_rows(); ++row) {
      rows.push_back(batch->column(0)->IsNull(row) ? "null" : std::to_string(batch->column(0)->Value<int64_t>(row)));
    }
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

std::vector<int64_t> Range(int64_t from, int64_t to) {
  std::vector<int64_t> values;
  for (int64_t v = from; v < to; ++v) values.push_back(v);
  return values;
}

class BatchWriteTest : public ::testing::Test {
 protected:
  Status Write(const std::string& format, const std::string& path, int64_t from, int64_t to,
               std::map<std::string, std::string> extra = {}) {
    std::map<std::string, std::string> options = {{"path", path}, {"mode", "append"}};
    options.insert(extra.begin(), extra.end());
    return WriteBatch(delta_testing::DeltaFormatsRegistry(), format, options, *Values(from, to));
  }
  static std::map<std::string, std::string> Txn(const std::string& app, int64_t version) {
    return {{"txnAppId", app}, {"txnVersion", std::to_string(version)}};
  }

  sluice::testing::TempDir dir_;
};

// A version at or below the last one recorded for the app id is skipped; another app id, or a
// higher version, is written.
TEST_F(BatchWriteTest, ADeltaWriteIsSkippedUnlessItsVersionIsNew) {
  const std::string table = dir_.Join("t");
  ASSERT_TRUE(Write("delta", table, 0, 3, Txn("app", 5)).ok());
  ASSERT_TRUE(Write("delta", table, 0, 3, Txn("app", 5)).ok());
  ASSERT_TRUE(Write("delta", table, 10, 11, Txn("app", 4)).ok());
  EXPECT_EQ(DeltaValues(table), Range(0, 3)) << "the replay and the older version change nothing";
  ASSERT_TRUE(Write("delta", table, 3, 5, Txn("app", 6)).ok());
  ASSERT_TRUE(Write("delta", table, 5, 6, Txn("other", 0)).ok());
  ASSERT_TRUE(Write("delta", table, 6, 7).ok()) << "without transaction options every write appends";
  EXPECT_EQ(DeltaValues(table), Range(0, 7));
  auto snapshot = delta::Snapshot::Load(LocalFileSystem(), table).value();
  EXPECT_EQ(snapshot->transactions().at("app").version, 6);
  EXPECT_EQ(snapshot->transactions().at("other").version, 0);
}

TEST_F(BatchWriteTest, FileSinksRecordTheVersionsBesideTheirFiles) {
  for (const std::string format : {"parquet", "csv", "json"}) {
    SCOPED_TRACE(format);
    const std::string path = dir_.Join(format);
    ASSERT_TRUE(Write(format, path, 0, 2, Txn("app-1", 0)).ok());
    ASSERT_TRUE(Write(format, path, 0, 2, Txn("app-1", 0)).ok());
    ASSERT_TRUE(Write(format, path, 2, 3, Txn("app-1", 1)).ok());
    ASSERT_TRUE(Write(format, path, 3, 4, Txn("app_2", 7)).ok());
    ASSERT_TRUE(Write(format, path, 9, 10, Txn("app_2", 7)).ok());
    EXPECT_EQ(FileRows(format, path), (std::vector<std::string>{"0", "1", "2", "3"}));
    std::ifstream recorded(path + "/_sluice_transactions/app-1");
    std::string version((std::istreambuf_iterator<char>(recorded)), std::istreambuf_iterator<char>());
    EXPECT_EQ(version, "1");
  }
}

// A data file written but not recorded (a crash between the two) is written again under the same
// name by the replay: the rows are there once.
TEST_F(BatchWriteTest, AFileWrittenButNotRecordedIsReplacedByTheReplay) {
  const std::string path = dir_.Join("out");
  ASSERT_TRUE(Write("parquet", path, 0, 2, Txn("app", 3)).ok());
  std::filesystem::remove(path + "/_sluice_transactions/app");
  ASSERT_TRUE(Write("parquet", path, 0, 2, Txn("app", 3)).ok());
  EXPECT_EQ(FileRows("parquet", path), (std::vector<std::string>{"0", "1"}));
}

TEST_F(BatchWriteTest, TransactionOptionsAreCheckedBeforeAnythingIsWritten) {
  const std::string table = dir_.Join("t");
  struct Case {
    std::string format;
    std::map<std::string, std::string> options;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {"delta", {{"txnAppId", "a"}}, "go together"},
           {"delta", {{"txnVersion", "1"}}, "go together"},
           {"delta", {{"txnAppId", "a"}, {"txnVersion", "-1"}}, "txnVersion"},
           {"delta", {{"txnAppId", "a"}, {"txnVersion", "one"}}, "txnVersion"},
           {"delta", {{"txnAppId", ""}, {"txnVersion", "1"}}, "empty"},
           {"parquet", {{"txnAppId", "../escape"}, {"txnVersion", "1"}}, "txnAppId"},
           {"csv", {{"txnAppId", "a/b"}, {"txnVersion", "1"}}, "txnAppId"},
           {"json", {{"txnAppId", "a b"}, {"txnVersion", "1"}}, "txnAppId"},
           {"parquet", {{"txnAppName", "a"}, {"txnVersion", "1"}}, "txnAppName"},
       }) {
    SCOPED_TRACE(c.format + " " + c.message);
    Status status = Write(c.format, table, 0, 1, c.options);
    EXPECT_EQ(status.error_class(), errors::kInvalidOptions) << status.ToString();
    EXPECT_NE(status.message().find(c.message), std::string::npos) << status.ToString();
  }
  EXPECT_FALSE(std::filesystem::exists(table));
  EXPECT_FALSE(std::filesystem::exists(dir_.Join("escape")));
}

TEST_F(BatchWriteTest, ARecordedVersionThatIsNotANumberFailsTheWrite) {
  const std::string path = dir_.Join("out");
  ASSERT_TRUE(Write("json", path, 0, 1, Txn("app", 0)).ok());
  for (const char* garbage : {"", "x", "1 ", "99999999999999999999999"}) {
    SCOPED_TRACE(garbage);
    std::ofstream(path + "/_sluice_transactions/app", std::ios::trunc) << garbage;
    Status status = Write("json", path, 1, 2, Txn("app", 1));
    EXPECT_EQ(status.error_class(), errors::kFileSinkTransactionCorrupt) << status.ToString();
  }
  EXPECT_EQ(FileRows("json", path), (std::vector<std::string>{"0"}));
}

}  // namespace
}  // namespace sluice::connectors
