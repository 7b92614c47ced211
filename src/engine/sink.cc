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

Status WholeBatchWriter::Add(BatchPtr piece) {
  pieces_.push_back(std::move(piece));
  return Status::OK();
}

Status WholeBatchWriter::Commit() {
  if (pieces_.empty()) pieces_.push_back(RecordBatch::Empty(schema_));
  std::vector<BatchPtr> pieces = std::move(pieces_);
  pieces_.clear();
  return write_(pieces);
}

std::unique_ptr<BatchWriter> WholeBatchWriter::Concatenating(TypePtr schema,
                                                             std::function<Status(const RecordBatch&)> write) {
  return std::make_unique<WholeBatchWriter>(std::move(schema),
                                            [write = std::move(write)](const std::vector<BatchPtr>& pieces) {
                                              if (pieces.size() == 1) return write(*pieces[0]);
                                              SLUICE_ASSIGN_OR_RETURN(BatchPtr batch, Concatenate(pieces));
                                              return write(*batch);
                                            });
}

Status AddBatchPieces(Sink& sink, int64_t batch_id, const std::vector<BatchPtr>& pieces) {
  if (pieces.empty()) return Status::Error(errors::kInvalidArgument, "a batch has at least one piece");
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<BatchWriter> writer, sink.BeginBatch(BatchInfo{batch_id, pieces[0]->schema()}));
  for (const BatchPtr& piece : pieces) SLUICE_RETURN_IF_ERROR(writer->Add(piece));
  return writer->Commit();
}

Status AddBatch(Sink& sink, int64_t batch_id, const RecordBatch& batch) {
  // A non-owning handle: the batch outlives the call.
  return AddBatchPieces(sink, batch_id, {BatchPtr(BatchPtr(), &batch)});
}

Status Sink::AddRealTimeRows(int64_t, const RecordBatch&) {
  return Status::Error(errors::kUnsupportedTrigger, description() + " does not support the real_time trigger");
}

Status Sink::EndEpoch(int64_t) {
  return Status::Error(errors::kUnsupportedTrigger, description() + " does not support the real_time trigger");
}

}  // namespace sluice::engine
