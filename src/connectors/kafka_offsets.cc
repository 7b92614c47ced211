#include "sluice/connectors/kafka_offsets.h"

#include <simdjson.h>

#include <charconv>
#include <limits>

#include <fmt/core.h>

#include "sluice/core/error_classes.h"

namespace sluice::connectors {
namespace {

// Kafka topic names are [a-zA-Z0-9._-]; quotes and backslashes are escaped all the same, so any
// name round-trips.
void AppendJsonString(std::string* out, std::string_view text) {
  out->push_back('"');
  for (char c : text) {
    if (c == '"' || c == '\\') out->push_back('\\');
    out->push_back(c);
  }
  out->push_back('"');
}

Status Malformed(std::string_view what, std::string_view text, std::string_view expected,
                 std::string_view error_class) {
  return Status::Error(error_class, fmt::format("{} is not {}: {}", what, expected, text));
}

Result<int32_t> ParsePartitionNumber(std::string_view digits) {
  int32_t partition = -1;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), partition);
  if (ec != std::errc() || end != digits.data() + digits.size() || partition < 0) {
    return Status::Error(errors::kInvalidArgument, "not a partition number");
  }
  return partition;
}

}  // namespace

std::string FormatPartitionOffsets(const PartitionOffsets& offsets) {
  std::string out = "{";
  const std::string* topic = nullptr;
  for (const auto& [partition, offset] : offsets) {
    if (topic == nullptr || *topic != partition.topic) {
      if (topic != nullptr) out += "},";
      AppendJsonString(&out, partition.topic);
      out += ":{";
      topic = &partition.topic;
    } else {
      out += ',';
    }
    out += fmt::format("\"{}\":{}", partition.partition, offset);
  }
  if (topic != nullptr) out += '}';
  out += '}';
  return out;
}

Result<PartitionOffsets> ParsePartitionOffsets(std::string_view text, std::string_view what, int64_t min_offset,
                                               std::string_view error_class) {
  constexpr std::string_view kExpected = R"(JSON like {"topic":{"0":42,"1":17}})";
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  simdjson::dom::object topics;
  if (parser.parse(simdjson::padded_string(text)).get(doc) != simdjson::SUCCESS ||
      doc.get(topics) != simdjson::SUCCESS) {
    return Malformed(what, text, kExpected, error_class);
  }
  PartitionOffsets offsets;
  for (auto [topic, partitions_value] : topics) {
    simdjson::dom::object partitions;
    if (topic.empty() || partitions_value.get(partitions) != simdjson::SUCCESS) {
      return Malformed(what, text, kExpected, error_class);
    }
    for (auto [partition_text, offset_value] : partitions) {
      Result<int32_t> partition = ParsePartitionNumber(partition_text);
      int64_t offset = 0;
      if (!partition.ok() || offset_value.get(offset) != simdjson::SUCCESS || offset < min_offset) {
        return Malformed(what, text, kExpected, error_class);
      }
      offsets[TopicPartition{std::string(topic), *partition}] = offset;
    }
  }
  return offsets;
}

Result<std::vector<TopicPartition>> ParsePartitionList(std::string_view text, std::string_view error_class) {
  constexpr std::string_view kExpected = R"(JSON like {"topic":[0,1]} with at least one partition)";
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  simdjson::dom::object topics;
  if (parser.parse(simdjson::padded_string(text)).get(doc) != simdjson::SUCCESS ||
      doc.get(topics) != simdjson::SUCCESS) {
    return Malformed("assign", text, kExpected, error_class);
  }
  std::vector<TopicPartition> partitions;
  for (auto [topic, list_value] : topics) {
    simdjson::dom::array list;
    if (topic.empty() || list_value.get(list) != simdjson::SUCCESS) {
      return Malformed("assign", text, kExpected, error_class);
    }
    for (simdjson::dom::element element : list) {
      int64_t partition = -1;
      if (element.get(partition) != simdjson::SUCCESS || partition < 0 ||
          partition > std::numeric_limits<int32_t>::max()) {
        return Malformed("assign", text, kExpected, error_class);
      }
      partitions.push_back(TopicPartition{std::string(topic), static_cast<int32_t>(partition)});
    }
  }
  if (partitions.empty()) return Malformed("assign", text, kExpected, error_class);
  return partitions;
}

}  // namespace sluice::connectors
