#include "sluice/pipeline/pipeline_runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>

#include "sluice/connectors/pg_change_feed.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/json_text.h"
#include "sluice/delta/source.h"
#include "sluice/delta/writer.h"
#include "sluice/engine/checkpoint.h"
#include "sluice/pipeline/copy.h"
#include "sluice/pipeline/change_feed_status.h"
#include "sluice/pipeline/checkpoint_owner.h"
#include "sluice/pipeline/full_refresh.h"
#include "sluice/connectors/kafka_offsets.h"
#include "sluice/core/logging.h"
#include "sluice/pipeline/group_ingestion.h"
#include "sluice/pipeline/ingestion_sink.h"
#include "sluice/pipeline/stream_schema_history.h"

namespace sluice::pipeline {

struct PipelineRun::Flow {
  const FlowSpec* spec = nullptr;
  std::unique_ptr<engine::StreamingQuery> query;
  std::unique_ptr<GroupIngestion> group;  // instead of the query, for a stream in a workers group
  // The flow's operators whose figures it reports, owned by the query; null for a stream in a
  // workers group (which runs no query) and for a flow without expectations.
  const EventTimeOperator* event_time = nullptr;
  const ExpectationsOperator* expectations = nullptr;
  IngestionSink* ingestion = nullptr;  // the sink of a stream, owned by its query or group
  // The first operator of a stream, owned by its query or group: the decoding's figures.
  const StreamDecodeOperator* decode = nullptr;
  // Source options set by the run, over the file's: where a flow that started over reads from.
  std::map<std::string, std::string> source_overrides;
  FlowFigures figures;
};

struct PipelineRun::Feed {
  const ChangeFeedSpec* spec = nullptr;
  connectors::ChangeFeedConfig config;
  std::unique_ptr<connectors::PgChangeFeed> feed;
  // The feed's figures, kept past the feed's end.
  std::shared_ptr<const connectors::ChangeFeedProgress> progress;
  std::atomic<bool> stop{false};
  ChangeFeedFigures figures;
};

namespace {

// The records a Kafka source has yet to read after the batch: for every partition, its latest
// offset minus the batch's end (offsets in the source's JSON, kafka_offsets.h); nullopt for other
// sources.
std::optional<int64_t> RecordsBehind(const engine::QueryProgress& progress) {
  if (progress.sources.size() != 1 || !progress.sources[0].description.starts_with("Kafka")) return std::nullopt;
  const engine::SourceProgress& source = progress.sources[0];
  Result<connectors::PartitionOffsets> latest =
      connectors::ParsePartitionOffsets(source.latest_offset, "latest offset", 0, errors::kSourceOffsetInvalid);
  Result<connectors::PartitionOffsets> end =
      connectors::ParsePartitionOffsets(source.end_offset, "end offset", 0, errors::kSourceOffsetInvalid);
  if (!latest.ok() || !end.ok()) return std::nullopt;
  int64_t behind = 0;
  for (const auto& [partition, offset] : *latest) {
    auto read = end->find(partition);
    behind += std::max<int64_t>(0, offset - (read == end->end() ? 0 : read->second));
  }
  return behind;
}

std::string ActionName(ExpectationAction action) {
  switch (action) {
    case ExpectationAction::kWarn: return "expect";
    case ExpectationAction::kDrop: return "expect_or_drop";
    case ExpectationAction::kFail: return "expect_or_fail";
  }
  return "expect";
}

// The options of an endpoint as JSON, with the values of secret options replaced: the event log
// shows what was configured, never a credential.
std::string RedactedOptionsJson(const std::map<std::string, std::string>& options, std::span<const OptionSpec> specs) {
  std::string json = "{";
  for (const auto& [key, value] : options) {
    bool secret = false;
    for (const OptionSpec& spec : specs) secret = secret || (spec.name == key && spec.type == OptionType::kSecret);
    if (json.size() > 1) json += ',';
    json += JsonString(key) + ":" + JsonString(secret ? "[REDACTED]" : value);
  }
  return json + "}";
}

// A flow that runs a stream stands for it under the stream's name; its sink is the ingestion table.
const StreamSpec* StreamOf(const PipelineSpec& spec, const FlowSpec& flow) {
  if (!flow.sink.empty()) return nullptr;
  for (const StreamSpec& stream : spec.streams) {
    if (stream.name == flow.name) return &stream;
  }
  return nullptr;
}

// The table of a `delta` endpoint, or "" for another format.
std::string DeltaPath(const PipelineSpec& spec, const Endpoint& endpoint) {
  if (endpoint.format != "delta") return "";
  Result<std::map<std::string, std::string>> options = spec.ResolvedOptions(endpoint);
  return options.ok() && options->count("path") ? options->at("path") : "";
}

std::string SinkTablePath(const PipelineSpec& spec, const FlowSpec& flow) {
  if (const StreamSpec* stream = StreamOf(spec, flow)) return spec.TablePath(stream->table).value_or("");
  auto sink = spec.sinks.find(flow.sink);
  return sink == spec.sinks.end() ? "" : DeltaPath(spec, sink->second);
}

}  // namespace

Result<std::unique_ptr<PipelineRun>> PipelineRun::Start(PipelineSpec spec, RunOptions options) {
  std::unique_ptr<PipelineRun> run(new PipelineRun());
  run->spec_ = std::move(spec);
  run->options_ = std::move(options);
  SLUICE_RETURN_IF_ERROR(ConfigureObjectStores(run->spec_));
  // Records written under a stream's earlier Avro schemas keep decoding (validation compiles each
  // against the current one).
  SLUICE_RETURN_IF_ERROR(AttachRecordedSchemas(*run->options_.file_system, &run->spec_));
  const PipelineSpec& pipeline = run->spec_;

  std::vector<Status> problems = ValidatePipeline(pipeline, *run->options_.registry);
  if (!problems.empty()) {
    std::string message = std::to_string(problems.size()) + " problem(s) in pipeline '" + pipeline.name + "':";
    for (const Status& problem : problems) message += "\n  " + problem.ToString();
    return Status::Error(errors::kInvalidPipeline, message);
  }
  SLUICE_RETURN_IF_ERROR(RecordStreamSchemas(*run->options_.file_system, pipeline));
  std::vector<FlowSpec>& all = run->all_flows_;
  all = pipeline.flows;
  for (const StreamSpec& stream : pipeline.streams) {
    FlowSpec flow;
    flow.name = stream.name;
    flow.source = stream.source;
    flow.trigger = stream.trigger;
    flow.trigger_interval = stream.trigger_interval;
    flow.checkpoint = pipeline.CheckpointOf(stream);
    all.push_back(std::move(flow));
  }
  auto find_flow = [&](const std::string& name) -> Result<const FlowSpec*> {
    for (const FlowSpec& flow : all) {
      if (flow.name == name) return &flow;
    }
    std::string known;
    for (const FlowSpec& flow : all) known += (known.empty() ? "" : ", ") + flow.name;
    for (const ChangeFeedSpec& feed : pipeline.change_feeds) known += (known.empty() ? "" : ", ") + feed.name;
    return Status::Error(errors::kInvalidPipeline,
                         "pipeline '" + pipeline.name + "' has no flow named '" + name + "'; its flows: " + known);
  };
  std::vector<const FlowSpec*> selected;
  std::vector<const ChangeFeedSpec*> feeds;
  for (const std::string& name : run->options_.flows) {
    auto feed = std::find_if(pipeline.change_feeds.begin(), pipeline.change_feeds.end(),
                             [&](const ChangeFeedSpec& candidate) { return candidate.name == name; });
    if (feed != pipeline.change_feeds.end()) {
      if (std::find(feeds.begin(), feeds.end(), &*feed) == feeds.end()) feeds.push_back(&*feed);
      continue;
    }
    SLUICE_ASSIGN_OR_RETURN(const FlowSpec* flow, find_flow(name));
    if (std::find(selected.begin(), selected.end(), flow) == selected.end()) selected.push_back(flow);
  }
  if (run->options_.flows.empty()) {
    for (const FlowSpec& flow : all) selected.push_back(&flow);
    for (const ChangeFeedSpec& feed : pipeline.change_feeds) feeds.push_back(&feed);
  }
  std::vector<const FlowSpec*> refreshed;
  if (run->options_.full_refresh_all) refreshed = selected;
  for (const std::string& name : run->options_.full_refresh) {
    SLUICE_ASSIGN_OR_RETURN(const FlowSpec* flow, find_flow(name));
    if (std::find(selected.begin(), selected.end(), flow) == selected.end()) {
      return Status::Error(errors::kInvalidPipeline,
                           "--full-refresh names flow '" + name + "', which is not among the flows to run");
    }
    refreshed.push_back(flow);
  }

  run->event_log_path_ = EventLog::PathFor(pipeline.storage);
  SLUICE_ASSIGN_OR_RETURN(run->events_, EventLog::Open(run->event_log_path_, run->options_.clock));
  Status prepared = run->Prepare(selected, refreshed, feeds);
  if (!prepared.ok()) {
    run->Log("ERROR", nullptr, "error", prepared.ToString(),
             "{\"error\":{\"class\":" + JsonString(prepared.error_class()) + "}}");
    return prepared;
  }
  for (auto& feed : run->feeds_) {
    Feed* raw = feed.get();
    run->threads_.emplace_back([run = run.get(), raw] { run->RunFeed(raw); });
  }
  for (auto& flow : run->flows_) {
    Flow* raw = flow.get();
    run->threads_.emplace_back([run = run.get(), raw] { run->RunFlow(raw); });
  }
  return run;
}

Status PipelineRun::Prepare(const std::vector<const FlowSpec*>& selected, const std::vector<const FlowSpec*>& refreshed,
                            const std::vector<const ChangeFeedSpec*>& feeds) {
  // A refreshed table is rebuilt from every flow that writes it.
  std::set<std::string> tables;
  for (const FlowSpec* flow : refreshed) {
    if (std::string table = SinkTablePath(spec_, *flow); !table.empty()) tables.insert(table);
  }
  std::vector<const FlowSpec*> reset = refreshed;
  for (const FlowSpec& flow : all_flows_) {
    if (tables.count(SinkTablePath(spec_, flow)) && std::find(reset.begin(), reset.end(), &flow) == reset.end()) {
      reset.push_back(&flow);
    }
  }
  auto log_step = [this](const std::string& message, const std::string& details) {
    Log("WARN", nullptr, "warning", message, details);
  };
  // A refresh a crash cut short is finished first, whatever this run was asked to do.
  SLUICE_ASSIGN_OR_RETURN(std::optional<FullRefreshPlan> pending, PendingFullRefresh(*options_.file_system, spec_.storage));
  if (pending) {
    Log("WARN", nullptr, "warning", "an interrupted full refresh is finished before the run starts");
    SLUICE_RETURN_IF_ERROR(FinishFullRefresh(options_.file_system, spec_.storage, *pending, log_step));
  }
  if (!reset.empty()) {
    FullRefreshPlan plan;
    std::set<std::string> ingestion_tables;
    for (const FlowSpec* flow : reset) {
      SLUICE_RETURN_IF_ERROR(CheckCheckpointOwner(*options_.file_system, spec_.storage, flow->name,
                                                  spec_.CheckpointOf(*flow), spec_.DefaultCheckpointOf(*flow),
                                                  /*to_delete=*/true)
                                 .WithContext("full refresh of flow '" + flow->name + "'"));
      plan.checkpoints.emplace(flow->name, spec_.CheckpointOf(*flow));
      if (StreamOf(spec_, *flow) != nullptr) ingestion_tables.insert(SinkTablePath(spec_, *flow));
    }
    // An ingestion table's txns say which offsets it holds, and a truncation keeps them; so a
    // refreshed stream starts from a new table.
    for (const std::string& table : tables) {
      (ingestion_tables.count(table) ? plan.deleted_tables : plan.truncated_tables).push_back(table);
    }
    SLUICE_RETURN_IF_ERROR(RunFullRefresh(options_.file_system, spec_.storage, plan, log_step));
  }
  // The feeds first: their initial copies make the history tables the flows may read.
  for (const ChangeFeedSpec* feed : feeds) SLUICE_RETURN_IF_ERROR(StartFeed(*feed));
  selected_ = selected;
  for (const FlowSpec* flow : selected) SLUICE_RETURN_IF_ERROR(StartFlow(*flow));
  return Status::OK();
}

std::optional<std::pair<std::string, std::string>> PipelineRun::AwaitedTable(const FlowSpec& spec) const {
  const std::string path = DeltaPath(spec_, spec.source);
  if (path.empty()) return std::nullopt;
  // The first commit, not the log directory, which exists a moment before it.
  Result<bool> first_commit = options_.file_system->Exists(path + "/_delta_log/00000000000000000000.json");
  if (!first_commit.ok()) return std::nullopt;
  const bool exists = *first_commit;
  for (const auto& feed : feeds_) {
    if (!exists && IsChangeFeedHistoryTable(feed->config.target_directory(), path)) {
      return std::pair{path, std::string("which its change feed makes with the first row")};
    }
  }
  auto terminates = [](const FlowSpec& flow) { return flow.trigger == "once" || flow.trigger == "available_now"; };
  std::lock_guard lock(mutex_);
  for (const FlowSpec* writer : selected_) {
    if (writer == &spec || SinkTablePath(spec_, *writer) != path) continue;
    auto running = std::find_if(flows_.begin(), flows_.end(), [&](const auto& f) { return f->spec == writer; });
    const std::string state = running == flows_.end() ? "STARTING" : (*running)->figures.state;
    if (state == "COMPLETED" || state == "FAILED" || state == "STOPPED") continue;
    if (!exists) return std::pair{path, "which flow '" + writer->name + "' of this run writes"};
    // A run of flows that end (available_now, once) goes in the order of their tables, as a
    // triggered update of a declarative pipeline does: a reader starts once its writers are done.
    if (terminates(spec) && terminates(*writer)) {
      return std::pair{path, "until flow '" + writer->name + "' of this run, which writes it, is done"};
    }
  }
  return std::nullopt;
}

Status PipelineRun::StartFlow(const FlowSpec& spec) {
  auto flow = std::make_unique<Flow>();
  flow->spec = &spec;
  flow->figures.name = spec.name;
  flow->figures.sink = spec.sink;
  flow->figures.state = "STARTING";
  if (auto awaited = AwaitedTable(spec)) {
    flow->figures.state = "WAITING";
    Log("INFO", flow.get(), "flow_progress",
        "flow '" + spec.name + "' is WAITING for " + awaited->first + ", " + awaited->second,
        "{\"flow_progress\":{\"status\":\"WAITING\",\"table\":" + JsonString(awaited->first) + "}}");
  } else {
    SLUICE_RETURN_IF_ERROR(OpenFlow(flow.get()));
  }
  flows_.push_back(std::move(flow));
  return Status::OK();
}

Status PipelineRun::OpenFlow(Flow* flow) {
  const FlowSpec& spec = *flow->spec;
  const std::string context = "flow '" + spec.name + "'";
  const engine::Registry& registry = *options_.registry;
  const StreamSpec* stream = StreamOf(spec_, spec);

  SLUICE_ASSIGN_OR_RETURN(auto source_options, spec_.ResolvedOptions(spec.source));
  for (const auto& [key, value] : flow->source_overrides) source_options[key] = value;
  if (stream != nullptr && stream->workers_group) {
    return OpenGroupStream(flow, *stream, std::move(source_options)).WithContext(context);
  }
  std::string sink_format_name, sink_options_json = "{}";
  Result<std::unique_ptr<engine::Sink>> sink = Status::OK();
  std::unique_ptr<StreamDecodeOperator> stream_decode;
  if (stream != nullptr) {
    SLUICE_ASSIGN_OR_RETURN(IngestionSpec ingestion, IngestionSpecOf(spec_, *stream));
    SLUICE_ASSIGN_OR_RETURN(std::optional<std::string> resume,
                            connectors::ResumeOffsets(options_.file_system, ingestion.table_path, stream->name));
    if (resume) source_options["starting_offsets"] = *resume;
    sink_format_name = "ingestion";
    sink_options_json = "{\"table\":" + JsonString(stream->table) + "}";
    flow->figures.sink = stream->table;
    Result<std::unique_ptr<StreamDecodeOperator>> decode = StreamDecodeOperator::Make(ingestion);
    if (decode.ok()) {
      stream_decode = std::move(decode).value();
      flow->decode = stream_decode.get();
      auto made = std::make_unique<IngestionSink>(std::move(ingestion), options_.file_system);
      flow->ingestion = made.get();
      sink = Result<std::unique_ptr<engine::Sink>>(std::move(made));
    } else {
      sink = decode.status();
    }
  } else {
    const Endpoint& sink_endpoint = spec_.sinks.at(spec.sink);
    SLUICE_ASSIGN_OR_RETURN(auto sink_options, spec_.ResolvedOptions(sink_endpoint));
    const engine::SinkFormat* sink_format = registry.FindSinkFormat(sink_endpoint.format);
    AddCheckpointLocation(sink_format->options, spec_.CheckpointOf(spec), &sink_options);
    AddUpsertKey(sink_format->options, spec, &sink_options);
    sink_format_name = sink_format->name;
    sink_options_json = RedactedOptionsJson(sink_options, sink_format->options);
    sink = registry.MakeSink(sink_endpoint.format, sink_options);
  }
  if (!sink.ok()) return sink.status().WithContext(context + " sink '" + flow->figures.sink + "'");
  // A SQL flow's bare FROM reads the table as a batch job does: its snapshot whole, once (the
  // checkpoint then records it read; a full refresh reads it again).
  Result<std::unique_ptr<engine::Source>> source =
      spec.reads_whole ? MakeBatchSource(registry, spec.source.format, source_options)
                       : registry.MakeSource(spec.source.format, source_options);
  if (!source.ok()) return source.status().WithContext(context + " source");
  engine::QueryConfig config;
  config.name = spec.name;
  config.checkpoint_location = spec_.CheckpointOf(spec);
  SLUICE_ASSIGN_OR_RETURN(config.trigger, engine::ParseTrigger(spec.trigger, spec.trigger_interval));
  SLUICE_ASSIGN_OR_RETURN(config.output_mode, engine::ParseOutputMode(spec.output_mode));
  SLUICE_ASSIGN_OR_RETURN(FlowOperators operators, MakeFlowOperators(spec, spec_.sql, config.output_mode));
  auto event_time = std::make_unique<EventTimeOperator>();
  flow->event_time = event_time.get();
  flow->expectations = operators.expectations;
  config.operators.push_back(std::move(event_time));
  if (stream_decode != nullptr) config.operators.push_back(std::move(stream_decode));
  for (auto& op : operators.operators) config.operators.push_back(std::move(op));

  config.file_system = options_.file_system;
  config.clock = options_.clock;
  config.state_store = spec_.state_store;
  Flow* raw = flow;
  config.on_progress = [this, raw](const engine::QueryProgress& progress) { OnProgress(raw, progress); };

  // A sink that several flows write is defined once.
  bool first_of_sink;
  {
    std::lock_guard lock(mutex_);
    first_of_sink = defined_sinks_.insert(flow->figures.sink).second;
  }
  if (first_of_sink) {
    Log("INFO", raw, "sink_definition", "sink '" + flow->figures.sink + "' of format " + sink_format_name,
        "{\"sink_definition\":{\"name\":" + JsonString(flow->figures.sink) + ",\"format\":" +
            JsonString(sink_format_name) + ",\"options\":" + sink_options_json + "}}");
  }
  std::string expectations = "[";
  for (const Expectation& expectation : spec.expectations) {
    if (expectations.size() > 1) expectations += ',';
    expectations += "{\"name\":" + JsonString(expectation.name) + ",\"action\":" +
                    JsonString(ActionName(expectation.action)) + ",\"condition\":" + JsonString(expectation.condition) +
                    "}";
  }
  std::string select = "[";
  for (const std::string& item : spec.select) select += (select.size() > 1 ? "," : "") + JsonString(item);
  Log("INFO", raw, "flow_definition",
      "flow '" + spec.name + "' reads " + spec.source.format + " and writes '" + flow->figures.sink + "'",
      "{\"flow_definition\":{\"output_dataset\":" + JsonString(flow->figures.sink) + ",\"source_format\":" +
          JsonString(spec.source.format) + ",\"where\":" + (spec.where ? JsonString(*spec.where) : "null") +
          ",\"select\":" + select + "],\"expectations\":" + expectations + "],\"trigger\":" +
          JsonString(engine::TriggerName(config.trigger.kind)) + ",\"output_mode\":" +
          JsonString(engine::OutputModeName(config.output_mode)) + ",\"checkpoint\":" +
          JsonString(config.checkpoint_location) + "}}");

  SLUICE_RETURN_IF_ERROR(CheckCheckpointOwner(*options_.file_system, spec_.storage, spec.name,
                                              config.checkpoint_location, spec_.DefaultCheckpointOf(spec),
                                              /*to_delete=*/false)
                             .WithContext(context));
  // A checkpoint this start creates gets a query id recorded as the flow's first: a run killed
  // between creating the checkpoint and recording its query would otherwise leave a checkpoint no
  // later run accepts as its flow's.
  SLUICE_ASSIGN_OR_RETURN(std::optional<std::string> held,
                          engine::CheckpointQueryId(*options_.file_system, config.checkpoint_location));
  if (!held) {
    config.new_query_id = engine::NewUuid();
    SLUICE_RETURN_IF_ERROR(
        RecordFlowQuery(*options_.file_system, spec_.storage, spec.name, config.new_query_id).WithContext(context));
  }
  Result<std::unique_ptr<engine::StreamingQuery>> query =
      engine::StreamingQuery::Start(std::move(source).value(), std::move(sink).value(), std::move(config));
  if (!query.ok()) return query.status().WithContext(context);
  const std::string query_id = (*query)->id();
  SLUICE_RETURN_IF_ERROR(RecordFlowQuery(*options_.file_system, spec_.storage, spec.name, query_id).WithContext(context));
  {
    std::lock_guard lock(mutex_);
    flow->query = std::move(query).value();
    flow->figures.state = "RUNNING";
    // Stop() may have come while the query was being made.
    if (stop_requested_) flow->query->Stop();
  }
  Log("INFO", raw, "flow_progress", "flow '" + spec.name + "' is RUNNING",
      "{\"flow_progress\":{\"status\":\"RUNNING\",\"query_id\":" + JsonString(query_id) + "}}");
  return Status::OK();
}

Status PipelineRun::OpenGroupStream(Flow* flow, const StreamSpec& stream,
                                    std::map<std::string, std::string> source_options) {
  SLUICE_ASSIGN_OR_RETURN(IngestionSpec ingestion, IngestionSpecOf(spec_, stream));
  auto sink = std::make_unique<IngestionSink>(ingestion, options_.file_system);
  flow->ingestion = sink.get();
  flow->figures.sink = stream.table;
  SLUICE_ASSIGN_OR_RETURN(engine::Trigger trigger, engine::ParseTrigger(stream.trigger, stream.trigger_interval));
  GroupIngestionConfig config;
  config.group_id = stream.WorkersGroupId();
  config.instance_id = options_.instance_id;
  config.trigger_interval = std::chrono::duration_cast<std::chrono::milliseconds>(trigger.interval);
  config.on_progress = [this, flow](const engine::QueryProgress& progress) { OnProgress(flow, progress); };
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<GroupIngestion> group,
                          GroupIngestion::Make(std::move(ingestion), std::move(source_options), std::move(sink),
                                               options_.file_system, std::move(config)));
  flow->decode = &group->decode();
  {
    std::lock_guard lock(mutex_);
    flow->group = std::move(group);
    flow->figures.state = "RUNNING";
    if (stop_requested_) flow->group->Stop();
  }
  Log("INFO", flow, "flow_progress",
      "stream '" + stream.name + "' is RUNNING as a member of workers group " + stream.WorkersGroupId() +
          (options_.instance_id.empty() ? "" : " (instance " + options_.instance_id + ")"),
      "{\"flow_progress\":{\"status\":\"RUNNING\",\"workers_group\":" + JsonString(stream.WorkersGroupId()) +
          "}}");
  return Status::OK();
}

