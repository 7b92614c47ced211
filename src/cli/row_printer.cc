#include "cli/row_printer.h"

#include <climits>
#include <cstdio>
#include <vector>

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

Status CheckRowFormat(const std::string& format) {
  if (format == "table" || format == "jsonl" || format == "csv") return Status::OK();
  return Status::Error(errors::kInvalidArgument, "--format must be table, jsonl or csv, not " + format);
}

Status PrintRows(const TypePtr& schema, const std::function<Result<BatchPtr>()>& next, const std::string& format,
                 int64_t limit) {
  SLUICE_RETURN_IF_ERROR(CheckRowFormat(format));
  if (format == "csv") {
    std::string header;
    for (const Field& field : schema->fields()) {
      if (!header.empty()) header.push_back(',');
      AppendCsvField(field.name, &header);
    }
    Print(header + "\n");
  }
  std::vector<BatchPtr> table;
  int64_t remaining = limit < 0 ? INT64_MAX : limit;
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
    Print(PrettyPrint(*all, all->num_rows()));
  }
  return Status::OK();
}

}  // namespace sluice::cli
