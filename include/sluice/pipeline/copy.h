// One-off copies between formats (`sluice copy`): a source spec and a sink spec, resolved against
// the warehouse and its catalog of connections, run once through the streaming engine.
//
// A spec is `format:key=value,key=value` (docs/batch.md). A value that holds commas or quotes is
// written in single quotes, with '' for a quote inside: `postgresql:connection=shop,query='SELECT
// a, b FROM t WHERE s = ''new'''`. A spec that is a bare `catalog.schema.table` names a Delta table
// of the warehouse; a `table=catalog.schema.table` option of the delta format becomes its `path`.
//
//   SLUICE_ASSIGN_OR_RETURN(CopyEndpoint from, ParseEndpointSpec("postgresql:connection=shop,dbtable=customers"));
//   SLUICE_ASSIGN_OR_RETURN(CopyEndpoint to, ParseEndpointSpec("main.bronze.customers"));
//   SLUICE_ASSIGN_OR_RETURN(CopyResult result, RunCopy(from, to, {.warehouse = "/var/lib/sluice/warehouse"}));
//
// The copy is a query with trigger `available_now`, so every sink keeps its exactly-once rules:
// most sources give one batch (a Delta table gets one commit, a PostgreSQL table one
// transaction); a `postgresql` source with `partitions_per_batch` gives a batch per that many of
// its partitions, each committed on its own, so that a copy with a kept checkpoint that is killed
// resumes at the first batch not committed. A `postgresql` sink
// without a `mode` writes in mode `errorifexists`, as a batch write does by default. A `delta`
// sink's `mode` (append, overwrite) is described in sluice/connectors/delta/formats.h; a `delta`
// source is read as connectors::MakeDeltaBatchSource says (the table's latest snapshot). A format
// `plugin:/path/libx.so` loads that plugin first (sluice/engine/plugin.h); in a spec its options
// follow the path after a second colon.
//
// Errors: INVALID_ARGUMENT (a spec that does not parse, naming the position), the catalog's
// errors for the `connection` option (CONNECTION_NOT_FOUND, ...), DATA_SOURCE_NOT_FOUND, the
// formats' option errors, and whatever the source and sink report while running. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "sluice/core/file_system.h"
#include "sluice/core/status.h"
#include "sluice/engine/registry.h"
#include "sluice/pipeline/catalog.h"
#include "sluice/storage/file_systems.h"

namespace sluice::pipeline {

struct CopyEndpoint {
  std::string format;
  std::map<std::string, std::string> options;
};

// Parses a spec as described above.
Result<CopyEndpoint> ParseEndpointSpec(std::string_view spec);

struct CopyOptions {
  std::string warehouse;  // absolute: Delta tables and the catalog of connections live there
  // Connections found before the catalog's (a project file's), by name.
  std::map<std::string, Connection> connections;
  // The copy's checkpoint; empty: a fresh temporary one, removed after a successful copy.
  std::string checkpoint;
  std::shared_ptr<FileSystem> file_system = storage::DefaultFileSystem();
};

struct CopyResult {
  int64_t rows = 0;
  double seconds = 0;
};

// The source a batch job (a copy, a batch read of the Python package, a SQL flow's bare FROM)
// reads `format` through: a
// Delta table as it is now (its latest snapshot, connectors::MakeDeltaBatchSource), not its log of
// appends; any other format as `registry` makes it. The options are validated as MakeSource does.
Result<std::unique_ptr<engine::Source>> MakeBatchSource(const engine::Registry& registry, std::string_view format,
                                                        const std::map<std::string, std::string>& options);

// Resolves both endpoints (connections, warehouse tables) and runs the copy once.
Result<CopyResult> RunCopy(const CopyEndpoint& from, const CopyEndpoint& to, const CopyOptions& options);

}  // namespace sluice::pipeline
