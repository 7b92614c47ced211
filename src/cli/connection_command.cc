// `sluice connection create|list|describe|delete`: the named connections of a warehouse's catalog.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "sluice/core/json_text.h"
#include "cli/warehouse.h"
#include "sluice/core/error_classes.h"
#include "sluice/pipeline/catalog.h"
#include "sluice/storage/file_systems.h"

namespace sluice::cli {
namespace {

struct ConnectionOptions {
  std::string warehouse;
  std::string name;
  std::string type;
  std::vector<std::string> fields;  // key=value
  bool json = false;
};

void Print(const std::string& text) { std::fwrite(text.data(), 1, text.size(), stdout); }

pipeline::Catalog CatalogOf(const ConnectionOptions& options) {
  return pipeline::Catalog(storage::DefaultFileSystem(), AbsolutePath(options.warehouse));
}

Status RunCreate(const ConnectionOptions& options) {
  pipeline::Connection connection{options.name, options.type, {}};
  for (const std::string& field : options.fields) {
    size_t equals = field.find('=');
    if (equals == std::string::npos || equals == 0) {
      return Status::Error(errors::kInvalidArgument, "--option `" + field.substr(0, field.find('=')) +
                                                         "` is not key=value (write --option host=db.internal)");
    }
    if (!connection.options.emplace(field.substr(0, equals), field.substr(equals + 1)).second) {
      return Status::Error(errors::kInvalidArgument, "--option `" + field.substr(0, equals) + "` is given twice");
    }
  }
  SLUICE_RETURN_IF_ERROR(CatalogOf(options).Create(connection));
  Print("created connection " + options.name + "\n");
  return Status::OK();
}

// One line per connection: name, type and where it points (never a secret).
Status RunList(const ConnectionOptions& options) {
  std::vector<Status> unreadable;
  SLUICE_ASSIGN_OR_RETURN(std::vector<pipeline::Connection> connections, CatalogOf(options).List(&unreadable));
  std::string out = options.json ? "{\"connections\":[" : "name\ttype\ttarget\n";
  for (const pipeline::Connection& connection : connections) {
    auto field = [&](const char* key, const char* fallback) {
      auto it = connection.options.find(key);
      return it == connection.options.end() ? std::string(fallback) : it->second;
    };
    std::string target = connection.type == "kafka"
                             ? field("bootstrap_servers", "")
                             : field("host", "127.0.0.1") + ":" + field("port", "5432") + "/" + field("database", "postgres");
    if (options.json) {
      out += std::string(out.back() == '[' ? "" : ",") + "{\"name\":" + JsonString(connection.name) + ",\"type\":" +
             JsonString(connection.type) + ",\"target\":" + JsonString(target) + "}";
    } else {
      out += connection.name + "\t" + connection.type + "\t" + target + "\n";
    }
  }
  Print(options.json ? out + "]}\n" : out);
  if (unreadable.empty()) return Status::OK();
  for (size_t i = 1; i < unreadable.size(); ++i) std::fprintf(stderr, "%s\n", unreadable[i].ToString().c_str());
  return unreadable[0];
}

Status RunDescribe(const ConnectionOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(pipeline::Connection connection, CatalogOf(options).Get(options.name));
  Print(options.json ? pipeline::DescribeJson(connection) + "\n" : pipeline::Describe(connection));
  return Status::OK();
}

Status RunDelete(const ConnectionOptions& options) {
  SLUICE_RETURN_IF_ERROR(CatalogOf(options).Delete(options.name));
  Print("deleted connection " + options.name + "\n");
  return Status::OK();
}

CLI::App* AddCommand(CLI::App* parent, const std::string& name, const std::string& description,
                     Status (*run)(const ConnectionOptions&), const std::shared_ptr<ConnectionOptions>& options) {
  CLI::App* command = parent->add_subcommand(name, description);
  AddWarehouseOption(command, &options->warehouse);
  command->callback([options, run, name] {
    Status status = run(*options);
    std::fflush(stdout);
    if (!status.ok()) {
      std::fprintf(stderr, "sluice connection %s: %s\n", name.c_str(), status.ToString().c_str());
      throw CLI::RuntimeError(1);
    }
  });
  return command;
}

}  // namespace

void RegisterConnectionCommand(CLI::App& app) {
  CLI::App* connection = app.add_subcommand("connection", "Named connections kept in the warehouse's catalog");
  connection->require_subcommand(1);
  auto options = std::make_shared<ConnectionOptions>();

  CLI::App* create = AddCommand(connection, "create", "Create a connection", RunCreate, options);
  create->add_option("NAME", options->name, "Connection name (letters, digits, _)")->required();
  create->add_option("--type", options->type, "postgresql or kafka")->required();
  create->add_option("-o,--option", options->fields,
                     "A field as key=value, repeated: host, port, database, user, password=${env:NAME}, ...");

  AddCommand(connection, "list", "List the connections", RunList, options)
      ->add_flag("--json", options->json, "One JSON object: {connections: [{name, type, target}]}");
  CLI::App* describe = AddCommand(connection, "describe", "Show a connection, secrets redacted", RunDescribe, options);
  describe->add_option("NAME", options->name, "Connection name")->required();
  describe->add_flag("--json", options->json, "One JSON object: {name, type, options, secrets (their references)}");
  AddCommand(connection, "delete", "Delete a connection", RunDelete, options)
      ->add_option("NAME", options->name, "Connection name")
      ->required();
}

}  // namespace sluice::cli
