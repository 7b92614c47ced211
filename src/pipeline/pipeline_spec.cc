// Parsing a pipeline file into a PipelineSpec, reporting every problem of shape with its place.
#include "sluice/pipeline/pipeline_spec.h"

#include <yaml-cpp/yaml.h>

#include <set>

#include "sluice/core/error_classes.h"

namespace sluice::pipeline {
namespace {

// Collects problems while walking the document, so that one pass reports them all.
class Walker {
 public:
  void Problem(const std::string& place, const std::string& what) { problems_.push_back(place + ": " + what); }
  const std::vector<std::string>& problems() const { return problems_; }

  // Problems for keys of a map that are not in `known`.
  void CheckKeys(const YAML::Node& node, const std::string& place, std::initializer_list<std::string_view> known) {
    for (const auto& entry : node) {
      std::string key = entry.first.Scalar();
      bool found = false;
      for (std::string_view candidate : known) found = found || candidate == key;
      if (!found) {
        std::string list;
        for (std::string_view candidate : known) list += (list.empty() ? "" : ", ") + std::string(candidate);
        Problem(Join(place, key), "unknown key; expected one of: " + list);
      }
    }
  }

  std::optional<std::string> Scalar(const YAML::Node& parent, const std::string& place, const char* key,
                                    bool required) {
    YAML::Node node = parent[key];
    if (!node.IsDefined() || node.IsNull()) {
      if (required) Problem(Join(place, key), "missing");
      return std::nullopt;
    }
    if (!node.IsScalar()) {
      Problem(Join(place, key), "expected a single value");
      return std::nullopt;
    }
    return node.Scalar();
  }

  std::map<std::string, std::string> StringMap(const YAML::Node& node, const std::string& place) {
    std::map<std::string, std::string> values;
    if (!node.IsDefined() || node.IsNull()) return values;
    if (!node.IsMap()) {
      Problem(place, "expected a map of option names to values");
      return values;
    }
    for (const auto& entry : node) {
      if (!entry.second.IsScalar()) {
        Problem(Join(place, entry.first.Scalar()), "expected a single value");
        continue;
      }
      values[entry.first.Scalar()] = entry.second.Scalar();
    }
    return values;
  }

  Endpoint ParseEndpoint(const YAML::Node& node, const std::string& place) {
    Endpoint endpoint;
    if (!node.IsMap()) {
      Problem(place, "expected a map with `format` and `options` (or `table`)");
      return endpoint;
    }
    CheckKeys(node, place, {"format", "options", "table"});
    endpoint.format = Scalar(node, place, "format", true).value_or("");
    endpoint.options = StringMap(node["options"], Join(place, "options"));
    endpoint.table = Scalar(node, place, "table", false);
    return endpoint;
  }

  static std::string Join(const std::string& place, std::string_view key) {
    return place.empty() ? std::string(key) : place + "." + std::string(key);
  }

