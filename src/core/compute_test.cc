#include "sluice/core/compute.h"

#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sluice/core/builder.h"
#include "sluice/core/column_path.h"
#include "sluice/core/error_classes.h"
#include "testing/columns.h"

namespace sluice {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using sluice::testing::Fixed;
using sluice::testing::Strings;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TypePtr Struct(std::vector<Field> fields) { return DataType::Struct(std::move(fields)).value(); }
TypePtr Decimal(int precision, int scale) { return DataType::Decimal(precision, scale).value(); }

ColumnPtr Ints(const std::vector<std::optional<int32_t>>& values) {
  return Fixed<int32_t>(DataType::Integer(), values);
}
ColumnPtr Doubles(const std::vector<std::optional<double>>& values) {
  return Fixed<double>(DataType::Double(), values);
}

BatchPtr Batch(std::vector<std::pair<std::string, ColumnPtr>> named) {
  std::vector<Field> fields;
  std::vector<ColumnPtr> columns;
  for (auto& [name, column] : named) {
    fields.push_back({name, column->type, true, "{}"});
    columns.push_back(column);
  }
  int64_t rows = columns.empty() ? 0 : columns[0]->length;
  return RecordBatch::Make(Struct(std::move(fields)), std::move(columns), rows).value();
}

// Each row of a batch as "v1 | v2 | ...", the shape the expectations below are written in.
std::vector<std::string> Rows(const BatchPtr& batch) {
  std::vector<std::string> rows;
  for (int64_t r = 0; r < batch->num_rows(); ++r) {
    std::string row;
    for (int c = 0; c < batch->num_columns(); ++c) {
      if (c > 0) row += " | ";
      row += FormatValue(*batch->column(c), r);
    }
    rows.push_back(row);
  }
  return rows;
}

void ExpectValid(const BatchPtr& batch) {
  for (const ColumnPtr& column : batch->columns()) {
    Status status = column->Validate();
    EXPECT_TRUE(status.ok()) << status.ToString();
  }
}

// id int, person struct<name:string, scores:array<int>>, attrs map<string,double>:
//   1 | {"name":"ann","scores":[1,2]}   | {"x":1.5}
//   2 | null                            | {}
//   null | {"name":null,"scores":[]}    | null
//   4 | {"name":"dee","scores":[null,5]}| {"y":NaN,"z":-0.0}
BatchPtr NestedBatch() {
  TypePtr person_type = Struct({{"name", DataType::String(), true, "{}"},
                                {"scores", DataType::Array(DataType::Integer()), true, "{}"}});
  StructBuilder person(person_type);
  auto* name = static_cast<BinaryBuilder*>(person.field_builder(0));
  auto* scores = static_cast<ListBuilder*>(person.field_builder(1));
  auto* score = static_cast<Int32Builder*>(scores->element_builder());
  name->Append("ann");
  score->Append(1);
  score->Append(2);
  scores->Append();
  person.Append();
  person.AppendNull();
  name->AppendNull();
  scores->Append();
  person.Append();
  name->Append("dee");
  score->AppendNull();
  score->Append(5);
  scores->Append();
  person.Append();

  ListBuilder attrs(DataType::Map(DataType::String(), DataType::Double()));
  auto* key = static_cast<BinaryBuilder*>(attrs.key_builder());
  auto* value = static_cast<DoubleBuilder*>(attrs.value_builder());
  key->Append("x");
  value->Append(1.5);
  attrs.Append();
  attrs.Append();
  attrs.AppendNull();
  key->Append("y");
  value->Append(kNaN);
  key->Append("z");
  value->Append(-0.0);
  attrs.Append();

  return Batch({{"id", Ints({1, 2, std::nullopt, 4})}, {"person", person.Finish()}, {"attrs", attrs.Finish()}});
}

const std::vector<std::string> kNestedRows = {
    R"(1 | {"name":"ann","scores":[1,2]} | {"x":1.5})",
    R"(2 | null | {})",
    R"(null | {"name":null,"scores":[]} | null)",
    R"(4 | {"name":"dee","scores":[null,5]} | {"y":NaN,"z":-0.0})",
};

TEST(TakeTest, GathersNestedRowsWithNullsInAnyOrder) {
  BatchPtr batch = NestedBatch();
  ExpectValid(batch);
  ASSERT_EQ(Rows(batch), kNestedRows);
  std::vector<int64_t> indices = {3, 0, 0, 2, 1};
  BatchPtr taken = Take(batch, indices);
  ExpectValid(taken);
  EXPECT_THAT(Rows(taken), ElementsAre(kNestedRows[3], kNestedRows[0], kNestedRows[0], kNestedRows[2], kNestedRows[1]));
  EXPECT_EQ(taken->column(0)->null_count, 1);
  EXPECT_EQ(taken->column(1)->null_count, 1);
}

TEST(TakeTest, DropsTheValidityBufferWhenNoNullIsTaken) {
  BatchPtr taken = Take(NestedBatch(), std::vector<int64_t>{0, 3});
  ExpectValid(taken);
  EXPECT_TRUE(taken->column(0)->validity.empty());
  EXPECT_EQ(taken->column(0)->null_count, 0);
  EXPECT_EQ(Take(NestedBatch(), std::vector<int64_t>{})->num_rows(), 0);
}

TEST(TakeSliceConcatenateTest, EveryPrimitiveType) {
  DecimalBuilder decimals(Decimal(12, 3));
  decimals.Append(-1234567);
  decimals.AppendNull();
  decimals.Append(5);
  BatchPtr batch = Batch({
      {"bool", Fixed<uint8_t>(DataType::Boolean(), std::vector<std::optional<uint8_t>>{1, 0, std::nullopt})},
      {"byte", Fixed<int8_t>(DataType::Byte(), std::vector<std::optional<int8_t>>{-1, std::nullopt, 7})},
      {"short", Fixed<int16_t>(DataType::Short(), std::vector<std::optional<int16_t>>{std::nullopt, 2, 3})},
      {"long", Fixed<int64_t>(DataType::Long(), std::vector<std::optional<int64_t>>{1LL << 40, 0, -3})},
      {"float", Fixed<float>(DataType::Float(), std::vector<std::optional<float>>{0.5f, std::nullopt, -2.0f})},
      {"decimal", decimals.Finish()},
      {"binary", Strings({std::string("\0\1", 2), std::nullopt, "xyz"}, DataType::Binary())},
      {"date", Fixed<int32_t>(DataType::Date(), std::vector<std::optional<int32_t>>{1, 2, std::nullopt})},
      {"ts", Fixed<int64_t>(DataType::Timestamp(), std::vector<std::optional<int64_t>>{1, std::nullopt, 3})},
      {"ntz", Fixed<int64_t>(DataType::TimestampNtz(), std::vector<std::optional<int64_t>>{std::nullopt, 2, 3})},
  });
  const std::vector<std::string> rows = Rows(batch);
  ASSERT_EQ(rows[0],
            "true | -1 | null | 1099511627776 | 0.5 | -1234.567 | AAE= | 1970-01-02 | 1970-01-01T00:00:00.000001Z | null");

  BatchPtr taken = Take(batch, std::vector<int64_t>{2, 0, 1, 2});
  ExpectValid(taken);
  EXPECT_THAT(Rows(taken), ElementsAre(rows[2], rows[0], rows[1], rows[2]));

  BatchPtr sliced = Slice(batch, 1, 2);
  ExpectValid(sliced);
  EXPECT_THAT(Rows(sliced), ElementsAre(rows[1], rows[2]));

  std::vector<BatchPtr> parts = {sliced, Slice(batch, 0, 1)};
  Result<BatchPtr> joined = Concatenate(parts);
  ASSERT_TRUE(joined.ok());
  ExpectValid(*joined);
  EXPECT_THAT(Rows(*joined), ElementsAre(rows[1], rows[2], rows[0]));
}

TEST(SliceTest, CopiesARangeOfNestedRows) {
  BatchPtr batch = NestedBatch();
  BatchPtr middle = Slice(batch, 1, 2);
  ExpectValid(middle);
  EXPECT_THAT(Rows(middle), ElementsAre(kNestedRows[1], kNestedRows[2]));
  BatchPtr tail = Slice(batch, 3, 1);
  ExpectValid(tail);
  EXPECT_THAT(Rows(tail), ElementsAre(kNestedRows[3]));
  EXPECT_EQ(tail->column(1)->children[1]->offsets, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(Slice(batch, 4, 0)->num_rows(), 0);
  ExpectValid(Slice(batch, 4, 0));
}

TEST(ConcatenateTest, ReassemblesSlices) {
  BatchPtr batch = NestedBatch();
  std::vector<BatchPtr> parts = {Slice(batch, 0, 1), Slice(batch, 1, 0), Slice(batch, 1, 3), batch};
  Result<BatchPtr> joined = Concatenate(parts);
  ASSERT_TRUE(joined.ok()) << joined.status().ToString();
  ExpectValid(*joined);
  std::vector<std::string> expected = kNestedRows;
  expected.insert(expected.end(), kNestedRows.begin(), kNestedRows.end());
  EXPECT_EQ(Rows(*joined), expected);
}

TEST(ConcatenateTest, ColumnsOfOneTypeOnly) {
  std::vector<ColumnPtr> same = {Ints({1}), Ints({std::nullopt, 3})};
  Result<ColumnPtr> joined = Concatenate(same);
  ASSERT_TRUE(joined.ok());
  EXPECT_EQ((*joined)->length, 3);
  EXPECT_EQ((*joined)->null_count, 1);
  EXPECT_TRUE((*joined)->Validate().ok());

  std::vector<ColumnPtr> mixed = {Ints({1}), Strings({"a"})};
  Result<ColumnPtr> error = Concatenate(mixed);
  ASSERT_FALSE(error.ok());
  EXPECT_EQ(error.status().error_class(), errors::kInvalidArgument);
  EXPECT_THAT(std::string(error.status().message()), HasSubstr("int column with a string column"));

  std::vector<BatchPtr> batches = {Batch({{"a", Ints({1})}}), Batch({{"b", Ints({1})}})};
  EXPECT_EQ(Concatenate(batches).status().error_class(), errors::kInvalidArgument);
  EXPECT_EQ(Concatenate(std::span<const ColumnPtr>()).status().error_class(), errors::kInvalidArgument);
}

TEST(SortIndicesTest, DoublesSortNullsFirstNaNLastAndStably) {
  BatchPtr batch = Batch({{"x", Doubles({3.0, kNaN, std::nullopt, -0.0, 0.0, -kInf, 1.0, std::nullopt, -kNaN})}});
  std::vector<int> keys = {0};
  Result<std::vector<int64_t>> order = SortIndices(batch, keys);
  ASSERT_TRUE(order.ok());
  // -0.0 equals 0.0 and NaN equals NaN, so those keep their input order.
  EXPECT_THAT(*order, ElementsAre(2, 7, 5, 3, 4, 6, 0, 1, 8));
}

TEST(SortIndicesTest, SeveralKeysOfDifferentTypes) {
  BatchPtr batch = Batch({
      {"city", Strings({"oslo", "bergen", std::nullopt, "oslo", "bergen", "Oslo"})},
      {"age", Ints({30, 25, 40, 20, 25, std::nullopt})},
      {"row", Ints({0, 1, 2, 3, 4, 5})},
  });
  std::vector<int> keys = {0, 1};
  Result<std::vector<int64_t>> order = SortIndices(batch, keys);
  ASSERT_TRUE(order.ok());
  // Byte order puts "Oslo" before "bergen"; rows 1 and 4 tie on both keys and stay in order.
  EXPECT_THAT(*order, ElementsAre(2, 5, 1, 4, 3, 0));
}

TEST(SortIndicesTest, EveryComparableTypeSorts) {
  DecimalBuilder decimals(Decimal(20, 2));
  decimals.Append(static_cast<int128_t>(5) << 70);
  decimals.Append(-1);
  decimals.AppendNull();
  BatchPtr batch = Batch({{"d", decimals.Finish()},
                          {"b", Strings({"\xff", "a", ""}, DataType::Binary())},
                          {"t", Fixed<int64_t>(DataType::Timestamp(), std::vector<std::optional<int64_t>>{9, -9, 0})},
                          {"f", Fixed<uint8_t>(DataType::Boolean(), std::vector<std::optional<uint8_t>>{1, 0, 1})}});
  std::vector<int> by_decimal = {0};
  EXPECT_THAT(SortIndices(batch, by_decimal).value(), ElementsAre(2, 1, 0));
  std::vector<int> by_binary = {1};
  EXPECT_THAT(SortIndices(batch, by_binary).value(), ElementsAre(2, 1, 0));
  std::vector<int> by_timestamp = {2};
  EXPECT_THAT(SortIndices(batch, by_timestamp).value(), ElementsAre(1, 2, 0));
  std::vector<int> by_boolean_then_timestamp = {3, 2};
  EXPECT_THAT(SortIndices(batch, by_boolean_then_timestamp).value(), ElementsAre(1, 2, 0));
}

TEST(SortIndicesTest, NestedKeysAreRefused) {
  std::vector<int> keys = {1};
  Result<std::vector<int64_t>> order = SortIndices(NestedBatch(), keys);
  ASSERT_FALSE(order.ok());
  EXPECT_EQ(order.status().error_class(), errors::kDatatypeMismatch);
  std::vector<int> out_of_range = {7};
  EXPECT_EQ(SortIndices(NestedBatch(), out_of_range).status().error_class(), errors::kInvalidArgument);
}

TEST(HashRowsTest, EqualKeysHashAlike) {
  BatchPtr batch = Batch({{"x", Doubles({0.0, -0.0, kNaN, -kNaN, std::nullopt, std::nullopt})},
                          {"s", Strings({"k", "k", "a much longer key over 8 bytes", "a much longer key over 8 bytes",
                                         std::nullopt, std::nullopt})}});
  std::vector<int> keys = {0, 1};
  std::vector<uint64_t> hashes = HashRows(batch, keys);
  ASSERT_EQ(hashes.size(), 6u);
  EXPECT_EQ(hashes[0], hashes[1]);
  EXPECT_EQ(hashes[2], hashes[3]);
  EXPECT_EQ(hashes[4], hashes[5]);
  EXPECT_NE(hashes[0], hashes[2]);
  EXPECT_NE(hashes[0], hashes[4]);

  std::vector<int> nested_keys = {0, 1, 2};
  std::vector<int64_t> twice = {0, 1, 2, 3, 0, 1, 2, 3};
  std::vector<uint64_t> nested = HashRows(Take(NestedBatch(), twice), nested_keys);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(nested[i], nested[i + 4]);
  EXPECT_EQ(std::set<uint64_t>(nested.begin(), nested.end()).size(), 4u);
}

TEST(HashRowsTest, DifferentKeysHashApart) {
  std::vector<std::optional<int32_t>> a;
  std::vector<std::optional<int32_t>> b;
  std::vector<std::optional<std::string>> s;
  for (int i = 0; i < 100; ++i) {
    for (int j = 0; j < 100; ++j) {
      a.push_back(i);
      b.push_back(j);
      s.push_back(std::to_string(i) + "/" + std::to_string(j));
    }
  }
  BatchPtr batch = Batch({{"a", Ints(a)}, {"b", Ints(b)}, {"s", Strings(s)}});
  std::vector<int> ints = {0, 1};
  std::vector<uint64_t> int_hashes = HashRows(batch, ints);
  EXPECT_EQ(std::set<uint64_t>(int_hashes.begin(), int_hashes.end()).size(), 10000u);
  std::vector<int> strings = {2};
  std::vector<uint64_t> string_hashes = HashRows(batch, strings);
  EXPECT_EQ(std::set<uint64_t>(string_hashes.begin(), string_hashes.end()).size(), 10000u);
  // Key order matters: (1, 2) and (2, 1) differ.
  EXPECT_NE(int_hashes[1 * 100 + 2], int_hashes[2 * 100 + 1]);
  // Low bits spread evenly enough to partition by: 16 buckets of 10000 rows, none far off 625.
  std::vector<int> buckets(16);
  for (uint64_t h : int_hashes) ++buckets[h % 16];
  for (int count : buckets) EXPECT_NEAR(count, 625, 125);
}

TEST(HashRowsTest, StableAcrossRuns) {
  BatchPtr batch = Batch({{"a", Ints({1, std::nullopt})}, {"s", Strings({"sluice", ""})}});
  std::vector<int> keys = {0, 1};
  std::vector<uint64_t> hashes = HashRows(batch, keys);
  // Partitioning depends on these values staying the same from one build to the next.
  EXPECT_EQ(hashes, HashRows(batch, keys));
  EXPECT_EQ(HashRows(Batch({{"a", Ints({1})}}), std::vector<int>{0})[0],
            HashRows(Batch({{"a", Ints({1})}}), std::vector<int>{0})[0]);
}

TEST(ColumnAtTest, ResolvesDotPathsIgnoringCase) {
  TypePtr user_type = Struct({{"email", DataType::String(), true, "{}"}});
  StructBuilder value(Struct({{"user", user_type, true, "{}"}}));
  auto* user = static_cast<StructBuilder*>(value.field_builder(0));
  auto* email = static_cast<BinaryBuilder*>(user->field_builder(0));
  email->Append("a@example.com");
  user->Append();
  value.Append();
  value.AppendNull();
  BatchPtr batch = Batch({{"value", value.Finish()}, {"a.b", Ints({7, 8})}, {"ab", Ints({1, 2})}, {"AB", Ints({3, 4})}});

  Result<ColumnPtr> found = batch->ColumnAt("value.user.email");
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_EQ(FormatValue(**found, 0), "a@example.com");
  EXPECT_EQ(FormatValue(**found, 1), "null");
  EXPECT_EQ(batch->ColumnAt("VALUE.User.EMAIL").value(), *found);
  EXPECT_EQ(batch->ColumnAt("`value`.`user`.email").value(), *found);
  EXPECT_EQ(FormatValue(*batch->ColumnAt("`a.b`").value(), 0), "7");
  EXPECT_EQ(FormatValue(*batch->ColumnAt("AB").value(), 0), "3");
  EXPECT_EQ(FormatValue(*batch->ColumnAt("ab").value(), 0), "1");
}

// A name as one part of a path comes back whole, whatever dots and back quotes it holds.
TEST(ColumnAtTest, NamesQuotedAsPathPartsParseBackWhole) {
  for (std::string_view name : {"plain", "id.num", "id.num`s", "`", "``", ".", "a..b`c`.d", "sp ace", "ünï.cödé"}) {
    const std::string part = ColumnPathPart(name);
    Result<std::vector<std::string>> parts = ParseColumnPath(part);
    ASSERT_TRUE(parts.ok()) << part << ": " << parts.status().ToString();
    EXPECT_EQ(*parts, std::vector<std::string>{std::string(name)}) << part;
    Result<std::vector<std::string>> nested = ParseColumnPath(part + "." + ColumnPathPart("x.y"));
    EXPECT_EQ(nested.value(), (std::vector<std::string>{std::string(name), "x.y"})) << part;
  }
  EXPECT_EQ(ColumnPathPart("plain"), "plain");
  EXPECT_EQ(ColumnPathPart("id.num`s"), "`id.num``s`");
}

TEST(ColumnListTest, NamesQuotedAsListItemsParseBackWhole) {
  const std::vector<std::string_view> names = {"plain", "day=of,week", "a`b", "`", ",", " lead", "trail ", "a b",
                                               "id.num", "ünï,cödé"};
  std::string list;
  for (std::string_view name : names) {
    const std::string item = ColumnListItem(name);
    EXPECT_EQ(ParseColumnList(item).value(), std::vector<std::string>{std::string(name)}) << item;
    list += (list.empty() ? "" : ", ") + item;
  }
  EXPECT_EQ(ParseColumnList(list).value(), std::vector<std::string>(names.begin(), names.end())) << list;
  EXPECT_EQ(ColumnListItem("plain"), "plain");
  EXPECT_EQ(ColumnListItem("id.num"), "id.num");  // a list holds top-level names: dots are theirs
  EXPECT_EQ(ColumnListItem("day=of,week"), "`day=of,week`");
  EXPECT_EQ(ParseColumnList(" day ,region,\tx ").value(), (std::vector<std::string>{"day", "region", "x"}));
  EXPECT_EQ(ParseColumnList("` a `").value(), std::vector<std::string>{" a "});
  for (std::string_view bad : {"", " ", "a,", ",a", "a,,b", "`a", "`a`b", "`a` b", "``"}) {
    Result<std::vector<std::string>> parsed = ParseColumnList(bad);
    ASSERT_FALSE(parsed.ok()) << "'" << bad << "'";
    EXPECT_EQ(parsed.status().error_class(), errors::kInvalidArgument) << bad;
  }
}

TEST(ColumnAtTest, UnresolvedNamesSuggestTheClosest) {
  BatchPtr batch = Batch({{"value", NestedBatch()->column(1)},
                          {"ab", Ints({1, 2, 3, 4})},
                          {"AB", Ints({3, 4, 5, 6})}});
  Result<ColumnPtr> typo = batch->ColumnAt("value.nmae");
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.status().error_class(), errors::kUnresolvedColumn);
  EXPECT_THAT(std::string(typo.status().message()), HasSubstr("`value` has no field `nmae`"));
  EXPECT_THAT(std::string(typo.status().message()), HasSubstr("Did you mean one of the following? [`value.name`, "));

  Result<ColumnPtr> ambiguous = batch->ColumnAt("Ab");
  EXPECT_EQ(ambiguous.status().error_class(), errors::kUnresolvedColumn);
  EXPECT_THAT(std::string(ambiguous.status().message()), HasSubstr("matches several"));

  Result<ColumnPtr> through_array = batch->ColumnAt("value.scores.x");
  EXPECT_EQ(through_array.status().error_class(), errors::kUnresolvedColumn);
  EXPECT_THAT(std::string(through_array.status().message()), HasSubstr("`scores` is array<int>, not a struct"));

  EXPECT_EQ(batch->ColumnAt("value..name").status().error_class(), errors::kInvalidArgument);
  EXPECT_EQ(batch->ColumnAt("`value").status().error_class(), errors::kInvalidArgument);
}

TEST(ColumnAtTest, ANullStructRowMakesItsFieldNull) {
  // Built by hand to break the builders' own guarantee: the field is valid under a null parent.
  auto parent = std::make_shared<Column>();
  parent->type = Struct({{"x", DataType::Integer(), true, "{}"}});
  parent->length = 2;
  parent->null_count = 1;
  parent->validity = {1, 0};
  parent->children = {Ints({10, 20})};
  BatchPtr batch = Batch({{"s", parent}});
  ColumnPtr x = batch->ColumnAt("s.x").value();
  EXPECT_EQ(FormatValue(*x, 0), "10");
  EXPECT_EQ(FormatValue(*x, 1), "null");
  EXPECT_EQ(x->null_count, 1);
}

TEST(FormatValueTest, Numbers) {
  EXPECT_EQ(FormatValue(*Fixed<uint8_t>(DataType::Boolean(), std::vector<std::optional<uint8_t>>{1}), 0), "true");
  EXPECT_EQ(FormatValue(*Fixed<int8_t>(DataType::Byte(), std::vector<std::optional<int8_t>>{-128}), 0), "-128");
  EXPECT_EQ(FormatValue(*Fixed<int16_t>(DataType::Short(), std::vector<std::optional<int16_t>>{300}), 0), "300");
  EXPECT_EQ(FormatValue(*Ints({-7}), 0), "-7");
  EXPECT_EQ(FormatValue(*Fixed<int64_t>(DataType::Long(),
                                             std::vector<std::optional<int64_t>>{std::numeric_limits<int64_t>::min()}),
                        0),
            "-9223372036854775808");
  EXPECT_EQ(FormatValue(*Fixed<float>(DataType::Float(), std::vector<std::optional<float>>{0.1f}), 0), "0.1");
  ColumnPtr doubles = Doubles({1.0, 0.1, 123456.789, 1e7, 9999999.0, 0.001, 1e-4, -2.5e-10, 1.0 / 3, kNaN, -kInf, -0.0,
                               std::nullopt, 1e21});
  std::vector<std::string> texts;
  for (int64_t i = 0; i < doubles->length; ++i) texts.push_back(FormatValue(*doubles, i));
  EXPECT_THAT(texts, ElementsAre("1.0", "0.1", "123456.789", "1.0E7", "9999999.0", "0.001", "1.0E-4", "-2.5E-10",
                                 "0.3333333333333333", "NaN", "-Infinity", "-0.0", "null", "1.0E21"));
}

TEST(FormatValueTest, DecimalsAreExact) {
  auto text = [](int precision, int scale, int128_t unscaled) {
    DecimalBuilder builder(Decimal(precision, scale));
    builder.Append(unscaled);
    return FormatValue(*builder.Finish(), 0);
  };
  EXPECT_EQ(text(5, 2, 12345), "123.45");
  EXPECT_EQ(text(5, 2, -5), "-0.05");
  EXPECT_EQ(text(5, 0, 0), "0");
  EXPECT_EQ(text(3, 3, 7), "0.007");
  int128_t max38 = 0;
  for (int i = 0; i < 38; ++i) max38 = max38 * 10 + 9;
  EXPECT_EQ(text(38, 0, max38), "99999999999999999999999999999999999999");
  EXPECT_EQ(text(38, 38, -max38), "-0.99999999999999999999999999999999999999");
  EXPECT_EQ(text(38, 10, max38), "9999999999999999999999999999.9999999999");
}

TEST(FormatValueTest, DatesTimestampsAndBinary) {
  ColumnPtr dates = Fixed<int32_t>(DataType::Date(), std::vector<std::optional<int32_t>>{0, -1, 20484, -719162});
  EXPECT_EQ(FormatValue(*dates, 0), "1970-01-01");
  EXPECT_EQ(FormatValue(*dates, 1), "1969-12-31");
  EXPECT_EQ(FormatValue(*dates, 2), "2026-01-31");
  EXPECT_EQ(FormatValue(*dates, 3), "0001-01-01");
  std::vector<std::optional<int64_t>> micros = {1769853600123456, 1769853600000000, -1, 0};
  ColumnPtr utc = Fixed<int64_t>(DataType::Timestamp(), micros);
  EXPECT_EQ(FormatValue(*utc, 0), "2026-01-31T10:00:00.123456Z");
  EXPECT_EQ(FormatValue(*utc, 1), "2026-01-31T10:00:00Z");
  EXPECT_EQ(FormatValue(*utc, 2), "1969-12-31T23:59:59.999999Z");
  ColumnPtr ntz = Fixed<int64_t>(DataType::TimestampNtz(), micros);
  EXPECT_EQ(FormatValue(*ntz, 0), "2026-01-31T10:00:00.123456");
  EXPECT_EQ(FormatValue(*ntz, 3), "1970-01-01T00:00:00");
  ColumnPtr binary = Strings({std::string("\x00\xff", 2), "a", "ab", "abc", ""}, DataType::Binary());
  EXPECT_EQ(FormatValue(*binary, 0), "AP8=");
  EXPECT_EQ(FormatValue(*binary, 1), "YQ==");
  EXPECT_EQ(FormatValue(*binary, 2), "YWI=");
  EXPECT_EQ(FormatValue(*binary, 3), "YWJj");
  EXPECT_EQ(FormatValue(*binary, 4), "");
  EXPECT_EQ(FormatValue(*Strings({"plain \"text\""}), 0), "plain \"text\"");
}

TEST(FormatValueTest, NestedValuesReadAsJson) {
  StructBuilder row(Struct({{"when", DataType::Date(), true, "{}"},
                            {"raw", DataType::Binary(), true, "{}"},
                            {"tags", DataType::Map(DataType::Integer(), DataType::String()), true, "{}"}}));
  static_cast<Int32Builder*>(row.field_builder(0))->Append(0);
  static_cast<BinaryBuilder*>(row.field_builder(1))->Append("a");
  auto* tags = static_cast<ListBuilder*>(row.field_builder(2));
  static_cast<Int32Builder*>(tags->key_builder())->Append(1);
  static_cast<BinaryBuilder*>(tags->value_builder())->Append("say \"hi\"\n");
  tags->Append();
  row.Append();
  EXPECT_EQ(FormatValue(*row.Finish(), 0), R"({"when":"1970-01-01","raw":"YQ==","tags":{"1":"say \"hi\"\n"}})");
}

