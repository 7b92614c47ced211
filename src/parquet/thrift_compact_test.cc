#include "parquet/thrift_compact.h"

#include <gtest/gtest.h>

#include <string>

#include "sluice/core/error_classes.h"
#include "sluice/parquet/metadata.h"

namespace sluice::parquet {
namespace {

using thrift::CompactReader;
using thrift::CompactWriter;
using thrift::CType;

std::string Bytes(std::initializer_list<int> bytes) {
  std::string s;
  for (int b : bytes) s.push_back(static_cast<char>(b));
  return s;
}

TEST(ThriftCompactTest, FieldHeadersUseShortFormForSmallDeltasAndLongFormOtherwise) {
  std::string out;
  CompactWriter w(&out);
  w.StructBegin();
  w.FieldI32(1, 3);    // delta 1: 0x15, zigzag(3) = 6
  w.FieldI32(17, -1);  // delta 16: long form 0x05, zigzag(17) = 34, zigzag(-1) = 1
  w.FieldBool(18, true);
  w.StructEnd();
  EXPECT_EQ(out, Bytes({0x15, 0x06, 0x05, 0x22, 0x01, 0x11, 0x00}));

  CompactReader r(out);
  ASSERT_TRUE(r.StructBegin().ok());
  int16_t id;
  CType type;
  int32_t v;
  ASSERT_TRUE(r.ReadFieldHeader(&id, &type).ok());
  EXPECT_EQ(id, 1);
  ASSERT_TRUE(r.ReadI32(&v).ok());
  EXPECT_EQ(v, 3);
  ASSERT_TRUE(r.ReadFieldHeader(&id, &type).ok());
  EXPECT_EQ(id, 17);
  ASSERT_TRUE(r.ReadI32(&v).ok());
  EXPECT_EQ(v, -1);
  ASSERT_TRUE(r.ReadFieldHeader(&id, &type).ok());
  EXPECT_EQ(id, 18);
  EXPECT_EQ(type, CType::kBoolTrue);
  ASSERT_TRUE(r.ReadFieldHeader(&id, &type).ok());
  EXPECT_EQ(type, CType::kStop);
  EXPECT_EQ(r.remaining(), 0u);
}

TEST(ThriftCompactTest, Int64ExtremesRoundTrip) {
  for (int64_t value : {INT64_MIN, INT64_MAX, int64_t{0}, int64_t{-1}, int64_t{1} << 40}) {
    std::string out;
    CompactWriter w(&out);
    w.I64(value);
    CompactReader r(out);
    int64_t back;
    ASSERT_TRUE(r.ReadI64(&back).ok());
    EXPECT_EQ(back, value);
  }
}

TEST(ThriftCompactTest, LongListsUseTheVarintSize) {
  std::string out;
  CompactWriter w(&out);
  w.ListBegin(CType::kI32, 20);
  for (int i = 0; i < 20; ++i) w.I32(i);
  EXPECT_EQ(static_cast<uint8_t>(out[0]), 0xF5);
  CompactReader r(out);
  CType element;
  uint32_t size;
  ASSERT_TRUE(r.ReadListHeader(&element, &size).ok());
  EXPECT_EQ(size, 20u);
  EXPECT_EQ(element, CType::kI32);
}

TEST(ThriftCompactTest, ListLongerThanTheInputIsCorrupt) {
  std::string in = Bytes({0xF5, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F});  // 2^32-1 elements, no data
  CompactReader r(in);
  CType element;
  uint32_t size;
  Status s = r.ReadListHeader(&element, &size);
  EXPECT_EQ(s.error_class(), errors::kParquetCorruptFile);
}

TEST(ThriftCompactTest, BinaryLongerThanTheInputIsCorrupt) {
  std::string in = Bytes({0x7F, 'a', 'b'});
  CompactReader r(in);
  std::string value;
  EXPECT_EQ(r.ReadBinary(&value).error_class(), errors::kParquetCorruptFile);
}

TEST(ThriftCompactTest, DeepNestingIsRejectedNotRecursedInto) {
  std::string in;
  for (int i = 0; i < 10000; ++i) in.push_back(0x1C);  // field 1 of type struct, nested forever
  CompactReader r(in);
  EXPECT_EQ(r.Skip(CType::kStruct).error_class(), errors::kParquetCorruptFile);
}

TEST(ThriftCompactTest, OverlongVarintIsCorrupt) {
  std::string in(11, static_cast<char>(0x80));
  CompactReader r(in);
  int64_t v;
  EXPECT_EQ(r.ReadI64(&v).error_class(), errors::kParquetCorruptFile);
}

FileMetaData SampleFileMetaData() {
  FileMetaData f;
  f.version = 1;
  f.num_rows = 3;
  f.created_by = "sluice version 0.1.0";
  SchemaElement root;
  root.name = "spark_schema";
  root.num_children = 2;
  SchemaElement id;
  id.name = "id";
  id.type = Type::kInt64;
  id.repetition_type = FieldRepetitionType::kRequired;
  SchemaElement amount;
  amount.name = "amount";
  amount.type = Type::kFixedLenByteArray;
  amount.type_length = 16;
  amount.repetition_type = FieldRepetitionType::kOptional;
  amount.converted_type = ConvertedType::kDecimal;
  amount.precision = 38;
  amount.scale = 4;
  amount.logical_type = LogicalType::Decimal(38, 4);
  SchemaElement ts;
  ts.name = "ts";
  ts.type = Type::kInt64;
  ts.repetition_type = FieldRepetitionType::kOptional;
  ts.logical_type = LogicalType::Timestamp(false, TimeUnit::kNanos);
  SchemaElement tiny;
  tiny.name = "tiny";
  tiny.type = Type::kInt32;
  tiny.repetition_type = FieldRepetitionType::kOptional;
  tiny.converted_type = ConvertedType::kInt8;
  tiny.logical_type = LogicalType::Integer(8, true);
  f.schema = {root, id, amount, ts, tiny};

  RowGroup g;
  g.num_rows = 3;
  g.total_byte_size = 100;
  g.file_offset = 4;
  g.total_compressed_size = 90;
  g.ordinal = 0;
  ColumnChunk c;
  c.file_offset = 0;
  ColumnMetaData& m = c.meta_data.emplace();
  m.type = Type::kInt64;
  m.encodings = {Encoding::kPlain, Encoding::kRle, Encoding::kRleDictionary};
  m.path_in_schema = {"id"};
  m.codec = CompressionCodec::kSnappy;
  m.num_values = 3;
  m.total_uncompressed_size = 50;
  m.total_compressed_size = 45;
  m.data_page_offset = 30;
  m.dictionary_page_offset = 4;
  Statistics& st = m.statistics.emplace();
  st.null_count = 0;
  st.min_value = std::string("\x01\0\0\0\0\0\0\0", 8);
  st.max_value = std::string("\x03\0\0\0\0\0\0\0", 8);
  m.encoding_stats = {{PageType::kDictionaryPage, Encoding::kPlain, 1}, {PageType::kDataPage, Encoding::kRleDictionary, 1}};
  g.columns = {c};
  f.row_groups = {g};
  f.key_value_metadata = {{"a", "1"}, {"no value", std::nullopt}};
  f.column_orders = {ColumnOrder::kTypeDefinedOrder, ColumnOrder::kTypeDefinedOrder};
  return f;
}

TEST(MetadataTest, FileMetaDataRoundTrips) {
  FileMetaData f = SampleFileMetaData();
  std::string bytes;
  SerializeFileMetaData(f, &bytes);
  Result<FileMetaData> back = ParseFileMetaData(bytes);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, f);
}

TEST(MetadataTest, EveryTruncationOfAFooterIsAnErrorNotACrash) {
  std::string bytes;
  SerializeFileMetaData(SampleFileMetaData(), &bytes);
  for (size_t n = 0; n < bytes.size(); ++n) {
    Result<FileMetaData> r = ParseFileMetaData(std::string_view(bytes).substr(0, n));
    ASSERT_FALSE(r.ok()) << "prefix of " << n << " bytes parsed";
    EXPECT_EQ(r.status().error_class(), errors::kParquetCorruptFile);
  }
}

TEST(MetadataTest, FlippedBytesNeverCrash) {
  std::string bytes;
  SerializeFileMetaData(SampleFileMetaData(), &bytes);
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string copy = bytes;
      copy[i] = static_cast<char>(copy[i] ^ (1 << bit));
      Result<FileMetaData> r = ParseFileMetaData(copy);
      if (!r.ok()) {
        EXPECT_EQ(r.status().error_class(), errors::kParquetCorruptFile);
      }
    }
  }
}

