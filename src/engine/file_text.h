// The text forms of values in csv and json files, shared by their readers and writers. One form
// per type, so that what the writers produce reads back to the same values:
//   boolean          true | false (read case-insensitively)
//   integral         decimal digits with an optional sign, within the type's range
//   float, double    shortest round-trip digits ("1.5", "1e+20"); NaN, Infinity, -Infinity
//   decimal(p,s)     [-]digits[.digits], at most s fraction digits and p digits in all
//   string           the bytes as they are
//   binary           base64 (standard alphabet, padded)
//   date             [-]YYYY-MM-DD
//   timestamp        YYYY-MM-DDThh:mm:ss.ffffffZ; read also with a space for T, fewer fraction
//                    digits, and Z or an offset ±hh:mm / ±hhmm / ±hh (absent: UTC)
//   timestamp_ntz    as timestamp without the zone (an offset is refused)
// Nested values (struct, array, map) are JSON text (json: the JSON value itself): objects for
// structs and maps, arrays for arrays; map keys are the text of their key.
//
// Pure functions, thread-safe; the parsers append into builders without allocating per value.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "sluice/core/builder.h"
#include "sluice/core/column.h"

namespace sluice::engine::file_text {

// Parses `text` as a value of the builder's (non-nested) type and appends it. False, with the
// reason in `*why` (for an error message), when the text is no value of that type.
bool AppendScalar(ColumnBuilder* builder, std::string_view text, std::string* why);

// Appends the text form of a non-null, non-nested value.
void FormatScalar(const Column& column, int64_t row, std::string* out);

// Appends a value of any type (null included) as JSON: numbers and booleans bare, non-finite
// floats and every other scalar as JSON strings of their text form, nested values as above.
void FormatJson(const Column& column, int64_t row, std::string* out);

// Parses `text`, one JSON value, into the builder (any type; JSON null appends a null). False
// with `*why` as AppendScalar. Defined in file_json.cc.
bool AppendJsonText(ColumnBuilder* builder, std::string_view text, std::string* why);

}  // namespace sluice::engine::file_text
