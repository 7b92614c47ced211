#include <string>

#include <gtest/gtest.h>

#include "sluice/core/error_classes.h"
#include "sluice/core/types.h"

namespace sluice {
namespace {

TypePtr Decimal(int precision, int scale) { return DataType::Decimal(precision, scale).value(); }

TypePtr Struct(std::vector<Field> fields) { return DataType::Struct(std::move(fields)).value(); }

TypePtr Parse(std::string_view json) {
  Result<TypePtr> type = ParseTypeJson(json);
  EXPECT_TRUE(type.ok()) << type.status().ToString();
  return type.ok() ? *type : nullptr;
}

void ExpectInvalidSchema(std::string_view json, std::string_view message_part) {
  Result<TypePtr> type = ParseTypeJson(json);
  ASSERT_FALSE(type.ok()) << json;
  EXPECT_EQ(type.status().error_class(), errors::kInvalidSchema) << type.status().ToString();
  EXPECT_NE(type.status().message().find(message_part), std::string_view::npos) << type.status().ToString();
}

TEST(TypeJsonTest, PrimitivesAreWrittenAsQuotedNames) {
  EXPECT_EQ(DataType::Boolean()->ToJson(), R"("boolean")");
  EXPECT_EQ(DataType::Byte()->ToJson(), R"("byte")");
  EXPECT_EQ(DataType::Short()->ToJson(), R"("short")");
  EXPECT_EQ(DataType::Integer()->ToJson(), R"("integer")");
  EXPECT_EQ(DataType::Long()->ToJson(), R"("long")");
  EXPECT_EQ(DataType::Float()->ToJson(), R"("float")");
  EXPECT_EQ(DataType::Double()->ToJson(), R"("double")");
  EXPECT_EQ(Decimal(10, 2)->ToJson(), "\"decimal(10,2)\"");
  EXPECT_EQ(DataType::String()->ToJson(), R"("string")");
  EXPECT_EQ(DataType::Binary()->ToJson(), R"("binary")");
  EXPECT_EQ(DataType::Date()->ToJson(), R"("date")");
  EXPECT_EQ(DataType::Timestamp()->ToJson(), R"("timestamp")");
  EXPECT_EQ(DataType::TimestampNtz()->ToJson(), R"("timestamp_ntz")");
}

TEST(TypeJsonTest, EveryPrimitiveRoundTrips) {
  for (const TypePtr& type : {DataType::Boolean(), DataType::Byte(), DataType::Short(), DataType::Integer(),
                              DataType::Long(), DataType::Float(), DataType::Double(), Decimal(10, 2),
                              DataType::String(), DataType::Binary(), DataType::Date(), DataType::Timestamp(),
                              DataType::TimestampNtz()}) {
    TypePtr parsed = Parse(type->ToJson());
    ASSERT_NE(parsed, nullptr);
    EXPECT_TRUE(parsed->Equals(*type)) << type->ToJson();
  }
}

TEST(TypeJsonTest, StructIsWrittenCompactlyInSparkFieldOrder) {
  TypePtr schema = Struct({{"id", DataType::Long(), false, "{}"},
                           {"tags", DataType::Array(DataType::String(), false), true, "{}"},
                           {"attrs", DataType::Map(DataType::String(), DataType::Integer(), true), true, "{}"}});
  EXPECT_EQ(schema->ToJson(),
            R"({"type":"struct","fields":[)"
            R"({"name":"id","type":"long","nullable":false,"metadata":{}},)"
            R"({"name":"tags","type":{"type":"array","elementType":"string","containsNull":false},"nullable":true,"metadata":{}},)"
            R"({"name":"attrs","type":{"type":"map","keyType":"string","valueType":"integer","valueContainsNull":true},)"
            R"("nullable":true,"metadata":{}}]})");
}

TEST(TypeJsonTest, DeeplyNestedTypesRoundTrip) {
  TypePtr inner = Struct({{"email", DataType::String(), true, "{}"}, {"age", DataType::Short(), false, "{}"}});
  TypePtr schema = Struct({
      {"value", Struct({{"user", inner, true, "{}"}}), true, "{}"},
      {"events", DataType::Array(DataType::Map(DataType::String(), DataType::Array(inner, true), false), true), true,
       "{}"},
      {"empty", Struct({}), true, "{}"},
  });
  TypePtr parsed = Parse(schema->ToJson());
  ASSERT_NE(parsed, nullptr);
  EXPECT_TRUE(parsed->Equals(*schema));
  EXPECT_EQ(parsed->ToJson(), schema->ToJson());
}

TEST(TypeJsonTest, DecimalBounds) {
  EXPECT_TRUE(Parse("\"decimal(38,38)\"")->Equals(*Decimal(38, 38)));
  EXPECT_TRUE(Parse("\"decimal(1,0)\"")->Equals(*Decimal(1, 0)));
  EXPECT_TRUE(Parse("\"decimal( 12 , 3 )\"")->Equals(*Decimal(12, 3)));
  EXPECT_TRUE(Parse(R"("decimal")")->Equals(*Decimal(10, 0)));
  ExpectInvalidSchema("\"decimal(39,0)\"", "decimal(39,0)");
  ExpectInvalidSchema("\"decimal(5,6)\"", "decimal(5,6)");
  ExpectInvalidSchema("\"decimal(0,0)\"", "decimal(0,0)");
  ExpectInvalidSchema("\"decimal(-1,0)\"", "malformed decimal");
  ExpectInvalidSchema("\"decimal(99999999999999999999,0)\"", "malformed decimal");
  ExpectInvalidSchema("\"decimal(10)\"", "malformed decimal");
  ExpectInvalidSchema("\"decimal(10,2\"", "malformed decimal");
}

TEST(TypeJsonTest, FieldMetadataIsKeptAsCompactJson) {
  TypePtr parsed = Parse(R"({"type":"struct","fields":[{"name":"a","type":"integer","nullable":true,
      "metadata":{ "comment" : "the \"a\" column", "delta.columnMapping.id" : 5,
                   "nested" : {"list":[1, 2.5, true, null]} }}]})");
  ASSERT_NE(parsed, nullptr);
  EXPECT_EQ(parsed->field(0).metadata,
            R"({"comment":"the \"a\" column","delta.columnMapping.id":5,"nested":{"list":[1,2.5,true,null]}})");
  TypePtr again = Parse(parsed->ToJson());
  ASSERT_NE(again, nullptr);
  EXPECT_TRUE(again->Equals(*parsed));
}

