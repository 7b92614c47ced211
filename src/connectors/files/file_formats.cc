// The `parquet`, `csv` and `json` sources and sinks: option tables, listing and reading files,
// writing one file per batch with the write modes.
#include "sluice/connectors/files/formats.h"

#include <charconv>
#include <filesystem>

#include <fmt/format.h>

#include "connectors/files/file_codecs.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/path_names.h"
#include "sluice/engine/batch_write.h"
#include "sluice/parquet/reader.h"
#include "sluice/engine/read_once_source.h"
#include "sluice/parquet/writer.h"
#include "sluice/storage/file_systems.h"

namespace sluice::connectors {

using engine::BatchInfo;
using engine::BatchWriter;
using engine::OutputMode;
using engine::PieceConsumer;
using engine::ReadOnceSource;
using engine::Registry;
using engine::Sink;
using engine::SinkContext;
using engine::Source;
using engine::SourceContext;
using engine::WholeBatchWriter;
using engine::WithWriteTransactionOptions;
using engine::WriteTransaction;
using engine::WriteTransactionOf;

namespace {

enum class FileKind { kParquet, kCsv, kJson };

constexpr std::string_view kWriteModes[] = {"append", "overwrite", "errorifexists", "error", "default", "ignore"};
constexpr std::string_view kCompressions[] = {"none", "uncompressed", "snappy", "gzip", "zstd"};

constexpr OptionSpec kParquetSourceOptions[] = {
    {"path", OptionType::kString, std::nullopt, true, "a Parquet file or a directory of them"},
};
constexpr OptionSpec kParquetSinkOwnOptions[] = {
    {"path", OptionType::kString, std::nullopt, true, "the directory the files are written into"},
    {"mode", OptionType::kEnum, "errorifexists", false, "append, overwrite, errorifexists or ignore", kWriteModes},
    {"compression", OptionType::kEnum, "snappy", false, "none, snappy, gzip or zstd", kCompressions},
};
constexpr OptionSpec kCsvSourceOptions[] = {
    {"path", OptionType::kString, std::nullopt, true, "a CSV file or a directory of them"},
    {"schema", OptionType::kString, std::nullopt, false, "the columns as DDL: `id long, name string`"},
    {"header", OptionType::kBool, "false", false, "the first line names the columns"},
    {"sep", OptionType::kString, std::nullopt, false, "the field separator (default `,`)"},
    {"delimiter", OptionType::kString, std::nullopt, false, "another name for sep"},
    {"quote", OptionType::kString, "\"", false, "the quote character"},
    {"escape", OptionType::kString, "\\", false, "makes the next character inside quotes literal"},
    {"nullValue", OptionType::kString, "", false, "the text of a null field"},
};
constexpr OptionSpec kCsvSinkOwnOptions[] = {
    {"path", OptionType::kString, std::nullopt, true, "the directory the files are written into"},
    {"mode", OptionType::kEnum, "errorifexists", false, "append, overwrite, errorifexists or ignore", kWriteModes},
    {"header", OptionType::kBool, "false", false, "write the column names as the first line"},
    {"sep", OptionType::kString, std::nullopt, false, "the field separator (default `,`)"},
    {"delimiter", OptionType::kString, std::nullopt, false, "another name for sep"},
    {"quote", OptionType::kString, "\"", false, "the quote character"},
    {"escape", OptionType::kString, "\\", false, "escapes quotes and itself inside quotes"},
    {"nullValue", OptionType::kString, "", false, "the text of a null field"},
};
constexpr OptionSpec kJsonSourceOptions[] = {
    {"path", OptionType::kString, std::nullopt, true, "a JSON lines file or a directory of them"},
    {"schema", OptionType::kString, std::nullopt, true, "the fields as DDL: `id long, name string`"},
};
constexpr OptionSpec kJsonSinkOwnOptions[] = {
    {"path", OptionType::kString, std::nullopt, true, "the directory the files are written into"},
    {"mode", OptionType::kEnum, "errorifexists", false, "append, overwrite, errorifexists or ignore", kWriteModes},
};

constexpr auto kParquetSinkOptions = WithWriteTransactionOptions(kParquetSinkOwnOptions);
constexpr auto kCsvSinkOptions = WithWriteTransactionOptions(kCsvSinkOwnOptions);
constexpr auto kJsonSinkOptions = WithWriteTransactionOptions(kJsonSinkOwnOptions);

constexpr int64_t kRowsPerBatch = 64 * 1024;
constexpr size_t kWriteBufferBytes = size_t{1} << 20;

std::string_view KindName(FileKind kind) {
  switch (kind) {
    case FileKind::kParquet:
      return "parquet";
    case FileKind::kCsv:
      return "csv";
    case FileKind::kJson:
      return "json";
  }
  return "";
}

Status InvalidOption(FileKind kind, std::string_view what) {
  return Status::Error(errors::kInvalidOptions, fmt::format("{}: {}", KindName(kind), what));
}

Result<char> OneCharacter(FileKind kind, const ValidatedOptions& options, std::string_view name,
                          std::string_view fallback) {
  std::string_view value = options.Has(name) ? std::string_view(options.GetString(name)) : fallback;
  if (value.size() != 1) return InvalidOption(kind, fmt::format("`{}` must be exactly one character", name));
  return value[0];
}

Result<CsvOptions> ParseCsvOptions(const ValidatedOptions& options) {
  if (options.Has("sep") && options.Has("delimiter")) {
    return InvalidOption(FileKind::kCsv, "give the separator as `sep` or as `delimiter`, not both");
  }
  CsvOptions csv;
  csv.header = options.GetBool("header");
  SLUICE_ASSIGN_OR_RETURN(csv.separator,
                          OneCharacter(FileKind::kCsv, options, options.Has("delimiter") ? "delimiter" : "sep", ","));
  SLUICE_ASSIGN_OR_RETURN(csv.quote, OneCharacter(FileKind::kCsv, options, "quote", "\""));
  SLUICE_ASSIGN_OR_RETURN(csv.escape, OneCharacter(FileKind::kCsv, options, "escape", "\\"));
  csv.null_value = options.GetString("nullValue");
  if (csv.separator == csv.quote || csv.separator == '\n' || csv.quote == '\n') {
    return InvalidOption(FileKind::kCsv, "the separator and the quote must differ and not be a line break");
  }
  return csv;
}

Result<TypePtr> ParseSchemaOption(FileKind kind, const ValidatedOptions& options) {
  Result<TypePtr> schema = ParseTypeString(options.GetString("schema"));
  if (!schema.ok() || (*schema)->id() != TypeId::kStruct) {
    return InvalidOption(kind, fmt::format("`schema` `{}` is not a column list such as `id long, name string`{}",
                                           options.GetString("schema"),
                                           schema.ok() ? std::string() : ": " + std::string(schema.status().message())));
  }
  return schema;
}

bool IsDataFileName(std::string_view name) { return !name.empty() && name[0] != '_' && name[0] != '.'; }

std::string_view BaseName(std::string_view path) { return path.substr(path.rfind('/') + 1); }

class FileSource final : public ReadOnceSource {
 public:
  FileSource(FileKind kind, std::string path, CsvOptions csv, TypePtr schema)
      : kind_(kind), path_(std::move(path)), csv_(std::move(csv)), schema_(std::move(schema)) {}

