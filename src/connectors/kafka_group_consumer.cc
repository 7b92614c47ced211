#include "sluice/connectors/kafka_group_consumer.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <cstring>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "kafka_client.h"
#include "sluice/core/ascii.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/logging.h"

namespace sluice::connectors {
namespace {

// The first librdkafka release whose cooperative-sticky assignor survives a close before the first
// assignment.
constexpr int kCooperativeStickySafe = 0x020300ff;

Status InvalidOptions(std::string message) {
  return Status::Error(errors::kInvalidOptions, "kafka source of a workers group: " + std::move(message));
}

std::vector<TopicPartition> PartitionsOf(const rd_kafka_topic_partition_list_t* list) {
  std::vector<TopicPartition> partitions;
  for (int i = 0; i < list->cnt; ++i) partitions.push_back(TopicPartition{list->elems[i].topic, list->elems[i].partition});
  return partitions;
}

PartitionListPtr ListOf(const PartitionOffsets& offsets) {
  PartitionListPtr list(rd_kafka_topic_partition_list_new(static_cast<int>(offsets.size())),
                        &rd_kafka_topic_partition_list_destroy);
  for (const auto& [partition, offset] : offsets) {
    rd_kafka_topic_partition_list_add(list.get(), partition.topic.c_str(), partition.partition)->offset = offset;
  }
  return list;
}

}  // namespace

struct KafkaGroupConsumer::State {
  KafkaSourceConfig config;
  GroupMembership membership;
  StartPositions start_positions;
  std::unique_ptr<KafkaClient> client;
  TypePtr schema = KafkaRowSchema();
  std::set<TopicPartition> assignment;
  // What rebalances did during the Poll in progress.
  GroupPoll* poll = nullptr;
  Status failure;

  // The offsets `partitions` start at: the caller's, else starting_offsets, checked against the
  // partitions' watermarks.
  Result<PartitionOffsets> Resolve(const std::vector<TopicPartition>& partitions) {
    SLUICE_ASSIGN_OR_RETURN(PartitionOffsets known, start_positions(partitions));
    SLUICE_ASSIGN_OR_RETURN(WatermarkMap marks, client->QueryWatermarks(partitions));
    PartitionOffsets resolved;
    for (const TopicPartition& partition : partitions) {
      const Watermarks& mark = marks.at(partition);
      auto table = known.find(partition);
      int64_t position = table != known.end() ? table->second : StartingOffset(config, partition);
      if (position == kEarliest) position = mark.low;
      if (position == kLatest) position = mark.high;
      if (position < mark.low) {
        SLUICE_RETURN_IF_ERROR(client->DataLoss(partition, position, mark.low, "retention or deletion removed them"));
        position = mark.low;
      } else if (position > mark.high) {
        SLUICE_RETURN_IF_ERROR(client->DataLoss(partition, mark.high, position,
                                                "the partition now ends before the position already written"));
        position = mark.high;
      }
      resolved[partition] = position;
    }
    return resolved;
  }

  void OnRebalance(rd_kafka_t* rk, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* list) {
    const bool cooperative = std::strcmp(rd_kafka_rebalance_protocol(rk), "COOPERATIVE") == 0;
    const std::vector<TopicPartition> partitions = PartitionsOf(list);
    if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
      Result<PartitionOffsets> positions = Resolve(partitions);
      if (!positions.ok()) {
        if (failure.ok()) failure = positions.status();
      } else {
        for (int i = 0; i < list->cnt; ++i) {
          list->elems[i].offset = positions->at(TopicPartition{list->elems[i].topic, list->elems[i].partition});
        }
      }
      rd_kafka_error_t* error = nullptr;
      rd_kafka_resp_err_t assign_err = RD_KAFKA_RESP_ERR_NO_ERROR;
      if (cooperative) {
        error = rd_kafka_incremental_assign(rk, list);
      } else {
        assign_err = rd_kafka_assign(rk, list);
      }
      if (error != nullptr || assign_err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        std::string reason = error != nullptr ? rd_kafka_error_string(error) : rd_kafka_err2str(assign_err);
        if (error != nullptr) rd_kafka_error_destroy(error);
        if (failure.ok()) failure = Status::Error(errors::kKafkaRequestFailed, "cannot take the assigned partitions: " + reason);
        return;
      }
      assignment.insert(partitions.begin(), partitions.end());
      if (positions.ok() && poll != nullptr) poll->assigned.insert(positions->begin(), positions->end());
      LogInfo("{}: assigned {} partition(s): {}", membership.group_id, partitions.size(),
              FormatPartitionOffsets(positions.ok() ? *positions : PartitionOffsets{}));
    } else {
      const bool lost = rd_kafka_assignment_lost(rk);
      if (cooperative) {
        if (rd_kafka_error_t* error = rd_kafka_incremental_unassign(rk, list)) rd_kafka_error_destroy(error);
      } else {
        rd_kafka_assign(rk, nullptr);
      }
      for (const TopicPartition& partition : partitions) assignment.erase(partition);
      if (poll != nullptr) poll->revoked.insert(poll->revoked.end(), partitions.begin(), partitions.end());
      LogInfo("{}: {} {} partition(s)", membership.group_id, lost ? "lost" : "gave up", partitions.size());
    }
  }
};