void PipelineRun::FailFlow(Flow* flow, const Status& status) {
  {
    std::lock_guard lock(mutex_);
    flow->figures.state = "FAILED";
    ++flow->figures.errors;
    flow->figures.error = status.ToString();
    if (first_failure_.ok()) first_failure_ = status.WithContext("flow '" + flow->spec->name + "'");
  }
  Log("ERROR", flow, "error", status.ToString(),
      "{\"error\":{\"class\":" + JsonString(status.error_class()) + ",\"message\":" + JsonString(status.message()) +
          "}}");
  Stop();
  Log("ERROR", flow, "flow_progress", "flow '" + flow->spec->name + "' is FAILED",
      "{\"flow_progress\":{\"status\":\"FAILED\"}}");
}

void PipelineRun::RunFlow(Flow* flow) {
  bool open;
  {
    std::lock_guard lock(mutex_);
    open = flow->query != nullptr || flow->group != nullptr;
  }
  if (!open) {
    const auto poll = std::chrono::milliseconds(100);
    while (!stop_requested_ && AwaitedTable(*flow->spec)) std::this_thread::sleep_for(poll);
    if (stop_requested_) {
      {
        std::lock_guard lock(mutex_);
        flow->figures.state = "STOPPED";
      }
      Log("INFO", flow, "flow_progress", "flow '" + flow->spec->name + "' is STOPPED",
          "{\"flow_progress\":{\"status\":\"STOPPED\"}}");
      return;
    }
    if (Status opened = OpenFlow(flow); !opened.ok()) return FailFlow(flow, opened);
  }
  LogBackfill(flow);  // a merge that was due when the sink opened
  Status status = flow->group != nullptr ? flow->group->Run() : flow->query->Run();
  while (!status.ok() && status.error_class() == errors::kDeltaSourceDataDeleted && ResetsOnSourceReset(*flow->spec) &&
         !stop_requested_) {
    if (Status reset = StartOver(flow, status); !reset.ok()) return FailFlow(flow, reset);
    status = flow->query->Run();
  }
  if (!status.ok()) return FailFlow(flow, status);
  std::string state;
  {
    std::lock_guard lock(mutex_);
    state = stop_requested_ ? "STOPPED" : "COMPLETED";
    flow->figures.state = state;
  }
  Log("INFO", flow, "flow_progress", "flow '" + flow->spec->name + "' is " + state,
      "{\"flow_progress\":{\"status\":" + JsonString(state) + "}}");
}

