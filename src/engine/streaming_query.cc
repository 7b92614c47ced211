// The micro-batch loop, its triggers and its recovery.
#include "sluice/engine/streaming_query.h"

#include <algorithm>
#include <strings.h>

#include "engine/piece_pipe.h"
#include "engine/query_state.h"
#include "sluice/core/compute.h"
#include "sluice/core/json_text.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/options.h"

namespace sluice::engine {
namespace {

using std::chrono::microseconds;

// With interval 0 and nothing new, wait this long before asking the source again rather than spin.
constexpr int64_t kNoDataPollMicros = 10'000;
// Long waits are cut into slices this long so that Stop() is noticed promptly.
constexpr int64_t kStopCheckMicros = 100'000;

int64_t Millis(int64_t micros) { return micros / 1000; }

double PerSecond(int64_t rows, int64_t micros) {
  return micros > 0 ? static_cast<double>(rows) * 1e6 / static_cast<double>(micros) : 0.0;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && ::strncasecmp(a.data(), b.data(), a.size()) == 0;
}

std::string ModeList(const std::vector<OutputMode>& modes) {
  std::string list;
  for (OutputMode mode : modes) {
    if (!list.empty()) list += ", ";
    list += OutputModeName(mode);
  }
  return list.empty() ? "none" : list;
}

Status CheckOffset(const std::string& offset, const Source& source) {
  if (IsSingleLineJson(offset)) return Status::OK();
  return Status::Error(errors::kSourceOffsetInvalid,
                       source.description() + " returned an offset that is not single-line JSON: " + offset);
}

}  // namespace

std::string_view TriggerName(Trigger::Kind kind) {
  switch (kind) {
    case Trigger::Kind::kProcessingTime: return "processing_time";
    case Trigger::Kind::kOnce: return "once";
    case Trigger::Kind::kAvailableNow: return "available_now";
    case Trigger::Kind::kRealTime: return "real_time";
  }
  return "processing_time";
}

std::string_view StateStoreName(StateStoreKind kind) {
  return kind == StateStoreKind::kRocksDb ? "rocksdb" : "memory";
}

Result<StateStoreKind> ParseStateStore(std::string_view name) {
  for (StateStoreKind kind : {StateStoreKind::kMemory, StateStoreKind::kRocksDb}) {
    if (EqualsIgnoreCase(name, StateStoreName(kind))) return kind;
  }
  return Status::Error(errors::kInvalidOptions,
                       "unknown state store '" + std::string(name) + "': expected memory or rocksdb");
}

Result<Trigger> ParseTrigger(std::string_view kind, std::string_view interval) {
  for (Trigger::Kind candidate : {Trigger::Kind::kProcessingTime, Trigger::Kind::kOnce, Trigger::Kind::kAvailableNow,
                                  Trigger::Kind::kRealTime}) {
    if (!EqualsIgnoreCase(kind, TriggerName(candidate))) continue;
    Trigger trigger{candidate};
    if (interval.empty()) return trigger;
    if (candidate == Trigger::Kind::kOnce || candidate == Trigger::Kind::kAvailableNow) {
      return Status::Error(errors::kInvalidOptions,
                           "trigger " + std::string(kind) + " takes no interval (got '" + std::string(interval) + "')");
    }
    SLUICE_ASSIGN_OR_RETURN(microseconds duration, ParseDuration(interval));
    if (candidate == Trigger::Kind::kRealTime) {
      if (duration.count() == 0) {
        return Status::Error(errors::kInvalidOptions, "the real_time trigger needs a checkpoint interval above 0");
      }
      trigger.checkpoint_interval = duration;
    } else {
      trigger.interval = duration;
    }
    return trigger;
  }
  return Status::Error(errors::kInvalidOptions, "unknown trigger '" + std::string(kind) +
                                                    "'; use processing_time, once, available_now or real_time");
}

Status CheckQueryShape(const Sink& sink, const Trigger& trigger, OutputMode output_mode,
                       const OperatorChain& operators) {
  const bool aggregation = operators.aggregates();
  std::vector<OutputMode> modes = sink.supported_output_modes();
  if (std::find(modes.begin(), modes.end(), output_mode) == modes.end()) {
    return Status::Error(errors::kUnsupportedOutputMode,
                         sink.description() + " does not support the " + std::string(OutputModeName(output_mode)) +
                             " output mode; it supports: " + ModeList(modes));
  }
  if (aggregation && output_mode == OutputMode::kAppend) {
    return Status::Error(errors::kUnsupportedOutputMode,
                         "the append output mode writes each row once and for all, and without a watermark no group "
                         "of an aggregation is ever final; use update (the groups each batch changed) or complete "
                         "(every group after each batch)");
  }
  if (output_mode == OutputMode::kComplete && !aggregation) {
    return Status::Error(errors::kUnsupportedOutputMode,
                         "the complete output mode rewrites the whole result of an aggregation every batch, and this "
                         "query has no aggregation; use append");
  }
  if (trigger.kind == Trigger::Kind::kRealTime && operators.keeps_state()) {
    return Status::Error(errors::kUnsupportedTrigger,
                         "a query that keeps state between batches (an aggregation, a deduplication) runs in "
                         "micro-batches, whose ends are its state's versions; use the processing_time trigger "
                         "with a short interval instead of real_time");
  }
  if (trigger.kind == Trigger::Kind::kRealTime && !sink.supports_real_time()) {
    return Status::Error(errors::kUnsupportedTrigger, sink.description() +
                                                          " cannot take rows continuously; use the processing_time "
                                                          "trigger with a short interval instead of real_time");
  }
  if (trigger.interval.count() < 0 || trigger.checkpoint_interval.count() <= 0) {
    return Status::Error(errors::kInvalidArgument, "trigger intervals must not be negative");
  }
  return Status::OK();
}

Result<std::unique_ptr<StreamingQuery>> StreamingQuery::Start(std::unique_ptr<Source> source,
                                                              std::unique_ptr<Sink> sink, QueryConfig config) {
  if (!source || !sink || !config.file_system || !config.clock) {
    return Status::Error(errors::kInvalidArgument, "a streaming query needs a source, a sink, a file system and a clock");
  }
  if (config.checkpoint_location.empty()) {
    return Status::Error(errors::kInvalidArgument, "a streaming query needs a checkpoint location");
  }
  OperatorChain operators(std::move(config.operators));
  SLUICE_RETURN_IF_ERROR(CheckQueryShape(*sink, config.trigger, config.output_mode, operators));

  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Checkpoint> checkpoint,
                          Checkpoint::Open(config.file_system, config.checkpoint_location, config.new_query_id));
  std::unique_ptr<StreamingQuery> query(
      new StreamingQuery(std::move(source), std::move(operators), std::move(sink), std::move(config),
                         std::move(checkpoint)));
  const std::string& query_id = query->checkpoint_->query_id();
  SourceContext source_context{query_id, query->config_.file_system, query->checkpoint_->SourceStateDirectory(0),
                               query->config_.clock};
  SLUICE_RETURN_IF_ERROR(query->source_->Open(source_context));
  SLUICE_RETURN_IF_ERROR(query->sink_->Open(
      SinkContext{query_id, query->config_.output_mode, query->config_.file_system, &query->stop_requested_,
                  query->config_.name}));
  return query;
}

