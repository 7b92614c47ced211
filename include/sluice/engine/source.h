// Source: where a streaming query reads from. A source is replayable by offset: reading the same
// [start, end) range twice yields the same rows, which is what makes a re-run batch exactly once.
//
// Offsets are JSON documents written as compact, single-line text, owned and interpreted only by
// the source that made them; the engine stores them in the checkpoint's offset log and hands them
// back verbatim. A source serializes equal positions to equal text, so the engine can tell "no
// new data" (LatestOffset returns `start`) by comparing strings.
//
// Lifecycle: the engine calls Open() once, then, per batch, LatestOffset() and Read() and, after
// the sink made the batch durable, Commit(). All calls come from the query's thread; a source
// need not be thread-safe. Errors returned by any call stop the query with that error.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sluice/core/file_system.h"
#include "sluice/core/record_batch.h"
#include "sluice/core/status.h"

namespace sluice {
class Clock;
}

namespace sluice::engine {

// How far one batch may read.
struct ReadLimit {
  // false: the source's own per-batch limit applies (maxFilesPerTrigger, rowsPerBatch, ...);
  // true: everything available, ignoring that limit (the `once` trigger).
  bool all_available = false;
  // Never plan beyond this offset (the `available_now` trigger fixes it at start).
  std::optional<std::string> not_beyond;
};

// What a source may use while it runs.
struct SourceContext {
  std::string query_id;  // stable across restarts of the same checkpoint
  std::shared_ptr<FileSystem> file_system;
  // A directory reserved for this source's private state (`<checkpoint>/sources/<n>`); the
  // source keeps there what it needs to replay deterministically (a start time, a schema).
  std::string state_directory;
  std::shared_ptr<Clock> clock;
};

// Receives the pieces of a batch as a source reads them (Source::ReadPieces). An error stops
// the read: the source returns it without reading further.
using PieceConsumer = std::function<Status(BatchPtr piece)>;

// The pieces `read_pieces` hands to its consumer, in order: a piece-wise read as a whole batch
// (Source::Read of a source that reads in pieces).
Result<std::vector<BatchPtr>> CollectPieces(const std::function<Status(const PieceConsumer&)>& read_pieces);

class Source {
 public:
  virtual ~Source() = default;

  // A short text for progress reports and logs ("RateSource[rowsPerSecond=10]").
  virtual std::string description() const = 0;
  // The schema of every batch Read() returns.
  virtual TypePtr schema() const = 0;

  virtual Status Open(const SourceContext& context) = 0;
  // The position before the first row this query should read (the start of batch 0).
  virtual Result<std::string> InitialOffset() = 0;
  // The end of the next batch that starts at `start`: as far as data is available, the limit
  // allows and `limit.not_beyond` permits. Returns `start` itself when nothing new is available.
  virtual Result<std::string> LatestOffset(const std::string& start, const ReadLimit& limit) = 0;
  // The latest offset the last LatestOffset call saw available, beyond what its limits let the
  // batch plan (Spark's `latestOffset` in a source's progress, from which lag is read); nullopt
  // (the default) when the source does not know it, and the batch's end is reported instead.
  virtual std::optional<std::string> ReportLatestOffset() const { return std::nullopt; }
  // The rows in (start, end]: the same rows on every read of the range, each ordered stream the
  // source has (a Kafka partition) in its order, though several such streams may interleave
  // differently from one read to the next. Both offsets came from this source (possibly in an
  // earlier run of the query). The batches share this schema; an empty vector means no rows.
  virtual Result<std::vector<BatchPtr>> Read(const std::string& start, const std::string& end) = 0;
  // Read() that hands each piece to `consume` as soon as it is read, so that the engine can write
  // one piece while the source reads the next (the engine calls this one). The pieces hold the
  // rows Read() returns, in an order Read() could return them; calls to `consume` never overlap
  // but may come from threads of the source's own. By default, hands on the pieces of Read()
  // once it returns; a source that reads a large range in pieces overrides it, and then holds no
  // more than the pieces it fills.
  virtual Status ReadPieces(const std::string& start, const std::string& end, const PieceConsumer& consume);
  // Everything up to `end` is durable in the sink and will never be asked for again; the source
  // may release it (a replication slot confirms its flush position here).
  virtual Status Commit(const std::string& end) = 0;
};

}  // namespace sluice::engine
