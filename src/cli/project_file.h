// The project file: defaults every command takes, so that a project's commands need no
// `--warehouse` each. It is `sluice.yaml` in the working directory, or the file `--config FILE`
// names (an error when that file is missing):
//
//   warehouse: DIR     the warehouse of every command that takes --warehouse (its tables by
//                      catalog.schema.table, its catalog of connections and streams); a relative
//                      DIR is taken from the file's directory
//   connections:       named connections, as a pipeline file's (`name: {type: postgresql | kafka,
//                      <fields>}`, secrets only as references): `sluice copy` and `sluice cdf` find
//                      a `connection` here before the warehouse's catalog
//   object_stores:     options of object stores by URI prefix (`s3://bucket[/prefix]: {endpoint,
//                      region, credentials as references, ...}`, docs/storage.md), as a pipeline
//                      file's section: every path of every command under a prefix takes them,
//                      before the environment
//
// What the command line gives wins, then $SLUICE_WAREHOUSE, then the file, then ./warehouse.
// Unknown keys, a malformed file and values of the wrong kind are INVALID_OPTIONS, naming the
// file; a connection the catalog would refuse is refused with the catalog's error class, store
// options the store would refuse with the store's (INVALID_STORAGE_URI, CONNECTION_LITERAL_SECRET,
// UNRESOLVED_SECRET), a secret never echoed.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "sluice/core/status.h"
#include "sluice/pipeline/catalog.h"

namespace CLI {
class App;
}

namespace sluice::cli {

struct ProjectDefaults {
  std::string path;                      // the file read; empty when there is none
  std::optional<std::string> warehouse;  // absolute
  std::map<std::string, pipeline::Connection> connections;  // validated, by name
};


// Reads the project file `argv` points to (`--config FILE` or `--config=FILE`, before or after the
// command), else ./sluice.yaml when it exists, and configures the object stores it names for the
// whole process. Call once, before the commands are registered.
Result<ProjectDefaults> LoadProjectFile(int argc, char** argv);
// The defaults LoadProjectFile read (none before it ran).
const ProjectDefaults& Project();
// Adds `--config FILE` to `app`, so that the parser accepts what LoadProjectFile read.
void AddConfigOption(CLI::App* app);

}  // namespace sluice::cli
