#include "sluice/delta/writer.h"
#include "sluice/engine/delta_formats.h"

namespace sluice::engine {
namespace {

constexpr OptionSpec kOptions[] = {
    {"path", OptionType::kString, std::nullopt, true, "directory of the Delta table"},
    {"mergeSchema", OptionType::kBool, "false", false, "add new columns of the batches to the table schema"},
};

class DeltaSink final : public Sink {
 public:
  DeltaSink(std::string path, bool merge_schema) : path_(std::move(path)), merge_schema_(merge_schema) {}

  std::string description() const override { return "DeltaSink[" + path_ + "]"; }
  std::vector<OutputMode> supported_output_modes() const override { return {OutputMode::kAppend}; }

  Status Open(const SinkContext& context) override {
    file_system_ = context.file_system;
    query_id_ = context.query_id;
    return Status::OK();
  }

  Status AddBatch(int64_t batch_id, const RecordBatch& batch) override {
    delta::WriteOptions options;
    options.merge_schema = merge_schema_;
    options.transactions = {delta::SetTransaction{query_id_, batch_id, std::nullopt}};
    options.operation = std::string(delta::kOperationStreamingUpdate);
    options.operation_parameters = {
        {"outputMode", "Append"}, {"queryId", query_id_}, {"epochId", std::to_string(batch_id)}};
    // The copy shares the batch's columns; the writer keeps nothing after it returns.
    std::vector<BatchPtr> batches = {std::make_shared<const RecordBatch>(batch)};
    Result<delta::WriteResult> written = delta::WriteTable(file_system_, path_, batches, options);
    return written.ok() ? Status::OK() : written.status().WithContext(description());
  }

 private:
  std::string path_;
  bool merge_schema_;
  std::shared_ptr<FileSystem> file_system_;
  std::string query_id_;
};

}  // namespace

const std::span<const OptionSpec> kDeltaSinkOptions = kOptions;

Result<std::unique_ptr<Sink>> MakeDeltaSink(const ValidatedOptions& options) {
  return std::unique_ptr<Sink>(new DeltaSink(options.GetString("path"), options.GetBool("mergeSchema")));
}

}  // namespace sluice::engine
