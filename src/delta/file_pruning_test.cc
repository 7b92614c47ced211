// Scans with a filter: the rows that pass, and the files skipped by partition values and
// statistics without being read.
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "delta/file_pruning.h"

#include "sluice/core/builder.h"
#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "sluice/delta/scan.h"
#include "sluice/delta/writer.h"
#include "testing/temp_dir.h"

namespace sluice::delta {
namespace {

struct Row {
  int64_t id;
  std::string name;
  std::string region;
  int64_t ts;  // microseconds
  double x;
};

BatchPtr Rows(const std::vector<Row>& rows) {
  TypePtr schema = ParseTypeString("struct<id:bigint,name:string,region:string,ts:timestamp,x:double>").value();
  Int64Builder id(DataType::Long());
  BinaryBuilder name(DataType::String()), region(DataType::String());
  Int64Builder ts(DataType::Timestamp());
  DoubleBuilder x(DataType::Double());
  for (const Row& row : rows) {
    id.Append(row.id);
    name.Append(row.name);
    region.Append(row.region);
    ts.Append(row.ts);
    x.Append(row.x);
  }
  return RecordBatch::Make(schema, {id.Finish(), name.Finish(), region.Finish(), ts.Finish(), x.Finish()},
                           static_cast<int64_t>(rows.size()))
      .value();
}

// Ids [begin, end) named "n<id>" in `region`, at ts = id ms + 500 µs, x = id.
BatchPtr Range(int64_t begin, int64_t end, const std::string& region) {
  std::vector<Row> rows;
  for (int64_t id = begin; id < end; ++id) {
    rows.push_back({id, "n" + std::to_string(id), region, id * 1000 + 500, static_cast<double>(id)});
  }
  return Rows(rows);
}

class FilePruningTest : public ::testing::Test {
 protected:
  void Append(const BatchPtr& batch, std::vector<std::string> partition_columns = {}) {
    ASSERT_TRUE(WriteTable(fs_, table_, {batch}, {.partition_columns = std::move(partition_columns)}).ok());
  }

  struct Result {
    size_t files = 0;
    std::vector<std::string> rows;  // every column of each row, sorted
    std::string schema;
  };
  Result Scan(const std::string& filter, std::vector<std::string> columns = {}) {
    auto scan = TableScan::Open(Snapshot::Load(fs_, table_).value(), {.columns = std::move(columns), .filter = filter});
    EXPECT_TRUE(scan.ok()) << scan.status().ToString();
    if (!scan.ok()) return {};
    Result result{(*scan)->files().size(), {}, (*scan)->schema()->ToString()};
    while (true) {
      auto batch = (*scan)->Next();
      EXPECT_TRUE(batch.ok()) << batch.status().ToString();
      if (!batch.ok() || *batch == nullptr) break;
      for (int64_t r = 0; r < (*batch)->num_rows(); ++r) {
        std::string row;
        for (int c = 0; c < (*batch)->num_columns(); ++c) row += (c ? "|" : "") + FormatValue(*(*batch)->column(c), r);
        result.rows.push_back(row);
      }
    }
    std::sort(result.rows.begin(), result.rows.end());
    return result;
  }
  Status OpenError(const std::string& filter) {
    return TableScan::Open(Snapshot::Load(fs_, table_).value(), {.filter = filter}).status();
  }

