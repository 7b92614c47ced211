#include "sluice/pipeline/checkpoint_owner.h"

#include "sluice/core/error_classes.h"
#include "sluice/engine/checkpoint.h"

namespace sluice::pipeline {

std::string FlowQueryRecordPath(std::string_view storage, std::string_view flow) {
  return std::string(storage) + "/system/flow_queries/" + std::string(flow);
}

Status CheckCheckpointOwner(FileSystem& fs, std::string_view storage, std::string_view flow,
                            const std::string& checkpoint, const std::string& default_location, bool to_delete) {
  SLUICE_ASSIGN_OR_RETURN(std::optional<std::string> held, engine::CheckpointQueryId(fs, checkpoint));
  if (!held) return Status::OK();
  Result<std::string> recorded = fs.ReadFile(FlowQueryRecordPath(storage, flow));
  if (!recorded.ok() && recorded.status().error_class() != errors::kFileNotFound) return recorded.status();
  const std::string flow_text(flow);
  if (recorded.ok() && *recorded != *held) {
    return Status::Error(errors::kCheckpointCorrupt,
                         checkpoint + " holds the checkpoint of query " + *held + ", not of flow '" + flow_text +
                             "' (query " + *recorded + "): it is another query's; it is left as it is");
  }
  if (!recorded.ok() && to_delete && checkpoint != default_location) {
    return Status::Error(errors::kCheckpointCorrupt,
                         checkpoint + " holds the checkpoint of query " + *held + ", which no run of flow '" +
                             flow_text + "' has recorded as its own: a full refresh does not delete it (run the "
                             "pipeline once without --full-refresh, or delete the folder yourself)");
  }
  return Status::OK();
}

Status RecordFlowQuery(FileSystem& fs, std::string_view storage, std::string_view flow, const std::string& query_id) {
  SLUICE_RETURN_IF_ERROR(fs.CreateDirectories(std::string(storage) + "/system/flow_queries"));
  return fs.AtomicWrite(FlowQueryRecordPath(storage, flow), query_id);
}

Status ForgetFlowQuery(FileSystem& fs, std::string_view storage, std::string_view flow) {
  return fs.Delete(FlowQueryRecordPath(storage, flow));
}

}  // namespace sluice::pipeline
