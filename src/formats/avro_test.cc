#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "formats/decoder_test_util.h"
#include "sluice/core/builder.h"
#include "sluice/formats/avro.h"

namespace sluice::formats {
namespace {

// Builds Avro binary datums the way the specification spells them.
class Datum {
 public:
  Datum& Long(int64_t value) {
    uint64_t zigzag = (static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63);
    while (zigzag >= 0x80) {
      bytes_.push_back(static_cast<char>((zigzag & 0x7f) | 0x80));
      zigzag >>= 7;
    }
    bytes_.push_back(static_cast<char>(zigzag));
    return *this;
  }
  Datum& String(std::string_view text) {
    Long(static_cast<int64_t>(text.size()));
    bytes_.append(text);
    return *this;
  }
  Datum& Raw(std::string_view raw) {
    bytes_.append(raw);
    return *this;
  }
  Datum& Double(double value) {
    char raw[8];
    std::memcpy(raw, &value, 8);
    bytes_.append(raw, 8);
    return *this;
  }
  std::string bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

struct Decoded {
  ColumnPtr column;
  DecodeStats stats;
};

Decoded DecodeWith(std::string_view schema_json, const std::vector<std::optional<std::string>>& values) {
  Result<AvroSchemaPtr> schema = ParseAvroSchema(schema_json);
  EXPECT_TRUE(schema.ok()) << schema.status().ToString();
  Result<std::unique_ptr<Decoder>> decoder = MakeAvroDecoder(*schema);
  EXPECT_TRUE(decoder.ok()) << decoder.status().ToString();
  Decoded decoded;
  Result<ColumnPtr> column = (*decoder)->Decode(*testing::BinaryColumn(values), &decoded.stats);
  EXPECT_TRUE(column.ok()) << column.status().ToString();
  decoded.column = *column;
  Status valid = decoded.column->Validate();
  EXPECT_TRUE(valid.ok()) << valid.ToString();
  return decoded;
}

std::string TypeOf(std::string_view schema_json) {
  Result<AvroSchemaPtr> schema = ParseAvroSchema(schema_json);
  if (!schema.ok()) return schema.status().ToString();
  std::string text = (*schema)->type->ToString();
  for (const Field& field : (*schema)->type->fields()) {
    if (!field.nullable) text += " " + field.name + "!";
  }
  return text;
}

constexpr std::string_view kOrderSchema = R"({
  "type": "record", "name": "Order", "namespace": "shop",
  "fields": [
    {"name": "id", "type": "long"},
    {"name": "customer", "type": ["null", "string"]},
    {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID", "SHIPPED"]}},
    {"name": "lines", "type": {"type": "array", "items": {
        "type": "record", "name": "Line", "fields": [
          {"name": "sku", "type": "string"}, {"name": "qty", "type": "int"}]}}},
    {"name": "attrs", "type": {"type": "map", "values": "double"}}
  ]})";

TEST(AvroSchemaTest, MapsRecordsEnumsArraysMapsAndNullableUnions) {
  EXPECT_EQ(TypeOf(kOrderSchema),
            "struct<id:bigint,customer:string,status:string,lines:array<struct<sku:string,qty:int>>,attrs:map<string,double>>"
            " id! status! lines! attrs!");
}

TEST(AvroSchemaTest, MapsLogicalTypes) {
  EXPECT_EQ(TypeOf(R"({"type": "record", "name": "R", "fields": [
      {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}},
      {"name": "big", "type": {"type": "fixed", "name": "F", "size": 16, "logicalType": "decimal", "precision": 38, "scale": 0}},
      {"name": "day", "type": {"type": "int", "logicalType": "date"}},
      {"name": "at_ms", "type": {"type": "long", "logicalType": "timestamp-millis"}},
      {"name": "at_us", "type": {"type": "long", "logicalType": "timestamp-micros"}},
      {"name": "local", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
      {"name": "id", "type": {"type": "string", "logicalType": "uuid"}},
      {"name": "raw", "type": {"type": "fixed", "name": "Hash", "size": 4}},
      {"name": "blob", "type": "bytes"},
      {"name": "odd", "type": {"type": "int", "logicalType": "time-millis"}}]})"),
            "struct<price:decimal(10,2),big:decimal(38,0),day:date,at_ms:timestamp,at_us:timestamp,local:timestamp_ntz,"
            "id:string,raw:binary,blob:binary,odd:int> price! big! day! at_ms! at_us! local! id! raw! blob! odd!");
}

