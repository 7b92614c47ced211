// The `postgresql` streaming sink: every batch of a query upserted (or inserted) into one
// PostgreSQL table, exactly once. See docs/postgres-sink.md for the options and guarantees.
//
// Rows are partitioned by a hash of the upsert key over `tasks_per_connection` writer tasks (one
// connection each, kept for the sink's life), and each task writes its rows in transactions of at
// most `batchsize` rows through a PgUpsertWriter. A batch returns when every task has committed:
// the engine then logs the batch as done. Chunks are cut from the batch's rows in a canonical
// order (PgUpsertWriter::CanonicalOrder), so a batch replayed after a crash puts the same rows
// under the same chunk ids, whatever order the source delivers them in, and skips the chunks
// that had committed.
//
// Under the `real_time` trigger rows are buffered and flushed by `batchsize` and `batchinterval`
// through a PgRealTimeWriter (pg_real_time_writer.h), which also says what holds after a crash.
#pragma once

#include "sluice/engine/registry.h"

namespace sluice::connectors {

// Registers the `postgresql` sink format with `registry`.
Status RegisterPostgresSink(engine::Registry* registry);

}  // namespace sluice::connectors
