#include "sluice/connectors/kafka_source.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <thread>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "kafka_client.h"
#include "sluice/connectors/kafka_offsets.h"
#include "sluice/core/builder.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/file_system.h"
#include "sluice/core/logging.h"

namespace sluice::connectors {
namespace {

// Most bytes of records held between batches (read beyond one batch's range, kept for the
// next): beyond it they are dropped and the next batch assigns its partitions afresh.
constexpr int64_t kMaxHeldBytes = 16 << 20;

// Records per piece of a read: the engine writes one piece while the next is read, so a batch
// holds a few pieces in memory rather than all its records.
constexpr int64_t kPieceRows = 65536;

Status RequestFailed(std::string message) { return Status::Error(errors::kKafkaRequestFailed, std::move(message)); }

// A record kept from one batch for the next, copied out of the client's message: a message pins
// the whole fetch response it came in (megabytes), so holding messages would hold those.
class HeldRecord {
 public:
  explicit HeldRecord(const KafkaRecord& record)
      : topic_(record.topic),
        key_(record.key.value_or("")),
        value_(record.value.value_or("")),
        has_key_(record.key.has_value()),
        has_value_(record.value.has_value()),
        partition_(record.partition),
        offset_(record.offset),
        eof_(record.eof),
        timestamp_ms_(record.timestamp_ms),
        headers_(record.headers == nullptr ? nullptr : rd_kafka_headers_copy(record.headers), &rd_kafka_headers_destroy) {}

  KafkaRecord view() const {
    KafkaRecord record;
    record.topic = topic_;
    record.partition = partition_;
    record.offset = offset_;
    record.eof = eof_;
    if (has_key_) record.key = key_;
    if (has_value_) record.value = value_;
    record.timestamp_ms = timestamp_ms_;
    record.headers = headers_.get();
    return record;
  }
  int64_t bytes() const { return static_cast<int64_t>(key_.size() + value_.size()); }

 private:
  std::string topic_;
  std::string key_;
  std::string value_;
  bool has_key_;
  bool has_value_;
  int32_t partition_;
  int64_t offset_;
  bool eof_;
  int64_t timestamp_ms_;
  std::unique_ptr<rd_kafka_headers_t, decltype(&rd_kafka_headers_destroy)> headers_;
};


class KafkaSource final : public engine::Source {
 public:
  explicit KafkaSource(KafkaSourceConfig config)
      : config_(std::move(config)), schema_(KafkaRowSchema()) {}

  std::string description() const override { return "KafkaSource[" + config_.description + "]"; }
  TypePtr schema() const override { return schema_; }

  Status Open(const engine::SourceContext& context) override {
    // A group id is required by the consumer API, but the source only ever assigns partitions:
    // it never joins the group and never commits offsets to it.
    SLUICE_ASSIGN_OR_RETURN(client_, KafkaClient::MakeConsumer(
                                         config_, {KafkaSetting{"group.id", "sluice-" + context.query_id, "", false}}));
    file_system_ = context.file_system;
    initial_offset_path_ = context.state_directory + "/initial-offsets";
    return Status::OK();
  }

  // Resolved once, on the first run, and kept: `latest` must not move on a restart.
  Result<std::string> InitialOffset() override {
    Result<std::string> kept = file_system_->ReadFile(initial_offset_path_);
    if (kept.ok()) {
      SLUICE_RETURN_IF_ERROR(
          ParsePartitionOffsets(*kept, initial_offset_path_, 0, errors::kCheckpointCorrupt).status());
      return *kept;
    }
    if (kept.status().error_class() != errors::kFileNotFound) return kept.status();
    SLUICE_ASSIGN_OR_RETURN(std::vector<TopicPartition> partitions, DiscoverPartitions(nullptr));
    PartitionOffsets offsets;
    std::vector<std::pair<TopicPartition, int64_t>> to_resolve;  // (partition, kEarliest or kLatest)
    for (const TopicPartition& partition : partitions) {
      const int64_t wanted = StartingOffset(config_, partition);
      if (wanted >= 0) {
        offsets[partition] = wanted;
      } else {
        to_resolve.emplace_back(partition, wanted);
      }
    }
    std::vector<TopicPartition> queried;
    for (const auto& [partition, wanted] : to_resolve) queried.push_back(partition);
    SLUICE_ASSIGN_OR_RETURN(WatermarkMap marks, client_->QueryWatermarks(queried));
    for (const auto& [partition, wanted] : to_resolve) {
      const Watermarks& mark = marks.at(partition);
      offsets[partition] = wanted == kEarliest ? mark.low : mark.high;
    }
    std::string text = FormatPartitionOffsets(offsets);
    Status written = file_system_->PutIfAbsent(initial_offset_path_, text);
    if (!written.ok()) return written;
    return text;
  }