TEST(TypeJsonTest, MissingMetadataReadsAsEmpty) {
  TypePtr parsed = Parse(R"({"type":"struct","fields":[{"name":"a","type":"integer","nullable":false}]})");
  ASSERT_NE(parsed, nullptr);
  EXPECT_EQ(parsed->field(0).metadata, "{}");
  EXPECT_FALSE(parsed->field(0).nullable);
}

TEST(TypeJsonTest, NamesAreEscapedAndUnescaped) {
  TypePtr schema = Struct({{"quote\"back\\slash\ttab é", DataType::Integer(), true, "{}"}});
  EXPECT_EQ(schema->ToJson(),
            R"({"type":"struct","fields":[{"name":"quote\"back\\slash\ttab é","type":"integer","nullable":true,"metadata":{}}]})");
  EXPECT_TRUE(Parse(schema->ToJson())->Equals(*schema));
}

// schemaString values as Delta writers (Spark, delta-rs) put them in the log.
TEST(TypeJsonTest, ReadsDeltaSchemaStrings) {
  TypePtr spark = Parse(
      R"({"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},)"
      R"({"name":"ts","type":"timestamp_ntz","nullable":true,"metadata":{}},)"
      R"j({"name":"amount","type":"decimal(18,4)","nullable":true,"metadata":{}},)j"
      R"({"name":"address","type":{"type":"struct","fields":[{"name":"city","type":"string","nullable":true,)"
      R"("metadata":{"delta.columnMapping.id":4,"delta.columnMapping.physicalName":"col-8f1c"}}]},)"
      R"("nullable":true,"metadata":{}}]})");
  ASSERT_NE(spark, nullptr);
  ASSERT_EQ(spark->num_fields(), 4);
  EXPECT_EQ(spark->field(1).type->id(), TypeId::kTimestampNtz);
  EXPECT_TRUE(spark->field(2).type->Equals(*Decimal(18, 4)));
  EXPECT_EQ(spark->field(3).type->field(0).metadata,
            R"({"delta.columnMapping.id":4,"delta.columnMapping.physicalName":"col-8f1c"})");

  // Whitespace and key order other than Spark's are accepted.
  TypePtr pretty = Parse(R"({
    "fields": [ { "nullable": false, "type": { "containsNull": true, "elementType": "integer", "type": "array" },
                  "metadata": {}, "name": "xs" } ],
    "type": "struct"
  })");
  ASSERT_NE(pretty, nullptr);
  EXPECT_TRUE(pretty->Equals(*Struct({{"xs", DataType::Array(DataType::Integer(), true), false, "{}"}})));
}

