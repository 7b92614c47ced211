// CSV records to columns and back, with Spark's CSV options (header, sep, quote, escape,
// nullValue). A record may span lines inside quotes; lines end with \n or \r\n.
#include <fmt/format.h>

#include "connectors/files/file_codecs.h"
#include "connectors/files/file_text.h"
#include "sluice/core/compute.h"
#include "sluice/core/builder.h"
#include "sluice/core/error_classes.h"

namespace sluice::connectors {
namespace {

// One field of the current record: a view into the content, or (when unescaping was needed)
// into the scratch buffer, kept as offsets because the buffer may grow.
struct FieldSpan {
  size_t offset = 0;
  size_t size = 0;
  bool in_scratch = false;
  bool quoted = false;
  bool blank = false;  // the whole record was a blank line
};

// Splits records off the content one at a time. The spans stay valid until the next call.
class CsvRecordReader {
 public:
  // `blank_lines_are_records`: in a file of one column, a blank line is a record (a null there is
  // written as nothing), so blank lines are records rather than skipped.
  CsvRecordReader(std::string_view content, const std::string& path, const CsvOptions& options,
                  bool blank_lines_are_records = false)
      : content_(content), path_(path), options_(options), blank_lines_are_records_(blank_lines_are_records) {}

  // The next record into `fields` (blank lines skipped unless they are records, when they come
  // back as one field marked `blank`); false at the end of the content.
  Result<bool> Next(std::vector<FieldSpan>* fields) {
    fields->clear();
    scratch_.clear();
    if (blank_lines_are_records_ && pos_ < content_.size()) {
      const size_t blank = content_[pos_] == '\n' ? 1 : content_.substr(pos_, 2) == "\r\n" ? 2 : 0;
      if (blank > 0) {
        record_line_ = line_++;
        pos_ += blank;
        fields->push_back(FieldSpan{.offset = pos_, .blank = true});
        return true;
      }
    }
    while (pos_ < content_.size() && (content_[pos_] == '\n' || content_[pos_] == '\r')) {
      if (content_[pos_] == '\n') ++line_;
      ++pos_;
    }
    if (pos_ >= content_.size()) return false;
    record_line_ = line_;
    for (;;) {
      FieldSpan field;
      if (pos_ < content_.size() && content_[pos_] == options_.quote) {
        SLUICE_RETURN_IF_ERROR(ReadQuoted(&field));
      } else {
        field.offset = pos_;
        while (pos_ < content_.size() && content_[pos_] != options_.separator && content_[pos_] != '\n') ++pos_;
        field.size = pos_ - field.offset;
        if (field.size > 0 && pos_ < content_.size() && content_[pos_] == '\n' && content_[pos_ - 1] == '\r') {
          --field.size;
        }
      }
      fields->push_back(field);
      if (pos_ >= content_.size()) return true;
      char c = content_[pos_++];
      if (c == '\n') {
        ++line_;
        return true;
      }
      if (c != options_.separator) {
        return Malformed(fmt::format("text after the closing quote of field {}", fields->size()));
      }
    }
  }

  std::string_view View(const FieldSpan& field) const {
    return field.in_scratch ? std::string_view(scratch_).substr(field.offset, field.size)
                            : content_.substr(field.offset, field.size);
  }
  int64_t record_line() const { return record_line_; }

  Status Malformed(std::string_view what) const {
    return Status::Error(errors::kMalformedCsvRecord, fmt::format("{}:{}: {}", path_, record_line_, what));
  }

 private:
  // A quoted field starting at pos_; leaves pos_ after the closing quote (and a \r before \n).
  Status ReadQuoted(FieldSpan* field) {
    field->quoted = true;
    field->in_scratch = true;
    field->offset = scratch_.size();
    ++pos_;
    for (;;) {
      if (pos_ >= content_.size()) {
        return Malformed("a quoted field is not closed before the end of the file (is the file truncated?)");
      }
      char c = content_[pos_];
      if (c == options_.escape && options_.escape != options_.quote && pos_ + 1 < content_.size()) {
        scratch_.push_back(content_[pos_ + 1]);
        pos_ += 2;
      } else if (c == options_.quote) {
        if (options_.escape == options_.quote && pos_ + 1 < content_.size() && content_[pos_ + 1] == options_.quote) {
          scratch_.push_back(c);
          pos_ += 2;
          continue;
        }
        ++pos_;
        if (pos_ + 1 < content_.size() && content_[pos_] == '\r' && content_[pos_ + 1] == '\n') ++pos_;
        field->size = scratch_.size() - field->offset;
        return Status::OK();
      } else {
        if (c == '\n') ++line_;
        scratch_.push_back(c);
        ++pos_;
      }
    }
  }

