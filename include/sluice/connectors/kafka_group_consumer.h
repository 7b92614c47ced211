// KafkaGroupConsumer: one member of a Kafka consumer group reading the topics of a `kafka`
// source's options, for a stream run by a workers group (docs/scale-out.md). The broker decides
// who reads which partition (cooperative-sticky assignment with librdkafka 2.3.0 and later,
// roundrobin before, unless `kafka.partition.assignment.strategy` says otherwise;
// `kafka.group.protocol: consumer` selects the new consumer protocol); the caller decides where
// each partition starts.
//
// Positions: when partitions are assigned, `StartPositions` is asked for the next offset of each
// (the one the caller's table records); a partition it leaves out starts at `starting_offsets`
// (earliest, latest, or its JSON entry). Every position is resolved to a number against the
// partition's watermarks and checked: one before the earliest offset still held is data loss
// (KAFKA_DATA_LOSS when `fail_on_data_loss`, else skipped to the earliest with a warning), one
// beyond the partition's end is refused the same way (the topic was recreated, or the position
// is another cluster's). Offsets are committed to the group only by CommitOffsets, for lag
// dashboards; they are never read back.
//
// Options: those of the `kafka` source (kafka_source.h), but for `assign` (a group member is
// given its partitions) and the settings the consumer makes itself (`kafka.group.id`,
// `kafka.group.instance.id`, `kafka.enable.auto.commit`, ...), which are INVALID_OPTIONS.
//
// Not thread-safe: every call, and the StartPositions callback, run on the caller's thread
// (rebalances are handled inside Poll).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "sluice/connectors/kafka_offsets.h"
#include "sluice/core/record_batch.h"
#include "sluice/core/status.h"

namespace sluice::connectors {

struct GroupMembership {
  std::string group_id;
  // group.instance.id: a member that restarts with the same id within the session timeout keeps
  // its partitions without a rebalance. Empty: a dynamic member.
  std::string instance_id;
};

// What one Poll brought.
struct GroupPoll {
  // The records read, with the `kafka` source's columns; null when none.
  BatchPtr records;
  // Partitions taken away during the poll (revoked, or lost when the member's session expired).
  // Records of the poll are then dropped, and the caller must treat the records it took before
  // as unread: it no longer owns some of them.
  std::vector<TopicPartition> revoked;
  // Partitions given during the poll, with the offset each starts at.
  PartitionOffsets assigned;
};

class KafkaGroupConsumer {
 public:
  // The next offset of each partition in `assigned` that the caller knows; a failure ends Poll.
  using StartPositions = std::function<Result<PartitionOffsets>(const std::vector<TopicPartition>& assigned)>;

  // Checks the options (INVALID_OPTIONS, as the `kafka` source does) and joins the group.
  static Result<std::unique_ptr<KafkaGroupConsumer>> Make(const std::map<std::string, std::string>& options,
                                                          GroupMembership membership, StartPositions start_positions);
  // Leaves the group (its partitions go to the other members at once).
  ~KafkaGroupConsumer();

  // Up to `max_records` records, waiting up to `wait` for the first; returns early when a
  // rebalance revokes partitions. KAFKA_REQUEST_FAILED or KAFKA_AUTHENTICATION_FAILED when the
  // cluster fails the consumer, KAFKA_DATA_LOSS (see above), and StartPositions' failures.
  Result<GroupPoll> Poll(int64_t max_records, std::chrono::milliseconds wait);
  // Moves owned partitions back to the given next offsets (the records after them are read
  // again; those already fetched are dropped).
  Status Seek(const PartitionOffsets& positions);
  // Records the next offsets in the group, asynchronously; failures are only logged.
  void CommitOffsets(const PartitionOffsets& next_offsets);
  // Whether the client knows this member's session expired (its partitions went to others) before
  // the rebalance that says so has come through Poll.
  bool AssignmentLost() const;
  // The partitions this member owns now.
  const std::set<TopicPartition>& assignment() const;
  // The latest offset of each owned partition, as the client last heard it (no request).
  PartitionOffsets LatestOffsets() const;
  std::string description() const;

 private:
  struct State;
  explicit KafkaGroupConsumer(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace sluice::connectors
