#include "delta/data_files.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <unordered_map>

#include <fmt/format.h>
#include <simdjson.h>

#include "delta/column_mapping.h"
#include "delta/uuid.h"
#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/utf8.h"
#include "sluice/delta/features.h"

namespace sluice::delta {
namespace {

constexpr char kHex[] = "0123456789ABCDEF";

void PercentEncode(unsigned char byte, std::string* out) {
  out->push_back('%');
  out->push_back(kHex[byte >> 4]);
  out->push_back(kHex[byte & 0xF]);
}

// Hive's FileUtils.escapePathName set.
bool NeedsHiveEscape(unsigned char c) {
  if (c < 0x20 || c == 0x7F) return true;
  switch (c) {
    case '"': case '#': case '%': case '\'': case '*': case '/': case ':': case '=': case '?':
    case '\\': case '{': case '[': case ']': case '^':
      return true;
    default:
      return false;
  }
}

// Characters a URI path keeps as they are (RFC 2396 unreserved, plus the path punctuation).
bool UriPathChar(unsigned char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  switch (c) {
    case '-': case '_': case '.': case '!': case '~': case '*': case '\'': case '(': case ')':
    case '/': case ':': case '@': case '&': case '=': case '+': case '$': case ',': case ';':
      return true;
    default:
      return false;
  }
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The table's columns without the partition columns, as the data files' schema names them.
Result<BatchPtr> DataColumns(const BatchPtr& batch, const std::vector<int>& data_indices, const TypePtr& data_schema) {
  std::vector<ColumnPtr> columns;
  columns.reserve(data_indices.size());
  for (size_t i = 0; i < data_indices.size(); ++i) {
    SLUICE_ASSIGN_OR_RETURN(ColumnPtr column,
                            Relabel(batch->column(data_indices[i]), data_schema->field(static_cast<int>(i)).type));
    columns.push_back(std::move(column));
  }
  return RecordBatch::Make(data_schema, std::move(columns), batch->num_rows());
}

}  // namespace

std::string PartitionDirectoryName(std::string_view column, const std::optional<std::string>& value) {
  std::string name;
  for (unsigned char c : column) {
    if (NeedsHiveEscape(c)) {
      PercentEncode(c, &name);
    } else {
      name.push_back(static_cast<char>(c));
    }
  }
  name.push_back('=');
  if (!value) return name + "__HIVE_DEFAULT_PARTITION__";
  for (unsigned char c : *value) {
    if (NeedsHiveEscape(c)) {
      PercentEncode(c, &name);
    } else {
      name.push_back(static_cast<char>(c));
    }
  }
  return name;
}

std::string EncodeFilePath(std::string_view relative_path) {
  std::string out;
  out.reserve(relative_path.size());
  for (unsigned char c : relative_path) {
    if (UriPathChar(c)) {
      out.push_back(static_cast<char>(c));
    } else {
      PercentEncode(c, &out);
    }
  }
  return out;
}

Result<std::string> DataFilePath(const std::string& table_path, std::string_view uri_path) {
  SLUICE_ASSIGN_OR_RETURN(std::string relative, DecodeFilePath(uri_path));
  return relative.starts_with("/") ? relative : table_path + "/" + relative;
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Result<std::string> DecodeFilePath(std::string_view uri_path) {
  std::string out;
  out.reserve(uri_path.size());
  for (size_t i = 0; i < uri_path.size(); ++i) {
    if (uri_path[i] != '%') {
      out.push_back(uri_path[i]);
      continue;
    }
    int high = i + 2 < uri_path.size() ? HexValue(uri_path[i + 1]) : -1;
    int low = i + 2 < uri_path.size() ? HexValue(uri_path[i + 2]) : -1;
    if (high < 0 || low < 0) {
      return Status::Error(errors::kDeltaLogCorrupt, fmt::format("file path '{}' has a bad %-escape", uri_path));
    }
    out.push_back(static_cast<char>(high * 16 + low));
    i += 2;
  }
  return out;
}

std::optional<std::string> SerializePartitionValue(const Column& column, int64_t row) {
  if (column.IsNull(row)) return std::nullopt;
  switch (column.type->id()) {
    case TypeId::kString:
    case TypeId::kBinary: {
      std::string_view value = column.View(row);
      if (value.empty()) return std::nullopt;
      return std::string(value);
    }
    case TypeId::kTimestampNtz: {
      std::string text = FormatValue(column, row);
      if (auto t = text.find('T'); t != std::string::npos) text[t] = ' ';
      return text;
    }
    default:
      return FormatValue(column, row);
  }
}

DataFileWriter::DataFileWriter(FileSystem& fs, std::string table_path, TypePtr table_schema, int64_t now_ms)
    : fs_(fs), table_path_(std::move(table_path)), table_schema_(std::move(table_schema)), now_ms_(now_ms) {}

DataFileWriter::~DataFileWriter() = default;

Result<std::unique_ptr<DataFileWriter>> DataFileWriter::Open(FileSystem& fs, std::string table_path,
                                                             TypePtr table_schema, const Metadata& metadata,
                                                             int64_t now_ms, bool row_tracking) {
  SLUICE_ASSIGN_OR_RETURN(ColumnMappingMode mode, MappingModeOf(metadata));
  std::unique_ptr<DataFileWriter> writer(new DataFileWriter(fs, std::move(table_path), table_schema, now_ms));
  for (const std::string& name : metadata.partition_columns) {
    int index = table_schema->FieldIndex(name);
    if (index < 0) {
      return Status::Error(errors::kUnresolvedColumn, fmt::format("partition column '{}' is not in the schema", name));
    }
    if (table_schema->field(index).type->is_nested()) {
      return Status::Error(errors::kInvalidSchema,
                           fmt::format("partition column '{}' must have a primitive type", name));
    }
    writer->partition_indices_.push_back(index);
    writer->partition_names_.push_back(PhysicalName(table_schema->field(index)));
  }
  std::vector<Field> data_fields;
  for (int i = 0; i < table_schema->num_fields(); ++i) {
    const std::vector<int>& partitions = writer->partition_indices_;
    if (std::find(partitions.begin(), partitions.end(), i) != partitions.end()) continue;
    writer->data_indices_.push_back(i);
    data_fields.push_back(table_schema->field(i));
  }
  SLUICE_ASSIGN_OR_RETURN(TypePtr data_schema, DataType::Struct(std::move(data_fields)));
  data_schema = PhysicalSchema(data_schema, mode == ColumnMappingMode::kId);
  if (row_tracking) {
    std::vector<Field> fields = data_schema->fields();
    int batch_index = table_schema->num_fields();  // the row-tracking columns follow the table's
    for (std::string_view key : {kMaterializedRowIdColumn, kMaterializedRowCommitVersionColumn}) {
      auto name = metadata.configuration.find(std::string(key));
      if (name == metadata.configuration.end() || name->second.empty()) {
        return Status::Error(errors::kInvalidArgument,
                             fmt::format("the table tracks row ids but its configuration has no {}", key));
      }
      writer->data_indices_.push_back(batch_index++);
      fields.push_back(Field{name->second, DataType::Long(), true});
    }
    SLUICE_ASSIGN_OR_RETURN(data_schema, DataType::Struct(std::move(fields)));
  }
  writer->data_schema_ = std::move(data_schema);
  writer->random_folders_ = mode != ColumnMappingMode::kNone;
  return writer;
}

Result<DataFileWriter::OpenFile*> DataFileWriter::FileFor(const std::string& directory, PartitionValues values) {
  auto it = files_.find(directory);
  if (it != files_.end()) return &it->second;
  std::string name = fmt::format("part-{:05d}-{}.c000.snappy.parquet", files_.size(), NewUuid());
  // Mapped columns may be renamed: their partition folders would keep the old names, so files go
  // into random folders (two characters, as Spark's delta.randomPrefixLength).
  std::string folder = random_folders_ ? NewUuid().substr(0, 2) : directory;
  std::string relative = folder.empty() ? name : folder + "/" + name;
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file,
                          fs_.OpenForWrite(fmt::format("{}/{}", table_path_, relative)));
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<parquet::ParquetWriter> writer,
                          parquet::ParquetWriter::Open(std::move(file), data_schema_));
  OpenFile& open = files_[directory];
  open = OpenFile{std::move(relative), std::move(values), std::move(writer)};
  return &open;
}

Status DataFileWriter::Write(const BatchPtr& batch) {
  if (batch->num_rows() == 0) return Status::OK();
  // Strings hold UTF-8 wherever sluice makes them; this is the last gate for bytes from elsewhere
  // (another writer's Parquet file), which readers such as DuckDB refuse in a string column.
  for (int i = 0; i < batch->num_columns(); ++i) {
    if (!AllStringsAreUtf8(*batch->column(i))) {
      return Status::Error(errors::kInvalidUtf8String,
                           fmt::format("column '{}' holds a string that is not valid UTF-8; readers of the table "
                                       "would refuse it: read the column as binary, or clean it with "
                                       "CAST(CAST(x AS BINARY) AS STRING)",
                                       batch->schema()->field(i).name));
    }
  }
  SLUICE_ASSIGN_OR_RETURN(BatchPtr data, DataColumns(batch, data_indices_, data_schema_));
  if (partition_indices_.empty()) {
    SLUICE_ASSIGN_OR_RETURN(OpenFile * file, FileFor("", {}));
    return file->writer->Write(*data);
  }
  // Rows grouped by partition directory.
  std::unordered_map<std::string, std::vector<int64_t>> rows_by_directory;
  std::unordered_map<std::string, PartitionValues> values_by_directory;
  for (int64_t row = 0; row < batch->num_rows(); ++row) {
    std::string directory;
    PartitionValues values;
    for (size_t p = 0; p < partition_indices_.size(); ++p) {
      const int index = partition_indices_[p];
      const std::string& name = partition_names_[p];
      std::optional<std::string> value = SerializePartitionValue(*batch->column(index), row);
      // The log holds partition values as JSON text: bytes that are not UTF-8 could not be
      // written back as they are, and a value changed on the way would move the row.
      if (value && !IsValidUtf8(*value)) {
        return Status::Error(errors::kInvalidUtf8String,
                             fmt::format("the value of partition column '{}' in row {} is not valid UTF-8",
                                         table_schema_->field(index).name, row));
      }
      if (!directory.empty()) directory.push_back('/');
      directory += PartitionDirectoryName(name, value);
      values.emplace(name, std::move(value));
    }
    auto [it, inserted] = rows_by_directory.try_emplace(directory);
    it->second.push_back(row);
    if (inserted) values_by_directory.emplace(directory, std::move(values));
  }
  for (auto& [directory, rows] : rows_by_directory) {
    SLUICE_ASSIGN_OR_RETURN(OpenFile * file, FileFor(directory, values_by_directory[directory]));
    SLUICE_RETURN_IF_ERROR(file->writer->Write(*Take(data, rows)));
  }
  return Status::OK();
}

Result<std::vector<AddFile>> DataFileWriter::Finish() {
  std::vector<AddFile> adds;
  for (auto& [directory, file] : files_) {
    SLUICE_ASSIGN_OR_RETURN(parquet::FileStats stats, file.writer->Close());
    AddFile add;
    add.path = EncodeFilePath(file.relative_path);
    add.partition_values = std::move(file.partition_values);
    add.size = stats.file_size;
    add.modification_time = now_ms_;
    add.data_change = true;
    add.stats = StatsJson(stats);
    adds.push_back(std::move(add));
  }
  files_.clear();
  return adds;
}

RemoveFile RemovalOf(const AddFile& file, int64_t now_ms) {
  RemoveFile remove;
  remove.path = file.path;
  remove.deletion_timestamp = now_ms;
  remove.data_change = true;
  remove.extended_file_metadata = true;
  remove.partition_values = file.partition_values;
  remove.size = file.size;
  remove.deletion_vector = file.deletion_vector;
  return remove;
}

std::optional<int64_t> StatsNumRecords(const std::optional<std::string>& stats) {
  if (!stats) return std::nullopt;
  simdjson::ondemand::parser parser;
  simdjson::padded_string text(*stats);
  simdjson::ondemand::document document;
  int64_t records = 0;
  if (parser.iterate(text).get(document) != simdjson::SUCCESS ||
      document["numRecords"].get_int64().get(records) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  return records;
}

}  // namespace sluice::delta