TEST(MetadataTest, MissingRequiredFieldIsNamed) {
  std::string bytes;
  CompactWriter w(&bytes);
  w.StructBegin();
  w.FieldI32(1, 1);
  w.StructEnd();
  Result<FileMetaData> r = ParseFileMetaData(bytes);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'schema'"), std::string_view::npos) << r.status().ToString();
}

TEST(MetadataTest, UnknownFieldsAndUnionMembersAreSkipped) {
  std::string bytes;
  CompactWriter w(&bytes);
  w.StructBegin();
  w.FieldI32(1, 2);
  w.FieldListBegin(2, CType::kStruct, 1);
  w.StructBegin();
  w.FieldBinary(4, "root");
  w.FieldStructBegin(10);  // LogicalType
  w.FieldStructBegin(16);  // VARIANT, not modelled
  w.FieldI8(1, 1);
  w.StructEnd();
  w.StructEnd();
  w.FieldI64(30, 7);  // a field from the future
  w.StructEnd();
  w.FieldI64(3, 0);
  w.FieldListBegin(4, CType::kStruct, 0);
  w.FieldListBegin(7, CType::kStruct, 1);
  w.StructBegin();
  w.FieldStructBegin(9);  // an unknown ColumnOrder
  w.StructEnd();
  w.StructEnd();
  w.FieldBinary(100, "future");
  w.StructEnd();
  Result<FileMetaData> r = ParseFileMetaData(bytes);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->version, 2);
  ASSERT_EQ(r->schema.size(), 1u);
  ASSERT_TRUE(r->schema[0].logical_type.has_value());
  EXPECT_EQ(r->schema[0].logical_type->kind, LogicalType::Kind::kOther);
  EXPECT_EQ(r->column_orders, std::vector<ColumnOrder>{ColumnOrder::kUnknown});
}