bool PipelineRun::ResetsOnSourceReset(const FlowSpec& spec) const {
  if (!spec.on_source_reset.empty()) return spec.on_source_reset == "reset";
  const std::string table = DeltaPath(spec_, spec.source);
  if (table.empty()) return false;
  // A change feed's history table: named so, beside the feed's state folder.
  const std::string target = table.substr(0, table.rfind('/'));
  Result<bool> feeds = options_.file_system->Exists(target + "/_change_feeds");
  return feeds.ok() && *feeds && IsChangeFeedHistoryTable(target, table);
}

Status PipelineRun::StartOver(Flow* flow, const Status& cause) {
  const FlowSpec& spec = *flow->spec;
  const std::string source = DeltaPath(spec_, spec.source), table = SinkTablePath(spec_, spec);
  if (!table.empty()) {
    for (const FlowSpec& other : all_flows_) {
      if (&other != &spec && SinkTablePath(spec_, other) == table) {
        return cause.WithContext("flow '" + spec.name + "' cannot start over on its own: flow '" + other.name +
                                 "' writes its table " + table + " too (run again with --full-refresh " + spec.name +
                                 ")");
      }
    }
  }
  // It reads the table again from the commit that rewrote it, which holds its whole new content.
  SLUICE_ASSIGN_OR_RETURN(std::optional<int64_t> rewrite, delta::LastWholeRewrite(options_.file_system, source));
  if (!rewrite) {
    return cause.WithContext("flow '" + spec.name + "' cannot start over: the latest commit of " + source +
                             " that removes data rewrote only part of it (run again with --full-refresh " +
                             spec.name + ")");
  }
  flow->source_overrides["startingVersion"] = std::to_string(*rewrite);
  Log("WARN", flow, "warning",
      "flow '" + spec.name + "': its source " + source + " was rewritten (" + std::string(cause.message()) +
          "); the flow starts over from version " + std::to_string(*rewrite) + ": its checkpoint is deleted" +
          (table.empty() ? "" : " and " + table + " truncated"),
      "{\"source_reset\":{\"source\":" + JsonString(source) + ",\"from_version\":" + std::to_string(*rewrite) +
          ",\"cause\":" + JsonString(cause.message()) +
          ",\"truncated\":" + (table.empty() ? "null" : JsonString(table)) + "}}");
  {
    std::lock_guard lock(mutex_);
    flow->query.reset();  // releases the checkpoint's lock
    flow->figures.state = "STARTING";
  }
  SLUICE_RETURN_IF_ERROR(CheckCheckpointOwner(*options_.file_system, spec_.storage, spec.name,
                                              spec_.CheckpointOf(spec), spec_.DefaultCheckpointOf(spec),
                                              /*to_delete=*/true)
                             .WithContext("flow '" + spec.name + "' cannot start over"));
  FullRefreshPlan plan;
  plan.checkpoints.emplace(spec.name, spec_.CheckpointOf(spec));
  if (!table.empty()) plan.truncated_tables.push_back(table);
  auto log_step = [this, flow](const std::string& message, const std::string& details) {
    Log("WARN", flow, "warning", message, details);
  };
  SLUICE_RETURN_IF_ERROR(RunFullRefresh(options_.file_system, spec_.storage, plan, log_step));
  return OpenFlow(flow);
}