  sluice::testing::TempDir dir_{"delta-pruning"};
  std::string table_ = dir_.Join("table");
  std::shared_ptr<FileSystem> fs_ = LocalFileSystem();
};

TEST_F(FilePruningTest, PartitionValuesRuleOutWholeFiles) {
  Append(Range(0, 3, "eu"), {"region"});
  Append(Range(3, 5, "us"));
  Append(Range(5, 6, "apac"));

  Result eu = Scan("region = 'eu'", {"id"});
  EXPECT_EQ(eu.files, 1u);
  EXPECT_EQ(eu.rows, (std::vector<std::string>{"0", "1", "2"}));
  EXPECT_EQ(eu.schema, "struct<id:bigint>");

  EXPECT_EQ(Scan("upper(region) IN ('US', 'APAC') AND id > 3", {"id"}).rows, (std::vector<std::string>{"4", "5"}));
  EXPECT_EQ(Scan("upper(region) IN ('US', 'APAC')").files, 2u);
  EXPECT_EQ(Scan("region = 'nowhere'").files, 0u);
}

TEST_F(FilePruningTest, ColumnBoundsRuleOutFilesThatCannotHoldAMatch) {
  Append(Range(0, 100, "eu"));
  Append(Range(100, 200, "eu"));
  Append(Range(200, 300, "eu"));

  Result some = Scan("id >= 150 AND 170 > id", {"name"});
  EXPECT_EQ(some.files, 1u);
  EXPECT_EQ(some.rows.size(), 20u);
  EXPECT_EQ(some.rows.front(), "n150");
  EXPECT_EQ(some.schema, "struct<name:string>");

  EXPECT_EQ(Scan("id = 250").files, 1u);
  EXPECT_EQ(Scan("id = 250").rows, (std::vector<std::string>{"250|n250|eu|1970-01-01T00:00:00.250500Z|250.0"}));
  EXPECT_EQ(Scan("id > 1000").files, 0u);
  EXPECT_EQ(Scan("name = 'n50'").files, 1u);
  EXPECT_EQ(Scan("x < 100").files, 1u);
  // Only what AND joins prunes: either side of an OR may match anywhere.
  EXPECT_EQ(Scan("id < 10 OR name = 'n250'").files, 3u);
  EXPECT_EQ(Scan("id < 2 OR name = 'n250'", {"id"}).rows, (std::vector<std::string>{"0", "1", "250"}));
}

TEST_F(FilePruningTest, BoundsNeverHideARowThatPasses) {
  // A timestamp's bounds keep milliseconds: a row 500 µs past the maximum's millisecond.
  Append(Range(7, 8, "eu"));
  EXPECT_EQ(Scan("ts >= TIMESTAMP '1970-01-01 00:00:00.0075'", {"id"}).rows, (std::vector<std::string>{"7"}));
  EXPECT_EQ(Scan("ts > TIMESTAMP '1970-01-01 00:00:00.0075'").files, 1u);
  EXPECT_EQ(Scan("ts > TIMESTAMP '1970-01-01 00:00:00.0075'").rows, (std::vector<std::string>{}));

  // NaN is greater than every number, and statistics leave it out of the maximum.
  Append(Rows({{8, "nan", "eu", 0, std::numeric_limits<double>::quiet_NaN()}, {9, "one", "eu", 0, 1.0}}));
  EXPECT_EQ(Scan("x > 1000", {"id"}).rows, (std::vector<std::string>{"8"}));

  // A maximum cut to 32 characters is still a bound for longer strings.
  std::string longest(40, 'z');
  Append(Rows({{10, "a", "eu", 0, 0}, {11, longest, "eu", 0, 0}}));
  EXPECT_EQ(Scan("name > '" + std::string(35, 'z') + "'", {"id"}).rows, (std::vector<std::string>{"11"}));
}

TEST_F(FilePruningTest, AFilterThatIsNotAPredicateOverTheTableIsRefused) {
  Append(Range(0, 1, "eu"));
  EXPECT_EQ(OpenError("id >").error_class(), errors::kParseSyntaxError);
  EXPECT_EQ(OpenError("nope = 1").error_class(), errors::kUnresolvedColumn);
  EXPECT_EQ(OpenError("id + 1").error_class(), errors::kDatatypeMismatch);
}

}  // namespace
}  // namespace sluice::delta

