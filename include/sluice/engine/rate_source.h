// The rate source: generates rows at a fixed rate, for demos, tests and benchmarks, like Spark's.
//
// Schema: `timestamp` (timestamp, not null), `value` (long, not null). Row i (counting from 0) has
// value i and timestamp start + i / rowsPerSecond seconds, where start is the time the query first
// ran (kept in the source's state directory, so values and timestamps are the same after a
// restart: the source is replayable). Rows become available when the clock passes their timestamp.
//
// Offsets: {"rows":N}, the number of rows before the position.
//
// Options:
//   rowsPerSecond     long, default 1, at least 1
//   maxRowsPerBatch   long, optional: the per-batch limit (ignored by the `once` trigger)
//   startTimestamp    long, optional: the start in milliseconds since the epoch, instead of the
//                     first run's clock; only read on the first run
#pragma once

#include <memory>
#include <span>

#include "sluice/core/options.h"
#include "sluice/engine/source.h"

namespace sluice::engine {

extern const std::span<const OptionSpec> kRateSourceOptions;

// INVALID_OPTIONS when rowsPerSecond or maxRowsPerBatch is below 1.
Result<std::unique_ptr<Source>> MakeRateSource(const ValidatedOptions& options);

}  // namespace sluice::engine
