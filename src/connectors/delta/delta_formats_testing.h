// The registry of the delta formats' tests. For tests only.
#pragma once

#include "connectors/files/file_formats_testing.h"
#include "sluice/connectors/delta/formats.h"

namespace sluice::connectors::delta_testing {

// The engine's own formats, the file formats and the delta formats, registered on first use.
inline engine::Registry& DeltaFormatsRegistry() {
  static engine::Registry* registry = file_testing::RegistryOf({RegisterFileFormats, RegisterDeltaFormats});
  return *registry;
}

}  // namespace sluice::connectors::delta_testing