TEST(TypeJsonTest, MalformedJsonIsInvalidSchema) {
  ExpectInvalidSchema("", "not valid JSON");
  ExpectInvalidSchema("{", "not valid JSON");
  ExpectInvalidSchema(R"({"type":"struct","fields":[})", "not valid JSON");
  ExpectInvalidSchema("\"integer", "not valid JSON");
  ExpectInvalidSchema("\"integer\" trailing", "not valid JSON");
}

TEST(TypeJsonTest, WrongShapesNameTheJsonPath) {
  ExpectInvalidSchema("42", "expected a type name or object, found a number at $");
  ExpectInvalidSchema(R"("int")", R"(unknown data type "int" at $)");
  ExpectInvalidSchema(R"({"fields":[]})", R"(missing key "type" at $)");
  ExpectInvalidSchema(R"({"type":"udt"})", R"(unknown complex type "udt" at $.type)");
  ExpectInvalidSchema(R"({"type":"struct"})", R"(missing key "fields" at $)");
  ExpectInvalidSchema(R"({"type":"struct","fields":{}})", "expected an array, found an object at $.fields");
  ExpectInvalidSchema(R"({"type":"struct","fields":[1]})", "expected a field object, found a number at $.fields[0]");
  ExpectInvalidSchema(R"({"type":"struct","fields":[{"name":"a","type":"integer","nullable":true},)"
                      R"({"name":"b","type":"integer","nullable":"yes"}]})",
                      "expected a boolean, found a string at $.fields[1].nullable");
  ExpectInvalidSchema(R"({"type":"struct","fields":[{"name":7,"type":"integer","nullable":true}]})",
                      "expected a string, found a number at $.fields[0].name");
  ExpectInvalidSchema(R"({"type":"struct","fields":[{"name":"a","type":"integer","nullable":true,"metadata":[]}]})",
                      "expected an object, found an array at $.fields[0].metadata");
  ExpectInvalidSchema(R"({"type":"struct","fields":[{"name":"a","type":{"type":"array","elementType":"bogus",)"
                      R"("containsNull":true},"nullable":true}]})",
                      R"(unknown data type "bogus" at $.fields[0].type.elementType)");
  ExpectInvalidSchema(R"({"type":"map","keyType":"string","valueType":{"type":"array","containsNull":true},)"
                      R"("valueContainsNull":true})",
                      R"(missing key "elementType" at $.valueType)");
  ExpectInvalidSchema(R"({"type":"array","elementType":"string"})", R"(missing key "containsNull" at $)");
  ExpectInvalidSchema(R"({"type":"struct","fields":[{"name":"a","type":"integer","nullable":true},)"
                      R"({"name":"a","type":"long","nullable":true}]})",
                      "appears twice");
  ExpectInvalidSchema(R"({"type":"struct","fields":[{"name":"","type":"integer","nullable":true}]})", "empty name");
}

TEST(TypeJsonTest, HostileNestingIsRefusedNotFollowed) {
  std::string deep;
  for (int i = 0; i < 100; ++i) deep += R"({"type":"array","elementType":)";
  deep += R"("integer")";
  for (int i = 0; i < 100; ++i) deep += R"(,"containsNull":true})";
  ExpectInvalidSchema(deep, "nested deeper than 64");

  std::string shallow_enough;
  for (int i = 0; i < 60; ++i) shallow_enough += R"({"type":"array","elementType":)";
  shallow_enough += R"("integer")";
  for (int i = 0; i < 60; ++i) shallow_enough += R"(,"containsNull":true})";
  EXPECT_NE(Parse(shallow_enough), nullptr);

  ExpectInvalidSchema(std::string(100000, '['), "not valid JSON");
}

TEST(TypeJsonTest, HugeNumbersInMetadataAreErrorsOrKept) {
  Result<TypePtr> type = ParseTypeJson(
      R"({"type":"struct","fields":[{"name":"a","type":"integer","nullable":true,"metadata":{"n":1e400}}]})");
  EXPECT_FALSE(type.ok());
  EXPECT_EQ(type.status().error_class(), errors::kInvalidSchema);
}

}  // namespace
}  // namespace sluice
