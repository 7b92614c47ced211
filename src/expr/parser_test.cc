// The parser: Spark SQL's precedence, literal forms and sugar, printed back as fully
// parenthesized SQL; syntax errors with their line:column.
#include <gtest/gtest.h>

#include "sluice/core/error_classes.h"
#include "sluice/expr/expression.h"

namespace sluice::expr {
namespace {

std::string Sql(const std::string& text) {
  auto parsed = Expression::Parse(text);
  if (!parsed.ok()) return parsed.status().ToString();
  return parsed->ToSql();
}

struct PrintCase {
  const char* input;
  const char* printed;
};

TEST(ParserTest, PrintsTheTreeWithSparkPrecedence) {
  const PrintCase cases[] = {
      {"a + b * c", "(a + (b * c))"},
      {"a - b - c", "((a - b) - c)"},
      {"a * b % c div d", "(((a * b) % c) div d)"},
      {"a = 1 OR b = 2 AND c = 3", "((a = 1) OR ((b = 2) AND (c = 3)))"},
      {"NOT a = b", "(NOT (a = b))"},
      {"! a", "(NOT a)"},
      {"NOT NOT a", "(NOT (NOT a))"},
      {"-a::int", "(- CAST(a AS int))"},
      {"- - a", "(- (- a))"},
      {"+a", "(+ a)"},
      {"a || b = 'x'", "((a || b) = 'x')"},
      {"a + 1 < b * 2", "((a + 1) < (b * 2))"},
      {"x BETWEEN 1 AND 2 AND y", "((x BETWEEN 1 AND 2) AND y)"},
      {"x NOT BETWEEN a + 1 AND b", "(x NOT BETWEEN (a + 1) AND b)"},
      {"a IS NULL", "(a IS NULL)"},
      {"a IS NOT NULL OR b", "((a IS NOT NULL) OR b)"},
      {"a IS NOT TRUE", "(a IS NOT TRUE)"},
      {"a IS FALSE", "(a IS FALSE)"},
      {"a IS UNKNOWN", "(a IS NULL)"},
      {"a NOT IN (1, 2)", "(a NOT IN (1, 2))"},
      {"a IN ('x')", "(a IN ('x'))"},
      {"a LIKE 'x%'", "(a LIKE 'x%')"},
      {"a NOT LIKE 'x!%%' ESCAPE '!'", "(a NOT LIKE 'x!%%' ESCAPE '!')"},
      {"a ILIKE 'X%'", "(a ILIKE 'X%')"},
      {"a RLIKE '^x'", "(a RLIKE '^x')"},
      {"a REGEXP 'y'", "(a RLIKE 'y')"},
      {"a <=> b", "(a <=> b)"},
      {"a == b", "(a = b)"},
      {"a <> b", "(a != b)"},
      {"a IS DISTINCT FROM b", "(NOT (a <=> b))"},
      {"a IS NOT DISTINCT FROM b", "(a <=> b)"},
      {"CASE WHEN a THEN 1 ELSE 2 END", "CASE WHEN a THEN 1 ELSE 2 END"},
      {"case x when 1 then 'a' when 2 then 'b' end", "CASE x WHEN 1 THEN 'a' WHEN 2 THEN 'b' END"},
      {"CAST(a AS decimal(10, 2))", "CAST(a AS decimal(10,2))"},
      {"cast(a as bigint)", "CAST(a AS bigint)"},
      {"TRY_CAST(a AS int)", "TRY_CAST(a AS int)"},
      {"a::array<string>", "CAST(a AS array<string>)"},
      {"count(*)", "count(*)"},
      {"count(DISTINCT a)", "count(DISTINCT a)"},
      {"COALESCE(a, b)", "coalesce(a, b)"},
      {"trim(BOTH 'x' FROM s)", "trim(s, 'x')"},
      {"trim(LEADING FROM s)", "ltrim(s)"},
      {"trim('x' FROM s)", "trim(s, 'x')"},
      {"substring(s FROM 2 FOR 3)", "substring(s, 2, 3)"},
      {"`weird name`.x", "`weird name`.x"},
      {"`a``b`", "`a``b`"},
      {"value.user.email", "value.user.email"},
      {"arr[0] + m['k']", "(arr[0] + m['k'])"},
      {"struct(a, b).a", "struct(a, b).a"},
      {"struct(a AS x, b, 1 as `y z`).x", "struct(a AS x, b, 1 AS `y z`).x"},
      {"current_date", "current_date()"},
      {"current_timestamp()", "current_timestamp()"},
      {"a /* comment */ + -- to the end\n b", "(a + b)"},
  };
  for (const PrintCase& c : cases) EXPECT_EQ(Sql(c.input), c.printed) << c.input;
}

TEST(ParserTest, PrintsEveryLiteralForm) {
  const PrintCase cases[] = {
      {"10", "10"},
      {"10L", "10L"},
      {"10s", "10S"},
      {"10Y", "10Y"},
      {"3000000000", "3000000000L"},
      {"12345678901234567890", "12345678901234567890BD"},
      {"1.50", "1.50"},
      {".5", "0.5"},
      {"1.", "1BD"},
      {"1.5e3", "1500.0D"},
      {"1E-2", "0.01D"},
      {"1.5D", "1.5D"},
      {"2.5F", "2.5F"},
      {"10BD", "10BD"},
      {"'it''s'", "'it\\'s'"},
      {"'tab\\there'", "'tab\\there'"},
      {"\"double\"", "'double'"},
      {"'a' 'b'", "'ab'"},
      {"'\\u00e9'", "'\xc3\xa9'"},
      {"TRUE", "TRUE"},
      {"false", "FALSE"},
      {"NULL", "NULL"},
      {"DATE '2026-01-31'", "DATE '2026-01-31'"},
      {"TIMESTAMP '2026-01-31 10:00:00'", "TIMESTAMP '2026-01-31 10:00:00'"},
      {"TIMESTAMP '2026-01-31T10:00:00.25+01:00'", "TIMESTAMP '2026-01-31 09:00:00.25'"},
      {"TIMESTAMP_NTZ '2026-01-31 10:00:00'", "TIMESTAMP_NTZ '2026-01-31 10:00:00'"},
      {"INTERVAL 1 HOUR", "INTERVAL 3600000000 MICROSECONDS"},
      {"INTERVAL '2' DAYS 30 MINUTES", "INTERVAL 174600000000 MICROSECONDS"},
      {"INTERVAL 1 YEAR 2 MONTHS", "INTERVAL 14 MONTHS"},
      {"X'0aFF'", "X'0AFF'"},
      {"-5", "(-5)"},
  };
  for (const PrintCase& c : cases) EXPECT_EQ(Sql(c.input), c.printed) << c.input;
}

TEST(ParserTest, PrintedTextParsesBackToTheSameTree) {
  const char* inputs[] = {
      "a + b * c - -d",
      "CASE x WHEN 1 THEN 'a' ELSE concat(s, '%') END",
      "value.event_type = 'transaction' AND value.amount > 10.0",
      "NOT (a IN (1, 2, NULL)) OR b LIKE 'x\\\\%' ESCAPE '\\\\'",
      "CAST(a AS struct<x:int,`y z`:array<string>>) IS NULL",
      "ts + INTERVAL 1 DAY - INTERVAL 3 HOURS",
      "1.5D * 2.5F + 1e300 / 3BD",
      "`select`.`from` <=> x",
      "negative(5) + -5 - -(5) * +5 - - -2147483648 + negative(-1.5)",
      "-0.0D + -1e300 + -1.50 + -9223372036854775808L + -128Y + -32768S + -2.5F + -10BD",
      "'x\\u000055' || '\\0017' || '\\1777'",
  };
  for (const char* input : inputs) {
    std::string once = Sql(input);
    EXPECT_EQ(Sql(once), once) << input;
  }
}

struct ErrorCase {
  const char* input;
  const char* position;  // expected "line:column"
};

TEST(ParserTest, SyntaxErrorsNameTheirPosition) {
  const ErrorCase cases[] = {
      {"a +", "1:4"},
      {"a = = b", "1:5"},
      {"(a", "1:3"},
      {"'abc", "1:1"},
      {"a\n  AND )", "2:7"},
      {"1a", "1:1"},
      {"`x", "1:1"},
      {"a b c", "1:3"},
      {"CAST(a AS nosuchtype)", "1:11"},
      {"CASE a END", "1:8"},
      {"a LIKE 'x' ESCAPE 'ab'", "1:19"},
      {"x IN ()", "1:7"},
      {"a # b", "1:3"},
      {"", "1:1"},
      {"DATE '2026-02-30'", "1:6"},
      {"2147483648Y", "1:1"},
      {"count(*) + *", "1:12"},
  };
  for (const ErrorCase& c : cases) {
    auto parsed = Expression::Parse(c.input);
    ASSERT_FALSE(parsed.ok()) << c.input;
    EXPECT_EQ(parsed.status().error_class(), errors::kParseSyntaxError) << c.input;
    EXPECT_EQ(parsed.status().message().substr(0, 4 + std::string(c.position).size()),
              std::string("at ") + c.position + ":")
        << c.input << " -> " << parsed.status().ToString();
  }
}

TEST(ParserTest, AFieldOfALiteralPrintsSoThatItReadsBack) {
  // `2 .e1` is the field e1 of the literal 2; printed as `2.e1` it would read back as 20.0.
  Result<Expression> parsed = Expression::Parse("2 .e1");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->ToSql(), "(2).e1");
  Result<Expression> reparsed = Expression::Parse(parsed->ToSql());
  ASSERT_TRUE(reparsed.ok()) << reparsed.status().ToString();
  EXPECT_EQ(reparsed->ToSql(), "(2).e1");
}

TEST(ParserTest, IntegralLiteralsBeyondDecimal38AreErrorsNotWrappedValues) {
  // 39 digits once overflowed the 128-bit accumulator and came out as a wrapped bigint.
  Result<Expression> parsed = Expression::Parse(std::string(39, '3'));
  EXPECT_EQ(parsed.status().error_class(), errors::kParseSyntaxError) << parsed.status().ToString();
  Result<Expression> widest = Expression::Parse(std::string(38, '9'));
  ASSERT_TRUE(widest.ok()) << widest.status().ToString();
  EXPECT_EQ(widest->ToSql(), std::string(38, '9') + "BD");
}

TEST(ParserTest, ANulByteIsNotANumberSuffix) {
  // strchr-style suffix matching once took the terminating NUL for a suffix: ".1\0" lexed as one
  // number whose printed text did not parse back.
  Result<Expression> parsed = Expression::Parse(std::string_view(".1\0\n", 4));
  EXPECT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().error_class(), errors::kParseSyntaxError) << parsed.status().ToString();
}

