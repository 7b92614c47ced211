// The `delta` sink in batch write modes: append, or overwrite through the Delta layer's atomic
// overwrite, each commit carrying txn{query id, batch id} so that a replayed batch is skipped.
#include "sluice/delta/writer.h"
#include "sluice/engine/file_formats.h"

namespace sluice::engine {
namespace {

constexpr std::string_view kDeltaModes[] = {"append", "overwrite"};

constexpr OptionSpec kOptions[] = {
    {"path", OptionType::kString, std::nullopt, true, "directory of the Delta table"},
    {"mode", OptionType::kEnum, std::nullopt, true, "append or overwrite", kDeltaModes},
    {"mergeSchema", OptionType::kBool, "false", false, "add new columns of the batches to the table schema"},
};

class DeltaBatchSink final : public Sink {
 public:
  DeltaBatchSink(std::string path, delta::WriteMode mode, bool merge_schema)
      : path_(std::move(path)), mode_(mode), merge_schema_(merge_schema) {}

  std::string description() const override { return "DeltaBatchSink[" + path_ + "]"; }
  std::vector<OutputMode> supported_output_modes() const override { return {OutputMode::kAppend}; }

  Status Open(const SinkContext& context) override {
    file_system_ = context.file_system;
    query_id_ = context.query_id;
    return Status::OK();
  }

  Status AddBatch(int64_t batch_id, const RecordBatch& batch) override {
    delta::WriteOptions options;
    options.mode = mode_;
    options.merge_schema = merge_schema_;
    options.transactions = {delta::SetTransaction{query_id_, batch_id, std::nullopt}};
    std::vector<BatchPtr> batches = {std::make_shared<const RecordBatch>(batch)};
    Result<delta::WriteResult> written = delta::WriteTable(file_system_, path_, batches, options);
    if (!written.ok()) return written.status().WithContext(description());
    mode_ = delta::WriteMode::kAppend;  // the run's later batches add to what its first one wrote
    return Status::OK();
  }

 private:
  std::string path_;
  delta::WriteMode mode_;
  bool merge_schema_;
  std::shared_ptr<FileSystem> file_system_;
  std::string query_id_;
};

}  // namespace

const std::span<const OptionSpec> kDeltaBatchSinkOptions = kOptions;

Result<std::unique_ptr<Sink>> MakeDeltaBatchSink(const ValidatedOptions& options) {
  delta::WriteMode mode =
      options.GetString("mode") == "overwrite" ? delta::WriteMode::kOverwrite : delta::WriteMode::kAppend;
  return std::unique_ptr<Sink>(new DeltaBatchSink(options.GetString("path"), mode, options.GetBool("mergeSchema")));
}

}  // namespace sluice::engine
