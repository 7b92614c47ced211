// Delta tables in batch jobs: the source that reads the table's current snapshot once. (The
// `delta` sink's batch write modes are in delta_sink.cc.)
#include "sluice/core/error_classes.h"
#include "sluice/delta/scan.h"
#include "sluice/delta/snapshot.h"
#include "sluice/engine/file_formats.h"

namespace sluice::engine {
namespace {

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

}  // namespace

const std::span<const OptionSpec> kDeltaBatchSourceOptions = kSourceOptions;

Result<std::unique_ptr<Source>> MakeDeltaBatchSource(const ValidatedOptions& options) {
  return std::unique_ptr<Source>(new DeltaBatchSource(options.GetString("path")));
}


}  // namespace sluice::engine
