#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "formats/decoder_test_util.h"
#include "sluice/core/builder.h"
#include "sluice/formats/json.h"

namespace sluice::formats {
namespace {

struct Decoded {
  ColumnPtr column;
  DecodeStats stats;
};

Decoded DecodeWith(std::string_view schema, const std::vector<std::optional<std::string>>& values) {
  Result<TypePtr> type = JsonSchemaToType(schema);
  EXPECT_TRUE(type.ok()) << type.status().ToString();
  Result<std::unique_ptr<Decoder>> decoder = MakeJsonDecoder(*type);
  EXPECT_TRUE(decoder.ok()) << decoder.status().ToString();
  Decoded decoded;
  Result<ColumnPtr> column = (*decoder)->Decode(*testing::BinaryColumn(values), &decoded.stats);
  EXPECT_TRUE(column.ok()) << column.status().ToString();
  decoded.column = *column;
  EXPECT_TRUE(decoded.column->Validate().ok());
  return decoded;
}

constexpr std::string_view kUserSchema = R"({
  "type": "object",
  "properties": {
    "id": {"type": "integer"},
    "name": {"type": "string"},
    "score": {"type": "number"},
    "active": {"type": "boolean"}
  },
  "required": ["id"]
})";

TEST(JsonDecoderTest, DecodesScalarsIntoTheirColumns) {
  Decoded d = DecodeWith(kUserSchema, {R"({"id": 7, "name": "ada", "score": 1.5, "active": true})"});
  ASSERT_EQ(d.column->length, 1);
  EXPECT_EQ(d.column->children[0]->Value<int64_t>(0), 7);
  EXPECT_EQ(d.column->children[1]->View(0), "ada");
  EXPECT_EQ(d.column->children[2]->Value<double>(0), 1.5);
  EXPECT_EQ(d.column->children[3]->Value<uint8_t>(0), 1);
  EXPECT_EQ(d.stats.rows, 1);
  EXPECT_EQ(d.stats.malformed, 0);
}

TEST(JsonDecoderTest, MalformedDocumentsBecomeNullRowsAndAreCounted) {
  Decoded d = DecodeWith(kUserSchema, {R"({"id": 1})", "{not json", "[1,2]", R"({"id": 2})", "", "42"});
  ASSERT_EQ(d.column->length, 6);
  EXPECT_TRUE(d.column->IsValid(0));
  EXPECT_TRUE(d.column->IsNull(1));
  EXPECT_TRUE(d.column->IsNull(2));
  EXPECT_TRUE(d.column->IsValid(3));
  EXPECT_TRUE(d.column->IsNull(4));
  EXPECT_TRUE(d.column->IsNull(5));
  EXPECT_TRUE(d.column->children[1]->IsNull(1)) << "a null row is null in every field";
  EXPECT_EQ(d.stats.malformed, 4);
  EXPECT_EQ(d.stats.malformed_rows, (std::vector<int64_t>{1, 2, 4, 5}));
}

// Bytes that are not UTF-8, in a value, a key or a string kept as JSON text, make the record
// malformed: no such byte reaches a string column.
TEST(JsonDecoderTest, BytesThatAreNotUtf8MakeTheRecordMalformed) {
  Decoded d = DecodeWith(kUserSchema, {"{\"id\": 1, \"name\": \"ok \xc3\xa9\"}", "{\"id\": 2, \"name\": \"\xff\xfe\"}",
                                       "{\"id\": 3, \"na\x80me\": 1}", "{\"id\": 4, \"name\": \"\xed\xa0\x80\"}",
                                       "{\"id\": 5, \"name\": \"\xc3\"}", "{\"id\": 6, \"name\": [\"\xc0\xaf\"]}"});
  ASSERT_EQ(d.column->length, 6);
  EXPECT_EQ(d.column->children[1]->View(0), "ok \xc3\xa9");
  EXPECT_EQ(d.stats.malformed, 5);
  EXPECT_EQ(d.stats.malformed_rows, (std::vector<int64_t>{1, 2, 3, 4, 5}));
  for (int64_t row = 1; row < 6; ++row) EXPECT_TRUE(d.column->IsNull(row)) << row;
}