StreamingQuery::StreamingQuery(std::unique_ptr<Source> source, OperatorChain operators, std::unique_ptr<Sink> sink,
                               QueryConfig config, std::unique_ptr<Checkpoint> checkpoint)
    : source_(std::move(source)),
      operators_(std::move(operators)),
      sink_(std::move(sink)),
      config_(std::move(config)),
      state_(std::make_unique<QueryState>(config_.file_system, config_.checkpoint_location, config_.state_store)),
      checkpoint_(std::move(checkpoint)),
      run_id_(NewUuid()) {}

StreamingQuery::~StreamingQuery() = default;

void StreamingQuery::Stop() { stop_requested_.store(true); }

std::optional<QueryProgress> StreamingQuery::last_progress() const {
  std::lock_guard lock(progress_mutex_);
  return last_progress_;
}

Status StreamingQuery::Run() {
  Status status = RunTrigger();
  // A sink that gave up waiting because the query was asked to stop (QUERY_STOPPED) ends the run
  // as a stop: its batch is not committed and runs again, with the same id, when the query restarts.
  if (status.error_class() == errors::kQueryStopped && stop_requested_.load()) return Status::OK();
  return status;
}

Status StreamingQuery::RunTrigger() {
  SLUICE_RETURN_IF_ERROR(Recover());
  switch (config_.trigger.kind) {
    case Trigger::Kind::kOnce:
      if (stop_requested_.load()) return Status::OK();
      return RunBatch(ReadLimit{true, std::nullopt}).status();
    case Trigger::Kind::kAvailableNow:
      return RunAvailableNow();
    case Trigger::Kind::kProcessingTime:
      return RunProcessingTime();
    case Trigger::Kind::kRealTime:
      while (!stop_requested_.load()) SLUICE_RETURN_IF_ERROR(RunRealTimeEpoch());
      return Status::OK();
  }
  return Status::OK();
}

