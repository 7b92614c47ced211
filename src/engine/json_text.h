// Small helpers for the JSON the engine writes (log entries, offsets, progress) and checks.
#pragma once

#include <string>
#include <string_view>

namespace sluice::engine {

// Appends `value` as a JSON string literal (quoted, escaped).
void AppendJsonString(std::string* out, std::string_view value);
std::string JsonString(std::string_view value);
// A JSON number for a double: finite values in shortest round-trip form, others as null.
std::string JsonDouble(double value);
// Whether `text` is one complete JSON document on a single line.
bool IsSingleLineJson(std::string_view text);

}  // namespace sluice::engine
