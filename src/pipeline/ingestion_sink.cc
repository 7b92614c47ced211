#include "sluice/pipeline/ingestion_sink.h"

#include "sluice/delta/table_writer.h"
#include "sluice/delta/writer.h"

namespace sluice::pipeline {

Status IngestionSink::Open(const engine::SinkContext&) {
  if (spec_.backfill) {
    SLUICE_ASSIGN_OR_RETURN(backfill_, Backfill::Open(fs_, *spec_.backfill));
    SLUICE_RETURN_IF_ERROR(RunBackfillIfDue(std::nullopt));
  }
  return Status::OK();
}

Status IngestionSink::RunBackfillIfDue(std::optional<int64_t> written_min_us) {
  if (backfill_ == nullptr || backfill_->done()) return Status::OK();
  const int64_t now_us = std::chrono::duration_cast<std::chrono::microseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  SLUICE_ASSIGN_OR_RETURN(std::optional<int64_t> inserted, backfill_->RunIfDue(written_min_us, now_us));
  if (inserted) unreported_backfill_ = inserted;
  return Status::OK();
}

// Writes each piece into the table's data files as it comes (beside the source reading the next
// one); the batch is committed once, with one txn per topic-partition.
class IngestionSink::PieceWriter final : public engine::BatchWriter {
 public:
  // `ends` null: the writer keeps `own_ends` itself. `schema`: of the rows, for a commit that
  // records progress only (every record filtered out).
  PieceWriter(IngestionSink* sink, TypePtr schema, std::optional<OwnedPartitions> owned,
              const connectors::PartitionEnds* ends, connectors::PartitionEnds own_ends = {})
      : sink_(sink),
        schema_(std::move(schema)),
        owned_(std::move(owned)),
        own_ends_(std::move(own_ends)),
        ends_(ends != nullptr ? ends : &own_ends_) {}

  Status Add(BatchPtr out) override {
    if (table_ == nullptr) SLUICE_RETURN_IF_ERROR(Start(out->schema()));
    if (sink_->backfill_ != nullptr && !sink_->backfill_->done()) {
      const Column& timestamps = *out->column(2);
      for (int64_t row = 0; row < out->num_rows(); ++row) {
        if (timestamps.IsValid(row) && (!written_min_us_ || timestamps.Value<int64_t>(row) < *written_min_us_)) {
          written_min_us_ = timestamps.Value<int64_t>(row);
        }
      }
    }
    Status written = table_->Write(out);
    return written.ok() ? written : written.WithContext(sink_->description());
  }

  Status Commit() override {
    if (ends_->empty()) return Status::OK();
    if (table_ == nullptr) SLUICE_RETURN_IF_ERROR(Start(schema_));
    Result<delta::WriteResult> committed =
        table_->Commit(connectors::PartitionTransactions(sink_->spec_.stream_id, *ends_));
    if (!committed.ok()) return committed.status().WithContext(sink_->description());
    return sink_->RunBackfillIfDue(written_min_us_);
  }

 private:
  Status Start(const TypePtr& schema) {
    delta::WriteOptions options;
    options.operation = std::string(delta::kOperationStreamingUpdate);
    options.operation_parameters = {{"outputMode", "Append"}, {"streamId", sink_->spec_.stream_id}};
    // Fields a newer schema adds become new nullable columns; rows written before read them null.
    // A field it widens (int to long) widens its column (Delta's typeWidening).
    options.merge_schema = true;
    options.widen_types = true;
    if (owned_) {
      for (const auto& [place, version] : *owned_) {
        options.expected_transactions.emplace_back(
            connectors::PartitionAppId(sink_->spec_.stream_id, place.first, place.second), version);
      }
    }
    Result<std::unique_ptr<delta::TableWriter>> started =
        delta::TableWriter::Start(sink_->fs_, sink_->spec_.table_path, schema, std::move(options));
    if (!started.ok()) return started.status().WithContext(sink_->description());
    table_ = std::move(started).value();
    return Status::OK();
  }

  IngestionSink* sink_;
  const TypePtr schema_;
  const std::optional<OwnedPartitions> owned_;
  std::unique_ptr<delta::TableWriter> table_;
  const connectors::PartitionEnds own_ends_;
  const connectors::PartitionEnds* ends_;
  std::optional<int64_t> written_min_us_;
};

Result<std::unique_ptr<engine::BatchWriter>> IngestionSink::BeginBatch(const engine::BatchInfo& info) {
  Result<connectors::PartitionEnds> ends = connectors::PartitionEndsBetween(info.start_offset, info.end_offset);
  if (!ends.ok()) return ends.status().WithContext(description());
  return std::unique_ptr<engine::BatchWriter>(new PieceWriter(this, info.schema, std::nullopt, nullptr, std::move(ends).value()));
}

Result<std::unique_ptr<engine::BatchWriter>> IngestionSink::BeginOwnedBatch(TypePtr schema, OwnedPartitions owned,
                                                                           const connectors::PartitionEnds* ends) {
  return std::unique_ptr<engine::BatchWriter>(new PieceWriter(this, std::move(schema), std::move(owned), ends));
}

}  // namespace sluice::pipeline
