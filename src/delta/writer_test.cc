#include "sluice/delta/writer.h"

#include <algorithm>
#include <map>
#include <set>

#include <gtest/gtest.h>
#include <fmt/format.h>

#include "delta/data_files.h"
#include "delta/scan_testing.h"
#include "sluice/core/builder.h"
#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/fault_injection.h"
#include "sluice/core/utf8.h"
#include "sluice/delta/scan.h"
#include "sluice/parquet/reader.h"
#include "testing/store_root.h"
#include "testing/temp_dir.h"

namespace sluice::delta {
namespace {

struct Row {
  int64_t id;
  std::optional<std::string> name;
  std::optional<std::string> day;
};

BatchPtr MakeBatch(const std::vector<Row>& rows) {
  TypePtr schema = ParseTypeString("struct<id:bigint,name:string,day:string>").value();
  Int64Builder ids(DataType::Long());
  BinaryBuilder names(DataType::String());
  BinaryBuilder days(DataType::String());
  for (const Row& row : rows) {
    ids.Append(row.id);
    row.name ? names.Append(*row.name) : names.AppendNull();
    row.day ? days.Append(*row.day) : days.AppendNull();
  }
  return RecordBatch::Make(schema, {ids.Finish(), names.Finish(), days.Finish()}, static_cast<int64_t>(rows.size()))
      .value();
}

// Every test runs on the local disk and on S3 (moto on loopback).
class WriterTest : public ::testing::TestWithParam<sluice::testing::Store> {
 protected:
  // The table's rows scanned for `columns`, each as its values joined by commas, sorted.
  std::vector<std::string> ScannedRows(const std::vector<std::string>& columns) {
    return delta::testing::ScannedLines(Snapshot::Load(fs_, table_).value(), {.columns = columns});
  }

  std::vector<int64_t> Ids() {
    SnapshotPtr snapshot = Snapshot::Load(fs_, table_).value();
    std::vector<int64_t> ids;
    for (const AddFile& file : snapshot->files()) {
      auto path = DecodeFilePath(file.path);
      EXPECT_TRUE(path.ok());
      auto reader = parquet::ParquetReader::Open(*fs_, table_ + "/" + *path);
      EXPECT_TRUE(reader.ok()) << reader.status().ToString();
      auto batch = (*reader)->ReadAll({.columns = {"id"}});
      EXPECT_TRUE(batch.ok());
      for (int64_t row = 0; row < (*batch)->num_rows(); ++row) ids.push_back((*batch)->column(0)->Value<int64_t>(row));
    }
    std::sort(ids.begin(), ids.end());
    return ids;
  }

  Result<WriteResult> Write(const std::vector<Row>& rows, WriteOptions options = {}) {
    return WriteTable(fs_, table_, {MakeBatch(rows)}, options);
  }

  sluice::testing::StoreRoot dir_{GetParam()};
  std::string table_ = dir_.Join("table");
  std::shared_ptr<FileSystem> fs_ = dir_.file_system();
};

TEST_P(WriterTest, AppendsAreReadBackExactly) {
  auto first = Write({{1, "a", "x"}, {2, std::nullopt, "y"}});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->version, 0);
  EXPECT_EQ(first->num_rows, 2);
  auto second = Write({{3, "c", "x"}});
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->version, 1);
  EXPECT_EQ(Ids(), (std::vector<int64_t>{1, 2, 3}));
}

TEST_P(WriterTest, PartitionsAreHiveDirectoriesWithoutThePartitionColumn) {
  auto result = Write({{1, "a", "2026-01-01"}, {2, "b", std::nullopt}, {3, "c", "a/b:c"}, {4, "d", "2026-01-01"}},
                      {.partition_columns = {"day"}});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->num_files, 3);
  SnapshotPtr snapshot = Snapshot::Load(fs_, table_).value();
  std::map<std::optional<std::string>, std::string> directory_by_value;
  for (const AddFile& file : snapshot->files()) {
    auto value = file.partition_values.at("day");
    directory_by_value[value] = file.path.substr(0, file.path.find('/'));
    auto reader = parquet::ParquetReader::Open(*fs_, table_ + "/" + DecodeFilePath(file.path).value());
    ASSERT_TRUE(reader.ok());
    EXPECT_EQ((*reader)->schema()->FieldIndex("day"), -1);
  }
  EXPECT_EQ(directory_by_value[std::nullopt], "day=__HIVE_DEFAULT_PARTITION__");
  EXPECT_EQ(directory_by_value["2026-01-01"], "day=2026-01-01");
  // Hive escapes '/' and ':' in the directory name; the log holds that name URI-encoded.
  EXPECT_EQ(directory_by_value["a/b:c"], "day=a%252Fb%253Ac");
  EXPECT_EQ(Ids(), (std::vector<int64_t>{1, 2, 3, 4}));
}

