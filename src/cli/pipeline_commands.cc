// `sluice run`, `sluice validate` and `sluice status`: the commands of a pipeline file.
#include <CLI/CLI.hpp>
#include <simdjson.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/row_printer.h"
#include "cli/warehouse.h"
#include "sluice/core/json_text.h"
#include "sluice/engine/plugin.h"
#include "cli/termination_signals.h"
#include "sluice/connectors/register_formats.h"
#include "sluice/connectors/pg_change_feed.h"
#include "sluice/core/error_classes.h"
#include "sluice/pipeline/catalog_server.h"
#include "sluice/pipeline/change_feed_status.h"
#include "sluice/pipeline/event_log.h"
#include "sluice/pipeline/metrics_server.h"
#include "sluice/pipeline/pipeline_runner.h"
#include "sluice/storage/file_systems.h"

namespace sluice::cli {

engine::Registry& CommandRegistry() {
  static std::once_flag once;
  std::call_once(once, [] {
    Status registered = RegisterDemoFunctions(&connectors::AllFormatsRegistry());
    if (!registered.ok()) std::fprintf(stderr, "%s\n", registered.ToString().c_str());
  });
  return connectors::AllFormatsRegistry();
}

Result<pipeline::PipelineSpec> LoadPipelineFile(const std::string& path, Status* shape) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Error(errors::kFileNotFound, "cannot read the pipeline file " + path);
  std::stringstream text;
  text << in.rdbuf();
  Result<pipeline::PipelineSpec> spec = shape != nullptr ? pipeline::ParsePipelineSpecKeepingGoing(text.str(), shape)
                                                         : pipeline::ParsePipelineSpec(text.str());
  if (!spec.ok()) return spec.status().WithContext(path);
  pipeline::PlaceBesideFile(path, &*spec);
  Status stores = pipeline::ConfigureObjectStores(*spec);
  if (!stores.ok()) return stores.WithContext(path);
  // A format `plugin:/path/libx.so` is known once its library is loaded.
  std::vector<std::string> formats;
  for (const pipeline::FlowSpec& flow : spec->flows) formats.push_back(flow.source.format);
  for (const auto& [name, sink] : spec->sinks) formats.push_back(sink.format);
  for (const std::string& format : formats) {
    Status loaded = engine::LoadPlugin(&CommandRegistry(), format);
    if (!loaded.ok()) return loaded.WithContext(path);
  }
  return spec;
}

namespace {

[[noreturn]] void Fail(const Status& status, int exit_code) {
  std::fprintf(stderr, "%s\n", status.ToString().c_str());
  throw CLI::RuntimeError(exit_code);
}

struct RunArguments {
  std::string file;
  std::vector<std::string> flows;
  std::vector<std::string> full_refresh;
  bool full_refresh_all = false;
  int metrics_port = -1;
  std::string metrics_address = "127.0.0.1";
  std::string instance_id;
};

// "512 B", "1.5 KiB", "12.0 MiB", "3.2 GiB".
std::string HumanBytes(int64_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  double value = static_cast<double>(bytes) / 1024;
  for (const char* unit : {"KiB", "MiB", "GiB"}) {
    if (value < 1024 || std::string_view(unit) == "GiB") return fmt::format("{:.1f} {}", value, unit);
    value /= 1024;
  }
  return "";
}

// `now_micros` on the run's clock.
std::string ProgressLine(const std::vector<pipeline::FlowFigures>& flows,
                         const std::vector<pipeline::ChangeFeedFigures>& feeds, int64_t now_micros) {
  std::string line;
  for (const pipeline::ChangeFeedFigures& feed : feeds) {
    line += fmt::format("{}feed {}: {} history rows", line.empty() ? "" : " | ", feed.name, feed.history_rows);
    if (feed.slot_lag_bytes >= 0) line += fmt::format(", slot lag {}", HumanBytes(feed.slot_lag_bytes));
  }
  for (const pipeline::FlowFigures& flow : flows) {
    // A flow without a batch for two seconds (or twice its last batch's time) is idle: rate 0.
    const int64_t idle_after = std::max<int64_t>(2'000'000, 2000 * flow.last_batch_duration_ms);
    const double rate = now_micros - flow.last_batch_micros > idle_after ? 0 : flow.input_rows_per_second;
    line += fmt::format("{}{}: {} in ({:.0f}/s), {} out, batch {}", line.empty() ? "" : " | ", flow.name,
                        flow.input_rows, rate, flow.output_rows,
                        flow.last_batch_id < 0 ? std::string("-") : std::to_string(flow.last_batch_id));
    if (flow.records_behind) line += fmt::format(", {} behind", *flow.records_behind);
    if (flow.event_time_lag_seconds) line += fmt::format(", lag {:.1f}s", *flow.event_time_lag_seconds);
  }
  return line;
}

// Flows still at work (or waiting for their source table) and feeds still streaming.
bool Active(const pipeline::PipelineRun& run) {
  for (const pipeline::FlowFigures& flow : run.flows()) {
    if (flow.state == "RUNNING" || flow.state == "WAITING") return true;
  }
  for (const pipeline::ChangeFeedFigures& feed : run.change_feeds()) {
    if (feed.state == "RUNNING") return true;
  }
  return false;
}

}  // namespace

