#include "sluice/engine/sink.h"

#include <strings.h>

#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"

namespace sluice::engine {

std::string_view OutputModeName(OutputMode mode) {
  switch (mode) {
    case OutputMode::kAppend: return "append";
    case OutputMode::kUpdate: return "update";
    case OutputMode::kComplete: return "complete";
  }
  return "append";
}

Result<OutputMode> ParseOutputMode(std::string_view name) {
  for (OutputMode mode : {OutputMode::kAppend, OutputMode::kUpdate, OutputMode::kComplete}) {
    std::string_view candidate = OutputModeName(mode);
    if (name.size() == candidate.size() && ::strncasecmp(name.data(), candidate.data(), name.size()) == 0) {
      return mode;
    }
  }
  return Status::Error(errors::kInvalidOptions,
                       "unknown output mode '" + std::string(name) + "'; use append, update or complete");
}

Status Sink::AddBatchPieces(int64_t batch_id, const std::vector<BatchPtr>& pieces) {
  if (pieces.size() == 1) return AddBatch(batch_id, *pieces[0]);
  SLUICE_ASSIGN_OR_RETURN(BatchPtr batch, Concatenate(pieces));
  return AddBatch(batch_id, *batch);
}

Status Sink::AddRealTimeRows(int64_t, const RecordBatch&) {
  return Status::Error(errors::kUnsupportedTrigger, description() + " does not support the real_time trigger");
}

Status Sink::EndEpoch(int64_t) {
  return Status::Error(errors::kUnsupportedTrigger, description() + " does not support the real_time trigger");
}

}  // namespace sluice::engine