TEST_P(WriterTest, PartitionColumnsAreTheDatasOwnAndAnExistingTableKeepsItsOwn) {
  // Refused at creation, as Delta refuses them; nothing is written.
  const std::vector<std::pair<std::vector<std::string>, std::string_view>> refused = {
      {{"nosuch"}, errors::kDeltaPartitionColumnNotFound},
      {{"day", "DAY"}, errors::kDeltaDuplicateColumnsFound},
      {{"id", "id"}, errors::kDeltaDuplicateColumnsFound},
      {{"id", "name", "day"}, errors::kDeltaCannotUseAllColumnsForPartition},
  };
  for (const auto& [columns, error_class] : refused) {
    Result<WriteResult> written = Write({{1, "a", "x"}}, {.partition_columns = columns});
    ASSERT_FALSE(written.ok()) << columns[0];
    EXPECT_EQ(written.status().error_class(), error_class) << written.status().ToString();
    EXPECT_FALSE(Snapshot::Load(fs_, table_).ok());
  }
  TypePtr nested_schema = ParseTypeString("struct<id:bigint,s:struct<a:int>,arr:array<int>>").value();
  for (std::string column : {"s", "arr"}) {
    Result<WriteResult> nested =
        WriteTable(fs_, table_, {RecordBatch::Empty(nested_schema)}, {.partition_columns = {column}});
    EXPECT_EQ(nested.status().error_class(), errors::kDeltaInvalidPartitionColumnType) << nested.status().ToString();
  }

  // A name resolves ignoring case, and the table records the data's spelling.
  ASSERT_TRUE(Write({{1, "a", "x"}, {2, "b", "y"}}, {.partition_columns = {"DAY"}}).ok());
  EXPECT_EQ(Snapshot::Load(fs_, table_).value()->metadata().partition_columns, std::vector<std::string>{"day"});
  // Later writes name the table's columns (in any case) or none; others change nothing.
  ASSERT_TRUE(Write({{3, "c", "x"}}, {.partition_columns = {"Day"}}).ok());
  ASSERT_TRUE(Write({{4, "d", "z"}}).ok());
  for (const std::vector<std::string>& other : std::vector<std::vector<std::string>>{{"id"}, {"day", "name"}}) {
    Result<WriteResult> mismatched = Write({{5, "e", "x"}}, {.partition_columns = other});
    ASSERT_FALSE(mismatched.ok());
    EXPECT_EQ(mismatched.status().error_class(), errors::kDeltaMetadataMismatch);
    EXPECT_NE(mismatched.status().message().find("given [`" + other[0] + "`"), std::string_view::npos)
        << mismatched.status().ToString();
    EXPECT_NE(mismatched.status().message().find("table [`day`]"), std::string_view::npos);
  }
  Result<WriteResult> overwrite = Write({{6, "f", "w"}}, {.mode = WriteMode::kOverwrite, .partition_columns = {"id"}});
  EXPECT_EQ(overwrite.status().error_class(), errors::kDeltaMetadataMismatch);
  EXPECT_EQ(Ids(), (std::vector<int64_t>{1, 2, 3, 4}));
  std::set<std::string> directories;
  SnapshotPtr written = Snapshot::Load(fs_, table_).value();
  for (const AddFile& file : written->files()) {
    directories.insert(file.path.substr(0, file.path.find('/')));
  }
  EXPECT_EQ(directories, (std::set<std::string>{"day=x", "day=y", "day=z"}));
}

