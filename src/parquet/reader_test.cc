// ParquetReader on files built by hand (legacy shapes other writers produce) and on damaged
// files: every damage is an error, never a crash.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "parquet/duckdb_testing.h"
#include "sluice/core/builder.h"
#include "sluice/parquet/reader.h"
#include "sluice/parquet/writer.h"
#include "testing/memory_files.h"
#include "testing/temp_dir.h"

namespace sluice::parquet {
namespace {

using sluice::testing::StringRandomAccessFile;
using sluice::testing::StringWritableFile;
using testing::CanonicalRows;

Result<std::unique_ptr<ParquetReader>> OpenBytes(std::string bytes) {
  return ParquetReader::Open(std::make_unique<StringRandomAccessFile>(std::move(bytes)));
}

// Reads everything a file holds; the first error, if any.
Status ReadEverything(std::string bytes) {
  SLUICE_ASSIGN_OR_RETURN(auto reader, OpenBytes(std::move(bytes)));
  for (int g = 0; g < reader->num_row_groups(); ++g) SLUICE_RETURN_IF_ERROR(reader->RowGroupStatistics(g).status());
  return reader->ReadAll().status();
}

std::vector<std::string> ReadRows(const std::string& bytes, const ReadOptions& options = {}) {
  auto reader = OpenBytes(bytes);
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  if (!reader.ok()) return {};
  auto batch = (*reader)->ReadAll(options);
  EXPECT_TRUE(batch.ok()) << batch.status().ToString();
  if (!batch.ok()) return {};
  return CanonicalRows(**batch);
}

// --- hand-built files

std::string Le32(uint32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); }
std::string Le64(uint64_t v) { return std::string(reinterpret_cast<const char*>(&v), 8); }

// Levels as one bit-packed run of the hybrid encoding, with the v1 length prefix.
std::string LevelsV1(const std::vector<int>& levels, int bit_width) {
  const size_t groups = (levels.size() + 7) / 8;
  std::string packed(groups * bit_width, '\0');
  for (size_t i = 0; i < levels.size(); ++i) {
    for (int b = 0; b < bit_width; ++b) {
      if ((levels[i] >> b) & 1) packed[(i * bit_width + b) / 8] |= static_cast<char>(1 << ((i * bit_width + b) % 8));
    }
  }
  std::string run(1, static_cast<char>(groups << 1 | 1));
  run += packed;
  return Le32(static_cast<uint32_t>(run.size())) + run;
}

SchemaElement Group(std::string name, int children, std::optional<FieldRepetitionType> repetition,
                    std::optional<ConvertedType> converted = std::nullopt) {
  SchemaElement e;
  e.name = std::move(name);
  e.num_children = children;
  e.repetition_type = repetition;
  e.converted_type = converted;
  return e;
}

SchemaElement Leaf(std::string name, Type type, FieldRepetitionType repetition,
                   std::optional<ConvertedType> converted = std::nullopt) {
  SchemaElement e;
  e.name = std::move(name);
  e.type = type;
  e.repetition_type = repetition;
  e.converted_type = converted;
  return e;
}

struct Chunk {
  std::vector<std::string> path;
  Type type;
  int32_t num_values;  // entries, nulls included
  std::string page_body;  // levels and PLAIN values of one v1 data page
};

// A one-row-group, uncompressed file with one data page per column.
std::string BuildFile(std::vector<SchemaElement> schema, const std::vector<Chunk>& chunks, int64_t rows) {
  std::string file = "PAR1";
  FileMetaData meta;
  meta.schema = std::move(schema);
  meta.num_rows = rows;
  RowGroup group;
  group.num_rows = rows;
  for (const Chunk& chunk : chunks) {
    PageHeader header;
    header.type = PageType::kDataPage;
    header.uncompressed_page_size = static_cast<int32_t>(chunk.page_body.size());
    header.compressed_page_size = header.uncompressed_page_size;
    DataPageHeader data;
    data.num_values = chunk.num_values;
    header.data_page_header = data;
    std::string page;
    SerializePageHeader(header, &page);
    page += chunk.page_body;
    ColumnChunk column;
    ColumnMetaData cm;
    cm.type = chunk.type;
    cm.encodings = {Encoding::kPlain, Encoding::kRle};
    cm.path_in_schema = chunk.path;
    cm.num_values = chunk.num_values;
    cm.total_compressed_size = cm.total_uncompressed_size = static_cast<int64_t>(page.size());
    cm.data_page_offset = static_cast<int64_t>(file.size());
    column.file_offset = cm.data_page_offset;
    column.meta_data = cm;
    group.columns.push_back(column);
    group.total_byte_size += static_cast<int64_t>(page.size());
    file += page;
  }
  meta.row_groups.push_back(group);
  std::string footer;
  SerializeFileMetaData(meta, &footer);
  return file + footer + Le32(static_cast<uint32_t>(footer.size())) + "PAR1";
}

TEST(ParquetReaderLegacy, BareRepeatedFieldsAreArraysOfRequiredElements) {
  // message m { repeated int32 x; }  rows: [1, 2], [], [3]
  std::string body = LevelsV1({0, 1, 0, 0}, 1) + LevelsV1({1, 1, 0, 1}, 1) + Le32(1) + Le32(2) + Le32(3);
  std::string file = BuildFile({Group("m", 1, std::nullopt), Leaf("x", Type::kInt32, FieldRepetitionType::kRepeated)},
                               {{{"x"}, Type::kInt32, 4, body}}, 3);
  auto reader = OpenBytes(file);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  EXPECT_EQ((*reader)->schema()->ToString(), "struct<x:array<int>>");
  EXPECT_EQ(ReadRows(file), (std::vector<std::string>{"[[1,2]]", "[[]]", "[[3]]"}));
}

TEST(ParquetReaderLegacy, TwoLevelListsHoldTheirElementsDirectly) {
  // optional group a (LIST) { repeated int32 array; }  rows: [7], null, [], [8, 9]
  std::string body = LevelsV1({0, 0, 0, 0, 1}, 1) + LevelsV1({2, 0, 1, 2, 2}, 2) + Le32(7) + Le32(8) + Le32(9);
  std::string file = BuildFile({Group("m", 1, std::nullopt),
                                Group("a", 1, FieldRepetitionType::kOptional, ConvertedType::kList),
                                Leaf("array", Type::kInt32, FieldRepetitionType::kRepeated)},
                               {{{"a", "array"}, Type::kInt32, 5, body}}, 4);
  EXPECT_EQ(ReadRows(file), (std::vector<std::string>{"[[7]]", "[null]", "[[]]", "[[8,9]]"}));
}

TEST(ParquetReaderLegacy, Int96TimestampsBecomeMicroseconds) {
  // Julian day 2440588 is 1970-01-01; nanoseconds of the day are floored to microseconds.
  auto int96 = [](uint64_t nanos, uint32_t day) { return Le64(nanos) + Le32(day); };
  std::string body = LevelsV1({1, 1, 0}, 1) + int96(1500, 2440588) + int96(86399999999000ull, 2440587);
  std::string file = BuildFile({Group("m", 1, std::nullopt), Leaf("t", Type::kInt96, FieldRepetitionType::kOptional)},
                               {{{"t"}, Type::kInt96, 3, body}}, 3);
  EXPECT_EQ(ReadRows(file), (std::vector<std::string>{"[\"1970-01-01T00:00:00.000001Z\"]",
                                                      "[\"1969-12-31T23:59:59.999999Z\"]", "[null]"}));
}

TEST(ParquetReaderLegacy, ConvertedTypesWithoutLogicalTypes) {
  SchemaElement decimal = Leaf("dec", Type::kFixedLenByteArray, FieldRepetitionType::kRequired, ConvertedType::kDecimal);
  decimal.type_length = 5;
  decimal.precision = 10;
  decimal.scale = 2;
  std::string file = BuildFile(
      {Group("m", 5, std::nullopt), Leaf("s", Type::kByteArray, FieldRepetitionType::kRequired, ConvertedType::kUtf8),
       Leaf("d", Type::kInt32, FieldRepetitionType::kRequired, ConvertedType::kDate),
       Leaf("ts", Type::kInt64, FieldRepetitionType::kRequired, ConvertedType::kTimestampMillis),
       Leaf("i8", Type::kInt32, FieldRepetitionType::kRequired, ConvertedType::kInt8), decimal},
      {{{"s"}, Type::kByteArray, 1, Le32(3) + "h\"i"},
       {{"d"}, Type::kInt32, 1, Le32(static_cast<uint32_t>(-1))},
       {{"ts"}, Type::kInt64, 1, Le64(static_cast<uint64_t>(-1))},
       {{"i8"}, Type::kInt32, 1, Le32(static_cast<uint32_t>(-128))},
       {{"dec"}, Type::kFixedLenByteArray, 1, std::string("\xff\xff\xff\xff\x85", 5)}},
      1);
  auto reader = OpenBytes(file);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  EXPECT_EQ((*reader)->schema()->ToString(), "struct<s:string,d:date,ts:timestamp,i8:tinyint,dec:decimal(10,2)>");
  EXPECT_EQ(ReadRows(file), (std::vector<std::string>{
                                "[\"h\\\"i\",\"1969-12-31\",\"1969-12-31T23:59:59.999000Z\",-128,\"-1.23\"]"}));
}

TEST(ParquetReaderLegacy, PagesThatBreakTheirChunkAreErrors) {
  std::string body = LevelsV1({1}, 1) + Le32(5);
  std::string file = BuildFile({Group("m", 1, std::nullopt), Leaf("x", Type::kInt32, FieldRepetitionType::kOptional)},
                               {{{"x"}, Type::kInt32, 1, body}}, 1);
  ASSERT_TRUE(OpenBytes(file).ok());
  // A row group claiming more rows than its pages hold.
  std::string short_pages = BuildFile(
      {Group("m", 1, std::nullopt), Leaf("x", Type::kInt32, FieldRepetitionType::kOptional)},
      {{{"x"}, Type::kInt32, 1, body}}, 2);
  EXPECT_EQ(ReadEverything(short_pages).error_class(), "PARQUET_CORRUPT_FILE");
  // Values the page does not have.
  std::string missing_values = BuildFile(
      {Group("m", 1, std::nullopt), Leaf("x", Type::kInt32, FieldRepetitionType::kOptional)},
      {{{"x"}, Type::kInt32, 1, LevelsV1({1}, 1) + "\x05"}}, 1);
  EXPECT_EQ(ReadEverything(missing_values).error_class(), "PARQUET_CORRUPT_FILE");
  // A definition level above the column's maximum of 1.
  std::string high_levels = BuildFile(
      {Group("m", 1, std::nullopt), Leaf("x", Type::kInt32, FieldRepetitionType::kOptional)},
      {{{"x"}, Type::kInt32, 1, Le32(2) + std::string("\x02\x03", 2) + Le32(5)}}, 1);  // an RLE run of 3
  EXPECT_EQ(ReadEverything(high_levels).error_class(), "PARQUET_CORRUPT_FILE");
}

// A v2 data page whose every entry is null has an empty values section; writers leave it
// uncompressed whatever the chunk's codec, and it reads as that many nulls.
TEST(ParquetReaderLegacy, AnAllNullV2PageUnderACodecReadsAsNulls) {
  for (CompressionCodec codec : {CompressionCodec::kSnappy, CompressionCodec::kZstd, CompressionCodec::kGzip}) {
    SCOPED_TRACE(CodecName(codec));
    std::string file = "PAR1";
    // Three definition levels of 0 as one RLE run (v2 levels carry no length prefix).
    const std::string levels("\x06\x00", 2);
    PageHeader header;
    header.type = PageType::kDataPageV2;
    header.uncompressed_page_size = static_cast<int32_t>(levels.size());
    header.compressed_page_size = header.uncompressed_page_size;
    DataPageHeaderV2 data;
    data.num_values = 3;
    data.num_nulls = 3;
    data.num_rows = 3;
    data.definition_levels_byte_length = static_cast<int32_t>(levels.size());
    header.data_page_header_v2 = data;
    std::string page;
    SerializePageHeader(header, &page);
    page += levels;
    FileMetaData meta;
    meta.schema = {Group("m", 1, std::nullopt), Leaf("x", Type::kInt32, FieldRepetitionType::kOptional)};
    meta.num_rows = 3;
    RowGroup group;
    group.num_rows = 3;
    ColumnChunk column;
    ColumnMetaData cm;
    cm.type = Type::kInt32;
    cm.codec = codec;
    cm.encodings = {Encoding::kPlain, Encoding::kRle};
    cm.path_in_schema = {"x"};
    cm.num_values = 3;
    cm.total_compressed_size = cm.total_uncompressed_size = static_cast<int64_t>(page.size());
    cm.data_page_offset = static_cast<int64_t>(file.size());
    column.file_offset = cm.data_page_offset;
    column.meta_data = cm;
    group.columns.push_back(column);
    meta.row_groups.push_back(group);
    file += page;
    std::string footer;
    SerializeFileMetaData(meta, &footer);
    file += footer + Le32(static_cast<uint32_t>(footer.size())) + "PAR1";
    EXPECT_EQ(ReadRows(file), (std::vector<std::string>{"[null]", "[null]", "[null]"}));
  }
}

// An optional metadata field of another Thrift type than the format's is skipped, as Thrift's
// own readers skip it, instead of failing the file; a required one still fails it.
TEST(ParquetReaderLegacy, AnOptionalMetadataFieldOfAnotherTypeIsSkipped) {
  const std::string marker = "writer-of-another-kind";
  FileMetaData meta;
  meta.schema = {Group("m", 1, std::nullopt), Leaf("x", Type::kInt32, FieldRepetitionType::kOptional)};
  meta.num_rows = 0;
  meta.created_by = marker;
  std::string footer;
  SerializeFileMetaData(meta, &footer);
  size_t at = footer.find(marker);
  ASSERT_NE(at, std::string::npos);
  ASSERT_GE(at, 2u);
  // [field header: delta | binary][length][bytes] becomes [field header: delta | i32][zigzag 1].
  std::string patched = footer.substr(0, at - 2);
  patched.push_back(static_cast<char>((footer[at - 2] & 0xF0) | 0x05));
  patched.push_back('\x02');
  patched += footer.substr(at + marker.size());
  std::string file = "PAR1" + patched + Le32(static_cast<uint32_t>(patched.size())) + "PAR1";
  auto reader = OpenBytes(file);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  EXPECT_FALSE((*reader)->metadata().created_by.has_value());
  EXPECT_EQ((*reader)->metadata().num_rows, 0);
}

// --- files from the writer, then damaged

std::string SampleFile() {
  auto schema = *DataType::Struct({{"id", DataType::Long(), false},
                                   {"name", DataType::String()},
                                   {"tags", DataType::Array(DataType::String())},
                                   {"point", *DataType::Struct({{"x", DataType::Double()}, {"y", DataType::Double()}})}});
  auto id = std::make_unique<Int64Builder>(DataType::Long());
  auto name = std::make_unique<BinaryBuilder>(DataType::String());
  ListBuilder tags(schema->field(2).type);
  StructBuilder point(schema->field(3).type);
  for (int i = 0; i < 200; ++i) {
    id->Append(i);
    if (i % 7 == 0) {
      name->AppendNull();
    } else {
      name->Append("name" + std::to_string(i % 10));
    }
    for (int t = 0; t < i % 3; ++t) static_cast<BinaryBuilder*>(tags.element_builder())->Append("t" + std::to_string(t));
    tags.Append();
    if (i % 5 == 0) {
      point.AppendNull();
    } else {
      static_cast<DoubleBuilder*>(point.field_builder(0))->Append(i * 0.5);
      static_cast<DoubleBuilder*>(point.field_builder(1))->Append(-i);
      point.Append();
    }
  }
  auto batch = *RecordBatch::Make(schema, {id->Finish(), name->Finish(), tags.Finish(), point.Finish()}, 200);
  std::string bytes;
  WriterOptions options;
  options.page_size = 256;  // several pages per column
  auto writer = ParquetWriter::Open(std::make_unique<StringWritableFile>(&bytes), schema, options).value();
  EXPECT_TRUE(writer->Write(*batch).ok());
  EXPECT_TRUE(writer->Close().ok());
  return bytes;
}

TEST(ParquetReader, ProjectsTopLevelAndNestedColumnsInTheOrderAsked) {
  const std::string file = SampleFile();
  ReadOptions options;
  options.columns = {"point.y", "ID"};
  auto reader = OpenBytes(file).value();
  auto batch = reader->ReadAll(options);
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  EXPECT_EQ((*batch)->schema()->ToString(), "struct<point:struct<y:double>,id:bigint>");
  std::vector<std::string> rows = CanonicalRows(**batch);
  EXPECT_EQ(rows[0], "[null,\"0\"]");
  EXPECT_EQ(rows[1], "[{\"y\":-1},\"1\"]");

  options.columns = {"nope"};
  EXPECT_EQ(reader->ReadAll(options).status().error_class(), "UNRESOLVED_COLUMN");
  options.columns = {"id.x"};
  EXPECT_EQ(reader->ReadAll(options).status().error_class(), "UNRESOLVED_COLUMN");
}

TEST(ParquetReader, BatchesNeverExceedTheBatchSize) {
  auto reader = OpenBytes(SampleFile()).value();
  ReadOptions options;
  options.batch_size = 64;
  auto batches = reader->NewBatchReader(options).value();
  std::vector<int64_t> sizes;
  while (true) {
    BatchPtr batch = *batches->Next();
    if (!batch) break;
    sizes.push_back(batch->num_rows());
  }
  EXPECT_EQ(sizes, (std::vector<int64_t>{64, 64, 64, 8}));
}

TEST(ParquetReader, RowGroupStatisticsDecodeToTheColumnsTypes) {
  auto reader = OpenBytes(SampleFile()).value();
  auto stats = reader->RowGroupStatistics(0);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  ASSERT_EQ(stats->size(), 5u);
  const ColumnChunkStatistics& id = (*stats)[0];
  EXPECT_EQ(id.path, (std::vector<std::string>{"id"}));
  ASSERT_TRUE(id.min && id.max);
  EXPECT_EQ(id.min->Value<int64_t>(0), 0);
  EXPECT_EQ(id.max->Value<int64_t>(0), 199);
  const ColumnChunkStatistics& name = (*stats)[1];
  ASSERT_TRUE(name.min && name.max);
  EXPECT_EQ(name.min->View(0), "name0");
  EXPECT_EQ(name.max->View(0), "name9");
  EXPECT_EQ(name.null_count, 29);
  EXPECT_EQ(reader->RowGroupStatistics(1).status().error_class(), "INVALID_ARGUMENT");
}

TEST(ParquetReader, RejectsFilesTooShortOrWithoutMagic) {
  const std::string file = SampleFile();
  EXPECT_EQ(OpenBytes("").status().error_class(), "PARQUET_CORRUPT_FILE");
  EXPECT_EQ(OpenBytes("PAR1PAR1").status().error_class(), "PARQUET_CORRUPT_FILE");
  std::string bad_head = file;
  bad_head[0] = 'X';
  EXPECT_EQ(OpenBytes(bad_head).status().error_class(), "PARQUET_CORRUPT_FILE");
  std::string bad_tail = file;
  bad_tail.back() = 'X';
  EXPECT_EQ(OpenBytes(bad_tail).status().error_class(), "PARQUET_CORRUPT_FILE");
  std::string encrypted = file;
  encrypted.replace(encrypted.size() - 4, 4, "PARE");
  EXPECT_EQ(OpenBytes(encrypted).status().error_class(), "PARQUET_UNSUPPORTED_FEATURE");
}

TEST(ParquetReader, RejectsFootersLongerThanTheFile) {
  std::string file = SampleFile();
  for (uint32_t length : {static_cast<uint32_t>(file.size()), static_cast<uint32_t>(file.size() - 11), 0xFFFFFFFFu}) {
    std::string damaged = file;
    damaged.replace(damaged.size() - 8, 4, Le32(length));
    EXPECT_EQ(OpenBytes(damaged).status().error_class(), "PARQUET_CORRUPT_FILE") << length;
  }
}

TEST(ParquetReader, EveryTruncationIsAnError) {
  const std::string file = SampleFile();
  for (size_t length = 0; length < file.size(); ++length) {
    Status status = ReadEverything(file.substr(0, length));
    EXPECT_FALSE(status.ok()) << "truncated to " << length << " bytes";
  }
}

// The sample file with the header of its first page overwritten.
std::string SampleWithDamagedFirstPage() {
  std::string file = SampleFile();
  auto reader = OpenBytes(file).value();
  const ColumnMetaData& first = *reader->metadata().row_groups[0].columns[0].meta_data;
  const size_t page = static_cast<size_t>(first.dictionary_page_offset.value_or(first.data_page_offset));
  for (size_t i = page; i < page + 6; ++i) file[i] = '\xff';
  return file;
}

TEST(ParquetReader, CorruptPageHeadersAreErrors) {
  const std::string damaged = SampleWithDamagedFirstPage();
  EXPECT_EQ(ReadEverything(damaged).error_class(), "PARQUET_CORRUPT_FILE");
}

// An error met while reading pages names the file and the row group, not only what is wrong.
TEST(ParquetReader, ErrorsWhileReadingNameTheFile) {
  const std::string damaged = SampleWithDamagedFirstPage();
  sluice::testing::TempDir dir("parquet-path");
  const std::string path = dir.Join("damaged.parquet");
  ASSERT_TRUE(LocalFileSystem()->AtomicWrite(path, damaged).ok());
  auto opened = ParquetReader::Open(*LocalFileSystem(), path);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  Status read = (*opened)->ReadAll().status();
  EXPECT_EQ(read.error_class(), "PARQUET_CORRUPT_FILE");
  EXPECT_NE(read.message().find(path + ", row group 0"), std::string_view::npos) << read.ToString();
}

TEST(ParquetReader, NoSingleByteDamageCrashes) {
  // Damage that keeps the structure valid may read as other values; anything else is an error.
  const std::string file = SampleFile();
  for (size_t i = 4; i < file.size() - 8; ++i) {
    for (char mask : {'\x01', '\xff'}) {
      std::string damaged = file;
      damaged[i] = static_cast<char>(damaged[i] ^ mask);
      Status status = ReadEverything(damaged);
      if (!status.ok()) {
        EXPECT_TRUE(status.error_class() == "PARQUET_CORRUPT_FILE" ||
                    status.error_class() == "PARQUET_UNSUPPORTED_FEATURE")
            << status.ToString();
      }
    }
  }
}

}  // namespace
}  // namespace sluice::parquet