  Result<std::string> LatestOffset(const std::string& start_text, const engine::ReadLimit& limit) override {
    SLUICE_ASSIGN_OR_RETURN(PartitionOffsets start, ParseOffset(start_text));
    std::set<std::string> listed_topics;
    SLUICE_ASSIGN_OR_RETURN(std::vector<TopicPartition> partitions, DiscoverPartitions(&listed_topics));
    std::optional<PartitionOffsets> bound;
    if (limit.not_beyond) {
      SLUICE_ASSIGN_OR_RETURN(bound, ParseOffset(*limit.not_beyond));
    }
    Result<WatermarkMap> queried = client_->QueryWatermarks(partitions);
    if (!queried.ok()) {
      // A topic deleted between the listing and the query fails the query: list again, and go on
      // without the topics gone (below); any other failure stands.
      std::set<std::string> relisted;
      SLUICE_ASSIGN_OR_RETURN(std::vector<TopicPartition> now, DiscoverPartitions(&relisted));
      if (std::all_of(partitions.begin(), partitions.end(),
                      [&](const TopicPartition& p) { return relisted.contains(p.topic); })) {
        return queried.status();
      }
      listed_topics = std::move(relisted);
      partitions = std::move(now);
      queried = client_->QueryWatermarks(partitions);
    }
    SLUICE_ASSIGN_OR_RETURN(WatermarkMap all_marks, std::move(queried));
    // A partition whose topic the cluster no longer lists went with its deleted topic: the position
    // forgets it (a topic made again under that name is new, read from its start). One the cluster
    // lists but cannot answer for now keeps its position.
    PartitionOffsets end = start;
    if (config_.assigned.empty()) {
      for (const auto& [partition, position] : start) {
        if (listed_topics.contains(partition.topic)) continue;
        SLUICE_RETURN_IF_ERROR(client_->PartitionGone(partition, position));
        end.erase(partition);
      }
    }
    std::vector<std::pair<TopicPartition, int64_t>> available;  // (partition, records to read)
    PartitionOffsets latest;
    for (const auto& [partition, marks] : all_marks) latest[partition] = marks.high;
    latest_seen_ = FormatPartitionOffsets(latest);
    for (const TopicPartition& partition : partitions) {
      auto known = start.find(partition);
      const bool is_new = known == start.end();
      const Watermarks& marks = all_marks.at(partition);
      // A new partition starts at its earliest offset; it enters the offsets once it has records.
      int64_t from = is_new ? 0 : known->second;
      if (is_new && marks.high <= marks.low) continue;
      int64_t until = marks.high;
      if (until < from) {
        SLUICE_RETURN_IF_ERROR(
            client_->DataLoss(partition, until, from, "the partition now ends before the position already read"));
        from = until;
      }
      if (bound) {
        auto limit_offset = bound->find(partition);
        until = limit_offset == bound->end() ? from : std::min(until, std::max(limit_offset->second, from));
      }
      if (until <= from) {
        if (!is_new) end[partition] = from;
        continue;
      }
      end[partition] = from;
      available.emplace_back(partition, until - from);
    }
    int64_t total = 0;
    for (const auto& [partition, count] : available) total += count;
    if (!limit.all_available && config_.max_offsets_per_trigger && total > *config_.max_offsets_per_trigger) {
      SpreadLimit(*config_.max_offsets_per_trigger, total, &available);
    }
    for (const auto& [partition, count] : available) end[partition] += count;
    return FormatPartitionOffsets(end);
  }

  std::optional<std::string> ReportLatestOffset() const override { return latest_seen_; }

  Result<std::vector<BatchPtr>> Read(const std::string& start_text, const std::string& end_text) override {
    return engine::CollectPieces(
        [&](const engine::PieceConsumer& consume) { return ReadPieces(start_text, end_text, consume); });
  }

