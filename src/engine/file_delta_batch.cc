// Delta tables in batch jobs: the sink in write modes append, or overwrite through the Delta
// layer's atomic overwrite, each commit carrying txn{query id, batch id} so that a replayed batch
// is skipped; and the source that reads the table's current snapshot once.
#include "sluice/core/error_classes.h"
#include "sluice/delta/scan.h"
#include "sluice/delta/snapshot.h"
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

constexpr OptionSpec kSourceOptions[] = {
    {"path", OptionType::kString, std::nullopt, true, "directory of the Delta table"},
};

constexpr std::string_view kUnread = R"({"read":false})";
constexpr std::string_view kRead = R"({"read":true})";

class DeltaBatchSource final : public Source {
 public:
  explicit DeltaBatchSource(std::string path) : path_(std::move(path)) {}

  std::string description() const override { return "DeltaBatchSource[" + path_ + "]"; }
  TypePtr schema() const override { return snapshot_ ? snapshot_->schema() : nullptr; }

  // Loads the latest snapshot: the one every later Read returns, so a replay reads the same rows.
  Status Open(const SourceContext& context) override {
    SLUICE_ASSIGN_OR_RETURN(snapshot_, delta::Snapshot::Load(context.file_system, path_));
    return Status::OK();
  }

  Result<std::string> InitialOffset() override { return std::string(kUnread); }

  Result<std::string> LatestOffset(const std::string& start, const ReadLimit&) override {
    SLUICE_RETURN_IF_ERROR(CheckOffset(start));
    return std::string(kRead);
  }

  Result<std::vector<BatchPtr>> Read(const std::string& start, const std::string& end) override {
    SLUICE_RETURN_IF_ERROR(CheckOffset(start));
    SLUICE_RETURN_IF_ERROR(CheckOffset(end));
    std::vector<BatchPtr> batches;
    if (start == end) return batches;
    SLUICE_ASSIGN_OR_RETURN(auto scan, delta::TableScan::Open(snapshot_));
    for (;;) {
      SLUICE_ASSIGN_OR_RETURN(BatchPtr batch, scan->Next());
      if (!batch) return batches;
      batches.push_back(std::move(batch));
    }
  }

  Status Commit(const std::string&) override { return Status::OK(); }

 private:
  Status CheckOffset(const std::string& offset) const {
    if (offset == kUnread || offset == kRead) return Status::OK();
    return Status::Error(errors::kSourceOffsetInvalid, description() + ": offset `" + offset + "` is not " +
                                                           std::string(kUnread) + " or " + std::string(kRead));
  }

  std::string path_;
  delta::SnapshotPtr snapshot_;
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
const std::span<const OptionSpec> kDeltaBatchSourceOptions = kSourceOptions;

Result<std::unique_ptr<Source>> MakeDeltaBatchSource(const ValidatedOptions& options) {
  return std::unique_ptr<Source>(new DeltaBatchSource(options.GetString("path")));
}

Result<std::unique_ptr<Sink>> MakeDeltaBatchSink(const ValidatedOptions& options) {
  delta::WriteMode mode =
      options.GetString("mode") == "overwrite" ? delta::WriteMode::kOverwrite : delta::WriteMode::kAppend;
  return std::unique_ptr<Sink>(new DeltaBatchSink(options.GetString("path"), mode, options.GetBool("mergeSchema")));
}

}  // namespace sluice::engine
