// Fuzzes ParseTypeJson with arbitrary bytes. Any input may be rejected, none may crash; and a
// type that parses must survive ToJson -> ParseTypeJson unchanged, with ToJson a fixed point.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "sluice/core/types.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  sluice::Result<sluice::TypePtr> type = sluice::ParseTypeJson(input);
  if (!type.ok()) return 0;
  std::string json = (*type)->ToJson();
  sluice::Result<sluice::TypePtr> again = sluice::ParseTypeJson(json);
  if (!again.ok() || !(*again)->Equals(**type) || (*again)->ToJson() != json) std::abort();
  return 0;
}
