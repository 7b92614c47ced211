// Built-in functions over the sample batch (test_util.h): strings, math, hashing, date and time.
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "expr/test_util.h"
#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"

namespace sluice::expr {
namespace {

using testing::Eval;
using testing::EvalError;
using Rows = std::vector<std::string>;

struct Case {
  const char* sql;
  Rows expected;
};

void Check(const std::vector<Case>& cases) {
  for (const Case& c : cases) EXPECT_EQ(Eval(c.sql), c.expected) << c.sql;
}

// A constant expression gives the same value on every row of the sample batch.
Rows Four(const char* value) { return Rows(4, value); }

TEST(FunctionsTest, Strings) {
  Check({
      {"upper(s)", {"APPLE", "BANANA", "null", ""}},
      {"lower(s)", {"apple", "banana", "null", ""}},
      {"upper('stra\xc3\x9f\x65 \xc3\xa9t\xc3\xa9 \xd0\xbc\xd0\xb8\xd1\x80 \xf0\x9f\x99\x82')",
       Four("STRASSE \xc3\x89T\xc3\x89 \xd0\x9c\xd0\x98\xd0\xa0 \xf0\x9f\x99\x82")},
      {"lower('\xc3\x89T\xc3\x89 \xce\xa3\xce\x9f\xce\xa6\xce\x99\xce\x91')",
       Four("\xc3\xa9t\xc3\xa9 \xcf\x83\xce\xbf\xcf\x86\xce\xb9\xce\xb1")},
      {"upper('a\xff\xc3')", Four("A\xff\xc3")},
      // Full case mappings: a final sigma, a dotted capital I, title-cased words.
      {"lower('\xce\xa3\xce\x91\xce\xa3 \xc4\xb0')", Four("\xcf\x83\xce\xb1\xcf\x82 i\xcc\x87")},
      {"initcap('\xc3\x9f" "a \xc7\x86x')", Four("Ssa \xc7\x85x")},
      {"length(s)", {"5", "6", "null", "0"}},
      {"length('h\xc3\xa9llo')", Four("5")},
      {"length(X'00ff')", Four("2")},
      {"trim('  a b  ')", Four("a b")},
      {"ltrim('  a ')", Four("a ")},
      {"rtrim('  a ')", Four("  a")},
      {"trim(BOTH 'x' FROM 'xxaxx')", Four("a")},
      {"trim(LEADING 'x' FROM 'xxaxx')", Four("axx")},
      {"trim(TRAILING 'xy' FROM 'xxayx')", Four("xxa")},
      {"substring(s, 2, 3)", {"ppl", "ana", "null", ""}},
      {"substr(s, -3)", {"ple", "ana", "null", ""}},
      {"substring(s, 0, 2)", {"ap", "Ba", "null", ""}},
      {"substring(s, -100, 102)", {"apple", "Banana", "null", ""}},
      {"substring(s, -7, 4)", {"ap", "Ban", "null", ""}},
      {"substring('h\xc3\xa9llo', 2, 2)", Four("\xc3\xa9l")},
      {"substring(s FROM 3)", {"ple", "nana", "null", ""}},
      {"concat(s, '-', i)", {"apple-1", "Banana-2", "null", "--4"}},
      {"s || '!'", {"apple!", "Banana!", "null", "!"}},
      {"concat()", Four("")},
      {"concat_ws(',', s, 'x', NULL)", {"apple,x", "Banana,x", "x", ",x"}},
      {"concat_ws('-', split('a,b,c', ','))", Four("a-b-c")},
      {"concat_ws(NULL, 'a')", Four("null")},
      {"replace(s, 'a', 'A')", {"Apple", "BAnAnA", "null", ""}},
      {"replace('aaa', 'a')", Four("")},
      {"replace('abc', '', 'x')", Four("abc")},
      {"split('a,b,,c,', ',')", Four(R"(["a","b","","c",""])")},
      {"split('a1b22c', '[0-9]+')", Four(R"(["a","b","c"])")},
      {"split('a,b,c', ',', 2)", Four(R"(["a","b,c"])")},
      {"split('abc', '')", Four(R"(["a","b","c"])")},
      {"split(s, 'p')", {R"(["a","","le"])", R"(["Banana"])", "null", R"([""])"}},
      {"regexp_extract('foo123bar', '([a-z]+)([0-9]+)', 2)", Four("123")},
      {"regexp_extract(s, 'p+', 0)", {"pp", "", "null", ""}},
      {"regexp_extract(s, '(x)?a', 1)", {"", "", "null", ""}},
      {"startswith(s, 'ap')", {"true", "false", "null", "false"}},
      {"endswith(s, 'na')", {"false", "true", "null", "false"}},
      {"contains(s, 'nan')", {"false", "true", "null", "false"}},
      {"contains(s, '')", {"true", "true", "null", "true"}},
  });
}

TEST(FunctionsTest, Math) {
  const testing::NonAnsiMode non_ansi;  // the answers of Spark's non-ANSI mode
  Check({
      {"abs(i)", {"1", "2", "null", "4"}},
      {"abs(dec)", {"1.50", "2.25", "null", "100.00"}},
      {"abs(-2147483648)", Four("-2147483648")},
      {"abs(CAST(-2147483648 AS int))", Four("-2147483648")},
      {"round(d)", {"2.0", "-2.0", "null", "NaN"}},
      {"round(2.5D)", Four("3.0")},
      {"round(-2.5D)", Four("-3.0")},
      {"round(1.005D, 2)", Four("1.01")},
      {"round(dec, 1)", {"1.5", "-2.3", "null", "100.0"}},
      {"round(dec)", {"2", "-2", "null", "100"}},
      {"round(1234, -2)", Four("1200")},
      {"round(1250, -2)", Four("1300")},
      {"round(-1250, -2)", Four("-1300")},
      {"round(125.5, -1)", Four("130")},
      {"floor(d)", {"1", "-2", "null", "0"}},
      {"ceil(d)", {"2", "-2", "null", "0"}},
      {"floor(dec)", {"1", "-3", "null", "100"}},
      {"ceil(dec)", {"2", "-2", "null", "100"}},
      {"ceiling(i)", {"1", "2", "null", "-4"}},
      {"sqrt(4)", Four("2.0")},
      {"sqrt(-1)", Four("NaN")},
      {"pow(2, 10)", Four("1024.0")},
      {"power(i, 2)", {"1.0", "4.0", "null", "16.0"}},
  });
}

TEST(FunctionsTest, HashesMatchSpark) {
  // Spark's documented examples (functions reference: hash, md5, sha2).
  Check({
      {"hash('Spark', array(123), 2)", Four("-1321691492")},
      {"md5('Spark')", Four("8cde774d6f7333752ed72cacddb05126")},
      {"sha2('Spark', 256)", Four("529bc3b07127ecb7e53a4dcf1991d9152c24537d919178022b2c42657f79a26b")},
      {"sha2('Spark', 0) = sha2('Spark', 256)", Four("true")},
      {"sha2('Spark', 7)", Four("null")},
      {"length(sha2(s, 512))", {"128", "128", "null", "128"}},
      {"md5(s) IS NULL", {"false", "false", "true", "false"}},
  });
  // Nulls leave the running hash unchanged; equal values hash equally across types' widening.
  EXPECT_EQ(Eval("hash(i) = hash(i, NULL)"), (Rows{"true", "true", "true", "true"}));
  EXPECT_EQ(Eval("hash(NULL)"), Four("42"));
  EXPECT_EQ(Eval("hash(0.0D) = hash(-0.0D)"), Four("true"));
}

TEST(FunctionsTest, DatesAndTimes) {
  const testing::NonAnsiMode non_ansi;  // the answers of Spark's non-ANSI mode
  Check({
      {"year(dt)", {"2026", "null", "2024", "1969"}},
      {"month(ts)", {"1", "null", "2", "12"}},
      {"day(dt)", {"31", "null", "29", "31"}},
      {"dayofmonth('2026-03-04')", Four("4")},
      {"hour(ts)", {"10", "null", "0", "23"}},
      {"date_format(ts, 'yyyy/MM/dd HH:mm')", {"2026/01/31 10:30", "null", "2024/02/29 00:00", "1969/12/31 23:59"}},
      {"date_format(ts, 'EEE, d MMM yy hh:mm:ss.SSS a')",
       {"Sat, 31 Jan 26 10:30:15.500 AM", "null", "Thu, 29 Feb 24 12:00:00.000 AM", "Wed, 31 Dec 69 11:59:59.000 PM"}},
      {"date_format(dt, 'yyyy-MM-dd''T''HH')", {"2026-01-31T00", "null", "2024-02-29T00", "1969-12-31T00"}},
      {"CAST(date_trunc('MONTH', ts) AS string)", {"2026-01-01 00:00:00", "null", "2024-02-01 00:00:00", "1969-12-01 00:00:00"}},
      {"CAST(date_trunc('hour', ts) AS string)", {"2026-01-31 10:00:00", "null", "2024-02-29 00:00:00", "1969-12-31 23:00:00"}},
      {"CAST(date_trunc('WEEK', ts) AS string)", {"2026-01-26 00:00:00", "null", "2024-02-26 00:00:00", "1969-12-29 00:00:00"}},
      {"CAST(date_trunc('YEAR', dt) AS string)", {"2026-01-01 00:00:00", "null", "2024-01-01 00:00:00", "1969-01-01 00:00:00"}},
      {"CAST(date_trunc('QUARTER', ts) AS string)", {"2026-01-01 00:00:00", "null", "2024-01-01 00:00:00", "1969-10-01 00:00:00"}},
      {"date_trunc('fortnight', ts)", {"null", "null", "null", "null"}},
      {"to_date('31/01/2026', 'dd/MM/yyyy')", Four("2026-01-31")},
      {"to_date('31/02/2026', 'dd/MM/yyyy')", Four("null")},
      {"to_date('2026-01-31 23:59:59')", Four("2026-01-31")},
      {"CAST(to_timestamp('2026-01-31 10:00:00') AS string)", Four("2026-01-31 10:00:00")},
      {"CAST(to_timestamp('01/31/2026 02:05 PM', 'MM/dd/yyyy hh:mm a') AS string)", Four("2026-01-31 14:05:00")},
      {"to_timestamp('nope', 'yyyy')", Four("null")},
      {"unix_timestamp(ts)", {"1769855415", "null", "1709164800", "-1"}},
      {"unix_timestamp('2026-01-31', 'yyyy-MM-dd')", Four("1769817600")},
      {"from_unixtime(0)", Four("1970-01-01 00:00:00")},
      {"from_unixtime(l, 'HH:mm:ss')", {"00:00:10", "null", "00:00:30", "00:00:40"}},
      {"current_timestamp() IS NOT NULL AND current_date() <= CAST(current_timestamp() AS date)", Four("true")},
      {"unix_timestamp() > 1700000000", Four("true")},
  });
  Status bad = EvalError("date_format(ts, 'yyyy QQ')");
  EXPECT_EQ(bad.error_class(), errors::kInvalidParameterValue) << bad.ToString();
}

// The functions of the Spark parity work over columns (their literal cases are in the
// conformance suite, src/expr/conformance).
TEST(FunctionsTest, DateStringAndMathFunctionsOverColumns) {
  Check({
      {"date_add(dt, i)", {"2026-02-01", "null", "null", "1969-12-27"}},
      {"date_sub(dt, 1)", {"2026-01-30", "null", "2024-02-28", "1969-12-30"}},
      {"datediff(dt, DATE '2024-01-01')", {"761", "null", "59", "-19724"}},
      {"add_months(dt, 1)", {"2026-02-28", "null", "2024-03-29", "1970-01-31"}},
      {"last_day(dt)", {"2026-01-31", "null", "2024-02-29", "1969-12-31"}},
      {"dayofweek(dt)", {"7", "null", "5", "4"}},
      {"weekofyear(dt)", {"5", "null", "9", "1"}},
      {"quarter(dt)", {"1", "null", "1", "4"}},
      {"minute(ts)", {"30", "null", "0", "59"}},
      {"second(ts)", {"15", "null", "0", "59"}},
      {"regexp_replace(s, '[aeiou]', '*')", {"*ppl*", "B*n*n*", "null", ""}},
      {"format_string('%s|%05d|%.1f|%s', s, i, d, dec)",
       {"apple|00001|1.5|1.50", "Banana|00002|-2.0|-2.25", "null| null|n|null", "|-0004|NaN|100.00"}},
      {"format_string(concat(s, '%d'), i)", {"apple1", "Banana2", "null", "-4"}},
      {"printf('%2$s=%1$x', l, s)", {"apple=a", "Banana=null", "null=1e", "=28"}},
      {"regexp_count(s, 'a|p')", {"3", "3", "null", "0"}},
      {"split_part(s, 'a', 2)", {"pple", "n", "null", ""}},
      {"lpad(s, 7, '.')", {"..apple", ".Banana", "null", "......."}},
      {"instr(s, 'an')", {"0", "2", "null", "0"}},
      {"initcap(s || ' pie')", {"Apple Pie", "Banana Pie", "null", " Pie"}},
      {"hex(i)", {"1", "2", "null", "FFFFFFFFFFFFFFFC"}},
      {"pmod(i, 3)", {"1", "2", "null", "2"}},
      {"sign(d)", {"1.0", "-1.0", "null", "NaN"}},
      {"ln(i)", {"0.0", "0.6931471805599453", "null", "null"}},
  });
  // make_date of a day that does not exist: NULL, or DATETIME_FIELD_OUT_OF_BOUNDS in ANSI mode.
  EXPECT_EQ(EvalError("make_date(2024, i, 1)").error_class(), errors::kDatetimeFieldOutOfBounds);
  // A pattern that does not fit its values fails in both modes, naming the specifier.
  for (const char* sql : {"format_string('%d', d)", "format_string('%s %s', s)", "format_string(s || '%q', i)"}) {
    Status bad = EvalError(sql);
    EXPECT_EQ(bad.error_class(), errors::kInvalidParameterValue) << sql;
    EXPECT_NE(bad.message().find("format specifier"), std::string::npos) << bad.ToString();
  }
  EXPECT_EQ(EvalError("format_string('%s', arr)").error_class(), errors::kDatatypeMismatch);
  // No pattern makes a value beyond the bound every made value has.
  for (const char* sql : {"format_string('%100000000d', i)", "format_string('%.100000000f', d)",
                          "format_string('%99999999999999s', s)"}) {
    EXPECT_EQ(EvalError(sql).error_class(), errors::kInvalidParameterValue) << sql;
  }
  const testing::NonAnsiMode non_ansi;
  Check({{"make_date(2024, i, 1)", {"2024-01-01", "2024-02-01", "null", "null"}}});
}

// to_number, try_to_number and to_char read and write each row by one constant number format;
// the format gives the decimal type, and Spark's refusals of a format are binding errors.
TEST(FunctionsTest, NumberFormatsReadAndWriteEachRow) {
  Check({
      {"to_char(dec, 'S999.99')", {"  +1.50", "  -2.25", "null", "+100.00"}},
      {"to_char(dec, '999.99PR')", {"  1.50  ", "  <2.25>", "null", "100.00  "}},
      {"to_char(dec, '9.9')", {"1.5", "#.#", "null", "#.#"}},
      {"to_char(i, '0000')", {"0001", "0002", "null", "0004"}},
      {"to_varchar(i * 1000, 'MI$9,999')", {" $1,000", " $2,000", "null", "-$4,000"}},
      {"to_number(string(i), 'S99')", {"1", "2", "null", "-4"}},
      {"typeof(to_number(string(i), 'S99.9'))", Four("decimal(3,1)")},
      {"try_to_number(format_string('%,d', i * 1000), 'S9G999')", {"1000", "2000", "null", "-4000"}},
      {"try_to_number(s, '999')", {"null", "null", "null", "null"}},
      // to_char pads with blanks that to_number reads only between digits.
      {"to_number(trim(to_char(dec, 'S999.99')), 'S999.99') = dec", {"true", "true", "null", "true"}},
      // Any script's decimal digits, as Java's Character.isDigit takes them (Arabic-Indic, fullwidth).
      {"to_number('\xd9\xa1\xd9\xa2.\xd9\xa3', '99.9')", Four("12.3")},
      {"to_number('\xef\xbc\x91,\xef\xbc\x92\xef\xbc\x93\xef\xbc\x94', '9,999')", Four("1234")},
      {"try_to_number('1\xe2\x85\xa0', '99')", Four("null")},  // a Roman numeral is no digit
      {"to_number('1\xe2\x80\x83" "2', '99')", Four("12")},         // an en space is a blank, as in Java
  });
  // A row that does not match fails the whole evaluation, naming the row's text and the format.
  Status mismatch = EvalError("to_number(s, '999')");
  EXPECT_EQ(mismatch.error_class(), errors::kInvalidFormat);
  EXPECT_NE(mismatch.message().find("MISMATCH_INPUT: the input 'apple'"), std::string::npos) << mismatch.ToString();
  // Digits a format that starts at its point cannot hold: an error even for try_to_number.
  EXPECT_EQ(EvalError("try_to_number(string(i), '.9')").error_class(), errors::kNumericValueOutOfRange);
  const std::pair<const char*, const char*> kRefused[] = {
      {"to_number(s, '')", "EMPTY"},
      {"to_number(s, 'abc')", "WRONG_NUM_DIGIT"},
      {"to_number(s, '99$')", "CUR_MUST_BEFORE_DIGIT"},
      {"to_number(s, '9.$9')", "CUR_MUST_BEFORE_DIGIT"},
      {"to_char(dec, '9,,9')", "CONT_THOUSANDS_SEPS"},
      {"to_char(dec, '9.9,9')", "THOUSANDS_SEPS_MUST_BEFORE_DEC"},
      {"to_char(dec, 'S9S')", "WRONG_NUM_TOKEN"},
      {"to_char(dec, '9PRPR')", "WRONG_NUM_TOKEN"},
      {"try_to_number(s, 'L99')", "UNEXPECTED_TOKEN"},
      {"try_to_number(s, 'PR9')", "UNEXPECTED_TOKEN"},
  };
  for (const auto& [sql, sub_class] : kRefused) {
    Status refused = EvalError(sql);
    EXPECT_EQ(refused.error_class(), errors::kInvalidFormat) << sql;
    EXPECT_NE(refused.message().find(sub_class), std::string::npos) << sql << ": " << refused.ToString();
  }
  // The format is a constant; over binary it is one of three encodings.
  EXPECT_EQ(EvalError("to_number('1', s)").error_class(), errors::kDatatypeMismatch);
  EXPECT_EQ(EvalError("to_char(dec, s)").error_class(), errors::kDatatypeMismatch);
  EXPECT_EQ(EvalError("to_char(true, '9')").error_class(), errors::kDatatypeMismatch);
  EXPECT_EQ(EvalError("to_char(X'00', 'latin1')").error_class(), errors::kInvalidParameterValue);
  EXPECT_EQ(EvalError("to_number(s, '9999999999999999999999999999999999999999')").error_class(),
            errors::kNumericValueOutOfRange);
}

TEST(FunctionsTest, DistanceUnitAndChecksumFunctionsOverColumns) {
  Check({
      {"levenshtein(s, s || 'x')", {"1", "1", "null", "1"}},
      {"levenshtein(s, 'apple', 2)", {"0", "-1", "null", "-1"}},
      {"soundex(s)", {"A140", "B550", "null", ""}},
      {"factorial(i)", {"1", "2", "null", "null"}},
      {"timestamp_seconds(i)", {"1970-01-01T00:00:01Z", "1970-01-01T00:00:02Z", "null", "1969-12-31T23:59:56Z"}},
      {"unix_millis(timestamp_seconds(i))", {"1000", "2000", "null", "-4000"}},
      {"date_from_unix_date(unix_date(dt))", {"2026-01-31", "null", "2024-02-29", "1969-12-31"}},
      {"crc32(s)", {"2838417488", "69690105", "null", "0"}},
      {"ascii(s)", {"97", "66", "null", "0"}},
      {"octet_length(s)", {"5", "6", "null", "0"}},
      {"bin(i)", {"1", "10", "null", "1111111111111111111111111111111111111111111111111111111111111100"}},
      {"concat(chr(i + 64), space(i))", {"A ", "B  ", "null", "<"}},
  });
  // Seconds beyond the timestamps' range fail in both modes, as Spark's exact multiplication.
  EXPECT_EQ(EvalError("timestamp_seconds(i + 9223372036854775000)").error_class(), errors::kArithmeticOverflow);
  const testing::NonAnsiMode non_ansi;
  EXPECT_EQ(EvalError("timestamp_seconds(i + 9223372036854775000)").error_class(), errors::kArithmeticOverflow);
}

TEST(FunctionsTest, ArrayAndMapFunctionsOverColumns) {
  Check({
      {"array_contains(arr, 5)", {"false", "false", "null", "true"}},
      {"array_contains(arr, 4)", {"false", "false", "null", "null"}},
      {"array_position(arr, 2)", {"2", "0", "null", "0"}},
      {"array_max(arr)", {"3", "null", "null", "5"}},
      {"slice(arr, 2, 5)", {"[2,3]", "[]", "null", "[5]"}},
      {"sort_array(arr, false)", {"[3,2,1]", "[]", "null", "[5,null]"}},
      {"array_compact(arr)", {"[1,2,3]", "[]", "null", "[5]"}},
      {"array_distinct(array_append(arr, i))", {"[1,2,3]", "[2]", "null", "[null,5,-4]"}},
      {"array_prepend(arr, i)", {"[1,1,2,3]", "[2]", "null", "[-4,null,5]"}},
      {"array_join(arr, '-', 'x')", {"1-2-3", "", "null", "x-5"}},
      {"array_size(arr)", {"3", "0", "null", "2"}},
      {"map_keys(m)", {"[\"a\",\"b\"]", "[]", "null", "[\"c\"]"}},
      {"map_values(m)", {"[1,2]", "[]", "null", "[null]"}},
  });
  EXPECT_EQ(EvalError("slice(arr, i - 1, 1)").error_class(), errors::kInvalidParameterValue);
}

// The JSON functions over a column, row by row (the conformance suite folds constants), with the
// options and errors Spark has.
TEST(FunctionsTest, JsonFunctionsOverColumns) {
  Check({
      {"from_json(js, 'a STRUCT<b: ARRAY<INT>>, s STRING')",
       {R"({"a":{"b":[10,20]},"s":"x"})", R"({"a":null,"s":null})", "null", R"({"a":null,"s":null})"}},
      {"from_json(js, 'a INT')", {R"({"a":null})", R"({"a":1})", "null", R"({"a":null})"}},
      {"from_json(s, 'a INT')", {R"({"a":null})", R"({"a":null})", "null", "null"}},
      {"to_json(from_json(js, 'a MAP<STRING, ARRAY<INT>>, s STRING'))", {R"({"a":{"b":[10,20]},"s":"x"})", "{}", "null", "{}"}},
      {"to_json(named_struct('i', i, 's', s))", {R"({"i":1,"s":"apple"})", R"({"i":2,"s":"Banana"})", "{}", R"({"i":-4,"s":""})"}},
      {"to_json(arr)", {"[1,2,3]", "[]", "null", "[null,5]"}},
      {"to_json(m)", {R"({"a":1,"b":2})", "{}", "null", R"({"c":null})"}},
      {"json_array_length(to_json(arr))", {"3", "0", "null", "2"}},
      {"json_object_keys(js)", {R"(["a","s"])", R"(["a"])", "null", "null"}},
      {"from_json(js, schema_of_json('{\"a\": 1}')).a", {"null", "1", "null", "null"}},
  });
  // FAILFAST names the first record that does not read; PERMISSIVE gives nulls for it.
  Status failfast = EvalError("from_json(js, 'a INT', map('mode', 'FAILFAST'))");
  EXPECT_EQ(failfast.error_class(), errors::kMalformedRecordInParsing);
  EXPECT_NE(failfast.message().find(R"({"a": {"b": [10, 20]}, "s": "x"})"), std::string::npos) << failfast.message();
  EXPECT_EQ(EvalError("from_json(js, 'a INT', map('Mode', 'DROPMALFORMED'))").error_class(), errors::kInvalidParameterValue);
  Status unknown = EvalError("from_json(js, 'a INT', map('allowYamlComments', 'true'))");
  EXPECT_EQ(unknown.error_class(), errors::kInvalidOptions);
  EXPECT_NE(unknown.message().find("mode, dateFormat, timestampFormat, allowSingleQuotes"), std::string::npos)
      << unknown.message();
  EXPECT_EQ(EvalError("from_json(js, 'a INT', map('allowComments', 'sometimes'))").error_class(),
            errors::kInvalidParameterValue);
  EXPECT_EQ(EvalError("from_json(js, 'a INT', map('timestampFormat', 'yyyy-MM-dd QQQ'))").error_class(),
            errors::kInvalidParameterValue);
  EXPECT_EQ(EvalError("from_json(js, s)").error_class(), errors::kInvalidSchema);
  EXPECT_EQ(EvalError("from_json(js, 'a INT,')").error_class(), errors::kInvalidSchema);
  EXPECT_EQ(EvalError("from_json(js, 'map<int, int>')").error_class(), errors::kDatatypeMismatch);
  EXPECT_EQ(EvalError("from_json(js, 'a INT', map('mode', s))").error_class(), errors::kDatatypeMismatch);
  EXPECT_EQ(EvalError("to_json(i)").error_class(), errors::kDatatypeMismatch);
  EXPECT_EQ(EvalError("to_json(arr, map('ignoreNullFields', 'maybe'))").error_class(), errors::kInvalidParameterValue);
  EXPECT_EQ(EvalError("schema_of_json(js)").error_class(), errors::kDatatypeMismatch);
  EXPECT_EQ(EvalError("schema_of_json('{\"a\": ')").error_class(), errors::kMalformedRecordInParsing);
}

// Lambda functions over columns: the body reads the outer row's columns and enclosing lambdas'
// parameters, and conditional and failing operations inside it see only their own elements.
TEST(FunctionsTest, HigherOrderFunctionsOverColumns) {
  Check({
      {"transform(arr, x -> x + i)", {"[2,3,4]", "[]", "null", "[null,1]"}},
      {"transform(arr, (x, k) -> k * 10 + coalesce(x, 0))", {"[1,12,23]", "[]", "null", "[0,15]"}},
      {"transform(arr, x -> transform(arr, y -> x * y))", {"[[1,2,3],[2,4,6],[3,6,9]]", "[]", "null", "[[null,null],[null,25]]"}},
      {"transform(arr, x -> CASE WHEN x > 1 THEN 6 div (x - 1) ELSE 0 END)", {"[0,6,3]", "[]", "null", "[0,1]"}},
      {"filter(arr, x -> x > i)", {"[2,3]", "[]", "null", "[5]"}},
      {"filter(transform(arr, x -> s), t -> t LIKE 'a%')", {R"(["apple","apple","apple"])", "[]", "null", "[]"}},
      {"exists(arr, x -> x = i + 1)", {"true", "false", "null", "null"}},
      {"forall(arr, x -> x > 0)", {"true", "true", "null", "null"}},
      {"aggregate(arr, 0, (acc, x) -> acc + coalesce(x, i))", {"6", "0", "null", "1"}},
      {"aggregate(arr, l, (acc, x) -> acc + x, acc -> acc * 2)", {"32", "null", "null", "null"}},
      {"zip_with(arr, transform(arr, x -> s), (x, t) -> t || x)", {R"(["apple1","apple2","apple3"])", "[]", "null", R"([null,"5"])"}},
      {"transform(array(value.user.email), c -> upper(c))", {R"(["A@X.IO"])", "[null]", "[null]", R"(["D@X.IO"])"}},
  });
  // A filter over a lambda, on the rows earlier conjuncts kept (the gathered path).
  BatchPtr batch = testing::SampleBatch();
  auto bound = BindPredicate(*Expression::Parse("i > 1 AND exists(arr, x -> x > i)"), batch->schema());
  ASSERT_TRUE(bound.ok()) << bound.status().ToString();
  EXPECT_EQ(bound->Filter(*batch).value_or({-1}), (std::vector<int64_t>{}));
  auto kept = BindPredicate(*Expression::Parse("i < 0 AND exists(arr, x -> x > i)"), batch->schema());
  EXPECT_EQ(kept->Filter(*batch).value_or({-1}), (std::vector<int64_t>{3}));
  EXPECT_EQ(Expression::Parse("transform(arr, x -> x + i + `weird name`)")->ReferencedColumns(),
            (std::vector<std::string>{"arr", "i", "weird name"}));
  EXPECT_EQ(EvalError("transform(arr, x -> 10 / (x - 1))").error_class(), errors::kDivideByZero);
  EXPECT_EQ(EvalError("transform(arr, (x, y, z) -> x)").error_class(), errors::kInvalidLambdaFunctionCall);
  EXPECT_EQ(EvalError("upper(x -> x)").error_class(), errors::kInvalidLambdaFunctionCall);
  EXPECT_EQ(EvalError("transform(arr, x -> y)").error_class(), errors::kUnresolvedColumn);
  EXPECT_EQ(EvalError("filter(arr, x -> x + 1)").error_class(), errors::kDatatypeMismatch);
  EXPECT_EQ(EvalError("aggregate(arr, 0, (acc, x) -> acc + 1.5)").error_class(), errors::kDatatypeMismatch);
  EXPECT_EQ(EvalError("transform(arr, (x, x) -> x)").error_class(), errors::kParseSyntaxError);
}

// array_sort with a comparator: per row, the outer row's columns visible in the comparator, stable
// for ties, arrays whose pairs exceed one evaluation's bound sorted in several, NULL arrays NULL.
TEST(FunctionsTest, ArraySortByAComparatorOverColumns) {
  Check({
      {"array_sort(arr, (l, r) -> coalesce(r, 0) - coalesce(l, 0))", {"[3,2,1]", "[]", "null", "[5,null]"}},
      // The outer i decides the direction: descending where i > 1.
      {"array_sort(transform(arr, x -> coalesce(x, -1)), (l, r) -> CASE WHEN i > 1 THEN r - l ELSE l - r END)",
       {"[1,2,3]", "[]", "null", "[-1,5]"}},
      // Ties keep the array's order: by the key alone, (2,b) stays before (2,a).
      {"transform(array_sort(array(named_struct('k', 2, 'v', s), named_struct('k', 1, 'v', 'x'), named_struct('k', 2, "
       "'v', 'a')), (l, r) -> l.k - r.k), e -> e.v)",
       {R"(["x","apple","a"])", R"(["x","Banana","a"])", R"(["x",null,"a"])", R"(["x","","a"])"}},
      // Rows of 997 to 1002 elements: more pairs than one evaluation takes, so several run.
      {"element_at(array_sort(sequence(1, 1000 + i), (l, r) -> r - l), 1)", {"1001", "1002", "null", "996"}},
      {"size(array_sort(sequence(1, 1000 + i), (l, r) -> r - l))", {"1001", "1002", "null", "996"}},
  });
  EXPECT_EQ(EvalError("array_sort(array(1, i), (l, r) -> l - r)").error_class(), errors::kComparatorReturnsNull);
  EXPECT_EQ(EvalError("array_sort(sequence(1, 1025 + i), (l, r) -> l - r)").error_class(), errors::kInvalidParameterValue);
  EXPECT_EQ(EvalError("array_sort(arr, (l, r) -> 1L)").error_class(), errors::kDatatypeMismatch);
  EXPECT_EQ(EvalError("array_sort(arr, l -> 1)").error_class(), errors::kInvalidLambdaFunctionCall);
}

// window(ts, duration[, slide, start]): the tumbling window of each row's time (NULL for a NULL
// time), window_time its last microsecond; durations are constants Spark accepts.
TEST(FunctionsTest, TimeWindowsOverColumns) {
  Check({
      {"window(ts, '1 hour').start", {"2026-01-31T10:00:00Z", "null", "2024-02-29T00:00:00Z", "1969-12-31T23:00:00Z"}},
      {"window(ts, '1 hour').end", {"2026-01-31T11:00:00Z", "null", "2024-02-29T01:00:00Z", "1970-01-01T00:00:00Z"}},
      {"window(ts, '1 day', '1 day', '-6 hours').start",
       {"2026-01-30T18:00:00Z", "null", "2024-02-28T18:00:00Z", "1969-12-31T18:00:00Z"}},
      {"window(ts, 'interval 250 milliseconds').end",
       {"2026-01-31T10:30:15.750000Z", "null", "2024-02-29T00:00:00.250000Z", "1969-12-31T23:59:59.250000Z"}},
      {"window_time(window(dt, '1 week'))",
       // Weeks start on Thursdays, as 1970-01-01 did.
       {"2026-02-04T23:59:59.999999Z", "null", "2024-03-06T23:59:59.999999Z", "1969-12-31T23:59:59.999999Z"}},
  });
  EXPECT_EQ(EvalError("window(ts, '10 minutes', '5 minutes')").error_class(), errors::kNotImplemented);
  EXPECT_EQ(EvalError("window(ts, '1 month')").error_class(), errors::kInvalidParameterValue);
  EXPECT_EQ(EvalError("window(ts, '1.5 minutes')").error_class(), errors::kInvalidParameterValue);
  EXPECT_EQ(EvalError("window(ts, s)").error_class(), errors::kDatatypeMismatch);
  EXPECT_EQ(EvalError("window(ts, '0 seconds')").error_class(), errors::kDatatypeMismatch);
  EXPECT_EQ(EvalError("window(i, '1 hour')").error_class(), errors::kDatatypeMismatch);
  EXPECT_EQ(EvalError("window_time(named_struct('a', ts))").error_class(), errors::kDatatypeMismatch);
}

// decode(expr, search, result, ..., default), and binary values by bytes in substring, left and
// right, over columns.
TEST(FunctionsTest, DecodeAndBinaryPositionsOverColumns) {
  Check({
      {"decode(i, 1, 'one', 2, 'two', -4, 'minus four', 'other')", {"one", "two", "other", "minus four"}},
      {"decode(s, NULL, 'no name', 'apple', 'fruit')", {"fruit", "null", "no name", "null"}},
      {"hex(substring(encode(s, 'UTF-8'), 2, 3))", {"70706C", "616E61", "null", ""}},
      {"hex(left(encode(s, 'UTF-8'), i))", {"61", "4261", "null", ""}},
      {"right(encode(s, 'UTF-8'), 2)", {"le", "na", "null", ""}},
      {"hex(overlay(encode(s, 'UTF-8') PLACING X'FF' FROM 2 FOR 0))", {"61FF70706C65", "42FF616E616E61", "null", "FF"}},
  });
  EXPECT_EQ(EvalError("overlay(encode(s, 'UTF-8') PLACING 'x' FROM 1)").error_class(), errors::kDatatypeMismatch);
}

// The functions added with the conformance suite, row by row over columns (the suite folds
// constants).
TEST(FunctionsTest, CollectionDateAndEncodingFunctionsOverColumns) {
  Check({
      {"get(arr, i)", {"2", "null", "null", "null"}},
      {"array_insert(arr, i, 0)", {"[0,1,2,3]", "[null,0]", "null", "[0,null,null,5]"}},
      {"flatten(array(arr, arr))", {"[1,2,3,1,2,3]", "[]", "null", "[null,5,null,5]"}},
      {"sequence(1, i)", {"[1]", "[1,2]", "null", "[1,0,-1,-2,-3,-4]"}},
      {"arrays_zip(arr, array(s))", {R"([{"arr":1,"1":"apple"},{"arr":2,"1":null},{"arr":3,"1":null}])",
                                     R"([{"arr":null,"1":"Banana"}])", "null", R"([{"arr":null,"1":""},{"arr":5,"1":null}])"}},
      {"map_concat(m, map('z', i))", {R"({"a":1,"b":2,"z":1})", R"({"z":2})", "null", R"({"c":null,"z":-4})"}},
      // As Spark 4.3 computes them for these rows.
      {"xxhash64(s, i)", {"-297220854217062302", "-6833284433838304287", "42", "1276106006079191180"}},
      {"timestampdiff(DAY, ts, timestampadd(HOUR, i * 24, ts))", {"1", "null", "null", "-4"}},
      {"extract(DOY FROM dt)", {"31", "null", "60", "365"}},
      {"months_between(dt, DATE'2024-01-31')", {"24.0", "null", "1.0", "-649.0"}},
      {"conv(CAST(i AS STRING), 10, 2)", {"1", "10", "null", "1111111111111111111111111111111111111111111111111111111111111100"}},
      {"decode(encode(s, 'UTF-16LE'), 'UTF-16LE')", {"apple", "Banana", "null", ""}},
      {"elt(abs(i) % 2 + 1, s, 'x')", {"x", "Banana", "null", ""}},
      {"regexp_extract_all(s, '(p+|an)', 1)", {R"(["pp"])", R"(["an","an"])", "null", "[]"}},
      {"overlay(s PLACING '*' FROM i FOR 2)", {"*ple", "B*ana", "null", "*"}},
  });
  EXPECT_EQ(EvalError("array_insert(arr, i - 1, 0)").error_class(), errors::kInvalidIndexOfZero);
  EXPECT_EQ(EvalError("sequence(i, 10, -1)").error_class(), errors::kInvalidParameterValue);
  EXPECT_EQ(EvalError("map_concat(m, m)").error_class(), errors::kDuplicatedMapKey);
  EXPECT_EQ(EvalError("encode(s || '\u00e9', 'US-ASCII')").error_class(), errors::kMalformedCharacterCoding);
  EXPECT_EQ(EvalError("extract(FORTNIGHT FROM dt)").error_class(), errors::kInvalidExtractField);
  EXPECT_EQ(EvalError("next_day(dt, s)").error_class(), errors::kIllegalDayOfWeek);
  EXPECT_EQ(EvalError("elt(i + 5, s)").error_class(), errors::kInvalidArrayIndex);
}

// uuid(): version 4 UUIDs, distinct across rows and calls, the same again for the same batch
// evaluated at the same time (a replay).
TEST(FunctionsTest, UuidsAreDistinctAndReplayable) {
  const std::vector<std::string> first = Eval("uuid()");
  ASSERT_EQ(first.size(), 4u);
  std::set<std::string> seen(first.begin(), first.end());
  for (const std::string& u : first) {
    EXPECT_TRUE(std::regex_match(u, std::regex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"))) << u;
  }
  const std::vector<std::string> pairs = Eval("uuid() || uuid()");
  for (const std::string& p : pairs) {
    EXPECT_NE(p.substr(0, 36), p.substr(36)) << "two calls in one expression differ";
    seen.insert(p.substr(0, 36));
  }
  EXPECT_EQ(seen.size(), 8u);
  BatchPtr batch = testing::SampleBatch();
  BoundExpression bound = *Bind(*Expression::Parse("uuid()"), batch->schema());
  ColumnPtr once = *bound.Evaluate(*batch, 1'700'000'000'000'000);
  ColumnPtr again = *bound.Evaluate(*batch, 1'700'000'000'000'000);
  ColumnPtr later = *bound.Evaluate(*batch, 1'700'000'000'000'001);
  EXPECT_EQ(testing::Render(*once), testing::Render(*again));
  EXPECT_NE(testing::Render(*once), testing::Render(*later));
}

// rand(seed) and randn(seed) give Spark's values (its XORShiftRandom): row n of a batch the n-th
// value, in whatever chunks the rows come; the seed is an INT or BIGINT constant, NULL being 0.
TEST(FunctionsTest, SeededRandomNumbersAreSparks) {
  EXPECT_EQ(Eval("rand(0)")[0], "0.7604953758285915");
  EXPECT_EQ(Eval("random(7)")[0], "0.28188121484885875");
  EXPECT_EQ(Eval("rand(NULL)")[0], "0.7604953758285915");
  EXPECT_EQ(Eval("randn(42)")[0], "2.384479054241165");
  EXPECT_EQ(Eval("rand(42)"), (std::vector<std::string>{"0.619189370225301", "0.5096018842446481",
                                                         "0.8325259388871524", "0.26322809041172357"}));
  EXPECT_EQ(Eval("randn(42)"), (std::vector<std::string>{"2.384479054241165", "0.1920934041293524",
                                                          "0.7337336533286575", "-0.5224480195716871"}));
  BatchPtr batch = testing::SampleBatch();
  BoundExpression bound = *Bind(*Expression::Parse("rand(42)"), batch->schema());
  EXPECT_EQ(testing::Render(**bound.Evaluate(*Slice(batch, 2, 2), 0, 2)),
            (std::vector<std::string>{"0.8325259388871524", "0.26322809041172357"}))
      << "a piece starting at row 2 continues the sequence";
  for (const char* wrong : {"rand(1.5)", "rand('a')", "rand(CAST(3 AS TINYINT))", "rand(i)", "randn(1, 2)"}) {
    EXPECT_FALSE(Bind(*Expression::Parse(wrong), batch->schema()).ok()) << wrong;
  }
  // Without a seed: doubles in [0, 1), the same again for the batch at the same time.
  ColumnPtr once = *Bind(*Expression::Parse("rand()"), batch->schema())->Evaluate(*batch, 5);
  ColumnPtr again = *Bind(*Expression::Parse("rand()"), batch->schema())->Evaluate(*batch, 5);
  EXPECT_EQ(testing::Render(*once), testing::Render(*again));
  for (int64_t row = 0; row < once->length; ++row) {
    EXPECT_GE(once->Value<double>(row), 0.0);
    EXPECT_LT(once->Value<double>(row), 1.0);
  }
}

// A quantifier right after a quantifier is refused, as Java refuses it (a dangling meta
// character), instead of being handed to an engine that backtracks on it without end; lazy
// quantifiers, groups' `(?` syntax, escaped and bracketed quantifier characters stay valid.
TEST(FunctionsTest, RegexQuantifiersAfterQuantifiersAreRefused) {
  for (const char* sql : {"s rlike 'a**'", "s rlike 'a+*'", "s rlike 'a?*'", "s rlike 'a{2}*'", "s rlike 'a*{2}'",
                          "s rlike 'a*?*'", "s rlike 'a*++'", "s rlike 'a{2,}*'", "s rlike '0***.****'", "regexp_replace(s, 'b**', '')"}) {
    Status error = EvalError(sql);
    EXPECT_EQ(error.error_class(), errors::kInvalidParameterValue) << sql;
    EXPECT_NE(error.message().find("dangling meta character"), std::string::npos) << sql << ": " << error.ToString();
  }
  for (const char* sql : {"s rlike 'a*?'", "s rlike '(?:ab)*c'", "s rlike 'a{2}?'", "s rlike 'a}*'",
                          "s rlike '[*+]*'", "s rlike '\\\\**'", "s rlike 'a{2}b*'", "s rlike '(a+)?b'"}) {
    EXPECT_TRUE(EvalError(sql).ok()) << sql << ": " << EvalError(sql).ToString();
  }
}

// Functions that make values of the size they are asked for refuse sizes beyond 64 MiB before
// allocating anything (a row that is NULL asks for nothing).
TEST(FunctionsTest, MadeValuesHaveABoundedSize) {
  for (const char* sql : {"repeat(s, 2000000000)", "repeat(repeat('ab', 40000), 1000)", "lpad(s, 2000000000, 'x')",
                          "rpad(s, 20000000, 'x')"}) {
    Status error = EvalError(sql);
    EXPECT_EQ(error.error_class(), errors::kInvalidParameterValue) << sql;
    EXPECT_NE(error.message().find("64 MiB"), std::string::npos) << sql << ": " << error.ToString();
  }
  EXPECT_EQ(Eval("length(repeat(s, 1000))"), (Rows{"5000", "6000", "null", "0"}));
  EXPECT_EQ(Eval("CASE WHEN s IS NULL THEN repeat(s, 2000000000) END"), (Rows{"null", "null", "null", "null"}));
}

TEST(FunctionsTest, NonConstantPatternsCompilePerValue) {
  Check({
      {"'apple' RLIKE s", {"true", "false", "null", "true"}},
      {"regexp_extract('Banana', s, 0)", {"", "Banana", "null", ""}},
      {"'Banana' LIKE s", {"false", "true", "null", "false"}},
  });
}

}  // namespace
}  // namespace sluice::expr