Status PipelineRun::StartFeed(const ChangeFeedSpec& spec) {
  auto feed = std::make_unique<Feed>();
  feed->spec = &spec;
  const std::string context = "change feed '" + spec.name + "'";
  Result<connectors::ChangeFeedConfig> config = spec_.ChangeFeedConfigOf(spec);
  if (!config.ok()) return config.status().WithContext(context);
  feed->config = std::move(config).value();
  feed->figures.name = spec.name;
  feed->figures.target = feed->config.target_catalog + "." + feed->config.target_schema;
  Result<std::unique_ptr<connectors::PgChangeFeed>> started = connectors::PgChangeFeed::Start(feed->config);
  if (!started.ok()) return started.status().WithContext(context);
  feed->feed = std::move(started).value();
  feed->progress = feed->feed->progress();
  feed->figures.state = "RUNNING";

  std::string tables = "[", listed;
  std::vector<ChangeFeedTableStatus> key_only;
  if (Result<std::string> json = connectors::ChangeFeedStatus(feed->config); json.ok()) {
    if (Result<ChangeFeedStatusView> view = ParseChangeFeedStatus(*json); view.ok()) {
      for (const ChangeFeedTableStatus& table : view->tables) {
        if (tables.size() > 1) tables += ',';
        tables += "{\"source\":" + JsonString(table.source) + ",\"history\":" + JsonString(table.history) +
                  ",\"status\":" + JsonString(table.status) + ",\"replica_identity_full\":" +
                  (table.replica_identity_full ? "true" : "false") + ",\"rows\":" + std::to_string(table.rows) + "}";
        listed += (listed.empty() ? "" : ", ") + table.source + " " + table.status;
        // A table skipped for being empty has no identity recorded yet; it is judged once it has rows.
        if (!table.replica_identity_full && table.status != "SKIPPED") key_only.push_back(table);
      }
    }
  }
  LogFeed("INFO", feed.get(), "flow_progress",
          context + " is RUNNING: " + feed->config.schema + " -> " + feed->figures.target +
              (listed.empty() ? " (no tables with rows yet)" : " (" + listed + ")"),
          "{\"flow_progress\":{\"status\":\"RUNNING\"},\"change_feed\":{\"slot_name\":" +
              JsonString(feed->config.slot_name) + ",\"schema\":" + JsonString(feed->config.schema) +
              ",\"target\":" + JsonString(feed->figures.target) + ",\"tables\":" + tables + "]}}");
  for (const ChangeFeedTableStatus& table : key_only) {
    LogFeed("WARN", feed.get(), "warning",
            context + ": table " + table.source + " has no REPLICA IDENTITY FULL, so its updates and deletes " +
                "carry only the key (sluice cdf set-replica-identity)",
            "{\"change_feed\":{\"table\":" + JsonString(table.source) + ",\"replica_identity_full\":false}}");
  }
  feeds_.push_back(std::move(feed));
  return Status::OK();
}

