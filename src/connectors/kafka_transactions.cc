#include "sluice/connectors/kafka_transactions.h"

#include <algorithm>

#include "sluice/connectors/kafka_offsets.h"
#include "sluice/core/error_classes.h"
#include "sluice/delta/snapshot.h"

namespace sluice::connectors {

std::string PartitionAppId(const std::string& stream_id, std::string_view topic, int32_t partition) {
  return stream_id + "-" + std::string(topic) + "-" + std::to_string(partition);
}

Result<PartitionEnds> PartitionEndsBetween(std::string_view start, std::string_view end) {
  constexpr std::string_view kWhat = "kafka source offset";
  PartitionOffsets before;
  if (!start.empty()) {
    SLUICE_ASSIGN_OR_RETURN(before, ParsePartitionOffsets(start, kWhat, 0, errors::kSourceOffsetInvalid));
  }
  SLUICE_ASSIGN_OR_RETURN(PartitionOffsets after, ParsePartitionOffsets(end, kWhat, 0, errors::kSourceOffsetInvalid));
  PartitionEnds ends;
  for (const auto& [place, next] : after) {
    auto was = before.find(place);
    if (next > 0 && (was == before.end() || next > was->second)) ends[{place.topic, place.partition}] = next - 1;
  }
  return ends;
}

Status AddPartitionEnds(const RecordBatch& records, PartitionEnds* ends) {
  SLUICE_ASSIGN_OR_RETURN(ColumnPtr topic, records.ColumnAt("topic"));
  SLUICE_ASSIGN_OR_RETURN(ColumnPtr partition, records.ColumnAt("partition"));
  SLUICE_ASSIGN_OR_RETURN(ColumnPtr offset, records.ColumnAt("offset"));
  // Rows come in runs of one partition, so the previous row's entry is tried first and the map is
  // searched rarely.
  int64_t* last = nullptr;
  std::string_view last_topic;
  int32_t last_partition = -1;
  for (int64_t row = 0; row < records.num_rows(); ++row) {
    std::string_view t = topic->View(row);
    int32_t p = partition->Value<int32_t>(row);
    int64_t o = offset->Value<int64_t>(row);
    if (last == nullptr || p != last_partition || t != last_topic) {
      auto [it, inserted] = ends->try_emplace({std::string(t), p}, o);
      last = &it->second;
      last_topic = t;
      last_partition = p;
    }
    *last = std::max(*last, o);
  }
  return Status::OK();
}

std::vector<delta::SetTransaction> PartitionTransactions(const std::string& stream_id, const PartitionEnds& ends) {
  std::vector<delta::SetTransaction> transactions;
  for (const auto& [place, last_offset] : ends) {
    transactions.push_back(
        delta::SetTransaction{PartitionAppId(stream_id, place.first, place.second), last_offset, std::nullopt});
  }
  return transactions;
}

Result<std::optional<std::string>> ResumeOffsets(std::shared_ptr<FileSystem> fs, const std::string& table_path,
                                                 const std::string& stream_id) {
  SLUICE_ASSIGN_OR_RETURN(bool exists, fs->Exists(table_path + "/_delta_log"));
  if (!exists) return std::optional<std::string>();
  Result<delta::SnapshotPtr> loaded = delta::Snapshot::Load(fs, table_path);
  // A crash during the first commit leaves a _delta_log without commits: no table yet.
  if (!loaded.ok() && loaded.status().error_class() == errors::kDeltaTableNotFound) return std::optional<std::string>();
  SLUICE_ASSIGN_OR_RETURN(delta::SnapshotPtr snapshot, std::move(loaded));
  // appId = <stream id>-<topic>-<partition>; the topic may itself contain '-', the partition not.
  PartitionOffsets next;
  const std::string prefix = stream_id + "-";
  for (const auto& [app_id, txn] : snapshot->transactions()) {
    if (app_id.compare(0, prefix.size(), prefix) != 0) continue;
    size_t dash = app_id.rfind('-');
    if (dash == std::string::npos || dash < prefix.size()) continue;
    std::string digits = app_id.substr(dash + 1);
    if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    next[TopicPartition{app_id.substr(prefix.size(), dash - prefix.size()), std::stoi(digits)}] = txn.version + 1;
  }
  if (next.empty()) return std::optional<std::string>();
  return std::optional<std::string>(FormatPartitionOffsets(next));
}

}  // namespace sluice::connectors