TEST(FormatValueTest, JsonValuesQuoteWhatAJsonReaderWouldRoundOrCannotRead) {
  auto json = [](const ColumnPtr& column, int64_t row) {
    std::string out;
    AppendValueJson(*column, row, &out);
    return out;
  };
  ColumnPtr doubles = Doubles({1e7, kNaN, -kInf, std::nullopt});
  EXPECT_EQ(json(doubles, 0), "1.0E7");
  EXPECT_EQ(json(doubles, 1), "\"NaN\"");
  EXPECT_EQ(json(doubles, 2), "\"-Infinity\"");
  EXPECT_EQ(json(doubles, 3), "null");
  DecimalBuilder decimal(Decimal(38, 2));
  decimal.Append(static_cast<int128_t>(-12345));
  EXPECT_EQ(json(decimal.Finish(), 0), "\"-123.45\"");
  EXPECT_EQ(json(Strings({"say \"hi\""}), 0), R"("say \"hi\"")");
  EXPECT_EQ(json(Fixed<int64_t>(DataType::Timestamp(), std::vector<std::optional<int64_t>>{0}), 0),
            "\"1970-01-01T00:00:00Z\"");

  StructBuilder row(Struct({{"n", DataType::Integer(), true, "{}"},
                            {"d", Decimal(5, 1), true, "{}"},
                            {"xs", DataType::Array(DataType::Double()), true, "{}"}}));
  static_cast<Int32Builder*>(row.field_builder(0))->Append(7);
  static_cast<DecimalBuilder*>(row.field_builder(1))->Append(static_cast<int128_t>(15));
  auto* xs = static_cast<ListBuilder*>(row.field_builder(2));
  static_cast<DoubleBuilder*>(xs->element_builder())->Append(0.5);
  static_cast<DoubleBuilder*>(xs->element_builder())->Append(kInf);
  xs->Append();
  row.Append();
  ColumnPtr nested = row.Finish();
  EXPECT_EQ(json(nested, 0), R"({"n":7,"d":"1.5","xs":[0.5,"Infinity"]})");
  std::string exact;
  AppendValueJson(*nested, 0, &exact, JsonDecimals::kBare);
  EXPECT_EQ(exact, R"({"n":7,"d":1.5,"xs":[0.5,"Infinity"]})") << "for readers that keep numbers exact (jsonb)";
  std::string text;
  AppendValue(*nested, 0, &text);
  EXPECT_EQ(text, R"({"n":7,"d":1.5,"xs":[0.5,Infinity]})");
}

