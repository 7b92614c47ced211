#include "sluice/core/types.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(DataType, DecimalAcceptsOnlySparkPrecisionAndScale) {
  EXPECT_TRUE(DataType::Decimal(38, 38).ok());
  EXPECT_TRUE(DataType::Decimal(1, 0).ok());
  EXPECT_EQ(DataType::Decimal(39, 0).status().error_class(), "INVALID_DATA_TYPE");
  EXPECT_EQ(DataType::Decimal(5, 6).status().error_class(), "INVALID_DATA_TYPE");
  EXPECT_EQ(DataType::Decimal(0, 0).status().error_class(), "INVALID_DATA_TYPE");
}

TEST(DataType, StructRejectsDuplicateAndEmptyNames) {
  EXPECT_EQ(DataType::Struct({{"a", DataType::Long()}, {"a", DataType::Long()}}).status().error_class(),
            "INVALID_SCHEMA");
  EXPECT_EQ(DataType::Struct({{"", DataType::Long()}}).status().error_class(), "INVALID_SCHEMA");
}

TEST(DataType, PrintsSparkSimpleStrings) {
  TypePtr t = *DataType::Struct({{"id", DataType::Long()},
                                 {"amount", *DataType::Decimal(10, 2)},
                                 {"tags", DataType::Array(DataType::String())},
                                 {"attrs", DataType::Map(DataType::String(), DataType::Integer())},
                                 {"weird name", DataType::Short()}});
  EXPECT_EQ(t->ToString(),
            "struct<id:bigint,amount:decimal(10,2),tags:array<string>,attrs:map<string,int>,`weird name`:smallint>");
}

TEST(DataType, EqualityLooksAtEveryComponent) {
  EXPECT_TRUE(DataType::Array(DataType::Long())->Equals(*DataType::Array(DataType::Long())));
  EXPECT_FALSE(DataType::Array(DataType::Long(), true)->Equals(*DataType::Array(DataType::Long(), false)));
  EXPECT_FALSE((*DataType::Decimal(10, 2))->Equals(**DataType::Decimal(10, 3)));
  TypePtr a = *DataType::Struct({{"x", DataType::Long(), true}});
  TypePtr b = *DataType::Struct({{"x", DataType::Long(), false}});
  EXPECT_FALSE(a->Equals(*b));
}

TEST(DataType, ResolvesFieldsExactlyOrIgnoringCase) {
  TypePtr t = *DataType::Struct({{"Name", DataType::String()}, {"NAME", DataType::String()}, {"id", DataType::Long()}});
  EXPECT_EQ(t->FieldIndex("NAME"), 1);
  EXPECT_EQ(t->FieldIndexIgnoreCase("ID"), 2);
  EXPECT_EQ(t->FieldIndexIgnoreCase("name"), -2);
  EXPECT_EQ(t->FieldIndexIgnoreCase("missing"), -1);
}

TEST(DataType, ByteWidthsMatchThePhysicalLayout) {
  EXPECT_EQ(DataType::Boolean()->byte_width(), 1);
  EXPECT_EQ(DataType::Date()->byte_width(), 4);
  EXPECT_EQ(DataType::TimestampNtz()->byte_width(), 8);
  EXPECT_EQ((*DataType::Decimal(38, 0))->byte_width(), 16);
  EXPECT_EQ(DataType::String()->byte_width(), 0);
}

}  // namespace
}  // namespace sluice