TEST(AvroSchemaTest, AUnionOfSeveralTypesIsAStructWithAFieldPerBranch) {
  EXPECT_EQ(TypeOf(R"({"type": "record", "name": "Envelope", "fields": [{"name": "event", "type": ["null",
      {"type": "record", "name": "com.x.Created", "fields": [{"name": "at", "type": "long"}]},
      {"type": "record", "name": "Deleted", "fields": [{"name": "why", "type": "string"}]}, "string"]}]})"),
            "struct<event:struct<Created:struct<at:bigint>,Deleted:struct<why:string>,string:string>>");
}

TEST(AvroSchemaTest, ANonRecordRootIsWrappedInAValueField) {
  EXPECT_EQ(TypeOf(R"("string")"), "struct<value:string> value!");
  EXPECT_EQ(TypeOf(R"(["null", "long"])"), "struct<value:bigint>");
}

TEST(AvroSchemaTest, NamedTypesAreReferencedByFullOrShortName) {
  EXPECT_EQ(TypeOf(R"({"type": "record", "name": "P", "namespace": "geo", "fields": [
      {"name": "a", "type": {"type": "fixed", "name": "Coord", "size": 8}},
      {"name": "b", "type": "Coord"}, {"name": "c", "type": "geo.Coord"}]})"),
            "struct<a:binary,b:binary,c:binary> a! b! c!");
}

TEST(AvroSchemaTest, RefusesSchemasWithoutAColumnShape) {
  EXPECT_EQ(TypeOf(R"({"type": "record", "name": "Node", "fields": [{"name": "next", "type": ["null", "Node"]}]})"),
            "AVRO_SCHEMA_INVALID: record Node, field next: record Node contains itself; a recursive record has no column type");
  EXPECT_EQ(TypeOf(R"({"type": "record", "name": "R", "fields": [{"name": "x", "type": "Missing"}]})"),
            "AVRO_SCHEMA_INVALID: record R, field x: unknown type \"Missing\"");
  EXPECT_EQ(TypeOf(R"({"type": "record", "name": "R", "fields": [{"name": "x", "type": "null"}]})"),
            "AVRO_SCHEMA_INVALID: record R, field x: a value that is always null has no column type; use a union [\"null\", T]");
  EXPECT_EQ(TypeOf(R"({"type": "bytes", "logicalType": "decimal", "precision": 40})"),
            "AVRO_SCHEMA_INVALID: schema: decimal(40,0) cannot be held: precision must be 1 to 38 and scale 0 to precision");
  EXPECT_EQ(TypeOf(R"(["int", "int"])"),
            "AVRO_SCHEMA_INVALID: schema: a union holds two branches of one type (branches 0 and 1)");
  EXPECT_EQ(TypeOf(R"({"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}, {"name": "a", "type": "int"}]})"),
            "AVRO_SCHEMA_INVALID: record R, field a: the field is defined twice");
  EXPECT_EQ(TypeOf(R"({"type": "enum", "name": "E"})"), "AVRO_SCHEMA_INVALID: enum E: an enum needs \"symbols\"");
  EXPECT_EQ(TypeOf("{"), "AVRO_SCHEMA_INVALID: the schema is not JSON: The JSON document has an improper structure: missing or superfluous commas, braces, missing keys, etc.");
}

std::string OrderDatum() {
  return Datum()
      .Long(42)
      .Long(1).String("ada")  // union branch 1: string
      .Long(1)                // PAID
      .Long(2).String("a-1").Long(3).String("b-2").Long(-1).Long(0)  // two lines
      .Long(-1).Long(12).String("w").Double(2.5).Long(0)  // one map entry in a block with a byte size
      .bytes();
}

