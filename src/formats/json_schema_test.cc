#include <string>

#include <gtest/gtest.h>

#include "sluice/formats/json.h"

namespace sluice::formats {
namespace {

std::string Mapped(std::string_view schema) {
  Result<TypePtr> type = JsonSchemaToType(schema);
  if (!type.ok()) return type.status().ToString();
  std::string text = (*type)->ToString();
  for (const Field& field : (*type)->fields()) {
    if (!field.nullable) text += " " + field.name + "!";
  }
  return text;
}

TEST(JsonSchemaTest, MapsTheScalarTypes) {
  EXPECT_EQ(Mapped(R"({"type": "object", "properties": {
      "a": {"type": "integer"}, "b": {"type": "number"}, "c": {"type": "boolean"}, "d": {"type": "string"},
      "e": {"type": "string", "format": "date"}, "f": {"type": "string", "format": "date-time"},
      "g": {"type": "string", "format": "email"}}})"),
            "struct<a:bigint,b:double,c:boolean,d:string,e:date,f:timestamp,g:string>");
}

TEST(JsonSchemaTest, RequiredFieldsAreNotNullableUnlessTheyAdmitNull) {
  EXPECT_EQ(Mapped(R"({"type": "object", "required": ["a", "b", "c"], "properties": {
      "a": {"type": "integer"}, "b": {"type": ["string", "null"]},
      "c": {"oneOf": [{"type": "null"}, {"type": "number"}]}, "d": {"type": "integer"}}})"),
            "struct<a:bigint,b:string,c:double,d:bigint> a!");
}

TEST(JsonSchemaTest, NestedObjectsArraysAndMaps) {
  EXPECT_EQ(Mapped(R"({"type": "object", "properties": {
      "user": {"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}}},
      "attrs": {"type": "object", "additionalProperties": {"type": "number"}},
      "open": {"type": "object"},
      "anything": {}}})"),
            "struct<user:struct<tags:array<string>>,attrs:map<string,double>,open:map<string,string>,anything:string>");
}

TEST(JsonSchemaTest, FollowsLocalReferences) {
  EXPECT_EQ(Mapped(R"({"definitions": {"point": {"type": "object", "properties": {"x": {"type": "number"}}}},
      "$defs": {"id": {"type": "integer"}},
      "type": "object", "properties": {"from": {"$ref": "#/definitions/point"}, "id": {"$ref": "#/$defs/id"}}})"),
            "struct<from:struct<x:double>,id:bigint>");
}

TEST(JsonSchemaTest, RefusesWhatHasNoColumnShapeNamingThePlace) {
  EXPECT_EQ(Mapped(R"({"type": "object", "properties": {"a": {"$ref": "#/definitions/missing"}}})"),
            "JSON_SCHEMA_INVALID: at #/properties/a: $ref \"#/definitions/missing\" names nothing in this schema");
  EXPECT_EQ(Mapped(R"({"type": "object", "properties": {"a": {"$ref": "http://example.com/s.json"}}})").substr(0, 41),
            "JSON_SCHEMA_INVALID: at #/properties/a: $");
  EXPECT_EQ(Mapped(R"({"type": "object", "properties": {"a": {"type": ["string", "integer"]}}})"),
            "JSON_SCHEMA_INVALID: at #/properties/a/type: several types (\"string\", \"integer\") cannot share one column");
  EXPECT_EQ(Mapped(R"({"type": "object", "properties": {"a": {"oneOf": [{"type": "string"}, {"type": "integer"}]}}})"),
            "JSON_SCHEMA_INVALID: at #/properties/a/oneOf: only one alternative besides {\"type\": \"null\"} can be mapped to a column type");
  EXPECT_EQ(Mapped(R"({"type": "object", "properties": {"a": {"allOf": [{"type": "string"}]}}})"),
            "JSON_SCHEMA_INVALID: at #/properties/a: \"allOf\" cannot be mapped to a column type; describe the value without it");
  EXPECT_EQ(Mapped(R"({"type": "object", "properties": {"a": {"type": "decimal"}}})"),
            "JSON_SCHEMA_INVALID: at #/properties/a/type: unknown type \"decimal\"");
  EXPECT_EQ(Mapped(R"({"type": "array", "items": {"type": "integer"}})"),
            "JSON_SCHEMA_INVALID: at #: the document must be an object with properties, not array<bigint>");
  EXPECT_EQ(Mapped("{"), "JSON_SCHEMA_INVALID: the schema is not JSON: The JSON document has an improper structure: missing or superfluous commas, braces, missing keys, etc.");
}

TEST(JsonSchemaTest, RefusesRecursiveReferences) {
  std::string message = Mapped(R"({"definitions": {"node": {"type": "object", "properties": {"next": {"$ref": "#/definitions/node"}}}},
      "type": "object", "properties": {"head": {"$ref": "#/definitions/node"}}})");
  EXPECT_NE(message.find("JSON_SCHEMA_INVALID"), std::string::npos) << message;
  EXPECT_NE(message.find("recursive"), std::string::npos) << message;
}

}  // namespace
}  // namespace sluice::formats