// Delta's overwriteSchema: an overwrite gives the table the data's schema and partitioning, and
// keeps its id and properties; appends ignore it; the new partitioning is checked as at creation.
TEST_P(WriterTest, AnOverwriteWithOverwriteSchemaReplacesSchemaAndPartitioning) {
  ASSERT_TRUE(Write({{1, "a", "x"}, {2, "b", "y"}},
                    {.partition_columns = {"day"}, .table_properties = {{"delta.appendOnly", "false"}}})
                  .ok());
  const std::string id = Snapshot::Load(fs_, table_).value()->metadata().id;
  TypePtr other = ParseTypeString("struct<id:int,zone:string,w:double>").value();
  auto other_rows = [&](int32_t id, std::string zone, double w) {
    Int32Builder ids(DataType::Integer());
    BinaryBuilder zones(DataType::String());
    DoubleBuilder ws(DataType::Double());
    ids.Append(id);
    zones.Append(zone);
    ws.Append(w);
    return RecordBatch::Make(other, {ids.Finish(), zones.Finish(), ws.Finish()}, 1).value();
  };
  // Appends must fit the table, with or without the option; a bad new partitioning commits nothing.
  EXPECT_EQ(WriteTable(fs_, table_, {other_rows(3, "n", 0.5)}, {.partition_columns = {"zone"}, .overwrite_schema = true})
                .status()
                .error_class(),
            errors::kDeltaMetadataMismatch);
  EXPECT_EQ(WriteTable(fs_, table_, {other_rows(3, "n", 0.5)}, {.overwrite_schema = true}).status().error_class(),
            errors::kDeltaSchemaMismatch);
  for (const auto& [columns, error_class] : std::vector<std::pair<std::vector<std::string>, std::string_view>>{
           {{"day"}, errors::kDeltaPartitionColumnNotFound},
           {{"id", "zone", "w"}, errors::kDeltaCannotUseAllColumnsForPartition}}) {
    Result<WriteResult> refused = WriteTable(fs_, table_, {other_rows(3, "n", 0.5)},
                                             {.mode = WriteMode::kOverwrite, .partition_columns = columns, .overwrite_schema = true});
    EXPECT_EQ(refused.status().error_class(), error_class) << refused.status().ToString();
  }
  EXPECT_EQ(Snapshot::Load(fs_, table_).value()->version(), 0);

  ASSERT_TRUE(WriteTable(fs_, table_, {other_rows(3, "n", 0.5)},
                         {.mode = WriteMode::kOverwrite, .partition_columns = {"ZONE"}, .overwrite_schema = true})
                  .ok());
  SnapshotPtr replaced = Snapshot::Load(fs_, table_).value();
  EXPECT_EQ(replaced->schema()->ToString(), other->ToString());
  EXPECT_EQ(replaced->metadata().partition_columns, std::vector<std::string>{"zone"});
  EXPECT_EQ(replaced->metadata().id, id);
  EXPECT_EQ(replaced->metadata().configuration.at("delta.appendOnly"), "false");
  EXPECT_EQ(ScannedRows({"id", "zone", "w"}), std::vector<std::string>{"3,n,0.5"});
  ASSERT_EQ(replaced->files().size(), 1u);
  EXPECT_EQ(replaced->files()[0].path.substr(0, 7), "zone=n/");
  // Later writes fit the new table; an overwrite naming no partition columns unpartitions it.
  ASSERT_TRUE(WriteTable(fs_, table_, {other_rows(4, "s", 1.5)}).ok());
  EXPECT_EQ(ScannedRows({"id", "zone"}), (std::vector<std::string>{"3,n", "4,s"}));
  ASSERT_TRUE(Write({{5, "e", "x"}}, {.mode = WriteMode::kOverwrite, .overwrite_schema = true}).ok());
  replaced = Snapshot::Load(fs_, table_).value();
  EXPECT_TRUE(replaced->metadata().partition_columns.empty());
  EXPECT_EQ(ScannedRows({"id", "name", "day"}), std::vector<std::string>{"5,e,x"});
  EXPECT_EQ(replaced->metadata().id, id);
  // An overwrite that changes neither (each batch of a complete-mode stream) commits no metadata.
  ASSERT_TRUE(Write({{6, "f", "y"}}, {.mode = WriteMode::kOverwrite, .overwrite_schema = true}).ok());
  const int64_t version = Snapshot::Load(fs_, table_).value()->version();
  std::string commit = fs_->ReadFile(table_ + fmt::format("/_delta_log/{:020}.json", version)).value();
  EXPECT_EQ(commit.find("\"metaData\""), std::string::npos) << commit;
  EXPECT_EQ(ScannedRows({"id"}), std::vector<std::string>{"6"});
}

