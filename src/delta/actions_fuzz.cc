// libFuzzer target for the Delta log parsers: commit files and _last_checkpoint. Any input must
// either parse or fail with a Status, and whatever parses must serialize into text that parses.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "sluice/delta/actions.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<sluice::delta::Action> actions;
  if (sluice::delta::ParseActions(text, "fuzz.json", &actions).ok()) {
    std::vector<sluice::delta::Action> reparsed;
    if (!sluice::delta::ParseActions(sluice::delta::SerializeActions(actions), "fuzz.json", &reparsed).ok()) {
      std::abort();
    }
  }
  (void)sluice::delta::ParseLastCheckpoint(text);
  return 0;
}