Result<std::unique_ptr<KafkaGroupConsumer>> KafkaGroupConsumer::Make(const std::map<std::string, std::string>& options,
                                                                     GroupMembership membership,
                                                                     StartPositions start_positions) {
  SLUICE_ASSIGN_OR_RETURN(ValidatedOptions validated, ValidateOptions("kafka source", KafkaSourceOptions(), options));
  SLUICE_ASSIGN_OR_RETURN(KafkaSourceConfig config, MakeKafkaConfig(validated));
  if (!config.assigned.empty()) {
    return InvalidOptions("`assign` names partitions, but the group's broker assigns them to its members; give "
                          "`subscribe` or `subscribe_pattern`");
  }
  bool strategy_given = false, new_protocol = false;
  for (const auto& [property, value] : validated.WithPrefix("kafka.")) {
    const std::string lower = AsciiLower(property);
    if (lower == "group.instance.id" || lower == "group.protocol.type") {
      return InvalidOptions(fmt::format("`kafka.{}` cannot be set: the workers group manages it", property));
    }
    strategy_given = strategy_given || lower == "partition.assignment.strategy";
    new_protocol = new_protocol || (lower == "group.protocol" && AsciiLower(value) == "consumer");
  }
  std::vector<KafkaSetting> more = {{"group.id", membership.group_id, "", false},
                                    // Members learn of every record only through their own reads.
                                    {"enable.partition.eof", "false", "", false}};
  if (!membership.instance_id.empty()) more.push_back({"group.instance.id", membership.instance_id, "", false});
  // Cooperative rebalancing moves only the partitions that change owner; the others go on being
  // read. Before librdkafka 2.3.0 a cooperative-sticky member closed before its first assignment
  // aborts the process (librdkafka issue 4312), so older clients rebalance eagerly: every member
  // gives up everything at each rebalance, and its batch in progress is read again. The new
  // consumer protocol assigns on the broker and takes no strategy.
  if (!strategy_given && !new_protocol) {
    more.push_back({"partition.assignment.strategy",
                    rd_kafka_version() >= kCooperativeStickySafe ? "cooperative-sticky" : "roundrobin", "", false});
  }

  auto state = std::make_unique<State>();
  state->config = config;
  state->membership = std::move(membership);
  state->start_positions = std::move(start_positions);
  State* raw = state.get();
  SLUICE_ASSIGN_OR_RETURN(state->client,
                          KafkaClient::MakeConsumer(config, std::move(more),
                                                    [raw](rd_kafka_t* rk, rd_kafka_resp_err_t err,
                                                          rd_kafka_topic_partition_list_t* list) {
                                                      raw->OnRebalance(rk, err, list);
                                                    }));
  std::vector<std::string> topics = config.topics;
  if (config.pattern) {
    // librdkafka reads a leading '^' as a regular expression over topic names.
    topics = {"^(" + validated.GetString("subscribe_pattern") + ")$"};
  }
  PartitionListPtr subscription(rd_kafka_topic_partition_list_new(static_cast<int>(topics.size())),
                                &rd_kafka_topic_partition_list_destroy);
  for (const std::string& topic : topics) {
    rd_kafka_topic_partition_list_add(subscription.get(), topic.c_str(), RD_KAFKA_PARTITION_UA);
  }
  if (rd_kafka_resp_err_t err = rd_kafka_subscribe(state->client->get(), subscription.get());
      err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Error(errors::kKafkaRequestFailed,
                         fmt::format("cannot join consumer group {}: {}", state->membership.group_id,
                                     rd_kafka_err2str(err)));
  }
  return std::unique_ptr<KafkaGroupConsumer>(new KafkaGroupConsumer(std::move(state)));
}

KafkaGroupConsumer::KafkaGroupConsumer(std::unique_ptr<State> state) : state_(std::move(state)) {}