TEST(ParserTest, DeepNestingIsAnErrorNotACrash) {
  std::string deep(5000, '(');
  deep += "a";
  deep += std::string(5000, ')');
  auto parsed = Expression::Parse(deep);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().error_class(), errors::kParseSyntaxError);
  std::string minus(5000, '-');
  EXPECT_FALSE(Expression::Parse(minus + "a").ok());
}

// Chains of operators grow the tree without nesting in the text: each kind is bounded like
// parentheses are, so nothing that walks the tree later can exhaust the stack.
TEST(ParserTest, LongOperatorChainsAreAnErrorNotACrash) {
  auto chain = [](std::string_view first, std::string_view link, int count) {
    std::string text(first);
    for (int i = 0; i < count; ++i) text += link;
    return text;
  };
  for (std::string text : {chain("v", " + v", 5000), chain("v", " OR v = 1", 5000), chain("v", " AND v", 5000),
                           chain("s", " || s", 5000), chain("v", " * 2", 5000), chain("v", " = v", 5000),
                           chain("v", " IS NULL", 5000), chain("v", "[0]", 5000), chain("v", "::string", 5000),
                           chain("v", " LIKE 'x'", 5000), chain("v", " BETWEEN 1 AND 2", 5000),
                           chain("f(v)", ".a", 5000), chain("v", " OR v", 100000)}) {
    SCOPED_TRACE(text.substr(0, 30));
    auto parsed = Expression::Parse(text);
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.status().error_class(), errors::kParseSyntaxError);
    EXPECT_NE(parsed.status().message().find("deeper than"), std::string::npos) << parsed.status().ToString();
  }
  // Below the bound a chain parses, and a shorter one prints back to itself (the printed form
  // parenthesizes each link, and parentheses count towards the same bound).
  for (std::string text : {chain("v", " + v", 150), chain("v", " OR v", 150)}) {
    auto parsed = Expression::Parse(text);
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    EXPECT_FALSE(parsed->ToSql().empty());
  }
  for (std::string text : {chain("v", " + v", 40), chain("v", " OR v", 40)}) {
    auto parsed = Expression::Parse(text);
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    auto reparsed = Expression::Parse(parsed->ToSql());
    ASSERT_TRUE(reparsed.ok()) << reparsed.status().ToString();
    EXPECT_EQ(reparsed->ToSql(), parsed->ToSql());
  }
}

