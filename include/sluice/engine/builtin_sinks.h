// The console and foreachBatch sinks.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <ostream>
#include <string>

#include "sluice/engine/registry.h"
#include "sluice/engine/sink.h"

namespace sluice::engine {

// Prints each batch as a table (PrettyPrint) under a "Batch: N" banner, at most `max_rows` rows
// per batch, to `out` (which must outlive the sink). Not idempotent: a replayed batch prints again,
// which is what a person watching the console wants to see. All output modes; real_time too.
std::unique_ptr<Sink> MakeConsoleSink(std::ostream* out, int64_t max_rows);

// Calls `function` with each batch and its context (see ForeachBatchFunction in registry.h):
// the batch id, the query's id and name, `arguments` and `registry` (null, or a registry that
// outlives the sink). The sink is as idempotent as the
// function makes it: it passes the same id on replay. All output modes; not real_time, whose rows
// come in pieces without batch boundaries.
std::unique_ptr<Sink> MakeForeachBatchSink(std::string name, ForeachBatchFunction function,
                                           std::map<std::string, std::string> arguments = {},
                                           const Registry* registry = nullptr);

}  // namespace sluice::engine
