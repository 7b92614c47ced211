#include "sluice/engine/progress.h"

#include "sluice/core/json_text.h"

namespace sluice::engine {
namespace {

// Offsets are JSON already; an empty one (no batch before) is null.
std::string OffsetJson(const std::string& offset) { return offset.empty() ? "null" : offset; }

}  // namespace

std::string QueryProgress::ToJson() const {
  std::string json = "{\"id\":" + JsonString(id) + ",\"runId\":" + JsonString(run_id) + ",\"name\":" +
                     (name.empty() ? std::string("null") : JsonString(name)) +
                     ",\"timestamp\":" + JsonString(IsoTimestampMillis(timestamp_micros)) +
                     ",\"batchId\":" + std::to_string(batch_id) + ",\"numInputRows\":" + std::to_string(num_input_rows) +
                     ",\"inputRowsPerSecond\":" + JsonDouble(input_rows_per_second) +
                     ",\"processedRowsPerSecond\":" + JsonDouble(processed_rows_per_second) +
                     ",\"durationMs\":{\"latestOffset\":" + std::to_string(duration_ms.latest_offset) +
                     ",\"getBatch\":" + std::to_string(duration_ms.get_batch) +
                     ",\"walCommit\":" + std::to_string(duration_ms.wal_commit) +
                     ",\"addBatch\":" + std::to_string(duration_ms.add_batch) +
                     ",\"commitOffsets\":" + std::to_string(duration_ms.commit_offsets) +
                     ",\"triggerExecution\":" + std::to_string(duration_ms.trigger_execution) + "},\"stateOperators\":[";
  for (size_t i = 0; i < state_operators.size(); ++i) {
    const StateOperatorProgress& op = state_operators[i];
    if (i > 0) json += ',';
    json += "{\"operatorName\":" + JsonString(op.operator_name) +
            ",\"numRowsTotal\":" + std::to_string(op.num_rows_total) +
            ",\"numRowsUpdated\":" + std::to_string(op.num_rows_updated) +
            ",\"numRowsRemoved\":0,\"commitTimeMs\":" + std::to_string(op.commit_time_ms) +
            ",\"memoryUsedBytes\":" + std::to_string(op.memory_used_bytes) +
            ",\"numRowsDroppedByWatermark\":0,\"numShufflePartitions\":1,\"numStateStoreInstances\":1}";
  }
  json += "],\"sources\":[";
  for (size_t i = 0; i < sources.size(); ++i) {
    const SourceProgress& source = sources[i];
    if (i > 0) json += ',';
    json += "{\"description\":" + JsonString(source.description) + ",\"startOffset\":" +
            OffsetJson(source.start_offset) + ",\"endOffset\":" + OffsetJson(source.end_offset) +
            ",\"latestOffset\":" + OffsetJson(source.latest_offset) +
            ",\"numInputRows\":" + std::to_string(source.num_input_rows) +
            ",\"inputRowsPerSecond\":" + JsonDouble(source.input_rows_per_second) +
            ",\"processedRowsPerSecond\":" + JsonDouble(source.processed_rows_per_second) + "}";
  }
  json += "],\"sink\":{\"description\":" + JsonString(sink.description) +
          ",\"numOutputRows\":" + std::to_string(sink.num_output_rows) + "},\"operators\":[";
  for (size_t i = 0; i < operators.size(); ++i) {
    const OperatorProgress& op = operators[i];
    if (i > 0) json += ',';
    json += "{\"name\":" + JsonString(op.name) + ",\"numInputRows\":" + std::to_string(op.num_input_rows) +
            ",\"numOutputRows\":" + std::to_string(op.num_output_rows) +
            ",\"durationMs\":" + JsonDouble(static_cast<double>(op.duration_micros) / 1000.0) + "}";
  }
  json += "]}";
  return json;
}

}  // namespace sluice::engine
