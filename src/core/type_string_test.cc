#include <string>

#include <gtest/gtest.h>

#include "sluice/core/error_classes.h"
#include "sluice/core/types.h"

namespace sluice {
namespace {

TypePtr Decimal(int precision, int scale) { return DataType::Decimal(precision, scale).value(); }

TypePtr Struct(std::vector<Field> fields) { return DataType::Struct(std::move(fields)).value(); }

TypePtr Parse(std::string_view text) {
  Result<TypePtr> type = ParseTypeString(text);
  EXPECT_TRUE(type.ok()) << text << ": " << type.status().ToString();
  return type.ok() ? *type : nullptr;
}

void ExpectParses(std::string_view text, const TypePtr& expected) {
  TypePtr parsed = Parse(text);
  ASSERT_NE(parsed, nullptr);
  EXPECT_TRUE(parsed->Equals(*expected)) << text << " parsed as " << parsed->ToString();
}

void ExpectInvalid(std::string_view text, std::string_view message_part) {
  Result<TypePtr> type = ParseTypeString(text);
  ASSERT_FALSE(type.ok()) << text << " parsed as " << (*type)->ToString();
  EXPECT_EQ(type.status().error_class(), errors::kInvalidDataType) << type.status().ToString();
  EXPECT_NE(type.status().message().find(message_part), std::string_view::npos) << type.status().ToString();
}

TEST(TypeStringTest, SparkNamesAndAliases) {
  ExpectParses("boolean", DataType::Boolean());
  ExpectParses("tinyint", DataType::Byte());
  ExpectParses("byte", DataType::Byte());
  ExpectParses("smallint", DataType::Short());
  ExpectParses("short", DataType::Short());
  ExpectParses("int", DataType::Integer());
  ExpectParses("integer", DataType::Integer());
  ExpectParses("bigint", DataType::Long());
  ExpectParses("long", DataType::Long());
  ExpectParses("real", DataType::Float());
  ExpectParses("float", DataType::Float());
  ExpectParses("double", DataType::Double());
  ExpectParses("string", DataType::String());
  ExpectParses("varchar(20)", DataType::String());
  ExpectParses("char(3)", DataType::String());
  ExpectParses("binary", DataType::Binary());
  ExpectParses("date", DataType::Date());
  ExpectParses("timestamp", DataType::Timestamp());
  ExpectParses("timestamp_ltz", DataType::Timestamp());
  ExpectParses("timestamp_ntz", DataType::TimestampNtz());
}

TEST(TypeStringTest, KeywordsIgnoreCaseAndWhitespace) {
  ExpectParses("BIGINT", DataType::Long());
  ExpectParses("  Map < STRING , Array<Int> >  ", DataType::Map(DataType::String(), DataType::Array(DataType::Integer())));
  ExpectParses("DECIMAL ( 12 , 4 )", Decimal(12, 4));
}

TEST(TypeStringTest, Decimals) {
  ExpectParses("decimal", Decimal(10, 0));
  ExpectParses("decimal(5)", Decimal(5, 0));
  ExpectParses("dec(7,2)", Decimal(7, 2));
  ExpectParses("numeric(38,38)", Decimal(38, 38));
  ExpectParses("decimal(1,0)", Decimal(1, 0));
  ExpectInvalid("decimal(39,0)", "decimal(39,0) is not valid");
  ExpectInvalid("decimal(5,6)", "decimal(5,6) is not valid");
  ExpectInvalid("decimal(99999999999999999999)", "expected a number");
  ExpectInvalid("decimal(10,", "expected a number");
}

TEST(TypeStringTest, StructsInColonAndDdlForms) {
  TypePtr expected = Struct({{"a", DataType::Integer(), true, "{}"}, {"b", DataType::String(), true, "{}"}});
  ExpectParses("struct<a:int,b:string>", expected);
  ExpectParses("struct<a int, b string>", expected);
  ExpectParses("STRUCT< a : INT , b: string >", expected);
  ExpectParses("struct<>", Struct({}));
}

TEST(TypeStringTest, FieldNamesKeepCaseAndMayBeBackQuoted) {
  ExpectParses("struct<`b c`:string,`x.y`:int,`we``ird`:bigint,CamelCase:date>",
               Struct({{"b c", DataType::String(), true, "{}"},
                       {"x.y", DataType::Integer(), true, "{}"},
                       {"we`ird", DataType::Long(), true, "{}"},
                       {"CamelCase", DataType::Date(), true, "{}"}}));
}

TEST(TypeStringTest, NotNullAndComment) {
  ExpectParses("struct<id bigint NOT NULL, name string COMMENT 'the \\'name\\': \"full\"'>",
               Struct({{"id", DataType::Long(), false, "{}"},
                       {"name", DataType::String(), true, R"({"comment":"the 'name': \"full\""})"}}));
  ExpectInvalid("struct<id bigint NOT>", "expected NULL after NOT");
}

TEST(TypeStringTest, BareColumnListIsAStruct) {
  ExpectParses("id bigint, name string not null",
               Struct({{"id", DataType::Long(), true, "{}"}, {"name", DataType::String(), false, "{}"}}));
  ExpectParses("value struct<user: struct<email: string>>",
               Struct({{"value",
                        Struct({{"user", Struct({{"email", DataType::String(), true, "{}"}}), true, "{}"}}),
                        true, "{}"}}));
}

TEST(TypeStringTest, RoundTripsEverythingToStringPrints) {
  TypePtr inner = Struct({{"email", DataType::String(), true, "{}"}, {"`odd` name", DataType::Short(), true, "{}"}});
  std::vector<TypePtr> types = {
      DataType::Boolean(), DataType::Byte(),   DataType::Short(),     DataType::Integer(),
      DataType::Long(),    DataType::Float(),  DataType::Double(),    Decimal(38, 38),
      Decimal(1, 0),       DataType::String(), DataType::Binary(),    DataType::Date(),
      DataType::Timestamp(), DataType::TimestampNtz(),
      DataType::Array(inner),
      DataType::Map(DataType::String(), DataType::Array(DataType::Map(DataType::Integer(), inner))),
      Struct({{"value", Struct({{"user", inner, true, "{}"}}), true, "{}"},
              {"a.b", DataType::Array(DataType::Long()), true, "{}"},
              {"empty", Struct({}), true, "{}"}}),
  };
  for (const TypePtr& type : types) ExpectParses(type->ToString(), type);
}

TEST(TypeStringTest, ErrorsNameThePosition) {
  ExpectInvalid("", "expected a data type at position 0");
  ExpectInvalid("strin", "unknown data type \"strin\" at position 0");
  ExpectInvalid("array<int", "expected '>' at position 9");
  ExpectInvalid("map<string>", "expected ',' at position 10");
  ExpectInvalid("struct<a:int,>", "expected a field name");
  ExpectInvalid("struct<`a:int>", "unterminated back-quoted name");
  ExpectInvalid("struct<a:int,a:int>", "appears twice");
  ExpectInvalid("array<int> x", "unexpected text at position 11");
  ExpectInvalid("id bigint, name strng", "unknown data type \"strng\" at position 16");
}

TEST(TypeStringTest, HostileNestingIsRefused) {
  std::string deep;
  for (int i = 0; i < 10000; ++i) deep += "array<";
  deep += "int";
  for (int i = 0; i < 10000; ++i) deep += ">";
  ExpectInvalid(deep, "nested deeper than 64");
}

}  // namespace
}  // namespace sluice
