#include "sluice/pipeline/copy.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <optional>
#include <random>

#include <fmt/format.h>

#include "sluice/connectors/register_formats.h"
#include "sluice/core/ascii.h"
#include "sluice/core/error_classes.h"
#include "sluice/connectors/delta/formats.h"
#include "sluice/engine/plugin.h"
#include "sluice/engine/registry.h"
#include "sluice/engine/streaming_query.h"
#include "sluice/pipeline/catalog.h"

namespace sluice::pipeline {

namespace {

// The spec itself is not echoed: its values may hold a secret given by mistake.
Status SpecError(std::string_view spec, size_t position, std::string_view what) {
  return Status::Error(errors::kInvalidArgument,
                       fmt::format("copy spec of {} characters, at character {}: {}; write `format:key=value,key=value` "
                                   "(quote values holding commas: query='SELECT a, b FROM t')",
                                   spec.size(), position + 1, what));
}

bool IsKeyChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-'; }

std::map<std::string, std::string>::iterator FindIgnoreCase(std::map<std::string, std::string>& map,
                                                             std::string_view key) {
  return std::find_if(map.begin(), map.end(), [&](const auto& entry) { return EqualsIgnoreCase(entry.first, key); });
}

// `catalog.schema.table` split into its three parts, or nothing.
std::optional<std::array<std::string_view, 3>> SplitTableName(std::string_view name) {
  std::array<std::string_view, 3> parts;
  for (int i = 0; i < 3; ++i) {
    size_t dot = i < 2 ? name.find('.') : std::string_view::npos;
    if (i < 2 && dot == std::string_view::npos) return std::nullopt;
    parts[i] = name.substr(0, dot);
    if (parts[i].empty() || !std::all_of(parts[i].begin(), parts[i].end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
        })) {
      return std::nullopt;
    }
    if (i < 2) name.remove_prefix(dot + 1);
  }
  return parts;
}

Result<std::map<std::string, std::string>> Resolve(const CopyEndpoint& endpoint, const Catalog& catalog,
                                                   const CopyOptions& copy) {
  const std::string& warehouse = copy.warehouse;
  SLUICE_ASSIGN_OR_RETURN(auto options,
                          ExpandConnection(endpoint.options, OwnThenCatalog(copy.connections, catalog), endpoint.format));
  auto table = FindIgnoreCase(options, "table");
  if (EqualsIgnoreCase(endpoint.format, "delta") && table != options.end()) {
    auto parts = SplitTableName(table->second);
    if (!parts) {
      return Status::Error(errors::kInvalidArgument, "delta `table` `" + table->second +
                                                         "` is not catalog.schema.table (three names of letters, "
                                                         "digits, `_` or `-`)");
    }
    if (FindIgnoreCase(options, "path") != options.end()) {
      return Status::Error(errors::kInvalidArgument, "give a delta table either as `table` or as `path`, not both");
    }
    std::string path = fmt::format("{}/{}/{}/{}", warehouse, (*parts)[0], (*parts)[1], (*parts)[2]);
    options.erase(table);
    options["path"] = std::move(path);
  }
  return options;
}

std::string TemporaryCheckpoint(const std::string& warehouse) {
  std::random_device random;
  auto now = std::chrono::system_clock::now().time_since_epoch();
  return fmt::format("{}/_sluice/copies/{}-{:08x}", warehouse,
                     std::chrono::duration_cast<std::chrono::milliseconds>(now).count(), random());
}

}  // namespace

