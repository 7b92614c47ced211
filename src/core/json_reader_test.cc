// The JSON reader's conversions and failure rules (Spark's JSON reader): what each JSON value
// becomes in each type, and how far a value that does not convert reaches.
#include "sluice/core/json_reader.h"

#include <gtest/gtest.h>

#include "sluice/core/compute.h"
#include "testing/columns.h"

namespace sluice {
namespace {

struct ReadResult {
  std::vector<std::string> rows;  // FormatValue of each row, or "null"
  DecodeStats stats;
};

ReadResult ReadAs(const std::string& type_text, const std::vector<std::optional<std::string>>& documents,
                  JsonReadOptions options = {}) {
  TypePtr type = *ParseTypeString(type_text);
  std::unique_ptr<JsonReader> reader = JsonReader::Make(type, std::move(options)).value();
  ReadResult out;
  ColumnPtr column = reader->Read(*testing::Strings(documents), &out.stats).value();
  EXPECT_EQ(column->length, static_cast<int64_t>(documents.size()));
  for (int64_t i = 0; i < column->length; ++i) out.rows.push_back(column->IsNull(i) ? "null" : FormatValue(*column, i));
  return out;
}

TEST(JsonReaderTest, ConvertsScalarsAsSpark) {
  ReadResult r = ReadAs("struct<d:decimal(5,2),b:binary,t:timestamp,n:timestamp_ntz,f:float,s:string>",
                        {R"({"d": 1.005, "b": "AQI=", "t": 1577872800, "n": "2020-01-01T10:00:00", "f": 1e40, "s": 12})",
                         R"({"d": "1.5", "b": "A", "t": "2020-01-01T10:00:00+02:00", "n": "2020-01-01T10:00:00Z", "f": "NaN", "s": [1, {"a": true}]})",
                         R"({"d": 123456, "b": 1, "t": 1.5, "n": 1, "f": "x", "s": null})"});
  EXPECT_EQ(r.rows[0], R"({"d":1.01,"b":"AQI=","t":"2020-01-01T10:00:00Z","n":"2020-01-01T10:00:00","f":Infinity,"s":"12"})");
  EXPECT_EQ(r.rows[1], R"({"d":1.50,"b":null,"t":"2020-01-01T08:00:00Z","n":null,"f":NaN,"s":"[1,{\"a\":true}]"})");
  EXPECT_EQ(r.rows[2], R"({"d":null,"b":null,"t":null,"n":null,"f":null,"s":null})");
  EXPECT_EQ(r.stats.mismatched_fields, 2 + 5);
  EXPECT_EQ(r.stats.malformed, 0);
}

// Numbers a double cannot carry read as Spark reads them (exactly): into decimals digit for digit,
// into longs and strings from their text, into doubles rounded as the parser rounds; an integer
// beyond 64 bits leaves the row readable, with or without a decimal in the type.
TEST(JsonReaderTest, NumbersOfMoreThanFifteenDigitsReadExactly) {
  const std::string doc =
      R"({"d": 1234567890123456.789, "l": 1234567890123456789, "x": 1234567890.12345678, )"
      R"("s": 12345678901234567890123, "a": [12345678901234567890.12, 0.1, -1.2345678901234567], )"
      R"("t": 12345678901234567, "k": {"v": 12345678901234567.5, "w": "1234567890123456789"}})";
  ReadResult exact = ReadAs(
      "struct<d:decimal(38,3),l:bigint,x:double,s:string,a:array<decimal(38,16)>,t:timestamp,k:string>", {doc});
  ReadResult doubles = ReadAs("struct<x:double>", {R"({"x": 1234567890.12345678})"});
  const std::string x = doubles.rows[0].substr(5, doubles.rows[0].size() - 6);
  EXPECT_EQ(exact.rows[0], R"({"d":1234567890123456.789,"l":1234567890123456789,"x":)" + x +
                               R"(,"s":"12345678901234567890123","a":[12345678901234567890.1200000000000000,)"
                               R"(0.1000000000000000,-1.2345678901234567],"t":null,)"
                               R"("k":"{\"v\":1.2345678901234568E16,\"w\":\"1234567890123456789\"}"})");
  EXPECT_EQ(exact.stats.malformed, 0);
  EXPECT_EQ(exact.stats.mismatched_fields, 1);  // t: those seconds overflow microseconds

  // Without a decimal in the type: an integer beyond 64 bits nulls its field, or nothing.
  ReadResult wide = ReadAs("struct<k:int,l:bigint,s:string>",
                           {R"({"k": 1, "big": 123456789012345678901234567890})",
                            R"({"k": 2, "l": 123456789012345678901234567890, "s": -123456789012345678901234567890})"});
  EXPECT_EQ(wide.rows, (std::vector<std::string>{R"({"k":1,"l":null,"s":null})",
                                                 R"({"k":2,"l":null,"s":"-123456789012345678901234567890"})"}));
  EXPECT_EQ(wide.stats.malformed, 0);
  EXPECT_EQ(wide.stats.mismatched_fields, 1);

  // A string of the row's own that looks marked stays a string: such a row is not marked.
  ReadResult own = ReadAs("struct<d:decimal(20,0),s:string>", {R"({"d": 12, "s": "\u0000#12"})",
                                                               R"({"d": "12345678901234567", "s": "#1"})"});
  EXPECT_EQ(own.rows[0], R"({"d":12,"s":"\u0000#12"})");  // the string's own NUL, as FormatValue escapes it
  EXPECT_EQ(own.rows[1], R"({"d":12345678901234567,"s":"#1"})");
}

// A string field keeps other values as Spark's JSON reader does: compact JSON with integers as
// written and other numbers as Java's Double.toString, with or without a decimal in the type.
TEST(JsonReaderTest, AStringFieldKeepsOtherValuesAsSparkWritesThem) {
  const std::vector<std::optional<std::string>> documents = {
      R"({"s": {"a": 1e-5, "b": 100000000.0, "c": "x\ny\u0001/", "d": [1.0, 2, -0.0], "e": 12345678901234567.5, )"
      R"("f": 123456789012345678901234567890}})",
      R"({"s": 1e-5})", R"({"s": 100000000.0})", R"({"s": 1.5})", R"({"s": true})", R"({"s": -0.0})",
      R"({"s": 123456789012345678901234567890})", R"({"s": 12345678901234567.5})", R"({"s": null})"};
  // What Spark 4.2's from_json(j, 's string') gives for each.
  const std::vector<std::string> spark = {
      R"({"a":1.0E-5,"b":1.0E8,"c":"x\ny\u0001/","d":[1.0,2,-0.0],"e":1.2345678901234568E16,)"
      R"("f":123456789012345678901234567890})",
      "1.0E-5", "1.0E8", "1.5", "true", "-0.0", "123456789012345678901234567890", "1.2345678901234568E16", "null"};
  for (const char* type : {"struct<s:string>", "struct<s:string,d:decimal(5,1)>"}) {
    TypePtr parsed = *ParseTypeString(type);
    std::unique_ptr<JsonReader> reader = JsonReader::Make(parsed, {}).value();
    ColumnPtr column = reader->Read(*testing::Strings(documents), nullptr).value();
    ASSERT_EQ(column->length, static_cast<int64_t>(spark.size()));
    for (size_t row = 0; row < spark.size(); ++row) {
      const Column& s = *column->children[0];
      EXPECT_EQ(s.IsNull(row) ? "null" : std::string(s.View(row)), spark[row]) << type << " row " << row;
    }
  }
}

// A value that does not convert nulls the innermost struct field holding it: an array or a map
// with one bad element is null as a whole, a struct inside an array keeps its other fields.
TEST(JsonReaderTest, AFailureNullsTheInnermostStructField) {
  ReadResult r = ReadAs("struct<a:array<int>,m:map<string,int>,l:array<struct<c:int,d:int>>,k:string>",
                        {R"({"a": [1, "x"], "m": {"k": 1, "j": "y"}, "l": [{"c": "x", "d": 1}], "k": "kept"})",
                         R"({"a": [1, null], "m": {}, "l": [], "k": "z"})"});
  EXPECT_EQ(r.rows[0], R"({"a":null,"m":null,"l":[{"c":null,"d":1}],"k":"kept"})");
  EXPECT_EQ(r.rows[1], R"({"a":[1,null],"m":{},"l":[],"k":"z"})");
  EXPECT_EQ(r.stats.mismatched_fields, 3);
}

TEST(JsonReaderTest, RootsOfEveryKindAndMalformedRows) {
  ReadResult arrays = ReadAs("array<struct<a:int>>", {R"([{"a": 1}, {"a": 2}])", R"({"a": 3})", "[1]", "nope", std::nullopt});
  EXPECT_EQ(arrays.rows, (std::vector<std::string>{R"([{"a":1},{"a":2}])", R"([{"a":3}])", "null", "null", "null"}));
  EXPECT_EQ(arrays.stats.malformed, 2) << "a null row is not malformed";
  EXPECT_EQ(arrays.stats.malformed_rows, (std::vector<int64_t>{2, 3}));
  ReadResult maps = ReadAs("map<string,int>", {R"({"x": 1})", R"({"x": "1"})", "[]"});
  EXPECT_EQ(maps.rows, (std::vector<std::string>{R"({"x":1})", "null", "null"}));
  ReadResult structs = ReadAs("struct<a:int>", {"{\"a\": 1} trailing", "", "null", "7"});
  EXPECT_EQ(structs.rows, (std::vector<std::string>(4, "null")));
  EXPECT_EQ(structs.stats.malformed, 4);
  JsonReadOptions null_fields;
  null_fields.malformed_as_null_fields = true;
  ReadResult permissive = ReadAs("struct<a:int,b:string>", {"{", R"({"a": 2})"}, null_fields);
  EXPECT_EQ(permissive.rows, (std::vector<std::string>{R"({"a":null,"b":null})", R"({"a":2,"b":null})"}));
  EXPECT_EQ(permissive.stats.malformed, 1);
}

// Spark's allowSingleQuotes and allowNonNumericNumbers: a row that is not JSON is read again with
// single-quoted strings and names as JSON strings and bare NaN/Infinity as the strings doubles read;
// text inside double-quoted strings is never touched, and what is still not JSON stays malformed.
TEST(JsonReaderTest, SingleQuotesAndBareNonNumericValuesReadWhenAllowed) {
  const std::vector<std::optional<std::string>> documents = {
      R"({'s': 'it\'s "x"', 'd': NaN, 'l': [-Infinity, +Infinity, 1.5]})",
      R"({"s": "'kept' NaN", "d": Infinity})",
      R"({"s": 'open)",
      R"({"s": "x", "d": NaNx})",
      R"({"s": "x", "d": INF})"};
  const std::string type = "struct<s:string,d:double,l:array<double>>";
  ReadResult strict = ReadAs(type, documents);
  EXPECT_EQ(strict.stats.malformed, 5);
  JsonReadOptions lenient;
  lenient.leniency.allow_single_quotes = true;
  lenient.leniency.allow_non_numeric_numbers = true;
  ReadResult read = ReadAs(type, documents, lenient);
  EXPECT_EQ(read.rows, (std::vector<std::string>{R"({"s":"it's \"x\"","d":NaN,"l":[-Infinity,Infinity,1.5]})",
                                                 R"({"s":"'kept' NaN","d":Infinity,"l":null})", "null", "null", "null"}));
  EXPECT_EQ(read.stats.malformed, 3);
  JsonReadOptions quotes_only;
  quotes_only.leniency.allow_single_quotes = true;
  EXPECT_EQ(ReadAs(type, {R"({'s': 'a', 'd': NaN})", R"({'s': 'a'})"}, quotes_only).rows,
            (std::vector<std::string>{"null", R"({"s":"a","d":null,"l":null})"}));
}

// Each of Spark's other leniency options reads what it allows, and only that: with every option
// but one on, the document that needs the one stays malformed.
TEST(JsonReaderTest, CommentsUnquotedNamesLeadingZerosAnyEscapesAndControlCharactersReadWhenAllowed) {
  using Flag = bool JsonLeniency::*;
  const std::string type = "struct<n:bigint,s:string,a:array<bigint>>";
  const struct {
    Flag flag;
    std::string document;
    std::string read;
  } kCases[] = {
      {&JsonLeniency::allow_comments, "{\"n\": 1, /* the name */ \"s\": \"/* kept */\" // to the end\n}",
       R"({"n":1,"s":"/* kept */","a":null})"},
      {&JsonLeniency::allow_comments, "// first\n{\"a\": [1, /**/ 2]}", R"({"n":null,"s":null,"a":[1,2]})"},
      {&JsonLeniency::allow_unquoted_field_names, R"({n: 5, s_2$: "x", s: "y", a: [3]})",
       R"({"n":5,"s":"y","a":[3]})"},
      {&JsonLeniency::allow_numeric_leading_zeros, R"({"n": 007, "a": [-00, 00, 010]})",
       R"({"n":7,"s":null,"a":[0,0,10]})"},
      {&JsonLeniency::allow_backslash_escaping_any_character, R"({"s": "\q\'\n", "n": 1})",
       "{\"n\":1,\"s\":\"q'\\n\",\"a\":null}"},
      {&JsonLeniency::allow_unquoted_control_chars, "{\"s\": \"a\tb\nc\"}", "{\"n\":null,\"s\":\"a\\tb\\nc\",\"a\":null}"},
  };
  for (const auto& c : kCases) {
    JsonReadOptions only;
    only.leniency.*c.flag = true;
    ReadResult read = ReadAs(type, {c.document}, only);
    EXPECT_EQ(read.rows, std::vector<std::string>{c.read}) << c.document;
    EXPECT_EQ(read.stats.malformed, 0) << c.document;
    JsonReadOptions all_but;
    for (Flag flag : {&JsonLeniency::allow_single_quotes, &JsonLeniency::allow_non_numeric_numbers,
                      &JsonLeniency::allow_comments, &JsonLeniency::allow_unquoted_field_names,
                      &JsonLeniency::allow_numeric_leading_zeros, &JsonLeniency::allow_backslash_escaping_any_character,
                      &JsonLeniency::allow_unquoted_control_chars}) {
      all_but.leniency.*flag = flag != c.flag;
    }
    EXPECT_EQ(ReadAs(type, {c.document}, all_but).stats.malformed, 1) << c.document;
  }
  // What none of them makes JSON stays malformed: an unterminated comment or string, a name
  // starting with a digit, a bare word as a value, leading zeros in a name's place.
  JsonReadOptions all;
  all.leniency = {true, true, true, true, true, true, true};
  for (const char* bad : {R"({"n": 1 /* open})", R"({"s": "open})", R"({1n: 1})", R"({"s": word})", R"({"a": [1, 2)"}) {
    EXPECT_EQ(ReadAs(type, {bad}, all).stats.malformed, 1) << bad;
  }
}

TEST(JsonReaderTest, TheOptionsParseDatesAndTimestamps) {
  JsonReadOptions options;
  options.parse_date = [](std::string_view text, int32_t* days) {
    if (text != "day one") return false;
    *days = 1;
    return true;
  };
  options.parse_timestamp = [](std::string_view text, int64_t* micros) {
    if (text != "second one") return false;
    *micros = 1'000'000;
    return true;
  };
  ReadResult r = ReadAs("struct<d:date,t:timestamp>", {R"({"d": "day one", "t": "second one"})", R"({"d": "1970-01-02", "t": "x"})"},
                        std::move(options));
  EXPECT_EQ(r.rows, (std::vector<std::string>{R"({"d":"1970-01-02","t":"1970-01-01T00:00:01Z"})", R"({"d":null,"t":null})"}));
}

TEST(JsonReaderTest, RefusesMapsWithKeysJsonCannotCarry) {
  Result<std::unique_ptr<JsonReader>> reader = JsonReader::Make(*ParseTypeString("struct<m:map<int,int>>"));
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().error_class(), "INVALID_ARGUMENT");
  EXPECT_NE(reader.status().message().find("value.m"), std::string::npos) << reader.status().message();
}

}  // namespace
}  // namespace sluice
