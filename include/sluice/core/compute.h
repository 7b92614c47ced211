// Whole-column operations on columns and batches. All are pure functions of their inputs,
// thread-safe, and allocate only their outputs.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sluice/core/builder.h"
#include "sluice/core/record_batch.h"

namespace sluice {

// Rows [offset, offset + length) as a new column / batch. Arguments must be in range.
ColumnPtr Slice(const ColumnPtr& column, int64_t offset, int64_t length);
BatchPtr Slice(const BatchPtr& batch, int64_t offset, int64_t length);

// The rows of all inputs in order. INVALID_ARGUMENT when types / schemas differ.
Result<ColumnPtr> Concatenate(std::span<const ColumnPtr> columns);
Result<BatchPtr> Concatenate(std::span<const BatchPtr> batches);

// Gathers rows by index (each index in [0, length)); indices may repeat and be in any order.
ColumnPtr Take(const ColumnPtr& column, std::span<const int64_t> indices);
BatchPtr Take(const BatchPtr& batch, std::span<const int64_t> indices);

// A stable ordering of the rows by the given key columns (ascending, nulls first, as Spark's
// ORDER BY ... ASC). Keys must be of comparable types (not struct, array or map), else
// DATATYPE_MISMATCH. Floating-point NaN sorts after every other value, -0.0 equals 0.0.
Result<std::vector<int64_t>> SortIndices(const BatchPtr& batch, std::span<const int> key_columns);

// A 64-bit hash of each row's key columns (valid column indices, any types), equal for equal
// keys (nulls hash alike; -0.0 and 0.0 hash alike; all NaNs hash alike). Used to partition rows
// over writers and for joins; the value is stable across processes and versions of sluice built
// from the same source.
std::vector<uint64_t> HashRows(const BatchPtr& batch, std::span<const int> key_columns);

// One value as text: numbers as Spark prints them, decimals exact, dates "2026-01-31",
// timestamps ISO-8601 in UTC ("2026-01-31T10:00:00.123456Z", ntz without the Z; the fraction is
// omitted when zero: "2026-01-31T10:00:00Z"), binary as base64, nested values as JSON text
// (strings, dates, timestamps and binary quoted; map keys as quoted text); null as "null".
std::string FormatValue(const Column& column, int64_t row);
// A timestamp (microseconds since the epoch) as FormatValue writes one, in UTC.
std::string TimestampText(int64_t micros);
// A double or a float as FormatValue writes one: Java's Double.toString / Float.toString
// ("1.5", "1.0E8", "NaN").
void AppendDoubleText(double value, std::string* out);
void AppendFloatText(float value, std::string* out);
// FormatValue appended to `out`.
void AppendValue(const Column& column, int64_t row, std::string* out);
// One value as a JSON value: null; booleans and integers bare; floating point bare when finite,
// else "NaN", "Infinity", "-Infinity" quoted (as Spark's to_json writes them); decimals as quoted
// exact text, so that no JSON reader rounds them to a double, or bare with kBare for readers that
// keep numbers exact (PostgreSQL's jsonb); strings, binary (base64), dates and timestamps quoted
// in FormatValue's text; structs and maps as objects (map keys as their text), arrays as arrays.
enum class JsonDecimals { kQuoted, kBare };
void AppendValueJson(const Column& column, int64_t row, std::string* out,
                     JsonDecimals decimals = JsonDecimals::kQuoted);

// The exact text of a decimal from its unscaled value: "-123.45" (scale 2), "0.05", "7" (scale 0).
void AppendDecimalText(int128_t unscaled, int scale, std::string* out);
std::string DecimalText(int128_t unscaled, int scale);
// Standard base64 with padding, as FormatValue writes binary.
void AppendBase64(std::string_view bytes, std::string* out);
// The value (0-63) of a standard base64 digit, or -1 for any other character (padding included).
int Base64DigitValue(char c);
// Whether `text` is standard padded base64; AppendBase64Decoded appends its bytes as one value
// (false, and nothing appended, when it is not).
bool IsBase64(std::string_view text);
bool AppendBase64Decoded(BinaryBuilder* builder, std::string_view text);

// A console table of the first `max_rows` rows, like Spark's show().
// Cells longer than `truncate` characters are cut (to truncate - 3 and "...", as Spark's show());
// 0 keeps them whole.
std::string PrettyPrint(const RecordBatch& batch, int64_t max_rows = 20, int64_t truncate = 20);

}  // namespace sluice