  Status ReadPieces(const std::string& start_text, const std::string& end_text,
                    const engine::PieceConsumer& consume) override {
    SLUICE_ASSIGN_OR_RETURN(PartitionOffsets start, ParseOffset(start_text));
    SLUICE_ASSIGN_OR_RETURN(PartitionOffsets end, ParseOffset(end_text));
    // The range to read per partition, after data-loss checks.
    std::map<TopicPartition, std::pair<int64_t, int64_t>> ranges;
    int64_t rows = 0;
    bool caught_up = true;
    std::vector<TopicPartition> to_read;
    for (const auto& [partition, until] : end) {
      auto known = start.find(partition);
      if (until > (known == start.end() ? 0 : known->second)) to_read.push_back(partition);
    }
    SLUICE_ASSIGN_OR_RETURN(WatermarkMap all_marks, client_->QueryWatermarks(to_read));
    for (const TopicPartition& partition : to_read) {
      const int64_t until = end.at(partition);
      auto known = start.find(partition);
      int64_t from = known == start.end() ? 0 : known->second;
      const Watermarks& marks = all_marks.at(partition);
      if (from < marks.low) {
        SLUICE_RETURN_IF_ERROR(client_->DataLoss(partition, from, std::min(marks.low, until), "retention or deletion removed them"));
        from = marks.low;
      }
      int64_t readable = std::min(until, marks.high);
      if (readable < until) {
        SLUICE_RETURN_IF_ERROR(
            client_->DataLoss(partition, std::max(readable, from), until, "the partition now ends before them"));
      }
      if (readable <= from) continue;
      if (readable < marks.high) caught_up = false;
      ranges[partition] = {from, readable};
      rows += readable - from;
    }
    if (ranges.empty()) return Status::OK();
    return Consume(ranges, rows, caught_up, consume);
  }

  Status Commit(const std::string&) override { return Status::OK(); }

 private:
  Result<PartitionOffsets> ParseOffset(const std::string& text) const {
    return ParsePartitionOffsets(text, "kafka source offset", 0, errors::kSourceOffsetInvalid);
  }

  // The partitions of the subscription as the cluster knows them now; `listed_topics` (when not
  // null) gets every topic the cluster lists, answering for it or not.
  Result<std::vector<TopicPartition>> DiscoverPartitions(std::set<std::string>* listed_topics) {
    if (!config_.assigned.empty()) return config_.assigned;
    const rd_kafka_metadata_t* metadata = nullptr;
    rd_kafka_resp_err_t err =
        client_->WithinTimeout([&](int wait_ms) { return rd_kafka_metadata(client_->get(), 1, nullptr, &metadata, wait_ms); });
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return client_->RequestFailure(fmt::format("cannot read the topic list from {}: {}", client_->BootstrapServers(),
                                        rd_kafka_err2str(err)));
    }
    std::unique_ptr<const rd_kafka_metadata_t, decltype(&rd_kafka_metadata_destroy)> owned(metadata,
                                                                                          &rd_kafka_metadata_destroy);
    std::vector<TopicPartition> partitions;
    for (int t = 0; t < metadata->topic_cnt; ++t) {
      const rd_kafka_metadata_topic_t& topic = metadata->topics[t];
      if (listed_topics != nullptr && topic.err != RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
        listed_topics->insert(topic.topic);
      }
      if (topic.err != RD_KAFKA_RESP_ERR_NO_ERROR || !Subscribed(topic.topic)) continue;
      for (int p = 0; p < topic.partition_cnt; ++p) {
        partitions.push_back(TopicPartition{topic.topic, topic.partitions[p].id});
      }
    }
    std::sort(partitions.begin(), partitions.end());
    return partitions;
  }

  bool Subscribed(std::string_view topic) const {
    if (config_.pattern) {
      return !topic.starts_with("__") && std::regex_match(topic.begin(), topic.end(), *config_.pattern);
    }
    return std::find(config_.topics.begin(), config_.topics.end(), topic) != config_.topics.end();
  }

  // Cuts `available` to `limit` records in all, in proportion to what each partition has; the
  // remainder of the rounding goes to the first partitions, so exactly `limit` are planned.
  static void SpreadLimit(int64_t limit, int64_t total, std::vector<std::pair<TopicPartition, int64_t>>* available) {
    int64_t planned = 0;
    std::vector<int64_t> wanted;
    for (auto& [partition, count] : *available) {
      int64_t share = static_cast<int64_t>(static_cast<int128_t>(limit) * count / total);
      wanted.push_back(count);
      count = share;
      planned += share;
    }
    for (size_t i = 0; planned < limit && i < available->size(); ++i) {
      int64_t extra = std::min(limit - planned, wanted[i] - (*available)[i].second);
      (*available)[i].second += extra;
      planned += extra;
    }
  }