namespace sluice::delta {
namespace {

AddFile FileWithStats(std::string stats, PartitionValues partition_values = {}) {
  AddFile file;
  file.path = "f.parquet";
  file.stats = std::move(stats);
  file.partition_values = std::move(partition_values);
  return file;
}

TEST(KeyValuesTest, AFileIsReadOnlyWhenItsRangeOrPartitionHoldsAKey) {
  Int64Builder ids(DataType::Long());
  for (int64_t id : {95, 5, 5, 42}) ids.Append(id);
  ids.AppendNull();
  std::optional<KeyValues> numbers = KeyValues::Of(*ids.Finish());
  ASSERT_TRUE(numbers.has_value());
  auto range = [](int64_t low, int64_t high) {
    return FileWithStats(fmt::format(R"({{"numRecords":3,"minValues":{{"id":{}}},"maxValues":{{"id":{}}}}})", low, high));
  };
  EXPECT_TRUE(numbers->MayBeIn(range(0, 9), {"id"}));
  EXPECT_FALSE(numbers->MayBeIn(range(10, 41), {"id"}));  // inside [5, 95] but holding no key
  EXPECT_TRUE(numbers->MayBeIn(range(42, 42), {"id"}));
  EXPECT_FALSE(numbers->MayBeIn(range(96, 1000), {"id"}));
  EXPECT_TRUE(numbers->MayBeIn(FileWithStats(R"({"numRecords":3})"), {"id"}));  // no bounds: read
  EXPECT_TRUE(numbers->MayBeIn(FileWithStats("not json"), {"id"}));
  // A partition column: the file's value must be a key; a NULL partition holds none.
  EXPECT_TRUE(numbers->MayBeIn(FileWithStats("{}", {{"id", "42"}}), {"id"}));
  EXPECT_FALSE(numbers->MayBeIn(FileWithStats("{}", {{"id", "43"}}), {"id"}));
  EXPECT_FALSE(numbers->MayBeIn(FileWithStats("{}", {{"id", std::nullopt}}), {"id"}));

  BinaryBuilder names(DataType::String());
  for (const char* name : {"kiwi", "apple"}) names.Append(name);
  std::optional<KeyValues> texts = KeyValues::Of(*names.Finish());
  ASSERT_TRUE(texts.has_value());
  auto strings = [](const std::string& low, const std::string& high) {
    return FileWithStats(R"({"minValues":{"n":")" + low + R"("},"maxValues":{"n":")" + high + R"("}})");
  };
  EXPECT_FALSE(texts->MayBeIn(strings("b", "k"), {"n"}));
  EXPECT_TRUE(texts->MayBeIn(strings("b", "kiwi"), {"n"}));
  // A maximum cut at 32 characters by another writer (no marker) is no bound.
  const std::string cut(32, 'a');
  EXPECT_TRUE(texts->MayBeIn(strings("a", cut), {"n"}));
  EXPECT_FALSE(texts->MayBeIn(strings("a", "ab"), {"n"}));
  // Dates: bounds and partition values are "yyyy-MM-dd" text.
  Int32Builder days(DataType::Date());
  days.Append(20454);  // 2026-01-01
  std::optional<KeyValues> dates = KeyValues::Of(*days.Finish());
  ASSERT_TRUE(dates.has_value());
  auto date_range = [](const std::string& low, const std::string& high) {
    return FileWithStats(R"({"minValues":{"d":")" + low + R"("},"maxValues":{"d":")" + high + R"("}})");
  };
  EXPECT_TRUE(dates->MayBeIn(date_range("2025-12-31", "2026-01-02"), {"d"}));
  EXPECT_FALSE(dates->MayBeIn(date_range("2026-01-02", "2026-03-01"), {"d"}));
  EXPECT_FALSE(dates->MayBeIn(FileWithStats("{}", {{"d", "2026-01-02"}}), {"d"}));
  EXPECT_TRUE(dates->MayBeIn(FileWithStats("{}", {{"d", "2026-01-01"}}), {"d"}));
  EXPECT_TRUE(dates->MayBeIn(date_range("not a date", "2025-01-01x"), {"d"}));  // unreadable bounds: read
  // Other types are not handled (the caller reads every file).
  DoubleBuilder doubles(DataType::Double());
  doubles.Append(1.0);
  EXPECT_FALSE(KeyValues::Of(*doubles.Finish()).has_value());
}

}  // namespace
}  // namespace sluice::delta
