#include "cli/project_file.h"

#include <CLI/CLI.hpp>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <string_view>

#include "sluice/core/error_classes.h"
#include "sluice/storage/file_systems.h"

namespace sluice::cli {
namespace {

ProjectDefaults& Defaults() {
  static ProjectDefaults defaults;
  return defaults;
}

Status Invalid(const std::string& path, const std::string& detail) {
  return Status::Error(errors::kInvalidOptions, "project file " + path + ": " + detail);
}

// The `connections:` map: each `name: {type, <fields>}` checked as the catalog checks it.
Status ReadConnections(const std::string& path, const YAML::Node& node,
                       std::map<std::string, pipeline::Connection>* connections) {
  if (!node.IsMap()) return Invalid(path, "`connections` must map names to connections");
  for (const auto& entry : node) {
    pipeline::Connection connection;
    connection.name = entry.first.as<std::string>("");
    if (!entry.second.IsMap()) return Invalid(path, "connection `" + connection.name + "` must be a mapping of fields");
    for (const auto& field : entry.second) {
      if (!field.second.IsScalar()) {
        return Invalid(path, "field `" + field.first.as<std::string>("") + "` of connection `" + connection.name +
                                 "` must be a scalar");
      }
      const std::string name = field.first.as<std::string>("");
      (name == "type" ? connection.type : connection.options[name]) = field.second.as<std::string>("");
    }
    Result<pipeline::Connection> valid = pipeline::ValidateConnection(connection);
    if (!valid.ok()) return valid.status().WithContext("project file " + path);
    const std::string connection_name = valid->name;  // (the right side of `=` is evaluated first)
    (*connections)[connection_name] = std::move(valid).value();
  }
  return Status::OK();
}

// The `object_stores:` map (`s3://bucket[/prefix]: {option: value}`), each configured for this
// process as a pipeline's section configures it, so that every command reaches those stores.
Status ConfigureObjectStores(const std::string& path, const YAML::Node& node) {
  if (!node.IsMap()) return Invalid(path, "`object_stores` must map s3://bucket[/prefix] to store options");
  for (const auto& entry : node) {
    const std::string uri = entry.first.as<std::string>("");
    if (!entry.second.IsMap()) return Invalid(path, "object store `" + uri + "` must be a mapping of options");
    std::map<std::string, std::string> options;
    for (const auto& option : entry.second) {
      if (!option.second.IsScalar()) {
        return Invalid(path, "option `" + option.first.as<std::string>("") + "` of `" + uri + "` must be a scalar");
      }
      options[option.first.as<std::string>("")] = option.second.as<std::string>("");
    }
    Status configured = storage::ConfigureObjectStore(uri, options);
    if (!configured.ok()) return configured.WithContext("project file " + path + ", object_stores." + uri);
  }
  return Status::OK();
}

}  // namespace

Result<ProjectDefaults> LoadProjectFile(int argc, char** argv) {
  std::optional<std::string> given;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--config") {
      if (i + 1 >= argc) return Status::Error(errors::kInvalidOptions, "--config needs a file");
      given = argv[i + 1];
    } else if (arg.starts_with("--config=")) {
      given = std::string(arg.substr(9));
    }
  }
  namespace fs = std::filesystem;
  const std::string path = given ? *given : "sluice.yaml";
  std::error_code error;
  if (!fs::is_regular_file(path, error)) {
    if (given) return Invalid(path, "no such file");
    return Defaults() = ProjectDefaults{};
  }
  ProjectDefaults defaults;
  defaults.path = fs::absolute(path).lexically_normal().string();
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    return Invalid(defaults.path, std::string("not YAML: ") + e.what());
  }
  if (root.IsNull()) return Defaults() = defaults;  // an empty file
  if (!root.IsMap()) return Invalid(defaults.path, "expected a mapping of defaults, such as `warehouse: ./warehouse`");
  for (const auto& entry : root) {
    const std::string key = entry.first.as<std::string>("");
    if (key == "connections") {
      SLUICE_RETURN_IF_ERROR(ReadConnections(defaults.path, entry.second, &defaults.connections));
      continue;
    }
    if (key == "object_stores") {
      SLUICE_RETURN_IF_ERROR(ConfigureObjectStores(defaults.path, entry.second));
      continue;
    }
    if (key != "warehouse") {
      return Invalid(defaults.path,
                     "unknown key `" + key + "`; the file takes `warehouse`, `connections` and `object_stores`");
    }
    if (!entry.second.IsScalar() || entry.second.as<std::string>("").empty()) {
      return Invalid(defaults.path, "`warehouse` must be a directory, such as ./warehouse");
    }
    const fs::path directory(entry.second.as<std::string>());
    defaults.warehouse = directory.is_absolute() || directory.string().find("://") != std::string::npos
                             ? directory.string()
                             : (fs::path(defaults.path).parent_path() / directory).lexically_normal().string();
  }
  return Defaults() = defaults;
}

const ProjectDefaults& Project() { return Defaults(); }

void AddConfigOption(CLI::App* app) {
  // Read before the commands were made (LoadProjectFile); kept here so that the parser takes it.
  app->add_option("--config", "Project file of defaults (default: ./sluice.yaml when present)");
}

}  // namespace sluice::cli