TEST_P(WriterTest, StatsDescribeEachFile) {
  std::string long_name(40, 'z');
  ASSERT_TRUE(Write({{5, "apple", "d"}, {-3, long_name, std::nullopt}, {9, std::nullopt, "d"}}).ok());
  SnapshotPtr snapshot = Snapshot::Load(fs_, table_).value();
  ASSERT_EQ(snapshot->files().size(), 1u);
  std::string truncated_max = std::string(32, 'z') + "\xF4\x8F\xBF\xBF";
  EXPECT_EQ(*snapshot->files()[0].stats,
            R"({"numRecords":3,"minValues":{"id":-3,"name":"apple","day":"d"},)"
            R"("maxValues":{"id":9,"name":")" + truncated_max + R"(","day":"d"},)"
            R"("nullCount":{"id":0,"name":1,"day":1}})");
}

// Strings that are not UTF-8 (bytes from another writer's file) are refused before anything is
// written, at the top level or nested, since readers of the table would refuse them.
TEST_P(WriterTest, StringsThatAreNotUtf8AreRefused) {
  std::vector<std::string> hostile = {"\xFF\x41", "\xFF\xFE\x80", "ok\xC3", "\xED\xA0\x80", std::string(40, 'a') + "\xFF"};
  for (const std::string& name : hostile) {
    SCOPED_TRACE(name);
    auto result = Write({{1, "apple", "d"}, {2, name, "d"}});
    EXPECT_EQ(result.status().error_class(), errors::kInvalidUtf8String);
    EXPECT_NE(result.status().message().find("column 'name'"), std::string::npos) << result.status().ToString();
  }
  TypePtr schema = ParseTypeString("struct<id:bigint,tags:array<string>>").value();
  Int64Builder ids(DataType::Long());
  ListBuilder tags(schema->field(1).type);
  ids.Append(1);
  static_cast<BinaryBuilder*>(tags.element_builder())->Append("fine");
  static_cast<BinaryBuilder*>(tags.element_builder())->Append("\xC0\xAF");
  tags.Append();
  BatchPtr nested = RecordBatch::Make(schema, {ids.Finish(), tags.Finish()}, 1).value();
  EXPECT_EQ(WriteTable(fs_, dir_.Join("nested"), {nested}).status().error_class(), errors::kInvalidUtf8String);
  EXPECT_EQ(Snapshot::Load(fs_, dir_.Join("nested")).status().error_class(), errors::kDeltaTableNotFound);
  EXPECT_EQ(Snapshot::Load(fs_, table_).status().error_class(), errors::kDeltaTableNotFound);
}

// Below that gate, the statistics never put bytes that are not UTF-8 into the log: such a bound is
// left out (a replaced one would no longer bound the values), the other bounds are kept.
TEST(StatsJsonTest, BoundsThatAreNotUtf8AreLeftOut) {
  parquet::FileStats stats;
  stats.num_rows = 2;
  for (std::string bytes : {std::string("\xFF\x41"), std::string("ok\xC3"), std::string(40, 'a') + "\xFF", std::string("\xED\xA0\x80")}) {
    SCOPED_TRACE(bytes);
    parquet::ColumnStats column;
    column.path = {"name"};
    column.type = DataType::String();
    column.min = parquet::StatValue{.bytes = "apple"};
    column.max = parquet::StatValue{.bytes = bytes};
    stats.columns = {column};
    std::string json = StatsJson(stats);
    EXPECT_TRUE(IsValidUtf8(json)) << json;
    EXPECT_EQ(json, R"({"numRecords":2,"minValues":{"name":"apple"},"maxValues":{},"nullCount":{"name":0}})");
  }
}

