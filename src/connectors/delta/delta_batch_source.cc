// Delta tables in batch jobs: the source that reads the table's current snapshot once. (The
// `delta` sink's batch write modes are in delta_sink.cc.)
#include "sluice/core/error_classes.h"
#include "sluice/delta/scan.h"
#include "sluice/delta/snapshot.h"
#include "sluice/connectors/delta/formats.h"
#include "sluice/engine/read_once_source.h"

namespace sluice::connectors {

using engine::ReadOnceSource;
using engine::Source;
using engine::SourceContext;

namespace {

constexpr OptionSpec kSourceOptions[] = {
    {"path", OptionType::kString, std::nullopt, true, "directory of the Delta table"},
};


class DeltaBatchSource final : public ReadOnceSource {
 public:
  explicit DeltaBatchSource(std::string path) : path_(std::move(path)) {}

  std::string description() const override { return "DeltaBatchSource[" + path_ + "]"; }
  TypePtr schema() const override { return snapshot_ ? snapshot_->schema() : nullptr; }

  // Loads the latest snapshot: the one every later Read returns, so a replay reads the same rows.
  Status Open(const SourceContext& context) override {
    SLUICE_ASSIGN_OR_RETURN(snapshot_, delta::Snapshot::Load(context.file_system, path_));
    return Status::OK();
  }

  Result<std::vector<BatchPtr>> ReadAll() override {
    std::vector<BatchPtr> batches;
    SLUICE_ASSIGN_OR_RETURN(auto scan, delta::TableScan::Open(snapshot_));
    for (;;) {
      SLUICE_ASSIGN_OR_RETURN(BatchPtr batch, scan->Next());
      if (!batch) return batches;
      batches.push_back(std::move(batch));
    }
  }

 private:
  std::string path_;
  delta::SnapshotPtr snapshot_;
};

}  // namespace

const std::span<const OptionSpec> kDeltaBatchSourceOptions = kSourceOptions;

Result<std::unique_ptr<Source>> MakeDeltaBatchSource(const ValidatedOptions& options) {
  return std::unique_ptr<Source>(new DeltaBatchSource(options.GetString("path")));
}


}  // namespace sluice::connectors
