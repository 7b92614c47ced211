#include "cli/project_file.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
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

// A section that maps names to mappings of scalars (`connections:`, `object_stores:`), each entry
// a `noun` whose scalars are each an `item` (field, option); `shape` says what the section must be.
using ScalarMaps = std::map<std::string, std::map<std::string, std::string>>;
Result<ScalarMaps> ReadScalarMaps(const std::string& path, const YAML::Node& node, const std::string& shape,
                                  const std::string& noun, const std::string& item) {
  if (!node.IsMap()) return Invalid(path, shape);
  ScalarMaps maps;
  for (const auto& entry : node) {
    const std::string name = entry.first.as<std::string>("");
    if (!entry.second.IsMap()) return Invalid(path, noun + " `" + name + "` must be a mapping of " + item + "s");
    std::map<std::string, std::string>& values = maps[name];
    for (const auto& scalar : entry.second) {
      const std::string key = scalar.first.as<std::string>("");
      if (!scalar.second.IsScalar()) {
        return Invalid(path, fmt::format("{} `{}` of {} `{}` must be a scalar", item, key, noun, name));
      }
      values[key] = scalar.second.as<std::string>("");
    }
  }
  return maps;
}

// The `connections:` map: each `name: {type, <fields>}` checked as the catalog checks it.
Status ReadConnections(const std::string& path, const YAML::Node& node,
                       std::map<std::string, pipeline::Connection>* connections) {
  SLUICE_ASSIGN_OR_RETURN(ScalarMaps named, ReadScalarMaps(path, node, "`connections` must map names to connections",
                                                           "connection", "field"));
  for (auto& [name, fields] : named) {
    pipeline::Connection connection;
    connection.name = name;
    for (auto& [field, value] : fields) (field == "type" ? connection.type : connection.options[field]) = value;
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
  SLUICE_ASSIGN_OR_RETURN(ScalarMaps stores,
                          ReadScalarMaps(path, node, "`object_stores` must map s3://bucket[/prefix] to store options",
                                         "object store", "option"));
  for (const auto& [uri, options] : stores) {
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
