// The `delta` sink and source: streaming queries into and out of Delta tables.
//
// Sink: each batch is one commit (operation STREAMING UPDATE) carrying
// txn{appId: query id, version: batch id}; a batch whose version the table already records for
// that appId is skipped, which makes a replayed batch a no-op. The table is created by the first
// batch. Output modes append and complete (each batch replaces the table's rows).
//   path         string, required: the table's directory
//   mergeSchema  bool, default false: add new columns of the batches to the table's schema
//   mode         append | overwrite | merge. append and overwrite, for batch writes (`sluice
//                copy`, flows with trigger once): each commit is then a WRITE; `overwrite`
//                replaces every row of the table in the run's first commit (one atomic Delta
//                overwrite: readers see the old rows or the new ones) and the run's later batches
//                append. Replays are skipped by the same txn as streaming appends. merge: each
//                batch is one MERGE commit applying the statement of the option `merge`.
//   partitionBy  the partition columns of a table the sink creates (into an existing table: its
//                own or none, else DELTA_METADATA_MISMATCH)
//   overwriteSchema  bool, default false: an overwrite (mode overwrite, or each batch of the
//                complete output mode) gives the table the data's schema and partitionBy's columns
//                (none: unpartitioned), keeping its id and properties; refused with mode merge
//   delta.*      the table properties of a table the sink creates
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
#include "sluice/engine/registry.h"
#include "sluice/engine/sink.h"
#include "sluice/engine/source.h"

namespace sluice::connectors {

// Registers the `delta` source and sink. INVALID_ARGUMENT when a name is taken already.
Status RegisterDeltaFormats(engine::Registry* registry);

extern const std::span<const OptionSpec> kDeltaSinkOptions;
extern const std::span<const OptionSpec> kDeltaSourceOptions;

Result<std::unique_ptr<engine::Sink>> MakeDeltaSink(const ValidatedOptions& options);
Result<std::unique_ptr<engine::Source>> MakeDeltaSource(const ValidatedOptions& options);

// Delta batch reads (`sluice copy`, a SQL flow's bare FROM; option `path`): the table's latest
// snapshot at Open(), read once like the file sources (offsets {"read":false}/{"read":true}), so
// a table that was overwritten reads as it is now, where the streaming delta source reads appends
// only.
extern const std::span<const OptionSpec> kDeltaBatchSourceOptions;
Result<std::unique_ptr<engine::Source>> MakeDeltaBatchSource(const ValidatedOptions& options);

}  // namespace sluice::connectors
