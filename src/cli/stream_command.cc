// `sluice stream create|get|list|update|delete|run`: the streams of a warehouse's catalog.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "cli/commands.h"
#include "sluice/core/json_text.h"
#include "cli/warehouse.h"
#include "sluice/core/error_classes.h"
#include "sluice/pipeline/stream_catalog.h"
#include "sluice/storage/file_systems.h"

namespace sluice::cli {
namespace {

struct StreamArguments {
  std::string warehouse;
  std::string file;
  std::string name;
  bool include_schemas = false;
  size_t max_results = 100;
  std::string page_token;
  int metrics_port = -1;
  std::string metrics_address = "127.0.0.1";
  bool workers_group = false;
  std::string instance_id;
  bool json = false;
};

pipeline::StreamCatalog CatalogOf(const StreamArguments& arguments) {
  return pipeline::StreamCatalog(storage::DefaultFileSystem(), AbsolutePath(arguments.warehouse), &CommandRegistry());
}

[[noreturn]] void Fail(const Status& status) {
  std::fprintf(stderr, "%s\n", status.ToString().c_str());
  throw CLI::RuntimeError(1);
}

std::string Definition(const StreamArguments& arguments) {
  std::ifstream in(arguments.file, std::ios::binary);
  if (!in) Fail(Status::Error(errors::kFileNotFound, "cannot read the stream definition " + arguments.file));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void Create(const StreamArguments& arguments) {
  Result<pipeline::StreamSpec> stream = CatalogOf(arguments).Create(Definition(arguments));
  if (!stream.ok()) Fail(stream.status());
  std::printf("created stream %s, ingesting into %s\n", stream->name.c_str(), stream->table.c_str());
}

void Update(const StreamArguments& arguments) {
  Result<pipeline::StreamSpec> stream = CatalogOf(arguments).Update(Definition(arguments));
  if (!stream.ok()) Fail(stream.status());
  std::printf("updated stream %s; a running `sluice stream run %s` restarts its ingestion with it within a second\n",
              stream->name.c_str(), stream->name.c_str());
}

// A stream as JSON: {name, table, source_format, subscribe (null when a pattern or assign),
// workers_group, definition (the YAML as created, with every schema), when `with_definition`}.
std::string StreamJson(const pipeline::StoredStream& stream, bool with_definition) {
  const pipeline::StreamSpec& spec = stream.spec;
  auto subscribe = spec.source.options.find("subscribe");
  std::string json = "{\"name\":" + JsonString(spec.name) + ",\"table\":" + JsonString(spec.table) +
                     ",\"source_format\":" + JsonString(spec.source.format) + ",\"subscribe\":" +
                     (subscribe == spec.source.options.end() ? "null" : JsonString(subscribe->second)) +
                     ",\"workers_group\":" + (spec.workers_group ? JsonString(spec.WorkersGroupId()) : "null");
  if (with_definition) json += ",\"definition\":" + JsonString(stream.definition);
  return json + "}";
}

void Get(const StreamArguments& arguments) {
  Result<pipeline::StoredStream> stream = CatalogOf(arguments).Get(arguments.name);
  if (!stream.ok()) Fail(stream.status());
  if (arguments.json) {
    std::printf("%s\n", StreamJson(*stream, true).c_str());
    return;
  }
  std::printf("%s", stream->definition.c_str());
  if (!stream->definition.ends_with("\n")) std::printf("\n");
}

void List(const StreamArguments& arguments) {
  Result<std::vector<pipeline::StoredStream>> streams = CatalogOf(arguments).List(arguments.max_results,
                                                                                  arguments.page_token);
  if (!streams.ok()) Fail(streams.status());
  const bool more = streams->size() == arguments.max_results;
  if (arguments.json) {
    std::string list;
    for (const pipeline::StoredStream& stream : *streams) {
      list += (list.empty() ? "" : ",") + StreamJson(stream, arguments.include_schemas);
    }
    std::printf("{\"streams\":[%s],\"next_page_token\":%s}\n", list.c_str(),
                more ? JsonString(streams->back().spec.name).c_str() : "null");
    return;
  }
  for (const pipeline::StoredStream& stream : *streams) {
    std::printf("%s -> %s (%s)\n", stream.spec.name.c_str(), stream.spec.table.c_str(),
                stream.spec.source.options.count("subscribe") ? stream.spec.source.options.at("subscribe").c_str()
                                                              : "kafka");
    if (arguments.include_schemas) {
      for (const auto& [part, schema] : {std::pair{"key", &stream.spec.key_schema}, std::pair{"value", &stream.spec.value_schema}}) {
        if (!*schema) continue;
        if ((*schema)->from_registry()) {
          std::string options;
          for (const auto& [key, value] : (*schema)->registry_options) {
            if (key != "api_secret") options += (options.empty() ? "" : ", ") + key + ": " + value;
          }
          std::printf("  %s schema: schema_registry {%s}\n", part, options.c_str());
        } else if ((*schema)->raw_bytes()) {
          std::printf("  %s: binary\n", part);
        } else {
          std::printf("  %s schema: %s\n", part, (*schema)->schema.c_str());
        }
      }
    }
  }
  if (more) {
    std::printf("(more: --page-token %s)\n", streams->back().spec.name.c_str());
  }
}

void Delete(const StreamArguments& arguments) {
  Status status = CatalogOf(arguments).Delete(arguments.name);
  if (!status.ok()) Fail(status);
  std::printf("deleted stream %s and its ingestion table\n", arguments.name.c_str());
}

// Runs until stopped, following the stream's definition: an update restarts ingestion with the
// new one, a deletion ends the run.
void Run(const StreamArguments& arguments) {
  pipeline::StreamCatalog catalog = CatalogOf(arguments);
  Result<pipeline::StoredStream> stream = catalog.Get(arguments.name);
  if (!stream.ok()) Fail(stream.status());
  while (true) {
    pipeline::StreamCatalog::Change change = pipeline::StreamCatalog::Change::kNone;
    auto definition_changed = [&] {
      Result<pipeline::StreamCatalog::Change> now = catalog.ChangeSince(arguments.name, stream->definition);
      // A definition that cannot be read this time is read again at the next look.
      if (now.ok()) change = *now;
      return change != pipeline::StreamCatalog::Change::kNone;
    };
    pipeline::PipelineSpec pipeline = catalog.PipelineOf(stream->spec);
    for (pipeline::StreamSpec& spec : pipeline.streams) spec.workers_group = spec.workers_group || arguments.workers_group;
    pipeline::RunOptions options;
    options.instance_id = arguments.instance_id;
    if (!RunInForeground(pipeline, options, arguments.metrics_port, arguments.metrics_address, definition_changed)) {
      return;
    }
    if (change == pipeline::StreamCatalog::Change::kDeleted) {
      std::printf("stream %s was deleted: ingestion stopped\n", arguments.name.c_str());
      return;
    }
    stream = catalog.Get(arguments.name);
    if (!stream.ok()) Fail(stream.status());
    std::printf("stream %s was updated: ingestion restarts with the new definition\n", arguments.name.c_str());
    std::fflush(stdout);
  }
}

CLI::App* Subcommand(CLI::App* parent, const char* name, const char* description,
                     const std::shared_ptr<StreamArguments>& arguments) {
  CLI::App* command = parent->add_subcommand(name, description);
  AddWarehouseOption(command, &arguments->warehouse);
  return command;
}

}  // namespace

void RegisterStreamCommand(CLI::App& app) {
  auto arguments = std::make_shared<StreamArguments>();
  CLI::App* stream = app.add_subcommand("stream", "Kafka streams ingested into Delta tables, kept in the catalog");
  stream->require_subcommand(1);

  CLI::App* create = Subcommand(stream, "create", "Create a stream from a YAML definition (docs/streams.md)", arguments);
  create->add_option("FILE", arguments->file, "Stream definition (YAML)")->required();
  create->callback([arguments] { Create(*arguments); });

  CLI::App* update = Subcommand(stream, "update",
                                "Change a stream's schema_config or excluded_columns, compatibly (docs/streams.md)",
                                arguments);
  update->add_option("FILE", arguments->file, "The stream's new definition (YAML, same name)")->required();
  update->callback([arguments] { Update(*arguments); });

  CLI::App* get = Subcommand(stream, "get", "Print a stream's definition", arguments);
  get->add_option("NAME", arguments->name, "catalog.schema.stream")->required();
  get->add_flag("--json", arguments->json, "One JSON object: name, table, source, workers group and the definition");
  get->callback([arguments] { Get(*arguments); });

  CLI::App* list = Subcommand(stream, "list", "The streams of the catalog, by name", arguments);
  list->add_flag("--include-schemas", arguments->include_schemas, "Print each stream's key and value schemas");
  list->add_option("--max-results", arguments->max_results, "Most streams per page")->check(CLI::Range(1, 10000));
  list->add_option("--page-token", arguments->page_token, "List the streams after this name");
  list->add_flag("--json", arguments->json,
                 "One JSON object: {streams: [...], next_page_token} (definitions with --include-schemas)");
  list->callback([arguments] { List(*arguments); });

  CLI::App* remove = Subcommand(stream, "delete", "Delete a stream, its checkpoint and its ingestion table", arguments);
  remove->add_option("NAME", arguments->name, "catalog.schema.stream")->required();
  remove->callback([arguments] { Delete(*arguments); });

  CLI::App* run = Subcommand(stream, "run", "Run a stream's ingestion until SIGINT/SIGTERM", arguments);
  run->add_option("NAME", arguments->name, "catalog.schema.stream")->required();
  run->add_option("--metrics-port", arguments->metrics_port, "Serve Prometheus metrics and /ready at this port")
      ->check(CLI::Range(0, 65535));
  run->add_option("--metrics-address", arguments->metrics_address, "Address the metrics endpoint listens on")
      ->capture_default_str();
  run->add_flag("--workers-group", arguments->workers_group,
                "Run as one member of the stream's workers group (Kafka consumer group sluice-<stream>): every "
                "process started so shares the topic's partitions (docs/scale-out.md)");
  run->add_option("--instance-id", arguments->instance_id,
                  "This member's group.instance.id; a restart with the same id keeps its partitions");
  run->callback([arguments] { Run(*arguments); });
}

}  // namespace sluice::cli
