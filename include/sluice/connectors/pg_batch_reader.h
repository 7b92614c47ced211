// Batch reads of a PostgreSQL query or table into record batches (`format: postgresql`).
//
// A `query` is sent to the database as written: filters, joins and aggregates run there and
// sluice only fetches the result, streamed with `COPY (query) TO STDOUT (FORMAT binary)` and
// decoded straight into column builders (pg_binary.h); columns of types without a binary
// decoding there are cast to text around the query. A `dbtable` reads a whole table. The result's columns and types
// are learned from the server before any row moves (the statement is prepared and described) and
// mapped by MapPgType (docs/postgres-types.md).
//
// Parallel reads split the result on a numeric column as Spark's JDBC reader does:
// `num_partitions` strides of (upper_bound - lower_bound) / num_partitions starting at
// lower_bound; the first partition also holds everything below its stride and the nulls, the last
// everything above. A `dbtable` read with `num_partitions` and no partition column is split by
// ranges of the table's blocks instead (ctid ranges, TID range scans on PostgreSQL 14 and later;
// one partition on older servers). Each partition reads over its own connection under one
// snapshot exported by the first, so the parts together are one consistent result.
//
// Errors: INVALID_OPTIONS (not exactly one of query and dbtable, bad partition options),
// INVALID_ARGUMENT (a table or column name that is not a simple identifier),
// PG_CONNECTION_FAILED (cannot connect or the connection was lost), PG_QUERY_FAILED (the server
// refused the query, for example a missing table), INVALID_SCHEMA (two result columns share a
// name). A value the mapped type cannot hold fails the read with INVALID_ARGUMENT.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sluice/core/record_batch.h"
#include "sluice/core/status.h"

namespace sluice::connectors {

struct PgBatchReadOptions {
  // A libpq connection string.
  std::string conninfo;
  // Exactly one of the two.
  std::optional<std::string> query;
  std::optional<std::string> dbtable;  // `table` or `schema.table`
  // Parallel reads: all of partition_column, lower_bound and upper_bound, or none (a dbtable is
  // then split by block ranges when num_partitions > 1).
  std::optional<std::string> partition_column;
  std::optional<int64_t> lower_bound;
  std::optional<int64_t> upper_bound;
  int num_partitions = 1;
  // The table's size in blocks that block ranges divide; unset, the size the server reports at
  // Open. A read resumed partition by partition gives the size its first run used, so that each
  // partition is the same range of blocks again.
  std::optional<int64_t> table_blocks;
  // The most rows one batch holds.
  int64_t batch_size = 65536;
};

// Receives the batches of a read. With several partitions it is called from several threads,
// never two at a time; a failed Status stops the read and is returned by Read.
using PgBatchConsumer = std::function<Status(BatchPtr batch)>;

class PgBatchReader {
 public:
  // Checks the options, connects and learns the result's schema; no row is read yet.
  static Result<std::unique_ptr<PgBatchReader>> Open(PgBatchReadOptions options);
  ~PgBatchReader();
  PgBatchReader(const PgBatchReader&) = delete;
  PgBatchReader& operator=(const PgBatchReader&) = delete;

  // The result's columns, as a struct type.
  const TypePtr& schema() const;

  // Reads the whole result once, handing every batch to `consume`. Not thread-safe; call once.
  Status Read(const PgBatchConsumer& consume);

  // How many partitions the read has (1 when it is not split), and the table's size in blocks
  // its block ranges divide (nullopt when it is not split by block ranges).
  size_t partition_count() const;
  std::optional<int64_t> table_blocks() const;

  // Reads the partitions [begin, end) (begin < end <= partition_count()), each over its own
  // connection, in parallel, handing every batch to `consume` as Read does. Every call reads
  // under the snapshot the first call exported (the first connection's transaction holds it until
  // the last partition is read, or the reader is destroyed), so the partitions of several calls
  // together are one consistent result. Not thread-safe.
  Status ReadPartitions(size_t begin, size_t end, const PgBatchConsumer& consume);

  // The SQL statements whose results make up the read (one per partition), as sent inside COPY
  // (inside the text casts' select list when there are any).
  const std::vector<std::string>& partition_queries() const;

  struct State;

 private:
  explicit PgBatchReader(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// Reads everything into a vector of batches (for small results and tests).
Result<std::vector<BatchPtr>> ReadPostgres(PgBatchReadOptions options);

}  // namespace sluice::connectors
