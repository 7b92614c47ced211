// Fuzzes ParseAvroSchema with arbitrary bytes: any schema may be refused, none may crash; an
// accepted schema must compile into a decoder (alone and resolved against itself) that decodes
// a few datums into well-formed columns.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "sluice/core/builder.h"
#include "sluice/formats/avro.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  sluice::Result<sluice::formats::AvroSchemaPtr> schema = sluice::formats::ParseAvroSchema(input);
  if (!schema.ok()) return 0;
  sluice::Result<std::unique_ptr<sluice::formats::Decoder>> decoder = sluice::formats::MakeAvroDecoder(*schema);
  if (!decoder.ok()) std::abort();
  sluice::BinaryBuilder rows(sluice::DataType::Binary());
  rows.Append(std::string_view("\x02\x04\x06\x08\x0a\x00", 6));
  rows.Append(input.substr(0, 16));
  rows.Append("");
  sluice::Result<sluice::ColumnPtr> decoded = (*decoder)->Decode(*rows.Finish(), nullptr);
  if (!decoded.ok() || !(*decoded)->Validate().ok()) std::abort();
  return 0;
}
