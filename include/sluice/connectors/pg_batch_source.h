// The `postgresql` batch source and the batch write modes of the `postgresql` sink: a query's
// result (or a whole table) read once into a streaming query, and a query's output written into a
// table in one of the modes append, overwrite, errorifexists, ignore (docs/batch.md).
//
// The source is an ordinary engine::Source whose data is fixed: it has two positions,
// `{"read":false}` (nothing read) and `{"read":true}` (the whole result read), so a query with
// trigger `once` or `available_now` reads the result in one batch and stops, and a later run on
// the same checkpoint reads nothing more. A batch replayed after a crash runs the query again: it
// sees the database as it is then. Reads go through PgBatchReader (pass-through query, partitioned
// reads under one exported snapshot).
//
// With `partitions_per_batch` a split read (`num_partitions`) is read that many partitions per
// batch instead: its positions are `{"partitions_read":k}`, so each batch is committed by the sink
// on its own and a query restarted from its checkpoint resumes at the first partition not
// committed. The number of partitions and the table's size in blocks are fixed by the first run
// (kept in the source's state directory), so a resumed run reads the same ranges; options that
// give another number of partitions are INVALID_OPTIONS. The batches of one run share one
// snapshot; a resumed run reads the partitions left under its own.
//
// The batch sink writes through PgBatchWriter: every batch is one transaction. The mode applies to
// the query's first batch; later batches of the same run append, so a query split into several
// batches (available_now) writes its whole output once. Modes overwrite and ignore are idempotent
// under replay; append and errorifexists are not (see docs/batch.md).
#pragma once

#include <memory>
#include <string>

#include "sluice/connectors/pg_batch_writer.h"
#include "sluice/engine/registry.h"

namespace sluice::connectors {

// Registers the `postgresql` batch source format with `registry`. INVALID_ARGUMENT when taken.
Status RegisterPostgresBatchSource(engine::Registry* registry);

// A sink writing every batch into `dbtable` through PgBatchWriter, the first in `mode`, the rest
// appended. Used by the `postgresql` sink when its `mode` option is given.
std::unique_ptr<engine::Sink> MakePostgresBatchSink(std::string conninfo, std::string dbtable, PgWriteMode mode);

}  // namespace sluice::connectors