TEST(JsonDecoderTest, NullInputRowsAreNullButNotMalformed) {
  Decoded d = DecodeWith(kUserSchema, {std::nullopt, R"({"id": 3})"});
  EXPECT_TRUE(d.column->IsNull(0));
  EXPECT_EQ(d.column->children[0]->Value<int64_t>(1), 3);
  EXPECT_EQ(d.stats.malformed, 0);
  EXPECT_EQ(d.stats.rows, 2);
}

TEST(JsonDecoderTest, ATypeMismatchNullsOnlyThatField) {
  Decoded d = DecodeWith(kUserSchema, {R"({"id": 1, "name": "x", "score": "high", "active": 1})"});
  ASSERT_TRUE(d.column->IsValid(0));
  EXPECT_EQ(d.column->children[0]->Value<int64_t>(0), 1);
  EXPECT_EQ(d.column->children[1]->View(0), "x");
  EXPECT_TRUE(d.column->children[2]->IsNull(0));
  EXPECT_TRUE(d.column->children[3]->IsNull(0));
  EXPECT_EQ(d.stats.mismatched_fields, 2);
  EXPECT_EQ(d.stats.malformed, 0);
}

TEST(JsonDecoderTest, AFractionIsNotAnInteger) {
  Decoded d = DecodeWith(kUserSchema, {R"({"id": 1, "score": 2})", R"({"id": 1.5})"});
  EXPECT_EQ(d.column->children[2]->Value<double>(0), 2.0) << "an integer is a number";
  EXPECT_TRUE(d.column->IsNull(1)) << "a required integer given a fraction makes the row malformed";
  EXPECT_EQ(d.stats.malformed, 1);
}

TEST(JsonDecoderTest, AMissingRequiredFieldMakesTheRowMalformed) {
  Decoded d = DecodeWith(kUserSchema, {R"({"name": "no id"})", R"({"id": null})", R"({"id": 5})"});
  EXPECT_TRUE(d.column->IsNull(0));
  EXPECT_TRUE(d.column->IsNull(1));
  EXPECT_TRUE(d.column->IsValid(2));
  EXPECT_EQ(d.stats.malformed, 2);
}

TEST(JsonDecoderTest, UnknownKeysAreIgnoredAndTheLastDuplicateWins) {
  Decoded d = DecodeWith(kUserSchema, {R"({"extra": {"deep": [1]}, "name": "first", "id": 9, "name": "last"})"});
  EXPECT_EQ(d.column->children[0]->Value<int64_t>(0), 9);
  EXPECT_EQ(d.column->children[1]->View(0), "last");
  EXPECT_TRUE(d.column->children[2]->IsNull(0)) << "a missing field is null";
}

TEST(JsonDecoderTest, AStringFieldKeepsAnyOtherValueAsCompactJsonText) {
  Decoded d = DecodeWith(kUserSchema, {R"({"id": 1, "name": {"a": [1, true, null]}})", R"({"id": 2, "name": 12})"});
  EXPECT_EQ(d.column->children[1]->View(0), R"({"a":[1,true,null]})");
  EXPECT_EQ(d.column->children[1]->View(1), "12");
  EXPECT_EQ(d.stats.mismatched_fields, 0);
}

TEST(JsonDecoderTest, DatesAndTimestampsFromTheirStringFormats) {
  constexpr std::string_view schema = R"({"type": "object", "properties": {
      "day": {"type": "string", "format": "date"},
      "at": {"type": "string", "format": "date-time"}}})";
  Decoded d = DecodeWith(schema, {R"({"day": "2024-02-29", "at": "2024-02-29T12:30:15.250Z"})",
                                  R"({"day": "1969-12-31", "at": "1970-01-01T01:00:00+01:00"})",
                                  R"({"day": "2023-02-29", "at": "yesterday"})"});
  EXPECT_EQ(d.column->children[0]->Value<int32_t>(0), 19782);
  EXPECT_EQ(d.column->children[1]->Value<int64_t>(0), 1709209815250000);
  EXPECT_EQ(d.column->children[0]->Value<int32_t>(1), -1);
  EXPECT_EQ(d.column->children[1]->Value<int64_t>(1), 0) << "the offset is subtracted";
  EXPECT_TRUE(d.column->children[0]->IsNull(2)) << "no 29 February in 2023";
  EXPECT_TRUE(d.column->children[1]->IsNull(2));
  EXPECT_EQ(d.stats.mismatched_fields, 2);
}

