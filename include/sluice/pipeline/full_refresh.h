// A full refresh as one step, as any later run sees it.
//
// Resetting a flow touches several things (its checkpoint, the Delta tables it writes, an
// ingestion table); a crash between two of them would leave a checkpoint that no longer matches
// its table. So the whole plan is written first, to <storage>/system/full_refresh.json, then
// carried out, then removed. A run that finds a plan left by a crash carries it out again before
// anything else — every step can be repeated — so a crash at any moment ends in the refreshed
// state once the pipeline runs again.
//
// Only checkpoints are deleted (engine::CheckIsCheckpoint): a folder of other files named as a
// checkpoint is refused before the plan is written; callers check beforehand that each
// checkpoint is its flow's own (CheckCheckpointOwner), and a deleted checkpoint's record goes
// with it. Stateless functions; one pipeline run at a
// time uses a storage folder.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/file_system.h"

namespace sluice::pipeline {

struct FullRefreshPlan {
  std::map<std::string, std::string> checkpoints;  // flow name -> its checkpoint, deleted
  std::vector<std::string> truncated_tables;  // Delta tables emptied by a TRUNCATE commit
  std::vector<std::string> deleted_tables;    // ingestion tables, deleted whole (their txns go too)

  bool operator==(const FullRefreshPlan&) const = default;
};

// <storage>/system/full_refresh.json
std::string FullRefreshPlanPath(std::string_view storage);

std::string SerializeFullRefreshPlan(const FullRefreshPlan& plan);
// CHECKPOINT_CORRUPT when the text is not a plan this version wrote.
Result<FullRefreshPlan> ParseFullRefreshPlan(std::string_view text);

// The plan a crashed run left, if any.
Result<std::optional<FullRefreshPlan>> PendingFullRefresh(FileSystem& fs, std::string_view storage);

// Receives a line for the event log per step done: (message, details JSON).
using RefreshStepLog = std::function<void(const std::string&, const std::string&)>;

// Checks that every checkpoint of the plan is one, writes the plan, carries it out and removes
// it. Errors leave the plan in place for the next run to finish.
Status RunFullRefresh(const std::shared_ptr<FileSystem>& fs, std::string_view storage, const FullRefreshPlan& plan,
                      const RefreshStepLog& log);

// Carries out a plan already written (the part of RunFullRefresh after the write), then removes it.
Status FinishFullRefresh(const std::shared_ptr<FileSystem>& fs, std::string_view storage, const FullRefreshPlan& plan,
                         const RefreshStepLog& log);

}  // namespace sluice::pipeline
