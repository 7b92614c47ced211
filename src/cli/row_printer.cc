#include "cli/row_printer.h"

#include <charconv>
#include <climits>
#include <cstdio>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sluice/core/builder.h"
#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/json_text.h"

namespace sluice::cli {
namespace {

void Print(const std::string& text) { std::fwrite(text.data(), 1, text.size(), stdout); }

void AppendCsvField(const std::string& text, std::string* out) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) {
    out->append(text);
    return;
  }
  out->push_back('"');
  for (char c : text) {
    if (c == '"') out->push_back('"');
    out->push_back(c);
  }
  out->push_back('"');
}

std::string JsonLines(const RecordBatch& batch) {
  std::string out;
  for (int64_t r = 0; r < batch.num_rows(); ++r) {
    out.push_back('{');
    for (int c = 0; c < batch.num_columns(); ++c) {
      if (c > 0) out.push_back(',');
      AppendJsonString(&out, batch.field(c).name);
      out.push_back(':');
      AppendValueJson(*batch.column(c), r, &out);
    }
    out.append("}\n");
  }
  return out;
}

std::string CsvRows(const RecordBatch& batch) {
  std::string out, field;
  for (int64_t r = 0; r < batch.num_rows(); ++r) {
    for (int c = 0; c < batch.num_columns(); ++c) {
      if (c > 0) out.push_back(',');
      // Nulls are empty fields.
      if (batch.column(c)->IsValid(r)) {
        field.clear();
        AppendValue(*batch.column(c), r, &field);
        AppendCsvField(field, &out);
      }
    }
    out.push_back('\n');
  }
  return out;
}

}  // namespace

void AddRowPrintingOptions(CLI::App* command, RowPrinting* printing, const std::string& default_limit) {
  printing->limit = default_limit;
  command->add_option("--format", printing->format, "table, jsonl or csv")->capture_default_str();
  command->add_option("--limit", printing->limit, "Print at most this many rows, or all")->capture_default_str();
  command->add_option("--truncate", printing->truncate, "Cut table cells beyond this many characters")
      ->capture_default_str();
  command->add_flag_callback("--no-truncate", [printing] { printing->truncate = 0; }, "Print table cells whole");
  command->add_option("--order-by", printing->order_by, "Sort by these columns, ascending (reads every row first)")
      ->delimiter(',');
}

namespace {

// The limit as a number of rows; -1 for all.
Result<int64_t> RowLimit(const std::string& text) {
  if (text == "all") return -1;
  int64_t limit = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), limit);
  if (ec != std::errc() || end != text.data() + text.size() || limit < 0) {
    return Status::Error(errors::kInvalidArgument, "--limit takes a number of rows or all, not " + text);
  }
  return limit;
}

}  // namespace

Result<std::function<Result<BatchPtr>()>> SortedRows(const TypePtr& schema, const std::function<Result<BatchPtr>()>& next,
                                                 const std::vector<std::string>& order_by) {
  std::vector<int> keys;
  for (const std::string& name : order_by) {
    const int index = schema->FieldIndex(name);
    if (index < 0) {
      std::vector<std::string> names;
      for (const Field& f : schema->fields()) names.push_back(f.name);
      return Status::Error(errors::kInvalidArgument, fmt::format("--order-by: no column {}; the columns are {}", name,
                                                                 fmt::join(names, ", ")));
    }
    keys.push_back(index);
  }
  std::vector<BatchPtr> batches;
  while (true) {
    SLUICE_ASSIGN_OR_RETURN(BatchPtr batch, next());
    if (batch == nullptr) break;
    batches.push_back(std::move(batch));
  }
  BatchPtr all = RecordBatch::Empty(schema);
  if (!batches.empty()) {
    SLUICE_ASSIGN_OR_RETURN(all, Concatenate(batches));
  }
  SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> order, SortIndices(all, keys));
  std::vector<ColumnPtr> columns;
  for (int c = 0; c < all->num_columns(); ++c) columns.push_back(Take(all->column(c), order));
  SLUICE_ASSIGN_OR_RETURN(BatchPtr sorted, RecordBatch::Make(schema, std::move(columns), all->num_rows()));
  return std::function<Result<BatchPtr>()>([sorted, done = false]() mutable -> Result<BatchPtr> {
    if (done) return BatchPtr(nullptr);
    done = true;
    return sorted;
  });
}

