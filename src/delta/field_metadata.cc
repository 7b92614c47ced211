#include "delta/field_metadata.h"

#include <simdjson.h>

#include "sluice/core/json_text.h"

namespace sluice::delta {

std::string EditedMetadata(const std::string& metadata, const std::function<bool(std::string_view)>& drop,
                           const std::string& extra) {
  simdjson::dom::parser parser;
  simdjson::dom::object object;
  if (parser.parse(simdjson::padded_string(metadata)).get(object) != simdjson::SUCCESS) return metadata;
  std::string out = "{";
  for (auto [key, value] : object) {
    if (drop(key)) continue;
    if (out.size() > 1) out.push_back(',');
    AppendJsonString(&out, key);
    out.push_back(':');
    out += simdjson::minify(value);
  }
  if (!extra.empty()) {
    if (out.size() > 1) out.push_back(',');
    out += extra;
  }
  out.push_back('}');
  return out;
}

}  // namespace sluice::delta
