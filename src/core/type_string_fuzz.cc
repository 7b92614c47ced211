// Fuzzes ParseTypeString with arbitrary bytes. Any input may be rejected, none may crash; and a
// type that parses must read back from its own ToString() as the same simple string (ToString
// drops nullability and comments, so those are not compared).
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "sluice/core/types.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  sluice::Result<sluice::TypePtr> type = sluice::ParseTypeString(input);
  if (!type.ok()) return 0;
  std::string text = (*type)->ToString();
  sluice::Result<sluice::TypePtr> again = sluice::ParseTypeString(text);
  if (!again.ok() || (*again)->ToString() != text) std::abort();
  return 0;
}