  std::string description() const override { return fmt::format("FileSource[{} {}]", KindName(kind_), path_); }
  TypePtr schema() const override { return schema_; }

  // Lists the files and learns the schema, so a missing path or a bad first file fails before any batch.
  Status Open(const SourceContext& context) override {
    file_system_ = context.file_system;
    SLUICE_ASSIGN_OR_RETURN(FileInfo info, file_system_->Stat(path_));
    files_.clear();
    if (info.is_directory) {
      SLUICE_ASSIGN_OR_RETURN(auto entries, file_system_->List(path_));
      for (const FileInfo& entry : entries) {
        if (!entry.is_directory && IsDataFileName(BaseName(entry.path))) files_.push_back(entry.path);
      }
    } else {
      files_.push_back(path_);
    }
    if (kind_ == FileKind::kParquet) {
      if (files_.empty()) return Status::Error(errors::kFileNotFound, description() + ": the directory holds no files");
      SLUICE_ASSIGN_OR_RETURN(auto reader, parquet::ParquetReader::Open(*file_system_, files_[0]));
      schema_ = reader->schema();
    } else if (!schema_) {
      std::vector<std::string> names;
      if (!files_.empty()) {
        SLUICE_ASSIGN_OR_RETURN(std::string content, file_system_->ReadFile(files_[0]));
        SLUICE_ASSIGN_OR_RETURN(names, CsvColumnNames(content, files_[0], csv_));
      }
      std::vector<Field> fields;
      for (auto& name : names) fields.push_back(Field{std::move(name), DataType::String()});
      SLUICE_ASSIGN_OR_RETURN(schema_, DataType::Struct(std::move(fields)));
    }
    return Status::OK();
  }

