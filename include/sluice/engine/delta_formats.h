// The `delta` sink and source: streaming queries into and out of Delta tables.
//
// Sink: each batch is one commit (operation STREAMING UPDATE) carrying
// txn{appId: query id, version: batch id}; a batch whose version the table already records for
// that appId is skipped, which makes a replayed batch a no-op. The table is created by the first
// batch. Output mode append.
//   path         string, required: the table's directory
//   mergeSchema  bool, default false: add new columns of the batches to the table's schema
//   mode         append | overwrite, for batch writes (`sluice copy`, flows with trigger once):
//                each commit is then a WRITE; `overwrite` replaces every row of the table in
//                the run's first commit (one atomic Delta overwrite: readers see the old rows or
//                the new ones) and the run's later batches append. Replays are skipped by the
//                same txn as streaming appends.
//
// Source: the data files that commits add, in log order (see delta/source.h). Offsets:
// {"version":V,"index":I}. The initial offset is resolved on the first run and kept in the
// source's state directory, so a restart never skips or re-reads commits.
//   path               string, required
//   startingVersion    string, default "0": a version number, or "latest" (only commits made
//                      after the query first started)
//   maxFilesPerTrigger long, default 1000: files per batch (ignored by the `once` trigger)
#pragma once

#include <memory>
#include <span>

#include "sluice/core/options.h"
#include "sluice/engine/sink.h"
#include "sluice/engine/source.h"

namespace sluice::engine {

extern const std::span<const OptionSpec> kDeltaSinkOptions;
extern const std::span<const OptionSpec> kDeltaSourceOptions;

Result<std::unique_ptr<Sink>> MakeDeltaSink(const ValidatedOptions& options);
Result<std::unique_ptr<Source>> MakeDeltaSource(const ValidatedOptions& options);

}  // namespace sluice::engine
