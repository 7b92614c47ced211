// OPTIMIZE (bin-packing compaction) of a Delta table of many small files, one thread.
//
//   optimize_bench make TABLE [--files N] [--rows R]   a table of N appends of R rows (one file each)
//   optimize_bench run TABLE                           compacts it, prints its figure
//
// `run` prints `op=optimize seconds=S files_removed=N files_added=M rows=R`.
// bench/optimize_compare.sh makes the table once and compacts a copy of it with sluice and one with
// delta-rs.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "bench_support.h"
#include "sluice/core/builder.h"
#include "sluice/core/file_system.h"
#include "sluice/delta/maintenance.h"
#include "sluice/delta/snapshot.h"
#include "sluice/delta/writer.h"

namespace sluice::bench {
namespace {

// R rows (id, qty, name) with ids from `first`.
BatchPtr Rows(int64_t first, int64_t rows) {
  auto schema = ParseTypeString("struct<id:bigint,qty:bigint,name:string>").value();
  Int64Builder ids(DataType::Long());
  Int64Builder qtys(DataType::Long());
  BinaryBuilder names(DataType::String());
  for (int64_t id = first; id < first + rows; ++id) {
    ids.Append(id);
    qtys.Append(id % 1000);
    names.Append("item-" + std::to_string(id % 5000));
  }
  return RecordBatch::Make(schema, {ids.Finish(), qtys.Finish(), names.Finish()}, rows).value();
}

void Make(const std::string& table, int files, int64_t rows) {
  auto fs = LocalFileSystem();
  // Few checkpoints: the bench is about the files, not the log.
  delta::WriteOptions options{.table_properties = {{"delta.checkpointInterval", "100"}}};
  for (int file = 0; file < files; ++file) {
    Die(delta::WriteTable(fs, table, {Rows(file * rows, rows)}, options).status(), "append");
  }
}

void Run(const std::string& table) {
  auto fs = LocalFileSystem();
  auto start = std::chrono::steady_clock::now();
  auto result = delta::Optimize(fs, table, {});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  Die(result.status(), "optimize");
  auto snapshot = delta::Snapshot::Load(fs, table);
  Die(snapshot.status(), "load");
  std::printf("op=optimize seconds=%.3f files_removed=%lld files_added=%lld rows=%lld\n", seconds,
              static_cast<long long>(result->num_files_removed), static_cast<long long>(result->num_files_added),
              static_cast<long long>((*snapshot)->num_records().value_or(-1)));
}

}  // namespace
}  // namespace sluice::bench

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: optimize_bench make|run TABLE [--files N] [--rows R]\n");
    return 2;
  }
  int files = 10000;
  int64_t rows = 100;
  for (int i = 3; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--files") == 0) files = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--rows") == 0) rows = std::atoll(argv[i + 1]);
  }
  if (std::strcmp(argv[1], "make") == 0) {
    sluice::bench::Make(argv[2], files, rows);
  } else {
    sluice::bench::Run(argv[2]);
  }
  return 0;
}
