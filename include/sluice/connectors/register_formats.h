// The formats the connectors add to a registry, beside the engine's built-ins.
#pragma once

#include "sluice/core/status.h"
#include "sluice/engine/registry.h"

namespace sluice::connectors {

// Registers every connector format with `registry`: the `kafka` and `postgresql` (batch) sources
// and the `postgresql` sink. INVALID_ARGUMENT when one of the names is taken already.
Status RegisterConnectorFormats(engine::Registry* registry);

// A registry of its own holding the engine's built-in formats and every connector format, made on
// first use, for code that needs no formats of its own besides plugins (`sluice copy`, tests).
// Registries are thread-safe.
engine::Registry& AllFormatsRegistry();

}  // namespace sluice::connectors