// A partition value lives in the log as text: one that is not UTF-8 is refused before anything
// is written, for string and binary partition columns alike.
TEST_P(WriterTest, PartitionValuesThatAreNotUtf8AreRefused) {
  for (std::string value : {"\xFF", "a\x80" "b", "\xC0\xAF"}) {
    SCOPED_TRACE(value);
    auto result = Write({{1, "a", value}}, {.partition_columns = {"day"}});
    EXPECT_EQ(result.status().error_class(), errors::kInvalidUtf8String);
    EXPECT_NE(result.status().message().find("'day'"), std::string::npos);
  }
  EXPECT_EQ(Snapshot::Load(fs_, table_).status().error_class(), errors::kDeltaTableNotFound);
  TypePtr schema = ParseTypeString("struct<id:bigint,key:binary>").value();
  Int64Builder ids(DataType::Long());
  BinaryBuilder keys(DataType::Binary());
  ids.Append(1);
  keys.Append("\xFE\xFF");
  BatchPtr batch = RecordBatch::Make(schema, {ids.Finish(), keys.Finish()}, 1).value();
  EXPECT_EQ(WriteTable(fs_, table_, {batch}, {.partition_columns = {"key"}}).status().error_class(),
            errors::kInvalidUtf8String);
}

// A name Spark refuses in a table without column mapping is refused before anything is written,
// at the top level or nested, whether the table is created or its schema evolves.
// New tables get column mapping for such names (ColumnMappingTest); an existing table without it
// cannot take one, and nothing is written.
TEST_P(WriterTest, ColumnNamesThatNeedColumnMappingAreRefusedByTablesWithoutIt) {
  ASSERT_TRUE(Write({{1, "a", "d"}}).ok());
  TypePtr evolved = ParseTypeString("struct<id:bigint,`new col`:int>").value();
  Int64Builder ids(DataType::Long());
  Int32Builder news(DataType::Integer());
  ids.Append(2);
  news.Append(3);
  BatchPtr batch = RecordBatch::Make(evolved, {ids.Finish(), news.Finish()}, 1).value();
  EXPECT_EQ(WriteTable(fs_, table_, {batch}, {.merge_schema = true}).status().error_class(),
            errors::kDeltaInvalidCharactersInColumnNames);
  EXPECT_EQ(Ids(), std::vector<int64_t>{1});
}

TEST_P(WriterTest, OverwriteAndTruncateReplaceEveryRow) {
  ASSERT_TRUE(Write({{1, "a", "x"}, {2, "b", "y"}}).ok());
  auto overwrite = Write({{7, "g", "x"}}, {.mode = WriteMode::kOverwrite});
  ASSERT_TRUE(overwrite.ok()) << overwrite.status().ToString();
  EXPECT_EQ(Ids(), std::vector<int64_t>{7});
  auto truncated = TruncateTable(fs_, table_);
  ASSERT_TRUE(truncated.ok());
  EXPECT_EQ(*truncated, 2);
  EXPECT_TRUE(Ids().empty());
  EXPECT_EQ(Snapshot::Load(fs_, table_, {.version = 0}).value()->files().size(), 1u);
}

