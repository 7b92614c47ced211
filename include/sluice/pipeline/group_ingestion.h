// GroupIngestion: a stream's ingestion run by one member of a workers group (docs/scale-out.md).
// Several processes, on any machines, run the same stream into the same ingestion table; Kafka's
// consumer-group protocol decides who reads which partition, and the table decides what has been
// written. There is no checkpoint and no coordinator of sluice's own.
//
// Each batch's records are decoded (StreamDecodeOperator) and written in one blind-append commit
// carrying one txn per partition it read (connectors::PartitionAppId, version = the last offset
// read). A member owns a partition's progress from
// the txn it found when the partition was assigned (read from a fresh snapshot; the partition
// resumes at txn + 1, or at starting_offsets when the table has none): the commit goes through
// only while the table still records that txn for every owned partition and no concurrent commit
// records one (IngestionSink::BeginOwnedBatch). Otherwise another member took a partition over
// (a rebalance, or this member was paused past its session): the batch is dropped, the positions
// are read again from the table and the partitions read again from there. A rebalance that takes
// partitions away drops the batch in progress too (Delta, not the reader, says what is written).
// After each commit the next offsets are committed to the group, for lag dashboards only.
//
// Refused (INVALID_PIPELINE): a table whose delta.setTransactionRetentionDuration could expire
// the txns, which are the only record of the positions.
//
// Run() and Stop() may be called from different threads; everything else from Run()'s.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "sluice/core/file_system.h"
#include "sluice/core/status.h"
#include "sluice/engine/operator.h"
#include "sluice/engine/progress.h"
#include "sluice/pipeline/ingestion_sink.h"
#include "sluice/pipeline/stream_decoding.h"

namespace sluice::connectors {
class KafkaGroupConsumer;
}

namespace sluice::pipeline {

struct GroupIngestionConfig {
  std::string group_id;     // the consumer group: one per stream
  std::string instance_id;  // group.instance.id of this member; empty: a dynamic member
  // How long a batch collects records; zero: until the member has read all it was given.
  std::chrono::milliseconds trigger_interval{0};
  // Called after every batch committed, on Run()'s thread.
  std::function<void(const engine::QueryProgress&)> on_progress = {};
};

class GroupIngestion {
 public:
  // `source_options` are the stream's `kafka` source options (KafkaGroupConsumer's errors);
  // `sink` writes the ingestion table `spec` names; the records are decoded as `spec` says
  // (StreamDecodeOperator::Make's errors).
  static Result<std::unique_ptr<GroupIngestion>> Make(IngestionSpec spec,
                                                      std::map<std::string, std::string> source_options,
                                                      std::unique_ptr<IngestionSink> sink,
                                                      std::shared_ptr<FileSystem> fs, GroupIngestionConfig config);
  ~GroupIngestion();

  // Joins the group and ingests until Stop(), then leaves it. Errors: the consumer's, the sink's
  // (but for the concurrent modifications a takeover causes, which drop the batch and go on).
  Status Run();
  // Asks Run() to return after the batch in progress. Does not block; idempotent.
  void Stop() { stop_ = true; }

  int64_t batches_committed() const { return batch_id_; }
  // The decoding's figures of the last batch; read on Run()'s thread (the progress callback).
  const StreamDecodeOperator& decode() const { return *decode_; }
  int64_t batches_dropped() const { return dropped_; }

 private:
  GroupIngestion(IngestionSpec spec, std::map<std::string, std::string> source_options,
                 std::unique_ptr<StreamDecodeOperator> decode, std::unique_ptr<IngestionSink> sink,
                 std::shared_ptr<FileSystem> fs, GroupIngestionConfig config);
  using Place = std::pair<std::string, int32_t>;
  // The txn the table records for each of `partitions` (nullopt: none), read from a fresh
  // snapshot. INVALID_PIPELINE when the table may expire its txns.
  Result<std::map<Place, std::optional<int64_t>>> TableTxns(const std::vector<Place>& partitions);
  // One batch: read, decode, write, commit (or drop).
  Status RunBatch();
  // The writer of a batch whose first records have `schema`, which keeps the last offsets read
  // in `*ends`.
  Result<std::unique_ptr<engine::BatchWriter>> BeginBatch(const TypePtr& schema, const connectors::PartitionEnds* ends);
  // Reads every owned partition's txn from the table again and seeks to the offset after it (a
  // partition the table has none for goes back to where it started when it was assigned).
  Status Resynchronize();

  IngestionSpec spec_;
  std::map<std::string, std::string> source_options_;
  const StreamDecodeOperator* decode_;  // owned by decoding_
  engine::OperatorChain decoding_;
  std::unique_ptr<IngestionSink> sink_;
  std::shared_ptr<FileSystem> fs_;
  GroupIngestionConfig config_;
  std::unique_ptr<connectors::KafkaGroupConsumer> consumer_;
  // Per owned partition: the txn the table records (nullopt: none yet) and the offset the next
  // batch starts at.
  struct Owned {
    std::optional<int64_t> txn;
    int64_t next = 0;
  };
  std::map<Place, Owned> owned_;
  int64_t max_records_ = 0;  // per batch: max_offsets_per_trigger, read once the options are checked
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> batch_id_{0};
  std::atomic<int64_t> dropped_{0};
  std::string run_id_;
};

}  // namespace sluice::pipeline
