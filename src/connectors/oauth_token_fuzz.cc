// Feeds arbitrary bytes to the parser of an OAuth token endpoint's answer (and, through its
// access_token, to the JWT claims reader). Any crash, over-read (ASan) or undefined behaviour
// (UBSan) is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "oauth_token.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  (void)sluice::connectors::ParseTokenResponse(bytes, 1'800'000'000'000, "client");
  return 0;
}