TEST_P(WriterTest, ReplayedTransactionsAreSkipped) {
  WriteOptions options{.transactions = {SetTransaction{"query", 5, std::nullopt}}};
  auto first = Write({{1, "a", "x"}}, options);
  ASSERT_TRUE(first.ok());
  EXPECT_FALSE(first->skipped);
  auto replay = Write({{1, "a", "x"}}, options);
  ASSERT_TRUE(replay.ok());
  EXPECT_TRUE(replay->skipped);
  EXPECT_EQ(replay->version, 0);
  options.transactions[0].version = 6;
  EXPECT_FALSE(Write({{2, "b", "x"}}, options)->skipped);
  EXPECT_EQ(Ids(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(Snapshot::Load(fs_, table_).value()->TransactionVersion("query"), 6);
}

TEST_P(WriterTest, SchemaEvolutionAddsNullableColumnsAndRefusesTypeChanges) {
  ASSERT_TRUE(Write({{1, "a", "x"}}).ok());
  TypePtr wider = ParseTypeString("struct<id:bigint,extra:struct<n:int>>").value();
  Int64Builder ids(DataType::Long());
  ids.Append(2);
  StructBuilder extra(wider->field(1).type);
  static_cast<Int32Builder*>(extra.field_builder(0))->Append(42);
  extra.Append();
  BatchPtr batch = RecordBatch::Make(wider, {ids.Finish(), extra.Finish()}, 1).value();

  EXPECT_EQ(WriteTable(fs_, table_, {batch}).status().error_class(), errors::kDeltaSchemaMismatch);
  auto evolved = WriteTable(fs_, table_, {batch}, {.merge_schema = true});
  ASSERT_TRUE(evolved.ok()) << evolved.status().ToString();
  SnapshotPtr snapshot = Snapshot::Load(fs_, table_).value();
  EXPECT_EQ(snapshot->schema()->ToString(), "struct<id:bigint,name:string,day:string,extra:struct<n:int>>");
  EXPECT_EQ(Ids(), (std::vector<int64_t>{1, 2}));

  TypePtr text = ParseTypeString("struct<id:string>").value();
  BinaryBuilder text_ids(DataType::String());
  text_ids.Append("3");
  BatchPtr text_batch = RecordBatch::Make(text, {text_ids.Finish()}, 1).value();
  Status refused = WriteTable(fs_, table_, {text_batch}, {.merge_schema = true}).status();
  EXPECT_EQ(refused.error_class(), errors::kDeltaSchemaMismatch);
  EXPECT_NE(refused.message().find("'id'"), std::string_view::npos) << refused.ToString();
}

// A wider type in the data widens the column only when asked (or when the table allows it): the
// change is recorded as Delta's typeWidening feature records it, and files written before read as
// the wider type. Data narrower than its column is written widened.
TEST_P(WriterTest, WideningAColumnIsRecordedAndOlderFilesReadWidened) {
  TypePtr narrow = ParseTypeString("struct<n:int,tags:array<int>,label:string>").value();
  TypePtr wide = ParseTypeString("struct<n:bigint,tags:array<bigint>,label:string>").value();
  auto batch = [](const TypePtr& type, int64_t n, const char* label) {
    auto builder = ColumnBuilder::Make(type);
    auto* row = static_cast<StructBuilder*>(builder.get());
    auto* tags = static_cast<ListBuilder*>(row->field_builder(1));
    if (type->field(0).type->id() == TypeId::kLong) {
      static_cast<Int64Builder*>(row->field_builder(0))->Append(n);
      static_cast<Int64Builder*>(tags->element_builder())->Append(-n);
    } else {
      static_cast<Int32Builder*>(row->field_builder(0))->Append(static_cast<int32_t>(n));
      static_cast<Int32Builder*>(tags->element_builder())->Append(static_cast<int32_t>(-n));
    }
    tags->Append();
    static_cast<BinaryBuilder*>(row->field_builder(2))->Append(label);
    row->Append();
    return RecordBatch::Make(type, builder->Finish()->children, 1).value();
  };
  ASSERT_TRUE(WriteTable(fs_, table_, {batch(narrow, 1, "old")}).ok());
  Status refused = WriteTable(fs_, table_, {batch(wide, 5'000'000'000, "x")}, {.merge_schema = true}).status();
  EXPECT_EQ(refused.error_class(), errors::kDeltaSchemaMismatch);
  EXPECT_NE(refused.message().find("delta.enableTypeWidening"), std::string_view::npos) << refused.ToString();
  auto widened = WriteTable(fs_, table_, {batch(wide, 5'000'000'000, "new")}, {.merge_schema = true, .widen_types = true});
  ASSERT_TRUE(widened.ok()) << widened.status().ToString();

  SnapshotPtr snapshot = Snapshot::Load(fs_, table_).value();
  EXPECT_EQ(snapshot->schema()->ToString(), "struct<n:bigint,tags:array<bigint>,label:string>");
  EXPECT_EQ(snapshot->schema()->field(0).metadata, R"({"delta.typeChanges":[{"fromType":"integer","toType":"long"}]})");
  EXPECT_EQ(snapshot->schema()->field(1).metadata,
            R"({"delta.typeChanges":[{"fromType":"integer","toType":"long","fieldPath":"element"}]})");
  EXPECT_EQ(snapshot->schema()->field(2).metadata, "{}");
  EXPECT_EQ(snapshot->protocol().min_reader_version, 3);
  EXPECT_EQ(snapshot->protocol().min_writer_version, 7);
  EXPECT_EQ(*snapshot->protocol().reader_features, (std::vector<std::string>{"typeWidening"}));
  EXPECT_EQ(*snapshot->protocol().writer_features, (std::vector<std::string>{"appendOnly", "invariants", "typeWidening"}));
  EXPECT_EQ(snapshot->metadata().configuration.at(std::string(kEnableTypeWidening)), "true");

  // The table allows widening now; narrower data is written widened.
  ASSERT_TRUE(WriteTable(fs_, table_, {batch(narrow, 7, "narrow")}).ok());
  EXPECT_EQ(ScannedRows({"n", "tags", "label"}),
            (std::vector<std::string>{"1,[-1],old", "5000000000,[-5000000000],new", "7,[-7],narrow"}));
  // A second widening appends to the record; a change that is no widening stays refused.
  TypePtr text = ParseTypeString("struct<n:string>").value();
  BinaryBuilder texts(DataType::String());
  texts.Append("1");
  Status not_widening = WriteTable(fs_, table_, {RecordBatch::Make(text, {texts.Finish()}, 1).value()},
                                   {.merge_schema = true, .widen_types = true}).status();
  EXPECT_EQ(not_widening.error_class(), errors::kDeltaSchemaMismatch);
}

TEST_P(WriterTest, TypeChangesAreAppendedToTheFieldsMetadata) {
  TypePtr table = ParseTypeString("struct<n:smallint>").value();
  Field field = table->field(0);
  field.metadata = R"({"comment":"a count","delta.typeChanges":[{"fromType":"byte","toType":"short"}]})";
  table = DataType::Struct({field}).value();
  auto merged = MergeSchemas(table, ParseTypeString("struct<n:int>").value(), /*widen=*/true);
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  EXPECT_EQ((*merged)->field(0).metadata,
            R"({"comment":"a count","delta.typeChanges":[{"fromType":"byte","toType":"short"},)"
            R"({"fromType":"short","toType":"integer"}]})");
  EXPECT_FALSE(MergeSchemas(table, ParseTypeString("struct<n:int>").value()).ok()) << "not without widen";
  EXPECT_EQ((*MergeSchemas(table, ParseTypeString("struct<n:tinyint>").value()))->ToString(), "struct<n:smallint>");
}

TEST_P(WriterTest, NestedFieldsAreMergedIntoStructs) {
  TypePtr table = ParseTypeString("struct<a:struct<x:int>,b:array<struct<y:int>>>").value();
  TypePtr incoming = ParseTypeString("struct<a:struct<z:string>,b:array<struct<w:int>>,c:long>").value();
  auto merged = MergeSchemas(table, incoming);
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  EXPECT_EQ((*merged)->ToString(), "struct<a:struct<x:int,z:string>,b:array<struct<y:int,w:int>>,c:bigint>");
}

TEST_P(WriterTest, ACrashBeforeTheCommitLeavesOnlyOrphanFiles) {
  ASSERT_TRUE(Write({{1, "a", "x"}}).ok());
  auto faulty = std::make_shared<FaultInjectionFileSystem>(fs_);
  faulty->InjectFault({.op = FileOp::kPutIfAbsent, .sticky = true});
  EXPECT_FALSE(WriteTable(faulty, table_, {MakeBatch({{2, "b", "x"}})}).ok());
  EXPECT_EQ(Ids(), std::vector<int64_t>{1});
  EXPECT_EQ(fs_->List(table_).value().size(), 3u);  // _delta_log, the live file, the orphan
}

TEST_P(WriterTest, ScansRebuildPartitionColumnsAndFillEvolvedColumnsWithNulls) {
  ASSERT_TRUE(Write({{1, "a", "2026-01-01"}, {2, "b", std::nullopt}}, {.partition_columns = {"day"}}).ok());
  TypePtr wider = ParseTypeString("struct<id:bigint,day:string,score:double>").value();
  Int64Builder ids(DataType::Long());
  BinaryBuilder days(DataType::String());
  DoubleBuilder scores(DataType::Double());
  ids.Append(3);
  days.Append("2026-01-02");
  scores.Append(0.5);
  BatchPtr batch = RecordBatch::Make(wider, {ids.Finish(), days.Finish(), scores.Finish()}, 1).value();
  ASSERT_TRUE(WriteTable(fs_, table_, {batch}, {.merge_schema = true}).ok());

  EXPECT_EQ(ScannedRows({"ID", "day", "score"}),
            (std::vector<std::string>{"1,2026-01-01,null", "2,null,null", "3,2026-01-02,0.5"}));
  EXPECT_EQ(TableScan::Open(Snapshot::Load(fs_, table_).value(), {.columns = {"nope"}}).status().error_class(),
            errors::kUnresolvedColumn);
}

TEST(PartitionValueTest, ParsesEveryPrimitiveType) {
  auto text = [](std::string_view type, std::string value) {
    auto column = PartitionValueColumn(value, ParseTypeString(type).value(), 2);
    return column.ok() ? FormatValue(**column, 1) : std::string(column.status().error_class());
  };
  EXPECT_EQ(text("int", "-42"), "-42");
  EXPECT_EQ(text("tinyint", "300"), "DELTA_LOG_CORRUPT");
  EXPECT_EQ(text("boolean", "true"), "true");
  EXPECT_EQ(text("double", "1.5"), "1.5");
  EXPECT_EQ(text("date", "2026-01-31"), "2026-01-31");
  EXPECT_EQ(text("timestamp", "2026-01-31 10:00:00.123456"), "2026-01-31T10:00:00.123456Z");
  EXPECT_EQ(text("timestamp", "2026-01-31T10:00:00Z"), "2026-01-31T10:00:00Z");
  EXPECT_EQ(text("decimal(10,2)", "-3.5"), "-3.50");
  EXPECT_EQ(text("date", "31/01/2026"), "DELTA_LOG_CORRUPT");
  EXPECT_EQ(FormatValue(*PartitionValueColumn(std::nullopt, DataType::Long(), 1).value(), 0), "null");
}

TEST(DataFilePathsTest, EncodeAndDecode) {
  EXPECT_EQ(PartitionDirectoryName("p", "a b=c"), "p=a b%3Dc");
  EXPECT_EQ(PartitionDirectoryName("p", std::nullopt), "p=__HIVE_DEFAULT_PARTITION__");
  EXPECT_EQ(EncodeFilePath("p=a b%3Dc/part-0.parquet"), "p=a%20b%253Dc/part-0.parquet");
  EXPECT_EQ(DecodeFilePath("p=a%20b%253Dc/part-0.parquet").value(), "p=a b%3Dc/part-0.parquet");
  EXPECT_EQ(DecodeFilePath("bad%2").status().error_class(), errors::kDeltaLogCorrupt);
}

// A data file read may hold the table's timestamps as timestamps not adjusted to UTC: the same
// microseconds read as the table's type. Data to write in that type is refused.
TEST(ConformToSchemaTest, AFileReadTakesTimestampsWithoutZoneAsTheTablesTimestamps) {
  Int64Builder stored(DataType::TimestampNtz());
  stored.Append(1'681'430'338'000'000);
  stored.AppendNull();
  TypePtr file_schema = DataType::Struct({{"at", DataType::TimestampNtz()}}).value();
  TypePtr table_schema = DataType::Struct({{"at", DataType::Timestamp()}}).value();
  BatchPtr file = RecordBatch::Make(file_schema, {stored.Finish()}, 2).value();
  Result<BatchPtr> read = ConformToSchema(file, table_schema, FieldsOutsideTable::kLeaveOut);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ((*read)->column(0)->type->id(), TypeId::kTimestamp);
  EXPECT_EQ((*read)->column(0)->Value<int64_t>(0), 1'681'430'338'000'000);
  EXPECT_TRUE((*read)->column(0)->IsNull(1));
  EXPECT_EQ(ConformToSchema(file, table_schema).status().error_class(), errors::kDeltaSchemaMismatch);
}

INSTANTIATE_TEST_SUITE_P(Stores, WriterTest, ::testing::ValuesIn(sluice::testing::kAllStores),
                         sluice::testing::StoreName);

}  // namespace
}  // namespace sluice::delta
