// What decoding a column of encoded values met: malformed values and mismatched fields, counted
// and sampled. Filled by the JSON reader (core/json_reader.h) and the stream decoders
// (formats/decoder.h); shown in progress and the event log.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sluice {

// Counters accumulate across calls; reset by assigning {}. Use one DecodeStats per batch when
// malformed_rows is to be mapped back to Kafka offsets.
struct DecodeStats {
  // How many sample rows malformed_rows keeps: enough to find the culprits, bounded per batch.
  static constexpr size_t kMaxSampledRows = 10;

  int64_t rows = 0;       // input rows seen, null rows included
  int64_t malformed = 0;  // non-null input rows that could not be decoded as a whole
  // Fields set to null inside an otherwise decoded row (a JSON value of the wrong type).
  int64_t mismatched_fields = 0;
  // Row numbers (within the column decoded) of the first malformed rows, at most
  // kMaxSampledRows of them; the caller maps them to Kafka offsets.
  std::vector<int64_t> malformed_rows;

  void RecordMalformed(int64_t row) {
    ++malformed;
    if (malformed_rows.size() < kMaxSampledRows) malformed_rows.push_back(row);
  }
};

}  // namespace sluice
