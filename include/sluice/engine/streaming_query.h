// StreamingQuery: the micro-batch loop that moves a source into a sink exactly once.
//
// Each batch N: plan the range (Source::LatestOffset), write offsets/N, read the range, hand it to
// the operators and the sink (Sink::BeginBatch(N, ...), its pieces, Commit), write commits/N, commit the source. A restart finds an
// offsets/N without commits/N and runs batch N again with the same range and id before planning
// new ones. See checkpoint.h for the files and docs/engine.md for the whole story.
//
//   auto query = StreamingQuery::Start(std::move(source), std::move(sink), config);
//   if (!query.ok()) return query.status();       // bad mode, trigger, locked checkpoint, ...
//   std::thread stopper([&] { WaitForSignal(); (*query)->Stop(); });
//   Status result = (*query)->Run();              // until the trigger is done, Stop(), or an error
//
// Thread safety: Run() is called once, from one thread. Stop(), the accessors and last_progress()
// may be called from any thread at any time, including a signal-handling thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/clock.h"
#include "sluice/core/file_system.h"
#include "sluice/engine/checkpoint.h"
#include "sluice/engine/operator.h"
#include "sluice/engine/progress.h"
#include "sluice/engine/sink.h"
#include "sluice/engine/source.h"
#include "sluice/storage/file_systems.h"

namespace sluice::engine {

class QueryState;

struct Trigger {
  enum class Kind {
    // A batch every `interval`, aligned to multiples of it; a batch that overruns is followed by
    // the next one at once, but missed intervals are not made up (no catch-up bursts). Interval 0:
    // the next batch starts as soon as the last one ends.
    kProcessingTime,
    // Everything available now, in one batch, then stop.
    kOnce,
    // Everything available at start, in as many batches as the source's limits need, then stop.
    kAvailableNow,
    // Rows go to the sink as soon as the source has them; offsets and commits are logged every
    // `checkpoint_interval` (an epoch), so a restart resumes from the last logged point. The end
    // of each read is logged before its rows reach the sink: an epoch cut short is delivered again
    // in the same reads, which a sink can count to skip what it already holds (docs/guarantees.md).
    kRealTime,
  };
  Kind kind = Kind::kProcessingTime;
  std::chrono::microseconds interval{0};
  std::chrono::microseconds checkpoint_interval = std::chrono::seconds(5);

  static Trigger ProcessingTime(std::chrono::microseconds interval) { return {Kind::kProcessingTime, interval}; }
  static Trigger Once() { return {Kind::kOnce}; }
  static Trigger AvailableNow() { return {Kind::kAvailableNow}; }
  static Trigger RealTime(std::chrono::microseconds checkpoint_interval = std::chrono::seconds(5)) {
    return {Kind::kRealTime, std::chrono::microseconds(0), checkpoint_interval};
  }
};

// "processing_time", "once", "available_now", "real_time".
std::string_view TriggerName(Trigger::Kind kind);
// The trigger named `kind` (case-insensitive) with an interval (processing_time: the batch
// interval, default 0; real_time: the checkpoint interval, default 5 s; others: must be empty),
// written as a duration ("10 seconds"). INVALID_OPTIONS otherwise.
Result<Trigger> ParseTrigger(std::string_view kind, std::string_view interval = "");

// Where stateful operators keep their state (docs/sql.md, State and its guarantees). kMemory: every
// key in memory, each version written as Parquet files (StateStore). kRocksDb: in RocksDB on local
// disk, only a batch's keys in memory, for state larger than memory (RocksDbStateStore). A
// checkpoint keeps the kind its state was first written with.
enum class StateStoreKind { kMemory, kRocksDb };
// "memory", "rocksdb".
std::string_view StateStoreName(StateStoreKind kind);
// The kind named `name` (case-insensitive); INVALID_OPTIONS otherwise.
Result<StateStoreKind> ParseStateStore(std::string_view name);

struct QueryConfig {
  std::string name;
  std::string checkpoint_location;
  // The query id of the checkpoint when this start creates it; empty: a random one. A pipeline
  // records it as its flow's before starting, so that a run killed right after creating the
  // checkpoint finds it recorded as its own.
  std::string new_query_id;
  Trigger trigger;
  OutputMode output_mode = OutputMode::kAppend;
  std::shared_ptr<FileSystem> file_system = storage::DefaultFileSystem();
  std::shared_ptr<Clock> clock = SystemClock();
  // What the query does to each batch between the source and the sink, in order (operator.h);
  // none: the source's rows reach the sink as they are. A query with an aggregating operator runs
  // in the update and complete output modes, not append; one with state keeps it under
  // `<checkpoint>/state/` and cannot run under the real_time trigger.
  std::vector<std::unique_ptr<Operator>> operators;
  StateStoreKind state_store = StateStoreKind::kMemory;
  // Called on the query's thread after every batch (and every real_time epoch).
  std::function<void(const QueryProgress&)> on_progress;
};

// Whether `sink` can run a query of `output_mode` under `trigger` with `operators`:
// UNSUPPORTED_OUTPUT_MODE, UNSUPPORTED_TRIGGER or INVALID_ARGUMENT otherwise. StreamingQuery::Start
// checks it first; `sluice validate` checks it without starting anything.
Status CheckQueryShape(const Sink& sink, const Trigger& trigger, OutputMode output_mode,
                       const OperatorChain& operators);

class StreamingQuery {
 public:
  // Checks the configuration, opens the checkpoint (taking its lock), then opens the source and
  // the sink. Errors: UNSUPPORTED_OUTPUT_MODE (the sink does not support the mode, or `complete`,
  // which needs an aggregation this query does not have), UNSUPPORTED_TRIGGER (real_time into a
  // sink that cannot take it), CONCURRENT_QUERY (the checkpoint is in use), and whatever the
  // checkpoint, source or sink return.
  static Result<std::unique_ptr<StreamingQuery>> Start(std::unique_ptr<Source> source, std::unique_ptr<Sink> sink,
                                                       QueryConfig config);
  ~StreamingQuery();

