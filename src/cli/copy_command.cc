// `sluice copy --from SPEC --to SPEC`: a one-off copy between formats (docs/batch.md).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/project_file.h"
#include "cli/warehouse.h"
#include "sluice/core/error_classes.h"
#include "sluice/pipeline/copy.h"

namespace sluice::cli {
namespace {

struct CopyCommandOptions {
  std::string warehouse;
  std::string checkpoint;
  std::string from;
  std::string to;
  std::vector<std::string> from_options;  // key=value
  std::vector<std::string> to_options;
};

// The spec, plus the options given one by one (which need no quoting).
Result<pipeline::CopyEndpoint> Endpoint(const std::string& spec, const std::vector<std::string>& extra,
                                        std::string_view flag) {
  SLUICE_ASSIGN_OR_RETURN(pipeline::CopyEndpoint endpoint, pipeline::ParseEndpointSpec(spec));
  for (const std::string& option : extra) {
    size_t equals = option.find('=');
    if (equals == std::string::npos || equals == 0) {
      return Status::Error(errors::kInvalidArgument,
                           fmt::format("{} `{}` is not key=value", flag, option.substr(0, option.find('='))));
    }
    if (!endpoint.options.emplace(option.substr(0, equals), option.substr(equals + 1)).second) {
      return Status::Error(errors::kInvalidArgument,
                           fmt::format("option `{}` is given both in the spec and by {}", option.substr(0, equals), flag));
    }
  }
  // A path as users write it (relative to here, file://, an object store's URI) in the form the
  // formats take.
  auto path = endpoint.options.find("path");
  if (path != endpoint.options.end() && !path->second.empty()) path->second = AbsolutePath(path->second);
  return endpoint;
}

Status Run(const CopyCommandOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(pipeline::CopyEndpoint from, Endpoint(options.from, options.from_options, "--from-option"));
  SLUICE_ASSIGN_OR_RETURN(pipeline::CopyEndpoint to, Endpoint(options.to, options.to_options, "--to-option"));
  pipeline::CopyOptions copy;
  copy.warehouse = AbsolutePath(options.warehouse);
  copy.connections = Project().connections;
  if (!options.checkpoint.empty()) copy.checkpoint = AbsolutePath(options.checkpoint);
  SLUICE_ASSIGN_OR_RETURN(pipeline::CopyResult result, pipeline::RunCopy(from, to, copy));
  std::printf("copied %lld rows in %.3f s (%.0f rows/s)\n", static_cast<long long>(result.rows), result.seconds,
              result.seconds > 0 ? static_cast<double>(result.rows) / result.seconds : 0.0);
  return Status::OK();
}

}  // namespace

void RegisterCopyCommand(CLI::App& app) {
  auto options = std::make_shared<CopyCommandOptions>();
  CLI::App* command = app.add_subcommand("copy", "Copy once from a source to a sink (a query into a table, ...)");
  command->footer(
      "Formats: postgresql, delta, parquet, csv, json, rate, or plugin:/path/libx.so (options after a second "
      "colon). docs/batch.md lists each format's options.");
  command->add_option("--from", options->from, "Source spec, format:key=value,... or catalog.schema.table")->required();
  command->add_option("--to", options->to, "Sink spec, format:key=value,... or catalog.schema.table")->required();
  command->add_option("--from-option", options->from_options, "A source option as key=value (repeatable)");
  command->add_option("--to-option", options->to_options, "A sink option as key=value (repeatable)");
  AddWarehouseOption(command, &options->warehouse);
  command->add_option("--checkpoint", options->checkpoint,
                      "Checkpoint directory to make the copy resumable (default: a temporary one)");
  command->callback([options] {
    Status status = Run(*options);
    std::fflush(stdout);
    if (!status.ok()) {
      std::fprintf(stderr, "sluice copy: %s\n", status.ToString().c_str());
      throw CLI::RuntimeError(1);
    }
  });
}

}  // namespace sluice::cli
