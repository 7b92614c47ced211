#include "sluice/delta/scan.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

#include "delta/column_mapping.h"
#include "delta/data_files.h"
#include "delta/file_pruning.h"
#include "sluice/core/builder.h"
#include "sluice/core/column_path.h"
#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/iso_datetime.h"
#include "sluice/delta/deletion_vector.h"
#include "sluice/delta/features.h"
#include "sluice/delta/writer.h"
#include "sluice/parquet/reader.h"

namespace sluice::delta {
namespace {

std::optional<int128_t> ParseDecimal(std::string_view text, int scale) {
  bool negative = !text.empty() && text[0] == '-';
  if (negative || (!text.empty() && text[0] == '+')) text.remove_prefix(1);
  int128_t value = 0;
  int fraction_digits = -1;
  for (char c : text) {
    if (c == '.' && fraction_digits < 0) {
      fraction_digits = 0;
      continue;
    }
    if (c < '0' || c > '9') return std::nullopt;
    if (fraction_digits >= scale) return std::nullopt;  // more digits than the scale holds
    if (value > (static_cast<int128_t>(1) << 120)) return std::nullopt;
    value = value * 10 + (c - '0');
    if (fraction_digits >= 0) ++fraction_digits;
  }
  if (text.empty()) return std::nullopt;
  for (int i = std::max(fraction_digits, 0); i < scale; ++i) value *= 10;
  return negative ? -value : value;
}

template <typename T>
ColumnPtr Repeat(const TypePtr& type, T value, int64_t rows) {
  FixedWidthBuilder<T> builder(type);
  builder.Reserve(rows);
  for (int64_t i = 0; i < rows; ++i) builder.Append(value);
  return builder.Finish();
}

template <typename T>
std::optional<T> ParseInteger(std::string_view text) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  if (value < std::numeric_limits<T>::min() || value > std::numeric_limits<T>::max()) return std::nullopt;
  return static_cast<T>(value);
}

// The schema with the row-tracking columns appended.
TypePtr WithRowTrackingColumns(const TypePtr& schema) {
  std::vector<Field> fields = schema->fields();
  fields.push_back(Field{std::string(kRowIdColumn), DataType::Long(), false});
  fields.push_back(Field{std::string(kRowCommitVersionColumn), DataType::Long(), false});
  return DataType::Struct(std::move(fields)).value();
}

}  // namespace

TypePtr ScannedSchema(const TypePtr& table_schema) { return WithoutColumnMapping(table_schema); }

Result<ColumnPtr> PartitionValueColumn(const std::optional<std::string>& value, const TypePtr& type, int64_t rows) {
  if (!value || value->empty()) return MakeNullColumn(type, rows);
  std::string_view text = *value;
  auto bad = [&] {
    return Status::Error(errors::kDeltaLogCorrupt,
                         fmt::format("partition value '{}' is not a valid {}", text, type->ToString()));
  };
  switch (type->id()) {
    case TypeId::kString:
    case TypeId::kBinary: {
      BinaryBuilder builder(type);
      builder.Reserve(rows);
      for (int64_t i = 0; i < rows; ++i) builder.Append(text);
      return builder.Finish();
    }
    case TypeId::kBoolean:
      if (text == "true" || text == "false") return Repeat<uint8_t>(type, text == "true", rows);
      return bad();
    case TypeId::kByte:
      if (auto v = ParseInteger<int8_t>(text)) return Repeat<int8_t>(type, *v, rows);
      return bad();
    case TypeId::kShort:
      if (auto v = ParseInteger<int16_t>(text)) return Repeat<int16_t>(type, *v, rows);
      return bad();
    case TypeId::kInteger:
      if (auto v = ParseInteger<int32_t>(text)) return Repeat<int32_t>(type, *v, rows);
      return bad();
    case TypeId::kLong:
      if (auto v = ParseInteger<int64_t>(text)) return Repeat<int64_t>(type, *v, rows);
      return bad();
    case TypeId::kFloat:
    case TypeId::kDouble: {
      std::string copy(text);
      char* end = nullptr;
      double v = std::strtod(copy.c_str(), &end);
      if (end != copy.c_str() + copy.size()) return bad();
      if (type->id() == TypeId::kFloat) return Repeat<float>(type, static_cast<float>(v), rows);
      return Repeat<double>(type, v, rows);
    }
    case TypeId::kDate: {
      int32_t days = 0;
      if (!ParseIsoDate(text, &days)) return bad();
      return Repeat<int32_t>(type, days, rows);
    }
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: {
      int64_t micros = 0;
      if (!ParseIsoTimestamp(text, &micros)) return bad();
      return Repeat<int64_t>(type, micros, rows);
    }
    case TypeId::kDecimal:
      if (auto unscaled = ParseDecimal(text, type->scale())) return Repeat<int128_t>(type, *unscaled, rows);
      return bad();
    default:
      return bad();
  }
}

