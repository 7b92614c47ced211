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

namespace {

// The default BatchWriter: the whole batch is handed to AddBatchPieces at Commit.
class CollectingBatchWriter final : public BatchWriter {
 public:
  CollectingBatchWriter(Sink* sink, int64_t batch_id, TypePtr schema)
      : sink_(sink), batch_id_(batch_id), schema_(std::move(schema)) {}

  Status Add(BatchPtr piece) override {
    pieces_.push_back(std::move(piece));
    return Status::OK();
  }

  Status Commit() override {
    if (pieces_.empty()) pieces_.push_back(RecordBatch::Empty(schema_));
    std::vector<BatchPtr> pieces = std::move(pieces_);
    pieces_.clear();
    return sink_->AddBatchPieces(batch_id_, pieces);
  }

 private:
  Sink* sink_;
  int64_t batch_id_;
  TypePtr schema_;
  std::vector<BatchPtr> pieces_;
};

}  // namespace

Result<std::unique_ptr<BatchWriter>> Sink::BeginBatch(int64_t batch_id, TypePtr schema) {
  return std::unique_ptr<BatchWriter>(new CollectingBatchWriter(this, batch_id, std::move(schema)));
}

Status Sink::AddRealTimeRows(int64_t, const RecordBatch&) {
  return Status::Error(errors::kUnsupportedTrigger, description() + " does not support the real_time trigger");
}

Status Sink::EndEpoch(int64_t) {
  return Status::Error(errors::kUnsupportedTrigger, description() + " does not support the real_time trigger");
}

}  // namespace sluice::engine
