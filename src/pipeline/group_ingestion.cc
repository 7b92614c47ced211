#include "sluice/pipeline/group_ingestion.h"

#include <unistd.h>

#include <algorithm>

#include "sluice/connectors/kafka_group_consumer.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/logging.h"
#include "sluice/delta/snapshot.h"
#include "sluice/engine/checkpoint.h"

namespace sluice::pipeline {
namespace {

using Place = std::pair<std::string, int32_t>;

// Records per piece handed to the sink: it writes one while the next is read.
constexpr int64_t kPieceRows = 65536;
// Most records in one batch unless max_offsets_per_trigger says otherwise.
constexpr int64_t kDefaultMaxRecords = 1'000'000;
// With no trigger interval, how long a batch waits for more records once some came.
constexpr std::chrono::milliseconds kCatchUpWait{100};
// How long an idle member waits in one poll (Stop() is seen between polls).
constexpr std::chrono::milliseconds kIdleWait{500};

// The delta property that would let txns, the members' only record of their positions, expire.
constexpr std::string_view kTransactionRetention = "delta.setTransactionRetentionDuration";

connectors::PartitionOffsets OffsetsOf(const std::map<Place, int64_t>& places) {
  connectors::PartitionOffsets offsets;
  for (const auto& [place, offset] : places) offsets[{place.first, place.second}] = offset;
  return offsets;
}

// A concurrent modification is what another member's takeover of a partition looks like (and
// what a concurrent schema change or table creation by another member looks like): the batch is
// dropped and read again from the table's positions.
bool IsTakeover(const Status& status) {
  return status.error_class() == errors::kDeltaConcurrentModification ||
         status.error_class() == errors::kDeltaTableAlreadyExists;
}

int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::vector<std::unique_ptr<engine::Operator>> OnlyOperator(std::unique_ptr<engine::Operator> op) {
  std::vector<std::unique_ptr<engine::Operator>> operators;
  operators.push_back(std::move(op));
  return operators;
}

}  // namespace

GroupIngestion::GroupIngestion(IngestionSpec spec, std::map<std::string, std::string> source_options,
                               std::unique_ptr<StreamDecodeOperator> decode, std::unique_ptr<IngestionSink> sink,
                               std::shared_ptr<FileSystem> fs, GroupIngestionConfig config)
    : spec_(std::move(spec)),
      source_options_(std::move(source_options)),
      decode_(decode.get()),
      decoding_(OnlyOperator(std::move(decode))),
      sink_(std::move(sink)),
      fs_(std::move(fs)),
      config_(std::move(config)),
      run_id_(engine::NewUuid()) {}

GroupIngestion::~GroupIngestion() = default;

Result<std::unique_ptr<GroupIngestion>> GroupIngestion::Make(IngestionSpec spec,
                                                             std::map<std::string, std::string> source_options,
                                                             std::unique_ptr<IngestionSink> sink,
                                                             std::shared_ptr<FileSystem> fs,
                                                             GroupIngestionConfig config) {
  if (config.group_id.empty()) return Status::Error(errors::kInvalidArgument, "a workers group needs a group id");
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<StreamDecodeOperator> decode, StreamDecodeOperator::Make(spec));
  return std::unique_ptr<GroupIngestion>(new GroupIngestion(std::move(spec), std::move(source_options),
                                                            std::move(decode), std::move(sink), std::move(fs),
                                                            std::move(config)));
}

Result<std::map<Place, std::optional<int64_t>>> GroupIngestion::TableTxns(const std::vector<Place>& partitions) {
  delta::SnapshotPtr snapshot;
  SLUICE_ASSIGN_OR_RETURN(bool exists, fs_->Exists(spec_.table_path + "/_delta_log"));
  if (exists) {
    Result<delta::SnapshotPtr> loaded = delta::Snapshot::Load(fs_, spec_.table_path);
    if (loaded.ok()) {
      snapshot = std::move(loaded).value();
    } else if (loaded.status().error_class() != errors::kDeltaTableNotFound) {
      return loaded.status();
    }
  }
  if (snapshot != nullptr && snapshot->metadata().configuration.contains(std::string(kTransactionRetention))) {
    return Status::Error(errors::kInvalidPipeline,
                         "stream " + spec_.stream_id + ": its table " + spec_.table_path + " sets " +
                             std::string(kTransactionRetention) +
                             ", which may expire the txns that are a workers group's only record of what it wrote; "
                             "unset it to run the stream in a workers group");
  }
  std::map<Place, std::optional<int64_t>> txns;
  for (const Place& place : partitions) {
    const std::string app_id = connectors::PartitionAppId(spec_.stream_id, place.first, place.second);
    txns[place] = snapshot == nullptr ? std::nullopt : snapshot->TransactionVersion(app_id);
  }
  return txns;
}

