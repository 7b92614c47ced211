// ANSI mode (SqlOptions::ansi, Spark 4's default) over the columns of the sample batch
// (test_util.h): values an expression cannot compute fail it with Spark's error class and the
// value, the TRY forms give NULL instead, rows a conditional does not reach never fail, and
// non-ANSI mode gives NULL (or wraps) for the same rows.
#include <gtest/gtest.h>

#include "expr/test_util.h"
#include "sluice/core/error_classes.h"

namespace sluice::expr {
namespace {

using testing::Eval;
using testing::EvalError;
using testing::SampleBatch;
using Rows = std::vector<std::string>;

struct FailingCase {
  const char* sql;
  std::string_view error_class;
  const char* offending;  // text the message must show: the value that could not be computed
  Rows non_ansi;          // the rows of the same expression in non-ANSI mode
};

TEST(AnsiModeTest, ValuesThatCannotBeComputedFailWithSparksClassAndTheValue) {
  const FailingCase cases[] = {
      {"i + 2147483647", errors::kArithmeticOverflow, "2147483647", {"-2147483648", "-2147483647", "null", "2147483643"}},
      {"l * 300000000000000000", errors::kArithmeticOverflow, "40",
       {"3000000000000000000", "null", "9000000000000000000", "-6446744073709551616"}},
      {"i / (i - 1)", errors::kDivideByZero, "1", {"null", "2.0", "null", "0.8"}},
      {"i div (i - 1)", errors::kDivideByZero, "1", {"null", "2", "null", "0"}},
      {"i % (i - 1)", errors::kRemainderByZero, "1", {"null", "0", "null", "-4"}},
      {"d / (i - 1)", errors::kDivideByZero, "1.5", {"null", "-2.0", "null", "NaN"}},
      {"dec / (i - 1)", errors::kDivideByZero, "1.50", {"null", "-2.2500000000000", "null", "-20.0000000000000"}},
      {"CAST(s AS int)", errors::kCastInvalidInput, "'apple'", {"null", "null", "null", "null"}},
      {"CAST(CAST(i AS string) || '.5' AS bigint)", errors::kCastInvalidInput, "'1.5'", {"1", "2", "null", "-4"}},
      {"CAST(l * 10 AS tinyint)", errors::kCastOverflow, "300", {"100", "null", "44", "-112"}},
      {"CAST(d * 1e10 AS int)", errors::kCastOverflow, "1.5E10", {"2147483647", "-2147483648", "null", "0"}},
      {"CAST(dec * 100 AS decimal(4,1))", errors::kNumericValueOutOfRange, "10000.00", {"150.0", "-225.0", "null", "null"}},
      {"CAST(array(s) AS array<int>)", errors::kCastInvalidInput, "'apple'", {"[null]", "[null]", "[null]", "[null]"}},
      {"arr[2]", errors::kInvalidArrayIndex, "2", {"3", "null", "null", "null"}},
      {"element_at(arr, 3)", errors::kInvalidArrayIndexInElementAt, "3", {"3", "null", "null", "null"}},
      {"to_date(s, 'yyyy')", errors::kCannotParseTimestamp, "'apple'", {"null", "null", "null", "null"}},
      {"unix_timestamp(s, 'yyyy')", errors::kCannotParseTimestamp, "'apple'", {"null", "null", "null", "null"}},
      // greatest(i, 1) keeps the operands in range, so that the outer op is the one that fails.
      {"-(greatest(i, 1) - 2147483647 - 2)", errors::kArithmeticOverflow, "-2147483648",
       {"-2147483648", "2147483647", "-2147483648", "-2147483648"}},
      {"abs(CAST(greatest(i, 1) - 129 AS tinyint))", errors::kArithmeticOverflow, "-128", {"-128", "127", "-128", "-128"}},
      {"round(CAST(greatest(i, 1) * 62 + 1 AS tinyint), -1)", errors::kArithmeticOverflow, "125", {"60", "-126", "60", "60"}},
  };
  for (const FailingCase& c : cases) {
    Status error = EvalError(c.sql);
    EXPECT_EQ(error.error_class(), c.error_class) << c.sql << ": " << error.ToString();
    EXPECT_NE(error.message().find(c.offending), std::string::npos) << c.sql << ": " << error.ToString();
    EXPECT_NE(error.message().find("sql.ansi: false"), std::string::npos) << c.sql << ": " << error.ToString();
    const testing::NonAnsiMode non_ansi;
    EXPECT_EQ(Eval(c.sql), c.non_ansi) << c.sql;
  }
}

struct Case {
  const char* sql;
  Rows expected;
};

TEST(AnsiModeTest, TryFunctionsGiveNullWhereAnsiModeFailsInEitherMode) {
  const Case cases[] = {
      {"try_add(i, 2147483647)", {"null", "null", "null", "2147483643"}},
      {"try_subtract(i, 2147483647)", {"-2147483646", "-2147483645", "null", "null"}},
      {"try_multiply(l, 300000000000000000)", {"3000000000000000000", "null", "9000000000000000000", "null"}},
      {"try_divide(i, i - 1)", {"null", "2.0", "null", "0.8"}},
      {"try_divide(dec, i - 1)", {"null", "-2.2500000000000", "null", "-20.0000000000000"}},
      {"try_mod(i, i - 1)", {"null", "0", "null", "-4"}},
      {"try_add(s, i)", {"null", "null", "null", "null"}},
      {"try_add(dt, 1)", {"2026-02-01", "null", "2024-03-01", "1970-01-01"}},
      {"try_cast(s AS int)", {"null", "null", "null", "null"}},
      {"try_cast(CAST(i AS string) AS tinyint)", {"1", "2", "null", "-4"}},
      {"try_cast(l * 10 AS tinyint)", {"100", "null", "null", "null"}},
      {"try_element_at(arr, 3)", {"3", "null", "null", "null"}},
      {"try_element_at(m, 'b')", {"2", "null", "null", "null"}},
      {"try_to_timestamp(s, 'yyyy')", {"null", "null", "null", "null"}},
      {"try_to_timestamp('2026-01-31', 'yyyy-MM-dd')", Rows(4, "2026-01-31T00:00:00Z")},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Eval(c.sql), c.expected) << c.sql;
    const testing::NonAnsiMode non_ansi;
    EXPECT_EQ(Eval(c.sql), c.expected) << c.sql << " (non-ANSI)";
  }
  // Only the TRY op itself tolerates failures: an argument fails as it would anywhere.
  EXPECT_EQ(EvalError("try_add(CAST(s AS int), 1)").error_class(), errors::kCastInvalidInput);
  // Position 0 names no element whatever the mode.
  EXPECT_EQ(EvalError("try_element_at(arr, i - 1)").error_class(), errors::kInvalidIndexOfZero);
}

TEST(AnsiModeTest, RowsAConditionalDoesNotReachNeverFail) {
  const Case cases[] = {
      {"CASE WHEN i = 1 THEN NULL ELSE i / (i - 1) END", {"null", "2.0", "null", "0.8"}},
      {"if(i <> 1, i / (i - 1), -1.0)", {"-1.0", "2.0", "-1.0", "0.8"}},
      {"CASE WHEN i > 0 THEN CASE WHEN i = 1 THEN 0 ELSE 10 div (i - 1) END ELSE -1 END", {"0", "10", "-1", "-1"}},
      {"coalesce(l, 100 / (i - 1))", {"10.0", "100.0", "30.0", "40.0"}},
      {"nvl(i, CAST(s AS int))", {"1", "2", "null", "-4"}},
      {"i = 1 OR 1 / (i - 1) > 0", {"true", "true", "null", "false"}},
      {"i <> 1 AND 1 / (i - 1) > 0", {"false", "true", "null", "false"}},
      {"i IN (1, 2, -4, 10 / 0)", {"true", "true", "null", "true"}},
      {"s IN ('apple', 'Banana', '', CAST(CAST(s AS int) AS string))", {"true", "true", "null", "true"}},
      {"CASE WHEN i > 100 THEN 1 / 0 ELSE 0 END", {"0.0", "0.0", "0.0", "0.0"}},
  };
  for (const Case& c : cases) EXPECT_EQ(Eval(c.sql), c.expected) << c.sql;
  // The same shapes fail when a row does reach the failing branch.
  EXPECT_EQ(EvalError("CASE WHEN i = 2 THEN NULL ELSE i / (i - 1) END").error_class(), errors::kDivideByZero);
  EXPECT_EQ(EvalError("i <> 2 AND 1 / (i - 1) > 0").error_class(), errors::kDivideByZero);
  EXPECT_EQ(EvalError("coalesce(CAST(NULL AS int), 1 / (i - 1))").error_class(), errors::kDivideByZero);
  EXPECT_EQ(EvalError("i IN (2, 10 / (i - 1))").error_class(), errors::kDivideByZero);
}

TEST(AnsiModeTest, AFilterNeverEvaluatesAConjunctOnRowsAnEarlierOneDropped) {
  // Three of the four rows pass the first conjunct: more than evaluating on the survivors alone
  // would pay for, were the second one unable to fail.
  Expression parsed = *Expression::Parse("i <> 1 AND 10 / (i - 1) > 1 AND CAST(s AS int) IS NULL");
  BoundExpression bound = *BindPredicate(parsed, SampleBatch()->schema());
  Result<std::vector<int64_t>> rows = bound.Filter(*SampleBatch());
  ASSERT_FALSE(rows.ok());  // 'Banana' reaches the cast
  EXPECT_EQ(rows.status().error_class(), errors::kCastInvalidInput);
  parsed = *Expression::Parse("i <> 1 AND 10 / (i - 1) > 1");
  bound = *BindPredicate(parsed, SampleBatch()->schema());
  rows = bound.Filter(*SampleBatch());
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(*rows, (std::vector<int64_t>{1}));
}

TEST(AnsiModeTest, AConstantThatFailsIsLeftToTheRowsThatReachIt) {
  Expression parsed = *Expression::Parse("1 / 0");
  BoundExpression bound = *Bind(parsed, SampleBatch()->schema());
  EXPECT_EQ(bound.ToSql(), "(1.0D / 0.0D)");  // not folded: binding succeeds
  EXPECT_EQ(bound.Evaluate(*SampleBatch()).status().error_class(), errors::kDivideByZero);
  BatchPtr empty = *RecordBatch::Make(SampleBatch()->schema(), [] {
    std::vector<ColumnPtr> columns;
    for (const ColumnPtr& c : SampleBatch()->columns()) columns.push_back(Slice(c, 0, 0));
    return columns;
  }(), 0);
  Result<ColumnPtr> nothing = bound.Evaluate(*empty);
  ASSERT_TRUE(nothing.ok()) << nothing.status().ToString();
  EXPECT_EQ((*nothing)->length, 0);
  EXPECT_EQ((*nothing)->type->ToString(), "double");
}

// A null row's value bytes may hold anything (here the extremes of int): ANSI checks never look
// at them.
TEST(AnsiModeTest, ARowThatIsNullNeverFailsWhateverItsBytesHold) {
  auto column = std::make_shared<Column>(*testing::Fixed<int32_t>(DataType::Integer(), {INT32_MAX, 1, INT32_MIN}));
  column->validity = {0, 1, 0};
  column->null_count = 2;
  BatchPtr batch = *RecordBatch::Make(*DataType::Struct({Field{"x", DataType::Integer(), true}}), {column}, 3);
  for (const char* sql : {"x + 1", "x - 2", "x * 2", "-x", "abs(x)", "CAST(x AS smallint)", "round(x, -1)", "x div 1"}) {
    Rows rows = Eval(sql, batch);
    ASSERT_EQ(rows.size(), 3u) << sql;
    EXPECT_EQ(rows[0], "null") << sql;
    EXPECT_EQ(rows[2], "null") << sql;
  }
}

TEST(AnsiModeTest, CoercionFollowsAnsiTypeCoercion) {
  struct TypeCase {
    const char* sql;
    const char* ansi;
    const char* non_ansi;
  };
  const TypeCase cases[] = {
      {"i * 1.5F", "double", "float"},
      {"s + 1", "bigint", "double"},
      {"s + l", "bigint", "double"},
      {"s + d", "double", "double"},
      {"s + dec", "double", "double"},
      {"CASE WHEN b THEN 1 ELSE 'x' END", "bigint", "string"},
      {"coalesce(d, 'x')", "double", "string"},
      {"if(b, dt, '2024-01-01')", "date", "string"},
      {"array(i, s)", "array<bigint>", "array<string>"},
      {"size(arr)", "int", "int"},
      {"s + s", "DATATYPE_MISMATCH", "double"},
      {"CAST(i AS binary)", "DATATYPE_MISMATCH", "binary"},
      {"CAST(dt AS int)", "DATATYPE_MISMATCH", "int"},
  };
  for (const TypeCase& c : cases) {
    std::string ansi = testing::TypeOf(c.sql);
    EXPECT_EQ(ansi.substr(0, ansi.find(':')), c.ansi) << c.sql;
    const testing::NonAnsiMode non_ansi;
    EXPECT_EQ(testing::TypeOf(c.sql), c.non_ansi) << c.sql;
  }
  // size(NULL) is NULL in ANSI mode, -1 otherwise (spark.sql.legacy.sizeOfNull).
  EXPECT_EQ(Eval("size(arr)"), (Rows{"3", "0", "null", "2"}));
  const testing::NonAnsiMode non_ansi;
  EXPECT_EQ(Eval("size(arr)"), (Rows{"3", "0", "-1", "2"}));
}

}  // namespace
}  // namespace sluice::expr