TEST(AvroDecoderTest, DecodesARecordIntoItsColumns) {
  Decoded d = DecodeWith(kOrderSchema, {OrderDatum()});
  ASSERT_EQ(d.column->length, 1);
  const Column& row = *d.column;
  EXPECT_EQ(row.children[0]->Value<int64_t>(0), 42);
  EXPECT_EQ(row.children[1]->View(0), "ada");
  EXPECT_EQ(row.children[2]->View(0), "PAID");
  const Column& lines = *row.children[3];
  EXPECT_EQ(lines.offsets, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(lines.children[0]->children[0]->View(1), "b-2");
  EXPECT_EQ(lines.children[0]->children[1]->Value<int32_t>(0), 3);
  EXPECT_EQ(lines.children[0]->children[1]->Value<int32_t>(1), -1);
  const Column& attrs = *row.children[4];
  EXPECT_EQ(attrs.children[0]->View(0), "w");
  EXPECT_EQ(attrs.children[1]->Value<double>(0), 2.5);
  EXPECT_EQ(d.stats.malformed, 0);
}

// Datums that name no writer schema, decoded with the current schema and the earlier ones newest
// first: one written before a trailing field was dropped reads with the schema that had it, an
// int written before the field became long reads as long; a datum no schema reads is malformed.
TEST(AvroDecoderTest, EarlierWriterSchemasDecodeDatumsTheCurrentOneCannot) {
  auto v1 = ParseAvroSchema(R"({"type":"record","name":"R","fields":[{"name":"id","type":"int"},)"
                            R"({"name":"note","type":"string"}]})");
  auto v2 = ParseAvroSchema(R"({"type":"record","name":"R","fields":[{"name":"id","type":"long"}]})");
  ASSERT_TRUE(v1.ok() && v2.ok());
  // zig-zag varints: 5 -> 0x0a, -3 -> 0x05, INT32_MIN -> ff ff ff ff 0f; "x" -> 0x02 'x'.
  const std::vector<std::optional<std::string>> datums = {
      std::string("\x0a", 1), std::string("\x05\x02x", 3), std::string("\xff\xff\xff\xff\x0f\x00", 6),
      std::string("\x0a\x04x", 3), std::nullopt};
  auto with_history = MakeAvroDecoder(std::vector<AvroSchemaPtr>{*v2, *v1}, *v2);
  ASSERT_TRUE(with_history.ok()) << with_history.status().ToString();
  DecodeStats stats;
  auto column = (*with_history)->Decode(*testing::BinaryColumn(datums), &stats);
  ASSERT_TRUE(column.ok()) << column.status().ToString();
  ASSERT_EQ((*column)->length, 5);
  EXPECT_EQ((*column)->type->ToString(), "struct<id:bigint>");
  EXPECT_EQ((*column)->children[0]->Value<int64_t>(0), 5);
  EXPECT_EQ((*column)->children[0]->Value<int64_t>(1), -3) << "read with the earlier schema";
  EXPECT_EQ((*column)->children[0]->Value<int64_t>(2), INT32_MIN);
  EXPECT_TRUE((*column)->IsNull(3)) << "a truncated string reads with neither schema";
  EXPECT_TRUE((*column)->IsNull(4));
  EXPECT_EQ(stats.malformed, 1);
  EXPECT_EQ(stats.malformed_rows, (std::vector<int64_t>{3}));
  // With the current schema alone, the older datums are malformed.
  DecodeStats alone;
  auto current = MakeAvroDecoder(*v2);
  ASSERT_TRUE((*current)->Decode(*testing::BinaryColumn(datums), &alone).ok());
  EXPECT_EQ(alone.malformed_rows, (std::vector<int64_t>{1, 2, 3}));
}

TEST(AvroDecoderTest, TheNullBranchOfAUnionIsNull) {
  std::string datum = Datum().Long(1).Long(0).Long(0).Long(0).Long(0).bytes();
  Decoded d = DecodeWith(kOrderSchema, {datum});
  EXPECT_TRUE(d.column->IsValid(0));
  EXPECT_TRUE(d.column->children[1]->IsNull(0));
  EXPECT_EQ(d.column->children[2]->View(0), "NEW");
}

TEST(AvroDecoderTest, MalformedDatumsBecomeNullRowsWhileTheOthersAreKept) {
  std::string good = OrderDatum();
  std::vector<std::optional<std::string>> rows = {
      good,
      good.substr(0, good.size() - 3),                                   // truncated
      Datum().Long(1).Long(2).bytes(),                                   // union branch 2 of 2
      Datum().Long(1).Long(0).Long(7).Long(0).Long(0).bytes(),           // enum symbol 7 of 3
      Datum().Long(1).Long(0).Long(0).Long(5).String("x").bytes(),       // 5 lines promised, bytes end
      Datum().Long(1).Long(1).Long(-3).bytes(),                          // negative string length
      good + "x",                                                        // a byte left over
      Datum().Raw(std::string(11, '\xff')).bytes(),                      // a varint of 11 bytes
      std::nullopt,                                                      // a tombstone
      good,
  };
  Decoded d = DecodeWith(kOrderSchema, rows);
  ASSERT_EQ(d.column->length, 10);
  EXPECT_EQ(d.column->children[0]->Value<int64_t>(0), 42);
  EXPECT_EQ(d.column->children[0]->Value<int64_t>(9), 42);
  EXPECT_EQ(d.column->children[3]->offsets[10], 4) << "only the two good rows hold lines";
  for (int row = 1; row <= 8; ++row) EXPECT_TRUE(d.column->IsNull(row)) << row;
  EXPECT_EQ(d.stats.malformed, 7);
  EXPECT_EQ(d.stats.malformed_rows, (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(d.stats.rows, 10);
}

TEST(AvroDecoderTest, DecodesLogicalTypes) {
  constexpr std::string_view schema = R"({"type": "record", "name": "R", "fields": [
      {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}},
      {"name": "neg", "type": {"type": "fixed", "name": "D", "size": 3, "logicalType": "decimal", "precision": 6, "scale": 0}},
      {"name": "day", "type": {"type": "int", "logicalType": "date"}},
      {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
      {"name": "local", "type": {"type": "long", "logicalType": "local-timestamp-micros"}}]})";
  std::string datum = Datum()
                          .Long(2).Raw("\x30\x39")  // 12345 -> 123.45
                          .Raw("\xff\xff\x85")      // -123
                          .Long(19782)
                          .Long(1709209815250)
                          .Long(-1)
                          .bytes();
  Decoded d = DecodeWith(schema, {datum});
  EXPECT_EQ(d.column->children[0]->Value<int128_t>(0), 12345);
  EXPECT_EQ(d.column->children[1]->Value<int128_t>(0), -123);
  EXPECT_EQ(d.column->children[2]->Value<int32_t>(0), 19782);
  EXPECT_EQ(d.column->children[3]->Value<int64_t>(0), 1709209815250000);
  EXPECT_EQ(d.column->children[4]->Value<int64_t>(0), -1);
}

