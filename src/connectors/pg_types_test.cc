#include "sluice/connectors/pg_types.h"

#include <gtest/gtest.h>

#include <cmath>

#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"

namespace sluice::connectors {
namespace {

// Reads `texts` (nullptr = SQL NULL) through the mapping of (oid, typmod) and formats the
// resulting column's values, so expectations read as the values a user would see.
std::vector<std::string> Read(uint32_t oid, int32_t typmod, std::vector<const char*> texts) {
  PgColumnMapping mapping = MapPgType(oid, typmod);
  auto builder = ColumnBuilder::Make(mapping.type);
  for (const char* text : texts) {
    if (text == nullptr) {
      builder->AppendNull();
    } else {
      Status s = AppendPgText(mapping, text, builder.get());
      EXPECT_TRUE(s.ok()) << text << ": " << s.ToString();
    }
  }
  ColumnPtr column = builder->Finish();
  EXPECT_TRUE(column->Validate().ok());
  std::vector<std::string> out;
  for (int64_t i = 0; i < column->length; ++i) out.push_back(FormatValue(*column, i));
  return out;
}

Status ReadOne(uint32_t oid, int32_t typmod, std::string_view text) {
  PgColumnMapping mapping = MapPgType(oid, typmod);
  auto builder = ColumnBuilder::Make(mapping.type);
  return AppendPgText(mapping, text, builder.get());
}

int32_t NumericTypmod(int precision, int scale) { return ((precision << 16) | (scale & 0x7ff)) + 4; }

TEST(MapPgType, FollowsTheDocumentedTable) {
  EXPECT_EQ(MapPgType(pg_oid::kBool, -1).type->ToString(), "boolean");
  EXPECT_EQ(MapPgType(pg_oid::kInt2, -1).type->ToString(), "smallint");
  EXPECT_EQ(MapPgType(pg_oid::kInt4, -1).type->ToString(), "int");
  EXPECT_EQ(MapPgType(pg_oid::kInt8, -1).type->ToString(), "bigint");
  EXPECT_EQ(MapPgType(pg_oid::kFloat4, -1).type->ToString(), "float");
  EXPECT_EQ(MapPgType(pg_oid::kFloat8, -1).type->ToString(), "double");
  EXPECT_EQ(MapPgType(pg_oid::kNumeric, NumericTypmod(12, 2)).type->ToString(), "decimal(12,2)");
  EXPECT_EQ(MapPgType(pg_oid::kNumeric, NumericTypmod(38, 38)).type->ToString(), "decimal(38,38)");
  EXPECT_EQ(MapPgType(pg_oid::kNumeric, NumericTypmod(39, 2)).type->ToString(), "string");
  EXPECT_EQ(MapPgType(pg_oid::kNumeric, NumericTypmod(5, -2)).type->ToString(), "string");
  EXPECT_EQ(MapPgType(pg_oid::kNumeric, -1).type->ToString(), "string");
  EXPECT_EQ(MapPgType(pg_oid::kDate, -1).type->ToString(), "date");
  EXPECT_EQ(MapPgType(pg_oid::kTimestamp, -1).type->ToString(), "timestamp_ntz");
  EXPECT_EQ(MapPgType(pg_oid::kTimestamptz, -1).type->ToString(), "timestamp");
  EXPECT_EQ(MapPgType(pg_oid::kBytea, -1).type->ToString(), "binary");
  EXPECT_EQ(MapPgType(pg_oid::kJsonb, -1).type->ToString(), "string");
  EXPECT_EQ(MapPgType(pg_oid::kUuid, -1).type->ToString(), "string");
  EXPECT_EQ(MapPgType(99999, -1, /*is_enum=*/true).type->ToString(), "string");
}

TEST(MapPgType, BuiltInArraysAreArraysOfTheirElementsMapping) {
  EXPECT_EQ(MapPgType(PgArrayOidOf(pg_oid::kInt4), -1).type->ToString(), "array<int>");
  EXPECT_EQ(MapPgType(PgArrayOidOf(pg_oid::kText), -1).type->ToString(), "array<string>");
  EXPECT_EQ(MapPgType(PgArrayOidOf(pg_oid::kNumeric), NumericTypmod(10, 2)).type->ToString(), "array<decimal(10,2)>");
  EXPECT_EQ(MapPgType(PgArrayOidOf(pg_oid::kNumeric), -1).type->ToString(), "array<string>");
  EXPECT_EQ(MapPgType(PgArrayOidOf(pg_oid::kTimestamptz), -1).type->ToString(), "array<timestamp>");
  EXPECT_EQ(MapPgType(PgArrayOidOf(pg_oid::kUuid), -1).type->ToString(), "array<string>");
  EXPECT_EQ(MapPgType(PgArrayOidOf(pg_oid::kBytea), -1).type->ToString(), "array<binary>");
  // Every built-in array maps to an array, and back to its element.
  for (uint32_t element : {pg_oid::kBool, pg_oid::kInt2, pg_oid::kInt8, pg_oid::kFloat4, pg_oid::kFloat8,
                           pg_oid::kDate, pg_oid::kTimestamp, pg_oid::kVarchar, pg_oid::kJsonb, pg_oid::kInterval}) {
    const uint32_t array = PgArrayOidOf(element);
    ASSERT_NE(array, 0u) << element;
    EXPECT_EQ(PgArrayElementOid(array), element);
    PgColumnMapping mapping = MapPgType(array, -1);
    EXPECT_EQ(mapping.text_kind, PgTextKind::kArray);
    EXPECT_EQ(mapping.type->element_type()->ToString(), MapPgType(element, -1).type->ToString());
  }
  // An array of a type without a fixed oid (an enum's, an extension's) stays text.
  EXPECT_EQ(PgArrayElementOid(99999), 0u);
  EXPECT_EQ(MapPgType(99999, -1).type->ToString(), "string");
}

TEST(AppendPgText, ReadsScalars) {
  EXPECT_EQ(Read(pg_oid::kBool, -1, {"t", "f", nullptr}), (std::vector<std::string>{"true", "false", "null"}));
  EXPECT_EQ(Read(pg_oid::kInt2, -1, {"-32768", "32767"}), (std::vector<std::string>{"-32768", "32767"}));
  EXPECT_EQ(Read(pg_oid::kInt8, -1, {"-9223372036854775808"}), (std::vector<std::string>{"-9223372036854775808"}));
  EXPECT_EQ(Read(pg_oid::kText, -1, {"héllo", ""}), (std::vector<std::string>{"héllo", ""}));
}

TEST(AppendPgText, ReadsFloatsIncludingSpecialValues) {
  PgColumnMapping mapping = MapPgType(pg_oid::kFloat8, -1);
  DoubleBuilder builder(mapping.type);
  for (const char* t : {"1.5", "-0", "NaN", "Infinity", "-Infinity", "1e-300"}) {
    ASSERT_TRUE(AppendPgText(mapping, t, &builder).ok()) << t;
  }
  ColumnPtr c = builder.Finish();
  EXPECT_EQ(c->Value<double>(0), 1.5);
  EXPECT_TRUE(std::signbit(c->Value<double>(1)));
  EXPECT_TRUE(std::isnan(c->Value<double>(2)));
  EXPECT_EQ(c->Value<double>(3), INFINITY);
  EXPECT_EQ(c->Value<double>(4), -INFINITY);
  EXPECT_EQ(c->Value<double>(5), 1e-300);
}

TEST(AppendPgText, ReadsNumericIntoDecimalAtTheColumnScale) {
  EXPECT_EQ(Read(pg_oid::kNumeric, NumericTypmod(12, 2), {"12.50", "-0.01", "7", "NaN", "Infinity"}),
            (std::vector<std::string>{"12.50", "-0.01", "7.00", "null", "null"}));
  EXPECT_EQ(Read(pg_oid::kNumeric, NumericTypmod(38, 0), {"99999999999999999999999999999999999999"}),
            (std::vector<std::string>{"99999999999999999999999999999999999999"}));
  EXPECT_EQ(ReadOne(pg_oid::kNumeric, NumericTypmod(12, 2), "1.234").error_class(), "INVALID_ARGUMENT");
  EXPECT_FALSE(ReadOne(pg_oid::kNumeric, NumericTypmod(38, 0), "999999999999999999999999999999999999999").ok());
  EXPECT_FALSE(ReadOne(pg_oid::kNumeric, NumericTypmod(12, 2), "1.2.3").ok());
}

TEST(AppendPgText, ReadsDatesIncludingBcAndInfinity) {
  EXPECT_EQ(Read(pg_oid::kDate, -1, {"1970-01-01", "2026-01-31", "2000-02-29", "0001-01-01 BC", "infinity"}),
            (std::vector<std::string>{"1970-01-01", "2026-01-31", "2000-02-29", "0000-01-01", "null"}));
  EXPECT_FALSE(ReadOne(pg_oid::kDate, -1, "2026-13-01").ok());
  EXPECT_FALSE(ReadOne(pg_oid::kDate, -1, "2026-01-01x").ok());
}

TEST(AppendPgText, ReadsTimestampsWithAndWithoutZones) {
  EXPECT_EQ(Read(pg_oid::kTimestamp, -1, {"2026-01-31 10:00:00", "2026-01-31 10:00:00.5"}),
            (std::vector<std::string>{"2026-01-31T10:00:00", "2026-01-31T10:00:00.500000"}));
  EXPECT_EQ(Read(pg_oid::kTimestamptz, -1, {"2026-01-31 10:00:00+00", "2026-01-31 12:30:00.123456+02:30", "2026-01-31 01:00:00-09"}),
            (std::vector<std::string>{"2026-01-31T10:00:00Z", "2026-01-31T10:00:00.123456Z", "2026-01-31T10:00:00Z"}));
  EXPECT_FALSE(ReadOne(pg_oid::kTimestamptz, -1, "2026-01-31 10:00:00").ok());
  EXPECT_FALSE(ReadOne(pg_oid::kTimestamp, -1, "2026-01-31T10:00:00").ok());
}

TEST(AppendPgText, ReadsHexBytea) {
  PgColumnMapping mapping = MapPgType(pg_oid::kBytea, -1);
  BinaryBuilder builder(mapping.type);
  ASSERT_TRUE(AppendPgText(mapping, "\\x00ff41", &builder).ok());
  ASSERT_TRUE(AppendPgText(mapping, "\\x", &builder).ok());
  EXPECT_FALSE(AppendPgText(mapping, "\\x0", &builder).ok());
  EXPECT_FALSE(AppendPgText(mapping, "\\xzz", &builder).ok());
  EXPECT_FALSE(AppendPgText(mapping, "abc", &builder).ok());
  ColumnPtr c = builder.Finish();
  ASSERT_EQ(c->length, 2);
  EXPECT_EQ(c->View(0), std::string_view("\x00\xff" "A", 3));
  EXPECT_EQ(c->View(1), "");
}

TEST(AppendPgText, ReadsOneDimensionalArraysWithNullAndQuotedElements) {
  const uint32_t ints = PgArrayOidOf(pg_oid::kInt4);
  EXPECT_EQ(Read(ints, -1, {"{1,2,3}", "{}", "{NULL,-7}", nullptr, "[0:1]={5,6}", "{null}"}),
            (std::vector<std::string>{"[1,2,3]", "[]", "[null,-7]", "null", "[5,6]", "[null]"}));
  EXPECT_EQ(Read(PgArrayOidOf(pg_oid::kText), -1,
                 {R"({"a b","x\"y","back\\slash",NULL,"NULL","",plain,"{}",","})", R"({\N\U\L\L})"}),
            (std::vector<std::string>{R"(["a b","x\"y","back\\slash",null,"NULL","","plain","{}",","])", R"(["NULL"])"}));
  EXPECT_EQ(Read(PgArrayOidOf(pg_oid::kNumeric), NumericTypmod(10, 2), {"{1.50,NaN,-0.25}"}),
            (std::vector<std::string>{"[1.50,null,-0.25]"}));
  EXPECT_EQ(Read(PgArrayOidOf(pg_oid::kTimestamptz), -1, {R"({"2026-01-31 12:30:00+02:30",infinity})"}),
            (std::vector<std::string>{R"(["2026-01-31T10:00:00Z",null])"}));
  EXPECT_EQ(Read(PgArrayOidOf(pg_oid::kBool), -1, {"{t,f,NULL}"}), (std::vector<std::string>{"[true,false,null]"}));
  EXPECT_EQ(Read(PgArrayOidOf(pg_oid::kBytea), -1, {R"({"\\x00ff",NULL})"}),
            (std::vector<std::string>{R"(["AP8=",null])"}));
}

// Whatever is wrong with an array (its shape, its dimensions, one element), the value is refused
// and the builder keeps the rows it had.
TEST(AppendPgText, RefusesMalformedAndMultiDimensionalArraysLeavingTheBuilderAsItWas) {
  PgColumnMapping mapping = MapPgType(PgArrayOidOf(pg_oid::kInt4), -1);
  auto builder = ColumnBuilder::Make(mapping.type);
  ASSERT_TRUE(AppendPgText(mapping, "{1}", builder.get()).ok());
  for (std::string_view bad : {"{1,2", "1,2}", "{1,,2}", "{,}", "{1,}", R"({"1})", "{{1,2},{3,4}}", "{1,{2}}",
                               "[1:2][1:1]={{1},{2}}", "[1:2]{1,2}", "{1,x}", "{1,2147483648}", "", "{", "}",
                               R"({"1"2})", R"({1"})", "{1}}", R"({1\})"}) {
    SCOPED_TRACE(bad);
    Status s = AppendPgText(mapping, bad, builder.get());
    EXPECT_FALSE(s.ok());
    EXPECT_EQ(s.error_class(), errors::kInvalidArgument);
    EXPECT_EQ(s.message().find("2147483648"), std::string_view::npos) << "the value is not named";
  }
  ASSERT_TRUE(AppendPgText(mapping, "{2,3}", builder.get()).ok());
  ColumnPtr column = builder->Finish();
  ASSERT_TRUE(column->Validate().ok()) << column->Validate().ToString();
  ASSERT_EQ(column->length, 2);
  EXPECT_EQ(FormatValue(*column, 0), "[1]");
  EXPECT_EQ(FormatValue(*column, 1), "[2,3]");
}

TEST(AppendPgText, RejectsMalformedIntegersAndBooleans) {
  EXPECT_FALSE(ReadOne(pg_oid::kInt2, -1, "32768").ok());
  EXPECT_FALSE(ReadOne(pg_oid::kInt4, -1, "12a").ok());
  EXPECT_FALSE(ReadOne(pg_oid::kInt8, -1, "").ok());
  EXPECT_FALSE(ReadOne(pg_oid::kBool, -1, "true").ok());
}

}  // namespace
}  // namespace sluice::connectors
