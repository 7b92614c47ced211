// What binding needs of the JSON functions (kernels_json.cc): their options, checked once, and
// the schema argument of from_json. Internal to expr.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/column.h"
#include "sluice/core/json_reader.h"
#include "sluice/core/status.h"
#include "expr/bound.h"

namespace sluice::expr {

// The options map of from_json, to_json and schema_of_json, as Spark names them.
struct JsonOptions final : CompiledState {
  bool failfast = false;           // mode: PERMISSIVE (default) or FAILFAST
  std::string date_format;         // dateFormat; empty: Spark's default parsing and printing
  std::string timestamp_format;    // timestampFormat; likewise
  bool ignore_null_fields = true;  // ignoreNullFields (to_json)
  // from_json's allowSingleQuotes, allowNonNumericNumbers (both true by default, as in Spark),
  // allowComments, allowUnquotedFieldNames, allowNumericLeadingZeros,
  // allowBackslashEscapingAnyCharacter and allowUnquotedControlChars.
  JsonLeniency leniency{.allow_single_quotes = true, .allow_non_numeric_numbers = true};
};

// Reads a constant map<string,string> of options (null: none) for `function`. INVALID_OPTIONS
// names an option the function does not take; a mode other than PERMISSIVE or FAILFAST, or a
// pattern with an unsupported letter, is INVALID_PARAMETER_VALUE.
Result<std::shared_ptr<const JsonOptions>> ReadJsonOptions(std::string_view function, const Column* options);

// from_json's schema: a DDL column list ("a INT, b STRING"), a type ("array<int>",
// "struct<a:int>") or Spark's JSON form of one, made nullable throughout as Spark makes it; it
// must be a struct, an array or a map with string keys (DATATYPE_MISMATCH otherwise,
// INVALID_SCHEMA when it does not parse).
Result<TypePtr> ReadJsonSchema(std::string_view text);

// schema_of_json of one document: its type in SQL form ("STRUCT<a: BIGINT, b: ARRAY<STRING>>"),
// fields in name order, as Spark infers it. MALFORMED_RECORD_IN_PARSING when it is not JSON.
Result<std::string> InferJsonSchema(std::string_view json);

// json_tuple's columns (expr/generator.h): for each of `fields`, the value of that top-level field
// of each row's document, as get_json_object gives it (a string unquoted, another value as compact
// JSON); NULL where the row is NULL, is not a JSON object, or lacks the field or holds null in it.
std::vector<ColumnPtr> JsonTupleColumns(const ColumnPtr& json, const std::vector<std::string>& fields);

}  // namespace sluice::expr
