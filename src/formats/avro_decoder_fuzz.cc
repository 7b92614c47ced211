// Fuzzes the Avro binary decoder: the input, split at 0xff 0xfe pairs, is a batch of datums of a
// schema using every kind, decoded as written and resolved into an evolved reader schema. Any
// datum may be malformed, none may crash, and every column must be well-formed.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "sluice/core/builder.h"
#include "sluice/formats/avro.h"

namespace {

constexpr std::string_view kWriter = R"({"type": "record", "name": "R", "fields": [
  {"name": "i", "type": "int"}, {"name": "l", "type": "long"}, {"name": "f", "type": "float"},
  {"name": "d", "type": "double"}, {"name": "b", "type": "boolean"}, {"name": "s", "type": "string"},
  {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B", "C"]}},
  {"name": "x", "type": {"type": "fixed", "name": "X", "size": 3}},
  {"name": "dec", "type": {"type": "bytes", "logicalType": "decimal", "precision": 20, "scale": 2}},
  {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-millis"}},
  {"name": "a", "type": {"type": "array", "items": ["null", "string"]}},
  {"name": "m", "type": {"type": "map", "values": {"type": "record", "name": "V", "fields": [{"name": "v", "type": "int"}]}}},
  {"name": "u", "type": ["null", "int", "string", "V"]}]})";

constexpr std::string_view kReader = R"({"type": "record", "name": "R", "fields": [
  {"name": "u", "type": ["null", "long", "string", {"type": "record", "name": "V", "fields": [{"name": "v", "type": "long"}]}]},
  {"name": "i", "type": "double"},
  {"name": "s", "type": "bytes"}, {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["C", "A"]}},
  {"name": "extra", "type": "string", "default": "z"}]})";

sluice::formats::Decoder* Make(bool resolved) {
  sluice::formats::AvroSchemaPtr writer = sluice::formats::ParseAvroSchema(kWriter).value();
  if (!resolved) return sluice::formats::MakeAvroDecoder(writer).value().release();
  return sluice::formats::MakeAvroDecoder(writer, sluice::formats::ParseAvroSchema(kReader).value()).value().release();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static sluice::formats::Decoder* plain = Make(false);
  static sluice::formats::Decoder* resolved = Make(true);
  std::string_view input(reinterpret_cast<const char*>(data), size);
  sluice::BinaryBuilder rows(sluice::DataType::Binary());
  while (true) {
    size_t split = input.find("\xff\xfe");
    rows.Append(input.substr(0, split));
    if (split == std::string_view::npos) break;
    input.remove_prefix(split + 2);
  }
  sluice::ColumnPtr encoded = rows.Finish();
  for (sluice::formats::Decoder* decoder : {plain, resolved}) {
    sluice::Result<sluice::ColumnPtr> decoded = decoder->Decode(*encoded, nullptr);
    if (!decoded.ok() || (*decoded)->length != encoded->length || !(*decoded)->Validate().ok()) std::abort();
  }
  return 0;
}
