// Reading JSON documents into typed columns with the conversions of Spark's JSON reader: one
// reader for stream values (formats/json.h) and SQL's from_json.
//
// A JsonReader is compiled once from a type and then reads whole columns of JSON text (one
// document per row). Values convert as Spark converts them:
// - booleans from true/false; integral types from JSON integers in range; float and double from
//   any number and the strings "NaN", "Infinity", "+Infinity", "-Infinity", "INF", "+INF", "-INF";
// - decimals from numbers (exactly, rounded HALF_UP to the scale; a row holding a \u0000 escape
//   through doubles) and numeric strings;
// - strings from strings; any other value is kept as its compact JSON text, as Spark keeps it
//   (integers as written, other numbers as Java's Double.toString: `1e-5` is "1.0E-5");
// - binary from base64 strings;
// - dates and timestamps from strings through the options' parsers; timestamps also from
//   integers (seconds since the epoch); timestamp_ntz refuses a string with a zone;
// - structs from objects (unknown keys ignored, the last of duplicate keys wins, a missing field
//   null), map<string,T> from objects, arrays from arrays.
// A value that does not convert nulls the innermost struct field holding it (an array or map
// with one such element is null as a whole, as in Spark), counted in
// DecodeStats::mismatched_fields. A field that may not be null (a JSON Schema `required` one)
// whose value is missing or does not convert nulls its enclosing struct instead.
//
// A row that is not JSON, or whose root is of another kind than the type's, is malformed
// (DecodeStats::malformed): a null row, or, with JsonReadOptions::malformed_as_null_fields and a
// struct type, a struct whose fields are all null (from_json's PERMISSIVE mode). An object read
// as an array of structs is a one-element array. A null input row is a null row, not malformed.
// Anything after the first document of a row makes the row malformed.
//
// Thread safety: a reader keeps its parser and builders between calls; one thread at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>

#include "sluice/core/column.h"
#include "sluice/core/decode_stats.h"
#include "sluice/core/status.h"
#include "sluice/core/types.h"

namespace sluice {

// Spark's JSON parser options of these names (Jackson's features), all off by default here: a row
// that is not JSON is read again with what they allow made JSON —
//   allowSingleQuotes                   strings and names in single quotes ('a')
//   allowNonNumericNumbers              the bare values NaN, Infinity, +Infinity, -Infinity, as the
//                                       strings that float and double read
//   allowComments                       /* ... */ and // ... (to the line's end) between values
//   allowUnquotedFieldNames             names of letters, digits, `_` and `$` without quotes
//   allowNumericLeadingZeros            numbers such as 007 (read as 7)
//   allowBackslashEscapingAnyCharacter  a backslash before any character (\q reads as q)
//   allowUnquotedControlChars           characters below U+0020 (a tab, a newline) inside strings
struct JsonLeniency {
  bool allow_single_quotes = false;
  bool allow_non_numeric_numbers = false;
  bool allow_comments = false;
  bool allow_unquoted_field_names = false;
  bool allow_numeric_leading_zeros = false;
  bool allow_backslash_escaping_any_character = false;
  bool allow_unquoted_control_chars = false;

  bool any() const {
    return allow_single_quotes || allow_non_numeric_numbers || allow_comments || allow_unquoted_field_names ||
           allow_numeric_leading_zeros || allow_backslash_escaping_any_character || allow_unquoted_control_chars;
  }
};

struct JsonReadOptions {
  // See the header comment: what a malformed row of a struct type becomes.
  bool malformed_as_null_fields = false;
  // How strings become dates and timestamps (instants); unset, ParseIsoDate and
  // ParseIsoTimestamp (core/iso_datetime.h). False when the text is not one.
  std::function<bool(std::string_view text, int32_t* days)> parse_date;
  std::function<bool(std::string_view text, int64_t* micros)> parse_timestamp;
  // What a row that is not JSON may hold beyond it (see JsonLeniency).
  JsonLeniency leniency;
};

class JsonReader {
 public:
  // INVALID_ARGUMENT naming the path when `type` holds a type JSON cannot carry (a map whose keys
  // are not strings).
  static Result<std::unique_ptr<JsonReader>> Make(const TypePtr& type, JsonReadOptions options = {});
  virtual ~JsonReader();

  virtual const TypePtr& type() const = 0;
  // Reads every row of `documents` (string or binary; INVALID_ARGUMENT otherwise) into one column
  // of type(). `stats` may be null.
  virtual Result<ColumnPtr> Read(const Column& documents, DecodeStats* stats) = 0;
};

}  // namespace sluice
