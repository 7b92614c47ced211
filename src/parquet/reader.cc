#include "sluice/parquet/reader.h"

#include <cstring>

#include "parquet/column_reader.h"
#include "parquet/projection.h"
#include "parquet/record_assembly.h"
#include "parquet/schema_conversion.h"
#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"

namespace sluice::parquet {
namespace {

constexpr std::string_view kMagic = "PAR1";
constexpr std::string_view kEncryptedMagic = "PARE";

std::string JoinPath(const std::vector<std::string>& path) {
  std::string out;
  for (const auto& name : path) out += (out.empty() ? "" : ".") + name;
  return out;
}

int64_t ChunkStart(const ColumnMetaData& meta) {
  int64_t start = meta.data_page_offset;
  if (meta.dictionary_page_offset && *meta.dictionary_page_offset > 0) {
    start = std::min(start, *meta.dictionary_page_offset);
  }
  return start;
}

// Checks how the row groups fit the schema and the file, so that reading can trust them.
Status CheckRowGroups(const FileMetaData& metadata, const ParquetSchema& schema, int64_t data_end) {
  if (metadata.has_encryption_algorithm) {
    return Status::Error(errors::kParquetUnsupportedFeature, "encrypted Parquet files cannot be read");
  }
  for (size_t g = 0; g < metadata.row_groups.size(); ++g) {
    const RowGroup& group = metadata.row_groups[g];
    const std::string where = "row group " + std::to_string(g);
    if (group.num_rows < 0) return CorruptData(where + " has a negative row count");
    if (group.columns.size() != schema.leaves.size()) {
      return CorruptData(where + " has " + std::to_string(group.columns.size()) + " column chunks for " +
                         std::to_string(schema.leaves.size()) + " leaf columns");
    }
    for (size_t c = 0; c < group.columns.size(); ++c) {
      const ColumnChunk& chunk = group.columns[c];
      const LeafColumn& leaf = schema.leaves[c];
      const std::string column = where + ", column " + JoinPath(leaf.path);
      if (chunk.has_crypto_metadata) {
        return Status::Error(errors::kParquetUnsupportedFeature, column + " is encrypted");
      }
      if (chunk.file_path) {
        return Status::Error(errors::kParquetUnsupportedFeature, column + " lives in another file");
      }
      if (!chunk.meta_data) return CorruptData(column + " has no column metadata");
      const ColumnMetaData& meta = *chunk.meta_data;
      if (meta.type != *leaf.element.type) {
        return CorruptData(column + " holds " + TypeName(meta.type) + " values, its schema says " +
                           TypeName(*leaf.element.type));
      }
      const int64_t start = ChunkStart(meta);
      if (start < static_cast<int64_t>(kMagic.size()) || meta.total_compressed_size < 0 ||
          meta.total_compressed_size > data_end - start) {
        return CorruptData(column + " lies outside the file's data (offset " + std::to_string(start) + ", " +
                           std::to_string(meta.total_compressed_size) + " bytes)");
      }
    }
  }
  return Status::OK();
}

class RowGroupBatchReader final : public BatchReader {
 public:
  RowGroupBatchReader(const RandomAccessFile& file, std::string path, const FileMetaData& metadata,
                      const ParquetSchema& schema, Projection projection, std::vector<int> row_groups,
                      int64_t batch_size)
      : file_(file),
        path_(std::move(path)),
        metadata_(metadata),
        schema_(schema),
        projection_(std::move(projection)),
        row_groups_(std::move(row_groups)),
        batch_size_(batch_size),
        readers_(schema.leaves.size()) {}

  const TypePtr& schema() const override { return projection_.type; }

  Result<BatchPtr> Next() override {
    Result<BatchPtr> batch = NextOfRowGroups();
    if (!batch.ok() && !path_.empty()) {
      std::string group = next_group_ > 0 ? ", row group " + std::to_string(row_groups_[next_group_ - 1]) : "";
      return batch.status().WithContext(path_ + group);
    }
    return batch;
  }

