// The sink of a stream: the rows StreamDecodeOperator made of its Kafka records (stream_decoding.h)
// appended to the stream's Delta ingestion table, each batch one commit.
//
// Exactly once without the engine's help: every commit carries one `txn` per topic-partition the
// batch read (connectors/kafka_transactions.h: version the last offset read, records the decoding
// filtered out included, taken from the batch's Kafka offsets), and a batch whose txns the table
// already holds is skipped. ResumeOffsets turns those txns back into the `kafka` source's starting
// offsets, so the table alone says where ingestion stands. The table's schema grows with the
// fields a newer key or value schema adds (Delta mergeSchema) and widens with the types it widens.
//
// With a backfill (stream_backfill.h), the sink merges it once it is due: when it opens and after
// each batch it writes.
//
// Used from the query's thread only.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "sluice/connectors/kafka_transactions.h"
#include "sluice/core/file_system.h"
#include "sluice/core/status.h"
#include "sluice/engine/sink.h"
#include "sluice/pipeline/stream_backfill.h"
#include "sluice/pipeline/stream_decoding.h"

namespace sluice::pipeline {

class IngestionSink : public engine::Sink {
 public:
  IngestionSink(IngestionSpec spec, std::shared_ptr<FileSystem> fs) : spec_(std::move(spec)), fs_(std::move(fs)) {}

  std::string description() const override { return "IngestionSink[" + spec_.table_path + "]"; }
  std::vector<engine::OutputMode> supported_output_modes() const override { return {engine::OutputMode::kAppend}; }
  // Opens the backfill, and merges it when it is due.
  Status Open(const engine::SinkContext& context) override;
  // Writes each piece into the table's data files as it comes; the batch is committed once, with
  // the txns of the partitions between info's start and end offsets (SOURCE_OFFSET_INVALID when
  // they are not the `kafka` source's).
  Result<std::unique_ptr<engine::BatchWriter>> BeginBatch(const engine::BatchInfo& info) override;

  // The last offset recorded in the table for each (topic, partition), nullopt for none.
  using OwnedPartitions = std::map<std::pair<std::string, int32_t>, std::optional<int64_t>>;
  // As BeginBatch, for a member of a workers group whose rows have `schema`, that owns `owned`
  // and keeps in `*ends` the last offset it read of each partition (filled as it reads; read at
  // Commit; must outlive the writer): the batch commits only while the table still records what `owned` says for every
  // partition (DELTA_CONCURRENT_MODIFICATION otherwise, or when another member records progress
  // for one of them meanwhile).
  Result<std::unique_ptr<engine::BatchWriter>> BeginOwnedBatch(TypePtr schema, OwnedPartitions owned,
                                                               const connectors::PartitionEnds* ends);

  // The rows the backfill merge inserted, once, after it ran (when the sink opened or after a
  // batch); nullopt otherwise. Called from the query's thread.
  std::optional<int64_t> TakeBackfillMerge() { return std::exchange(unreported_backfill_, std::nullopt); }

 private:
  class PieceWriter;
  Status RunBackfillIfDue(std::optional<int64_t> written_min_us);

  IngestionSpec spec_;
  std::shared_ptr<FileSystem> fs_;
  std::unique_ptr<Backfill> backfill_;
  std::optional<int64_t> unreported_backfill_;
};

}  // namespace sluice::pipeline
