// The csv and json-lines codecs behind the file formats (include/sluice/connectors/files/formats.h):
// whole files' bytes to record batches and record batches to bytes. Values use the text forms of
// file_text.h. Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/record_batch.h"

namespace sluice::connectors {

struct CsvOptions {
  bool header = false;      // the first line names the columns
  char separator = ',';
  char quote = '"';
  char escape = '\\';       // inside quotes, makes the next character literal; equal to quote: "" is a quote
  std::string null_value;   // an unquoted field equal to this is null
};

// The column names of the first record of `content` (for a file read without a schema): its
// fields when `options.header`, else _c0, _c1, ... MALFORMED_CSV_RECORD naming `path` when the
// first record is malformed.
Result<std::vector<std::string>> CsvColumnNames(std::string_view content, const std::string& path,
                                                const CsvOptions& options);

// Parses every record of `content` (the header skipped when options.header) into batches of
// `schema` of at most `batch_size` rows, appended to `out`. Blank lines are skipped, except in a
// schema of one column, where a blank line is a null row (as AppendCsvRows writes one). Errors:
// MALFORMED_CSV_RECORD naming `path`, the line and the column, for a record whose field count
// differs from the schema's, a field that is no value of its column's type, a quote left open at
// the end of the file, or text after a closing quote.
Status ReadCsv(std::string_view content, const std::string& path, const CsvOptions& options, const TypePtr& schema,
               int64_t batch_size, std::vector<BatchPtr>* out);

// The header line (column names and a newline).
void AppendCsvHeader(const TypePtr& schema, const CsvOptions& options, std::string* out);
// One line per row of `batch` (rows [begin, end)). Fields holding the separator, the quote, the
// escape, a line break, or text equal to the null value are quoted; nulls are the null value.
void AppendCsvRows(const RecordBatch& batch, int64_t begin, int64_t end, const CsvOptions& options, std::string* out);

// Parses JSON lines (one object per line; blank lines skipped; keys matched to fields exactly;
// unknown keys ignored; absent keys and JSON nulls are nulls) into batches of `schema` of at most
// `batch_size` rows. `content` must have simdjson's padding readable past its end (see
// PadForJson). MALFORMED_JSON_RECORD naming `path`, the line and the field for a line that is
// not one JSON object (a truncated last line included), or a value that does not fit its field.
Status ReadJsonLines(std::string_view content, const std::string& path, const TypePtr& schema, int64_t batch_size,
                     std::vector<BatchPtr>* out);
// Makes the bytes past the end of `content` readable, as ReadJsonLines needs.
void PadForJson(std::string* content);

// One JSON object per row of `batch` (rows [begin, end)), with a newline; null fields are left out.
void AppendJsonLines(const RecordBatch& batch, int64_t begin, int64_t end, std::string* out);

}  // namespace sluice::connectors