 private:
  Result<BatchPtr> NextOfRowGroups() {
    while (rows_left_ == 0) {
      if (next_group_ == row_groups_.size()) return BatchPtr();
      SLUICE_RETURN_IF_ERROR(OpenRowGroup(row_groups_[next_group_++]));
    }
    const int64_t rows = std::min(batch_size_, rows_left_);
    std::vector<LeafData> leaves(schema_.leaves.size());
    for (int leaf : projection_.leaves) {
      int64_t read = 0;
      SLUICE_RETURN_IF_ERROR(readers_[leaf]->ReadRows(rows, &leaves[leaf], &read));
      if (read != rows) {
        return CorruptData("column " + JoinPath(schema_.leaves[leaf].path) + " ends " + std::to_string(rows_left_ - read) +
                           " rows before its row group");
      }
    }
    std::vector<ColumnPtr> columns;
    columns.reserve(projection_.nodes.size());
    for (const SchemaNode& node : projection_.nodes) {
      SLUICE_ASSIGN_OR_RETURN(ColumnPtr column, AssembleColumn(node, leaves, rows));
      columns.push_back(std::move(column));
    }
    rows_left_ -= rows;
    return RecordBatch::Make(projection_.type, std::move(columns), rows);
  }

  Status OpenRowGroup(int index) {
    const RowGroup& group = metadata_.row_groups[index];
    for (int leaf : projection_.leaves) {
      const ColumnMetaData& meta = *group.columns[leaf].meta_data;
      std::string chunk;
      SLUICE_RETURN_IF_ERROR(file_.ReadAt(ChunkStart(meta), meta.total_compressed_size, &chunk));
      SLUICE_ASSIGN_OR_RETURN(readers_[leaf], ColumnChunkReader::Make(schema_.leaves[leaf], meta, std::move(chunk)));
    }
    rows_left_ = group.num_rows;
    return Status::OK();
  }

  const RandomAccessFile& file_;
  const std::string path_;
  const FileMetaData& metadata_;
  const ParquetSchema& schema_;
  Projection projection_;
  std::vector<int> row_groups_;
  int64_t batch_size_;
  std::vector<std::unique_ptr<ColumnChunkReader>> readers_;
  size_t next_group_ = 0;
  int64_t rows_left_ = 0;
};

// The legacy min/max fields compare as signed values, which is right for these types only.
bool LegacyOrderIsRight(const LeafColumn& leaf) {
  switch (*leaf.element.type) {
    case Type::kBoolean:
    case Type::kInt32:
    case Type::kInt64:
    case Type::kFloat:
    case Type::kDouble:
      return leaf.type->id() != TypeId::kDecimal || leaf.element.converted_type != ConvertedType::kUint64;
    default:
      return false;
  }
}

Result<ColumnPtr> StatisticsBound(const LeafColumn& leaf, const std::string& plain) {
  LeafData data;
  SLUICE_RETURN_IF_ERROR(ConvertStatisticsValue(leaf, plain, &data));
  auto column = std::make_shared<Column>();
  column->type = leaf.type;
  column->length = 1;
  column->data = std::move(data.data);
  if (leaf.type->byte_width() == 0) column->offsets = std::move(data.offsets);
  return ColumnPtr(std::move(column));
}

}  // namespace

ParquetReader::ParquetReader(std::unique_ptr<RandomAccessFile> file, FileMetaData metadata,
                             std::unique_ptr<ParquetSchema> schema)
    : file_(std::move(file)), metadata_(std::move(metadata)), schema_(std::move(schema)) {}

ParquetReader::~ParquetReader() = default;

const TypePtr& ParquetReader::schema() const { return schema_->type; }

Result<std::unique_ptr<ParquetReader>> ParquetReader::Open(FileSystem& fs, const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessFile> file, fs.OpenForRead(path));
  auto reader = Open(std::move(file));
  if (!reader.ok()) return reader.status().WithContext(path);
  (*reader)->path_ = path;
  return reader;
}

