#include "sluice/parquet/writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "sluice/core/builder.h"
#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "sluice/parquet/metadata.h"
#include "sluice/parquet/reader.h"
#include "testing/columns.h"
#include "testing/memory_files.h"

namespace sluice::parquet {
namespace {

using sluice::testing::Fixed;
using sluice::testing::Strings;
using sluice::testing::StringWritableFile;

TypePtr Parse(std::string_view text) {
  Result<TypePtr> t = ParseTypeString(text);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return *t;
}

BatchPtr MakeBatch(const TypePtr& schema, std::vector<ColumnPtr> columns) {
  int64_t rows = columns.empty() ? 0 : columns[0]->length;
  Result<BatchPtr> b = RecordBatch::Make(schema, std::move(columns), rows);
  EXPECT_TRUE(b.ok()) << b.status().ToString();
  return *b;
}

// Writes the batches and returns the file's bytes; fills *stats.
std::string WriteFile(const TypePtr& schema, const std::vector<BatchPtr>& batches, WriterOptions options = {},
                      FileStats* stats = nullptr) {
  std::string bytes;
  auto writer = ParquetWriter::Open(std::make_unique<StringWritableFile>(&bytes), schema, std::move(options));
  EXPECT_TRUE(writer.ok()) << writer.status().ToString();
  for (const BatchPtr& b : batches) {
    Status s = (*writer)->Write(*b);
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  Result<FileStats> closed = (*writer)->Close();
  EXPECT_TRUE(closed.ok()) << closed.status().ToString();
  if (stats != nullptr && closed.ok()) *stats = *closed;
  return bytes;
}

FileMetaData Footer(const std::string& file) {
  EXPECT_GE(file.size(), 12u);
  EXPECT_EQ(file.substr(0, 4), "PAR1");
  EXPECT_EQ(file.substr(file.size() - 4), "PAR1");
  uint32_t length;
  std::memcpy(&length, file.data() + file.size() - 8, 4);
  Result<FileMetaData> f = ParseFileMetaData(std::string_view(file).substr(file.size() - 8 - length, length));
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return *f;
}

WriterOptions UncompressedPlain() {
  WriterOptions o;
  o.compression = CompressionCodec::kUncompressed;
  o.dictionary = false;
  return o;
}

WriterOptions WithCodec(CompressionCodec codec) {
  WriterOptions o;
  o.compression = codec;
  return o;
}

WriterOptions WithPageSize(int64_t page_size) {
  WriterOptions o;
  o.page_size = page_size;
  return o;
}

template <typename T>
std::string Le(T v) {
  return std::string(reinterpret_cast<const char*>(&v), sizeof(T));
}

const ColumnMetaData& Chunk(const FileMetaData& f, int column, int row_group = 0) {
  return *f.row_groups.at(row_group).columns.at(column).meta_data;
}

TEST(ParquetWriterTest, FlatColumnsOfEveryScalarTypeHaveSchemaCountsAndStatistics) {
  TypePtr schema = Parse(
      "struct<b:boolean,y:tinyint,s:smallint,i:int,l:bigint,f:float,d:double,d9:decimal(9,2),d38:decimal(38,0),"
      "str:string,bin:binary,dt:date,ts:timestamp,ntz:timestamp_ntz>");
  auto f = [&](int i) { return schema->field(i).type; };
  std::vector<ColumnPtr> columns = {
      Fixed<uint8_t>(f(0), {1, std::nullopt, 0}),
      Fixed<int8_t>(f(1), {-128, 127, std::nullopt}),
      Fixed<int16_t>(f(2), {std::nullopt, -5, 300}),
      Fixed<int32_t>(f(3), {7, -7, 0}),
      Fixed<int64_t>(f(4), {std::numeric_limits<int64_t>::min(), 1, std::nullopt}),
      Fixed<float>(f(5), {1.5f, std::nanf(""), -2.5f}),
      Fixed<double>(f(6), {0.0, -0.0, std::nullopt}),
      Fixed<int128_t>(f(7), {12345, -99, std::nullopt}),
      Fixed<int128_t>(f(8), {-1, int128_t{1} << 100, 5}),
      Strings({"b", "\xC3\xA9", "a"}, f(9)),
      Strings({std::string("\0\1", 2), std::nullopt, ""}, f(10)),
      Fixed<int32_t>(f(11), {19000, std::nullopt, -1}),
      Fixed<int64_t>(f(12), {1700000000000000, 0, std::nullopt}),
      Fixed<int64_t>(f(13), {std::nullopt, std::nullopt, 42}),
  };
  FileStats stats;
  std::string file = WriteFile(schema, {MakeBatch(schema, columns)}, {}, &stats);
  FileMetaData meta = Footer(file);

  EXPECT_EQ(meta.num_rows, 3);
  EXPECT_EQ(meta.schema.size(), 15u);
  ASSERT_EQ(meta.row_groups.size(), 1u);
  EXPECT_EQ(meta.row_groups[0].num_rows, 3);
  EXPECT_EQ(meta.row_groups[0].columns.size(), 14u);
  EXPECT_EQ(meta.column_orders.size(), 14u);
  ASSERT_TRUE(meta.created_by.has_value());
  EXPECT_EQ(meta.created_by->rfind("sluice version ", 0), 0u);

  for (int c = 0; c < 14; ++c) {
    EXPECT_EQ(Chunk(meta, c).num_values, 3) << c;
    EXPECT_EQ(Chunk(meta, c).codec, CompressionCodec::kSnappy);
    EXPECT_EQ(Chunk(meta, c).path_in_schema, std::vector<std::string>{schema->field(c).name});
  }
  auto stat = [&](int c) { return *Chunk(meta, c).statistics; };
  EXPECT_EQ(stat(0).null_count, 1);
  EXPECT_EQ(stat(0).min_value, std::string(1, '\0'));
  EXPECT_EQ(stat(0).max_value, std::string(1, '\1'));
  EXPECT_EQ(stat(1).min_value, Le<int32_t>(-128));
  EXPECT_EQ(stat(1).max_value, Le<int32_t>(127));
  EXPECT_EQ(stat(1).min, Le<int32_t>(-128));  // the deprecated fields too: signed order is right
  EXPECT_EQ(stat(2).min_value, Le<int32_t>(-5));
  EXPECT_EQ(stat(4).min_value, Le<int64_t>(std::numeric_limits<int64_t>::min()));
  EXPECT_EQ(stat(5).min_value, Le<float>(-2.5f));  // NaN is left out of the bounds
  EXPECT_EQ(stat(5).max_value, Le<float>(1.5f));
  EXPECT_EQ(stat(6).min_value, Le<double>(-0.0));  // zero bounds cover both signs
  EXPECT_EQ(stat(6).max_value, Le<double>(0.0));
  EXPECT_TRUE(std::signbit(stats.columns[6].min->float_value) || stats.columns[6].min->float_value == 0);
  EXPECT_EQ(stat(7).min_value, Le<int32_t>(-99));
  EXPECT_EQ(stat(8).min_value, std::string(16, '\xFF'));  // big-endian -1
  EXPECT_FALSE(stat(8).min.has_value());  // no deprecated bounds for FIXED_LEN_BYTE_ARRAY
  std::string big(16, '\0');
  big[3] = 0x10;  // 2^100 big-endian in 16 bytes
  EXPECT_EQ(stat(8).max_value, big);
  EXPECT_EQ(stat(9).min_value, "a");
  EXPECT_EQ(stat(9).max_value, "\xC3\xA9");  // unsigned byte order: 0xC3 > 'b'
  EXPECT_FALSE(stat(9).min.has_value());
  EXPECT_EQ(stat(10).min_value, "");
  EXPECT_EQ(stat(13).null_count, 2);
  EXPECT_EQ(stat(13).min_value, Le<int64_t>(42));

  ASSERT_EQ(stats.columns.size(), 14u);
  EXPECT_EQ(stats.num_rows, 3);
  EXPECT_EQ(stats.file_size, static_cast<int64_t>(file.size()));
  EXPECT_EQ(stats.columns[1].min->int_value, -128);
  EXPECT_EQ(stats.columns[4].null_count, 1);
  EXPECT_EQ(stats.columns[7].min->decimal_value, -99);
  EXPECT_EQ(stats.columns[7].max->decimal_value, 12345);
  EXPECT_TRUE(stats.columns[8].max->decimal_value == (int128_t{1} << 100));
  EXPECT_EQ(stats.columns[9].max->bytes, "\xC3\xA9");
  EXPECT_EQ(stats.columns[5].min->float_value, -2.5);
  EXPECT_FALSE(stats.columns[9].in_repeated);
}

TEST(ParquetWriterTest, AllNullColumnsHaveNullCountsAndNoBounds) {
  TypePtr schema = Parse("struct<a:int,b:string>");
  std::vector<ColumnPtr> columns = {MakeNullColumn(schema->field(0).type, 1000),
                                    MakeNullColumn(schema->field(1).type, 1000)};
  FileStats stats;
  FileMetaData meta = Footer(WriteFile(schema, {MakeBatch(schema, columns)}, {}, &stats));
  for (int c = 0; c < 2; ++c) {
    const Statistics& s = *Chunk(meta, c).statistics;
    EXPECT_EQ(s.null_count, 1000);
    EXPECT_FALSE(s.min_value.has_value());
    EXPECT_EQ(Chunk(meta, c).num_values, 1000);
    EXPECT_EQ(stats.columns[c].null_count, 1000);
    EXPECT_FALSE(stats.columns[c].min.has_value());
  }
}

TEST(ParquetWriterTest, RequiredColumnsHaveNoDefinitionLevels) {
  std::vector<Field> fields = {Field{"id", DataType::Long(), false, "{}"}};
  TypePtr schema = *DataType::Struct(fields);
  std::vector<std::optional<int64_t>> ids;
  for (int64_t i = 0; i < 100; ++i) ids.push_back(i);
  FileMetaData meta = Footer(WriteFile(schema, {MakeBatch(schema, {Fixed<int64_t>(DataType::Long(), ids)})},
                                       UncompressedPlain()));
  EXPECT_EQ(meta.schema[1].repetition_type, FieldRepetitionType::kRequired);
  // No levels: the single PLAIN page holds exactly 100 * 8 bytes.
  const ColumnMetaData& c = Chunk(meta, 0);
  EXPECT_EQ(c.encodings, std::vector<Encoding>{Encoding::kPlain});
  size_t header_size = 0;
  std::string file = WriteFile(schema, {MakeBatch(schema, {Fixed<int64_t>(DataType::Long(), ids)})},
                               UncompressedPlain());
  Result<PageHeader> page = ParsePageHeader(std::string_view(file).substr(c.data_page_offset), &header_size);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_EQ(page->uncompressed_page_size, 800);
  EXPECT_EQ(page->data_page_header->num_values, 100);
}

TEST(ParquetWriterTest, NullsInNonNullableFieldsAreRejected) {
  std::vector<Field> fields = {Field{"id", DataType::Integer(), false, "{}"}};
  TypePtr schema = *DataType::Struct(fields);
  std::string bytes;
  auto writer = ParquetWriter::Open(std::make_unique<StringWritableFile>(&bytes), schema);
  ASSERT_TRUE(writer.ok());
  Status s = (*writer)->Write(*MakeBatch(schema, {Fixed<int32_t>(DataType::Integer(), {1, std::nullopt})}));
  EXPECT_EQ(s.error_class(), errors::kInvalidArgument);
  EXPECT_NE(s.message().find("'id'"), std::string_view::npos) << s.ToString();
  EXPECT_EQ((*writer)->Close().status().error_class(), errors::kInvalidArgument);
}

TEST(ParquetWriterTest, MismatchedBatchSchemaIsRejected) {
  TypePtr schema = Parse("struct<a:int>");
  TypePtr other = Parse("struct<a:bigint>");
  std::string bytes;
  auto writer = ParquetWriter::Open(std::make_unique<StringWritableFile>(&bytes), schema);
  ASSERT_TRUE(writer.ok());
  Status s = (*writer)->Write(*MakeBatch(other, {Fixed<int64_t>(DataType::Long(), {1})}));
  EXPECT_EQ(s.error_class(), errors::kInvalidArgument);
}

TEST(ParquetWriterTest, BadOptionsAreRejectedAtOpen) {
  std::string bytes;
  TypePtr schema = Parse("struct<a:int>");
  EXPECT_EQ(ParquetWriter::Open(std::make_unique<StringWritableFile>(&bytes), schema,
                                WithCodec(CompressionCodec::kLzo))
                .status()
                .error_class(),
            errors::kInvalidArgument);
  EXPECT_EQ(ParquetWriter::Open(std::make_unique<StringWritableFile>(&bytes), schema, WithPageSize(0))
                .status()
                .error_class(),
            errors::kInvalidArgument);
}

// array<int> rows: [1, 2], [], null, [null, 3]
ColumnPtr SampleIntArrays(const TypePtr& type) {
  ListBuilder b(type);
  auto* e = static_cast<Int32Builder*>(b.element_builder());
  e->Append(1);
  e->Append(2);
  b.Append();
  b.Append();
  b.AppendNull();
  e->AppendNull();
  e->Append(3);
  b.Append();
  return b.Finish();
}

TEST(ParquetWriterTest, NestedColumnsGetLevelsPerEntry) {
  TypePtr schema = Parse("struct<a:array<int>,s:struct<x:int,y:string>,m:map<string,int>>");
  ColumnPtr arrays = SampleIntArrays(schema->field(0).type);

  StructBuilder sb(schema->field(1).type);
  static_cast<Int32Builder*>(sb.field_builder(0))->Append(1);
  static_cast<BinaryBuilder*>(sb.field_builder(1))->AppendNull();
  sb.Append();
  sb.AppendNull();
  static_cast<Int32Builder*>(sb.field_builder(0))->AppendNull();
  static_cast<BinaryBuilder*>(sb.field_builder(1))->Append("z");
  sb.Append();
  sb.AppendNull();
  ColumnPtr structs = sb.Finish();

  ListBuilder mb(schema->field(2).type);
  static_cast<BinaryBuilder*>(mb.key_builder())->Append("k1");
  static_cast<Int32Builder*>(mb.value_builder())->Append(10);
  static_cast<BinaryBuilder*>(mb.key_builder())->Append("k2");
  static_cast<Int32Builder*>(mb.value_builder())->AppendNull();
  mb.Append();
  mb.AppendNull();
  mb.Append();
  static_cast<BinaryBuilder*>(mb.key_builder())->Append("k3");
  static_cast<Int32Builder*>(mb.value_builder())->Append(30);
  mb.Append();
  ColumnPtr maps = mb.Finish();

  FileStats stats;
  FileMetaData meta = Footer(WriteFile(schema, {MakeBatch(schema, {arrays, structs, maps})}, {}, &stats));
  ASSERT_EQ(meta.row_groups[0].columns.size(), 5u);
  // a.list.element: entries 1, 2 | empty | null list | null, 3
  EXPECT_EQ(Chunk(meta, 0).num_values, 6);
  EXPECT_EQ(Chunk(meta, 0).statistics->null_count, 3);
  EXPECT_EQ(Chunk(meta, 0).statistics->min_value, Le<int32_t>(1));
  EXPECT_EQ(Chunk(meta, 0).statistics->max_value, Le<int32_t>(3));
  EXPECT_EQ(Chunk(meta, 0).path_in_schema, (std::vector<std::string>{"a", "list", "element"}));
  // s.x and s.y: one entry per row
  EXPECT_EQ(Chunk(meta, 1).num_values, 4);
  EXPECT_EQ(Chunk(meta, 1).statistics->null_count, 3);
  EXPECT_EQ(Chunk(meta, 2).statistics->null_count, 3);
  EXPECT_EQ(Chunk(meta, 2).statistics->min_value, "z");
  // m.key_value.key / value: k1, k2 | null map | empty map | k3
  EXPECT_EQ(Chunk(meta, 3).num_values, 5);
  EXPECT_EQ(Chunk(meta, 3).statistics->null_count, 2);
  EXPECT_EQ(Chunk(meta, 4).statistics->null_count, 3);
  EXPECT_EQ(Chunk(meta, 4).statistics->max_value, Le<int32_t>(30));

  EXPECT_TRUE(stats.columns[0].in_repeated);
  EXPECT_FALSE(stats.columns[1].in_repeated);
  EXPECT_EQ(stats.columns[1].path, (std::vector<std::string>{"s", "x"}));
}

TEST(ParquetWriterTest, DictionaryFallsBackToPlainPastTheLimit) {
  TypePtr schema = Parse("struct<s:string>");
  std::vector<std::optional<std::string>> values;
  for (int i = 0; i < 20000; ++i) values.push_back("value-" + std::to_string(i));
  WriterOptions options;
  options.dictionary_size_limit = 10000;
  options.page_size = 4096;
  FileMetaData meta = Footer(WriteFile(schema, {MakeBatch(schema, {Strings(values)})}, options));
  const ColumnMetaData& c = Chunk(meta, 0);
  EXPECT_EQ(c.encodings, (std::vector<Encoding>{Encoding::kPlain, Encoding::kRle, Encoding::kRleDictionary}));
  ASSERT_EQ(c.encoding_stats.size(), 3u);
  EXPECT_EQ(c.encoding_stats[0].page_type, PageType::kDictionaryPage);
  EXPECT_EQ(c.encoding_stats[2].encoding, Encoding::kPlain);
  EXPECT_GT(c.encoding_stats[2].count, 1);
  ASSERT_TRUE(c.dictionary_page_offset.has_value());
  EXPECT_LT(*c.dictionary_page_offset, c.data_page_offset);
  EXPECT_EQ(c.statistics->min_value, "value-0");
  EXPECT_EQ(c.statistics->max_value, "value-9999");
}

// The values of column 0 of `file`, read back with ParquetReader.
std::vector<int64_t> ReadLongs(const std::string& file) {
  auto reader = ParquetReader::Open(std::make_unique<sluice::testing::StringRandomAccessFile>(file));
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  Result<BatchPtr> read = (*reader)->ReadAll();
  EXPECT_TRUE(read.ok()) << read.status().ToString();
  std::vector<int64_t> values;
  for (int64_t row = 0; row < (*read)->num_rows(); ++row) values.push_back((*read)->column(0)->Value<int64_t>(row));
  return values;
}

TEST(ParquetWriterTest, NearlyDistinctColumnsAreWrittenPlainWithoutADictionary) {
  TypePtr schema = Parse("struct<id:bigint>");
  std::vector<std::optional<int64_t>> ids;
  std::vector<int64_t> expected;
  for (int64_t i = 0; i < 100000; ++i) {
    // One value in twenty repeats the previous one: 95% distinct.
    int64_t id = i % 20 == 19 ? (i - 1) * 3 : i * 3;
    ids.push_back(id);
    expected.push_back(id);
  }
  WriterOptions options;
  options.page_size = 64 * 1024;
  std::string file = WriteFile(schema, {MakeBatch(schema, {Fixed<int64_t>(DataType::Long(), ids)})}, options);
  FileMetaData footer = Footer(file);
  const ColumnMetaData& c = Chunk(footer, 0);
  EXPECT_EQ(c.encodings, (std::vector<Encoding>{Encoding::kPlain, Encoding::kRle}));
  EXPECT_FALSE(c.dictionary_page_offset.has_value());
  ASSERT_EQ(c.encoding_stats.size(), 1u);
  EXPECT_EQ(c.encoding_stats[0].page_type, PageType::kDataPage);
  EXPECT_EQ(c.encoding_stats[0].encoding, Encoding::kPlain);
  EXPECT_GT(c.encoding_stats[0].count, 10);
  EXPECT_EQ(ReadLongs(file), expected);
}

TEST(ParquetWriterTest, AColumnRepeatingEnoughOfItsFirstValuesKeepsItsDictionary) {
  TypePtr schema = Parse("struct<id:bigint>");
  std::vector<std::optional<int64_t>> ids;
  std::vector<int64_t> expected;
  // 80% distinct at first: the dictionary is kept, then outgrows its limit and gives way to PLAIN.
  for (int64_t i = 0; i < 100000; ++i) {
    int64_t id = i % 5 == 4 ? i - 1 : i;
    ids.push_back(id);
    expected.push_back(id);
  }
  WriterOptions options;
  options.page_size = 16 * 1024;
  options.dictionary_size_limit = 256 * 1024;
  std::string file = WriteFile(schema, {MakeBatch(schema, {Fixed<int64_t>(DataType::Long(), ids)})}, options);
  FileMetaData footer = Footer(file);
  const ColumnMetaData& c = Chunk(footer, 0);
  EXPECT_EQ(c.encodings, (std::vector<Encoding>{Encoding::kPlain, Encoding::kRle, Encoding::kRleDictionary}));
  ASSERT_TRUE(c.dictionary_page_offset.has_value());
  EXPECT_EQ(*c.dictionary_page_offset, 4);
  ASSERT_EQ(c.encoding_stats.size(), 3u);
  EXPECT_EQ(c.encoding_stats[1].encoding, Encoding::kRleDictionary);
  EXPECT_EQ(c.encoding_stats[2].encoding, Encoding::kPlain);
  EXPECT_EQ(ReadLongs(file), expected);
}

TEST(ParquetWriterTest, LowCardinalityColumnsStayDictionaryEncoded) {
  TypePtr schema = Parse("struct<s:string>");
  std::vector<std::optional<std::string>> values;
  for (int i = 0; i < 50000; ++i) values.push_back(i % 3 == 0 ? "red" : "green");
  std::string file = WriteFile(schema, {MakeBatch(schema, {Strings(values)})});
  FileMetaData footer = Footer(file);
  const ColumnMetaData& c = Chunk(footer, 0);
  EXPECT_EQ(c.encoding_stats.size(), 2u);
  EXPECT_LT(file.size(), 2000u);
}

TEST(ParquetWriterTest, RowGroupsHoldAtMostTheirRowLimitAcrossBatches) {
  TypePtr schema = Parse("struct<id:bigint>");
  std::vector<std::optional<int64_t>> ids;
  std::vector<int64_t> expected;
  for (int64_t i = 0; i < 7000; ++i) ids.push_back(i);
  WriterOptions options;
  options.max_row_group_rows = 5000;
  BatchPtr batch = MakeBatch(schema, {Fixed<int64_t>(DataType::Long(), ids)});
  std::string file = WriteFile(schema, {batch, batch, batch}, options);
  FileMetaData meta = Footer(file);
  std::vector<int64_t> group_rows;
  for (const RowGroup& group : meta.row_groups) group_rows.push_back(group.num_rows);
  EXPECT_EQ(group_rows, (std::vector<int64_t>{5000, 5000, 5000, 5000, 1000}));
  for (int copy = 0; copy < 3; ++copy) {
    for (int64_t i = 0; i < 7000; ++i) expected.push_back(i);
  }
  EXPECT_EQ(ReadLongs(file), expected);
}

TEST(ParquetWriterTest, RefusesARowGroupOfNoRows) {
  WriterOptions options;
  options.max_row_group_rows = 0;
  std::string bytes;
  auto writer = ParquetWriter::Open(std::make_unique<StringWritableFile>(&bytes), Parse("struct<id:bigint>"), options);
  EXPECT_EQ(writer.status().error_class(), errors::kInvalidArgument);
}

TEST(ParquetWriterTest, RowGroupsCloseAtTheTargetSize) {
  TypePtr schema = Parse("struct<id:bigint>");
  std::vector<std::optional<int64_t>> ids;
  for (int64_t i = 0; i < 100000; ++i) ids.push_back(i * 7919);
  WriterOptions options;
  options.row_group_size = 100000;
  options.dictionary = false;
  BatchPtr batch = MakeBatch(schema, {Fixed<int64_t>(DataType::Long(), ids)});
  FileMetaData meta = Footer(WriteFile(schema, {batch, batch}, options));
  EXPECT_EQ(meta.num_rows, 200000);
  EXPECT_GT(meta.row_groups.size(), 5u);
  int64_t rows = 0;
  int64_t previous_end = 4;
  for (size_t g = 0; g < meta.row_groups.size(); ++g) {
    rows += meta.row_groups[g].num_rows;
    EXPECT_EQ(meta.row_groups[g].ordinal, static_cast<int16_t>(g));
    EXPECT_EQ(*meta.row_groups[g].file_offset, previous_end);
    previous_end = Chunk(meta, 0, static_cast<int>(g)).data_page_offset + Chunk(meta, 0, static_cast<int>(g)).total_compressed_size;
  }
  EXPECT_EQ(rows, 200000);
}

TEST(ParquetWriterTest, KeyValueMetadataAndCodecsAreRecorded) {
  TypePtr schema = Parse("struct<a:int>");
  for (CompressionCodec codec : {CompressionCodec::kUncompressed, CompressionCodec::kSnappy, CompressionCodec::kGzip,
                                 CompressionCodec::kZstd}) {
    WriterOptions options;
    options.compression = codec;
    options.key_value_metadata = {{"org.apache.spark.version", "3.5.0"}, {"k", ""}};
    FileMetaData meta = Footer(WriteFile(schema, {MakeBatch(schema, {Fixed<int32_t>(DataType::Integer(), {1, 2})})}, options));
    EXPECT_EQ(Chunk(meta, 0).codec, codec);
    ASSERT_EQ(meta.key_value_metadata.size(), 2u);
    EXPECT_EQ(meta.key_value_metadata[0].key, "org.apache.spark.version");
    EXPECT_EQ(meta.key_value_metadata[0].value, "3.5.0");
  }
}

TEST(ParquetWriterTest, AnEmptyFileHasASchemaAndNoRowGroups) {
  TypePtr schema = Parse("struct<a:int,b:array<string>>");
  FileStats stats;
  FileMetaData meta = Footer(WriteFile(schema, {}, {}, &stats));
  EXPECT_EQ(meta.num_rows, 0);
  EXPECT_TRUE(meta.row_groups.empty());
  EXPECT_EQ(meta.schema.size(), 5u);
  EXPECT_EQ(stats.columns.size(), 2u);
}

}  // namespace
}  // namespace sluice::parquet

namespace sluice::parquet {
namespace {

// Repeated values of every fixed width in a dictionary (4, 8, and the 16 bytes of a decimal of
// more than 18 digits, FIXED_LEN_BYTE_ARRAY) read back as written.
TEST(ParquetWriterTest, RepeatedValuesOfEveryFixedWidthRoundTripThroughTheDictionary) {
  TypePtr schema = Parse("struct<i:int,l:bigint,d:decimal(38,2),w:decimal(20,0)>");
  std::vector<std::optional<int32_t>> ints;
  std::vector<std::optional<int64_t>> longs;
  std::vector<std::optional<int128_t>> wide, wider;
  for (int row = 0; row < 1000; ++row) {
    ints.push_back(row % 7);
    longs.push_back(row % 11 - 5);
    wide.push_back(row % 13 == 0 ? std::nullopt : std::optional<int128_t>((row % 5 - 2) * int128_t{1000000000000000000}));
    wider.push_back(int128_t{row % 3});
  }
  BatchPtr batch = MakeBatch(schema, {Fixed<int32_t>(DataType::Integer(), ints), Fixed<int64_t>(DataType::Long(), longs),
                                      Fixed<int128_t>(Parse("decimal(38,2)"), wide),
                                      Fixed<int128_t>(Parse("decimal(20,0)"), wider)});
  std::string bytes = WriteFile(schema, {batch});
  auto reader = ParquetReader::Open(std::make_unique<sluice::testing::StringRandomAccessFile>(bytes));
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  auto back = (*reader)->ReadAll();
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ((*back)->num_rows(), 1000);
  for (int64_t row = 0; row < 1000; ++row) {
    for (int c = 0; c < 4; ++c) {
      ASSERT_EQ(FormatValue(*(*back)->column(c), row), FormatValue(*batch->column(c), row)) << row << " " << c;
    }
  }
}

}  // namespace
}  // namespace sluice::parquet
