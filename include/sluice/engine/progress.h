// QueryProgress: what one batch of a streaming query did, in the shape of Spark's
// StreamingQueryProgress, so that dashboards and habits built for Spark read it unchanged.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sluice::engine {

struct SourceProgress {
  std::string description;
  // Offsets as the source serialized them (JSON text, embedded as JSON in ToJson()).
  std::string start_offset;
  std::string end_offset;
  std::string latest_offset;
  int64_t num_input_rows = 0;
  double input_rows_per_second = 0;
  double processed_rows_per_second = 0;
};

struct SinkProgress {
  std::string description;
  int64_t num_output_rows = 0;
};

// One stateful operator's figures for a batch, as Spark's `stateOperators[]` reports them.
struct StateOperatorProgress {
  std::string operator_name;    // "stateStoreSave" for an aggregation
  int64_t num_rows_total = 0;   // groups held after the batch
  int64_t num_rows_updated = 0;  // groups the batch changed
  int64_t commit_time_ms = 0;   // writing the batch's state version
  int64_t memory_used_bytes = 0;
};

// One operator's figures for a batch (engine/operator.h): what it took, gave, and the time it
// spent on the writing thread.
struct OperatorProgress {
  std::string name;
  int64_t num_input_rows = 0;
  int64_t num_output_rows = 0;
  int64_t duration_micros = 0;
};

struct QueryProgress {
  std::string id;      // the query id, stable across restarts
  std::string run_id;  // new on every start
  std::string name;
  int64_t timestamp_micros = 0;  // when the batch's trigger fired
  int64_t batch_id = 0;
  int64_t num_input_rows = 0;
  // Rows over the time since the previous trigger fired / over this batch's execution time.
  double input_rows_per_second = 0;
  double processed_rows_per_second = 0;
  // Milliseconds spent in each phase, as Spark names them: latestOffset (planning the range),
  // getBatch (reading it, with the sink writing each piece as it comes), walCommit (writing
  // offsets/N), addBatch (the sink's commit of the batch; under real_time, handing rows to the
  // sink and ending the epoch), commitOffsets (writing commits/N and committing the source),
  // triggerExecution (the whole batch).
  struct Durations {
    int64_t latest_offset = 0;
    int64_t get_batch = 0;
    int64_t wal_commit = 0;
    int64_t add_batch = 0;
    int64_t commit_offsets = 0;
    int64_t trigger_execution = 0;
  } duration_ms;
  std::vector<SourceProgress> sources;
  SinkProgress sink;
  std::vector<StateOperatorProgress> state_operators;
  std::vector<OperatorProgress> operators;  // in chain order

  // Spark's JSON: {"id":...,"runId":...,"name":...,"timestamp":"2026-01-31T10:00:00.000Z",
  // "batchId":..,"numInputRows":..,"inputRowsPerSecond":..,"processedRowsPerSecond":..,
  // "durationMs":{...},"stateOperators":[...],"sources":[...],"sink":{...}} on one line, then
  // sluice's own "operators":[{"name":..,"numInputRows":..,"numOutputRows":..,"durationMs":..}].
  std::string ToJson() const;
};

}  // namespace sluice::engine