// The columns every file of a scan reads, worked out once per scan from the columns read as the
// table's schema has them (with column mapping metadata).
struct TableScan::ReadColumns {
  TypePtr output;                           // of the batches returned: without mapping metadata
  TypePtr data_schema;                      // of the data columns, by physical names
  std::vector<bool> is_partition;           // per table field of the output
  std::vector<std::string> physical_names;  // per table field of the output: in the files and partition values
  // With row tracking: the output ends with the two row-tracking columns, read from the data
  // files' materialized columns of these names where present.
  bool row_tracking = false;
  std::string materialized_row_id;
  std::string materialized_row_commit_version;

  static Result<std::shared_ptr<const ReadColumns>> Of(const Snapshot& snapshot, const TypePtr& schema,
                                                       bool row_tracking) {
    auto columns = std::make_shared<ReadColumns>();
    columns->output = WithoutColumnMapping(schema);
    const auto& partition_columns = snapshot.metadata().partition_columns;
    std::vector<Field> data_fields;
    for (const Field& field : schema->fields()) {
      bool is_partition = std::find(partition_columns.begin(), partition_columns.end(), field.name) != partition_columns.end();
      columns->is_partition.push_back(is_partition);
      columns->physical_names.push_back(PhysicalName(field));
      if (!is_partition) data_fields.push_back(field);
    }
    SLUICE_ASSIGN_OR_RETURN(TypePtr data_schema, DataType::Struct(std::move(data_fields)));
    columns->data_schema = PhysicalSchema(data_schema, false);
    if (row_tracking) {
      columns->row_tracking = true;
      columns->output = WithRowTrackingColumns(columns->output);
      columns->materialized_row_id = snapshot.Property(kMaterializedRowIdColumn, "");
      columns->materialized_row_commit_version = snapshot.Property(kMaterializedRowCommitVersionColumn, "");
    }
    return std::shared_ptr<const ReadColumns>(std::move(columns));
  }
};

// One data file being read: its batches arranged as the scan's output schema.
class TableScan::FileReader {
 public:
  static Result<std::shared_ptr<FileReader>> Open(const Snapshot& snapshot, const AddFile& file,
                                                  std::shared_ptr<const ReadColumns> columns) {
    auto reader = std::shared_ptr<FileReader>(new FileReader());
    reader->file_ = &file;
    reader->columns_ = std::move(columns);
    const ReadColumns& read = *reader->columns_;
    if (read.row_tracking && (!file.base_row_id || !file.default_row_commit_version)) {
      return Status::Error(errors::kDeltaLogCorrupt,
                           fmt::format("data file '{}' of a table that tracks row ids has no baseRowId or "
                                       "defaultRowCommitVersion",
                                       file.path));
    }
    SLUICE_ASSIGN_OR_RETURN(std::string path, DataFilePath(snapshot.table_path(), file.path));
    SLUICE_ASSIGN_OR_RETURN(reader->parquet_, parquet::ParquetReader::Open(*snapshot.file_system(), path));
    if (file.deletion_vector) {
      Result<RowRanges> deleted =
          LoadDeletionVector(*snapshot.file_system(), snapshot.table_path(), *file.deletion_vector);
      if (!deleted.ok()) return deleted.status().WithContext(fmt::format("data file '{}'", file.path));
      reader->deleted_ = std::move(*deleted);
    }
    parquet::ReadOptions options;
    const TypePtr& file_schema = reader->parquet_->schema();
    for (size_t i = 0; i < read.physical_names.size(); ++i) {
      if (read.is_partition[i]) continue;
      int index = file_schema->FieldIndexIgnoreCase(read.physical_names[i]);
      // A path of one part: the name may hold dots or back quotes.
      if (index >= 0) options.columns.push_back(ColumnPathPart(file_schema->field(index).name));
    }
    // Rows a rewrite copied keep their ids and versions in materialized columns.
    if (read.row_tracking) {
      for (const std::string* name : {&read.materialized_row_id, &read.materialized_row_commit_version}) {
        if (!name->empty() && file_schema->FieldIndex(*name) >= 0) options.columns.push_back(ColumnPathPart(*name));
      }
    }
    if (options.columns.empty()) {
      // No requested data column is in this file (or only partition columns were asked for):
      // its rows still count, with nulls or partition values only.
      reader->rows_without_columns_ = reader->parquet_->num_rows();
      return reader;
    }
    SLUICE_ASSIGN_OR_RETURN(reader->batches_, reader->parquet_->NewBatchReader(options));
    return reader;
  }

