// The bytes of one state row, as the RocksDB state store keeps it: every column of the row, in a
// private, self-delimiting encoding (a null flag, then fixed-width values as their bytes, strings
// and binaries and arrays and maps behind their length, structs field by field). Private to the
// engine.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/record_batch.h"
#include "sluice/core/status.h"

namespace sluice::engine {

// Appends row `row` of `rows` (every column) to `out`.
void EncodeStateRow(const RecordBatch& rows, int64_t row, std::string* out);

// The rows of `schema` that `encoded` hold, one per value, in order. CANNOT_LOAD_STATE_STORE for
// bytes that are not exactly one row of the schema (truncated, trailing bytes, a length past the
// end).
Result<BatchPtr> DecodeStateRows(const TypePtr& schema, const std::vector<std::string_view>& encoded);

}  // namespace sluice::engine