Result<std::string> StreamingQuery::StartOf(int64_t batch_id) {
  if (batch_id == 0) return source_->InitialOffset();
  SLUICE_ASSIGN_OR_RETURN(OffsetLogEntry previous, checkpoint_->ReadOffsets(batch_id - 1));
  if (previous.source_offsets.size() != 1) {
    return Status::Error(errors::kCheckpointCorrupt,
                         "offsets/" + std::to_string(batch_id - 1) + " does not hold exactly one source offset");
  }
  return previous.source_offsets[0];
}

Status StreamingQuery::Recover() {
  SLUICE_ASSIGN_OR_RETURN(std::optional<int64_t> last_planned, checkpoint_->LatestOffsetBatch());
  SLUICE_ASSIGN_OR_RETURN(std::optional<int64_t> last_committed, checkpoint_->LatestCommitBatch());
  const int64_t pending = last_committed ? *last_committed + 1 : 0;
  SLUICE_ASSIGN_OR_RETURN(std::optional<std::vector<std::string>> reads, checkpoint_->ReadEpochReads(pending));
  if (reads) {
    // The crashed run may have logged offsets/N before it died short of commits/N.
    return ReplayRealTimeEpoch(pending, *reads, last_planned && *last_planned >= pending);
  }
  if (last_committed && (!last_planned || *last_committed > *last_planned)) {
    return Status::Error(errors::kCheckpointCorrupt, "commits/" + std::to_string(*last_committed) +
                                                         " exists but offsets/" + std::to_string(*last_committed) +
                                                         " does not; the offset log was removed or cut short");
  }
  if (!last_planned) {
    SLUICE_ASSIGN_OR_RETURN(start_offset_, source_->InitialOffset());
    SLUICE_RETURN_IF_ERROR(CheckOffset(start_offset_, *source_));
    next_batch_id_ = 0;
    return Status::OK();
  }
  const int64_t batch_id = *last_planned;
  SLUICE_ASSIGN_OR_RETURN(OffsetLogEntry planned, checkpoint_->ReadOffsets(batch_id));
  if (planned.source_offsets.size() != 1) {
    return Status::Error(errors::kCheckpointCorrupt,
                         "offsets/" + std::to_string(batch_id) + " holds " + std::to_string(planned.source_offsets.size()) +
                             " source offsets, but this query has one source; was the checkpoint made by another query?");
  }
  if (last_committed && *last_committed >= batch_id) {
    start_offset_ = planned.source_offsets[0];
    next_batch_id_ = batch_id + 1;
    // The previous run may have died between commits/N and the source's commit.
    return source_->Commit(start_offset_);
  }
  if (batch_id > 0 && (!last_committed || *last_committed != batch_id - 1)) {
    return Status::Error(errors::kCheckpointCorrupt, "offsets/" + std::to_string(batch_id) +
                                                         " exists but commits/" + std::to_string(batch_id - 1) +
                                                         " does not; the log has a gap");
  }
  // Batch N was planned and may have partly reached the sink: run it again, same id, same range.
  SLUICE_ASSIGN_OR_RETURN(std::string start, StartOf(batch_id));
  return ExecuteBatch(batch_id, start, planned.source_offsets[0], NowMicros(), planned.batch_timestamp_ms,
                      QueryProgress::Durations{});
}

Result<StreamingQuery::BatchOutcome> StreamingQuery::RunBatch(const ReadLimit& limit) {
  const int64_t trigger_micros = NowMicros();
  QueryProgress::Durations durations;
  SLUICE_ASSIGN_OR_RETURN(std::string end, source_->LatestOffset(start_offset_, limit));
  durations.latest_offset = Millis(NowMicros() - trigger_micros);
  if (end == start_offset_) return BatchOutcome::kNoData;
  SLUICE_RETURN_IF_ERROR(CheckOffset(end, *source_));

  const int64_t batch_id = next_batch_id_.load();
  int64_t phase_start = NowMicros();
  SLUICE_RETURN_IF_ERROR(checkpoint_->WriteOffsets(batch_id, OffsetLogEntry{Millis(trigger_micros), {end}}));
  durations.wal_commit = Millis(NowMicros() - phase_start);
  SLUICE_RETURN_IF_ERROR(
      ExecuteBatch(batch_id, start_offset_, end, trigger_micros, Millis(trigger_micros), durations));
  return BatchOutcome::kRan;
}

