#include "core/jackson_text.h"

#include <charconv>
#include <cstdint>
#include <optional>
#include <string_view>

#include "core/json_exact_numbers.h"
#include "sluice/core/compute.h"
#include "sluice/core/json_text.h"

namespace sluice {
namespace {

// A number's text as Jackson writes it: an integer as written, any other number as Java's
// Double.toString of the double it reads as.
void AppendNumberText(std::string_view number, std::string* out) {
  if (number.find_first_of(".eE") == std::string_view::npos) {
    out->append(number);
    return;
  }
  double value = 0;
  std::from_chars(number.data(), number.data() + number.size(), value);
  AppendDoubleText(value, out);
}

}  // namespace

void AppendJacksonText(simdjson::dom::element value, bool marked_row, std::string* out) {
  char buffer[32];
  switch (value.type()) {
    case simdjson::dom::element_type::ARRAY: {
      out->push_back('[');
      bool first = true;
      for (simdjson::dom::element item : simdjson::dom::array(value)) {
        if (!first) out->push_back(',');
        first = false;
        AppendJacksonText(item, marked_row, out);
      }
      out->push_back(']');
      return;
    }
    case simdjson::dom::element_type::OBJECT: {
      out->push_back('{');
      bool first = true;
      for (auto [key, item] : simdjson::dom::object(value)) {
        if (!first) out->push_back(',');
        first = false;
        AppendJsonString(out, key);
        out->push_back(':');
        AppendJacksonText(item, marked_row, out);
      }
      out->push_back('}');
      return;
    }
    case simdjson::dom::element_type::INT64:
      out->append(buffer, std::to_chars(buffer, buffer + sizeof(buffer), int64_t(value)).ptr);
      return;
    case simdjson::dom::element_type::UINT64:
      out->append(buffer, std::to_chars(buffer, buffer + sizeof(buffer), uint64_t(value)).ptr);
      return;
    case simdjson::dom::element_type::DOUBLE:
      AppendDoubleText(double(value), out);
      return;
    case simdjson::dom::element_type::STRING: {
      const std::string_view text(value);
      std::optional<std::string_view> marked = marked_row ? MarkedNumber(text) : std::nullopt;
      if (marked) {
        AppendNumberText(*marked, out);
      } else {
        AppendJsonString(out, text);
      }
      return;
    }
    case simdjson::dom::element_type::BOOL:
      out->append(bool(value) ? "true" : "false");
      return;
    case simdjson::dom::element_type::NULL_VALUE:
      out->append("null");
      return;
  }
}

}  // namespace sluice
