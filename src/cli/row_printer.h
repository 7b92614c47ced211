// Printing rows for people and for pipes, the same way in every command that shows rows
// (`sluice parquet cat`, `sluice delta show`): a console table, JSON lines or CSV.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "sluice/core/record_batch.h"
#include "sluice/core/status.h"

namespace sluice::cli {

// INVALID_ARGUMENT unless `format` is table, jsonl or csv.
Status CheckRowFormat(const std::string& format);

// Prints to stdout at most `limit` rows (all when negative) of the batches `next` returns until
// it returns nullptr. `table` collects the rows first to size its columns; `jsonl` (timestamps
// ISO-8601, decimals as exact strings, binary base64, NaN and infinities quoted) and `csv` (a
// header, nulls as empty fields) print batch by batch. Errors of `next` and of CheckRowFormat.
Status PrintRows(const TypePtr& schema, const std::function<Result<BatchPtr>()>& next, const std::string& format,
                 int64_t limit);

}  // namespace sluice::cli
