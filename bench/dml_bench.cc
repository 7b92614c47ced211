// MERGE and DELETE on a Delta table, one thread, copy-on-write and with deletion vectors (`_dv`):
// the table is made from a Parquet file (FILES data files), then each operation runs on a fresh
// copy of it.
//
//   dml_bench TARGET.parquet SPREAD.parquet CLUSTERED.parquet [--files N]
//
// SPREAD and CLUSTERED are MERGE sources (id, qty, name as the target): rows whose ids are spread
// over the whole table (every file touched) or clustered in one range of ids (few files touched).
// Prints one line per operation: `op=... seconds=... updated=... inserted=... deleted=...
// files_removed=...`. bench/dml_duckdb_compare.sh runs it beside DuckDB.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "bench_support.h"
#include "sluice/core/compute.h"
#include "sluice/delta/dml.h"
#include "sluice/delta/writer.h"
#include "sluice/expr/dml.h"
#include "sluice/parquet/reader.h"

namespace sluice::bench {
namespace {

BatchPtr ReadParquet(const std::string& path) {
  auto fs = LocalFileSystem();
  auto reader = parquet::ParquetReader::Open(*fs, path);
  Die(reader.status(), path.c_str());
  auto batch = (*reader)->ReadAll();
  Die(batch.status(), path.c_str());
  return *batch;
}

delta::MergeSpec Upsert() {
  auto parsed = expr::ParseDml(
      "MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *");
  Die(parsed.status(), "statement");
  const auto& merge = std::get<expr::MergeStatement>(*parsed);
  return delta::MergeSpec{.target_alias = merge.target_alias, .source_alias = merge.source_alias, .on = merge.on,
                          .clauses = merge.clauses};
}

void Report(const char* op, double seconds, const delta::DmlResult& result) {
  std::printf("op=%s seconds=%.3f updated=%lld inserted=%lld deleted=%lld copied=%lld files_removed=%lld\n", op,
              seconds, static_cast<long long>(result.num_rows_updated), static_cast<long long>(result.num_rows_inserted),
              static_cast<long long>(result.num_rows_deleted), static_cast<long long>(result.num_rows_copied),
              static_cast<long long>(result.num_files_removed));
  std::fflush(stdout);
}

int Main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: dml_bench TARGET.parquet SPREAD.parquet CLUSTERED.parquet [--files N]\n");
    return 2;
  }
  int64_t files = 80;
  for (int i = 4; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--files") files = std::atoll(argv[i + 1]);
  }
  auto fs = LocalFileSystem();
  const std::string dir = FreshDirectory("sluice-dml-bench");
  BatchPtr target = ReadParquet(argv[1]);
  const int64_t per_file = (target->num_rows() + files - 1) / files;
  // The same table twice: copy-on-write, and with deletion vectors enabled.
  for (const char* base : {"base", "base_dv"}) {
    delta::WriteOptions options;
    if (std::string(base) == "base_dv") options.table_properties = {{"delta.enableDeletionVectors", "true"}};
    for (int64_t offset = 0; offset < target->num_rows(); offset += per_file) {
      Die(delta::WriteTable(fs, dir + "/" + base,
                            {Slice(target, offset, std::min(per_file, target->num_rows() - offset))}, options)
              .status(),
          "table");
    }
  }
  auto fresh = [&](const std::string& name) {
    const std::string path = dir + "/" + name;
    const bool dv = name.ends_with("_dv");
    std::filesystem::copy(dir + (dv ? "/base_dv" : "/base"), path, std::filesystem::copy_options::recursive);
    return path;
  };
  auto timed = [](auto&& op) {
    const auto start = std::chrono::steady_clock::now();
    auto result = op();
    Die(result.status(), "operation");
    return std::make_pair(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), *result);
  };
  const delta::MergeSpec upsert = Upsert();
  for (const auto& [name, path] : {std::pair{"merge_spread", argv[2]}, std::pair{"merge_clustered", argv[3]},
                                   std::pair{"merge_spread_dv", argv[2]}, std::pair{"merge_clustered_dv", argv[3]}}) {
    const std::string table = fresh(name);
    BatchPtr source = ReadParquet(path);
    auto [seconds, result] = timed([&] { return delta::MergeInto(fs, table, {source}, upsert); });
    Report(name, seconds, result);
  }
  for (const char* name : {"delete_spread", "delete_spread_dv"}) {
    const std::string table = fresh(name);
    auto [seconds, result] = timed(
        [&] { return delta::DeleteFromTable(fs, table, {.where = expr::Expression::Parse("id % 100 = 50").value()}); });
    Report(name, seconds, result);
  }
  std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace
}  // namespace sluice::bench

int main(int argc, char** argv) { return sluice::bench::Main(argc, argv); }
