// Which query a flow's checkpoint belongs to. A pipeline records, for each flow, the query id of
// the checkpoint it runs on (<storage>/system/flow_queries/<flow>). A flow then never runs on, and
// a full refresh never deletes, a checkpoint that another query made: another pipeline's, or
// another flow's that an explicit `checkpoint:` names by mistake.
//
// Stateless functions; one pipeline run at a time uses a storage folder.
#pragma once

#include <string>
#include <string_view>

#include "sluice/core/file_system.h"

namespace sluice::pipeline {

// <storage>/system/flow_queries/<flow>
std::string FlowQueryRecordPath(std::string_view storage, std::string_view flow);

// OK when `flow` may run on `checkpoint`: the checkpoint is new, or holds the query id recorded
// for the flow, or no id is recorded yet (a pipeline that ran before records existed).
// With `to_delete` (a full refresh), a checkpoint with no id recorded for the flow may be deleted
// only when it is `default_location` (the folder the pipeline derives under its storage).
// CHECKPOINT_CORRUPT naming both ids otherwise; nothing is changed.
Status CheckCheckpointOwner(FileSystem& fs, std::string_view storage, std::string_view flow,
                            const std::string& checkpoint, const std::string& default_location, bool to_delete);

// Records `query_id` as the query of `flow`'s checkpoint (replacing an earlier record).
Status RecordFlowQuery(FileSystem& fs, std::string_view storage, std::string_view flow, const std::string& query_id);

// Forgets the record of `flow` (its checkpoint was deleted); no record is not an error.
Status ForgetFlowQuery(FileSystem& fs, std::string_view storage, std::string_view flow);

}  // namespace sluice::pipeline