  // File by file, and a Parquet file row group by row group: a query holds one csv or json file
  // (its bytes and its batches) or a few Parquet batches at a time, not the whole path.
  Status ReadAllPieces(const PieceConsumer& consume) override {
    for (const std::string& file : files_) SLUICE_RETURN_IF_ERROR(ReadOne(file, consume));
    return Status::OK();
  }

 private:
  Status ReadOne(const std::string& file, const PieceConsumer& consume) {
    if (kind_ == FileKind::kParquet) {
      SLUICE_ASSIGN_OR_RETURN(auto reader, parquet::ParquetReader::Open(*file_system_, file));
      if (!reader->schema()->Equals(*schema_)) {
        return Status::Error(errors::kDatatypeMismatch,
                             fmt::format("{}: {} has schema {}, the first file {}", description(), file,
                                         reader->schema()->ToString(), schema_->ToString()));
      }
      parquet::ReadOptions read_options;
      read_options.batch_size = kRowsPerBatch;
      SLUICE_ASSIGN_OR_RETURN(auto batch_reader, reader->NewBatchReader(read_options));
      for (;;) {
        SLUICE_ASSIGN_OR_RETURN(BatchPtr batch, batch_reader->Next());
        if (!batch) return Status::OK();
        SLUICE_RETURN_IF_ERROR(consume(std::move(batch)));
      }
    }
    std::vector<BatchPtr> batches;
    {
      SLUICE_ASSIGN_OR_RETURN(std::string content, file_system_->ReadFile(file));
      if (kind_ == FileKind::kCsv) {
        SLUICE_RETURN_IF_ERROR(ReadCsv(content, file, csv_, schema_, kRowsPerBatch, &batches));
      } else {
        PadForJson(&content);
        SLUICE_RETURN_IF_ERROR(ReadJsonLines(content, file, schema_, kRowsPerBatch, &batches));
      }
    }
    for (BatchPtr& batch : batches) SLUICE_RETURN_IF_ERROR(consume(std::move(batch)));
    return Status::OK();
  }

  FileKind kind_;
  std::string path_;
  CsvOptions csv_;
  TypePtr schema_;  // null until Open for parquet and for csv without `schema`
  std::shared_ptr<FileSystem> file_system_;
  std::vector<std::string> files_;
};

enum class WriteMode { kAppend, kOverwrite, kErrorIfExists, kIgnore };

WriteMode ParseWriteMode(const std::string& mode) {
  if (mode == "append") return WriteMode::kAppend;
  if (mode == "overwrite") return WriteMode::kOverwrite;
  if (mode == "ignore") return WriteMode::kIgnore;
  return WriteMode::kErrorIfExists;
}

class FileSink final : public Sink {
 public:
  // With `transaction`, files are named after it instead of the query's id and batch id, and a
  // write is skipped when the directory records its version already.
  FileSink(FileKind kind, std::string path, WriteMode mode, CsvOptions csv, parquet::CompressionCodec compression,
           std::optional<WriteTransaction> transaction)
      : kind_(kind),
        path_(std::move(path)),
        mode_(mode),
        csv_(std::move(csv)),
        compression_(compression),
        transaction_(std::move(transaction)) {}

  std::string description() const override { return fmt::format("FileSink[{} {}]", KindName(kind_), path_); }
  std::vector<OutputMode> supported_output_modes() const override { return {OutputMode::kAppend}; }

  Status Open(const SinkContext& context) override {
    file_system_ = context.file_system;
    query_id_ = transaction_ ? transaction_->app_id : context.query_id;
    return Status::OK();
  }