Status StreamingQuery::BeginOperators(int64_t batch_id, int64_t timestamp_ms) {
  output_rows_ = 0;
  const TypePtr& input = source_->schema();
  if (operators_.input_schema() == nullptr || !operators_.input_schema()->Equals(*input)) {
    state_->Forget();
    SLUICE_RETURN_IF_ERROR(operators_.Bind(input).status());
  }
  if (operators_.keeps_state()) SLUICE_RETURN_IF_ERROR(state_->Load(operators_, batch_id - 1));
  return operators_.BeginBatch(BatchStart{batch_id, timestamp_ms * 1000});
}

// The writer the source's pieces go to: each piece through the operators, what comes out to the
// sink's writer; at Commit the operators' end-of-batch rows, then their state as the batch's
// version, then the sink's commit. A batch that does not commit leaves the state somewhere
// between two versions: it is loaded again for the next batch.
class StreamingQuery::OperatorWriter final : public BatchWriter {
 public:
  OperatorWriter(StreamingQuery* query, int64_t batch_id, std::unique_ptr<BatchWriter> sink_writer)
      : query_(query), batch_id_(batch_id), sink_writer_(std::move(sink_writer)),
        emit_([this](BatchPtr rows) {
          query_->output_rows_ += rows->num_rows();
          return sink_writer_->Add(std::move(rows));
        }) {}
  ~OperatorWriter() override {
    if (!committed_) query_->state_->Forget();
  }
  Status Add(BatchPtr piece) override { return query_->operators_.Push(std::move(piece), emit_); }
  Status Commit() override {
    SLUICE_RETURN_IF_ERROR(query_->operators_.Finish(emit_));
    if (query_->operators_.keeps_state()) SLUICE_RETURN_IF_ERROR(query_->state_->Save(query_->operators_, batch_id_));
    SLUICE_RETURN_IF_ERROR(sink_writer_->Commit());
    committed_ = true;
    return Status::OK();
  }

 private:
  StreamingQuery* query_;
  int64_t batch_id_;
  std::unique_ptr<BatchWriter> sink_writer_;
  OperatorChain::Emit emit_;
  bool committed_ = false;
};

Status StreamingQuery::ExecuteBatch(int64_t batch_id, std::string start, std::string end, int64_t trigger_micros,
                                    int64_t timestamp_ms, QueryProgress::Durations durations) {
  const std::string context = "batch " + std::to_string(batch_id);
  int64_t phase_start = NowMicros();
  Status begun = BeginOperators(batch_id, timestamp_ms);
  if (!begun.ok()) return begun.WithContext(context);
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<BatchWriter> sink_writer, sink_->BeginBatch(BatchInfo{batch_id, operators_.output_schema(), start, end}));
  auto writer = std::make_unique<OperatorWriter>(this, batch_id, std::move(sink_writer));
  // The sink writes each piece while the source reads the next; nothing is durable before Commit.
  PipeOutcome piped = PipePieces(*source_, start, end, *writer);
  if (!piped.write.ok()) return piped.write.WithContext(context);
  SLUICE_RETURN_IF_ERROR(piped.read);
  const int64_t rows = piped.rows;
  durations.get_batch = Millis(NowMicros() - phase_start);

  phase_start = NowMicros();
  Status added = writer->Commit();
  writer.reset();
  if (!added.ok()) return added.WithContext(context);
  durations.add_batch = Millis(NowMicros() - phase_start);

  phase_start = NowMicros();
  SLUICE_RETURN_IF_ERROR(checkpoint_->WriteCommit(batch_id));
  SLUICE_RETURN_IF_ERROR(source_->Commit(end));
  durations.commit_offsets = Millis(NowMicros() - phase_start);
  durations.trigger_execution = Millis(NowMicros() - trigger_micros);

  Report(MakeProgress(batch_id, start, end, rows, trigger_micros, durations));
  start_offset_ = std::move(end);
  next_batch_id_ = batch_id + 1;
  return Status::OK();
}

