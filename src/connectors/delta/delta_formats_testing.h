// The registry of the delta formats' tests. For tests only.
#pragma once

#include "sluice/connectors/delta/formats.h"
#include "sluice/connectors/files/formats.h"

namespace sluice::connectors::delta_testing {

// The engine's own formats, the file formats and the delta formats, registered on first use.
inline engine::Registry& DeltaFormatsRegistry() {
  static engine::Registry* registry = [] {
    auto* made = new engine::Registry();
    // The names are distinct, so registration cannot fail.
    (void)engine::RegisterBuiltinFormats(made);
    (void)RegisterFileFormats(made);
    (void)RegisterDeltaFormats(made);
    return made;
  }();
  return *registry;
}

}  // namespace sluice::connectors::delta_testing