TEST(AvroDecoderTest, AMillisecondTimestampThatOverflowsMicrosecondsIsMalformed) {
  Decoded d = DecodeWith(R"({"type": "long", "logicalType": "timestamp-millis"})",
                         {Datum().Long(std::numeric_limits<int64_t>::max() / 10).bytes()});
  EXPECT_TRUE(d.column->IsNull(0));
  EXPECT_EQ(d.stats.malformed, 1);
}

TEST(AvroDecoderTest, UnionOfSeveralTypesSetsExactlyOneField) {
  constexpr std::string_view schema = R"({"type": "record", "name": "E", "fields": [{"name": "event", "type": ["null",
      {"type": "record", "name": "Created", "fields": [{"name": "at", "type": "long"}]}, "string"]}]})";
  Decoded d = DecodeWith(schema, {Datum().Long(1).Long(5).bytes(), Datum().Long(2).String("gone").bytes(),
                                  Datum().Long(0).bytes()});
  const Column& event = *d.column->children[0];
  EXPECT_EQ(event.children[0]->children[0]->Value<int64_t>(0), 5);
  EXPECT_TRUE(event.children[1]->IsNull(0));
  EXPECT_TRUE(event.children[0]->IsNull(1));
  EXPECT_EQ(event.children[1]->View(1), "gone");
  EXPECT_TRUE(event.IsNull(2));
}

TEST(AvroDecoderTest, ANonRecordDatumFillsTheValueField) {
  Decoded d = DecodeWith(R"(["null", "string"])", {Datum().Long(1).String("hi").bytes(), Datum().Long(0).bytes()});
  EXPECT_EQ(d.column->children[0]->View(0), "hi");
  EXPECT_TRUE(d.column->IsValid(1));
  EXPECT_TRUE(d.column->children[0]->IsNull(1));
}

// An Avro string is UTF-8 by the specification: other bytes make the datum malformed (null and
// counted), never a string column holding them. Bytes are bytes.
TEST(AvroDecoderTest, AStringThatIsNotUtf8IsMalformed) {
  std::vector<std::optional<std::string>> rows = {Datum().String("caf\xC3\xA9").bytes(), Datum().String("\xFF\x41").bytes(),
                                                  Datum().String("ok\xC3").bytes(), Datum().String("\xED\xA0\x80").bytes(),
                                                  Datum().String("fine").bytes()};
  Decoded strings = DecodeWith(R"("string")", rows);
  EXPECT_EQ(strings.stats.malformed_rows, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(strings.column->children[0]->View(0), "caf\xC3\xA9");
  EXPECT_EQ(strings.column->children[0]->View(4), "fine");
  Decoded bytes = DecodeWith(R"("bytes")", rows);
  EXPECT_EQ(bytes.stats.malformed, 0);
  EXPECT_EQ(bytes.column->children[0]->View(1), "\xFF\x41");
}

TEST(AvroDecoderTest, ABooleanByteOtherThanZeroOrOneIsMalformed) {
  Decoded d = DecodeWith(R"("boolean")", {std::string("\x01", 1), std::string("\x02", 1), std::string("\x00", 1)});
  EXPECT_EQ(d.column->children[0]->Value<uint8_t>(0), 1);
  EXPECT_TRUE(d.column->IsNull(1));
  EXPECT_EQ(d.column->children[0]->Value<uint8_t>(2), 0);
}

}  // namespace
}  // namespace sluice::formats

