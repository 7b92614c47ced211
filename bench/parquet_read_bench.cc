// Parquet reader throughput: every column of a file decoded into sluice batches by one thread.
//
//   parquet_read_bench FILE [--columns a,b] [--batch N] [--repeat N]
//
// Times ParquetReader::Open plus reading every batch (the best of --repeat runs, default 3).
// The last line of output is machine-readable: `parquet_read rows=N seconds=S rows_per_s=R`.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "sluice/core/file_system.h"
#include "sluice/parquet/reader.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: parquet_read_bench FILE [--columns a,b] [--batch N] [--repeat N]\n");
    return 2;
  }
  const std::string path = argv[1];
  sluice::parquet::ReadOptions options;
  int repeat = 3;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--columns") {
      std::stringstream names(argv[i + 1]);
      std::string name;
      while (std::getline(names, name, ',')) options.columns.push_back(name);
    } else if (flag == "--batch") {
      options.batch_size = std::atoll(argv[i + 1]);
    } else if (flag == "--repeat") {
      repeat = std::atoi(argv[i + 1]);
    } else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  double best = 1e300;
  int64_t rows = 0;
  for (int run = 0; run < repeat; ++run) {
    const auto start = std::chrono::steady_clock::now();
    auto reader = sluice::parquet::ParquetReader::Open(*sluice::LocalFileSystem(), path);
    if (!reader.ok()) {
      std::fprintf(stderr, "%s\n", reader.status().ToString().c_str());
      return 1;
    }
    auto batches = (*reader)->NewBatchReader(options);
    if (!batches.ok()) {
      std::fprintf(stderr, "%s\n", batches.status().ToString().c_str());
      return 1;
    }
    rows = 0;
    while (true) {
      auto batch = (*batches)->Next();
      if (!batch.ok()) {
        std::fprintf(stderr, "%s\n", batch.status().ToString().c_str());
        return 1;
      }
      if (!*batch) break;
      rows += (*batch)->num_rows();
    }
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::printf("read %lld rows from %s: %.3f s, %.0f rows/s\n", static_cast<long long>(rows), path.c_str(), best,
              static_cast<double>(rows) / best);
  std::printf("parquet_read rows=%lld seconds=%.3f rows_per_s=%.0f\n", static_cast<long long>(rows), best,
              static_cast<double>(rows) / best);
  return 0;
}
