// A stream's backfill: a Delta table of history (`ingestion_config.backfill_source`) merged once
// into the ingestion table, as rows with record_source 'backfill', by the insert-only merge
// (delta/merge.h) on the deduplication columns, so that a record both in the history and
// already ingested from Kafka is kept once.
//
// The backfill table needs `stream_record_timestamp` (timestamp); `key`, `value` and the
// `kafka_topic`/`kafka_partition`/`kafka_offset` columns are taken when it has them (others are
// ignored; missing ones are null). The merge waits until the history reaches far enough into
// what the stream ingested (its newest timestamp at least `overlap` past the ingestion table's
// oldest `stream` timestamp), or until `max_wait` has passed since that oldest timestamp. The
// merge commit carries the txn `<stream id>-backfill`, so a backfill runs once, even across a
// crash in the middle of it.
//
// The backfill table is read batch by batch as the merge writes it; only the keys (those of the
// ingestion table and those merged) are held in memory whole. Used from one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sluice/core/file_system.h"
#include "sluice/core/status.h"

namespace sluice::pipeline {

struct BackfillSpec {
  std::string stream_id;
  std::string table_path;     // the ingestion table
  std::string backfill_path;  // the backfill table
  // Columns of the ingestion table or dot paths into its key or value (merge.h).
  std::vector<std::string> deduplication_columns;
  std::chrono::microseconds overlap{std::chrono::hours(1)};
  std::chrono::microseconds max_wait{std::chrono::hours(48)};
};

// The default deduplication columns.
std::vector<std::string> DefaultDeduplicationColumns();

class Backfill {
 public:
  // Reads where both tables stand: DELTA_TABLE_NOT_FOUND when the backfill table does not exist,
  // UNRESOLVED_COLUMN when it lacks stream_record_timestamp, the Delta errors of reading it.
  static Result<std::unique_ptr<Backfill>> Open(std::shared_ptr<FileSystem> fs, BackfillSpec spec);

  bool done() const { return done_; }

  // After the stream wrote rows whose oldest timestamp is `written_min_us` (microseconds since
  // the epoch; nullopt when nothing was written): merges the backfill when it is due at
  // `now_us`. Returns the rows the merge inserted, or nullopt when it is not due (or done).
  Result<std::optional<int64_t>> RunIfDue(std::optional<int64_t> written_min_us, int64_t now_us);

 private:
  Backfill(std::shared_ptr<FileSystem> fs, BackfillSpec spec) : fs_(std::move(fs)), spec_(std::move(spec)) {}
  Result<int64_t> Merge();

  std::shared_ptr<FileSystem> fs_;
  BackfillSpec spec_;
  bool done_ = false;
  std::optional<int64_t> backfill_max_us_;
  std::optional<int64_t> stream_min_us_;
};

}  // namespace sluice::pipeline