namespace sluice::formats {
namespace {

Decoded ResolveWith(std::string_view writer_json, std::string_view reader_json, const std::vector<std::optional<std::string>>& values) {
  Result<AvroSchemaPtr> writer = ParseAvroSchema(writer_json);
  Result<AvroSchemaPtr> reader = ParseAvroSchema(reader_json);
  EXPECT_TRUE(writer.ok() && reader.ok());
  Result<std::unique_ptr<Decoder>> decoder = MakeAvroDecoder(*writer, *reader);
  EXPECT_TRUE(decoder.ok()) << decoder.status().ToString();
  Decoded decoded;
  decoded.column = *(*decoder)->Decode(*testing::BinaryColumn(values), &decoded.stats);
  Status valid = decoded.column->Validate();
  EXPECT_TRUE(valid.ok()) << valid.ToString();
  EXPECT_TRUE(decoded.column->type->Equals(*(*reader)->type));
  return decoded;
}

Status ResolutionError(std::string_view writer_json, std::string_view reader_json) {
  return MakeAvroDecoder(*ParseAvroSchema(writer_json), *ParseAvroSchema(reader_json)).status();
}

constexpr std::string_view kWriterV1 = R"({"type": "record", "name": "User", "fields": [
    {"name": "id", "type": "int"},
    {"name": "legacy", "type": {"type": "array", "items": "string"}},
    {"name": "score", "type": "float"},
    {"name": "tier", "type": {"type": "enum", "name": "Tier", "symbols": ["GOLD", "TIN"]}},
    {"name": "note", "type": ["null", "string"]}]})";

constexpr std::string_view kReaderV2 = R"({"type": "record", "name": "User", "fields": [
    {"name": "note", "type": ["null", "bytes"]},
    {"name": "id", "type": "long"},
    {"name": "score", "type": "double"},
    {"name": "tier", "type": {"type": "enum", "name": "Tier", "symbols": ["GOLD", "SILVER"]}},
    {"name": "email", "type": ["null", "string"], "default": null},
    {"name": "country", "type": "string", "default": "NL"},
    {"name": "visits", "type": "long", "default": 0},
    {"name": "tags", "type": {"type": "array", "items": "string"}, "default": []}]})";