  // Reads `ranges` (partition -> [from, until)). The partitions stay assigned after the batch
  // when it left records behind (`caught_up` false): the next batch normally starts where this one
  // ended, and then finds them prefetched instead of fetching them again after a new assignment.
  // A caught-up source unassigns, so that an idle query does not poll the brokers.
  Status Consume(const std::map<TopicPartition, std::pair<int64_t, int64_t>>& ranges, int64_t rows, bool caught_up,
                 const engine::PieceConsumer& consume) {
    std::map<TopicPartition, int64_t> starts;
    for (const auto& [partition, range] : ranges) starts[partition] = range.first;
    if (starts != kept_) {
      Unassign();
      PartitionListPtr assignment(rd_kafka_topic_partition_list_new(static_cast<int>(ranges.size())),
                                  &rd_kafka_topic_partition_list_destroy);
      for (const auto& [partition, from] : starts) {
        rd_kafka_topic_partition_list_add(assignment.get(), partition.topic.c_str(), partition.partition)->offset =
            from;
      }
      rd_kafka_resp_err_t err = rd_kafka_assign(client_->get(), assignment.get());
      if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        return RequestFailed(fmt::format("cannot assign partitions: {}", rd_kafka_err2str(err)));
      }
    }
    kept_.clear();
    Status read = ConsumeAssigned(ranges, rows, consume);
    if (!read.ok() || caught_up || held_bytes_ > kMaxHeldBytes) {
      Unassign();
      return read;
    }
    for (const auto& [partition, range] : ranges) kept_[partition] = range.second;
    return Status::OK();
  }

  void Unassign() {
    held_.clear();
    held_bytes_ = 0;
    kept_.clear();
    rd_kafka_assign(client_->get(), nullptr);
  }

