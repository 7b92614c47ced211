#include "sluice/core/json_text.h"

#include <utility>

#include <simdjson.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "sluice/core/utf8.h"

namespace sluice {

void AppendJsonString(std::string* out, std::string_view value) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string valid;
  if (!IsValidUtf8(value)) {
    valid = MakeValidUtf8(value);
    value = valid;
  }
  out->push_back('"');
  for (char c : value) {
    switch (c) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      case '\t': out->append("\\t"); break;
      case '\b': out->append("\\b"); break;
      case '\f': out->append("\\f"); break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out->append("\\u00");
          out->push_back(kHex[(c >> 4) & 0xf]);
          out->push_back(kHex[c & 0xf]);
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

std::string JsonString(std::string_view value) {
  std::string out;
  AppendJsonString(&out, value);
  return out;
}

void AppendJsonStringMap(std::string* out, const std::map<std::string, std::string>& map) {
  out->push_back('{');
  bool first = true;
  for (const auto& [key, value] : map) {
    if (!std::exchange(first, false)) out->push_back(',');
    AppendJsonString(out, key);
    out->push_back(':');
    AppendJsonString(out, value);
  }
  out->push_back('}');
}

void AppendJsonStringArray(std::string* out, const std::vector<std::string>& values) {
  out->push_back('[');
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out->push_back(',');
    AppendJsonString(out, values[i]);
  }
  out->push_back(']');
}

std::string JsonDouble(double value) {
  if (!std::isfinite(value)) return "null";
  char buffer[32];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  if (ec != std::errc()) return "null";
  return std::string(buffer, end);
}

bool IsSingleLineJson(std::string_view text) {
  if (text.empty() || text.find('\n') != std::string_view::npos) return false;
  simdjson::dom::parser parser;
  simdjson::dom::element element;
  return parser.parse(simdjson::padded_string(text)).get(element) == simdjson::SUCCESS;
}

std::string IsoTimestampMillis(int64_t micros) {
  std::time_t seconds = static_cast<std::time_t>(micros / 1000000);
  int64_t millis = (micros % 1000000) / 1000;
  if (micros < 0 && micros % 1000000 != 0) {
    seconds -= 1;
    millis += 1000;
  }
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[64];
  std::snprintf(text, sizeof(text), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900, utc.tm_mon + 1,
                utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, static_cast<int>(millis));
  return text;
}

}  // namespace sluice
