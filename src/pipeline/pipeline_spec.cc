// Parsing a pipeline file into a PipelineSpec, reporting every problem of shape with its place.
#include "sluice/pipeline/pipeline_spec.h"

#include "sluice/expr/select.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "sluice/connectors/pg_change_feed.h"
#include "sluice/core/ascii.h"
#include "sluice/core/column_path.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/path_names.h"
#include "sluice/expr/select.h"
#include "sluice/storage/file_systems.h"

namespace sluice::pipeline {
namespace {

// Collects problems while walking the document, so that one pass reports them all.
class Walker {
 public:
  void Problem(const std::string& place, const std::string& what) {
    problems_.push_back(place + ": " + what);
    places_.push_back(place);
  }
  const std::vector<std::string>& problems() const { return problems_; }
  // Whether a problem was found at `place` or inside it ("flows[1]" holds "flows[1].source").
  bool HasProblemIn(std::string_view place) const {
    for (std::string_view at : places_) {
      if (at.starts_with(place) && (at.size() == place.size() || at[place.size()] == '.' || at[place.size()] == '[')) {
        return true;
      }
    }
    return false;
  }

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

  // Problems for a key given twice in any map of the document: YAML leaves the choice between
  // the two values to the reader, so neither is taken.
  void CheckDuplicateKeys(const YAML::Node& node, const std::string& place, int depth = 0) {
    constexpr int kMaxNesting = 64;
    if (depth > kMaxNesting) {
      Problem(place, fmt::format("nests deeper than {} levels", kMaxNesting));
      return;
    }
    if (node.IsMap()) {
      std::map<std::string, int> lines;
      for (const auto& entry : node) {
        const std::string& key = entry.first.Scalar();
        int line = entry.first.Mark().line + 1;
        auto [first, inserted] = lines.emplace(key, line);
        if (!inserted) {
          Problem(Join(place, key), fmt::format("given twice, on lines {} and {}; keep one", first->second, line));
        }
        CheckDuplicateKeys(entry.second, Join(place, key), depth + 1);
      }
    } else if (node.IsSequence()) {
      for (size_t i = 0; i < node.size(); ++i) {
        CheckDuplicateKeys(node[i], place + "[" + std::to_string(i) + "]", depth + 1);
      }
    }
  }

