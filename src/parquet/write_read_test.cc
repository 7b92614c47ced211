// Files written by ParquetWriter read back by ParquetReader with identical values.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "sluice/core/builder.h"
#include "sluice/core/compute.h"
#include "sluice/parquet/reader.h"
#include "sluice/parquet/writer.h"
#include "testing/memory_files.h"

namespace sluice::parquet {
namespace {

using sluice::testing::StringRandomAccessFile;
using sluice::testing::StringWritableFile;

// Random values of any type; `null_percent` of the nullable positions are null.
class RandomData {
 public:
  RandomData(uint32_t seed, int null_percent, int max_string = 12)
      : rng_(seed), null_percent_(null_percent), max_string_(max_string) {}

  void Append(ColumnBuilder* b, bool nullable) {
    if (nullable && static_cast<int>(rng_() % 100) < null_percent_) {
      b->AppendNull();
      return;
    }
    const DataType& t = *b->type();
    switch (t.id()) {
      case TypeId::kBoolean: static_cast<BooleanBuilder*>(b)->Append(rng_() % 2); break;
      case TypeId::kByte: static_cast<Int8Builder*>(b)->Append(static_cast<int8_t>(rng_())); break;
      case TypeId::kShort: static_cast<Int16Builder*>(b)->Append(static_cast<int16_t>(rng_())); break;
      case TypeId::kInteger:
      case TypeId::kDate: static_cast<Int32Builder*>(b)->Append(static_cast<int32_t>(rng_() % 40000) - 20000); break;
      case TypeId::kLong:
      case TypeId::kTimestamp:
      case TypeId::kTimestampNtz: static_cast<Int64Builder*>(b)->Append(static_cast<int64_t>(rng_())); break;
      case TypeId::kFloat: static_cast<FloatBuilder*>(b)->Append(static_cast<float>(rng_() % 1000) / 8.0f); break;
      case TypeId::kDouble: static_cast<DoubleBuilder*>(b)->Append(static_cast<double>(rng_()) / 3.0); break;
      case TypeId::kDecimal: {
        int128_t limit = 1;
        for (int i = 0; i < t.precision(); ++i) limit *= 10;
        int128_t v = (static_cast<int128_t>(rng_()) << 64 | rng_()) % limit;
        if (v < 0) v = -v;
        static_cast<DecimalBuilder*>(b)->Append(rng_() % 2 ? v : -v);
        break;
      }
      case TypeId::kString:
      case TypeId::kBinary: {
        std::string s(rng_() % (max_string_ + 1), '\0');
        for (char& c : s) c = static_cast<char>(t.id() == TypeId::kString ? 'a' + rng_() % 26 : rng_());
        static_cast<BinaryBuilder*>(b)->Append(s);
        break;
      }
      case TypeId::kStruct: {
        auto* sb = static_cast<StructBuilder*>(b);
        for (int i = 0; i < sb->num_fields(); ++i) Append(sb->field_builder(i), t.field(i).nullable);
        sb->Append();
        break;
      }
      case TypeId::kArray: {
        auto* lb = static_cast<ListBuilder*>(b);
        int n = static_cast<int>(rng_() % 4);
        for (int i = 0; i < n; ++i) Append(lb->element_builder(), t.contains_null());
        lb->Append();
        break;
      }
      case TypeId::kMap: {
        auto* lb = static_cast<ListBuilder*>(b);
        int n = static_cast<int>(rng_() % 4);
        for (int i = 0; i < n; ++i) {
          Append(lb->key_builder(), false);
          Append(lb->value_builder(), t.value_contains_null());
        }
        lb->Append();
        break;
      }
    }
  }

  BatchPtr Batch(const TypePtr& schema, int64_t rows) {
    std::vector<ColumnPtr> columns;
    for (const Field& f : schema->fields()) {
      auto b = ColumnBuilder::Make(f.type);
      for (int64_t r = 0; r < rows; ++r) Append(b.get(), f.nullable);
      columns.push_back(b->Finish());
    }
    return *RecordBatch::Make(schema, columns, rows);
  }