// Operators written as calls with arguments their SQL form cannot hold print as calls, so that
// every printed expression reads back as itself (the fuzzer found like(null, null, null) printed
// with ESCAPE NULL, which does not parse).
TEST(ParserTest, CallsOfOperatorNamesPrintBackToThemselves) {
  for (const char* text : {"like(null, null, null)", "like(s, 'a', 1)", "ilike(s, 'a', s)", "get_field(s, 1)",
                           "get_field(s, null)", "get_field(s, s)", "like(s, 'a', '!')", "in()", "between(1)",
                           "isnull()", "negative(1, 2)", "subscript(s)", "in(*)", "between(*)",
                           "negative(*)", "like(*)", "in(0)", "in(s)", "like(s, s, 'abc')",
                           "ilike(s, s, '')", "+like(s, s, 'ab')"}) {
    SCOPED_TRACE(text);
    auto parsed = Expression::Parse(text);
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    auto reparsed = Expression::Parse(parsed->ToSql());
    ASSERT_TRUE(reparsed.ok()) << parsed->ToSql() << ": " << reparsed.status().ToString();
    EXPECT_EQ(reparsed->ToSql(), parsed->ToSql());
  }
}

TEST(ParserTest, NamedExpressionsTakeAnAliasOrSparkDefaultName) {
  auto aliased = ParseNamedExpression("CASE WHEN a THEN -q ELSE q END AS delta");
  ASSERT_TRUE(aliased.ok()) << aliased.status().ToString();
  EXPECT_EQ(aliased->name, "delta");
  EXPECT_EQ(aliased->expression.ToSql(), "CASE WHEN a THEN (- q) ELSE q END");

  auto bare_alias = ParseNamedExpression("a + 1 total");
  ASSERT_TRUE(bare_alias.ok());
  EXPECT_EQ(bare_alias->name, "total");

  auto quoted = ParseNamedExpression("x AS `my col`");
  ASSERT_TRUE(quoted.ok());
  EXPECT_EQ(quoted->name, "my col");

  auto column = ParseNamedExpression("value.user.email");
  ASSERT_TRUE(column.ok());
  EXPECT_EQ(column->name, "email");

  auto computed = ParseNamedExpression("a + 1");
  ASSERT_TRUE(computed.ok());
  EXPECT_EQ(computed->name, "(a + 1)");

  auto missing = ParseNamedExpression("a AS");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().error_class(), errors::kParseSyntaxError);
}

