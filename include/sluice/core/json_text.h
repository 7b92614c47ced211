// The JSON text sluice writes itself (logs, offsets, progress, events, type strings): one
// escaping rule everywhere, so that every file we write parses the same way.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace sluice {

// Appends `value` as a JSON string literal: quoted, with `"` `\` and control characters escaped
// (\n \r \t \b \f by name, the rest as \u00XX). Other bytes pass through unchanged, except that
// bytes which are not valid UTF-8 become U+FFFD (core/utf8.h): the output is always valid JSON.
void AppendJsonString(std::string* out, std::string_view value);
std::string JsonString(std::string_view value);
// Appends a JSON object of string values, in the map's order, and a JSON array of strings.
void AppendJsonStringMap(std::string* out, const std::map<std::string, std::string>& map);
void AppendJsonStringArray(std::string* out, const std::vector<std::string>& values);
// A JSON number for a double: finite values in shortest round-trip form, others as null.
std::string JsonDouble(double value);
// Microseconds since the epoch as UTC ISO-8601 with milliseconds: "2026-01-31T10:00:00.000Z".
std::string IsoTimestampMillis(int64_t micros);
// Whether `text` is one complete JSON document on a single line.
bool IsSingleLineJson(std::string_view text);

}  // namespace sluice
