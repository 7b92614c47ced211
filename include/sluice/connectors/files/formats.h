// The file formats `parquet`, `csv` and `json` (JSON lines): batch sources and sinks over files
// of the query's file system (docs/batch.md).
//
// Source: `path` is one file or a directory whose files (names not starting with `_` or `.`,
// in name order) are read. The data is fixed, like the postgresql batch source's: offsets
// {"read":false} and {"read":true}, so trigger `once` reads everything in one batch. The schema is
// learned at Open(): a parquet file's own (every file must have the first file's schema), the
// `schema` option for csv and json (a DDL string, "id long, name string, price decimal(10,2)");
// a csv without `schema` has string columns named by its header, or _c0, _c1, ... Each file is
// read whole into memory.
//
// Sink: writes one file per batch into the directory `path`, named
// part-<batch id>-<query id>.<parquet|csv|json>, so a replayed batch rewrites its own file.
// `mode` decides what happens to a directory that already holds data files of other queries,
// on the run's first batch:
//   errorifexists (default; also `error`, `default`)  FILE_ALREADY_EXISTS, nothing written
//   append      the files are added beside the others
//   overwrite   the batch's file is written first, then every other data file removed
//   ignore      nothing is written for the whole run
// A directory holding only this query's files (a replay after a crash) counts as empty.
//
// Options (names as Spark's readers and writers spell them):
//   all           path (required); mode (sinks)
//   parquet       compression (sink): none, snappy (default), gzip, zstd
//   csv           schema (source); header (false); sep or delimiter (","); quote ("\"");
//                 escape ("\\"); nullValue ("")
//   json          schema (source, required)
// Errors: INVALID_OPTIONS (a separator, quote or escape that is not one character, `sep` and
// `delimiter` both given, a bad `schema`), FILE_NOT_FOUND (no such path, or a directory without
// files for parquet), MALFORMED_CSV_RECORD / MALFORMED_JSON_RECORD naming the file and line,
// PARQUET_CORRUPT_FILE, DATATYPE_MISMATCH (a parquet file whose schema differs from the first's),
// IO_ERROR.

#pragma once

#include <span>

#include "sluice/engine/registry.h"

namespace sluice::connectors {

// Registers the sources and sinks `parquet`, `csv` and `json`. INVALID_ARGUMENT when a name is
// taken already.
Status RegisterFileFormats(engine::Registry* registry);

}  // namespace sluice::connectors
