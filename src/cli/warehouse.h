// The warehouse directory of the commands that take `--warehouse DIR`, and the one way the
// command line turns a path it is given into the absolute one the FileSystem interface takes.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace sluice::cli {

// Adds `--warehouse DIR` to `command`, storing into `*warehouse` the default first: the
// SLUICE_WAREHOUSE environment variable when set, else ./warehouse.
void AddWarehouseOption(CLI::App* command, std::string* warehouse);

// `path` as an absolute, normalized path without a trailing `/` (relative paths are taken from
// the working directory), as the FileSystem interface requires.
std::string AbsolutePath(const std::string& path);

}  // namespace sluice::cli
