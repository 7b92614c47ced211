#include <ostream>

#include "sluice/core/compute.h"
#include "sluice/engine/builtin_sinks.h"

namespace sluice::engine {
namespace {

class ConsoleSink final : public Sink {
 public:
  ConsoleSink(std::ostream* out, int64_t max_rows) : out_(out), max_rows_(max_rows) {}

  std::string description() const override { return "ConsoleSink"; }
  std::vector<OutputMode> supported_output_modes() const override {
    return {OutputMode::kAppend, OutputMode::kUpdate, OutputMode::kComplete};
  }
  Status Open(const SinkContext&) override { return Status::OK(); }
  Result<std::unique_ptr<BatchWriter>> BeginBatch(const BatchInfo& info) override {
    return WholeBatchWriter::Concatenating(info.schema, [this, batch_id = info.batch_id](const RecordBatch& batch) {
      Print("Batch: " + std::to_string(batch_id), batch);
      return Status::OK();
    });
  }
  bool supports_real_time() const override { return true; }
  Status AddRealTimeRows(int64_t epoch_id, const RecordBatch& rows) override {
    Print("Epoch: " + std::to_string(epoch_id), rows);
    return Status::OK();
  }
  Status EndEpoch(int64_t) override {
    out_->flush();
    return Status::OK();
  }

 private:
  void Print(const std::string& title, const RecordBatch& batch) {
    static constexpr std::string_view kRule = "-------------------------------------------\n";
    *out_ << kRule << title << '\n' << kRule << PrettyPrint(batch, max_rows_) << '\n';
    out_->flush();
  }

  std::ostream* out_;
  int64_t max_rows_;
};

class ForeachBatchSink final : public Sink {
 public:
  ForeachBatchSink(std::string name, ForeachBatchFunction function, std::map<std::string, std::string> arguments,
                   const Registry* registry)
      : name_(std::move(name)), function_(std::move(function)) {
    context_.arguments = std::move(arguments);
    context_.registry = registry;
  }

  std::string description() const override { return "ForeachBatchSink[" + name_ + "]"; }
  std::vector<OutputMode> supported_output_modes() const override {
    return {OutputMode::kAppend, OutputMode::kUpdate, OutputMode::kComplete};
  }
  Status Open(const SinkContext& context) override {
    context_.query_id = context.query_id;
    context_.flow_name = context.query_name;
    return Status::OK();
  }
  Result<std::unique_ptr<BatchWriter>> BeginBatch(const BatchInfo& info) override {
    return WholeBatchWriter::Concatenating(info.schema, [this, batch_id = info.batch_id](const RecordBatch& batch) {
      context_.batch_id = batch_id;
      Status status = function_(batch, context_);
      if (!status.ok()) {
        return status.WithContext("foreachBatch function '" + name_ + "', batch " + std::to_string(batch_id));
      }
      return status;
    });
  }

 private:
  std::string name_;
  ForeachBatchFunction function_;
  BatchContext context_;
};

}  // namespace

std::unique_ptr<Sink> MakeConsoleSink(std::ostream* out, int64_t max_rows) {
  return std::make_unique<ConsoleSink>(out, max_rows);
}

std::unique_ptr<Sink> MakeForeachBatchSink(std::string name, ForeachBatchFunction function,
                                           std::map<std::string, std::string> arguments, const Registry* registry) {
  return std::make_unique<ForeachBatchSink>(std::move(name), std::move(function), std::move(arguments), registry);
}

}  // namespace sluice::engine