  // The next batch of this file, or nullptr at its end.
  Result<BatchPtr> Next() {
    BatchPtr data;
    int64_t rows = 0;
    ColumnPtr stored_row_ids, stored_row_commit_versions;
    if (batches_ == nullptr) {
      if (rows_without_columns_ == 0) return BatchPtr();
      rows = rows_without_columns_;
      rows_without_columns_ = 0;
      SLUICE_ASSIGN_OR_RETURN(data, NullData(rows));
    } else {
      SLUICE_ASSIGN_OR_RETURN(BatchPtr raw, batches_->Next());
      if (raw == nullptr) return BatchPtr();
      rows = raw->num_rows();
      if (columns_->row_tracking) {
        SLUICE_ASSIGN_OR_RETURN(raw, Without(raw, columns_->materialized_row_id, &stored_row_ids));
        SLUICE_ASSIGN_OR_RETURN(raw, Without(raw, columns_->materialized_row_commit_version, &stored_row_commit_versions));
        for (const ColumnPtr* stored : {&stored_row_ids, &stored_row_commit_versions}) {
          if (*stored && (*stored)->type->id() != TypeId::kLong) {
            return Status::Error(errors::kDeltaLogCorrupt,
                                 fmt::format("data file '{}' has a materialized row-tracking column of type {}",
                                             file_->path, (*stored)->type->ToString()));
          }
        }
      }
      if (raw->num_columns() == 0) {
        SLUICE_ASSIGN_OR_RETURN(data, NullData(rows));
      } else {
        // A struct read whole may hold fields the table has dropped since.
        SLUICE_ASSIGN_OR_RETURN(data, ConformToSchema(raw, columns_->data_schema, FieldsOutsideTable::kLeaveOut));
      }
    }
    ColumnPtr row_ids, row_commit_versions;
    if (columns_->row_tracking) {
      row_ids = Tracked(stored_row_ids, *file_->base_row_id, 1, rows);
      row_commit_versions = Tracked(stored_row_commit_versions, *file_->default_row_commit_version, 0, rows);
    }
    if (std::optional<std::vector<int64_t>> kept = KeptRows(rows)) {
      data = Take(data, *kept);
      if (row_ids) {
        row_ids = Take(row_ids, *kept);
        row_commit_versions = Take(row_commit_versions, *kept);
      }
    }
    rows = data->num_rows();
    std::vector<ColumnPtr> columns;
    int data_index = 0;
    const TypePtr& schema = columns_->output;
    for (size_t i = 0; i < columns_->is_partition.size(); ++i) {
      const Field& field = schema->field(static_cast<int>(i));
      if (!columns_->is_partition[i]) {
        SLUICE_ASSIGN_OR_RETURN(ColumnPtr column, Relabel(data->column(data_index++), field.type));
        columns.push_back(std::move(column));
        continue;
      }
      auto value = file_->partition_values.find(columns_->physical_names[i]);
      std::optional<std::string> text = value == file_->partition_values.end() ? std::nullopt : value->second;
      SLUICE_ASSIGN_OR_RETURN(ColumnPtr column, PartitionValueColumn(text, field.type, rows));
      columns.push_back(std::move(column));
    }
    if (row_ids) {
      columns.push_back(std::move(row_ids));
      columns.push_back(std::move(row_commit_versions));
    }
    return RecordBatch::Make(schema, std::move(columns), rows);
  }

