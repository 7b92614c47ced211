// The warehouse directory of the commands that take `--warehouse DIR`, and the one way the
// command line turns a path it is given into the absolute one the FileSystem interface takes.
#pragma once

#include <string>

#include "sluice/core/status.h"
#include "sluice/storage/file_systems.h"

namespace CLI {
class App;
}

namespace sluice::cli {

// Adds `--warehouse DIR` to `command`, storing into `*warehouse` the default first: the
// SLUICE_WAREHOUSE environment variable when set, else the project file's (project_file.h), else
// ./warehouse.
void AddWarehouseOption(CLI::App* command, std::string* warehouse);

// Adds the positional TABLE, a Delta table's directory (or URI) or `catalog.schema.table` of the
// warehouse, with `--warehouse` (AddWarehouseOption).
void AddTableArguments(CLI::App* command, std::string* table, std::string* warehouse);

// The path of a table given on the command line: `catalog.schema.table` (three names, no '/') is
// <warehouse>/catalog/schema/table unless a directory of that name is here; anything else is a
// path (AbsolutePath). INVALID_PIPELINE for a catalog name with a part that cannot be a folder.
Result<std::string> TablePathArgument(const std::string& table, const std::string& warehouse);

// Paths given to commands become the form the FileSystem interface takes (an object store's URI,
// or an absolute local path; relative paths are taken from the working directory).
using storage::AbsolutePath;

}  // namespace sluice::cli