  Result<std::unique_ptr<BatchWriter>> BeginBatch(const BatchInfo& info) override {
    return WholeBatchWriter::Concatenating(info.schema, [this, batch_id = info.batch_id](const RecordBatch& batch) {
      Status written = transaction_ ? WriteInTransaction(batch) : Write(batch_id, batch);
      return written.ok() ? written : written.WithContext(description());
    });
  }

 private:
  // <path>/_sluice_transactions/<app id> holds the last version written for the app id; readers
  // of the directory skip names starting with `_`. It is written after the data file, so a crash
  // between the two leaves the version unrecorded and the replay writes the same file again.
  Status WriteInTransaction(const RecordBatch& batch) {
    const std::string recorded_path = path_ + "/_sluice_transactions/" + transaction_->app_id;
    Result<std::string> recorded = file_system_->ReadFile(recorded_path);
    if (recorded.ok()) {
      int64_t version = -1;
      auto [end, ec] = std::from_chars(recorded->data(), recorded->data() + recorded->size(), version);
      if (ec != std::errc() || end != recorded->data() + recorded->size()) {
        return Status::Error(errors::kFileSinkTransactionCorrupt,
                             fmt::format("{} does not hold a version number; remove it to write the batch again",
                                         recorded_path));
      }
      if (version >= transaction_->version) return Status::OK();
    } else if (recorded.status().error_class() != errors::kFileNotFound) {
      return recorded.status();
    }
    SLUICE_RETURN_IF_ERROR(Write(transaction_->version, batch));
    SLUICE_RETURN_IF_ERROR(file_system_->CreateDirectories(path_ + "/_sluice_transactions"));
    return file_system_->AtomicWrite(recorded_path, std::to_string(transaction_->version));
  }

  Status Write(int64_t batch_id, const RecordBatch& batch) {
    const bool first = !started_;
    started_ = true;
    std::vector<std::string> others;
    if (first) {
      SLUICE_ASSIGN_OR_RETURN(others, OtherQueriesFiles());
      if (!others.empty() && mode_ == WriteMode::kErrorIfExists) {
        return Status::Error(errors::kFileAlreadyExists,
                             fmt::format("{} already holds data files ({}); choose mode append, overwrite or ignore",
                                         path_, BaseName(others[0])));
      }
      ignoring_ = !others.empty() && mode_ == WriteMode::kIgnore;
    }
    if (ignoring_ || (!first && batch.num_rows() == 0)) return Status::OK();
    std::string file = fmt::format("{}/part-{:05}-{}.{}", path_, batch_id, query_id_, KindName(kind_));
    SLUICE_RETURN_IF_ERROR(file_system_->CreateDirectories(path_));
    SLUICE_ASSIGN_OR_RETURN(auto out, file_system_->OpenForWrite(file));
    if (kind_ == FileKind::kParquet) {
      parquet::WriterOptions writer_options;
      writer_options.compression = compression_;
      SLUICE_ASSIGN_OR_RETURN(auto writer, parquet::ParquetWriter::Open(std::move(out), batch.schema(), writer_options));
      SLUICE_RETURN_IF_ERROR(writer->Write(batch));
      SLUICE_RETURN_IF_ERROR(writer->Close().status());
    } else {
      SLUICE_RETURN_IF_ERROR(WriteText(batch, out.get()));
      SLUICE_RETURN_IF_ERROR(out->Close());
    }
    if (first && mode_ == WriteMode::kOverwrite) {
      for (const std::string& other : others) SLUICE_RETURN_IF_ERROR(file_system_->DeleteRecursively(other));
    }
    return Status::OK();
  }

  Status WriteText(const RecordBatch& batch, WritableFile* out) const {
    std::string buffer;
    if (kind_ == FileKind::kCsv && csv_.header) AppendCsvHeader(batch.schema(), csv_, &buffer);
    constexpr int64_t kRowsPerChunk = 4096;
    for (int64_t row = 0; row < batch.num_rows(); row += kRowsPerChunk) {
      int64_t end = std::min(batch.num_rows(), row + kRowsPerChunk);
      if (kind_ == FileKind::kCsv) {
        AppendCsvRows(batch, row, end, csv_, &buffer);
      } else {
        AppendJsonLines(batch, row, end, &buffer);
      }
      if (buffer.size() >= kWriteBufferBytes) {
        SLUICE_RETURN_IF_ERROR(out->Append(buffer));
        buffer.clear();
      }
    }
    return out->Append(buffer);
  }

