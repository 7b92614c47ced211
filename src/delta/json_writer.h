// Small helpers that append JSON text to a std::string. Private to the delta layer: the log is
// written with exact field names and order, so it is built by hand rather than through a DOM.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace sluice::delta::json {

// A JSON string literal with quotes; control characters are escaped as \u00XX.
void AppendString(std::string_view text, std::string* out);
void AppendInt(int64_t value, std::string* out);
// `"key":` (preceded by a comma unless `*first`, which it clears).
void AppendKey(std::string_view key, bool* first, std::string* out);
// Values that are std::nullopt are written as JSON null (partition values may be null).
void AppendNullableStringMap(const std::map<std::string, std::optional<std::string>>& map, std::string* out);

}  // namespace sluice::delta::json