Status CheckRowPrinting(const RowPrinting& printing) {
  if (printing.format != "table" && printing.format != "jsonl" && printing.format != "csv") {
    return Status::Error(errors::kInvalidArgument, "--format must be table, jsonl or csv, not " + printing.format);
  }
  if (printing.truncate < 0) return Status::Error(errors::kInvalidArgument, "--truncate takes 0 or more characters");
  return RowLimit(printing.limit).status();
}

Status PrintRows(const TypePtr& schema, const std::function<Result<BatchPtr>()>& source, const RowPrinting& printing,
                 std::optional<int64_t> total_rows) {
  SLUICE_RETURN_IF_ERROR(CheckRowPrinting(printing));
  SLUICE_ASSIGN_OR_RETURN(const int64_t limit, RowLimit(printing.limit));
  std::function<Result<BatchPtr>()> next = source;
  if (!printing.order_by.empty()) {
    SLUICE_ASSIGN_OR_RETURN(next, SortedRows(schema, source, printing.order_by));
  }
  const std::string& format = printing.format;
  if (format == "csv") {
    std::string header;
    for (const Field& field : schema->fields()) {
      if (!header.empty()) header.push_back(',');
      AppendCsvField(field.name, &header);
    }
    Print(header + "\n");
  }
  std::vector<BatchPtr> table;
  // A table reads one row beyond the limit, to say whether it shows them all.
  int64_t remaining = limit < 0 ? INT64_MAX : limit + (format == "table" ? 1 : 0);
  while (remaining > 0) {
    SLUICE_ASSIGN_OR_RETURN(BatchPtr batch, next());
    if (batch == nullptr) break;
    if (batch->num_rows() > remaining) batch = Slice(batch, 0, remaining);
    remaining -= batch->num_rows();
    if (format == "table") {
      table.push_back(std::move(batch));
    } else {
      Print(format == "jsonl" ? JsonLines(*batch) : CsvRows(*batch));
    }
  }
  if (format == "table") {
    BatchPtr all = RecordBatch::Empty(schema);
    if (!table.empty()) {
      SLUICE_ASSIGN_OR_RETURN(all, Concatenate(table));
    }
    const int64_t shown = limit < 0 ? all->num_rows() : std::min(limit, all->num_rows());
    if (total_rows && all->num_rows() > shown) {
      Print(PrettyPrint(*Slice(all, 0, shown), shown, printing.truncate) +
            fmt::format("{} of {} rows\n", shown, *total_rows));
    } else {
      Print(PrettyPrint(*all, shown, printing.truncate));
    }
  }
  return Status::OK();
}

std::string TextTable(const std::vector<std::string>& columns, const std::vector<std::vector<std::string>>& rows) {
  std::vector<Field> fields;
  std::vector<BinaryBuilder> builders;
  for (const std::string& column : columns) {
    fields.push_back(Field{column, DataType::String()});
    builders.emplace_back(DataType::String());
  }
  for (const std::vector<std::string>& row : rows) {
    for (size_t c = 0; c < builders.size(); ++c) builders[c].Append(row[c]);
  }
  std::vector<ColumnPtr> values;
  for (BinaryBuilder& builder : builders) values.push_back(builder.Finish());
  const auto count = static_cast<int64_t>(rows.size());
  BatchPtr table = RecordBatch::Make(DataType::Struct(std::move(fields)).value(), std::move(values), count).value();
  return PrettyPrint(*table, count, /*truncate=*/0);
}

}  // namespace sluice::cli
