// Generator throughput, one thread: a Parquet file with columns k (bigint) and items
// (array<bigint>) read batch by batch through the flow operator
//   SELECT k, explode(items) AS item
// (engine::ProjectOperator with a generator), the output rows counted and summed so that every
// generated value is touched. Times reading plus exploding (the best of --repeat runs, default 3)
// and reading alone. Its last line is machine-readable:
// `explode input_rows=N output_rows=M seconds=S read_seconds=R`.
//
//   explode_bench FILE [--repeat N]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "sluice/core/file_system.h"
#include "sluice/engine/relational_operators.h"
#include "sluice/parquet/reader.h"

namespace {

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

void Check(const sluice::Status& status) {
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.ToString().c_str());
    std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: explode_bench FILE [--repeat N]\n");
    return 2;
  }
  const std::string path = argv[1];
  const int repeat = argc >= 4 && std::string(argv[2]) == "--repeat" ? std::atoi(argv[3]) : 3;
  double best = 1e300, best_read = 1e300;
  int64_t input_rows = 0, output_rows = 0, checksum = 0;
  for (int run = 0; run < repeat; ++run) {
    for (bool explode : {false, true}) {
      const auto start = std::chrono::steady_clock::now();
      auto reader = sluice::parquet::ParquetReader::Open(*sluice::LocalFileSystem(), path);
      Check(reader.status());
      auto batches = (*reader)->NewBatchReader({});
      Check(batches.status());
      std::vector<sluice::expr::NamedExpression> items = {sluice::expr::ParseNamedExpression("k").value(),
                                                          sluice::expr::ParseNamedExpression("explode(items) AS item").value()};
      sluice::engine::ProjectOperator generate(std::move(items), {}, "select");
      if (explode) Check(generate.Bind((*reader)->schema()).status());
      input_rows = output_rows = checksum = 0;
      while (true) {
        auto batch = (*batches)->Next();
        Check(batch.status());
        if (!*batch) break;
        input_rows += (*batch)->num_rows();
        if (!explode) continue;
        auto out = generate.Push(sluice::engine::BatchStart{}, *batch);
        Check(out.status());
        output_rows += (*out)->num_rows();
        const sluice::Column& item = *(*out)->column(1);
        for (int64_t row = 0; row < item.length; ++row) checksum += item.IsNull(row) ? 0 : item.Value<int64_t>(row);
      }
      (explode ? best : best_read) = std::min(explode ? best : best_read, Seconds(start));
    }
  }
  std::printf("explode input_rows=%lld output_rows=%lld checksum=%lld seconds=%.3f read_seconds=%.3f\n",
              static_cast<long long>(input_rows), static_cast<long long>(output_rows), static_cast<long long>(checksum),
              best, best_read);
  return 0;
}
