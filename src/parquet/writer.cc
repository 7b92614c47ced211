#include "sluice/parquet/writer.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "parquet/codec.h"
#include "parquet/column_writer.h"
#include "parquet/schema_conversion.h"
#include "parquet/shred.h"
#include "sluice/core/error_classes.h"

namespace sluice::parquet {

namespace {

// Top-level rows shredded at a time: small enough to keep the level buffers in cache, large
// enough to amortize the per-column calls.
constexpr int64_t kRowsPerStep = 4096;

constexpr std::string_view kMagic = "PAR1";

// Type equality that ignores field metadata (which Parquet files do not carry).
bool SameShape(const DataType& a, const DataType& b) {
  if (a.id() != b.id()) return false;
  switch (a.id()) {
    case TypeId::kDecimal: return a.precision() == b.precision() && a.scale() == b.scale();
    case TypeId::kStruct:
      if (a.num_fields() != b.num_fields()) return false;
      for (int i = 0; i < a.num_fields(); ++i) {
        const Field& fa = a.field(i);
        const Field& fb = b.field(i);
        if (fa.name != fb.name || fa.nullable != fb.nullable || !SameShape(*fa.type, *fb.type)) return false;
      }
      return true;
    case TypeId::kArray: return a.contains_null() == b.contains_null() && SameShape(*a.element_type(), *b.element_type());
    case TypeId::kMap:
      return a.value_contains_null() == b.value_contains_null() && SameShape(*a.key_type(), *b.key_type()) &&
             SameShape(*a.value_type(), *b.value_type());
    default: return true;
  }
}

Status ValidateOptions(const WriterOptions& o) {
  auto bad = [](std::string message) { return Status::Error(errors::kInvalidArgument, std::move(message)); };
  if (!IsCodecSupported(o.compression)) {
    return bad("compression " + CodecName(o.compression) + " is not supported; use UNCOMPRESSED, SNAPPY, GZIP or ZSTD");
  }
  if (o.compression == CompressionCodec::kZstd && (o.zstd_level < 1 || o.zstd_level > 22)) {
    return bad("zstd level " + std::to_string(o.zstd_level) + " is outside 1..22");
  }
  if (o.row_group_size <= 0) return bad("row group size must be positive");
  if (o.max_row_group_rows <= 0) return bad("the most rows of a row group must be positive");
  if (o.page_size <= 0 || o.page_size > (int64_t{1} << 30)) return bad("page size must be between 1 byte and 1 GiB");
  if (o.dictionary_size_limit < 0 || o.dictionary_size_limit > (int64_t{1} << 30)) {
    return bad("dictionary size limit must be between 0 and 1 GiB");
  }
  return Status::OK();
}

}  // namespace

class ParquetWriter::Impl {
 public:
  Impl(std::unique_ptr<WritableFile> file, TypePtr schema, WriterOptions options, ParquetSchema parquet)
      : file_(std::move(file)), schema_(std::move(schema)), options_(std::move(options)), parquet_(std::move(parquet)) {
    for (const LeafColumn& leaf : parquet_.leaves) columns_.push_back(std::make_unique<ColumnWriter>(leaf, options_));
    entries_.resize(parquet_.leaves.size());
  }

  Status Start() { return Fail(file_->Append(kMagic)); }

  Status Write(const RecordBatch& batch) {
    SLUICE_RETURN_IF_ERROR(Usable());
    if (!SameShape(*batch.schema(), *schema_)) {
      return Status::Error(errors::kInvalidArgument, "batch schema " + batch.schema()->ToString() +
                                                         " does not match the file's schema " + schema_->ToString());
    }
    for (int64_t begin = 0, end = 0; begin < batch.num_rows(); begin = end) {
      end = std::min({batch.num_rows(), begin + kRowsPerStep, begin + options_.max_row_group_rows - rows_in_group_});
      for (LeafEntries& e : entries_) e.Clear();
      for (int i = 0; i < batch.num_columns(); ++i) {
        const SchemaNode* violation = shredder_.Shred(parquet_.fields[i], *batch.column(i), begin, end, &entries_);
        if (violation != nullptr) {
          return Fail(Status::Error(errors::kInvalidArgument, "field '" + violation->name + "' under column '" +
                                                                  batch.field(i).name +
                                                                  "' is declared non-nullable but holds a null"));
        }
      }
      int64_t estimate = 0;
      for (size_t c = 0; c < columns_.size(); ++c) {
        SLUICE_RETURN_IF_ERROR(Fail(columns_[c]->Append(entries_[c])));
        estimate += columns_[c]->EstimatedSize();
      }
      rows_in_group_ += end - begin;
      total_rows_ += end - begin;
      if (estimate >= options_.row_group_size || rows_in_group_ == options_.max_row_group_rows) {
        SLUICE_RETURN_IF_ERROR(FlushRowGroup());
      }
    }
    return Status::OK();
  }