Status StreamingQuery::RunProcessingTime() {
  const int64_t interval = config_.trigger.interval.count();
  while (!stop_requested_.load()) {
    const int64_t trigger_micros = NowMicros();
    SLUICE_ASSIGN_OR_RETURN(BatchOutcome outcome, RunBatch(ReadLimit{}));
    if (interval > 0) {
      // The next trigger is the next multiple of the interval after this one fired. A batch that
      // overran it is followed at once by one batch, never by one per missed interval.
      SleepUntil(trigger_micros / interval * interval + interval);
    } else if (outcome == BatchOutcome::kNoData) {
      SleepUntil(NowMicros() + kNoDataPollMicros);
    }
  }
  return Status::OK();
}

Status StreamingQuery::RunAvailableNow() {
  SLUICE_ASSIGN_OR_RETURN(std::string target, source_->LatestOffset(start_offset_, ReadLimit{true, std::nullopt}));
  const ReadLimit limit{false, target};
  while (!stop_requested_.load() && start_offset_ != target) {
    SLUICE_ASSIGN_OR_RETURN(BatchOutcome outcome, RunBatch(limit));
    if (outcome == BatchOutcome::kNoData) break;
  }
  return Status::OK();
}

Status StreamingQuery::RunRealTimeEpoch() {
  const int64_t epoch_start = NowMicros();
  const int64_t deadline = epoch_start + config_.trigger.checkpoint_interval.count();
  const int64_t epoch_id = next_batch_id_.load();
  const std::string start = start_offset_;
  std::string current = start;
  int64_t reads = 0;
  int64_t rows = 0;
  QueryProgress::Durations durations;
  SLUICE_RETURN_IF_ERROR(BeginOperators(epoch_id, Millis(epoch_start)));
  while (!stop_requested_.load() && NowMicros() < deadline) {
    int64_t phase_start = NowMicros();
    SLUICE_ASSIGN_OR_RETURN(std::string end, source_->LatestOffset(current, ReadLimit{}));
    durations.latest_offset += Millis(NowMicros() - phase_start);
    if (end == current) {
      SleepUntil(std::min(deadline, NowMicros() + kNoDataPollMicros));
      continue;
    }
    SLUICE_RETURN_IF_ERROR(CheckOffset(end, *source_));
    phase_start = NowMicros();
    SLUICE_RETURN_IF_ERROR(checkpoint_->LogEpochRead(epoch_id, reads++, end));
    durations.wal_commit += Millis(NowMicros() - phase_start);
    SLUICE_RETURN_IF_ERROR(DeliverRealTimeRead(epoch_id, current, end, &rows, &durations));
    current = std::move(end);
  }
  if (reads == 0) return Status::OK();
  return CommitRealTimeEpoch(epoch_id, start, current, rows, epoch_start, durations, false);
}

Status StreamingQuery::ReplayRealTimeEpoch(int64_t epoch_id, const std::vector<std::string>& ends,
                                           bool offsets_logged) {
  const int64_t epoch_start = NowMicros();
  SLUICE_ASSIGN_OR_RETURN(std::string start, StartOf(epoch_id));
  if (ends.empty()) {
    return Status::Error(errors::kCheckpointCorrupt, "reads/" + std::to_string(epoch_id) + " logs no read");
  }
  if (!sink_->supports_real_time()) {
    return Status::Error(errors::kUnsupportedTrigger,
                         "epoch " + std::to_string(epoch_id) + " of this checkpoint ran under the real_time trigger "
                             "and must be delivered again that way, but " + sink_->description() +
                             " cannot take rows continuously");
  }
  std::string current = start;
  int64_t rows = 0;
  QueryProgress::Durations durations;
  SLUICE_RETURN_IF_ERROR(BeginOperators(epoch_id, Millis(epoch_start)));
  for (const std::string& end : ends) {
    SLUICE_RETURN_IF_ERROR(CheckOffset(end, *source_));
    SLUICE_RETURN_IF_ERROR(DeliverRealTimeRead(epoch_id, current, end, &rows, &durations));
    current = end;
  }
  return CommitRealTimeEpoch(epoch_id, start, current, rows, epoch_start, durations, offsets_logged);
}