  // A required name that becomes a path segment (core/path_names.h).
  std::string Name(const YAML::Node& parent, const std::string& place) {
    std::string name = Scalar(parent, place, "name", true).value_or("");
    if (std::optional<std::string> problem = NameProblem(name); problem) Problem(Join(place, "name"), *problem);
    return name;
  }
  static std::optional<std::string> NameProblem(std::string_view name) {
    std::string problem = PathNameProblem(name);
    if (problem.empty()) return std::nullopt;
    return "the name `" + std::string(name) + "` " + problem +
           ": use letters, digits, `_` and `-` (it names a folder)";
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

  // A source, or with `sink` a sink (which may also have `merge`).
  Endpoint ParseEndpoint(const YAML::Node& node, const std::string& place, bool sink = false) {
    Endpoint endpoint;
    if (!node.IsMap()) {
      Problem(place, "expected a map with `format` and `options` (or `table`)");
      return endpoint;
    }
    if (sink) {
      CheckKeys(node, place, {"format", "options", "table", "merge"});
    } else {
      CheckKeys(node, place, {"format", "options", "table"});
    }
    endpoint.format = Scalar(node, place, "format", true).value_or("");
    endpoint.options = StringMap(node["options"], Join(place, "options"));
    endpoint.table = Scalar(node, place, "table", false);
    if (sink && node["merge"].IsDefined()) ParseMerge(node["merge"], Join(place, "merge"), &endpoint);
    return endpoint;
  }

  // A sink's `merge: {on, when_matched, when_not_matched, when_not_matched_by_source,
  // schema_evolution}` as the Delta sink's options: mode merge and the MERGE statement, whose
  // target (the table) is `t` and source (the batch) `s`. Each `when_*` is one clause or a list;
  // a clause is its action (`UPDATE SET *`) or `{condition, action}`.
  void ParseMerge(const YAML::Node& node, const std::string& place, Endpoint* endpoint) {
    if (!node.IsMap()) {
      Problem(place, "expected a map: {on, when_matched, when_not_matched, when_not_matched_by_source}");
      return;
    }
    CheckKeys(node, place, {"on", "when_matched", "when_not_matched", "when_not_matched_by_source", "schema_evolution"});
    if (endpoint->options.count("merge")) Problem(place, "the MERGE is given twice: here and as options.merge");
    std::optional<std::string> on = Scalar(node, place, "on", true);
    std::optional<std::string> evolution = Scalar(node, place, "schema_evolution", false);
    if (evolution && *evolution != "true" && *evolution != "false") {
      Problem(Join(place, "schema_evolution"), "expected true or false");
    }
    std::string sql = fmt::format("MERGE {}INTO t USING s ON ({})", evolution == "true" ? "WITH SCHEMA EVOLUTION " : "",
                                  on.value_or("true"));
    int clauses = 0;
    for (const auto& [key, when] : {std::pair{"when_matched", "MATCHED"}, std::pair{"when_not_matched", "NOT MATCHED"},
                                    std::pair{"when_not_matched_by_source", "NOT MATCHED BY SOURCE"}}) {
      YAML::Node list = node[key];
      if (!list.IsDefined() || list.IsNull()) continue;
      const std::string list_place = Join(place, key);
      std::vector<YAML::Node> items;
      if (list.IsSequence()) {
        for (const YAML::Node& item : list) items.push_back(item);
      } else {
        items.push_back(list);
      }
      for (size_t i = 0; i < items.size(); ++i) {
        const std::string item_place = list.IsSequence() ? list_place + "[" + std::to_string(i) + "]" : list_place;
        std::optional<std::string> condition, action;
        if (items[i].IsScalar()) {
          action = items[i].Scalar();
        } else if (items[i].IsMap()) {
          CheckKeys(items[i], item_place, {"condition", "action"});
          condition = Scalar(items[i], item_place, "condition", false);
          action = Scalar(items[i], item_place, "action", true);
        } else {
          Problem(item_place, "expected an action (`UPDATE SET *`) or {condition, action}");
          continue;
        }
        sql += fmt::format(" WHEN {}{} THEN {}", when, condition ? " AND (" + *condition + ")" : "", action.value_or(""));
        ++clauses;
      }
    }
    if (clauses == 0) Problem(place, "no clause: give when_matched, when_not_matched or when_not_matched_by_source");
    endpoint->options["merge"] = sql;
    if (!endpoint->options.count("mode")) endpoint->options["mode"] = "merge";
  }

  static std::string Join(const std::string& place, std::string_view key) {
    return place.empty() ? std::string(key) : place + "." + std::string(key);
  }

 private:
  std::vector<std::string> problems_;
  std::vector<std::string> places_;
};

void ParseTriggerKeys(Walker& walker, const YAML::Node& node, const std::string& place, std::string* kind,
                  std::string* interval) {
  YAML::Node trigger = node["trigger"];
  if (!trigger.IsDefined() || trigger.IsNull()) return;
  std::string at = Walker::Join(place, "trigger");
  if (trigger.IsScalar()) {
    *kind = trigger.Scalar();
  } else if (trigger.IsMap()) {
    walker.CheckKeys(trigger, at, {"kind", "interval"});
    *kind = walker.Scalar(trigger, at, "kind", true).value_or(*kind);
    *interval = walker.Scalar(trigger, at, "interval", false).value_or("");
  } else {
    walker.Problem(at, "expected a trigger name or {kind: ..., interval: ...}");
  }
}

std::optional<formats::DecoderSpec> ParseSchema(Walker& walker, const YAML::Node& node, const std::string& place) {
  if (!node.IsDefined() || node.IsNull()) return std::nullopt;
  if (!node.IsMap()) {
    walker.Problem(place, "expected {format: json|avro|protobuf, schema: ..., message_name: ...}, {format: binary} or "
                          "{schema_registry: {url: ...}}");
    return std::nullopt;
  }
  walker.CheckKeys(node, place, {"format", "schema", "message_name", "schema_registry"});
  formats::DecoderSpec spec;
  if (YAML::Node registry = node["schema_registry"]; registry.IsDefined() && !registry.IsNull()) {
    if (node["format"].IsDefined() || node["schema"].IsDefined()) {
      walker.Problem(place, "give either schema_registry or format and schema, not both");
    }
    spec.registry_options = walker.StringMap(registry, Walker::Join(place, "schema_registry"));
    if (spec.registry_options.empty()) walker.Problem(Walker::Join(place, "schema_registry"), "missing: {url: ...}");
    spec.message_name = walker.Scalar(node, place, "message_name", false).value_or("");
    return spec;
  }
  std::string format = walker.Scalar(node, place, "format", true).value_or("");
  if (format == "json") {
    spec.format = formats::SchemaFormat::kJson;
  } else if (format == "avro") {
    spec.format = formats::SchemaFormat::kAvro;
  } else if (format == "protobuf") {
    spec.format = formats::SchemaFormat::kProtobuf;
  } else if (format == "binary") {
    // The raw bytes, as they are: no schema to give.
    spec.format = formats::SchemaFormat::kBinary;
    if (node["schema"].IsDefined() || node["message_name"].IsDefined()) {
      walker.Problem(place, "format: binary keeps the bytes as they are and takes no schema nor message_name");
    }
    return spec;
  } else if (!format.empty()) {
    walker.Problem(Walker::Join(place, "format"), "'" + format + "' is not one of json, avro, protobuf, binary");
  }
  spec.schema = walker.Scalar(node, place, "schema", true).value_or("");
  spec.message_name = walker.Scalar(node, place, "message_name", false).value_or("");
  return spec;
}

StreamSpec ParseStream(Walker& walker, const YAML::Node& node, const std::string& place) {
  StreamSpec stream;
  if (!node.IsMap()) {
    walker.Problem(place, "expected a map describing a stream");
    return stream;
  }
  walker.CheckKeys(node, place,
                   {"name", "source", "schema_config", "record_type_filter", "excluded_columns", "ingestion_config",
                    "trigger", "scale"});
  stream.name = walker.Scalar(node, place, "name", true).value_or("");
  if (node["source"].IsDefined()) {
    stream.source = walker.ParseEndpoint(node["source"], Walker::Join(place, "source"));
  } else {
    walker.Problem(Walker::Join(place, "source"), "missing");
  }
  if (YAML::Node schema = node["schema_config"]; schema.IsDefined() && !schema.IsNull()) {
    std::string at = Walker::Join(place, "schema_config");
    if (!schema.IsMap()) {
      walker.Problem(at, "expected {key: ..., value: ...}");
    } else {
      walker.CheckKeys(schema, at, {"key", "value"});
      stream.key_schema = ParseSchema(walker, schema["key"], Walker::Join(at, "key"));
      stream.value_schema = ParseSchema(walker, schema["value"], Walker::Join(at, "value"));
    }
  }
  stream.record_type_filter = walker.Scalar(node, place, "record_type_filter", false);
  if (YAML::Node excluded = node["excluded_columns"]; excluded.IsDefined() && !excluded.IsNull()) {
    if (!excluded.IsSequence()) walker.Problem(Walker::Join(place, "excluded_columns"), "expected a list of paths");
    for (size_t i = 0; excluded.IsSequence() && i < excluded.size(); ++i) {
      if (excluded[i].IsScalar()) {
        stream.excluded_columns.push_back(excluded[i].Scalar());
      } else {
        walker.Problem(Walker::Join(place, "excluded_columns[" + std::to_string(i) + "]"), "expected a path");
      }
    }
  }
  if (YAML::Node ingestion = node["ingestion_config"]; ingestion.IsMap()) {
    std::string at = Walker::Join(place, "ingestion_config");
    walker.CheckKeys(ingestion, at,
                     {"table", "backfill_source", "deduplication_columns", "backfill_overlap", "backfill_max_wait"});
    stream.table = walker.Scalar(ingestion, at, "table", true).value_or("");
    stream.backfill_source = walker.Scalar(ingestion, at, "backfill_source", false);
    if (YAML::Node columns = ingestion["deduplication_columns"]; columns.IsDefined() && !columns.IsNull()) {
      for (size_t i = 0; columns.IsSequence() && i < columns.size(); ++i) {
        if (columns[i].IsScalar()) stream.deduplication_columns.push_back(columns[i].Scalar());
      }
      if (!columns.IsSequence() || stream.deduplication_columns.size() != columns.size()) {
        walker.Problem(Walker::Join(at, "deduplication_columns"), "expected a list of column paths");
      }
    }
    stream.backfill_overlap = walker.Scalar(ingestion, at, "backfill_overlap", false).value_or("");
    stream.backfill_max_wait = walker.Scalar(ingestion, at, "backfill_max_wait", false).value_or("");
  } else {
    walker.Problem(Walker::Join(place, "ingestion_config"), "missing: {table: catalog.schema.table}");
  }
  ParseTriggerKeys(walker, node, place, &stream.trigger, &stream.trigger_interval);
  if (YAML::Node scale = node["scale"]; scale.IsDefined() && !scale.IsNull()) {
    const std::string at = Walker::Join(place, "scale");
    if (!scale.IsMap()) {
      walker.Problem(at, "expected {group: true}");
    } else {
      walker.CheckKeys(scale, at, {"group", "group_id"});
      std::optional<std::string> group = walker.Scalar(scale, at, "group", false);
      if (group && *group != "true" && *group != "false") walker.Problem(Walker::Join(at, "group"), "expected true or false");
      stream.workers_group = group == "true";
      stream.workers_group_id = walker.Scalar(scale, at, "group_id", false).value_or("");
      if (!stream.workers_group_id.empty() && !stream.workers_group) {
        walker.Problem(Walker::Join(at, "group_id"), "names the consumer group of a workers group: give group: true too");
      }
    }
  }
  return stream;
}

// A flow's or materialized view's `expectations:` list.
std::vector<Expectation> ParseExpectations(Walker& walker, const YAML::Node& node, const std::string& place) {
  std::vector<Expectation> expectations;
  if (YAML::Node list = node["expectations"]; list.IsDefined() && !list.IsNull()) {
    if (!list.IsSequence()) walker.Problem(Walker::Join(place, "expectations"), "expected a list");
    for (size_t i = 0; list.IsSequence() && i < list.size(); ++i) {
      std::string at = Walker::Join(place, "expectations[" + std::to_string(i) + "]");
      const YAML::Node& item = list[i];
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
      expectations.push_back(std::move(expectation));
    }
  }
  return expectations;
}

// A `materialized_views:` entry: its flow and the options of the Delta sink it writes.
struct MaterializedView {
  FlowSpec flow;
  std::map<std::string, std::string> sink_options;
};

// A `materialized_views:` entry: a SQL flow into the Delta table it names, kept whole (complete
// mode) when it aggregates, appended to otherwise. Its FROM table is read incrementally, with or
// without STREAM(...). `partition_cols: [columns]` partitions the table.
MaterializedView ParseMaterializedView(Walker& walker, const YAML::Node& node, const std::string& place) {
  MaterializedView parsed;
  FlowSpec& view = parsed.flow;
  view.materialized_view = true;
  if (!node.IsMap()) {
    walker.Problem(place, "expected a map describing a materialized view (name, sql, expectations)");
    return parsed;
  }
  walker.CheckKeys(node, place, {"name", "sql", "expectations", "trigger", "partition_cols"});
  if (YAML::Node columns = node["partition_cols"]; columns.IsDefined()) {
    std::string list;
    bool well_formed = columns.IsSequence() && columns.size() > 0;
    for (size_t i = 0; well_formed && i < columns.size(); ++i) {
      well_formed = columns[i].IsScalar() && !columns[i].Scalar().empty();
      if (well_formed) list += (list.empty() ? "" : ",") + ColumnListItem(columns[i].Scalar());
    }
    if (well_formed) {
      parsed.sink_options["partitionBy"] = list;
    } else {
      walker.Problem(Walker::Join(place, "partition_cols"), "expected a list of column names");
    }
  }
  view.name = walker.Scalar(node, place, "name", true).value_or("");
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    size_t dot = view.name.find('.', start);
    parts.push_back(view.name.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (parts.size() != 3) {
    walker.Problem(Walker::Join(place, "name"), "'" + view.name + "' is not catalog.schema.table");
  }
  for (const std::string& part : parts) {
    if (auto problem = Walker::NameProblem(part); problem) walker.Problem(Walker::Join(place, "name"), *problem);
  }
  view.sql = walker.Scalar(node, place, "sql", true);
  if (view.sql) {
    Result<expr::SelectStatement> select = expr::ParseSelect(*view.sql);
    if (!select.ok()) {
      walker.Problem(Walker::Join(place, "sql"),
                     std::string(select.status().error_class()) + ": " + std::string(select.status().message()));
    } else if (select->from.empty()) {
      walker.Problem(Walker::Join(place, "sql"), "a materialized view reads a table: add FROM name");
    } else {
      view.source.format = "delta";
      view.source.table = select->from_name();
      view.output_mode = select->is_aggregation() ? "complete" : "append";
    }
  }
  view.expectations = ParseExpectations(walker, node, place);
  view.sink = view.name;
  ParseTriggerKeys(walker, node, place, &view.trigger, &view.trigger_interval);
  return parsed;
}

// The materialized views become flows of the pipeline, each writing a Delta sink of its name.
void AddMaterializedViews(std::vector<MaterializedView> views, PipelineSpec* spec) {
  for (MaterializedView& view : views) {
    spec->sinks[view.flow.sink] = Endpoint{"delta", std::move(view.sink_options), view.flow.name};
    spec->flows.push_back(std::move(view.flow));
  }
}

FlowSpec ParseFlow(Walker& walker, const YAML::Node& node, const std::string& place) {
  FlowSpec flow;
  if (!node.IsMap()) {
    walker.Problem(place, "expected a map describing a flow");
    return flow;
  }
  walker.CheckKeys(node, place,
                   {"name", "sql", "source", "where", "select", "dedup", "expectations", "sink", "trigger",
                    "output_mode", "checkpoint", "on_source_reset"});
  flow.name = walker.Name(node, place);
  flow.sql = walker.Scalar(node, place, "sql", false);
  if (flow.sql) {
    for (const char* replaced : {"source", "where", "select"}) {
      if (node[replaced].IsDefined()) {
        walker.Problem(Walker::Join(place, replaced), "a flow given as sql has its source, where and select there");
      }
    }
    Result<expr::SelectStatement> select = expr::ParseSelect(*flow.sql);
    if (!select.ok()) {
      walker.Problem(Walker::Join(place, "sql"),
                     std::string(select.status().error_class()) + ": " + std::string(select.status().message()));
    } else if (select->from.empty()) {
      walker.Problem(Walker::Join(place, "sql"), "a flow reads a table: add FROM STREAM(name) or FROM name");
    } else {
      flow.source.format = "delta";
      flow.source.table = select->from_name();
      flow.reads_whole = !select->streaming;
    }
  } else if (node["source"].IsDefined()) {
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
  if (YAML::Node dedup = node["dedup"]; dedup.IsDefined() && !dedup.IsNull()) {
    if (dedup.IsScalar()) {
      flow.dedup.push_back(dedup.Scalar());
    } else if (dedup.IsSequence() && dedup.size() > 0) {
      for (size_t i = 0; i < dedup.size(); ++i) {
        if (dedup[i].IsScalar()) {
          flow.dedup.push_back(dedup[i].Scalar());
        } else {
          walker.Problem(Walker::Join(place, "dedup[" + std::to_string(i) + "]"), "expected a column");
        }
      }
    } else {
      walker.Problem(Walker::Join(place, "dedup"), "expected a list of columns");
    }
    if (flow.sql) {
      Result<expr::SelectStatement> select = expr::ParseSelect(*flow.sql);
      if (select.ok() && select->is_aggregation()) {
        walker.Problem(Walker::Join(place, "dedup"), "an aggregation has one row per group already");
      }
    }
  }
  flow.expectations = ParseExpectations(walker, node, place);
  flow.sink = walker.Scalar(node, place, "sink", true).value_or("");
  ParseTriggerKeys(walker, node, place, &flow.trigger, &flow.trigger_interval);
  flow.output_mode = walker.Scalar(node, place, "output_mode", false).value_or(flow.output_mode);
  flow.checkpoint = walker.Scalar(node, place, "checkpoint", false).value_or("");
  if (std::optional<std::string> reset = walker.Scalar(node, place, "on_source_reset", false)) {
    if (*reset != "reset" && *reset != "fail") {
      walker.Problem(Walker::Join(place, "on_source_reset"), "'" + *reset + "' is not one of reset, fail");
    }
    flow.on_source_reset = *reset;
  }
  return flow;
}

// A change feed's keys are its name, `connection` and the feed's own options; the warehouse is the
// pipeline's.
ChangeFeedSpec ParseChangeFeed(Walker& walker, const YAML::Node& node, const std::string& place) {
  ChangeFeedSpec feed;
  if (!node.IsMap()) {
    walker.Problem(place, "expected a map describing a change feed");
    return feed;
  }
  std::vector<std::string> known = {"name", "connection"};
  for (const OptionSpec& option : connectors::ChangeFeedOptionSpecs()) {
    if (option.name != "warehouse") known.emplace_back(option.name);
  }
  for (const auto& entry : node) {
    const std::string key = entry.first.Scalar();
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    std::string list;
    for (const std::string& candidate : known) list += (list.empty() ? "" : ", ") + candidate;
    walker.Problem(Walker::Join(place, key), "unknown key; expected one of: " + list);
  }
  feed.name = walker.Name(node, place);
  for (const std::string& key : known) {
    if (key == "name") continue;
    if (std::optional<std::string> value = walker.Scalar(node, place, key.c_str(), false)) feed.options[key] = *value;
  }
  return feed;
}

}  // namespace

std::string PipelineSpec::CheckpointOf(const StreamSpec& stream) const {
  return storage + "/checkpoints/streams/" + stream.name;
}

std::string PipelineSpec::CheckpointOf(const FlowSpec& flow) const {
  if (!flow.checkpoint.empty()) return flow.checkpoint;
  // A sink's checkpointLocation (the postgresql sink's, as Spark's writeStream names it) is the
  // query's checkpoint.
  if (auto sink = sinks.find(flow.sink); sink != sinks.end()) {
    if (auto location = sink->second.options.find("checkpointLocation"); location != sink->second.options.end()) {
      return location->second;
    }
  }
  return DefaultCheckpointOf(flow);
}

std::string PipelineSpec::DefaultCheckpointOf(const FlowSpec& flow) const { return storage + "/checkpoints/" + flow.name; }

Result<std::string> PipelineSpec::TablePath(std::string_view table) const {
  std::vector<std::string> parts;
  size_t begin = 0;
  while (true) {
    size_t dot = table.find('.', begin);
    parts.emplace_back(table.substr(begin, dot == std::string_view::npos ? std::string_view::npos : dot - begin));
    if (dot == std::string_view::npos) break;
    begin = dot + 1;
  }
  if (parts.size() != 3) {
    return Status::Error(errors::kInvalidPipeline,
                         "table '" + std::string(table) + "' is not of the form catalog.schema.table");
  }
  for (const std::string& part : parts) {
    if (std::string problem = PathNameProblem(part); !problem.empty()) {
      return Status::Error(errors::kInvalidPipeline, "table '" + std::string(table) + "': the part `" + part + "` " +
                                                         problem + "; use letters, digits, `_` and `-`");
    }
  }
  std::string path = warehouse + "/" + parts[0] + "/" + parts[1] + "/" + parts[2];
  // (An empty warehouse: only the name is being checked.)
  if (!warehouse.empty() && !StaysUnder(warehouse, path)) {
    return Status::Error(errors::kInvalidPipeline, "table '" + std::string(table) + "' leaves the warehouse");
  }
  return path;
}

Result<std::map<std::string, std::string>> PipelineSpec::ResolvedOptions(const Endpoint& endpoint) const {
  const Catalog catalog(storage::DefaultFileSystem(), warehouse);
  using Options = std::map<std::string, std::string>;
  SLUICE_ASSIGN_OR_RETURN(Options options,
                          ExpandConnection(endpoint.options, OwnThenCatalog(connections, catalog), endpoint.format));
  if (endpoint.table) {
    if (options.count("path")) {
      return Status::Error(errors::kInvalidPipeline, "give either `table` or the `path` option, not both");
    }
    SLUICE_ASSIGN_OR_RETURN(options["path"], TablePath(*endpoint.table));
  }
  return options;
}

void PlaceBesideFile(const std::string& file_path, PipelineSpec* spec) {
  for (std::string* folder : {&spec->storage, &spec->warehouse}) {
    if (folder->empty() || folder->starts_with('/') || storage::IsObjectStoreUri(*folder)) continue;
    *folder = (std::filesystem::absolute(file_path).parent_path() / *folder).lexically_normal().string();
  }
}

Status ConfigureObjectStores(const PipelineSpec& spec) {
  for (const auto& [uri, options] : spec.object_stores) {
    Status configured = storage::ConfigureObjectStore(uri, options);
    if (!configured.ok()) return configured.WithContext("object_stores." + uri);
  }
  return Status::OK();
}

Result<connectors::ChangeFeedConfig> PipelineSpec::ChangeFeedConfigOf(const ChangeFeedSpec& feed) const {
  SLUICE_ASSIGN_OR_RETURN(auto options, ResolvedOptions(Endpoint{"postgresql", feed.options, std::nullopt}));
  std::error_code error;
  std::filesystem::path absolute = std::filesystem::absolute(warehouse, error);
  options["warehouse"] = error ? warehouse : absolute.lexically_normal().string();
  SLUICE_ASSIGN_OR_RETURN(connectors::ChangeFeedConfig config, connectors::MakeChangeFeedConfig(options));
  SLUICE_RETURN_IF_ERROR(config.CheckTarget());
  return config;
}

void AddCheckpointLocation(std::span<const OptionSpec> sink_options, const std::string& checkpoint,
                           std::map<std::string, std::string>* options) {
  for (const OptionSpec& option : sink_options) {
    if (option.name == "checkpointLocation" && !options->count("checkpointLocation")) {
      (*options)["checkpointLocation"] = checkpoint;
    }
  }
}

void AddUpsertKey(std::span<const OptionSpec> sink_options, const FlowSpec& flow,
                  std::map<std::string, std::string>* options) {
  if (!flow.sql || !EqualsIgnoreCase(flow.output_mode, "update")) return;
  for (const auto& [name, value] : *options) {
    if (EqualsIgnoreCase(name, "upsertkey")) return;
  }
  bool declared = false;
  for (const OptionSpec& option : sink_options) declared = declared || option.name == "upsertkey";
  if (!declared) return;
  Result<expr::SelectStatement> select = expr::ParseSelect(*flow.sql);
  if (!select.ok() || !select->is_aggregation()) return;
  std::optional<std::vector<std::string>> keys = select->GroupKeyColumns();
  if (!keys) return;
  std::string joined;
  for (const std::string& key : *keys) joined += (joined.empty() ? "" : ",") + key;
  (*options)["upsertkey"] = joined;
}

namespace {

Status Problems(const Walker& walker, std::string_view what) {
  std::string message = std::to_string(walker.problems().size()) + " problem(s) in the " + std::string(what) + ":";
  for (const std::string& problem : walker.problems()) message += "\n  " + problem;
  return Status::Error(errors::kInvalidPipeline, message);
}

Result<YAML::Node> LoadYaml(std::string_view yaml) {
  try {
    return YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& error) {
    return Status::Error(errors::kInvalidPipeline, "not valid YAML at line " + std::to_string(error.mark.line + 1) +
                                                       ", column " + std::to_string(error.mark.column + 1) + ": " +
                                                       error.msg);
  }
}

}  // namespace

Result<StreamSpec> ParseStreamSpec(std::string_view yaml) {
  SLUICE_ASSIGN_OR_RETURN(YAML::Node root, LoadYaml(yaml));
  Walker walker;
  StreamSpec stream;
  try {
    walker.CheckDuplicateKeys(root, "");
    stream = ParseStream(walker, root, "");
  } catch (const YAML::Exception& error) {
    walker.Problem("line " + std::to_string(error.mark.line + 1), error.msg);
  }
  if (!walker.problems().empty()) return Problems(walker, "stream definition");
  return stream;
}

Status ProblemsOf(std::string_view what, const std::vector<Status>& problems) {
  if (problems.empty()) return Status::OK();
  std::string message = std::to_string(problems.size()) + " problem(s) in " + std::string(what) + ":";
  for (const Status& problem : problems) message += "\n  " + problem.ToString();
  return Status::Error(errors::kInvalidPipeline, message);
}

Result<ChangeFeedSpec> ParseChangeFeedSpec(std::string_view yaml) {
  SLUICE_ASSIGN_OR_RETURN(YAML::Node root, LoadYaml(yaml));
  Walker walker;
  ChangeFeedSpec feed;
  try {
    walker.CheckDuplicateKeys(root, "");
    feed = ParseChangeFeed(walker, root, "");
  } catch (const YAML::Exception& error) {
    walker.Problem("line " + std::to_string(error.mark.line + 1), error.msg);
  }
  if (!walker.problems().empty()) return Problems(walker, "change feed definition");
  return feed;
}

Result<PipelineSpec> ParsePipelineSpec(std::string_view yaml) {
  Status shape;
  SLUICE_ASSIGN_OR_RETURN(PipelineSpec spec, ParsePipelineSpecKeepingGoing(yaml, &shape));
  if (!shape.ok()) return shape;
  return spec;
}

Result<PipelineSpec> ParsePipelineSpecKeepingGoing(std::string_view yaml, Status* shape) {
  *shape = Status::OK();
  SLUICE_ASSIGN_OR_RETURN(YAML::Node root, LoadYaml(yaml));
  if (!root.IsMap()) return Status::Error(errors::kInvalidPipeline, "a pipeline file is a map with name, storage, flows, ...");

  Walker walker;
  PipelineSpec spec;
  std::vector<MaterializedView> views;
  try {
    walker.CheckKeys(root, "",
                     {"name", "storage", "warehouse", "sql", "state", "connections", "object_stores", "sinks", "flows",
                      "materialized_views", "streams", "change_feeds", "libraries"});
    walker.CheckDuplicateKeys(root, "");
    spec.name = walker.Name(root, "");
    spec.storage = walker.Scalar(root, "", "storage", true).value_or("");
    spec.warehouse = walker.Scalar(root, "", "warehouse", false).value_or(spec.storage + "/warehouse");
    // `file:///path` is the local path it names.
    for (std::string* path : {&spec.storage, &spec.warehouse}) {
      if (path->starts_with("file://")) *path = storage::AbsolutePath(*path);
    }
    if (YAML::Node sql = root["sql"]; sql.IsDefined() && !sql.IsNull()) {
      if (!sql.IsMap()) {
        walker.Problem("sql", "expected a map of SQL settings (ansi)");
      } else {
        walker.CheckKeys(sql, "sql", {"ansi"});
        std::optional<std::string> ansi = walker.Scalar(sql, "sql", "ansi", false);
        if (ansi && *ansi != "true" && *ansi != "false") {
          walker.Problem("sql.ansi", "expected true or false, got '" + *ansi + "'");
        }
        spec.sql.ansi = ansi.value_or("true") != "false";
      }
    }
    if (YAML::Node state = root["state"]; state.IsDefined() && !state.IsNull()) {
      if (!state.IsMap()) {
        walker.Problem("state", "expected a map of state settings (store)");
      } else {
        walker.CheckKeys(state, "state", {"store"});
        if (std::optional<std::string> store = walker.Scalar(state, "state", "store", false)) {
          Result<engine::StateStoreKind> kind = engine::ParseStateStore(*store);
          if (kind.ok()) {
            spec.state_store = *kind;
          } else {
            walker.Problem("state.store", "expected memory or rocksdb, got '" + *store + "'");
          }
        }
      }
    }
    if (YAML::Node connections = root["connections"]; connections.IsDefined() && !connections.IsNull()) {
      if (!connections.IsMap()) walker.Problem("connections", "expected a map of connection names to connections");
      for (const auto& entry : connections.IsMap() ? connections : YAML::Node()) {
        Connection connection;
        connection.name = entry.first.Scalar();
        const std::string place = "connections." + connection.name;
        connection.options = walker.StringMap(entry.second, place);
        auto type = connection.options.find("type");
        if (type == connection.options.end()) {
          walker.Problem(place + ".type", "missing: postgresql or kafka");
        } else {
          connection.type = type->second;
          connection.options.erase(type);
        }
        spec.connections[connection.name] = std::move(connection);
      }
    }
    if (YAML::Node stores = root["object_stores"]; stores.IsDefined() && !stores.IsNull()) {
      if (!stores.IsMap()) walker.Problem("object_stores", "expected a map of s3://bucket[/prefix] to store options");
      for (const auto& entry : stores.IsMap() ? stores : YAML::Node()) {
        const std::string uri = entry.first.Scalar();
        spec.object_stores[uri] = walker.StringMap(entry.second, "object_stores." + uri);
      }
    }
    if (YAML::Node sinks = root["sinks"]; sinks.IsDefined() && !sinks.IsNull()) {
      if (!sinks.IsMap()) walker.Problem("sinks", "expected a map of sink names to sinks");
      for (const auto& entry : sinks.IsMap() ? sinks : YAML::Node()) {
        std::string name = entry.first.Scalar();
        if (auto problem = Walker::NameProblem(name); problem) walker.Problem("sinks." + name, *problem);
        spec.sinks[name] = walker.ParseEndpoint(entry.second, "sinks." + name, /*sink=*/true);
      }
    }
    YAML::Node streams = root["streams"];
    if (streams.IsDefined() && !streams.IsNull()) {
      if (!streams.IsSequence()) walker.Problem("streams", "expected a list of streams");
      for (size_t i = 0; streams.IsSequence() && i < streams.size(); ++i) {
        spec.streams.push_back(ParseStream(walker, streams[i], "streams[" + std::to_string(i) + "]"));
      }
    }
    if (YAML::Node feeds = root["change_feeds"]; feeds.IsDefined() && !feeds.IsNull()) {
      if (!feeds.IsSequence()) walker.Problem("change_feeds", "expected a list of change feeds");
      for (size_t i = 0; feeds.IsSequence() && i < feeds.size(); ++i) {
        spec.change_feeds.push_back(ParseChangeFeed(walker, feeds[i], "change_feeds[" + std::to_string(i) + "]"));
      }
    }
    if (YAML::Node list = root["materialized_views"]; list.IsDefined() && !list.IsNull()) {
      if (!list.IsSequence()) walker.Problem("materialized_views", "expected a list of materialized views");
      for (size_t i = 0; list.IsSequence() && i < list.size(); ++i) {
        views.push_back(ParseMaterializedView(walker, list[i], "materialized_views[" + std::to_string(i) + "]"));
      }
    }
    if (YAML::Node libraries = root["libraries"]; libraries.IsDefined() && !libraries.IsNull()) {
      if (!libraries.IsSequence()) walker.Problem("libraries", "expected a list of Python files (glob patterns)");
      for (size_t i = 0; libraries.IsSequence() && i < libraries.size(); ++i) {
        if (libraries[i].IsScalar() && !libraries[i].Scalar().empty()) {
          spec.libraries.push_back(libraries[i].Scalar());
        } else {
          walker.Problem("libraries[" + std::to_string(i) + "]", "expected a file path or glob pattern");
        }
      }
    }
    YAML::Node flows = root["flows"];
    if (!flows.IsDefined() || flows.IsNull()) {
      if (spec.streams.empty() && spec.change_feeds.empty() && views.empty() && spec.libraries.empty()) {
        walker.Problem("flows", "missing: a pipeline needs at least one flow, materialized view, stream or change feed");
      }
    } else if (!flows.IsSequence()) {
      walker.Problem("flows", "expected a list of flows");
    } else {
      for (size_t i = 0; i < flows.size(); ++i) {
        spec.flows.push_back(ParseFlow(walker, flows[i], "flows[" + std::to_string(i) + "]"));
      }
    }
  } catch (const YAML::Exception& error) {
    walker.Problem("line " + std::to_string(error.mark.line + 1), error.msg);
    *shape = Problems(walker, "pipeline file");
    return PipelineSpec{};
  }
  if (walker.problems().empty()) {
    AddMaterializedViews(std::move(views), &spec);
    return spec;
  }
  *shape = Problems(walker, "pipeline file");
  // What parsed cleanly, for the checks that need no data: a problem at the top level leaves
  // nothing to check; otherwise the entries with a problem are left out, and the flows writing to
  // a sink left out with them.
  for (std::string_view top : {"name", "storage", "warehouse", "sql", "connections", "object_stores"}) {
    if (walker.HasProblemIn(top)) return PipelineSpec{};
  }
  std::set<std::string> dropped_sinks;
  for (auto it = spec.sinks.begin(); it != spec.sinks.end();) {
    if (!walker.HasProblemIn("sinks." + it->first)) {
      ++it;
      continue;
    }
    dropped_sinks.insert(it->first);
    it = spec.sinks.erase(it);
  }
  auto drop = [&](auto& list, const std::string& key, auto&& also) {
    using Item = typename std::decay_t<decltype(list)>::value_type;
    std::vector<Item> kept;
    for (size_t i = 0; i < list.size(); ++i) {
      if (!walker.HasProblemIn(key + "[" + std::to_string(i) + "]") && !also(list[i])) kept.push_back(std::move(list[i]));
    }
    list = std::move(kept);
  };
  drop(spec.flows, "flows", [&](const FlowSpec& flow) { return dropped_sinks.count(flow.sink) > 0; });
  drop(spec.streams, "streams", [](const StreamSpec&) { return false; });
  drop(spec.change_feeds, "change_feeds", [](const ChangeFeedSpec&) { return false; });
  drop(views, "materialized_views", [](const MaterializedView&) { return false; });
  AddMaterializedViews(std::move(views), &spec);
  return spec;
}

}  // namespace sluice::pipeline
