// Printing rows for people and for pipes, the same way in every command that shows rows
// (`sluice parquet cat`, `sluice delta show`): a console table, JSON lines or CSV.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "sluice/core/record_batch.h"
#include "sluice/core/status.h"

namespace sluice::cli {

// How rows are printed, as the options of AddRowPrintingOptions set it.
struct RowPrinting {
  std::string format = "table";      // table, jsonl or csv
  std::string limit = "20";          // a number of rows, or "all"
  int64_t truncate = 20;             // table cells cut beyond this many characters; 0 never
  std::vector<std::string> order_by;  // top-level columns to sort by, ascending, NULLs first
};

// --format, --limit N|all (default `default_limit`), --truncate N, --no-truncate, --order-by.
void AddRowPrintingOptions(CLI::App* command, RowPrinting* printing, const std::string& default_limit);

// INVALID_ARGUMENT unless the format is table, jsonl or csv and the limit a number or "all".
Status CheckRowPrinting(const RowPrinting& printing);

// Prints to stdout the rows of the batches `next` returns until it returns nullptr, at most
// `limit` of them, in the order of `order_by` (which reads every row first; an unknown column is
// INVALID_ARGUMENT naming the columns). `table` collects the rows to size its columns and, when
// there were more, ends with "20 of 364 rows" (`total_rows`, when the caller knows it) or "only
// showing top 20 rows"; `jsonl` (timestamps ISO-8601, decimals as
// exact strings, binary base64, NaN and infinities quoted) and `csv` (a header, nulls as empty
// fields) print batch by batch. Errors of `next` and of CheckRowPrinting.
Status PrintRows(const TypePtr& schema, const std::function<Result<BatchPtr>()>& next, const RowPrinting& printing,
                 std::optional<int64_t> total_rows = std::nullopt);

// Every batch of `next` read and sorted by the named columns (ascending, NULLs first): a source
// of one batch. INVALID_ARGUMENT naming the columns for an unknown one.
Result<std::function<Result<BatchPtr>()>> SortedRows(const TypePtr& schema, const std::function<Result<BatchPtr>()>& next,
                                                     const std::vector<std::string>& order_by);

// Rows of text as a table in `delta show`'s style, values whole: what the commands that print a
// summary (status, history) show. Every row has one value per column.
std::string TextTable(const std::vector<std::string>& columns, const std::vector<std::vector<std::string>>& rows);

}  // namespace sluice::cli
