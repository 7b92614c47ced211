// Binding: column resolution, Spark's result types and implicit coercions, constant folding,
// and the errors a user sees for bad names, types and arguments.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "expr/ast.h"
#include "expr/test_util.h"
#include "sluice/core/error_classes.h"

namespace sluice::expr {
namespace {

using testing::EvalError;
using testing::SampleBatch;
using testing::TypeOf;

struct TypeCase {
  const char* sql;
  const char* type;
};

TEST(BinderTest, ResultTypesFollowSpark) {
  const testing::NonAnsiMode non_ansi;  // the answers of Spark's non-ANSI mode
  const TypeCase cases[] = {
      // literals
      {"10", "int"}, {"10L", "bigint"}, {"10S", "smallint"}, {"10Y", "tinyint"}, {"3000000000", "bigint"},
      {"12345678901234567890", "decimal(20,0)"}, {"1.50", "decimal(3,2)"}, {".5", "decimal(1,1)"},
      {"0.05", "decimal(2,2)"}, {"1e3", "double"}, {"1.5F", "float"}, {"10BD", "decimal(2,0)"},
      {"'x'", "string"}, {"X'00'", "binary"}, {"DATE '2026-01-31'", "date"},
      {"TIMESTAMP '2026-01-31 00:00:00'", "timestamp"}, {"TIMESTAMP_NTZ '2026-01-31 00:00:00'", "timestamp_ntz"},
      {"NULL", "boolean"},
      // arithmetic widening
      {"i + l", "bigint"}, {"i + 1", "int"}, {"i + 1Y", "int"}, {"i * 1.5F", "float"}, {"l + d", "double"},
      {"i / 2", "double"}, {"i div 2", "bigint"}, {"i % 2", "int"}, {"l % i", "bigint"}, {"-i", "int"},
      {"s + 1", "double"}, {"d + dec", "double"},
      // decimal precision and scale (Spark's DecimalPrecision)
      {"i + dec", "decimal(13,2)"}, {"dec - 1", "decimal(11,2)"}, {"dec * dec", "decimal(21,4)"},
      {"dec * 1.5", "decimal(13,3)"}, {"dec / dec", "decimal(23,13)"}, {"dec / 3", "decimal(14,6)"},
      {"dec % 1", "decimal(3,2)"}, {"dec div 2", "bigint"},
      {"CAST(i AS decimal(38,10)) * CAST(i AS decimal(38,10))", "decimal(38,6)"},
      {"CAST(i AS decimal(38,0)) + CAST(i AS decimal(38,0))", "decimal(38,0)"},
      // dates and intervals
      {"dt + 1", "date"}, {"dt - 1", "date"}, {"ts + INTERVAL 1 HOUR", "timestamp"},
      {"dt + INTERVAL 1 DAY", "date"}, {"dt + INTERVAL 1 HOUR", "timestamp"},
      // comparisons and logic
      {"s = 1", "boolean"}, {"i IN (1, 2L)", "boolean"}, {"s LIKE 'a%'", "boolean"}, {"NOT b", "boolean"},
      // conditional
      {"CASE WHEN b THEN 1 ELSE 2L END", "bigint"}, {"CASE WHEN b THEN 1 ELSE 'x' END", "string"},
      {"CASE WHEN b THEN 1 END", "int"}, {"coalesce(i, 1.5)", "decimal(11,1)"}, {"if(b, 1, NULL)", "int"},
      {"nullif(i, 2)", "int"}, {"greatest(i, l, 2)", "bigint"}, {"coalesce(i, 'x')", "string"},
      // functions
      {"upper(i)", "string"}, {"length(s)", "int"}, {"substring(s, 1L, 2)", "string"}, {"concat(s, i)", "string"},
      {"concat(X'00', X'01')", "binary"}, {"split(s, ',')", "array<string>"}, {"abs(dec)", "decimal(10,2)"},
      {"round(dec, 1)", "decimal(10,1)"}, {"round(d)", "double"}, {"round(i, -1)", "int"}, {"floor(dec)", "decimal(9,0)"},
      {"ceil(d)", "bigint"}, {"floor(i)", "bigint"}, {"sqrt(i)", "double"}, {"pow(i, 2)", "double"},
      {"mod(l, 3)", "bigint"}, {"hash(s, i)", "int"}, {"md5(s)", "string"}, {"sha2(s, 256)", "string"},
      {"current_timestamp()", "timestamp"}, {"current_date", "date"}, {"to_date(s)", "date"},
      {"to_timestamp(s, 'yyyy')", "timestamp"}, {"date_trunc('HOUR', ts)", "timestamp"},
      {"date_format(dt, 'yyyy')", "string"}, {"year(ts)", "int"}, {"hour(ts)", "int"},
      {"unix_timestamp()", "bigint"}, {"from_unixtime(l)", "string"}, {"get_json_object(js, '$.a')", "string"},
      {"size(arr)", "int"}, {"element_at(m, 'a')", "int"}, {"arr[0]", "int"}, {"value.user", "struct<email:string>"},
      {"struct(i, s)", "struct<i:int,s:string>"}, {"struct(i + 1)", "struct<col1:int>"},
      {"named_struct('a', 1, 'b', s)", "struct<a:int,b:string>"}, {"array(1, 2L)", "array<bigint>"},
      // aggregates type-check
      {"count(*)", "bigint"}, {"count(s)", "bigint"}, {"sum(i)", "bigint"}, {"sum(d)", "double"},
      {"sum(dec)", "decimal(20,2)"}, {"avg(i)", "double"}, {"avg(dec)", "decimal(14,6)"}, {"max(s)", "string"},
      {"min(dt)", "date"}, {"first(b)", "boolean"}, {"last(arr)", "array<int>"},
  };
  for (const TypeCase& c : cases) EXPECT_EQ(TypeOf(c.sql), c.type) << c.sql;
}

std::string BoundSql(const std::string& sql) {
  auto parsed = Expression::Parse(sql);
  if (!parsed.ok()) return parsed.status().ToString();
  auto bound = Bind(*parsed, SampleBatch()->schema(), testing::CurrentOptions());
  if (!bound.ok()) return bound.status().ToString();
  return bound->ToSql();
}

TEST(BinderTest, ImplicitCastsAreInsertedAsSparkDoes) {
  const testing::NonAnsiMode non_ansi;  // the answers of Spark's non-ANSI mode
  // A string compared with a number is cast to the number's type (to double for decimals).
  EXPECT_EQ(BoundSql("s = 1"), "(CAST(s AS int) = 1)");
  EXPECT_EQ(BoundSql("dec = '1.5'"), "(CAST(dec AS double) = 1.5D)");
  // Dates and timestamps compared with strings cast the string.
  EXPECT_EQ(BoundSql("dt = '2026-01-31'"), "(dt = DATE '2026-01-31')");
  EXPECT_EQ(BoundSql("ts > dt"), "(ts > CAST(dt AS timestamp))");
  // Integral operands of decimal arithmetic become decimals; strings in arithmetic become doubles.
  EXPECT_EQ(BoundSql("i + dec"), "(CAST(i AS decimal(10,0)) + dec)");
  EXPECT_EQ(BoundSql("s * 2"), "(CAST(s AS double) * 2.0D)");
  // Names are printed as the schema spells them.
  EXPECT_EQ(BoundSql("VALUE.Event_Type = 'x'"), "(value.event_type = 'x')");
  EXPECT_EQ(BoundSql("`weird name` > 1"), "(`weird name` > 1)");
  // IN uses the wider common type, with string promotion.
  EXPECT_EQ(BoundSql("i IN ('1', 'x')"), "(CAST(i AS string) IN ('1', 'x'))");
}

TEST(BinderTest, ConstantsAreFolded) {
  const testing::NonAnsiMode non_ansi;  // the answers of Spark's non-ANSI mode
  EXPECT_EQ(BoundSql("1 + 2 * 3"), "7");
  EXPECT_EQ(BoundSql("i + (1 + 2)"), "(i + 3)");
  EXPECT_EQ(BoundSql("upper('a') = s"), "('A' = s)");
  EXPECT_EQ(BoundSql("b AND FALSE"), "FALSE");
  EXPECT_EQ(BoundSql("b OR TRUE"), "TRUE");
  EXPECT_EQ(BoundSql("b AND TRUE"), "b");
  EXPECT_EQ(BoundSql("CASE WHEN 1 = 1 THEN s ELSE 'x' END"), "s");
  EXPECT_EQ(BoundSql("CASE WHEN 1 = 2 THEN 'a' WHEN b THEN 'b' ELSE 'c' END"), "CASE WHEN b THEN 'b' ELSE 'c' END");
  EXPECT_EQ(BoundSql("1 / 0"), "CAST(NULL AS double)");
  EXPECT_EQ(BoundSql("CAST('2026-01-31' AS date)"), "DATE '2026-01-31'");
  EXPECT_EQ(BoundSql("coalesce(i, 0, l)"), "coalesce(CAST(i AS bigint), 0L)");
}

struct ErrorCase {
  const char* sql;
  std::string_view error_class;
  const char* message_part;
};

TEST(BinderTest, ErrorsNameTheProblem) {
  const ErrorCase cases[] = {
      {"nope + 1", errors::kUnresolvedColumn, "column nope at 1:1 cannot be resolved"},
      {"i + valu.amount", errors::kUnresolvedColumn, "at 1:5"},
      {"valu.amount", errors::kUnresolvedColumn, "did you mean one of: value.amount"},
      {"value.amount.x", errors::kUnresolvedColumn, "not a struct"},
      {"weird", errors::kUnresolvedColumn, "`weird name`"},
      {"s + b", errors::kDatatypeMismatch, "operator + needs numeric operands, got double and boolean"},
      {"i AND b", errors::kDatatypeMismatch, "AND needs boolean operands, got int"},
      {"arr = arr", errors::kDatatypeMismatch, "operator = cannot compare array<int> with array<int>"},
      {"b < dt", errors::kDatatypeMismatch, "cannot compare boolean with date"},
      {"CASE WHEN i THEN 1 END", errors::kDatatypeMismatch, "WHEN condition must be boolean, got int"},
      {"CAST(value AS string)", errors::kDatatypeMismatch, "cannot cast struct"},
      {"CAST(dt AS int)", errors::kDatatypeMismatch, "cannot cast date to int"},
      {"substring(s, arr)", errors::kDatatypeMismatch, "argument 2 of substring must be int, got array<int>"},
      {"size(s)", errors::kDatatypeMismatch, "size needs an array or a map, got string"},
      {"round(d, i)", errors::kDatatypeMismatch, "constant integer"},
      {"INTERVAL 1 DAY", errors::kDatatypeMismatch, "an INTERVAL can only be added"},
      {"i + INTERVAL 1 DAY", errors::kDatatypeMismatch, "not int"},
      {"nosuch(1)", errors::kUnresolvedRoutine, "unknown function nosuch at 1:1"},
      {"upperr(s)", errors::kUnresolvedRoutine, "did you mean upper?"},
      {"substring(s)", errors::kWrongNumArgs, "takes 2 to 3 arguments but 1 were given"},
      {"nullif(i)", errors::kWrongNumArgs, "takes 2 arguments"},
      {"s RLIKE '('", errors::kInvalidParameterValue, "regular expression '(' is invalid"},
      {"s LIKE 'a!' ESCAPE '!'", errors::kInvalidParameterValue, "invalid escape"},
      {"regexp_extract(s, '(a)', 2)", errors::kInvalidParameterValue, "1 groups but group 2"},
      {"sum(i)", errors::kNotImplemented, "aggregate function sum"},
      {"sum(*)", errors::kParseSyntaxError, "count(*)"},
  };
  for (const ErrorCase& c : cases) {
    Status status = EvalError(c.sql);
    EXPECT_EQ(status.error_class(), c.error_class) << c.sql << " -> " << status.ToString();
    EXPECT_NE(status.message().find(c.message_part), std::string_view::npos) << c.sql << " -> " << status.ToString();
  }
}

TEST(BinderTest, PredicatesMustBeBoolean) {
  auto parsed = Expression::Parse("i + 1");
  ASSERT_TRUE(parsed.ok());
  auto bound = BindPredicate(*parsed, SampleBatch()->schema());
  ASSERT_FALSE(bound.ok());
  EXPECT_EQ(bound.status().error_class(), errors::kDatatypeMismatch);
  EXPECT_NE(bound.status().message().find("a filter must be boolean, but (i + 1) is int"), std::string_view::npos);

  auto plain = Bind(*parsed, SampleBatch()->schema());
  ASSERT_TRUE(plain.ok());
  auto filtered = plain->Filter(*SampleBatch());
  ASSERT_FALSE(filtered.ok());
  EXPECT_EQ(filtered.status().error_class(), errors::kDatatypeMismatch);

  auto ok = BindPredicate(*Expression::Parse("NULL"), SampleBatch()->schema());
  EXPECT_TRUE(ok.ok());
}

TEST(BinderTest, AmbiguousCaseInsensitiveNamesAreRejected) {
  TypePtr schema = *DataType::Struct({{"a", DataType::Integer()}, {"A", DataType::Integer()}});
  auto exact = Bind(*Expression::Parse("A + 1"), schema);
  EXPECT_TRUE(exact.ok()) << exact.status().ToString();
  auto ambiguous = Bind(*Expression::Parse("`a ` + 1"), schema);
  EXPECT_FALSE(ambiguous.ok());
  TypePtr other = *DataType::Struct({{"Ab", DataType::Integer()}, {"aB", DataType::Integer()}});
  auto either = Bind(*Expression::Parse("ab"), other);
  ASSERT_FALSE(either.ok());
  EXPECT_NE(either.status().message().find("ambiguous"), std::string_view::npos);
}

TEST(BinderTest, NullabilityIsTracked) {
  TypePtr schema = *DataType::Struct({{"k", DataType::Integer(), false}, {"v", DataType::Integer(), true}});
  auto nullable = [&](const char* sql) { return Bind(*Expression::Parse(sql), schema)->nullable(); };
  EXPECT_FALSE(nullable("k + 1"));
  EXPECT_TRUE(nullable("v + 1"));
  EXPECT_TRUE(nullable("k / 2"));
  EXPECT_FALSE(nullable("v IS NULL"));
  EXPECT_FALSE(nullable("coalesce(v, 0)"));
  EXPECT_FALSE(nullable("v <=> k"));
}

// AND and OR may be written as calls: with the wrong number of arguments they are
// WRONG_NUM_ARGS (the fuzzer found and() reading an argument that was not there).
TEST(BinderTest, LogicCallsWithTheWrongArgumentCountAreRefused) {
  TypePtr schema = ParseTypeString("struct<a:boolean,b:boolean>").value();
  for (const char* text : {"and()", "or()", "and(a)", "or(a, b, a)", "AND(a, b, b, a)", "rlike()", "rlike('a')"}) {
    SCOPED_TRACE(text);
    auto expression = Expression::Parse(text);
    ASSERT_TRUE(expression.ok()) << expression.status().ToString();
    EXPECT_EQ(Bind(*expression, schema).status().error_class(), errors::kWrongNumArgs);
  }
  EXPECT_TRUE(Bind(Expression::Parse("and(a, b)").value(), schema).ok());
}

// The class behind the two tests above: every callable name, with every argument count from 0
// to 5 and arguments of several types, binds or is refused with an error; no binding code reads
// an argument that is not there (run under ASan in the suite).
TEST(BinderTest, EveryCallWithAnyArgumentsBindsOrIsRefused) {
  TypePtr schema = ParseTypeString("struct<b:boolean,s:string,i:int,st:struct<f:int>,a:array<int>>").value();
  const char* arguments[] = {"b", "s", "i", "st", "a", "'x'", "1", "null", "-1"};
  int refused_for_count = 0;
  for (std::string_view name : CallableNames()) {
    for (size_t count = 0; count <= 5; ++count) {
      for (const char* first : arguments) {
        for (const char* argument : arguments) {
          // The call is made as a node, since operator names such as <=> are not identifiers.
          auto call = std::make_shared<Node>();
          call->kind = NodeKind::kCall;
          call->name = std::string(name);
          for (size_t k = 0; k < count; ++k) {
            NodePtr arg = std::make_shared<Node>(Expression::Parse(k == 0 ? first : argument).value().node());
            call->args.push_back(arg);
            call->height = std::max(call->height, arg->height + 1);
          }
          SCOPED_TRACE(fmt::format("{} of {} arguments: {} then {}", name, count, first, argument));
          auto bound = Bind(Expression(call), schema);
          if (!bound.ok()) {
            EXPECT_FALSE(bound.status().error_class().empty()) << bound.status().ToString();
            refused_for_count += bound.status().error_class() == errors::kWrongNumArgs;
          }
        }
      }
    }
  }
  EXPECT_GT(refused_for_count, 0);
}

}  // namespace
}  // namespace sluice::expr