 private:
  FileReader() = default;

  Result<BatchPtr> NullData(int64_t rows) const {
    std::vector<ColumnPtr> nulls;
    for (const Field& field : columns_->data_schema->fields()) nulls.push_back(MakeNullColumn(field.type, rows));
    return RecordBatch::Make(columns_->data_schema, std::move(nulls), rows);
  }

  // The batch without its column `name` (when it has one), which goes to `*column`.
  static Result<BatchPtr> Without(const BatchPtr& batch, const std::string& name, ColumnPtr* column) {
    const int index = name.empty() ? -1 : batch->schema()->FieldIndex(name);
    if (index < 0) return batch;
    *column = batch->column(index);
    std::vector<Field> fields = batch->schema()->fields();
    std::vector<ColumnPtr> columns = batch->columns();
    fields.erase(fields.begin() + index);
    columns.erase(columns.begin() + index);
    SLUICE_ASSIGN_OR_RETURN(TypePtr schema, DataType::Struct(std::move(fields)));
    return RecordBatch::Make(std::move(schema), std::move(columns), batch->num_rows());
  }

  // A row-tracking column of the next `rows` rows of the file: the stored value where there is
  // one, else `base` plus the row's position in the file times `step`.
  ColumnPtr Tracked(const ColumnPtr& stored, int64_t base, int64_t step, int64_t rows) const {
    Int64Builder builder(DataType::Long());
    builder.Reserve(rows);
    const int64_t first = static_cast<int64_t>(position_);
    for (int64_t i = 0; i < rows; ++i) {
      if (stored && stored->IsValid(i)) {
        builder.Append(stored->Value<int64_t>(i));
      } else {
        builder.Append(base + (first + i) * step);
      }
    }
    return builder.Finish();
  }

  // The indexes of the next `rows` rows of the file that its deletion vector does not delete;
  // nullopt when it deletes none of them.
  std::optional<std::vector<int64_t>> KeptRows(int64_t rows) {
    const uint64_t first = position_;
    const uint64_t end = first + static_cast<uint64_t>(rows);
    position_ = end;
    while (next_deleted_ < deleted_.size() && deleted_[next_deleted_].second <= first) ++next_deleted_;
    if (next_deleted_ == deleted_.size() || deleted_[next_deleted_].first >= end) return std::nullopt;
    std::vector<int64_t> kept;
    kept.reserve(static_cast<size_t>(rows));
    uint64_t row = first;
    for (size_t r = next_deleted_; r < deleted_.size() && deleted_[r].first < end; ++r) {
      for (; row < deleted_[r].first; ++row) kept.push_back(static_cast<int64_t>(row - first));
      row = std::max(row, deleted_[r].second);
    }
    for (; row < end; ++row) kept.push_back(static_cast<int64_t>(row - first));
    return kept;
  }

  const AddFile* file_ = nullptr;
  std::shared_ptr<const ReadColumns> columns_;
  std::unique_ptr<parquet::ParquetReader> parquet_;
  std::unique_ptr<parquet::BatchReader> batches_;
  int64_t rows_without_columns_ = 0;
  RowRanges deleted_;        // the file's deletion vector
  size_t next_deleted_ = 0;  // the first range not wholly before position_
  uint64_t position_ = 0;    // the file's row index of the next batch's first row
};

TableScan::TableScan(SnapshotPtr snapshot, const TypePtr& schema, std::vector<AddFile> files, bool row_tracking)
    : snapshot_(std::move(snapshot)),
      schema_(row_tracking ? WithRowTrackingColumns(ScannedSchema(schema)) : ScannedSchema(schema)),
      read_schema_(schema),
      files_(std::move(files)),
      row_tracking_(row_tracking) {}