  // Hands the records of `ranges` (`rows` of them at most) to `consume` in pieces of at most
  // kPieceRows.
  Status ConsumeAssigned(const std::map<TopicPartition, std::pair<int64_t, int64_t>>& ranges, int64_t rows,
                         const engine::PieceConsumer& consume) {
    // Partitions not yet read to their end, with the topic name as it goes into the rows.
    std::map<std::pair<std::string_view, int32_t>, int64_t> pending;
    for (const auto& [partition, range] : ranges) pending[{partition.topic, partition.partition}] = range.second;
    std::optional<KafkaRowBuilder> builder;
    int64_t handed_rows = 0;  // in the pieces already handed over
    bool bytes_reserved = false;
    auto start_piece = [&] {
      builder.emplace(schema_);
      builder->Reserve(std::min(rows - handed_rows, kPieceRows));
      bytes_reserved = false;
    };
    auto hand_over = [&]() -> Status {
      handed_rows += builder->rows();
      SLUICE_ASSIGN_OR_RETURN(BatchPtr piece, builder->Finish());
      return consume(std::move(piece));
    };
    start_piece();
    // Messages arrive in runs of one partition: the last lookup is reused while it lasts.
    auto last = pending.end();
    // Takes the next record of the consumer's stream. One beyond its partition's range is held
    // for the next batch, in stream order, unless too much is held already.
    auto take = [&](const KafkaRecord& record) {
      if (last == pending.end() || last->first.second != record.partition || last->first.first != record.topic) {
        last = pending.find({record.topic, record.partition});
      }
      if (last != pending.end()) {
        // At the end of the partition, the record's offset is the next one to be written:
        // offsets up to it that were not seen are gaps (compaction, transaction markers).
        if (record.offset < last->second) {
          if (record.eof) return;
          builder->Append(record);
          if (record.offset + 1 >= last->second) {
            pending.erase(last);
            last = pending.end();
          }
          return;
        }
        pending.erase(last);
        last = pending.end();
      }
      if (held_bytes_ > kMaxHeldBytes) return;
      held_.emplace_back(record);
      held_bytes_ += held_.back().bytes();
    };
    std::vector<HeldRecord> replay = std::move(held_);
    held_.clear();
    held_bytes_ = 0;
    for (const HeldRecord& record : replay) take(record.view());
    replay.clear();

    using Clock = std::chrono::steady_clock;
    // The deadline moves with progress: a slow but steady read never times out.
    auto deadline = Clock::now() + std::chrono::milliseconds(config_.timeout_ms);
    // Messages are taken from the consumer queue many at a time: one lock and wake-up per call
    // instead of per message, and one clock read per call.
    std::unique_ptr<rd_kafka_queue_t, decltype(&rd_kafka_queue_destroy)> queue(
        rd_kafka_queue_get_consumer(client_->get()), &rd_kafka_queue_destroy);
    constexpr size_t kMessagesPerCall = 4096;
    std::vector<rd_kafka_message_t*> messages(kMessagesPerCall);
    while (!pending.empty()) {
      if (Clock::now() >= deadline) {
        return client_->RequestFailure(fmt::format("reading {} partitions from {} made no progress within {} ms",
                                          pending.size(), client_->BootstrapServers(), config_.timeout_ms));
      }
      // The call waits until it has as many messages as asked for (or the timeout): asking for no
      // more than the range still holds returns as soon as the range is read, instead of idling a
      // whole timeout at the end of every batch (the real_time trigger reads small ranges often).
      const int64_t taken = handed_rows + builder->rows();
      const size_t wanted = static_cast<size_t>(std::clamp<int64_t>(rows - taken, 1, static_cast<int64_t>(kMessagesPerCall)));
      ssize_t count = rd_kafka_consume_batch_queue(queue.get(), 10, messages.data(), wanted);
      if (count < 0) return client_->RequestFailure(fmt::format("reading from {} failed", client_->BootstrapServers()));
      if (count == 0) {
        rd_kafka_poll(client_->get(), 0);
        if (client_->events().AuthenticationFailure()) return client_->RequestFailure("");
      } else {
        client_->events().ClearAuthenticationFailure();
      }
      Status failure = Status::OK();
      const size_t pending_before = pending.size();
      for (ssize_t i = 0; i < count; ++i) {
        MessagePtr message(messages[i], &rd_kafka_message_destroy);
        // After a failure the rest of the call's messages are only released.
        if (!failure.ok()) continue;
        if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR && message->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
          failure = RequestFailed(
              fmt::format("reading from {} failed: {}", client_->BootstrapServers(), rd_kafka_message_errstr(message.get())));
          continue;
        }
        if (message->rkt != nullptr) take(RecordOf(message.get()));
      }
      SLUICE_RETURN_IF_ERROR(failure);
      if (!bytes_reserved && builder->rows() > 0) {
        builder->ReserveBytesLikeSoFar(std::max<int64_t>(0, std::min(rows - handed_rows, kPieceRows) - builder->rows()));
        bytes_reserved = true;
      }
      if (handed_rows + builder->rows() > taken || pending.size() < pending_before) {
        deadline = Clock::now() + std::chrono::milliseconds(config_.timeout_ms);
      }
      // A piece may overshoot kPieceRows by the rest of one call's messages.
      if (builder->rows() >= kPieceRows && !pending.empty()) {
        SLUICE_RETURN_IF_ERROR(hand_over());
        start_piece();
      }
    }
    if (builder->rows() > 0) return hand_over();
    return Status::OK();
  }

  KafkaSourceConfig config_;
  TypePtr schema_;
  std::unique_ptr<KafkaClient> client_;
  // The high watermarks the last LatestOffset saw (ReportLatestOffset).
  std::optional<std::string> latest_seen_;
  std::shared_ptr<FileSystem> file_system_;
  std::string initial_offset_path_;
  // Where each kept partition's next batch must start for the assignment to be reused; empty
  // when nothing is kept.
  std::map<TopicPartition, int64_t> kept_;
  // Records taken from the consumer beyond their partition's range, in stream order.
  std::vector<HeldRecord> held_;
  int64_t held_bytes_ = 0;
};

}  // namespace

Status RegisterKafkaSource(engine::Registry* registry) {
  return registry->RegisterSource(engine::SourceFormat{
      .name = "kafka",
      .options = KafkaSourceOptions(),
      .error_class = errors::kInvalidOptions,
      .make = [](const ValidatedOptions& options) -> Result<std::unique_ptr<engine::Source>> {
        SLUICE_ASSIGN_OR_RETURN(KafkaSourceConfig config, MakeKafkaConfig(options));
        return std::unique_ptr<engine::Source>(new KafkaSource(std::move(config)));
      },
  });
}

}  // namespace sluice::connectors
