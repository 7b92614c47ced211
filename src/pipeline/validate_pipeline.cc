// ValidatePipeline: every check that needs no data, each problem reported separately.
#include <functional>
#include <set>

#include "sluice/connectors/pg_change_feed.h"
#include "sluice/core/error_classes.h"
#include "sluice/engine/streaming_query.h"
#include "sluice/expr/expression.h"
#include "sluice/expr/select.h"
#include "sluice/pipeline/change_feed_status.h"
#include "sluice/pipeline/flow_operators.h"
#include "sluice/pipeline/stream_decoding.h"
#include "sluice/pipeline/pipeline_spec.h"
#include "sluice/storage/file_systems.h"

namespace sluice::pipeline {
namespace {

class Problems {
 public:
  void Add(const Status& status, const std::string& context) {
    if (!status.ok()) list_.push_back(status.WithContext(context));
  }
  void Add(const Status& status) {
    if (!status.ok()) list_.push_back(status);
  }
  void Add(std::string message) { list_.push_back(Status::Error(errors::kInvalidPipeline, std::move(message))); }
  size_t size() const { return list_.size(); }
  std::vector<Status> Take() { return std::move(list_); }

 private:
  std::vector<Status> list_;
};

// What a run would make of an endpoint, made without opening it (nothing is read or written):
// the resolved options, and the source or sink when its format accepts them.
struct MadeEndpoint {
  std::map<std::string, std::string> options;
  std::unique_ptr<engine::Source> source;
  std::unique_ptr<engine::Sink> sink;
};

// Checks an endpoint's format and options and makes it as a run would; std::nullopt when the
// options are invalid.
std::optional<MadeEndpoint> CheckEndpoint(const PipelineSpec& spec, const Endpoint& endpoint, bool is_sink,
                                          const engine::Registry& registry, const std::string& context,
                                          Problems* problems) {
  Result<std::map<std::string, std::string>> options = spec.ResolvedOptions(endpoint);
  if (!options.ok()) {
    problems->Add(options.status(), context);
    return std::nullopt;
  }
  std::span<const OptionSpec> specs;
  std::string_view error_class;
  std::string format_name;
  if (is_sink) {
    const engine::SinkFormat* format = registry.FindSinkFormat(endpoint.format);
    if (format != nullptr) specs = format->options, error_class = format->error_class, format_name = format->name;
  } else {
    const engine::SourceFormat* format = registry.FindSourceFormat(endpoint.format);
    if (format != nullptr) specs = format->options, error_class = format->error_class, format_name = format->name;
  }
  if (format_name.empty()) {
    problems->Add(Status::Error(errors::kDataSourceNotFound, std::string(is_sink ? "sink" : "source") + " format '" +
                                                                 endpoint.format + "' is not known"),
                  context);
    return std::nullopt;
  }
  // Each flow's own checkpoint goes there at run time; any path stands for it here.
  if (is_sink) AddCheckpointLocation(specs, spec.storage + "/checkpoints", &*options);
  Result<ValidatedOptions> validated =
      ValidateOptions(format_name + (is_sink ? " sink" : " source"), specs, *options, error_class);
  if (!validated.ok()) {
    problems->Add(validated.status(), context);
    return std::nullopt;
  }
  MadeEndpoint made{*options, nullptr, nullptr};
  if (is_sink) {
    Result<std::unique_ptr<engine::Sink>> sink = registry.MakeSink(endpoint.format, *options);
    problems->Add(sink.status(), context);
    if (sink.ok()) made.sink = std::move(sink).value();
  } else {
    Result<std::unique_ptr<engine::Source>> source = registry.MakeSource(endpoint.format, *options);
    problems->Add(source.status(), context);
    if (source.ok()) made.source = std::move(source).value();
  }
  return made;
}

}  // namespace

std::vector<Status> ValidatePipeline(const PipelineSpec& spec, const engine::Registry& registry) {
  Problems problems;
  for (auto [key, path] : {std::pair<const char*, const std::string*>{"storage", &spec.storage}, {"warehouse", &spec.warehouse}}) {
    if (storage::IsObjectStoreUri(*path)) {
      Result<std::string> resolved = storage::ResolvePath(*path);
      if (!resolved.ok()) problems.Add(resolved.status(), key);
    } else if (!path->starts_with('/')) {
      problems.Add(std::string(key) + " `" + *path + "` is not an absolute path; write it from the root (/...) or as an "
                   "object store's URI (s3://bucket/prefix)");
    }
  }
  for (const auto& [name, connection] : spec.connections) {
    problems.Add(ValidateConnection(connection).status(), "connection '" + name + "'");
  }
  std::map<std::string, std::string> delta_sink_paths;  // sink name -> table path
  std::map<std::string, std::unique_ptr<engine::Sink>> made_sinks;
  for (const auto& [name, sink] : spec.sinks) {
    auto made = CheckEndpoint(spec, sink, true, registry, "sink '" + name + "'", &problems);
    if (made && sink.format == "delta") delta_sink_paths[name] = made->options["path"];
    if (made && made->sink) made_sinks[name] = std::move(made->sink);
  }

  std::set<std::string> flow_names, checkpoints;
  std::multimap<std::string, std::string> reads_to_writes;  // Delta table read -> Delta table written
  for (const FlowSpec& flow : spec.flows) {
    const std::string context = "flow '" + flow.name + "'";
    if (!flow_names.insert(flow.name).second) problems.Add("two flows are named '" + flow.name + "'; rename one");
    if (!flow.on_source_reset.empty() && flow.source.format != "delta") {
      problems.Add(context + " sets on_source_reset, which applies to a Delta source only; it reads " +
                   flow.source.format);
    }
    if (auto sink = spec.sinks.find(flow.sink); sink != spec.sinks.end() && !flow.checkpoint.empty()) {
      auto location = sink->second.options.find("checkpointLocation");
      if (location != sink->second.options.end() && location->second != flow.checkpoint) {
        problems.Add(context + " names the checkpoint " + flow.checkpoint + " and its sink '" + flow.sink +
                     "' the checkpointLocation " + location->second + "; a query has one checkpoint: give one of them");
      }
    }
    if (!checkpoints.insert(spec.CheckpointOf(flow)).second) {
      problems.Add(context + " shares its checkpoint " + spec.CheckpointOf(flow) +
                   " with another flow; every flow needs its own");
    }
    auto source = CheckEndpoint(spec, flow.source, false, registry, context + " source", &problems);
    size_t before_parsing = problems.size();
    if (flow.sql) problems.Add(expr::ParseSelect(*flow.sql).status(), context + " sql");
    if (flow.where) problems.Add(expr::Expression::Parse(*flow.where).status(), context + " where");
    for (const std::string& item : flow.select) {
      problems.Add(expr::ParseNamedExpression(item).status(), context + " select '" + item + "'");
    }
    std::set<std::string> expectation_names;
    for (const Expectation& expectation : flow.expectations) {
      if (!expectation_names.insert(expectation.name).second) {
        problems.Add(context + " has two expectations named '" + expectation.name + "'");
      }
      problems.Add(expr::Expression::Parse(expectation.condition).status(),
                   context + " expectation '" + expectation.name + "'");
    }
    // Parsed expressions are bound to the source's schema when the source knows it before
    // reading: unknown columns and functions, wrong argument counts and types are found here.
    // (Parse errors are reported above; a flow that does not parse has no operators to check.)
    Result<engine::OutputMode> output_mode = engine::ParseOutputMode(flow.output_mode);
    Result<FlowOperators> operators =
        MakeFlowOperators(flow, spec.sql, output_mode.ok() ? *output_mode : engine::OutputMode::kAppend);
    engine::OperatorChain chain(operators.ok() ? std::move(operators->operators)
                                               : std::vector<std::unique_ptr<engine::Operator>>{});
    if (operators.ok() && problems.size() == before_parsing && source && source->source && source->source->schema()) {
      problems.Add(chain.Bind(source->source->schema()).status());
    }
    if (!spec.sinks.count(flow.sink)) {
      std::string declared;
      for (const auto& [name, sink] : spec.sinks) declared += (declared.empty() ? "" : ", ") + name;
      problems.Add(context + " writes to sink '" + flow.sink + "', which is not declared under sinks" +
                   (declared.empty() ? std::string() : " (declared: " + declared + ")"));
    }
    Result<engine::Trigger> trigger = engine::ParseTrigger(flow.trigger, flow.trigger_interval);
    problems.Add(trigger.status(), context + " trigger");
    problems.Add(output_mode.status(), context + " output_mode");
    if (auto sink = made_sinks.find(flow.sink); sink != made_sinks.end() && trigger.ok() && output_mode.ok()) {
      problems.Add(engine::CheckQueryShape(*sink->second, *trigger, *output_mode, chain), context);
    }
    if (source && flow.source.format == "delta" && delta_sink_paths.count(flow.sink)) {
      reads_to_writes.emplace(source->options["path"], delta_sink_paths[flow.sink]);
    }
  }

  for (const StreamSpec& stream : spec.streams) {
    const std::string context = "stream '" + stream.name + "'";
    if (!flow_names.insert(stream.name).second) problems.Add("two flows or streams are named '" + stream.name + "'");
    problems.Add(spec.TablePath(stream.name).status(), context + " name");
    if (stream.source.format != "kafka") {
      problems.Add(context + " reads format '" + stream.source.format + "'; a stream's source is kafka");
    } else {
      CheckEndpoint(spec, stream.source, false, registry, context + " source", &problems);
    }
    Result<engine::Trigger> trigger = engine::ParseTrigger(stream.trigger, stream.trigger_interval);
    problems.Add(trigger.status(), context + " trigger");
    if (stream.workers_group) {
      if (trigger.ok() && trigger->kind != engine::Trigger::Kind::kProcessingTime) {
        problems.Add(context + " runs in a workers group (scale: {group: true}), which runs until stopped: its "
                               "trigger must be processing_time, not " +
                     std::string(engine::TriggerName(trigger->kind)));
      }
      if (stream.source.options.contains("assign")) {
        problems.Add(context + " runs in a workers group (scale: {group: true}), whose broker assigns the "
                               "partitions: give `subscribe` or `subscribe_pattern`, not `assign`");
      }
    }
    Result<IngestionSpec> ingestion = IngestionSpecOf(spec, stream);
    problems.Add(ingestion.status(), context + " ingestion_config");
    if (ingestion.ok()) problems.Add(StreamDecodeOperator::Make(*ingestion).status(), context);
  }

  std::map<std::string, std::string> slots;  // slot name -> change feed
  std::vector<std::string> feed_targets;    // target directories of the valid feeds
  for (const ChangeFeedSpec& feed : spec.change_feeds) {
    const std::string context = "change feed '" + feed.name + "'";
    if (!flow_names.insert(feed.name).second) {
      problems.Add("two flows, streams or change feeds are named '" + feed.name + "'; rename one");
    }
    Result<connectors::ChangeFeedConfig> config = spec.ChangeFeedConfigOf(feed);
    if (!config.ok()) {
      problems.Add(config.status(), context);
      continue;
    }
    auto [slot, inserted] = slots.emplace(config->slot_name, feed.name);
    if (!inserted) {
      problems.Add(context + " uses the replication slot " + config->slot_name + " of change feed '" + slot->second +
                   "'; every feed needs its own slot_name");
    }
    feed_targets.push_back(config->target_directory());
  }
  for (const auto& [name, path] : delta_sink_paths) {
    for (const std::string& target : feed_targets) {
      if (IsChangeFeedHistoryTable(target, path)) {
        problems.Add("sink '" + name + "' writes " + path + ", a history table of a change feed; only the feed "
                     "writes there (read it as a Delta source instead)");
      }
    }
  }

  // A cycle of flows through Delta tables would feed its own output back forever.
  std::map<std::string, int> state;  // 1: on the current path, 2: done
  std::function<bool(const std::string&)> has_cycle = [&](const std::string& table) {
    state[table] = 1;
    auto [begin, end] = reads_to_writes.equal_range(table);
    for (auto it = begin; it != end; ++it) {
      if (state[it->second] == 1 || (state[it->second] == 0 && has_cycle(it->second))) return true;
    }
    state[table] = 2;
    return false;
  };
  for (const auto& [table, written] : reads_to_writes) {
    if (state[table] == 0 && has_cycle(table)) {
      problems.Add("flows form a cycle through the Delta table " + table + "; a flow must not read, directly or "
                   "through other flows, the table it writes");
      break;
    }
  }
  return problems.Take();
}

}  // namespace sluice::pipeline