Result<CopyEndpoint> ParseEndpointSpec(std::string_view spec) {
  // A plugin format holds a colon itself: `plugin:/path/libx.so:key=value`.
  const bool plugin = engine::IsPluginFormat(spec);
  size_t colon = spec.find(':', plugin ? engine::kPluginFormatPrefix.size() : 0);
  CopyEndpoint endpoint;
  if (colon == std::string_view::npos) {
    if (SplitTableName(spec)) return CopyEndpoint{"delta", {{"table", std::string(spec)}}};
    colon = spec.size();
  }
  endpoint.format = spec.substr(0, colon);
  if (endpoint.format.empty()) return SpecError(spec, 0, "no format before `:`");
  for (size_t i = plugin ? engine::kPluginFormatPrefix.size() : 0; i < endpoint.format.size(); ++i) {
    if (plugin ? endpoint.format[i] == ',' : !IsKeyChar(endpoint.format[i])) {
      return SpecError(spec, i, plugin ? "a plugin path holds no `,`" : "a format name is letters, digits, `_`, `-`");
    }
  }
  size_t i = colon + 1;
  while (i < spec.size()) {
    size_t key_start = i;
    while (i < spec.size() && IsKeyChar(spec[i])) ++i;
    if (i == key_start) return SpecError(spec, i, "expected an option name");
    std::string key(spec.substr(key_start, i - key_start));
    if (i == spec.size() || spec[i] != '=') return SpecError(spec, i, "expected `=` after `" + key + "`");
    ++i;
    std::string value;
    if (i < spec.size() && spec[i] == '\'') {
      size_t quote = i++;
      for (;; ++i) {
        if (i == spec.size()) return SpecError(spec, quote, "a quoted value has no closing quote");
        if (spec[i] != '\'') {
          value += spec[i];
        } else if (i + 1 < spec.size() && spec[i + 1] == '\'') {
          value += '\'';
          ++i;
        } else {
          ++i;
          break;
        }
      }
      if (i < spec.size() && spec[i] != ',') return SpecError(spec, i, "expected `,` after a quoted value");
    } else {
      size_t comma = spec.find(',', i);
      if (comma == std::string_view::npos) comma = spec.size();
      value = spec.substr(i, comma - i);
      i = comma;
    }
    if (FindIgnoreCase(endpoint.options, key) != endpoint.options.end()) {
      return SpecError(spec, key_start, "option `" + key + "` is given twice");
    }
    endpoint.options.emplace(std::move(key), std::move(value));
    if (i < spec.size()) {
      ++i;  // the comma
      if (i == spec.size()) return SpecError(spec, i, "expected an option after `,`");
    }
  }
  return endpoint;
}

Result<std::unique_ptr<engine::Source>> MakeBatchSource(const engine::Registry& registry, std::string_view format,
                                                        const std::map<std::string, std::string>& options) {
  if (!EqualsIgnoreCase(format, "delta")) return registry.MakeSource(format, options);
  SLUICE_ASSIGN_OR_RETURN(auto validated, ValidateOptions("delta source", connectors::kDeltaBatchSourceOptions, options));
  return connectors::MakeDeltaBatchSource(validated);
}

Result<CopyResult> RunCopy(const CopyEndpoint& from, const CopyEndpoint& to, const CopyOptions& options) {
  Catalog catalog(options.file_system, options.warehouse);
  SLUICE_ASSIGN_OR_RETURN(auto source_options, Resolve(from, catalog, options));
  SLUICE_ASSIGN_OR_RETURN(auto sink_options, Resolve(to, catalog, options));
  const std::string checkpoint = options.checkpoint.empty() ? TemporaryCheckpoint(options.warehouse) : options.checkpoint;
  if (EqualsIgnoreCase(to.format, "postgresql")) {
    if (FindIgnoreCase(sink_options, "mode") == sink_options.end()) sink_options["mode"] = "errorifexists";
    if (FindIgnoreCase(sink_options, "checkpointLocation") == sink_options.end()) {
      sink_options["checkpointLocation"] = checkpoint;
    }
  }
  engine::Registry* registry = &connectors::AllFormatsRegistry();
  SLUICE_RETURN_IF_ERROR(engine::LoadPlugin(registry, from.format));
  SLUICE_RETURN_IF_ERROR(engine::LoadPlugin(registry, to.format));
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<engine::Source> source, MakeBatchSource(*registry, from.format, source_options));
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<engine::Sink> sink, registry->MakeSink(to.format, sink_options));

  CopyResult result;
  engine::QueryConfig config;
  config.name = "copy";
  config.checkpoint_location = checkpoint;
  // What is there now, in the batches the source's own limits make: one for most sources, one per
  // `partitions_per_batch` partitions of a postgresql source, so that such a copy resumes batch by
  // batch from its checkpoint.
  config.trigger = engine::Trigger::AvailableNow();
  config.file_system = options.file_system;
  config.on_progress = [&result](const engine::QueryProgress& progress) { result.rows += progress.num_input_rows; };
  auto started = std::chrono::steady_clock::now();
  SLUICE_ASSIGN_OR_RETURN(auto query, engine::StreamingQuery::Start(std::move(source), std::move(sink), std::move(config)));
  Status ran = query->Run();
  query.reset();
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (options.checkpoint.empty()) {
    Status removed = options.file_system->DeleteRecursively(checkpoint);
    if (ran.ok() && !removed.ok()) return removed;
  }
  SLUICE_RETURN_IF_ERROR(ran);
  return result;
}

}  // namespace sluice::pipeline