TEST(JsonDecoderTest, NestedStructsArraysAndMaps) {
  constexpr std::string_view schema = R"({"type": "object", "properties": {
      "user": {"type": "object", "properties": {"email": {"type": "string"}}, "required": ["email"]},
      "tags": {"type": "array", "items": {"type": "string"}},
      "counts": {"type": "object", "additionalProperties": {"type": "integer"}}}})";
  Decoded d = DecodeWith(schema, {R"({"user": {"email": "a@b"}, "tags": ["x", "y"], "counts": {"k": 1, "l": "two"}})",
                                  R"({"user": {"mail": "no"}, "tags": "x", "counts": []})"});
  const Column& user = *d.column->children[0];
  const Column& tags = *d.column->children[1];
  const Column& counts = *d.column->children[2];
  EXPECT_EQ(user.children[0]->View(0), "a@b");
  EXPECT_EQ(tags.offsets, (std::vector<int64_t>{0, 2, 2}));
  EXPECT_EQ(tags.children[0]->View(1), "y");
  EXPECT_TRUE(counts.IsNull(0)) << "a map with a value of the wrong type is null as a whole, as in Spark";
  EXPECT_TRUE(d.column->IsValid(1));
  EXPECT_TRUE(user.IsNull(1)) << "a nested struct missing a required field is null, the row is kept";
  EXPECT_TRUE(tags.IsNull(1));
  EXPECT_TRUE(counts.IsNull(1));
  EXPECT_EQ(d.stats.mismatched_fields, 4);
}

TEST(JsonDecoderTest, NonNumericDoublesAsSparkSpellsThem) {
  Decoded d = DecodeWith(kUserSchema, {R"({"id": 1, "score": "NaN"})", R"({"id": 1, "score": "-Infinity"})"});
  EXPECT_TRUE(std::isnan(d.column->children[2]->Value<double>(0)));
  EXPECT_EQ(d.column->children[2]->Value<double>(1), -std::numeric_limits<double>::infinity());
}

TEST(JsonDecoderTest, DecodersAreReusableAcrossBatches) {
  TypePtr type = *JsonSchemaToType(kUserSchema);
  std::unique_ptr<Decoder> decoder = MakeJsonDecoder(type).value();
  DecodeStats stats;
  ColumnPtr first = *decoder->Decode(*testing::BinaryColumn({R"({"id": 1})", "x"}), &stats);
  ColumnPtr second = *decoder->Decode(*testing::BinaryColumn({R"({"id": 2})"}), &stats);
  EXPECT_EQ(first->length, 2);
  EXPECT_EQ(second->length, 1);
  EXPECT_EQ(second->children[0]->Value<int64_t>(0), 2);
  EXPECT_EQ(stats.rows, 3);
  EXPECT_EQ(stats.malformed, 1);
}

TEST(JsonDecoderTest, RefusesAnInputColumnThatIsNotBytes) {
  std::unique_ptr<Decoder> decoder = MakeJsonDecoder(*JsonSchemaToType(kUserSchema)).value();
  Column ints;
  ints.type = DataType::Integer();
  Result<ColumnPtr> result = decoder->Decode(ints, nullptr);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().error_class(), "INVALID_ARGUMENT");
}

TEST(JsonDecoderTest, RefusesTypesJsonCannotCarry) {
  Result<std::unique_ptr<Decoder>> decoder =
      MakeJsonDecoder(*DataType::Struct({{"m", DataType::Map(DataType::Integer(), DataType::Integer())}}));
  ASSERT_FALSE(decoder.ok());
  EXPECT_EQ(decoder.status().error_class(), "INVALID_ARGUMENT");
}

}  // namespace
}  // namespace sluice::formats
