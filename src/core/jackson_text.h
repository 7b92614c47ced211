// JSON values written as Spark writes a value it keeps as text (Jackson's copyCurrentStructure:
// a non-string value in a string field of from_json, get_json_object's results): compact, strings
// escaped as sluice writes JSON (core/json_text.h), integers as written, other numbers as Java's
// Double.toString (`1e-5` is 1.0E-5, `100000000.0` is 1.0E8).
#pragma once

#include <string>

#include <simdjson.h>

namespace sluice {

// Appends `value`. With `marked_row`, strings that are marked numbers (json_exact_numbers.h) are
// written as those numbers.
void AppendJacksonText(simdjson::dom::element value, bool marked_row, std::string* out);

}  // namespace sluice
