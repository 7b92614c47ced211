#include "sluice/core/builder.h"

#include <gtest/gtest.h>

#include "sluice/core/record_batch.h"

namespace sluice {
namespace {

TEST(FixedWidthBuilder, AppendsValuesAndNullsIntoOneColumn) {
  Int64Builder builder(DataType::Long());
  builder.Append(7);
  builder.AppendNull();
  builder.Append(-3);
  ColumnPtr column = builder.Finish();

  ASSERT_TRUE(column->Validate().ok()) << column->Validate().ToString();
  EXPECT_EQ(column->length, 3);
  EXPECT_EQ(column->null_count, 1);
  EXPECT_TRUE(column->IsValid(0));
  EXPECT_TRUE(column->IsNull(1));
  EXPECT_EQ(column->Value<int64_t>(0), 7);
  EXPECT_EQ(column->Value<int64_t>(2), -3);
}

TEST(FixedWidthBuilder, LeavesValidityEmptyWhenNoRowIsNull) {
  Int32Builder builder(DataType::Integer());
  for (int i = 0; i < 100; ++i) builder.Append(i);
  ColumnPtr column = builder.Finish();
  EXPECT_TRUE(column->validity.empty());
  EXPECT_EQ(column->values<int32_t>()[99], 99);
}

TEST(FixedWidthBuilder, IsEmptyAndReusableAfterFinish) {
  DecimalBuilder builder(*DataType::Decimal(38, 2));
  builder.AppendNull();
  builder.Finish();
  builder.Append(static_cast<int128_t>(12345));
  ColumnPtr column = builder.Finish();
  ASSERT_TRUE(column->Validate().ok());
  EXPECT_EQ(column->length, 1);
  EXPECT_EQ(column->null_count, 0);
  EXPECT_TRUE(column->Value<int128_t>(0) == 12345);
}

TEST(BinaryBuilder, KeepsOffsetsAndBytes) {
  BinaryBuilder builder(DataType::String());
  builder.Append("héllo");
  builder.AppendNull();
  builder.Append("");
  builder.Append("world");
  ColumnPtr column = builder.Finish();
  ASSERT_TRUE(column->Validate().ok()) << column->Validate().ToString();
  EXPECT_EQ(column->View(0), "héllo");
  EXPECT_TRUE(column->IsNull(1));
  EXPECT_EQ(column->View(2), "");
  EXPECT_EQ(column->View(3), "world");
  EXPECT_EQ(column->offsets, (std::vector<int64_t>{0, 6, 6, 6, 11}));
}

TEST(StructBuilder, NullRowsAreNullInEveryField) {
  TypePtr type = *DataType::Struct({{"a", DataType::Integer()}, {"b", DataType::String()}});
  StructBuilder builder(type);
  static_cast<Int32Builder*>(builder.field_builder(0))->Append(1);
  static_cast<BinaryBuilder*>(builder.field_builder(1))->Append("x");
  builder.Append();
  builder.AppendNull();
  ColumnPtr column = builder.Finish();
  ASSERT_TRUE(column->Validate().ok()) << column->Validate().ToString();
  EXPECT_EQ(column->children[0]->Value<int32_t>(0), 1);
  EXPECT_TRUE(column->IsNull(1));
  EXPECT_TRUE(column->children[0]->IsNull(1));
  EXPECT_TRUE(column->children[1]->IsNull(1));
}

TEST(ListBuilder, BuildsArraysOfVaryingLength) {
  ListBuilder builder(DataType::Array(DataType::Long()));
  auto* elements = static_cast<Int64Builder*>(builder.element_builder());
  elements->Append(1);
  elements->Append(2);
  builder.Append();   // [1, 2]
  builder.Append();   // []
  builder.AppendNull();
  elements->AppendNull();
  builder.Append();   // [null]
  ColumnPtr column = builder.Finish();
  ASSERT_TRUE(column->Validate().ok()) << column->Validate().ToString();
  EXPECT_EQ(column->offsets, (std::vector<int64_t>{0, 2, 2, 2, 3}));
  EXPECT_EQ(column->null_count, 1);
  EXPECT_TRUE(column->children[0]->IsNull(2));
}

TEST(ListBuilder, BuildsMapsFromKeyAndValueChildren) {
  ListBuilder builder(DataType::Map(DataType::String(), DataType::Integer()));
  static_cast<BinaryBuilder*>(builder.key_builder())->Append("k");
  static_cast<Int32Builder*>(builder.value_builder())->Append(5);
  builder.Append();
  ColumnPtr column = builder.Finish();
  ASSERT_TRUE(column->Validate().ok()) << column->Validate().ToString();
  EXPECT_EQ(column->children[0]->View(0), "k");
  EXPECT_EQ(column->children[1]->Value<int32_t>(0), 5);
}

TEST(ColumnValidate, RejectsInconsistentLayouts) {
  Column column;
  column.type = DataType::String();
  column.length = 2;
  column.offsets = {0, 3, 2};
  column.data = {'a', 'b'};
  EXPECT_EQ(column.Validate().error_class(), "INTERNAL_ERROR");

  Column ints;
  ints.type = DataType::Integer();
  ints.length = 2;
  ints.data.resize(4);
  EXPECT_FALSE(ints.Validate().ok());
}

TEST(MakeNullColumn, HoldsOnlyNulls) {
  ColumnPtr column = MakeNullColumn(*DataType::Struct({{"x", DataType::Array(DataType::Double())}}), 3);
  ASSERT_TRUE(column->Validate().ok()) << column->Validate().ToString();
  EXPECT_EQ(column->null_count, 3);
}

TEST(RecordBatch, MakeChecksColumnsAgainstTheSchema) {
  TypePtr schema = *DataType::Struct({{"id", DataType::Long()}});
  Int64Builder builder(DataType::Long());
  builder.Append(1);
  ColumnPtr ids = builder.Finish();
  auto ok = RecordBatch::Make(schema, {ids}, 1);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ((*ok)->num_rows(), 1);

  EXPECT_EQ(RecordBatch::Make(schema, {ids}, 2).status().error_class(), "INVALID_ARGUMENT");
  Int32Builder wrong(DataType::Integer());
  wrong.Append(1);
  EXPECT_EQ(RecordBatch::Make(schema, {wrong.Finish()}, 1).status().error_class(), "DATATYPE_MISMATCH");
  EXPECT_EQ(RecordBatch::Empty(schema)->num_rows(), 0);
}

}  // namespace
}  // namespace sluice
