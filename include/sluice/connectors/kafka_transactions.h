// Where a Kafka stream stands in its Delta table: one `txn` per topic-partition, in one place.
//
// Every commit into a stream's ingestion table carries, for each topic-partition the batch read,
// txn{appId: `<stream id>-<topic>-<partition>`, version: the last offset read (records a filter
// dropped included)}. The table alone then says where ingestion stands: ResumeOffsets turns the
// txns back into the `kafka` source's starting offsets (txn + 1), and a batch whose txns the table
// already holds is skipped when written again. All functions are pure or read the table only.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sluice/core/file_system.h"
#include "sluice/core/record_batch.h"
#include "sluice/core/status.h"
#include "sluice/delta/actions.h"

namespace sluice::connectors {

// The appId of a stream's progress in one topic-partition: `<stream id>-<topic>-<partition>`.
std::string PartitionAppId(const std::string& stream_id, std::string_view topic, int32_t partition);

// The last offset read in each (topic, partition).
using PartitionEnds = std::map<std::pair<std::string, int32_t>, int64_t>;

// The partitions a batch read between the `kafka` source's offsets `start` and `end` (its offset
// JSON, next offset per partition) and the last offset of each: end - 1 where the offset moved (a
// partition absent from `start` is new to the batch). SOURCE_OFFSET_INVALID for malformed offsets.
Result<PartitionEnds> PartitionEndsBetween(std::string_view start, std::string_view end);
// Raises `ends` to the offsets of `records` (rows of the `kafka` source: topic, partition, offset).
Status AddPartitionEnds(const RecordBatch& records, PartitionEnds* ends);
// One txn per partition of `ends`, for a commit of stream `stream_id`.
std::vector<delta::SetTransaction> PartitionTransactions(const std::string& stream_id, const PartitionEnds& ends);

// The `kafka` source's starting_offsets JSON ({"topic":{"0":42}}, next offset per partition) for
// the partitions the table at `table_path` holds txns of for `stream_id`; nullopt when the table
// does not exist or holds none.
Result<std::optional<std::string>> ResumeOffsets(std::shared_ptr<FileSystem> fs, const std::string& table_path,
                                                 const std::string& stream_id);

}  // namespace sluice::connectors
