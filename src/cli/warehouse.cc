#include "cli/warehouse.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "cli/project_file.h"
#include "sluice/pipeline/pipeline_spec.h"

namespace sluice::cli {

void AddWarehouseOption(CLI::App* command, std::string* warehouse) {
  const char* from_environment = std::getenv("SLUICE_WAREHOUSE");
  if (from_environment != nullptr && *from_environment != '\0') {
    *warehouse = from_environment;
  } else {
    *warehouse = Project().warehouse.value_or("warehouse");
  }
  command->add_option("--warehouse", *warehouse,
                      "Warehouse directory (default: $SLUICE_WAREHOUSE, else the project file's, else ./warehouse)");
}

void AddTableArguments(CLI::App* command, std::string* table, std::string* warehouse) {
  command->add_option("TABLE", *table, "The table: its directory, or catalog.schema.table in the --warehouse")->required();
  AddWarehouseOption(command, warehouse);
}

Result<std::string> TablePathArgument(const std::string& table, const std::string& warehouse) {
  const bool catalog_name = table.find('/') == std::string::npos && std::count(table.begin(), table.end(), '.') == 2 &&
                            !std::filesystem::exists(table);
  if (!catalog_name) return AbsolutePath(table);
  pipeline::PipelineSpec spec;
  spec.warehouse = AbsolutePath(warehouse);
  return spec.TablePath(table);
}

}  // namespace sluice::cli
