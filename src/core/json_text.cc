#include "sluice/core/json_text.h"

#include <simdjson.h>

#include <charconv>
#include <cmath>

namespace sluice {

void AppendJsonString(std::string* out, std::string_view value) {
  static constexpr char kHex[] = "0123456789abcdef";
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

}  // namespace sluice