bool RunInForeground(const pipeline::PipelineSpec& spec, pipeline::RunOptions options, int metrics_port,
                     const std::string& metrics_address, const std::function<bool()>& should_stop) {
  BlockTerminationSignals();
  options.registry = &CommandRegistry();
  Result<std::unique_ptr<pipeline::PipelineRun>> run = pipeline::PipelineRun::Start(spec, options);
  if (!run.ok()) Fail(run.status(), run.status().error_class() == errors::kInvalidPipeline ? 2 : 1);
  pipeline::PipelineRun& running = **run;
  std::unique_ptr<pipeline::MetricsServer> metrics;
  if (metrics_port >= 0) {
    auto server = pipeline::MetricsServer::Start(
        metrics_address, metrics_port, [&running] { return running.PrometheusText(); },
        [&running] { return running.ready(); });
    if (!server.ok()) {
      running.Stop();
      (void)running.Wait();  // the failure to report is the metrics server's
      Fail(server.status(), 1);
    }
    metrics = std::move(server).value();
    std::printf("metrics on http://%s:%d/metrics, readiness on /ready\n", metrics_address.c_str(), metrics->port());
  }
  std::printf("pipeline '%s': %zu flow(s) and %zu change feed(s) running; events in %s\n", spec.name.c_str(),
              running.flows().size(), running.change_feeds().size(), running.event_log_path().c_str());
  std::fflush(stdout);

  const bool tty = ::isatty(STDOUT_FILENO) == 1;
  bool stopped_when_asked = false;
  while (true) {
    if (!Active(running)) break;
    if (std::optional<int> signal = WaitForTerminationSignalFor(std::chrono::milliseconds(500))) {
      if (tty) std::printf("\n");
      std::printf("stopping after the batches in progress...\n");
      std::fflush(stdout);
      running.Stop();
      break;
    }
    if (should_stop && should_stop()) {
      if (tty) std::printf("\n");
      running.Stop();
      stopped_when_asked = true;
      break;
    }
    if (tty) {
      std::printf("\r\033[K%s",
                  ProgressLine(running.flows(), running.change_feeds(), SystemClock()->NowMicros()).c_str());
      std::fflush(stdout);
    }
  }
  Status result = running.Wait();
  if (tty) std::printf("\r\033[K");
  for (const pipeline::FlowFigures& flow : running.flows()) {
    std::printf("flow %s: %s, %lld batch(es), %lld rows in, %lld rows out\n", flow.name.c_str(), flow.state.c_str(),
                static_cast<long long>(flow.batches), static_cast<long long>(flow.input_rows),
                static_cast<long long>(flow.output_rows));
  }
  for (const pipeline::ChangeFeedFigures& feed : running.change_feeds()) {
    std::printf("change feed %s: %s -> %s, %lld history rows\n", feed.name.c_str(), feed.state.c_str(),
                feed.target.c_str(), static_cast<long long>(feed.history_rows));
  }
  std::fflush(stdout);
  if (!result.ok()) Fail(result, 1);
  return stopped_when_asked;
}

