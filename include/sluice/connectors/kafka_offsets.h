// Kafka source positions and their JSON text, shared by the source's options and its offsets.
//
//   {"orders":{"0":42,"1":17}}   next offset per partition (offsets, starting_offsets)
//   {"orders":[0,1]}             partitions (the `assign` option)
//
// Formatting sorts topics and partitions, so equal positions give equal text. Parsing checks
// every value; a malformed document fails with the caller's error class.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sluice/core/status.h"

namespace sluice::connectors {

struct TopicPartition {
  std::string topic;
  int32_t partition = 0;
  auto operator<=>(const TopicPartition&) const = default;
};

// Next offset to read, per partition. In starting_offsets, -2 means earliest and -1 latest.
using PartitionOffsets = std::map<TopicPartition, int64_t>;

std::string FormatPartitionOffsets(const PartitionOffsets& offsets);
// `what` names the text in errors ("kafka source offset", "starting_offsets"). Offsets below
// `min_offset` are refused.
Result<PartitionOffsets> ParsePartitionOffsets(std::string_view text, std::string_view what, int64_t min_offset,
                                               std::string_view error_class);
// The `assign` option: at least one partition, none negative.
Result<std::vector<TopicPartition>> ParsePartitionList(std::string_view text, std::string_view error_class);

}  // namespace sluice::connectors