TEST(PrettyPrintTest, LooksLikeSparkShow) {
  BatchPtr batch = Batch({{"id", Ints({1, 22, std::nullopt})},
                          {"name", Strings({"ann", "a name that is much too long to show", "two\nlines"})},
                          {"score", Doubles({1.5, kNaN, -0.0})}});
  EXPECT_EQ(PrettyPrint(*batch),
            "+----+--------------------+-----+\n"
            "|  id|                name|score|\n"
            "+----+--------------------+-----+\n"
            "|   1|                 ann|  1.5|\n"
            "|  22|a name that is mu...|  NaN|\n"
            "|null|          two\\nlines| -0.0|\n"
            "+----+--------------------+-----+\n");
  EXPECT_EQ(PrettyPrint(*batch, 1),
            "+---+----+-----+\n"
            "| id|name|score|\n"
            "+---+----+-----+\n"
            "|  1| ann|  1.5|\n"
            "+---+----+-----+\n"
            "only showing top 1 row\n");
}

TEST(PrettyPrintTest, TruncatesWhereAskedAsSparkShow) {
  BatchPtr batch = Batch({{"name", Strings({"abcdefgh", "ab"})}});
  EXPECT_EQ(PrettyPrint(*batch, 20, 0),
            "+--------+\n"
            "|    name|\n"
            "+--------+\n"
            "|abcdefgh|\n"
            "|      ab|\n"
            "+--------+\n");
  EXPECT_EQ(PrettyPrint(*batch, 20, 6),
            "+------+\n"
            "|  name|\n"
            "+------+\n"
            "|abc...|\n"
            "|    ab|\n"
            "+------+\n");
  // Below four characters there is no room for "...": the value is cut alone.
  EXPECT_EQ(PrettyPrint(*batch, 20, 3),
            "+---+\n"
            "|nam|\n"
            "+---+\n"
            "|abc|\n"
            "| ab|\n"
            "+---+\n");
}

TEST(PrettyPrintTest, CountsCharactersNotBytes) {
  BatchPtr batch = Batch({{"città", Strings({"Zürich", "ééééééééééééééééééééé"})}});
  EXPECT_EQ(PrettyPrint(*batch),
            "+--------------------+\n"
            "|               città|\n"
            "+--------------------+\n"
            "|              Zürich|\n"
            "|ééééééééééééééééé...|\n"
            "+--------------------+\n");
}

}  // namespace
}  // namespace sluice