KafkaGroupConsumer::~KafkaGroupConsumer() {
  // Closing runs the last rebalance (giving the partitions up) through the callback.
  GroupPoll ignored;
  state_->poll = &ignored;
  state_->client.reset();
}

Result<GroupPoll> KafkaGroupConsumer::Poll(int64_t max_records, std::chrono::milliseconds wait) {
  State& state = *state_;
  GroupPoll result;
  state.poll = &result;
  struct Detach {
    State& state;
    ~Detach() { state.poll = nullptr; }
  } detach{state};
  rd_kafka_t* rk = state.client->get();
  KafkaRowBuilder builder(state.schema);
  const auto deadline = std::chrono::steady_clock::now() + wait;
  while (builder.rows() < max_records) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    const int timeout_ms = builder.rows() > 0 ? 0 : static_cast<int>(std::max<int64_t>(0, left.count()));
    MessagePtr message(rd_kafka_consumer_poll(rk, timeout_ms), &rd_kafka_message_destroy);
    SLUICE_RETURN_IF_ERROR(state.failure);
    if (!result.revoked.empty()) return result;  // what was read belongs to a batch being dropped
    if (message == nullptr) {
      rd_kafka_poll(rk, 0);  // the client's error events
      if (builder.rows() > 0 || std::chrono::steady_clock::now() >= deadline) break;
      continue;
    }
    if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      if (message->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) continue;
      rd_kafka_poll(rk, 0);
      if (state.client->events().AuthenticationFailure()) return state.client->RequestFailure("");
      // The client reconnects by itself after a failed connection or a broker that restarts.
      if (KafkaClient::Passing(message->err)) continue;
      return state.client->RequestFailure(fmt::format("reading from {} failed: {}", state.client->BootstrapServers(),
                                                      rd_kafka_message_errstr(message.get())));
    }
    state.client->events().ClearAuthenticationFailure();
    builder.Append(RecordOf(message.get()));
  }
  if (builder.rows() > 0) {
    SLUICE_ASSIGN_OR_RETURN(result.records, builder.Finish());
  }
  return result;
}

Status KafkaGroupConsumer::Seek(const PartitionOffsets& positions) {
  PartitionOffsets owned;
  for (const auto& [partition, offset] : positions) {
    if (state_->assignment.contains(partition)) owned[partition] = offset;
  }
  if (owned.empty()) return Status::OK();
  PartitionListPtr list = ListOf(owned);
  rd_kafka_error_t* error = rd_kafka_seek_partitions(state_->client->get(), list.get(), state_->config.timeout_ms);
  if (error != nullptr) {
    std::string reason = rd_kafka_error_string(error);
    rd_kafka_error_destroy(error);
    return Status::Error(errors::kKafkaRequestFailed, "cannot seek: " + reason);
  }
  for (int i = 0; i < list->cnt; ++i) {
    if (list->elems[i].err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return Status::Error(errors::kKafkaRequestFailed,
                           fmt::format("cannot seek {}[{}]: {}", list->elems[i].topic, list->elems[i].partition,
                                       rd_kafka_err2str(list->elems[i].err)));
    }
  }
  return Status::OK();
}

void KafkaGroupConsumer::CommitOffsets(const PartitionOffsets& next_offsets) {
  if (next_offsets.empty()) return;
  PartitionListPtr list = ListOf(next_offsets);
  if (rd_kafka_resp_err_t err = rd_kafka_commit(state_->client->get(), list.get(), /*async=*/1);
      err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    LogDebug("{}: offsets not committed to the group: {}", state_->membership.group_id, rd_kafka_err2str(err));
  }
}

bool KafkaGroupConsumer::AssignmentLost() const { return rd_kafka_assignment_lost(state_->client->get()) != 0; }

const std::set<TopicPartition>& KafkaGroupConsumer::assignment() const { return state_->assignment; }

PartitionOffsets KafkaGroupConsumer::LatestOffsets() const {
  PartitionOffsets latest;
  for (const TopicPartition& partition : state_->assignment) {
    int64_t low = 0, high = 0;
    if (rd_kafka_get_watermark_offsets(state_->client->get(), partition.topic.c_str(), partition.partition, &low,
                                       &high) == RD_KAFKA_RESP_ERR_NO_ERROR &&
        high >= 0) {
      latest[partition] = high;
    }
  }
  return latest;
}

std::string KafkaGroupConsumer::description() const {
  return "KafkaGroup[" + state_->membership.group_id + ", " + state_->config.description + "]";
}

}  // namespace sluice::connectors