Result<std::unique_ptr<TableScan>> TableScan::Open(SnapshotPtr snapshot, ScanOptions options) {
  const TypePtr& table_schema = snapshot->schema();
  if (options.row_tracking && !TracksRowIds(snapshot->protocol())) {
    return Status::Error(errors::kDeltaProtocolUnsupported,
                         fmt::format("'{}' does not track row ids (delta.enableRowTracking)", snapshot->table_path()));
  }
  TypePtr schema = table_schema;
  std::vector<Field> fields;
  if (!options.columns.empty()) {
    for (const std::string& name : options.columns) {
      int index = table_schema->FieldIndexIgnoreCase(name);
      if (index < 0) {
        return Status::Error(errors::kUnresolvedColumn,
                             fmt::format("column '{}' is not in the table '{}'", name, snapshot->table_path()));
      }
      fields.push_back(table_schema->field(index));
    }
    SLUICE_ASSIGN_OR_RETURN(schema, DataType::Struct(fields));
  }
  std::vector<AddFile> files = options.files ? std::move(*options.files) : snapshot->files();
  if (!options.filter) {
    return std::unique_ptr<TableScan>(new TableScan(std::move(snapshot), std::move(schema), std::move(files), options.row_tracking));
  }

  SLUICE_ASSIGN_OR_RETURN(expr::Expression filter, expr::Expression::Parse(*options.filter));
  SLUICE_ASSIGN_OR_RETURN(FilePruner pruner,
                          FilePruner::Make(filter, table_schema, snapshot->metadata().partition_columns));
  std::erase_if(files, [&](const AddFile& file) { return !pruner.MayMatch(file); });
  TypePtr read_schema = table_schema;
  if (!options.columns.empty()) {
    for (const std::string& name : filter.ReferencedColumns()) {
      const Field& field = table_schema->field(table_schema->FieldIndexIgnoreCase(name));
      if (std::none_of(fields.begin(), fields.end(), [&](const Field& f) { return f.name == field.name; })) {
        fields.push_back(field);
      }
    }
    SLUICE_ASSIGN_OR_RETURN(read_schema, DataType::Struct(std::move(fields)));
  }
  // Batches come with the row-tracking columns when asked for; the filter does not name them.
  const TypePtr filtered = WithoutColumnMapping(read_schema);
  SLUICE_ASSIGN_OR_RETURN(expr::BoundExpression bound,
                          expr::BindPredicate(filter, options.row_tracking ? WithRowTrackingColumns(filtered) : filtered));
  auto scan = std::unique_ptr<TableScan>(new TableScan(std::move(snapshot), std::move(schema), std::move(files), options.row_tracking));
  scan->read_schema_ = std::move(read_schema);
  scan->filter_ = std::move(bound);
  return scan;
}

Result<BatchPtr> TableScan::Next() {
  while (true) {
    if (current_ == nullptr) {
      if (next_file_ >= files_.size()) return BatchPtr();
      if (read_columns_ == nullptr) {
        SLUICE_ASSIGN_OR_RETURN(read_columns_, ReadColumns::Of(*snapshot_, read_schema_, row_tracking_));
      }
      SLUICE_ASSIGN_OR_RETURN(current_, FileReader::Open(*snapshot_, files_[next_file_++], read_columns_));
    }
    SLUICE_ASSIGN_OR_RETURN(BatchPtr batch, current_->Next());
    if (batch == nullptr) {
      current_ = nullptr;
      continue;
    }
    if (!filter_) return batch;
    SLUICE_RETURN_IF_ERROR(filter_->Filter(*batch, &selection_));
    if (selection_.empty()) continue;
    if (static_cast<int64_t>(selection_.size()) != batch->num_rows()) batch = Take(batch, selection_);
    if (batch->num_columns() == schema_->num_fields()) return batch;
    // Without the columns only the filter read, which come after the table's columns returned.
    const int tracking = row_tracking_ ? 2 : 0;
    std::vector<ColumnPtr> columns(batch->columns().begin(), batch->columns().begin() + schema_->num_fields() - tracking);
    columns.insert(columns.end(), batch->columns().end() - tracking, batch->columns().end());
    return RecordBatch::Make(schema_, std::move(columns), batch->num_rows());
  }
}

}  // namespace sluice::delta