namespace {

// A pipeline declaring Python runs in Python: the same command, by the sluice package
// (`python -m sluice`, docs/python.md). $SLUICE_PYTHON names the interpreter (default python3).
[[noreturn]] void HandToPython(std::vector<std::string> arguments) {
  const char* python = std::getenv("SLUICE_PYTHON");
  std::string interpreter = python != nullptr && *python != '\0' ? python : "python3";
  arguments.insert(arguments.begin(), {interpreter, "-m", "sluice"});
  std::vector<char*> argv;
  for (std::string& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  execvp(argv[0], argv.data());
  Fail(Status::Error(errors::kInvalidPipeline,
                     fmt::format("the pipeline lists Python libraries, which run in the sluice Python package "
                                 "(pip install .); {} could not be started: {}",
                                 interpreter, std::strerror(errno))),
       2);
}

// Whether the pipeline declares Python: libraries, or a foreachBatch function `python:...`.
bool RunsInPython(const pipeline::PipelineSpec& spec) {
  if (!spec.libraries.empty()) return true;
  for (const auto& [name, sink] : spec.sinks) {
    auto function = sink.options.find("function");
    if (sink.format == "foreachBatch" && function != sink.options.end() && function->second.starts_with("python:")) {
      return true;
    }
  }
  return false;
}

void Run(const RunArguments& arguments) {
  Result<pipeline::PipelineSpec> spec = LoadPipelineFile(arguments.file);
  if (!spec.ok()) Fail(spec.status(), 2);
  if (RunsInPython(*spec)) {
    std::vector<std::string> forwarded = {"run", arguments.file};
    for (const std::string& flow : arguments.flows) forwarded.insert(forwarded.end(), {"--flow", flow});
    for (const std::string& flow : arguments.full_refresh) forwarded.insert(forwarded.end(), {"--full-refresh", flow});
    if (arguments.full_refresh_all) forwarded.push_back("--full-refresh-all");
    if (!arguments.instance_id.empty()) {
      Fail(Status::Error(errors::kInvalidArgument,
                         "--instance-id applies to streams in a workers group, which pipelines with Python do not run"),
           2);
    }
    HandToPython(std::move(forwarded));
  }
  pipeline::RunOptions options;
  options.flows = arguments.flows;
  options.full_refresh = arguments.full_refresh;
  options.full_refresh_all = arguments.full_refresh_all;
  options.instance_id = arguments.instance_id;
  RunInForeground(*spec, options, arguments.metrics_port, arguments.metrics_address);
}

void Validate(const std::string& file, bool json) {
  // Problems of shape and the problems of what parsed cleanly, listed together.
  Status shape;
  Result<pipeline::PipelineSpec> spec = LoadPipelineFile(file, &shape);
  if (!spec.ok()) Fail(spec.status(), 1);
  if (shape.ok() && RunsInPython(*spec)) {
    if (json) {
      Fail(Status::Error(errors::kInvalidArgument, "--json is not available for pipelines with Python libraries"), 2);
    }
    HandToPython({"validate", file});
  }
  std::vector<Status> problems = pipeline::ValidatePipeline(*spec, CommandRegistry());
  if (json) {
    if (!shape.ok()) problems.insert(problems.begin(), shape.WithContext(file));
    std::string list = "[";
    for (const Status& problem : problems) {
      list += (list.size() > 1 ? "," : "") + std::string("{\"error_class\":") + JsonString(problem.error_class()) +
              ",\"message\":" + JsonString(problem.message()) + "}";
    }
    std::printf("{\"file\":%s,\"pipeline\":%s,\"valid\":%s,\"flows\":%zu,\"sinks\":%zu,\"streams\":%zu,"
                "\"change_feeds\":%zu,\"problems\":%s]}\n",
                JsonString(file).c_str(), JsonString(spec->name).c_str(), problems.empty() ? "true" : "false",
                spec->flows.size(), spec->sinks.size(), spec->streams.size(), spec->change_feeds.size(), list.c_str());
    if (!problems.empty()) throw CLI::RuntimeError(1);
    return;
  }
  if (!shape.ok()) {
    std::fprintf(stderr, "%s\n", shape.WithContext(file).ToString().c_str());
    if (problems.empty()) throw CLI::RuntimeError(1);
  }
  if (!problems.empty()) {
    std::fprintf(stderr, "%s: %zu problem(s)\n", file.c_str(), problems.size());
    for (const Status& problem : problems) std::fprintf(stderr, "  %s\n", problem.ToString().c_str());
    throw CLI::RuntimeError(1);
  }
  std::printf("%s: pipeline '%s' is valid (%zu flow(s), %zu sink(s), %zu stream(s), %zu change feed(s))\n",
              file.c_str(), spec->name.c_str(), spec->flows.size(), spec->sinks.size(), spec->streams.size(),
              spec->change_feeds.size());
}

// The last state and the last batch of each flow, from the event log.
// The states `sluice serve` last wrote for the warehouse's streams.
void ServeStatus(const std::string& warehouse, bool as_json) {
  const std::string path = pipeline::CatalogServer::StatusPath(AbsolutePath(warehouse));
  Result<std::string> text = storage::DefaultFileSystem()->ReadFile(path);
  if (!text.ok()) {
    Fail(text.status().error_class() == errors::kFileNotFound
             ? Status::Error(errors::kFileNotFound, "no `sluice serve` has run on " + warehouse + " (" + path + ")")
             : text.status(),
         1);
  }
  simdjson::dom::parser parser;
  simdjson::dom::array served;
  if (parser.parse(simdjson::padded_string(*text))["served"].get(served) != simdjson::SUCCESS) {
    Fail(Status::Error(errors::kInvalidArgument, path + " is not a status file of `sluice serve`"), 1);
  }
  if (as_json) {
    // The file `sluice serve` keeps is already the JSON object: {"served": [{kind, name, state, restarts, last_error}]}.
    std::printf("%s%s", text->c_str(), text->ends_with("\n") ? "" : "\n");
    return;
  }
  std::printf("%-12s %-40s %-11s %8s  %s\n", "kind", "name", "state", "restarts", "last error");
  for (simdjson::dom::element stream : served) {
    std::string_view kind, name, state, error = "-";
    int64_t restarts = 0;
    // A field missing from the file prints as nothing (last_error: null prints as "-").
    if (stream["kind"].get(kind) != simdjson::SUCCESS) kind = "";
    if (stream["name"].get(name) != simdjson::SUCCESS) name = "";
    if (stream["state"].get(state) != simdjson::SUCCESS) state = "";
    if (stream["restarts"].get(restarts) != simdjson::SUCCESS) restarts = 0;
    if (stream["last_error"].get(error) != simdjson::SUCCESS) error = "-";
    std::printf("%-12.*s %-40.*s %-11.*s %8lld  %.*s\n", static_cast<int>(kind.size()), kind.data(),
                static_cast<int>(name.size()), name.data(),
                static_cast<int>(state.size()), state.data(), static_cast<long long>(restarts),
                static_cast<int>(error.size()), error.data());
  }
}

}  // namespace

namespace {

void Status_(const std::string& file, bool as_json) {
  Result<pipeline::PipelineSpec> spec = LoadPipelineFile(file);
  if (!spec.ok()) Fail(spec.status(), 1);
  const bool python = RunsInPython(*spec);
  const std::string events = pipeline::EventLog::PathFor(spec->storage);
  Result<std::vector<std::string>> lines = pipeline::EventLog::ReadLines(events);
  if (!lines.ok()) Fail(lines.status(), 1);
  struct Last {
    std::string state = "NEVER RUN", at, batch = "-", rows_in = "-", rows_out = "-", error;
  };
  std::map<std::string, Last> last;
  std::vector<std::string> logged_flows;  // in the order the log first names them
  simdjson::dom::parser parser;
  for (const std::string& line : *lines) {
    simdjson::dom::element event;
    std::string_view flow, type, timestamp, status, message;
    if (parser.parse(line).get(event) != simdjson::SUCCESS || event["origin"]["flow"].get(flow) != simdjson::SUCCESS ||
        event["event_type"].get(type) != simdjson::SUCCESS) {
      continue;
    }
    if (!flow.empty() && last.count(std::string(flow)) == 0) logged_flows.emplace_back(flow);
    Last& entry = last[std::string(flow)];
    if (event["timestamp"].get(timestamp) != simdjson::SUCCESS) timestamp = {};
    if (type == "error" && event["message"].get(message) == simdjson::SUCCESS) entry.error = message;
    if (type != "flow_progress") continue;
    simdjson::dom::element progress = event["details"]["flow_progress"];
    if (progress["status"].get(status) == simdjson::SUCCESS) entry.state = status;
    if (entry.state != "FAILED") entry.error.clear();
    entry.at = timestamp;
    int64_t batch = 0, rows_in = 0, rows_out = 0;
    if (progress["batch_id"].get(batch) == simdjson::SUCCESS &&
        progress["metrics"]["num_input_rows"].get(rows_in) == simdjson::SUCCESS &&
        progress["metrics"]["num_output_rows"].get(rows_out) == simdjson::SUCCESS) {
      entry.batch = std::to_string(batch);
      entry.rows_in = std::to_string(rows_in);
      entry.rows_out = std::to_string(rows_out);
    }
  }
  // Flows and materialized views, then streams, then the flows only the runs' events name
  // (declared by Python libraries).
  std::vector<std::pair<std::string, std::string>> rows;  // (kind, name)
  for (const pipeline::FlowSpec& flow : spec->flows) {
    rows.emplace_back(flow.materialized_view ? "materialized_view" : "flow", flow.name);
  }
  for (const pipeline::StreamSpec& stream : spec->streams) rows.emplace_back("stream", stream.name);
  if (python) {
    for (const std::string& flow : logged_flows) {
      bool feed = std::any_of(spec->change_feeds.begin(), spec->change_feeds.end(),
                              [&](const pipeline::ChangeFeedSpec& f) { return f.name == flow; });
      bool known = std::any_of(rows.begin(), rows.end(), [&](const auto& row) { return row.second == flow; });
      if (!feed && !known) rows.emplace_back("flow", flow);
    }
  }
  std::string json = "{\"pipeline\":" + JsonString(spec->name) + ",\"events\":" + JsonString(events) + ",\"flows\":[";
  if (!as_json) std::printf("pipeline '%s' (events in %s)\n", spec->name.c_str(), events.c_str());
  std::vector<std::vector<std::string>> table;
  for (const auto& [kind, name] : rows) {
    const Last& entry = last[name];
    if (as_json) {
      auto number = [](const std::string& text) { return text == "-" ? std::string("null") : text; };
      json += std::string(json.back() == '[' ? "" : ",") + "{\"name\":" + JsonString(name) + ",\"kind\":" +
              JsonString(kind) + ",\"state\":" + JsonString(entry.state) + ",\"last_batch\":" + number(entry.batch) +
              ",\"batch_input_rows\":" + number(entry.rows_in) + ",\"batch_output_rows\":" + number(entry.rows_out) +
              ",\"at\":" + (entry.at.empty() ? "null" : JsonString(entry.at)) +
              ",\"error\":" + (entry.error.empty() ? "null" : JsonString(entry.error)) + "}";
      continue;
    }
    table.push_back({name, kind, entry.state, entry.batch, entry.rows_in, entry.rows_out, entry.at.empty() ? "-" : entry.at,
                     entry.error.empty() ? "-" : entry.error});
  }
  if (!as_json && !table.empty()) {  // (a pipeline of change feeds alone has no flow to show)
    std::printf("%s", TextTable({"name", "kind", "state", "last batch", "batch in", "batch out", "at", "error"}, table).c_str());
  }
  json += "],\"change_feeds\":[";
  for (const pipeline::ChangeFeedSpec& feed : spec->change_feeds) {
    const Last& entry = last[feed.name];
    Result<connectors::ChangeFeedConfig> config = spec->ChangeFeedConfigOf(feed);
    Result<std::string> feed_status = config.ok() ? connectors::ChangeFeedStatus(*config) : Result<std::string>(config.status());
    Result<pipeline::ChangeFeedStatusView> view = feed_status.ok() ? pipeline::ParseChangeFeedStatus(*feed_status)
                                                                   : Result<pipeline::ChangeFeedStatusView>(feed_status.status());
    if (as_json) {
      json += std::string(json.back() == '[' ? "" : ",") + "{\"name\":" + JsonString(feed.name) + ",\"state\":" +
              JsonString(entry.state) + ",\"at\":" + (entry.at.empty() ? "null" : JsonString(entry.at)) +
              ",\"error\":" + (entry.error.empty() ? "null" : JsonString(entry.error));
      if (view.ok()) {
        json += ",\"slot\":" + JsonString(view->slot_name) + ",\"confirmed_lsn\":" +
                JsonString(pipeline::FormatLsn(view->confirmed_lsn)) + ",\"slot_lag_bytes\":" +
                std::to_string(view->slot_lag_bytes) + ",\"slot_lag_seconds\":" + fmt::format("{:.1f}", view->slot_lag_seconds) +
                ",\"tables\":[";
        for (const pipeline::ChangeFeedTableStatus& table : view->tables) {
          json += std::string(json.back() == '[' ? "" : ",") + "{\"source\":" + JsonString(table.source) +
                  ",\"history\":" + JsonString(table.history) + ",\"status\":" + JsonString(table.status) +
                  ",\"rows\":" + std::to_string(table.rows) + ",\"committed_lsn\":" +
                  JsonString(pipeline::FormatLsn(table.committed_lsn)) + ",\"replica_identity_full\":" +
                  (table.replica_identity_full ? "true" : "false") + ",\"reason\":" +
                  (table.reason.empty() ? "null" : JsonString(table.reason)) + "}";
        }
        json += "]";
      } else if (!config.ok()) {
        json += ",\"config_error\":" + JsonString(config.status().ToString());
      }
      json += "}";
      continue;
    }
    std::printf("change feed %s: %s  %s\n", feed.name.c_str(), entry.state.c_str(), entry.at.c_str());
    if (!entry.error.empty()) std::printf("  error: %s\n", entry.error.c_str());
    if (!config.ok()) {
      std::printf("  %s\n", config.status().ToString().c_str());
      continue;
    }
    if (!view.ok()) continue;
    std::printf("%s", ChangeFeedStatusText(*view).c_str());
  }
  if (as_json) std::printf("%s]}\n", json.c_str());
}

}  // namespace

void RegisterPipelineCommands(CLI::App& app) {
  auto run = std::make_shared<RunArguments>();
  CLI::App* run_command = app.add_subcommand("run", "Run the flows and change feeds of a pipeline file until the "
                                                    "flows' triggers are done or SIGINT/SIGTERM stops them");
  run_command->add_option("FILE", run->file, "Pipeline file (YAML)")->required();
  run_command->add_option("--flow", run->flows, "Run only this flow, stream or change feed (repeatable)");
  auto* refresh = run_command->add_option(
      "--full-refresh", run->full_refresh,
      "Reset this flow (repeatable): its checkpoint is deleted and the Delta table it writes truncated");
  run_command->add_flag("--full-refresh-all", run->full_refresh_all, "Reset every flow that runs")->excludes(refresh);
  run_command->add_option("--instance-id", run->instance_id,
                          "This process's group.instance.id in the workers groups of the pipeline's streams "
                          "(scale: {group: true}); a restart with the same id keeps its partitions");
  run_command->add_option("--metrics-port", run->metrics_port,
                          "Serve Prometheus metrics on /metrics and readiness on /ready at this port")
      ->check(CLI::Range(0, 65535));
  run_command->add_option("--metrics-address", run->metrics_address, "Address the metrics endpoint listens on")
      ->capture_default_str();
  run_command->callback([run] { Run(*run); });

  auto validate_file = std::make_shared<std::string>();
  auto validate_json = std::make_shared<bool>(false);
  CLI::App* validate = app.add_subcommand(
      "validate", "Check a pipeline file without touching data: options, expressions, sinks and the flow graph");
  validate->add_option("FILE", *validate_file, "Pipeline file (YAML)")->required();
  validate->add_flag("--json", *validate_json, "The result as one JSON object (problems with their error classes)");
  validate->callback([validate_file, validate_json] { Validate(*validate_file, *validate_json); });

  auto status_file = std::make_shared<std::string>();
  auto status_warehouse = std::make_shared<std::string>();
  CLI::App* status = app.add_subcommand(
      "status", "The last state and batch of each flow and each change feed's tables, or (--warehouse) the state of "
                "each stream `sluice serve` runs");
  auto status_json = std::make_shared<bool>(false);
  CLI::Option* file = status->add_option("FILE", *status_file, "Pipeline file (YAML)");
  CLI::Option* warehouse = status->add_option("--warehouse", *status_warehouse, "Warehouse served by `sluice serve`");
  status->add_flag("--json", *status_json, "The status as one JSON object");
  file->excludes(warehouse);
  status->callback([status_file, status_warehouse, status_json] {
    if (!status_warehouse->empty()) return ServeStatus(*status_warehouse, *status_json);
    if (status_file->empty()) Fail(Status::Error(errors::kInvalidArgument, "give a pipeline file or --warehouse"), 2);
    Status_(*status_file, *status_json);
  });
}

}  // namespace sluice::cli