  Result<FileStats> Close() {
    SLUICE_RETURN_IF_ERROR(Usable());
    SLUICE_RETURN_IF_ERROR(FlushRowGroup());
    FileMetaData& f = footer_;
    f.version = 1;
    f.schema = parquet_.elements;
    f.num_rows = total_rows_;
    for (const auto& [key, value] : options_.key_value_metadata) f.key_value_metadata.push_back({key, value});
    f.created_by = "sluice version " SLUICE_VERSION;
    f.column_orders.assign(parquet_.leaves.size(), ColumnOrder::kTypeDefinedOrder);
    std::string footer;
    SerializeFileMetaData(f, &footer);
    auto length = static_cast<uint32_t>(footer.size());
    char length_bytes[4];
    std::memcpy(length_bytes, &length, 4);
    footer.append(length_bytes, 4);
    footer.append(kMagic);
    SLUICE_RETURN_IF_ERROR(Fail(file_->Append(footer)));
    FileStats stats;
    stats.num_rows = total_rows_;
    stats.file_size = file_->Tell();
    SLUICE_RETURN_IF_ERROR(Fail(file_->Close()));
    closed_ = true;
    for (const auto& column : columns_) stats.columns.push_back(column->FileStatistics());
    return stats;
  }

  int64_t num_rows() const { return total_rows_; }

 private:
  Status Usable() const {
    if (!error_.ok()) return error_;
    if (closed_) return Status::Error(errors::kInvalidArgument, "the Parquet writer is already closed");
    return Status::OK();
  }

  // Remembers the first failure: a file with a half-written row group must not be finished.
  Status Fail(Status s) {
    if (!s.ok() && error_.ok()) error_ = s;
    return s;
  }

  Status FlushRowGroup() {
    if (rows_in_group_ == 0) return Status::OK();
    RowGroup g;
    g.file_offset = file_->Tell();
    int64_t compressed = 0;
    for (const auto& column : columns_) {
      ColumnChunk& chunk = g.columns.emplace_back();
      SLUICE_RETURN_IF_ERROR(Fail(column->FlushChunk(file_.get(), &chunk)));
      g.total_byte_size += chunk.meta_data->total_uncompressed_size;
      compressed += chunk.meta_data->total_compressed_size;
    }
    g.total_compressed_size = compressed;
    g.num_rows = rows_in_group_;
    if (footer_.row_groups.size() < 32768) g.ordinal = static_cast<int16_t>(footer_.row_groups.size());
    footer_.row_groups.push_back(std::move(g));
    rows_in_group_ = 0;
    return Status::OK();
  }

  std::unique_ptr<WritableFile> file_;
  TypePtr schema_;
  WriterOptions options_;
  ParquetSchema parquet_;
  std::vector<std::unique_ptr<ColumnWriter>> columns_;
  std::vector<LeafEntries> entries_;
  Shredder shredder_;
  FileMetaData footer_;
  int64_t rows_in_group_ = 0;
  int64_t total_rows_ = 0;
  Status error_;
  bool closed_ = false;
};

ParquetWriter::ParquetWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ParquetWriter::~ParquetWriter() = default;

Result<std::unique_ptr<ParquetWriter>> ParquetWriter::Open(std::unique_ptr<WritableFile> file, TypePtr schema,
                                                           WriterOptions options) {
  SLUICE_RETURN_IF_ERROR(ValidateOptions(options));
  SLUICE_ASSIGN_OR_RETURN(ParquetSchema parquet, SchemaToParquet(schema));
  auto impl = std::make_unique<Impl>(std::move(file), std::move(schema), std::move(options), std::move(parquet));
  SLUICE_RETURN_IF_ERROR(impl->Start());
  return std::unique_ptr<ParquetWriter>(new ParquetWriter(std::move(impl)));
}

Status ParquetWriter::Write(const RecordBatch& batch) { return impl_->Write(batch); }

int64_t ParquetWriter::num_rows() const { return impl_->num_rows(); }

Result<FileStats> ParquetWriter::Close() { return impl_->Close(); }

}  // namespace sluice::parquet
