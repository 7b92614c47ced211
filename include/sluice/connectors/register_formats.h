// Every format sluice knows, in a registry: the engine's own and the connectors'.
#pragma once

#include "sluice/core/status.h"
#include "sluice/engine/registry.h"

namespace sluice::connectors {

// Registers every format with `registry`: the engine's own (engine::RegisterBuiltinFormats), the
// `delta` source and sink (delta/formats.h), the `parquet`, `csv` and `json` sources and sinks
// (files/formats.h), the `kafka` and `postgresql` (batch) sources and the `postgresql` sink.
// INVALID_ARGUMENT when one of the names is taken already.
Status RegisterAllFormats(engine::Registry* registry);

// A registry of its own holding every format (RegisterAllFormats), made on first use, for code that needs no formats of its own besides plugins (`sluice copy`, tests).
// Registries are thread-safe.
engine::Registry& AllFormatsRegistry();

}  // namespace sluice::connectors