  // Runs batches until the trigger is done (once, available_now), Stop() is called (the batch in
  // progress completes first), or a batch fails; returns the failure, OK otherwise. Called once.
  Status Run();
  // Asks Run() to return after the batch in progress. Does not block; idempotent.
  void Stop();

  const std::string& id() const { return checkpoint_->query_id(); }
  const std::string& run_id() const { return run_id_; }
  const std::string& name() const { return config_.name; }
  // The id the next new batch will get (after Run(): one past the last committed batch).
  int64_t next_batch_id() const { return next_batch_id_.load(); }
  std::optional<QueryProgress> last_progress() const;

 private:
  class OperatorWriter;

  StreamingQuery(std::unique_ptr<Source> source, OperatorChain operators, std::unique_ptr<Sink> sink,
                 QueryConfig config, std::unique_ptr<Checkpoint> checkpoint);

  enum class BatchOutcome { kRan, kNoData };

  // Recover(), then the trigger's loop.
  Status RunTrigger();
  // Finds where the log left off; re-runs an uncommitted batch.
  Status Recover();
  // Plans the next batch from start_offset_ within `limit` and runs it, or reports no new data.
  Result<BatchOutcome> RunBatch(const ReadLimit& limit);
  // Reads [start, end), hands it to the sink as batch `batch_id`, logs the commit, reports.
  // (start and end are copies: the caller may pass start_offset_, which this moves forward.)
  // `timestamp_ms` is the batch's time as offsets/N logs it.
  Status ExecuteBatch(int64_t batch_id, std::string start, std::string end, int64_t trigger_micros,
                      int64_t timestamp_ms, QueryProgress::Durations durations);
  // The operators bound to the source's schema (again when it changed: their state is then
  // loaded again) and begun on batch or epoch `batch_id` at `timestamp_ms`.
  Status BeginOperators(int64_t batch_id, int64_t timestamp_ms);
  Status RunRealTimeEpoch();
  // Where batch (or epoch) `batch_id` starts: the end of the one before, or the source's initial
  // offset for the first.
  Result<std::string> StartOf(int64_t batch_id);
  // Delivers real_time epoch `epoch_id` again, read by read, as reads/N logged it the first time,
  // then ends and commits it (writing offsets/N unless `offsets_logged`).
  Status ReplayRealTimeEpoch(int64_t epoch_id, const std::vector<std::string>& ends, bool offsets_logged);
  // Reads (start, end] and hands it to the sink as rows of epoch `epoch_id`; adds the rows read.
  Status DeliverRealTimeRead(int64_t epoch_id, const std::string& start, const std::string& end, int64_t* rows,
                             QueryProgress::Durations* durations);
  // Ends epoch `epoch_id` in the sink, logs it (offsets/N unless `offsets_logged`, then
  // commits/N) and reports it.
  Status CommitRealTimeEpoch(int64_t epoch_id, const std::string& start, const std::string& end, int64_t rows,
                             int64_t epoch_start, QueryProgress::Durations durations, bool offsets_logged);
  Status RunProcessingTime();
  Status RunAvailableNow();
  // Sleeps until `deadline_micros` on the clock or until Stop(), whichever is first.
  void SleepUntil(int64_t deadline_micros);
  QueryProgress MakeProgress(int64_t batch_id, const std::string& start, const std::string& end, int64_t rows,
                             int64_t trigger_micros, const QueryProgress::Durations& durations) const;
  void Report(QueryProgress progress);
  int64_t NowMicros() const { return config_.clock->NowMicros(); }

  std::unique_ptr<Source> source_;
  OperatorChain operators_;
  std::unique_ptr<Sink> sink_;
  QueryConfig config_;
  std::unique_ptr<QueryState> state_;
  int64_t output_rows_ = 0;  // rows handed to the sink in the batch or epoch
  std::unique_ptr<Checkpoint> checkpoint_;
  std::string run_id_;
  std::atomic<bool> stop_requested_{false};
  std::atomic<int64_t> next_batch_id_{0};
  std::string start_offset_;  // the end of the last committed batch
  int64_t last_trigger_micros_ = -1;
  mutable std::mutex progress_mutex_;
  std::optional<QueryProgress> last_progress_;
};

}  // namespace sluice::engine
