#include "sluice/pipeline/full_refresh.h"

#include <simdjson.h>

#include "sluice/core/error_classes.h"
#include "sluice/core/json_text.h"
#include "sluice/delta/writer.h"
#include "sluice/engine/checkpoint.h"
#include "sluice/pipeline/checkpoint_owner.h"

namespace sluice::pipeline {
namespace {

void AppendList(std::string* out, std::string_view key, const std::vector<std::string>& values) {
  *out += JsonString(key) + ":[";
  for (size_t i = 0; i < values.size(); ++i) *out += (i ? "," : "") + JsonString(values[i]);
  *out += "]";
}

Status Corrupt(std::string why) {
  return Status::Error(errors::kCheckpointCorrupt,
                       "the pending full refresh plan " + why + "; remove system/full_refresh.json and run the "
                       "full refresh again");
}

}  // namespace

std::string FullRefreshPlanPath(std::string_view storage) { return std::string(storage) + "/system/full_refresh.json"; }

std::string SerializeFullRefreshPlan(const FullRefreshPlan& plan) {
  std::string out = "{\"checkpoints\":{";
  for (const auto& [flow, checkpoint] : plan.checkpoints) {
    if (out.back() != '{') out += ",";
    out += JsonString(flow) + ":" + JsonString(checkpoint);
  }
  out += "},";
  AppendList(&out, "truncated_tables", plan.truncated_tables);
  out += ",";
  AppendList(&out, "deleted_tables", plan.deleted_tables);
  return out + "}";
}

Result<FullRefreshPlan> ParseFullRefreshPlan(std::string_view text) {
  simdjson::dom::parser parser;
  simdjson::dom::object root;
  if (parser.parse(simdjson::padded_string(text)).get(root) != simdjson::SUCCESS) return Corrupt("is not a JSON object");
  auto absolute = [](std::string_view path) { return !path.empty() && path[0] == '/'; };
  FullRefreshPlan plan;
  simdjson::dom::object checkpoints;
  if (root["checkpoints"].get(checkpoints) != simdjson::SUCCESS) return Corrupt("has no map \"checkpoints\"");
  for (auto [flow, value] : checkpoints) {
    std::string_view path;
    if (value.get(path) != simdjson::SUCCESS || !absolute(path)) {
      return Corrupt("gives flow '" + std::string(flow) + "' no absolute checkpoint path");
    }
    plan.checkpoints.emplace(flow, path);
  }
  for (auto [key, list] : {std::pair<const char*, std::vector<std::string>*>{"truncated_tables", &plan.truncated_tables},
                           {"deleted_tables", &plan.deleted_tables}}) {
    simdjson::dom::array values;
    if (root[key].get(values) != simdjson::SUCCESS) return Corrupt(std::string("has no list \"") + key + "\"");
    for (simdjson::dom::element value : values) {
      std::string_view path;
      if (value.get(path) != simdjson::SUCCESS || !absolute(path)) {
        return Corrupt(std::string("lists something other than an absolute path under \"") + key + "\"");
      }
      list->emplace_back(path);
    }
  }
  return plan;
}

Result<std::optional<FullRefreshPlan>> PendingFullRefresh(FileSystem& fs, std::string_view storage) {
  Result<std::string> text = fs.ReadFile(FullRefreshPlanPath(storage));
  if (!text.ok()) {
    if (text.status().error_class() == errors::kFileNotFound) return std::optional<FullRefreshPlan>();
    return text.status();
  }
  SLUICE_ASSIGN_OR_RETURN(FullRefreshPlan plan, ParseFullRefreshPlan(*text));
  return std::optional<FullRefreshPlan>(std::move(plan));
}

Status RunFullRefresh(const std::shared_ptr<FileSystem>& fs, std::string_view storage, const FullRefreshPlan& plan,
                      const RefreshStepLog& log) {
  for (const auto& [flow, checkpoint] : plan.checkpoints) {
    SLUICE_RETURN_IF_ERROR(engine::CheckIsCheckpoint(*fs, checkpoint).WithContext("full refresh of flow '" + flow + "'"));
  }
  SLUICE_RETURN_IF_ERROR(fs->CreateDirectories(std::string(storage) + "/system"));
  SLUICE_RETURN_IF_ERROR(fs->AtomicWrite(FullRefreshPlanPath(storage), SerializeFullRefreshPlan(plan)));
  return FinishFullRefresh(fs, storage, plan, log);
}

Status FinishFullRefresh(const std::shared_ptr<FileSystem>& fs, std::string_view storage, const FullRefreshPlan& plan,
                         const RefreshStepLog& log) {
  for (const auto& [flow, checkpoint] : plan.checkpoints) {
    SLUICE_RETURN_IF_ERROR(fs->DeleteRecursively(checkpoint));
    SLUICE_RETURN_IF_ERROR(ForgetFlowQuery(*fs, storage, flow));
    log("full refresh: flow '" + flow + "' starts over from its source's beginning",
        "{\"full_refresh\":{\"flow\":" + JsonString(flow) + ",\"checkpoint\":" + JsonString(checkpoint) + "}}");
  }
  for (const std::string& table : plan.deleted_tables) {
    SLUICE_RETURN_IF_ERROR(fs->DeleteRecursively(table));
    log("full refresh: ingestion table " + table + " deleted, to be ingested again",
        "{\"full_refresh\":{\"table\":" + JsonString(table) + ",\"deleted\":true}}");
  }
  for (const std::string& table : plan.truncated_tables) {
    SLUICE_ASSIGN_OR_RETURN(bool exists, fs->Exists(table + "/_delta_log"));
    if (!exists) continue;
    SLUICE_ASSIGN_OR_RETURN(int64_t version, delta::TruncateTable(fs, table));
    log("full refresh: Delta table " + table + " truncated",
        "{\"full_refresh\":{\"table\":" + JsonString(table) + ",\"version\":" + std::to_string(version) + "}}");
  }
  return fs->Delete(FullRefreshPlanPath(storage));
}

}  // namespace sluice::pipeline
