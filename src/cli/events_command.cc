// `sluice events FILE | --warehouse DIR [--stream NAME]`: the event log of a pipeline, or of the
// streams of a warehouse's catalog, one event per line, pretty-printed or as JSON lines, filtered
// by flow, least level and event type, and followed with --follow.
#include <CLI/CLI.hpp>
#include <simdjson.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/termination_signals.h"
#include "cli/warehouse.h"
#include "sluice/core/ascii.h"
#include "sluice/core/error_classes.h"
#include "sluice/pipeline/event_log.h"
#include "sluice/pipeline/stream_catalog.h"
#include "sluice/storage/file_systems.h"

namespace sluice::cli {
namespace {

struct EventsArguments {
  std::string file;
  std::string warehouse;
  std::string stream;
  std::string flow;
  std::string level;
  std::string type;
  bool follow = false;
  bool json = false;
};

[[noreturn]] void Fail(const Status& status, int exit_code) {
  std::fprintf(stderr, "%s\n", status.ToString().c_str());
  throw CLI::RuntimeError(exit_code);
}

// Levels from least to most severe; METRICS events are progress, as INFO.
constexpr std::string_view kLevels[] = {"INFO", "WARN", "ERROR"};

int Severity(std::string_view level) {
  for (size_t i = 0; i < std::size(kLevels); ++i) {
    if (EqualsIgnoreCase(level, kLevels[i])) return static_cast<int>(i);
  }
  return 0;  // METRICS
}

struct Line {
  std::string text;  // the event as logged
  std::string timestamp, level, type, flow, message;
};

// The event logs the arguments name.
std::vector<std::string> LogPaths(const EventsArguments& arguments) {
  if (!arguments.file.empty()) {
    Result<pipeline::PipelineSpec> spec = LoadPipelineFile(arguments.file);
    if (!spec.ok()) Fail(spec.status(), 1);
    return {pipeline::EventLog::PathFor(spec->storage)};
  }
  pipeline::StreamCatalog catalog(storage::DefaultFileSystem(), AbsolutePath(arguments.warehouse), &CommandRegistry());
  std::vector<pipeline::StreamSpec> streams;
  if (!arguments.stream.empty()) {
    Result<pipeline::StoredStream> stream = catalog.Get(arguments.stream);
    if (!stream.ok()) Fail(stream.status(), 1);
    streams.push_back(stream->spec);
  } else {
    for (std::string after;;) {
      Result<std::vector<pipeline::StoredStream>> page = catalog.List(1000, after);
      if (!page.ok()) Fail(page.status(), 1);
      for (const pipeline::StoredStream& stream : *page) streams.push_back(stream.spec);
      if (page->size() < 1000) break;
      after = page->back().spec.name;
    }
  }
  std::vector<std::string> paths;
  for (const pipeline::StreamSpec& stream : streams) {
    paths.push_back(pipeline::EventLog::PathFor(catalog.PipelineOf(stream).storage));
  }
  return paths;
}

// The events of `paths` that pass the filters, oldest first, skipping the first `seen` of each log.
std::vector<Line> ReadEvents(const EventsArguments& arguments, const std::vector<std::string>& paths,
                             std::map<std::string, size_t>* seen) {
  std::vector<Line> events;
  simdjson::dom::parser parser;
  for (const std::string& path : paths) {
    Result<std::vector<std::string>> lines = pipeline::EventLog::ReadLines(path);
    if (!lines.ok()) Fail(lines.status(), 1);
    size_t& done = (*seen)[path];
    for (size_t i = done; i < lines->size(); ++i) {
      const std::string& text = (*lines)[i];
      simdjson::dom::element event;
      std::string_view level, type, flow, timestamp, message;
      if (parser.parse(text).get(event) != simdjson::SUCCESS || event["level"].get(level) != simdjson::SUCCESS ||
          event["event_type"].get(type) != simdjson::SUCCESS || event["timestamp"].get(timestamp) != simdjson::SUCCESS) {
        continue;
      }
      if (event["origin"]["flow"].get(flow) != simdjson::SUCCESS) flow = {};
      if (event["message"].get(message) != simdjson::SUCCESS) message = {};
      if (!arguments.flow.empty() && flow != arguments.flow) continue;
      if (!arguments.type.empty() && type != arguments.type) continue;
      if (!arguments.level.empty() && Severity(level) < Severity(arguments.level)) continue;
      events.push_back(Line{text, std::string(timestamp), std::string(level), std::string(type), std::string(flow),
                            std::string(message)});
    }
    done = lines->size();
  }
  // Logs of several streams interleave by time; one log is in order already.
  std::stable_sort(events.begin(), events.end(), [](const Line& a, const Line& b) { return a.timestamp < b.timestamp; });
  return events;
}

void Print(const Line& line, bool json) {
  if (json) {
    std::printf("%s\n", line.text.c_str());
    return;
  }
  std::printf("%s %-7s %-16s %s%s\n", line.timestamp.c_str(), line.level.c_str(), line.type.c_str(),
              line.flow.empty() ? "" : fmt::format("[{}] ", line.flow).c_str(), line.message.c_str());
}

void Events(const EventsArguments& arguments) {
  if (arguments.file.empty() == arguments.warehouse.empty()) {
    Fail(Status::Error(errors::kInvalidArgument, "give a pipeline file or --warehouse"), 2);
  }
  if (!arguments.stream.empty() && arguments.warehouse.empty()) {
    Fail(Status::Error(errors::kInvalidArgument, "--stream names a stream of the --warehouse catalog"), 2);
  }
  const std::vector<std::string> paths = LogPaths(arguments);
  std::map<std::string, size_t> seen;
  for (const Line& line : ReadEvents(arguments, paths, &seen)) Print(line, arguments.json);
  std::fflush(stdout);
  if (!arguments.follow) return;
  BlockTerminationSignals();
  while (!WaitForTerminationSignalFor(std::chrono::milliseconds(500))) {
    for (const Line& line : ReadEvents(arguments, paths, &seen)) Print(line, arguments.json);
    std::fflush(stdout);
  }
}

}  // namespace

void RegisterEventsCommand(CLI::App& app) {
  auto arguments = std::make_shared<EventsArguments>();
  CLI::App* events = app.add_subcommand(
      "events", "The event log of a pipeline (FILE) or of a warehouse's catalog streams, oldest first");
  CLI::Option* file = events->add_option("FILE", arguments->file, "Pipeline file (YAML)");
  CLI::Option* warehouse =
      events->add_option("--warehouse", arguments->warehouse, "The events of this warehouse's catalog streams");
  file->excludes(warehouse);
  events->add_option("--stream", arguments->stream, "Only this catalog stream (with --warehouse)");
  events->add_option("--flow", arguments->flow, "Only the events of this flow or stream");
  events->add_option("--level", arguments->level, "Only events of this level or above")
      ->check(CLI::IsMember({"INFO", "WARN", "ERROR"}, CLI::ignore_case));
  events->add_option("--type", arguments->type, "Only events of this type")
      ->check(CLI::IsMember({"flow_definition", "sink_definition", "flow_progress", "data_quality", "warning", "error"}));
  events->add_flag("--follow", arguments->follow, "Keep printing new events until SIGINT/SIGTERM");
  events->add_flag("--json", arguments->json, "One JSON object per line, as logged");
  events->callback([arguments] { Events(*arguments); });
}

}  // namespace sluice::cli