void PipelineRun::RunFeed(Feed* feed) {
  Status status = feed->feed->Run(feed->stop);
  // Releases the feed's lock at once, so that the feed can start again before this run ends.
  feed->feed.reset();
  const std::string context = "change feed '" + feed->spec->name + "'";
  const std::string state = status.ok() ? "STOPPED" : "FAILED";
  {
    std::lock_guard lock(mutex_);
    feed->figures.state = state;
    if (!status.ok()) {
      feed->figures.error = status.ToString();
      if (first_failure_.ok()) first_failure_ = status.WithContext(context);
    }
  }
  if (!status.ok()) {
    LogFeed("ERROR", feed, "error", context + " failed: " + status.ToString(),
            "{\"error\":{\"class\":" + JsonString(status.error_class()) + ",\"message\":" +
                JsonString(status.message()) + "}}");
    Stop();
  }
  LogFeed(status.ok() ? "INFO" : "ERROR", feed, "flow_progress", context + " is " + state,
          "{\"flow_progress\":{\"status\":" + JsonString(state) + "}}");
}

void PipelineRun::LogBackfill(Flow* flow) {
  if (flow->ingestion == nullptr) return;
  std::optional<int64_t> inserted = flow->ingestion->TakeBackfillMerge();
  if (!inserted) return;
  Log("INFO", flow, "backfill",
      "stream '" + flow->spec->name + "': its backfill is merged into the ingestion table, " +
          std::to_string(*inserted) + " row(s) inserted",
      "{\"backfill\":{\"inserted_rows\":" + std::to_string(*inserted) + "}}");
}

