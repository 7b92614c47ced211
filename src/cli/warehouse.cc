#include "cli/warehouse.h"

#include <CLI/CLI.hpp>

#include <cstdlib>

namespace sluice::cli {

void AddWarehouseOption(CLI::App* command, std::string* warehouse) {
  const char* from_environment = std::getenv("SLUICE_WAREHOUSE");
  *warehouse = from_environment != nullptr && *from_environment != '\0' ? from_environment : "warehouse";
  command->add_option("--warehouse", *warehouse, "Warehouse directory (default: $SLUICE_WAREHOUSE, else ./warehouse)");
}

}  // namespace sluice::cli
