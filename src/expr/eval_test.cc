// Evaluation, table-driven: {expression, expected rows of the sample batch} (see test_util.h
// for the batch). Values are shown as FormatValue prints them; "null" is a null row.
#include <cmath>

#include <gtest/gtest.h>

#include "expr/test_util.h"
#include "sluice/core/error_classes.h"

namespace sluice::expr {
namespace {

using testing::Eval;
using testing::Fixed;
using testing::SampleBatch;
using Rows = std::vector<std::string>;

struct Case {
  const char* sql;
  Rows expected;
};

void Check(const std::vector<Case>& cases) {
  for (const Case& c : cases) EXPECT_EQ(Eval(c.sql), c.expected) << c.sql;
}

// Chains just under the parser's bound bind and evaluate (walks of the tree that recurse stay within
// the stack), to the values a shorter chain gives.
TEST(EvalTest, ChainsJustUnderTheDepthBoundBindAndEvaluate) {
  auto chain = [](std::string_view first, std::string_view link, int count) {
    std::string text(first);
    for (int k = 0; k < count; ++k) text += link;
    return text;
  };
  EXPECT_EQ(Eval(chain("l", " + 1", 190)), (std::vector<std::string>{"200", "null", "220", "230"}));
  EXPECT_EQ(Eval(chain("i = 2", " OR i = 2", 190)), (std::vector<std::string>{"false", "true", "null", "false"}));
  EXPECT_EQ(Eval(chain("s", " || 'x'", 190)).at(3), std::string(190, 'x'));
  EXPECT_EQ(testing::TypeOf(chain("i", " * 1", 190)), "int");
}

TEST(EvalTest, ArithmeticWrapsAndDividesByZeroToNull) {
  const testing::NonAnsiMode non_ansi;  // the answers of Spark's non-ANSI mode
  Check({
      {"i + l", {"11", "null", "null", "36"}},
      {"i - 1", {"0", "1", "null", "-5"}},
      {"i * 2", {"2", "4", "null", "-8"}},
      {"i / 2", {"0.5", "1.0", "null", "-2.0"}},
      {"i / 0", {"null", "null", "null", "null"}},
      {"i div 2", {"0", "1", "null", "-2"}},
      {"i % 3", {"1", "2", "null", "-1"}},
      {"i % 0", {"null", "null", "null", "null"}},
      {"mod(i, 3)", {"1", "2", "null", "-1"}},
      {"-i", {"-1", "-2", "null", "4"}},
      {"2147483647 + i", {"-2147483648", "-2147483647", "null", "2147483643"}},
      {"(-9223372036854775807L - 1) div -1", {"-9223372036854775808", "-9223372036854775808", "-9223372036854775808", "-9223372036854775808"}},
      {"-2147483648 div -1", {"2147483648", "2147483648", "2147483648", "2147483648"}},
      {"d * 2", {"3.0", "-4.0", "null", "NaN"}},
      {"d / 0", {"null", "null", "null", "null"}},
      {"'1.5' + i", {"2.5", "3.5", "null", "-2.5"}},
      {"s + 1", {"null", "null", "null", "null"}},
      {"1.5F * 2", {"3.0", "3.0", "3.0", "3.0"}},
  });
}

TEST(EvalTest, DecimalArithmeticIsExact) {
  const testing::NonAnsiMode non_ansi;  // the answers of Spark's non-ANSI mode
  Check({
      {"dec + 1", {"2.50", "-1.25", "null", "101.00"}},
      {"dec - 0.005", {"1.495", "-2.255", "null", "99.995"}},
      {"dec * dec", {"2.2500", "5.0625", "null", "10000.0000"}},
      {"dec / 3", {"0.500000", "-0.750000", "null", "33.333333"}},
      {"dec / 0", {"null", "null", "null", "null"}},
      {"dec % 1", {"0.50", "-0.25", "null", "0.00"}},
      {"dec div 1", {"1", "-2", "null", "100"}},
      {"-dec", {"-1.50", "2.25", "null", "-100.00"}},
      {"0.1 + 0.2 = 0.3", {"true", "true", "true", "true"}},
      // A result beyond decimal(38) is null, as Spark's non-ANSI mode.
      {"CAST('99999999999999999999999999999999999999' AS decimal(38,0)) + 1", {"null", "null", "null", "null"}},
  });
}

TEST(EvalTest, DateAndIntervalArithmetic) {
  Check({
      {"dt + 1", {"2026-02-01", "null", "2024-03-01", "1970-01-01"}},
      {"dt - 1", {"2026-01-30", "null", "2024-02-28", "1969-12-30"}},
      {"CAST(ts + INTERVAL 1 HOUR AS string)", {"2026-01-31 11:30:15.5", "null", "2024-02-29 01:00:00", "1970-01-01 00:59:59"}},
      {"CAST(ts - INTERVAL 1 MONTH AS string)",
       {"2025-12-31 10:30:15.5", "null", "2024-01-29 00:00:00", "1969-11-30 23:59:59"}},
      {"dt + INTERVAL 1 MONTH", {"2026-02-28", "null", "2024-03-29", "1970-01-31"}},
      {"dt + INTERVAL '1' YEAR", {"2027-01-31", "null", "2025-02-28", "1970-12-31"}},
  });
}

TEST(EvalTest, ComparisonsCoerceAndOrderNaNLast) {
  Check({
      {"i > 1", {"false", "true", "null", "false"}},
      {"1 < i", {"false", "true", "null", "false"}},
      {"i = l", {"false", "null", "null", "false"}},
      {"i >= 2", {"false", "true", "null", "false"}},
      {"i <= 1", {"true", "false", "null", "true"}},
      {"i != 1", {"false", "true", "null", "true"}},
      {"d = d", {"true", "true", "null", "true"}},
      {"d > 1e308", {"false", "false", "null", "true"}},
      {"s = 'apple'", {"true", "false", "null", "false"}},
      {"'apple' = s", {"true", "false", "null", "false"}},
      {"s < 'b'", {"true", "true", "null", "true"}},
      {"s != ''", {"true", "true", "null", "false"}},
      {"s > s", {"false", "false", "null", "false"}},
      {"i <=> NULL", {"false", "false", "true", "false"}},
      {"i <=> l", {"false", "false", "false", "false"}},
      {"'2' = i", {"false", "true", "null", "false"}},
      {"dec = 1.5", {"true", "false", "null", "false"}},
      {"dec = '1.5'", {"true", "false", "null", "false"}},
      {"dec < i", {"false", "true", "null", "false"}},
      {"dt = '2026-01-31'", {"true", "null", "false", "false"}},
      {"ts > dt", {"true", "null", "false", "true"}},
      {"dt < DATE '2025-01-01'", {"false", "null", "true", "true"}},
      {"ts >= '2024-02-29'", {"true", "null", "true", "false"}},
      {"b = true", {"true", "false", "null", "true"}},
      {"value.event_type = 'transaction'", {"true", "false", "null", "true"}},
  });
}

TEST(EvalTest, ThreeValuedLogicMatchesSpark) {
  // x and y hold every combination of TRUE, FALSE and NULL.
  std::optional<uint8_t> t = 1, f = 0, n;
  TypePtr schema = *DataType::Struct({{"x", DataType::Boolean()}, {"y", DataType::Boolean()}});
  BatchPtr batch = *RecordBatch::Make(schema,
                                      {Fixed<uint8_t>(DataType::Boolean(), {t, t, t, f, f, f, n, n, n}),
                                       Fixed<uint8_t>(DataType::Boolean(), {t, f, n, t, f, n, t, f, n})},
                                      9);
  const Case cases[] = {
      {"x AND y", {"true", "false", "null", "false", "false", "false", "null", "false", "null"}},
      {"x OR y", {"true", "true", "true", "true", "false", "null", "true", "null", "null"}},
      {"NOT x", {"false", "false", "false", "true", "true", "true", "null", "null", "null"}},
      {"x = y", {"true", "false", "null", "false", "true", "null", "null", "null", "null"}},
      {"x <=> y", {"true", "false", "false", "false", "true", "false", "false", "false", "true"}},
      {"x IS DISTINCT FROM y", {"false", "true", "true", "true", "false", "true", "true", "true", "false"}},
      {"x IS TRUE", {"true", "true", "true", "false", "false", "false", "false", "false", "false"}},
      {"x IS NOT TRUE", {"false", "false", "false", "true", "true", "true", "true", "true", "true"}},
      {"y IS FALSE", {"false", "true", "false", "false", "true", "false", "false", "true", "false"}},
      {"y IS NOT FALSE", {"true", "false", "true", "true", "false", "true", "true", "false", "true"}},
      {"x IS NULL", {"false", "false", "false", "false", "false", "false", "true", "true", "true"}},
      {"x IS NOT NULL", {"true", "true", "true", "true", "true", "true", "false", "false", "false"}},
      {"x AND NULL", {"null", "null", "null", "false", "false", "false", "null", "null", "null"}},
      {"x OR NULL", {"true", "true", "true", "null", "null", "null", "null", "null", "null"}},
  };
  for (const Case& c : cases) EXPECT_EQ(Eval(c.sql, batch), c.expected) << c.sql;

  auto rows = [&](const char* sql) {
    return BindPredicate(*Expression::Parse(sql), schema)->Filter(*batch).value_or({-1});
  };
  EXPECT_EQ(rows("x AND y"), (std::vector<int64_t>{0}));
  EXPECT_EQ(rows("x OR y"), (std::vector<int64_t>{0, 1, 2, 3, 6}));
  EXPECT_EQ(rows("NOT x"), (std::vector<int64_t>{3, 4, 5}));
  EXPECT_EQ(rows("NOT (x AND y)"), (std::vector<int64_t>{1, 3, 4, 5, 7}));
  EXPECT_EQ(rows("NULL"), (std::vector<int64_t>{}));
  EXPECT_EQ(rows("TRUE"), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST(EvalTest, InBetweenAndPatterns) {
  const testing::NonAnsiMode non_ansi;  // the answers of Spark's non-ANSI mode
  Check({
      {"i IN (1, 2)", {"true", "true", "null", "false"}},
      {"i IN (1, NULL)", {"true", "null", "null", "null"}},
      {"i NOT IN (1, NULL)", {"false", "null", "null", "null"}},
      {"i NOT IN (5, 6)", {"true", "true", "null", "true"}},
      {"i IN (l, 2)", {"false", "true", "null", "false"}},
      {"s IN ('apple', 'x')", {"true", "false", "null", "false"}},
      {"i IN ('1', 'x')", {"true", "false", "null", "false"}},
      {"i BETWEEN 1 AND 2", {"true", "true", "null", "false"}},
      {"i NOT BETWEEN 1 AND 2", {"false", "false", "null", "true"}},
      {"s LIKE 'a%'", {"true", "false", "null", "false"}},
      {"s LIKE '%an%'", {"false", "true", "null", "false"}},
      {"s LIKE '%e'", {"true", "false", "null", "false"}},
      {"s LIKE '_pple'", {"true", "false", "null", "false"}},
      {"s LIKE 'B_n%a'", {"false", "true", "null", "false"}},
      {"s LIKE ''", {"false", "false", "null", "true"}},
      {"s LIKE '%'", {"true", "true", "null", "true"}},
      {"s ILIKE 'b%'", {"false", "true", "null", "false"}},
      {"s NOT LIKE 'a%'", {"false", "true", "null", "true"}},
      {"'100%' LIKE '100!%' ESCAPE '!'", {"true", "true", "true", "true"}},
      {"'100x' LIKE '100!%' ESCAPE '!'", {"false", "false", "false", "false"}},
      {"'a_b' LIKE 'a\\\\_b'", {"true", "true", "true", "true"}},
      {"s LIKE concat(substring(s, 1, 1), '%')", {"true", "true", "null", "true"}},
      {"s RLIKE '^[A-Z]'", {"false", "true", "null", "false"}},
      {"s RLIKE 'an+a$'", {"false", "true", "null", "false"}},
      {"s NOT RLIKE 'p'", {"false", "true", "null", "true"}},
  });
}

TEST(EvalTest, ConditionalsPickPerRow) {
  Check({
      {"CASE WHEN i > 1 THEN 'big' WHEN i < 0 THEN 'neg' END", {"null", "big", "null", "neg"}},
      {"CASE i WHEN 1 THEN 'one' WHEN 2 THEN 'two' ELSE 'other' END", {"one", "two", "other", "other"}},
      {"CASE WHEN b THEN -dec ELSE dec END", {"-1.50", "-2.25", "null", "-100.00"}},
      {"CASE WHEN s IN ('apple', 'x') THEN -i ELSE i END", {"-1", "2", "null", "-4"}},
      {"CASE WHEN b THEN value END IS NULL", {"false", "true", "true", "false"}},
      {"CASE WHEN b THEN arr ELSE array(0) END", {"[1,2,3]", "[0]", "[0]", "[null,5]"}},
      {"coalesce(l, i, 0)", {"10", "2", "30", "40"}},
      {"coalesce(NULL, i)", {"1", "2", "null", "-4"}},
      {"coalesce(s, 'none')", {"apple", "Banana", "none", ""}},
      {"nullif(i, 2)", {"1", "null", "null", "-4"}},
      {"ifnull(l, -1)", {"10", "-1", "30", "40"}},
      {"nvl(s, 'none')", {"apple", "Banana", "none", ""}},
      {"if(i > 1, 'big', 'small')", {"small", "big", "small", "small"}},
      {"greatest(i, 0, l)", {"10", "2", "30", "40"}},
      {"least(i, l)", {"1", "2", "30", "-4"}},
      {"greatest(NULL, i)", {"1", "2", "null", "-4"}},
      {"least(s, 'b')", {"apple", "Banana", "b", ""}},
      {"greatest(d, 0)", {"1.5", "0.0", "0.0", "NaN"}},
  });
}

TEST(EvalTest, CastsFollowSparkNonAnsiRules) {
  const testing::NonAnsiMode non_ansi;  // the answers of Spark's non-ANSI mode
  Check({
      {"CAST(s AS int)", {"null", "null", "null", "null"}},
      {"CAST(' 12 ' AS int)", {"12", "12", "12", "12"}},
      {"CAST('1.9' AS int)", {"1", "1", "1", "1"}},
      {"CAST('-1.9' AS bigint)", {"-1", "-1", "-1", "-1"}},
      {"CAST('3000000000' AS int)", {"null", "null", "null", "null"}},
      {"CAST(3000000000 AS int)", {"-1294967296", "-1294967296", "-1294967296", "-1294967296"}},
      {"CAST(300 AS tinyint)", {"44", "44", "44", "44"}},
      {"CAST(d AS int)", {"1", "-2", "null", "0"}},
      {"CAST(1e20 AS bigint)", {"9223372036854775807", "9223372036854775807", "9223372036854775807", "9223372036854775807"}},
      {"CAST(dec AS int)", {"1", "-2", "null", "100"}},
      {"CAST(i AS string)", {"1", "2", "null", "-4"}},
      {"CAST(d AS string)", {"1.5", "-2.0", "null", "NaN"}},
      {"CAST(1e7 AS string)", {"1.0E7", "1.0E7", "1.0E7", "1.0E7"}},
      {"CAST(1.0E-4D AS string)", {"1.0E-4", "1.0E-4", "1.0E-4", "1.0E-4"}},
      {"CAST(0.001D AS string)", {"0.001", "0.001", "0.001", "0.001"}},
      {"CAST(dec AS string)", {"1.50", "-2.25", "null", "100.00"}},
      {"CAST(b AS int)", {"1", "0", "null", "1"}},
      {"CAST(i AS boolean)", {"true", "true", "null", "true"}},
      {"CAST('yes' AS boolean)", {"true", "true", "true", "true"}},
      {"CAST('maybe' AS boolean)", {"null", "null", "null", "null"}},
      {"CAST(dt AS string)", {"2026-01-31", "null", "2024-02-29", "1969-12-31"}},
      {"CAST(ts AS string)", {"2026-01-31 10:30:15.5", "null", "2024-02-29 00:00:00", "1969-12-31 23:59:59"}},
      {"CAST('2026-02-30' AS date)", {"null", "null", "null", "null"}},
      {"CAST('2026-1-5' AS date)", {"2026-01-05", "2026-01-05", "2026-01-05", "2026-01-05"}},
      {"CAST(ts AS date)", {"2026-01-31", "null", "2024-02-29", "1969-12-31"}},
      {"CAST(ts AS bigint)", {"1769855415", "null", "1709164800", "-1"}},
      {"CAST(CAST(0 AS timestamp) AS string)", {"1970-01-01 00:00:00", "1970-01-01 00:00:00", "1970-01-01 00:00:00", "1970-01-01 00:00:00"}},
      {"CAST('2026-01-31T10:00:00Z' AS timestamp) = TIMESTAMP '2026-01-31 10:00:00'", {"true", "true", "true", "true"}},
      {"CAST(1.5 AS decimal(2,0))", {"2", "2", "2", "2"}},
      {"CAST(-1.5 AS decimal(2,0))", {"-2", "-2", "-2", "-2"}},
      {"CAST(123.45 AS decimal(4,2))", {"null", "null", "null", "null"}},
      {"CAST(d AS decimal(5,1))", {"1.5", "-2.0", "null", "null"}},
      {"CAST(' 1.25e1 ' AS decimal(5,2))", {"12.50", "12.50", "12.50", "12.50"}},
      {"CAST('Infinity' AS double) > 1e308", {"true", "true", "true", "true"}},
      {"TRY_CAST('x' AS int)", {"null", "null", "null", "null"}},
      {"'12'::int + 1", {"13", "13", "13", "13"}},
      {"CAST(arr AS array<string>)[0]", {"1", "null", "null", "null"}},
      {"CAST(value AS struct<a:string,b:int,c:struct<e:string>>).b", {"12", "3", "null", "9"}},
  });
}

TEST(EvalTest, NestedValues) {
  const testing::NonAnsiMode non_ansi;  // the answers of Spark's non-ANSI mode
  Check({
      {"value.event_type", {"transaction", "refund", "null", "transaction"}},
      {"VALUE.Amount", {"12.5", "3.0", "null", "9.99"}},
      {"value.user.email", {"a@x.io", "null", "null", "d@x.io"}},
      {"`weird name` + 1", {"8", "9", "10", "11"}},
      {"arr[0]", {"1", "null", "null", "null"}},
      {"arr[1]", {"2", "null", "null", "5"}},
      {"element_at(arr, 1)", {"1", "null", "null", "null"}},
      {"element_at(arr, -1)", {"3", "null", "null", "5"}},
      {"m['a']", {"1", "null", "null", "null"}},
      {"element_at(m, 'c')", {"null", "null", "null", "null"}},
      {"size(arr)", {"3", "0", "-1", "2"}},
      {"size(m)", {"2", "0", "-1", "1"}},
      {"struct(i, s).s", {"apple", "Banana", "null", ""}},
      {"named_struct('x', i, 'y', 1).x", {"1", "2", "null", "-4"}},
      {"array(i, 5)[1]", {"5", "5", "5", "5"}},
      {"array(i, 5)", {"[1,5]", "[2,5]", "[null,5]", "[-4,5]"}},
      {"size(array(i, l))", {"2", "2", "2", "2"}},
      {"value", {R"({"event_type":"transaction","amount":12.5,"user":{"email":"a@x.io"}})",
                 R"({"event_type":"refund","amount":3.0,"user":{"email":null}})", "null",
                 R"({"event_type":"transaction","amount":9.99,"user":{"email":"d@x.io"}})"}},
      {"get_json_object(js, '$.a.b[1]')", {"20", "null", "null", "null"}},
      {"get_json_object(js, '$.s')", {"x", "null", "null", "null"}},
      {"get_json_object(js, '$.a')", {R"({"b":[10,20]})", "1", "null", "null"}},
      {"get_json_object(js, '$[''s'']')", {"x", "null", "null", "null"}},
      {"get_json_object(js, 'a')", {"null", "null", "null", "null"}},
      {"get_json_object('[1, {\"k\": true}]', '$[1].k')", {"true", "true", "true", "true"}},
  });
}

TEST(EvalTest, FilterIntoAVectorReplacesItsContentAndKeepsItsCapacity) {
  BatchPtr batch = SampleBatch();
  auto bound = BindPredicate(*Expression::Parse("i > 0 OR s IS NULL"), batch->schema());
  ASSERT_TRUE(bound.ok()) << bound.status().ToString();
  std::vector<int64_t> rows(1000, -7);
  const int64_t* buffer = rows.data();
  ASSERT_TRUE(bound->Filter(*batch, &rows).ok());
  EXPECT_EQ(rows, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(rows.data(), buffer);

  auto not_boolean = Bind(*Expression::Parse("i + 1"), batch->schema());
  ASSERT_TRUE(not_boolean.ok());
  Status refused = not_boolean->Filter(*batch, &rows);
  EXPECT_EQ(refused.error_class(), "DATATYPE_MISMATCH");
  EXPECT_TRUE(rows.empty());
}

TEST(EvalTest, Filters) {
  BatchPtr batch = SampleBatch();
  auto rows = [&](const char* sql) {
    auto bound = BindPredicate(*Expression::Parse(sql), batch->schema());
    EXPECT_TRUE(bound.ok()) << sql << ": " << bound.status().ToString();
    return bound->Filter(*batch).value_or({-1});
  };
  EXPECT_EQ(rows("value.event_type = 'transaction' AND value.amount > 10.0"), (std::vector<int64_t>{0}));
  EXPECT_EQ(rows("i > 0 OR s IS NULL"), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(rows("s LIKE '%a%' AND i > 0 AND l IS NULL"), (std::vector<int64_t>{1}));
  EXPECT_EQ(rows("size(arr) > 0"), (std::vector<int64_t>{0, 3}));

  // Later conjuncts run on the survivors only when few survive; both paths agree.
  std::vector<std::optional<int64_t>> values;
  for (int64_t v = 0; v < 1000; ++v) values.push_back(v % 7 == 0 ? std::nullopt : std::optional<int64_t>(v));
  TypePtr schema = *DataType::Struct({{"n", DataType::Long()}});
  BatchPtr many = *RecordBatch::Make(schema, {Fixed<int64_t>(DataType::Long(), values)}, 1000);
  auto filter = [&](const char* sql) { return BindPredicate(*Expression::Parse(sql), schema)->Filter(*many).value_or({-1}); };
  std::vector<int64_t> few, most;
  for (int64_t v = 0; v < 1000; ++v) {
    if (v % 7 != 0 && v < 20 && v % 2 == 0) few.push_back(v);
    if (v % 7 != 0 && v < 900 && v % 2 == 0) most.push_back(v);
  }
  EXPECT_EQ(filter("n < 20 AND n % 2 = 0"), few);
  EXPECT_EQ(filter("n < 900 AND n % 2 = 0"), most);
  EXPECT_EQ(filter("n % 2 = 0 AND n < 20 AND n IS NOT NULL"), few);
}

TEST(EvalTest, LargeBatchesAreEvaluatedInChunksWithTheSameResults) {
  constexpr int64_t kRows = 150000;  // more than two chunks
  std::vector<std::optional<int64_t>> n;
  std::vector<std::optional<std::string>> s;
  std::vector<std::optional<uint8_t>> b;
  for (int64_t v = 0; v < kRows; ++v) {
    n.push_back(v % 7 == 0 ? std::nullopt : std::optional<int64_t>(v));
    s.push_back("k" + std::to_string(v % 5));
    b.push_back(static_cast<uint8_t>(v % 3 == 0));
  }
  TypePtr schema = *DataType::Struct({{"n", DataType::Long()}, {"s", DataType::String()}, {"b", DataType::Boolean()}});
  BatchPtr batch = *RecordBatch::Make(
      schema, {Fixed<int64_t>(DataType::Long(), n), testing::Strings(s), Fixed<uint8_t>(DataType::Boolean(), b)}, kRows);
  auto at = [&](const char* sql, std::initializer_list<int64_t> rows) {
    Rows all = Eval(sql, batch);
    EXPECT_EQ(static_cast<int64_t>(all.size()), kRows) << sql;
    Rows picked;
    for (int64_t r : rows) picked.push_back(all.size() > static_cast<size_t>(r) ? all[static_cast<size_t>(r)] : "missing");
    return picked;
  };
  EXPECT_EQ(at("n + 1", {1, 70000, 70001, 149999}), (Rows{"2", "null", "70002", "150000"}));
  EXPECT_EQ(at("CAST(n AS string)", {100000, 100002}), (Rows{"100000", "null"}));
  EXPECT_EQ(at("concat_ws('-', s, CAST(n AS string))", {70001, 70000}), (Rows{"k1-70001", "k0"}));
  EXPECT_EQ(at("CASE WHEN n % 2 = 0 THEN s END", {70001, 70002, 70003}), (Rows{"null", "k2", "null"}));
  EXPECT_EQ(at("hash(n) = hash(n + 0)", {66000, 70000}), (Rows{"true", "true"}));
  EXPECT_EQ(at("size(array(n, n))", {140000}), (Rows{"2"}));

  auto filter = [&](const char* sql) { return BindPredicate(*Expression::Parse(sql), schema)->Filter(*batch).value_or({-1}); };
  std::vector<int64_t> expected_and, expected_b;
  for (int64_t v = 0; v < kRows; ++v) {
    if (v % 7 != 0 && v % 5 == 3 && v > 100000) expected_and.push_back(v);
    if (v % 3 == 0) expected_b.push_back(v);
  }
  EXPECT_EQ(filter("s = 'k3' AND n > 100000"), expected_and);
  EXPECT_EQ(filter("n > 100000 AND s = 'k3'"), expected_and);
  EXPECT_EQ(filter("b"), expected_b);
}

TEST(EvalTest, EvaluationChecksTheBatchSchema) {
  auto bound = Bind(*Expression::Parse("i + 1"), SampleBatch()->schema());
  ASSERT_TRUE(bound.ok());
  TypePtr other = *DataType::Struct({{"i", DataType::Long()}});
  BatchPtr batch = *RecordBatch::Make(other, {Fixed<int64_t>(DataType::Long(), {1})}, 1);
  auto result = bound->Evaluate(*batch);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().error_class(), errors::kInvalidArgument);
}

TEST(EvalTest, EmptyBatches) {
  BatchPtr empty = RecordBatch::Empty(SampleBatch()->schema());
  EXPECT_EQ(Eval("upper(s) || CAST(i + 1 AS string)", empty), Rows{});
  auto bound = BindPredicate(*Expression::Parse("i > 0 AND s LIKE 'a%'"), empty->schema());
  EXPECT_EQ(bound->Filter(*empty).value_or({-1}), (std::vector<int64_t>{}));
}

}  // namespace
}  // namespace sluice::expr
