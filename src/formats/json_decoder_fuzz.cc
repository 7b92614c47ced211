// Fuzzes the JSON decoder: each input line is one document for a schema using every mapped
// type. Any input may decode to nulls, none may crash, and the column must be well-formed with
// one row per line.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "sluice/core/builder.h"
#include "sluice/formats/json.h"

namespace {

constexpr std::string_view kSchema = R"({"type": "object", "required": ["id"], "properties": {
  "id": {"type": "integer"}, "name": {"type": "string"}, "score": {"type": ["number", "null"]},
  "ok": {"type": "boolean"}, "day": {"type": "string", "format": "date"},
  "at": {"type": "string", "format": "date-time"},
  "user": {"type": "object", "required": ["email"], "properties": {"email": {"type": "string"}}},
  "tags": {"type": "array", "items": {"type": "string"}},
  "counts": {"type": "object", "additionalProperties": {"type": "integer"}}}})";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static std::unique_ptr<sluice::formats::Decoder> decoder =
      sluice::formats::MakeJsonDecoder(*sluice::formats::JsonSchemaToType(kSchema)).value();
  std::string_view input(reinterpret_cast<const char*>(data), size);
  sluice::BinaryBuilder rows(sluice::DataType::Binary());
  while (true) {
    size_t newline = input.find('\n');
    rows.Append(input.substr(0, newline));
    if (newline == std::string_view::npos) break;
    input.remove_prefix(newline + 1);
  }
  sluice::ColumnPtr encoded = rows.Finish();
  sluice::DecodeStats stats;
  sluice::Result<sluice::ColumnPtr> decoded = decoder->Decode(*encoded, &stats);
  if (!decoded.ok() || (*decoded)->length != encoded->length || !(*decoded)->Validate().ok()) std::abort();
  if (stats.malformed > encoded->length) std::abort();
  return 0;
}
