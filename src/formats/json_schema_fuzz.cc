// Fuzzes JsonSchemaToType with arbitrary bytes: any schema may be refused, none may crash, and
// every accepted one must yield a decoder that decodes a document into a well-formed column.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "sluice/core/builder.h"
#include "sluice/formats/json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  sluice::Result<sluice::TypePtr> type = sluice::formats::JsonSchemaToType(input);
  if (!type.ok()) return 0;
  sluice::Result<std::unique_ptr<sluice::formats::Decoder>> decoder = sluice::formats::MakeJsonDecoder(*type);
  if (!decoder.ok()) std::abort();  // whatever the mapping produces, the decoder must take
  sluice::BinaryBuilder rows(sluice::DataType::Binary());
  rows.Append(input);
  rows.Append(R"({"a": 1, "b": [1, "x"], "c": {"d": null}})");
  sluice::Result<sluice::ColumnPtr> decoded = (*decoder)->Decode(*rows.Finish(), nullptr);
  if (!decoded.ok() || !(*decoded)->Validate().ok()) std::abort();
  return 0;
}