TEST(AvroResolutionTest, PromotesReordersSkipsRemovedFieldsAndFillsDefaults) {
  std::string datum = Datum().Long(7).Long(1).String("old").Long(0).Raw(std::string("\x00\x00\x20\x40", 4)).Long(0)
                          .Long(1).String("hi").bytes();
  Decoded d = ResolveWith(kWriterV1, kReaderV2, {datum});
  ASSERT_TRUE(d.column->IsValid(0));
  const Column& row = *d.column;
  EXPECT_EQ(row.children[0]->View(0), "hi") << "string read as bytes";
  EXPECT_EQ(row.children[1]->Value<int64_t>(0), 7) << "int read as long";
  EXPECT_EQ(row.children[2]->Value<double>(0), 2.5) << "float read as double";
  EXPECT_EQ(row.children[3]->View(0), "GOLD");
  EXPECT_TRUE(row.children[4]->IsNull(0));
  EXPECT_EQ(row.children[5]->View(0), "NL");
  EXPECT_EQ(row.children[6]->Value<int64_t>(0), 0);
  EXPECT_EQ(row.children[7]->offsets, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(d.stats.malformed, 0);
}

TEST(AvroResolutionTest, AnEnumSymbolTheReaderLacksMakesOnlyThatDatumMalformed) {
  std::string tin = Datum().Long(1).Long(0).Raw(std::string(4, '\0')).Long(1).Long(0).bytes();
  std::string gold = Datum().Long(2).Long(0).Raw(std::string(4, '\0')).Long(0).Long(0).bytes();
  Decoded d = ResolveWith(kWriterV1, kReaderV2, {tin, gold});
  EXPECT_TRUE(d.column->IsNull(0));
  EXPECT_EQ(d.column->children[1]->Value<int64_t>(1), 2);
  EXPECT_EQ(d.stats.malformed_rows, std::vector<int64_t>{0});
}

TEST(AvroResolutionTest, AWriterValueLandsInTheMatchingBranchOfAReaderUnion) {
  constexpr std::string_view writer = R"({"type": "record", "name": "R", "fields": [{"name": "v", "type": "int"}]})";
  constexpr std::string_view reader = R"({"type": "record", "name": "R", "fields": [{"name": "v", "type": ["null", "string", "long"]}]})";
  Decoded d = ResolveWith(writer, reader, {Datum().Long(-5).bytes()});
  const Column& v = *d.column->children[0];
  EXPECT_TRUE(v.IsValid(0));
  EXPECT_TRUE(v.children[0]->IsNull(0));
  EXPECT_EQ(v.children[1]->Value<int64_t>(0), -5);
}

TEST(AvroResolutionTest, WriterUnionBranchesTheReaderLacksAreMalformedWhenUsed) {
  constexpr std::string_view writer = R"({"type": "record", "name": "R", "fields": [{"name": "v", "type": ["null", "int", "boolean"]}]})";
  constexpr std::string_view reader = R"({"type": "record", "name": "R", "fields": [{"name": "v", "type": ["null", "long"]}]})";
  Decoded d = ResolveWith(writer, reader, {Datum().Long(1).Long(3).bytes(), Datum().Long(2).Raw(std::string("\x01", 1)).bytes(),
                                           Datum().Long(0).bytes()});
  EXPECT_EQ(d.column->children[0]->Value<int64_t>(0), 3);
  EXPECT_TRUE(d.column->IsNull(1));
  EXPECT_TRUE(d.column->IsValid(2));
  EXPECT_TRUE(d.column->children[0]->IsNull(2));
  EXPECT_EQ(d.stats.malformed_rows, std::vector<int64_t>{1});
}

TEST(AvroResolutionTest, BytesReadAsAStringMustBeUtf8) {
  Decoded d = ResolveWith(R"("bytes")", R"("string")", {Datum().String("ok").bytes(), Datum().String("\xFE").bytes()});
  EXPECT_EQ(d.column->children[0]->View(0), "ok");
  EXPECT_EQ(d.stats.malformed_rows, std::vector<int64_t>{1});
}

TEST(AvroResolutionTest, RefusesSchemasThatCannotBeResolved) {
  EXPECT_EQ(ResolutionError(kWriterV1, R"({"type": "record", "name": "User", "fields": [{"name": "age", "type": "int"}]})").ToString(),
            "AVRO_SCHEMA_INVALID: age: the writer's schema cannot be read as the reader's: the writer lacks this field and the "
            "reader gives no default");
  EXPECT_EQ(ResolutionError(kWriterV1, R"({"type": "record", "name": "User", "fields": [{"name": "id", "type": "string"}]})").ToString(),
            "AVRO_SCHEMA_INVALID: id: the writer's schema cannot be read as the reader's: the types differ and do not promote");
  EXPECT_EQ(ResolutionError(R"({"type": "record", "name": "R", "fields": [{"name": "v", "type": "long"}]})",
                            R"({"type": "record", "name": "R", "fields": [{"name": "v", "type": "int"}]})").error_class(),
            "AVRO_SCHEMA_INVALID") << "long does not narrow to int";
}

TEST(AvroSchemaTest, NamedTypesMayComeFromReferencedSchemas) {
  std::vector<std::string> references = {R"({"type": "enum", "name": "shop.Status", "symbols": ["NEW", "PAID"]})"};
  Result<AvroSchemaPtr> schema = ParseAvroSchema(
      R"({"type": "record", "name": "Order", "namespace": "shop", "fields": [{"name": "status", "type": "Status"}]})", references);
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  EXPECT_EQ((*schema)->type->ToString(), "struct<status:string>");
  std::unique_ptr<Decoder> decoder = MakeAvroDecoder(*schema).value();
  ColumnPtr column = *decoder->Decode(*testing::BinaryColumn({Datum().Long(1).bytes()}), nullptr);
  EXPECT_EQ(column->children[0]->View(0), "PAID");
}

}  // namespace
}  // namespace sluice::formats
