#include "delta/json_writer.h"

#include <charconv>

#include "sluice/core/json_text.h"

namespace sluice::delta::json {

void AppendString(std::string_view text, std::string* out) { AppendJsonString(out, text); }

void AppendInt(int64_t value, std::string* out) {
  char buffer[24];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out->append(buffer, end);
}

void AppendKey(std::string_view key, bool* first, std::string* out) {
  if (!*first) out->push_back(',');
  *first = false;
  AppendString(key, out);
  out->push_back(':');
}

void AppendNullableStringMap(const std::map<std::string, std::optional<std::string>>& map, std::string* out) {
  out->push_back('{');
  bool first = true;
  for (const auto& [key, value] : map) {
    AppendKey(key, &first, out);
    if (value.has_value()) {
      AppendString(*value, out);
    } else {
      out->append("null");
    }
  }
  out->push_back('}');
}

}  // namespace sluice::delta::json