 private:
  std::mt19937_64 rng_;
  int null_percent_;
  int max_string_;
};

std::string Write(const TypePtr& schema, const std::vector<BatchPtr>& batches, const WriterOptions& options) {
  std::string bytes;
  auto writer = ParquetWriter::Open(std::make_unique<StringWritableFile>(&bytes), schema, options);
  EXPECT_TRUE(writer.ok()) << writer.status().ToString();
  for (const BatchPtr& b : batches) EXPECT_TRUE((*writer)->Write(*b).ok());
  EXPECT_TRUE((*writer)->Close().ok());
  return bytes;
}

void ExpectSameRows(const std::vector<BatchPtr>& written, const RecordBatch& read) {
  std::vector<BatchPtr> all = written;
  Result<BatchPtr> expected = Concatenate(all);
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  ASSERT_EQ(read.num_rows(), (*expected)->num_rows());
  ASSERT_EQ(read.num_columns(), (*expected)->num_columns());
  for (int c = 0; c < read.num_columns(); ++c) {
    for (int64_t r = 0; r < read.num_rows(); ++r) {
      ASSERT_EQ(FormatValue(*read.column(c), r), FormatValue(*(*expected)->column(c), r))
          << "column " << read.field(c).name << " row " << r;
    }
  }
}

void RoundTrip(const TypePtr& schema, const std::vector<BatchPtr>& batches, const WriterOptions& options) {
  std::string file = Write(schema, batches, options);
  auto reader = ParquetReader::Open(std::make_unique<StringRandomAccessFile>(file));
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  EXPECT_TRUE((*reader)->schema()->Equals(*schema)) << (*reader)->schema()->ToString();
  Result<BatchPtr> read = (*reader)->ReadAll();
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ExpectSameRows(batches, **read);
}

TypePtr EveryType() {
  Result<TypePtr> t = ParseTypeString(
      "struct<b:boolean,y:tinyint,s:smallint,i:int,l:bigint,f:float,d:double,d5:decimal(5,2),d18:decimal(18,3),"
      "d38:decimal(38,6),d20:decimal(20,0),str:string,bin:binary,dt:date,ts:timestamp,ntz:timestamp_ntz,"
      "st:struct<x:int,inner:struct<z:string>>,arr:array<bigint>,nested:array<array<string>>,"
      "m:map<string,struct<v:double>>,sa:array<struct<k:int,tags:array<string>>>>");
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return *t;
}

TEST(WriteReadTest, EveryTypeRoundTripsWithAndWithoutNulls) {
  TypePtr schema = EveryType();
  for (int null_percent : {0, 20, 100}) {
    RandomData data(static_cast<uint32_t>(null_percent) + 1, null_percent);
    std::vector<BatchPtr> batches = {data.Batch(schema, 1000), data.Batch(schema, 77)};
    RoundTrip(schema, batches, WriterOptions{});
  }
}

TEST(WriteReadTest, SmallPagesRowGroupsAndEveryCodecRoundTrip) {
  TypePtr schema = EveryType();
  RandomData data(99, 10);
  std::vector<BatchPtr> batches = {data.Batch(schema, 3000), data.Batch(schema, 5000)};
  for (CompressionCodec codec : {CompressionCodec::kUncompressed, CompressionCodec::kSnappy, CompressionCodec::kGzip,
                                 CompressionCodec::kZstd}) {
    WriterOptions options;
    options.compression = codec;
    options.page_size = 512;
    options.row_group_size = 64 * 1024;
    options.dictionary_size_limit = 2000;
    RoundTrip(schema, batches, options);
  }
  WriterOptions plain;
  plain.dictionary = false;
  RoundTrip(schema, batches, plain);
}

TEST(WriteReadTest, RequiredFieldsAndNonNullElementsRoundTrip) {
  std::vector<Field> fields = {
      Field{"id", DataType::Long(), false, "{}"},
      Field{"tags", DataType::Array(DataType::String(), false), false, "{}"},
      Field{"attrs", DataType::Map(DataType::String(), DataType::Integer(), false), true, "{}"},
      Field{"point", *DataType::Struct({Field{"x", DataType::Double(), false, "{}"},
                                        Field{"y", DataType::Double(), true, "{}"}}),
            true, "{}"},
  };
  TypePtr schema = *DataType::Struct(fields);
  RandomData data(5, 30);
  RoundTrip(schema, {data.Batch(schema, 2000)}, WriterOptions{});
}

TEST(WriteReadTest, VeryLongStringsRoundTrip) {
  TypePtr schema = *ParseTypeString("struct<s:string,b:binary>");
  RandomData data(11, 5, 200000);
  WriterOptions options;
  options.page_size = 64 * 1024;
  RoundTrip(schema, {data.Batch(schema, 40)}, options);
}

}  // namespace
}  // namespace sluice::parquet
