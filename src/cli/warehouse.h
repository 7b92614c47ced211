// The warehouse directory of the commands that take `--warehouse DIR`, and the one way the
// command line turns a path it is given into the absolute one the FileSystem interface takes.
#pragma once

#include <string>

#include "sluice/storage/file_systems.h"

namespace CLI {
class App;
}

namespace sluice::cli {

// Adds `--warehouse DIR` to `command`, storing into `*warehouse` the default first: the
// SLUICE_WAREHOUSE environment variable when set, else ./warehouse.
void AddWarehouseOption(CLI::App* command, std::string* warehouse);

// Paths given to commands become the form the FileSystem interface takes (an object store's URI,
// or an absolute local path; relative paths are taken from the working directory).
using storage::AbsolutePath;

}  // namespace sluice::cli