  // The data files in the directory that another query wrote.
  Result<std::vector<std::string>> OtherQueriesFiles() const {
    SLUICE_ASSIGN_OR_RETURN(auto entries, file_system_->List(path_));
    std::vector<std::string> others;
    for (const FileInfo& entry : entries) {
      std::string_view name = BaseName(entry.path);
      if (IsDataFileName(name) && (entry.is_directory || name.find(query_id_) == std::string_view::npos)) {
        others.push_back(entry.path);
      }
    }
    return others;
  }

  FileKind kind_;
  std::string path_;
  WriteMode mode_;
  CsvOptions csv_;
  parquet::CompressionCodec compression_;
  std::optional<WriteTransaction> transaction_;
  std::shared_ptr<FileSystem> file_system_;
  std::string query_id_;
  bool started_ = false;
  bool ignoring_ = false;
};

parquet::CompressionCodec ParseCompression(const std::string& name) {
  if (name == "gzip") return parquet::CompressionCodec::kGzip;
  if (name == "zstd") return parquet::CompressionCodec::kZstd;
  if (name == "snappy") return parquet::CompressionCodec::kSnappy;
  return parquet::CompressionCodec::kUncompressed;
}

Result<std::unique_ptr<Source>> MakeFileSource(FileKind kind, const ValidatedOptions& options) {
  CsvOptions csv;
  if (kind == FileKind::kCsv) {
    SLUICE_ASSIGN_OR_RETURN(csv, ParseCsvOptions(options));
  }
  TypePtr schema;
  if (kind != FileKind::kParquet && options.Has("schema")) {
    SLUICE_ASSIGN_OR_RETURN(schema, ParseSchemaOption(kind, options));
  }
  return std::unique_ptr<Source>(
      new FileSource(kind, storage::AbsolutePath(options.GetString("path")), std::move(csv), std::move(schema)));
}

Result<std::unique_ptr<Sink>> MakeFileSink(FileKind kind, const ValidatedOptions& options) {
  CsvOptions csv;
  if (kind == FileKind::kCsv) {
    SLUICE_ASSIGN_OR_RETURN(csv, ParseCsvOptions(options));
  }
  parquet::CompressionCodec compression = parquet::CompressionCodec::kUncompressed;
  if (kind == FileKind::kParquet) compression = ParseCompression(options.GetString("compression"));
  SLUICE_ASSIGN_OR_RETURN(std::optional<WriteTransaction> transaction, WriteTransactionOf(options));
  if (transaction) {
    if (std::string problem = PathNameProblem(transaction->app_id); !problem.empty()) {
      return Status::Error(errors::kInvalidOptions,
                           fmt::format("txnAppId of a file sink names a file beside its data: {}", problem));
    }
  }
  return std::unique_ptr<Sink>(new FileSink(kind, storage::AbsolutePath(options.GetString("path")),
                                            ParseWriteMode(options.GetString("mode")), std::move(csv), compression,
                                            std::move(transaction)));
}

Status RegisterKind(Registry* registry, FileKind kind, std::span<const OptionSpec> source_options,
                    std::span<const OptionSpec> sink_options) {
  std::string name(KindName(kind));
  SLUICE_RETURN_IF_ERROR(registry->RegisterSource(
      {name, source_options, errors::kInvalidOptions,
       [kind](const ValidatedOptions& options) { return MakeFileSource(kind, options); }}));
  return registry->RegisterSink({name, sink_options, errors::kInvalidOptions,
                                 [kind](const ValidatedOptions& options, const Registry&) {
                                   return MakeFileSink(kind, options);
                                 }});
}

}  // namespace

Status RegisterFileFormats(Registry* registry) {
  SLUICE_RETURN_IF_ERROR(RegisterKind(registry, FileKind::kParquet, kParquetSourceOptions, kParquetSinkOptions));
  SLUICE_RETURN_IF_ERROR(RegisterKind(registry, FileKind::kCsv, kCsvSourceOptions, kCsvSinkOptions));
  return RegisterKind(registry, FileKind::kJson, kJsonSourceOptions, kJsonSinkOptions);
}

}  // namespace sluice::connectors
