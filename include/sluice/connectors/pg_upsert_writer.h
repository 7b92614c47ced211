// PgUpsertWriter: writes chunks of rows into one PostgreSQL table, each chunk in one database
// transaction, exactly once per (query id, batch id, chunk).
//
// A chunk's transaction first claims the chunk's row in the sluice progress table
// `_sluice_progress` of the target's schema (BEGIN, then one prepared INSERT ... ON CONFLICT DO
// NOTHING RETURNING with the claim as bound parameters). A chunk already
// claimed by an earlier, committed attempt writes nothing: that is what makes a replay after a
// crash, or a retry after a COMMIT whose outcome was lost, safe even for tables without a key.
// Then the rows, in one of two ways, and COMMIT:
// - straight into the table by binary COPY under a savepoint, as psql's \copy does, when every
//   column of the table is of the type the rows are encoded for: the fastest way for new keys and
//   key-less tables;
// - through a session-scoped staging table and a prepared `INSERT ... SELECT`, which with an upsert key is
//   `ON CONFLICT (key) DO UPDATE SET ...` skipping rows that would not change: used when the
//   direct COPY met a key already in the table (unique violation: rolled back to the savepoint),
//   for the next 15 chunks after that, and always when the column types differ.
// Two round trips for the claim, two for the rows (one query string and its COPY). Rows are
// sorted by the key and collapsed to the last row per key first, so one statement never touches a
// row twice and concurrent writers lock keys in the same order. docs/postgres-sink.md says why
// this path and not another (bound arrays measured slower).
//
// Transient failures (connection loss, admin shutdown, deadlock, serialization failure, lock
// not available, object in use, too many connections / resource limits) are retried with
// exponential back-off and jitter, reconnecting when needed; other failures return at once with
// the SQLSTATE. One writer owns one connection and is used by one thread at a time.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "sluice/connectors/pg_connection.h"
#include "sluice/connectors/pg_copy.h"
#include "sluice/core/record_batch.h"

namespace sluice::connectors {

struct PgUpsertWriterOptions {
  std::string conninfo;  // libpq connection string (may hold a password: never logged)
  TableName table;
  // Empty: inferred from the table's primary key (plain inserts when the table has none).
  std::vector<std::string> upsert_key;
  int max_retries = 8;
  std::chrono::milliseconds initial_backoff{100};
  std::chrono::milliseconds max_backoff{10000};
  // When set (SinkContext::stop_requested), a wait before a retry ends as soon as it is true and
  // the call fails with QUERY_STOPPED.
  const std::atomic<bool>* stop_requested = nullptr;
};

class PgUpsertWriter {
 public:
  // Connects, creates the table from `schema` when it does not exist (the upsert key becomes its
  // primary key), checks the key against the table (PG_UPSERT_KEY_MISMATCH: not equal to the
  // primary key, not a column of the stream, or of a type that cannot be a key) and the stream's
  // columns against the table's (PG_SCHEMA_MISMATCH), and prepares the session.
  static Result<std::unique_ptr<PgUpsertWriter>> Open(PgUpsertWriterOptions options, TypePtr schema);

  // Writes rows `rows` of `batch` as chunk (batch_id, chunk) of `query_id`, or nothing when that
  // chunk is already committed. Returns the number of rows written (0 when skipped).
  Result<int64_t> WriteChunk(const std::string& query_id, int64_t batch_id, int32_t chunk, const RecordBatch& batch,
                             std::span<const int64_t> rows);

  // The rows of `batch` in an order that depends only on the batch's rows, not on the order in
  // which they came (a source that interleaves partitions as they arrive hands over the same rows
  // in another order on a replay): with a key, sorted by it and collapsed to the last row per key
  // (rows of one key keep their order); without one, sorted by a 64-bit hash of the whole row.
  // Chunks cut from this order hold the same rows on every replay. (Two rows that differ only in
  // the sign of a zero or in a NaN's payload hash alike; a replay may swap them across chunks.)
  // Reads only what Open() fixed: may be called from any thread while another one writes.
  Result<std::vector<int64_t>> CanonicalOrder(const BatchPtr& batch) const;

  // The largest chunk id committed for (query_id, batch_id), 0 when none. Real-time writes use as
  // chunk id the number of the epoch's rows written through the end of the chunk, so this is how
  // many of the epoch's rows are already in the table. Retried like WriteChunk.
  Result<int64_t> LastCommittedChunk(const std::string& query_id, int64_t batch_id);

  // Deletes the progress rows of `query_id` for batches before `batch_id`, which the engine has
  // committed and never replays, so that the progress table stays as small as one batch's chunks.
  // Retried like WriteChunk.
  Status ForgetBatchesBefore(const std::string& query_id, int64_t batch_id);

  // The key the writer upserts on (empty: inserts only).
  const std::vector<std::string>& upsert_key() const { return key_names_; }
  // How many transient failures were retried so far.
  int64_t retries() const { return retries_; }

 private:
  PgUpsertWriter(PgUpsertWriterOptions options, TypePtr schema);
  Status Connect();
  Status PrepareTable();
  Status PrepareSession();
  // Runs `attempt` until it succeeds, fails with a non-transient error, or retries run out;
  // reconnects (and prepares the session again) before an attempt when the connection is gone.
  Status RunWithRetries(const std::function<Status()>& attempt);
  Result<int64_t> TryWriteChunk(const std::string& query_id, int64_t batch_id, int32_t chunk, const RecordBatch& batch,
                                std::span<const int64_t> rows);
  // Row order for a chunk: sorted by key, last row per key kept (all rows when there is no key).
  Result<std::vector<int64_t>> OrderRows(const RecordBatch& batch, std::span<const int64_t> rows) const;

  PgUpsertWriterOptions options_;
  TypePtr schema_;
  std::unique_ptr<PgConnection> conn_;
  std::vector<std::string> key_names_;
  std::vector<int> key_columns_;  // indices into the schema
  std::vector<int> all_columns_;
  std::string progress_table_;
  std::string table_oid_;
  // Whether rows may be COPYed straight into the table (its columns are of the rows' encoded
  // types), the statement string that does it, and how many chunks go staged before trying again.
  bool direct_copy_possible_ = false;
  std::string direct_write_;
  int staged_chunks_to_go_ = 0;
  // COPY data, reused from chunk to chunk.
  std::vector<bool> arrays_as_jsonb_;  // per column, from the table (PgArraysHeldAsJsonb)
  PgCopyEncoder encoder_;
  std::string copy_buffer_;
  std::mt19937_64 jitter_{std::random_device{}()};
  int64_t retries_ = 0;
};

// Whether a SQLSTATE names a failure worth retrying (see the class comment).
bool IsTransientSqlState(std::string_view sqlstate);

}  // namespace sluice::connectors