Status GroupIngestion::Resynchronize() {
  std::vector<Place> places;
  for (const auto& [place, owned] : owned_) places.push_back(place);
  using Txns = std::map<Place, std::optional<int64_t>>;
  SLUICE_ASSIGN_OR_RETURN(Txns txns, TableTxns(places));
  std::map<Place, int64_t> seek;
  for (auto& [place, owned] : owned_) {
    owned.txn = txns[place];
    if (owned.txn) owned.next = *owned.txn + 1;
    seek[place] = owned.next;
  }
  return consumer_->Seek(OffsetsOf(seek));
}

Status GroupIngestion::Run() {
  connectors::GroupMembership membership{config_.group_id, config_.instance_id};
  Result<std::unique_ptr<connectors::KafkaGroupConsumer>> consumer = connectors::KafkaGroupConsumer::Make(
      source_options_, std::move(membership),
      [this](const std::vector<connectors::TopicPartition>& assigned) -> Result<connectors::PartitionOffsets> {
        std::vector<Place> places;
        for (const auto& partition : assigned) places.emplace_back(partition.topic, partition.partition);
        using Txns = std::map<Place, std::optional<int64_t>>;
        SLUICE_ASSIGN_OR_RETURN(Txns txns, TableTxns(places));
        // Where each starts comes back through the poll (GroupPoll::assigned): the table's txn + 1,
        // else starting_offsets.
        std::map<Place, int64_t> positions;
        for (const auto& [place, txn] : txns) {
          owned_[place].txn = txn;
          if (txn) positions[place] = *txn + 1;
        }
        return OffsetsOf(positions);
      });
  if (!consumer.ok()) return consumer.status().WithContext("stream " + spec_.stream_id);
  consumer_ = std::move(consumer).value();
  max_records_ = kDefaultMaxRecords;
  if (auto given = source_options_.find("max_offsets_per_trigger"); given != source_options_.end()) {
    max_records_ = std::stoll(given->second);  // a positive long: the consumer checked its options
  }
  SLUICE_RETURN_IF_ERROR(sink_->Open(engine::SinkContext{}));
  Status status = Status::OK();
  while (!stop_ && status.ok()) status = RunBatch();
  consumer_.reset();  // leaves the group: the partitions go to the other members now
  return status.ok() ? status : status.WithContext("stream " + spec_.stream_id);
}

Result<std::unique_ptr<engine::BatchWriter>> GroupIngestion::BeginBatch(const TypePtr& schema,
                                                                        const connectors::PartitionEnds* ends) {
  if (decoding_.input_schema() == nullptr) SLUICE_RETURN_IF_ERROR(decoding_.Bind(schema).status());
  SLUICE_RETURN_IF_ERROR(decoding_.BeginBatch(engine::BatchStart{batch_id_, NowMicros()}));
  IngestionSink::OwnedPartitions expected;
  for (const auto& [place, owned] : owned_) expected[place] = owned.txn;
  return sink_->BeginOwnedBatch(decoding_.output_schema(), std::move(expected), ends);
}

