// The `delta` source and sink in a registry.
#include "sluice/connectors/delta/formats.h"

namespace sluice::connectors {

Status RegisterDeltaFormats(engine::Registry* registry) {
  SLUICE_RETURN_IF_ERROR(
      registry->RegisterSource({"delta", kDeltaSourceOptions, errors::kInvalidOptions, MakeDeltaSource}));
  return registry->RegisterSink({"delta", kDeltaSinkOptions, errors::kInvalidOptions,
                                 [](const ValidatedOptions& options, const engine::Registry&) {
                                   return MakeDeltaSink(options);
                                 }});
}

}  // namespace sluice::connectors
