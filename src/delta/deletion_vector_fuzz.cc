// libFuzzer target for deletion vectors read from a table: the bitmapData parser and Z85. Any input
// must decode or fail with a Status; whatever decodes must serialize into bytes that decode to the
// same rows.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "sluice/delta/deletion_vector.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto rows = sluice::delta::DeserializeRowIndexes(bytes);
  if (rows.ok()) {
    auto again = sluice::delta::DeserializeRowIndexes(sluice::delta::SerializeRowIndexes(*rows));
    if (!again.ok() || *again != *rows) std::abort();
  }
  (void)sluice::delta::Z85Decode(bytes);
  return 0;
}