TEST(ParserTest, ReferencedColumnsAreTheTopLevelNames) {
  auto parsed = Expression::Parse("value.amount > 1 AND coalesce(x, value.b, `y z`) = 2");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->ReferencedColumns(), (std::vector<std::string>{"value", "x", "y z"}));
}

TEST(ParserTest, ConjunctsAreTheOperandsOfTheTopLevelAndChain) {
  auto conjuncts = [](const char* sql) {
    std::vector<std::string> out;
    for (const Expression& e : Expression::Parse(sql)->Conjuncts()) out.push_back(e.ToSql());
    return out;
  };
  EXPECT_EQ(conjuncts("a > 1 AND (b = 2 AND c) AND d IS NULL"),
            (std::vector<std::string>{"(a > 1)", "(b = 2)", "c", "(d IS NULL)"}));
  EXPECT_EQ(conjuncts("a > 1 OR b AND c"), (std::vector<std::string>{"((a > 1) OR (b AND c))"}));
  EXPECT_EQ(conjuncts("x"), (std::vector<std::string>{"x"}));
}

TEST(ParserTest, AColumnComparedWithAConstantReadsWithTheColumnOnTheLeft) {
  auto comparison = [](const char* sql) -> std::string {
    auto c = Expression::Parse(sql)->AsColumnComparison();
    if (!c) return "none";
    std::string path;
    for (const std::string& part : c->path) path += (path.empty() ? "" : ".") + part;
    return path + " " + c->op + " " + c->constant.ToSql();
  };
  EXPECT_EQ(comparison("a > 5"), "a > 5");
  EXPECT_EQ(comparison("5 > a"), "a < 5");
  EXPECT_EQ(comparison("DATE '2026-01-31' <= s.day"), "s.day >= DATE '2026-01-31'");
  EXPECT_EQ(comparison("a == -(2 * 3)"), "a = (- (2 * 3))");
  EXPECT_EQ(comparison("a = b"), "none");
  EXPECT_EQ(comparison("a + 1 > 5"), "none");
  EXPECT_EQ(comparison("a != 5"), "none");
  EXPECT_EQ(comparison("a <=> 5"), "none");
}

}  // namespace
}  // namespace sluice::expr