void PipelineRun::OnProgress(Flow* flow, const engine::QueryProgress& progress) {
  // What reached the sink: a stream's record_type_filter drops records in its decoding.
  const int64_t output_rows = progress.sink.num_output_rows;
  static const std::vector<ExpectationCounts> kNoCounts;
  const std::vector<ExpectationCounts>& counts = flow->expectations != nullptr ? flow->expectations->counts() : kNoCounts;
  {
    std::lock_guard lock(mutex_);
    FlowFigures& figures = flow->figures;
    ++figures.batches;
    figures.input_rows += progress.num_input_rows;
    figures.output_rows += output_rows;
    figures.last_batch_id = progress.batch_id;
    figures.last_batch_duration_ms = progress.duration_ms.trigger_execution;
    // The first batch has no previous trigger to measure its input rate against: its own
    // processing rate stands in.
    figures.input_rows_per_second = progress.input_rows_per_second > 0 ? progress.input_rows_per_second
                                                                       : progress.processed_rows_per_second;
    figures.last_batch_micros = options_.clock->NowMicros();
    figures.records_behind = RecordsBehind(progress);
    if (std::optional<int64_t> newest = flow->event_time != nullptr ? flow->event_time->newest_micros() : std::nullopt) {
      figures.event_time_lag_seconds = static_cast<double>(options_.clock->NowMicros() - *newest) / 1e6;
    }
  }
  std::string quality;
  if (!counts.empty()) {
    int64_t dropped = 0;
    std::string list = "[";
    for (const ExpectationCounts& count : counts) {
      dropped += count.dropped;
      if (list.size() > 1) list += ',';
      list += "{\"name\":" + JsonString(count.name) + ",\"dataset\":" + JsonString(flow->figures.sink) +
              ",\"action\":" + JsonString(ActionName(count.action)) + ",\"passed_records\":" +
              std::to_string(count.passed) + ",\"failed_records\":" + std::to_string(count.failed) +
              ",\"dropped_records\":" + std::to_string(count.dropped) + "}";
    }
    quality = "{\"batch_id\":" + std::to_string(progress.batch_id) + ",\"dropped_records\":" +
              std::to_string(dropped) + ",\"expectations\":" + list + "]}";
  }
  std::string ingestion;
  if (flow->decode != nullptr) {
    const IngestionStats& stats = flow->decode->last_stats();
    std::string samples = "[";
    for (const std::string& sample : stats.malformed_samples) samples += (samples.size() > 1 ? "," : "") + JsonString(sample);
    ingestion = "{\"records\":" + std::to_string(stats.records) + ",\"filtered_out\":" +
                std::to_string(stats.filtered_out) + ",\"malformed_keys\":" + std::to_string(stats.malformed_keys) +
                ",\"malformed_values\":" + std::to_string(stats.malformed_values) + ",\"mismatched_fields\":" +
                std::to_string(stats.mismatched_fields) + ",\"malformed_samples\":" +
                samples + "]}";
    if (stats.malformed_keys + stats.malformed_values + stats.mismatched_fields > 0) {
      std::vector<std::string> what;
      if (stats.malformed_keys + stats.malformed_values > 0) {
        what.push_back(std::to_string(stats.malformed_keys + stats.malformed_values) +
                       " undecodable key(s)/value(s) ingested as null");
      }
      if (stats.mismatched_fields > 0) {
        what.push_back(std::to_string(stats.mismatched_fields) + " field(s) of another type than the schema's ingested as null");
      }
      Log("WARN", flow, "warning",
          "stream '" + flow->spec->name + "' batch " + std::to_string(progress.batch_id) + ": " + what[0] +
              (what.size() > 1 ? ", " + what[1] : ""),
          "{\"ingestion\":" + ingestion + "}");
    }
  }
  Log("METRICS", flow, "flow_progress",
      "flow '" + flow->spec->name + "' batch " + std::to_string(progress.batch_id) + ": " +
          std::to_string(progress.num_input_rows) + " rows in, " + std::to_string(output_rows) + " rows out",
      "{\"flow_progress\":{\"status\":\"RUNNING\",\"batch_id\":" + std::to_string(progress.batch_id) +
          ",\"metrics\":{\"num_input_rows\":" + std::to_string(progress.num_input_rows) +
          ",\"num_output_rows\":" + std::to_string(output_rows) + "}" +
          (quality.empty() ? "" : ",\"data_quality\":" + quality) +
          (ingestion.empty() ? "" : ",\"ingestion\":" + ingestion) + ",\"progress\":" + progress.ToJson() + "}}");
  LogBackfill(flow);
  if (!quality.empty()) {
    Log("INFO", flow, "data_quality", "expectations of flow '" + flow->spec->name + "' on batch " +
                                          std::to_string(progress.batch_id),
        "{\"data_quality\":" + quality + "}");
  }
}