Status StreamingQuery::DeliverRealTimeRead(int64_t epoch_id, const std::string& start, const std::string& end,
                                           int64_t* rows, QueryProgress::Durations* durations) {
  int64_t phase_start = NowMicros();
  SLUICE_ASSIGN_OR_RETURN(std::vector<BatchPtr> pieces, source_->Read(start, end));
  durations->get_batch += Millis(NowMicros() - phase_start);
  if (pieces.empty()) return Status::OK();
  phase_start = NowMicros();
  // One call per read: a replay delivers the same rows in the same calls.
  BatchPtr read = pieces[0];
  if (pieces.size() > 1) {
    SLUICE_ASSIGN_OR_RETURN(read, Concatenate(pieces));
  }
  pieces.clear();
  *rows += read->num_rows();
  // One call per read, whatever the operators leave of it.
  std::vector<BatchPtr> out;
  SLUICE_RETURN_IF_ERROR(operators_.Push(std::move(read), [&out](BatchPtr rows) {
    out.push_back(std::move(rows));
    return Status::OK();
  }));
  BatchPtr delivered = RecordBatch::Empty(operators_.output_schema());
  if (out.size() == 1) delivered = std::move(out[0]);
  if (out.size() > 1) {
    SLUICE_ASSIGN_OR_RETURN(delivered, Concatenate(out));
  }
  output_rows_ += delivered->num_rows();
  Status added = sink_->AddRealTimeRows(epoch_id, *delivered);
  if (!added.ok()) return added.WithContext("epoch " + std::to_string(epoch_id));
  durations->add_batch += Millis(NowMicros() - phase_start);
  return Status::OK();
}

Status StreamingQuery::CommitRealTimeEpoch(int64_t epoch_id, const std::string& start, const std::string& end,
                                           int64_t rows, int64_t epoch_start, QueryProgress::Durations durations,
                                           bool offsets_logged) {
  // The sink makes the epoch durable before the log says so; a crash before commits/N delivers the
  // epoch again after the restart, in the reads that reads/N logged.
  int64_t phase_start = NowMicros();
  Status ended = sink_->EndEpoch(epoch_id);
  if (!ended.ok()) return ended.WithContext("epoch " + std::to_string(epoch_id));
  durations.add_batch += Millis(NowMicros() - phase_start);
  phase_start = NowMicros();
  if (!offsets_logged) {
    SLUICE_RETURN_IF_ERROR(checkpoint_->WriteOffsets(epoch_id, OffsetLogEntry{Millis(epoch_start), {end}}));
  }
  durations.wal_commit += Millis(NowMicros() - phase_start);
  phase_start = NowMicros();
  SLUICE_RETURN_IF_ERROR(checkpoint_->WriteCommit(epoch_id));
  SLUICE_RETURN_IF_ERROR(source_->Commit(end));
  durations.commit_offsets = Millis(NowMicros() - phase_start);
  durations.trigger_execution = Millis(NowMicros() - epoch_start);

  start_offset_ = end;
  next_batch_id_ = epoch_id + 1;
  Report(MakeProgress(epoch_id, start, end, rows, epoch_start, durations));
  return Status::OK();
}

void StreamingQuery::SleepUntil(int64_t deadline_micros) {
  for (int64_t now = NowMicros(); now < deadline_micros && !stop_requested_.load(); now = NowMicros()) {
    config_.clock->SleepFor(microseconds(std::min(deadline_micros - now, kStopCheckMicros)));
  }
}

QueryProgress StreamingQuery::MakeProgress(int64_t batch_id, const std::string& start, const std::string& end,
                                           int64_t rows, int64_t trigger_micros,
                                           const QueryProgress::Durations& durations) const {
  QueryProgress progress;
  progress.id = checkpoint_->query_id();
  progress.run_id = run_id_;
  progress.name = config_.name;
  progress.timestamp_micros = trigger_micros;
  progress.batch_id = batch_id;
  progress.num_input_rows = rows;
  if (last_trigger_micros_ >= 0) {
    progress.input_rows_per_second = PerSecond(rows, trigger_micros - last_trigger_micros_);
  }
  progress.processed_rows_per_second = PerSecond(rows, NowMicros() - trigger_micros);
  progress.duration_ms = durations;
  progress.sources.push_back(SourceProgress{source_->description(), start, end,
                                            source_->ReportLatestOffset().value_or(end), rows,
                                            progress.input_rows_per_second, progress.processed_rows_per_second});
  progress.sink = SinkProgress{sink_->description(), output_rows_};
  if (operators_.keeps_state()) progress.state_operators = state_->progress();
  progress.operators = operators_.progress();
  return progress;
}

void StreamingQuery::Report(QueryProgress progress) {
  last_trigger_micros_ = progress.timestamp_micros;
  {
    std::lock_guard lock(progress_mutex_);
    last_progress_ = progress;
  }
  if (config_.on_progress) config_.on_progress(progress);
}

}  // namespace sluice::engine