Status GroupIngestion::RunBatch() {
  const auto started = std::chrono::steady_clock::now();
  const int64_t started_micros = NowMicros();
  const bool timed = config_.trigger_interval.count() > 0;
  const auto deadline = started + config_.trigger_interval;

  std::unique_ptr<engine::BatchWriter> writer;
  connectors::PartitionEnds lasts;  // the last offset read of each partition
  int64_t rows = 0;
  auto drop = [&](const std::string& why) {
    if (rows > 0) {
      ++dropped_;
      LogInfo("stream {}: batch of {} records dropped ({}); its partitions are read again from the table",
              spec_.stream_id, rows, why);
    }
  };
  while (!stop_ && rows < max_records_) {
    std::chrono::milliseconds wait = rows == 0 ? kIdleWait : kCatchUpWait;
    if (timed) {
      wait = std::max(std::chrono::milliseconds(0),
                      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()));
    }
    SLUICE_ASSIGN_OR_RETURN(connectors::GroupPoll polled,
                            consumer_->Poll(std::min(kPieceRows, max_records_ - rows), wait));
    for (const auto& [partition, offset] : polled.assigned) owned_[{partition.topic, partition.partition}].next = offset;
    if (!polled.revoked.empty()) {
      // What this member owns now: one poll may revoke a partition and assign it again (an
      // eager rebalance), so the revoked list alone would drop partitions it still reads.
      std::erase_if(owned_, [&](const auto& entry) {
        return !consumer_->assignment().contains({entry.first.first, entry.first.second});
      });
      drop("partitions were revoked");
      // Every owned partition goes back to where this batch started (or where it was just
      // assigned): records read since, the poll's last one included, are read again.
      std::map<Place, int64_t> seek;
      for (const auto& [place, owned] : owned_) seek[place] = owned.next;
      return consumer_->Seek(OffsetsOf(seek));
    }
    if (polled.records != nullptr) {
      Status added = Status::OK();
      if (writer == nullptr) {
        Result<std::unique_ptr<engine::BatchWriter>> begun = BeginBatch(polled.records->schema(), &lasts);
        if (begun.ok()) writer = std::move(begun).value();
        added = begun.status();
      }
      rows += polled.records->num_rows();
      if (added.ok()) added = connectors::AddPartitionEnds(*polled.records, &lasts);
      if (added.ok()) {
        added = decoding_.Push(polled.records, [&writer](BatchPtr decoded) { return writer->Add(std::move(decoded)); });
      }
      if (!added.ok()) {
        if (!IsTakeover(added)) return added;
        drop(std::string(added.message()));
        return Resynchronize();
      }
    } else if (rows > 0 && !timed) {
      break;  // caught up
    }
    if (timed && std::chrono::steady_clock::now() >= deadline) break;
  }
  if (writer == nullptr) return Status::OK();
  if (consumer_->AssignmentLost()) {
    // A member paused past its session: the table would refuse the commit of a partition another
    // member has written meanwhile, but not of one it has yet to write. Dropping it spares that
    // member a batch it would have to read again.
    drop("this member's session expired");
    return Resynchronize();
  }
  const auto commit_started = std::chrono::steady_clock::now();
  if (Status committed = writer->Commit(); !committed.ok()) {
    if (!IsTakeover(committed)) return committed;
    drop(std::string(committed.message()));
    return Resynchronize();
  }
  // Each partition's batch started where this member owned it from (owned_ is moved on only now).
  std::map<Place, int64_t> starts, next;
  for (const auto& [place, last] : lasts) {
    starts[place] = owned_[place].next;
    owned_[place] = Owned{last, last + 1};
    next[place] = last + 1;
  }
  consumer_->CommitOffsets(OffsetsOf(next));

  const auto ended = std::chrono::steady_clock::now();
  auto ms = [](auto duration) { return std::chrono::duration_cast<std::chrono::milliseconds>(duration).count(); };
  engine::QueryProgress progress;
  progress.id = config_.group_id;
  progress.run_id = run_id_;
  progress.name = spec_.stream_id;
  progress.timestamp_micros = started_micros;
  progress.batch_id = batch_id_++;
  progress.num_input_rows = rows;
  const double seconds = std::max(1e-6, std::chrono::duration<double>(ended - started).count());
  progress.input_rows_per_second = progress.processed_rows_per_second = static_cast<double>(rows) / seconds;
  progress.duration_ms.add_batch = ms(ended - commit_started);
  progress.duration_ms.get_batch = ms(commit_started - started);
  progress.duration_ms.trigger_execution = ms(ended - started);
  engine::SourceProgress source;
  source.description = consumer_->description();
  source.start_offset = connectors::FormatPartitionOffsets(OffsetsOf(starts));
  source.end_offset = connectors::FormatPartitionOffsets(OffsetsOf(next));
  source.latest_offset = connectors::FormatPartitionOffsets(consumer_->LatestOffsets());
  source.num_input_rows = rows;
  source.input_rows_per_second = source.processed_rows_per_second = progress.input_rows_per_second;
  progress.sources.push_back(std::move(source));
  progress.sink.description = sink_->description();
  progress.sink.num_output_rows = rows - decode_->last_stats().filtered_out;
  if (config_.on_progress) config_.on_progress(progress);
  return Status::OK();
}

}  // namespace sluice::pipeline