void PipelineRun::LogFeed(const std::string& level, const Feed* feed, const std::string& type,
                          const std::string& message, const std::string& details) {
  Event event;
  event.level = level;
  event.origin = {spec_.name, feed->figures.name, feed->figures.target};
  event.event_type = type;
  event.message = message;
  event.details = details;
  (void)events_->Append(event);
}

void PipelineRun::Log(const std::string& level, const Flow* flow, const std::string& type, const std::string& message,
                      const std::string& details) {
  Event event;
  event.level = level;
  event.origin.pipeline = spec_.name;
  if (flow != nullptr) {
    event.origin.flow = flow->spec->name;
    event.origin.dataset = flow->figures.sink;
  }
  event.event_type = type;
  event.message = message;
  event.details = details;
  // The log is for people; a failing disk shows up in the flows' own writes.
  (void)events_->Append(event);
  // Warnings reach the terminal too (failures are the run's result, printed by its caller).
  if (level == "WARN") LogWarn("{}", message);
}

Status PipelineRun::Wait() {
  for (std::thread& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
  std::lock_guard lock(mutex_);
  return first_failure_;
}

void PipelineRun::Stop() {
  stop_requested_ = true;
  for (auto& feed : feeds_) feed->stop = true;
  std::lock_guard lock(mutex_);
  for (auto& flow : flows_) {
    if (flow->query != nullptr) flow->query->Stop();
    if (flow->group != nullptr) flow->group->Stop();
  }
}

PipelineRun::~PipelineRun() {
  Stop();
  for (std::thread& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
}

std::vector<ChangeFeedFigures> PipelineRun::change_feeds() const {
  std::lock_guard lock(mutex_);
  std::vector<ChangeFeedFigures> figures;
  for (const auto& feed : feeds_) {
    figures.push_back(feed->figures);
    if (feed->progress != nullptr) {
      figures.back().history_rows = feed->progress->history_rows.load();
      figures.back().slot_lag_bytes = feed->progress->slot_lag_bytes.load();
    }
  }
  return figures;
}

std::vector<FlowFigures> PipelineRun::flows() const {
  std::lock_guard lock(mutex_);
  std::vector<FlowFigures> figures;
  for (const auto& flow : flows_) figures.push_back(flow->figures);
  return figures;
}

bool PipelineRun::ready() const {
  std::lock_guard lock(mutex_);
  for (const auto& flow : flows_) {
    if (flow->figures.state == "STARTING" || flow->figures.state == "FAILED") return false;
  }
  for (const auto& feed : feeds_) {
    if (feed->figures.state == "FAILED") return false;
  }
  return true;
}

std::string PipelineRun::PrometheusText() const {
  struct Metric {
    const char* name;
    const char* type;
    const char* help;
    double (*value)(const FlowFigures&);
  };
  static constexpr Metric kMetrics[] = {
      {"sluice_flow_input_rows_total", "counter", "Rows the flow read from its source in this run.",
       [](const FlowFigures& f) { return static_cast<double>(f.input_rows); }},
      {"sluice_flow_output_rows_total", "counter", "Rows the flow wrote to its sink in this run.",
       [](const FlowFigures& f) { return static_cast<double>(f.output_rows); }},
      {"sluice_flow_batches_total", "counter", "Batches the flow committed in this run.",
       [](const FlowFigures& f) { return static_cast<double>(f.batches); }},
      {"sluice_flow_last_batch_duration_seconds", "gauge", "Duration of the flow's last batch.",
       [](const FlowFigures& f) { return static_cast<double>(f.last_batch_duration_ms) / 1000.0; }},
      {"sluice_flow_last_committed_batch", "gauge", "Id of the flow's last committed batch (-1: none in this run).",
       [](const FlowFigures& f) { return static_cast<double>(f.last_batch_id); }},
      {"sluice_flow_errors_total", "counter", "Failures of the flow in this run.",
       [](const FlowFigures& f) { return static_cast<double>(f.errors); }},
      {"sluice_flow_event_time_lag_seconds", "gauge",
       "Now minus the newest source `timestamp` written, at the last batch (NaN: the source has none).",
       [](const FlowFigures& f) { return f.event_time_lag_seconds.value_or(std::nan("")); }},
      {"sluice_flow_records_behind", "gauge",
       "Records of a Kafka source beyond the flow's last batch, at that batch (NaN: not a Kafka source).",
       [](const FlowFigures& f) { return f.records_behind ? static_cast<double>(*f.records_behind) : std::nan(""); }},
      {"sluice_flow_up", "gauge", "1 while the flow runs or has completed, 0 when it failed or stopped.",
       [](const FlowFigures& f) { return f.state == "RUNNING" || f.state == "COMPLETED" ? 1.0 : 0.0; }},
  };
  std::vector<FlowFigures> figures = flows();
  std::string text;
  for (const Metric& metric : kMetrics) {
    text += std::string("# HELP ") + metric.name + " " + metric.help + "\n# TYPE " + metric.name + " " + metric.type +
            "\n";
    for (const FlowFigures& flow : figures) {
      text += std::string(metric.name) + "{pipeline=\"" + PrometheusLabelValue(spec_.name) + "\",flow=\"" + PrometheusLabelValue(flow.name) +
              "\"} " + (std::isnan(metric.value(flow)) ? "NaN" : JsonDouble(metric.value(flow))) + "\n";
    }
  }
  std::vector<ChangeFeedSample> samples;
  for (const ChangeFeedFigures& feed : change_feeds()) {
    ChangeFeedSample& sample = samples.emplace_back();
    sample.feed = feed.name;
    sample.up = feed.state == "RUNNING";
  }
  // Feeds are only added before the run's threads start, so feeds_ is stable here.
  for (size_t i = 0; i < samples.size(); ++i) {
    Result<std::string> json = connectors::ChangeFeedStatus(feeds_[i]->config);
    if (!json.ok()) continue;
    Result<ChangeFeedStatusView> view = ParseChangeFeedStatus(*json);
    if (view.ok()) samples[i].status = std::move(view).value();
  }
  return text + ChangeFeedPrometheusText(spec_.name, samples);
}

}  // namespace sluice::pipeline