  std::string_view content_;
  const std::string& path_;
  const CsvOptions& options_;
  const bool blank_lines_are_records_;
  size_t pos_ = 0;
  int64_t line_ = 1;
  int64_t record_line_ = 1;
  std::string scratch_;
};

bool NeedsQuotes(std::string_view text, const CsvOptions& options) {
  if (text.empty() || text == options.null_value) return true;
  for (char c : text) {
    if (c == options.separator || c == options.quote || c == options.escape || c == '\n' || c == '\r') return true;
  }
  return false;
}

void AppendField(std::string_view text, const CsvOptions& options, std::string* out) {
  if (!NeedsQuotes(text, options)) {
    out->append(text);
    return;
  }
  out->push_back(options.quote);
  for (char c : text) {
    if (c == options.quote || c == options.escape) out->push_back(options.escape);
    out->push_back(c);
  }
  out->push_back(options.quote);
}

}  // namespace

Result<std::vector<std::string>> CsvColumnNames(std::string_view content, const std::string& path,
                                                const CsvOptions& options) {
  CsvRecordReader reader(content, path, options);
  std::vector<FieldSpan> fields;
  SLUICE_ASSIGN_OR_RETURN(bool found, reader.Next(&fields));
  std::vector<std::string> names;
  if (!found) return names;
  for (size_t i = 0; i < fields.size(); ++i) {
    names.push_back(options.header ? std::string(reader.View(fields[i])) : fmt::format("_c{}", i));
  }
  return names;
}

Status ReadCsv(std::string_view content, const std::string& path, const CsvOptions& options, const TypePtr& schema,
               int64_t batch_size, std::vector<BatchPtr>* out) {
  const int num_columns = schema->num_fields();
  CsvRecordReader reader(content, path, options, num_columns == 1);
  std::vector<FieldSpan> fields;
  if (options.header) SLUICE_RETURN_IF_ERROR(reader.Next(&fields).status());
  std::vector<std::unique_ptr<ColumnBuilder>> builders;
  for (const Field& field : schema->fields()) builders.push_back(ColumnBuilder::Make(field.type));
  int64_t rows = 0;
  auto flush = [&]() -> Status {
    std::vector<ColumnPtr> columns;
    for (auto& builder : builders) columns.push_back(builder->Finish());
    SLUICE_ASSIGN_OR_RETURN(BatchPtr batch, RecordBatch::Make(schema, std::move(columns), rows));
    out->push_back(std::move(batch));
    rows = 0;
    return Status::OK();
  };
  std::string why;
  for (;;) {
    SLUICE_ASSIGN_OR_RETURN(bool found, reader.Next(&fields));
    if (!found) break;
    if (static_cast<int>(fields.size()) != num_columns) {
      return reader.Malformed(fmt::format("expected {} fields, found {}", num_columns, fields.size()));
    }
    for (int i = 0; i < num_columns; ++i) {
      std::string_view text = reader.View(fields[i]);
      if (fields[i].blank || (!fields[i].quoted && text == options.null_value)) {
        builders[i]->AppendNull();
      } else if (!file_text::AppendScalar(builders[i].get(), text, &why)) {
        return reader.Malformed(fmt::format("column {} (`{}`): {}", i + 1, schema->field(i).name, why));
      }
    }
    if (++rows == batch_size) SLUICE_RETURN_IF_ERROR(flush());
  }
  if (rows > 0 || out->empty()) SLUICE_RETURN_IF_ERROR(flush());
  return Status::OK();
}

void AppendCsvHeader(const TypePtr& schema, const CsvOptions& options, std::string* out) {
  for (int i = 0; i < schema->num_fields(); ++i) {
    if (i > 0) out->push_back(options.separator);
    AppendField(schema->field(i).name, options, out);
  }
  out->push_back('\n');
}

void AppendCsvRows(const RecordBatch& batch, int64_t begin, int64_t end, const CsvOptions& options, std::string* out) {
  std::string text;
  for (int64_t row = begin; row < end; ++row) {
    for (int i = 0; i < batch.num_columns(); ++i) {
      if (i > 0) out->push_back(options.separator);
      const Column& column = *batch.column(i);
      if (column.IsNull(row)) {
        out->append(options.null_value);
        continue;
      }
      text.clear();
      AppendValue(column, row, &text);
      AppendField(text, options, out);
    }
    out->push_back('\n');
  }
}

}  // namespace sluice::connectors
