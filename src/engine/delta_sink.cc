#include "sluice/delta/table_writer.h"
#include "sluice/delta/writer.h"
#include "sluice/engine/batch_write.h"
#include "sluice/engine/delta_formats.h"

namespace sluice::engine {
namespace {

constexpr std::string_view kModes[] = {"append", "overwrite"};

constexpr OptionSpec kOwnOptions[] = {
    {"path", OptionType::kString, std::nullopt, true, "directory of the Delta table"},
    {"mergeSchema", OptionType::kBool, "false", false, "add new columns of the batches to the table schema"},
    {"mode", OptionType::kEnum, std::nullopt, false, "batch write mode: append or overwrite", kModes},
};
constexpr auto kOptions = WithWriteTransactionOptions(kOwnOptions);

class DeltaSink final : public Sink {
 public:
  // `mode` is empty for a streaming append. With `transaction`, every write records it instead of
  // the query's id and batch id (and is skipped when the table records it already).
  DeltaSink(std::string path, bool merge_schema, std::string mode, std::optional<WriteTransaction> transaction)
      : path_(std::move(path)),
        merge_schema_(merge_schema),
        mode_(std::move(mode)),
        transaction_(std::move(transaction)) {}

  std::string description() const override { return "DeltaSink[" + path_ + "]"; }
  // `complete` (an aggregation's whole result every batch) replaces the table's rows in each
  // batch's commit, as Spark's Delta sink does.
  std::vector<OutputMode> supported_output_modes() const override {
    return {OutputMode::kAppend, OutputMode::kComplete};
  }

  Status Open(const SinkContext& context) override {
    file_system_ = context.file_system;
    query_id_ = context.query_id;
    complete_ = context.output_mode == OutputMode::kComplete;
    return Status::OK();
  }

  Status AddBatch(int64_t batch_id, const RecordBatch& batch) override {
    // The copy shares the batch's columns; the writer keeps nothing after it returns.
    return AddBatchPieces(batch_id, {std::make_shared<const RecordBatch>(batch)});
  }

  Status AddBatchPieces(int64_t batch_id, const std::vector<BatchPtr>& pieces) override {
    Result<delta::WriteResult> written = delta::WriteTable(file_system_, path_, pieces, WriteOptionsFor(batch_id));
    if (!written.ok()) return written.status().WithContext(description());
    // The run's later batches add to what its first one wrote.
    overwritten_ = true;
    return Status::OK();
  }

  // Each piece goes into the table's data files as it comes; the commit comes once at the end.
  Result<std::unique_ptr<BatchWriter>> BeginBatch(int64_t batch_id, TypePtr schema) override {
    return std::unique_ptr<BatchWriter>(new PieceWriter(this, batch_id, std::move(schema)));
  }

 private:
  // The table write starts with the first piece, whose schema it takes (an empty batch has the
  // source's schema).
  class PieceWriter final : public BatchWriter {
   public:
    PieceWriter(DeltaSink* sink, int64_t batch_id, TypePtr schema)
        : sink_(sink), batch_id_(batch_id), schema_(std::move(schema)) {}

    Status Add(BatchPtr piece) override {
      if (!table_) SLUICE_RETURN_IF_ERROR(Start(piece->schema()));
      return Context(table_->Write(piece));
    }

    Status Commit() override {
      if (!table_) SLUICE_RETURN_IF_ERROR(Start(schema_));
      SLUICE_RETURN_IF_ERROR(Context(table_->Commit().status()));
      sink_->overwritten_ = true;
      return Status::OK();
    }

   private:
    Status Start(TypePtr schema) {
      Result<std::unique_ptr<delta::TableWriter>> started = delta::TableWriter::Start(
          sink_->file_system_, sink_->path_, std::move(schema), sink_->WriteOptionsFor(batch_id_));
      SLUICE_RETURN_IF_ERROR(Context(started.status()));
      table_ = std::move(*started);
      return Status::OK();
    }
    Status Context(Status status) const { return status.ok() ? status : status.WithContext(sink_->description()); }

    DeltaSink* sink_;
    int64_t batch_id_;
    TypePtr schema_;
    std::unique_ptr<delta::TableWriter> table_;
  };

  delta::WriteOptions WriteOptionsFor(int64_t batch_id) const {
    delta::WriteOptions options;
    options.merge_schema = merge_schema_;
    options.transactions = {transaction_ ? delta::SetTransaction{transaction_->app_id, transaction_->version, std::nullopt}
                                         : delta::SetTransaction{query_id_, batch_id, std::nullopt}};
    if (mode_.empty()) {
      options.operation = std::string(delta::kOperationStreamingUpdate);
      options.operation_parameters = {{"outputMode", complete_ ? "Complete" : "Append"},
                                      {"queryId", query_id_},
                                      {"epochId", std::to_string(batch_id)}};
      if (complete_) options.mode = delta::WriteMode::kOverwrite;
    } else if (mode_ == "overwrite" && !overwritten_) {
      options.mode = delta::WriteMode::kOverwrite;
    }
    return options;
  }

  std::string path_;
  bool merge_schema_;
  std::string mode_;
  std::optional<WriteTransaction> transaction_;
  bool overwritten_ = false;
  bool complete_ = false;
  std::shared_ptr<FileSystem> file_system_;
  std::string query_id_;
};

}  // namespace

const std::span<const OptionSpec> kDeltaSinkOptions = kOptions;

Result<std::unique_ptr<Sink>> MakeDeltaSink(const ValidatedOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(std::optional<WriteTransaction> transaction, WriteTransactionOf(options));
  return std::unique_ptr<Sink>(new DeltaSink(options.GetString("path"), options.GetBool("mergeSchema"),
                                             options.Has("mode") ? options.GetString("mode") : std::string(),
                                             std::move(transaction)));
}

}  // namespace sluice::engine