TEST(MetadataTest, PageHeaderRoundTripsAndReportsItsSize) {
  PageHeader h;
  h.type = PageType::kDataPage;
  h.uncompressed_page_size = 1000;
  h.compressed_page_size = 400;
  DataPageHeader& d = h.data_page_header.emplace();
  d.num_values = 77;
  d.encoding = Encoding::kRleDictionary;
  d.statistics.emplace().null_count = 5;
  std::string bytes;
  SerializePageHeader(h, &bytes);
  size_t header_size = bytes.size();
  bytes += "page data follows";
  size_t consumed = 0;
  Result<PageHeader> back = ParsePageHeader(bytes, &consumed);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, h);
  EXPECT_EQ(consumed, header_size);

  PageHeader v2;
  v2.type = PageType::kDataPageV2;
  DataPageHeaderV2& dv2 = v2.data_page_header_v2.emplace();
  dv2.num_values = 10;
  dv2.num_nulls = 2;
  dv2.num_rows = 8;
  dv2.definition_levels_byte_length = 3;
  dv2.is_compressed = false;
  PageHeader dict;
  dict.type = PageType::kDictionaryPage;
  dict.dictionary_page_header.emplace().num_values = 9;
  for (const PageHeader& page : {v2, dict}) {
    std::string b;
    SerializePageHeader(page, &b);
    Result<PageHeader> r = ParsePageHeader(b, &consumed);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(*r, page);
  }
}

TEST(MetadataTest, NamesFollowParquetThrift) {
  EXPECT_EQ(TypeName(Type::kFixedLenByteArray), "FIXED_LEN_BYTE_ARRAY");
  EXPECT_EQ(EncodingName(Encoding::kRleDictionary), "RLE_DICTIONARY");
  EXPECT_EQ(CodecName(CompressionCodec::kZstd), "ZSTD");
  EXPECT_EQ(CodecName(static_cast<CompressionCodec>(42)), "CODEC_42");
  EXPECT_EQ(ConvertedTypeName(ConvertedType::kTimestampMicros), "TIMESTAMP_MICROS");
  EXPECT_EQ(LogicalTypeToString(LogicalType::Timestamp(true, TimeUnit::kMicros)), "TIMESTAMP(MICROS,true)");
  EXPECT_EQ(LogicalTypeToString(LogicalType::Decimal(10, 2)), "DECIMAL(10,2)");
}

}  // namespace
}  // namespace sluice::parquet
