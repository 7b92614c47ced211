// The warehouse directory of the commands that take `--warehouse DIR`.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace sluice::cli {

// Adds `--warehouse DIR` to `command`, storing into `*warehouse` the default first: the
// SLUICE_WAREHOUSE environment variable when set, else ./warehouse.
void AddWarehouseOption(CLI::App* command, std::string* warehouse);

// `warehouse` as an absolute, normalized path (relative paths are taken from the working
// directory), as the FileSystem interface requires.
std::string AbsoluteWarehouse(const std::string& warehouse);

}  // namespace sluice::cli