Result<std::unique_ptr<ParquetReader>> ParquetReader::Open(std::unique_ptr<RandomAccessFile> file) {
  const int64_t size = file->Size();
  const int64_t trailer = 8;  // footer length + magic
  if (size < static_cast<int64_t>(kMagic.size()) + trailer) {
    return CorruptData("a Parquet file has at least 12 bytes; this one has " + std::to_string(size));
  }
  std::string bytes;
  SLUICE_RETURN_IF_ERROR(file->ReadAt(size - trailer, trailer, &bytes));
  std::string_view tail_magic = std::string_view(bytes).substr(4);
  if (tail_magic == kEncryptedMagic) {
    return Status::Error(errors::kParquetUnsupportedFeature, "Parquet files with an encrypted footer cannot be read");
  }
  if (tail_magic != kMagic) return CorruptData("the file does not end with the Parquet magic bytes PAR1");
  uint32_t footer_length;
  std::memcpy(&footer_length, bytes.data(), 4);
  const int64_t data_end = size - trailer - static_cast<int64_t>(footer_length);
  if (data_end < static_cast<int64_t>(kMagic.size())) {
    return CorruptData("footer of " + std::to_string(footer_length) + " bytes does not fit in a file of " +
                       std::to_string(size));
  }
  SLUICE_RETURN_IF_ERROR(file->ReadAt(0, kMagic.size(), &bytes));
  if (bytes != kMagic) return CorruptData("the file does not start with the Parquet magic bytes PAR1");
  SLUICE_RETURN_IF_ERROR(file->ReadAt(data_end, footer_length, &bytes));
  SLUICE_ASSIGN_OR_RETURN(FileMetaData metadata, ParseFileMetaData(bytes));
  SLUICE_ASSIGN_OR_RETURN(ParquetSchema schema, SchemaFromParquet(metadata.schema));
  SLUICE_RETURN_IF_ERROR(CheckRowGroups(metadata, schema, data_end));
  return std::unique_ptr<ParquetReader>(new ParquetReader(std::move(file), std::move(metadata),
                                                          std::make_unique<ParquetSchema>(std::move(schema))));
}

Result<std::vector<ColumnChunkStatistics>> ParquetReader::RowGroupStatistics(int row_group) const {
  if (row_group < 0 || row_group >= num_row_groups()) {
    return Status::Error(errors::kInvalidArgument, "row group " + std::to_string(row_group) + " of " +
                                                       std::to_string(num_row_groups()));
  }
  const RowGroup& group = metadata_.row_groups[row_group];
  std::vector<ColumnChunkStatistics> out;
  for (size_t c = 0; c < group.columns.size(); ++c) {
    const LeafColumn& leaf = schema_->leaves[c];
    const ColumnMetaData& meta = *group.columns[c].meta_data;
    ColumnChunkStatistics stats;
    stats.path = meta.path_in_schema;
    stats.num_values = meta.num_values;
    const bool order_known = c >= metadata_.column_orders.size() ||
                             metadata_.column_orders[c] != ColumnOrder::kUnknown;
    if (meta.statistics) {
      const Statistics& s = *meta.statistics;
      stats.null_count = s.null_count;
      const std::optional<std::string>* min = nullptr;
      const std::optional<std::string>* max = nullptr;
      if (s.min_value && s.max_value && order_known) {
        min = &s.min_value;
        max = &s.max_value;
      } else if (s.min && s.max && LegacyOrderIsRight(leaf)) {
        min = &s.min;
        max = &s.max;
      }
      if (min && *leaf.element.type != Type::kInt96 && ChooseConversion(leaf).ok()) {
        SLUICE_ASSIGN_OR_RETURN(stats.min, StatisticsBound(leaf, **min));
        SLUICE_ASSIGN_OR_RETURN(stats.max, StatisticsBound(leaf, **max));
      }
    }
    out.push_back(std::move(stats));
  }
  return out;
}

Result<std::unique_ptr<BatchReader>> ParquetReader::NewBatchReader(const ReadOptions& options,
                                                                   std::vector<int> row_groups) const {
  if (options.batch_size <= 0) {
    return Status::Error(errors::kInvalidArgument, "batch_size must be positive");
  }
  SLUICE_ASSIGN_OR_RETURN(Projection projection, Project(*schema_, options.columns));
  if (row_groups.empty()) {
    for (int i = 0; i < num_row_groups(); ++i) row_groups.push_back(i);
  }
  for (int g : row_groups) {
    if (g < 0 || g >= num_row_groups()) {
      return Status::Error(errors::kInvalidArgument,
                           "row group " + std::to_string(g) + " of " + std::to_string(num_row_groups()));
    }
  }
  return std::unique_ptr<BatchReader>(new RowGroupBatchReader(*file_, path_, metadata_, *schema_,
                                                              std::move(projection), std::move(row_groups),
                                                              options.batch_size));
}

Result<BatchPtr> ParquetReader::ReadAll(const ReadOptions& options) const {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<BatchReader> reader, NewBatchReader(options));
  std::vector<BatchPtr> batches;
  while (true) {
    SLUICE_ASSIGN_OR_RETURN(BatchPtr batch, reader->Next());
    if (!batch) break;
    batches.push_back(std::move(batch));
  }
  if (batches.empty()) return RecordBatch::Empty(reader->schema());
  if (batches.size() == 1) return batches[0];
  return Concatenate(batches);
}

}  // namespace sluice::parquet