 private:
  std::vector<std::string> problems_;
};

FlowSpec ParseFlow(Walker& walker, const YAML::Node& node, const std::string& place) {
  FlowSpec flow;
  if (!node.IsMap()) {
    walker.Problem(place, "expected a map describing a flow");
    return flow;
  }
  walker.CheckKeys(node, place,
                   {"name", "source", "where", "select", "expectations", "sink", "trigger", "output_mode", "checkpoint"});
  flow.name = walker.Scalar(node, place, "name", true).value_or("");
  if (node["source"].IsDefined()) {
    flow.source = walker.ParseEndpoint(node["source"], Walker::Join(place, "source"));
  } else {
    walker.Problem(Walker::Join(place, "source"), "missing");
  }
  flow.where = walker.Scalar(node, place, "where", false);
  if (YAML::Node select = node["select"]; select.IsDefined() && !select.IsNull()) {
    if (select.IsScalar()) {
      flow.select.push_back(select.Scalar());
    } else if (select.IsSequence()) {
      for (size_t i = 0; i < select.size(); ++i) {
        if (select[i].IsScalar()) {
          flow.select.push_back(select[i].Scalar());
        } else {
          walker.Problem(Walker::Join(place, "select[" + std::to_string(i) + "]"), "expected an expression");
        }
      }
    } else {
      walker.Problem(Walker::Join(place, "select"), "expected a list of expressions");
    }
  }
  if (YAML::Node expectations = node["expectations"]; expectations.IsDefined() && !expectations.IsNull()) {
    if (!expectations.IsSequence()) walker.Problem(Walker::Join(place, "expectations"), "expected a list");
    for (size_t i = 0; expectations.IsSequence() && i < expectations.size(); ++i) {
      std::string at = Walker::Join(place, "expectations[" + std::to_string(i) + "]");
      const YAML::Node& item = expectations[i];
      if (!item.IsMap()) {
        walker.Problem(at, "expected {name: ..., expect|expect_or_drop|expect_or_fail: <condition>}");
        continue;
      }
      walker.CheckKeys(item, at, {"name", "expect", "expect_or_drop", "expect_or_fail"});
      Expectation expectation;
      expectation.name = walker.Scalar(item, at, "name", true).value_or("");
      int kinds = 0;
      for (auto [key, action] : {std::pair{"expect", ExpectationAction::kWarn},
                                 std::pair{"expect_or_drop", ExpectationAction::kDrop},
                                 std::pair{"expect_or_fail", ExpectationAction::kFail}}) {
        if (std::optional<std::string> condition = walker.Scalar(item, at, key, false)) {
          expectation.condition = *condition;
          expectation.action = action;
          ++kinds;
        }
      }
      if (kinds != 1) walker.Problem(at, "needs exactly one of expect, expect_or_drop, expect_or_fail");
      flow.expectations.push_back(std::move(expectation));
    }
  }
  flow.sink = walker.Scalar(node, place, "sink", true).value_or("");
  if (YAML::Node trigger = node["trigger"]; trigger.IsDefined() && !trigger.IsNull()) {
    std::string at = Walker::Join(place, "trigger");
    if (trigger.IsScalar()) {
      flow.trigger = trigger.Scalar();
    } else if (trigger.IsMap()) {
      walker.CheckKeys(trigger, at, {"kind", "interval"});
      flow.trigger = walker.Scalar(trigger, at, "kind", true).value_or(flow.trigger);
      flow.trigger_interval = walker.Scalar(trigger, at, "interval", false).value_or("");
    } else {
      walker.Problem(at, "expected a trigger name or {kind: ..., interval: ...}");
    }
  }
  flow.output_mode = walker.Scalar(node, place, "output_mode", false).value_or(flow.output_mode);
  flow.checkpoint = walker.Scalar(node, place, "checkpoint", false).value_or("");
  return flow;
}

}  // namespace

std::string PipelineSpec::CheckpointOf(const FlowSpec& flow) const {
  return flow.checkpoint.empty() ? storage + "/checkpoints/" + flow.name : flow.checkpoint;
}

Result<std::string> PipelineSpec::TablePath(std::string_view table) const {
  std::vector<std::string> parts;
  size_t begin = 0;
  while (true) {
    size_t dot = table.find('.', begin);
    parts.emplace_back(table.substr(begin, dot == std::string_view::npos ? std::string_view::npos : dot - begin));
    if (dot == std::string_view::npos) break;
    begin = dot + 1;
  }
  bool valid = parts.size() == 3;
  for (const std::string& part : parts) valid = valid && !part.empty() && part != ".." && part.find('/') == std::string::npos;
  if (!valid) {
    return Status::Error(errors::kInvalidPipeline,
                         "table '" + std::string(table) + "' is not of the form catalog.schema.table");
  }
  return warehouse + "/" + parts[0] + "/" + parts[1] + "/" + parts[2];
}

Result<std::map<std::string, std::string>> PipelineSpec::ResolvedOptions(const Endpoint& endpoint) const {
  std::map<std::string, std::string> options = endpoint.options;
  if (endpoint.table) {
    if (options.count("path")) {
      return Status::Error(errors::kInvalidPipeline, "give either `table` or the `path` option, not both");
    }
    SLUICE_ASSIGN_OR_RETURN(options["path"], TablePath(*endpoint.table));
  }
  return options;
}

void AddCheckpointLocation(std::span<const OptionSpec> sink_options, const std::string& checkpoint,
                           std::map<std::string, std::string>* options) {
  for (const OptionSpec& option : sink_options) {
    if (option.name == "checkpointLocation" && !options->count("checkpointLocation")) {
      (*options)["checkpointLocation"] = checkpoint;
    }
  }
}

Result<PipelineSpec> ParsePipelineSpec(std::string_view yaml) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& error) {
    return Status::Error(errors::kInvalidPipeline, "not valid YAML at line " + std::to_string(error.mark.line + 1) +
                                                       ", column " + std::to_string(error.mark.column + 1) + ": " +
                                                       error.msg);
  }
  if (!root.IsMap()) return Status::Error(errors::kInvalidPipeline, "a pipeline file is a map with name, storage, flows, ...");

  Walker walker;
  PipelineSpec spec;
  try {
    walker.CheckKeys(root, "", {"name", "storage", "warehouse", "sinks", "flows"});
    spec.name = walker.Scalar(root, "", "name", true).value_or("");
    spec.storage = walker.Scalar(root, "", "storage", true).value_or("");
    spec.warehouse = walker.Scalar(root, "", "warehouse", false).value_or(spec.storage + "/warehouse");
    if (YAML::Node sinks = root["sinks"]; sinks.IsDefined() && !sinks.IsNull()) {
      if (!sinks.IsMap()) walker.Problem("sinks", "expected a map of sink names to sinks");
      for (const auto& entry : sinks.IsMap() ? sinks : YAML::Node()) {
        std::string name = entry.first.Scalar();
        spec.sinks[name] = walker.ParseEndpoint(entry.second, "sinks." + name);
      }
    }
    YAML::Node flows = root["flows"];
    if (!flows.IsDefined() || flows.IsNull()) {
      walker.Problem("flows", "missing: a pipeline needs at least one flow");
    } else if (!flows.IsSequence()) {
      walker.Problem("flows", "expected a list of flows");
    } else {
      for (size_t i = 0; i < flows.size(); ++i) {
        spec.flows.push_back(ParseFlow(walker, flows[i], "flows[" + std::to_string(i) + "]"));
      }
    }
  } catch (const YAML::Exception& error) {
    walker.Problem("line " + std::to_string(error.mark.line + 1), error.msg);
  }
  if (!walker.problems().empty()) {
    std::string message = std::to_string(walker.problems().size()) + " problem(s) in the pipeline file:";
    for (const std::string& problem : walker.problems()) message += "\n  " + problem;
    return Status::Error(errors::kInvalidPipeline, message);
  }
  return spec;
}

}  // namespace sluice::pipeline
