// Parquet writer throughput: 10 million rows of (long id, low-cardinality string, double,
// timestamp, high-cardinality string), snappy, written to a local file by one thread.
//
//   parquet_write_bench [--rows N] [--out PATH] [--codec snappy|zstd|uncompressed] [--batch N]
//
// Only ParquetWriter::Write and Close are timed; the batches are built beforehand, batch by
// batch. The rows are defined so that a SQL engine can generate the same data:
//   id        BIGINT     i                                   (i = 0 .. N-1)
//   category  VARCHAR    'category_' || (i % 16)
//   amount    DOUBLE     (i % 100003) * 0.37
//   ts        TIMESTAMP  1704067200000000 + i * 1000 microseconds since the epoch (UTC)
//   user_key  VARCHAR    'user_' || ((i * 2654435761) % 4294967296)   (distinct for every i)
// The last line of output is machine-readable: `parquet_write rows=N seconds=S cpu_seconds=C
// rows_per_s=R bytes=B` (rows_per_s from wall time; CPU time is steadier on a busy machine).
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "sluice/core/builder.h"
#include "sluice/core/file_system.h"
#include "sluice/parquet/writer.h"

namespace {

using sluice::BatchPtr;
using sluice::TypePtr;

TypePtr BenchSchema() {
  return *sluice::DataType::Struct({
      sluice::Field{"id", sluice::DataType::Long(), true, "{}"},
      sluice::Field{"category", sluice::DataType::String(), true, "{}"},
      sluice::Field{"amount", sluice::DataType::Double(), true, "{}"},
      sluice::Field{"ts", sluice::DataType::Timestamp(), true, "{}"},
      sluice::Field{"user_key", sluice::DataType::String(), true, "{}"},
  });
}

BatchPtr MakeBatch(const TypePtr& schema, int64_t first, int64_t rows) {
  sluice::Int64Builder id(sluice::DataType::Long());
  sluice::BinaryBuilder category(sluice::DataType::String());
  sluice::DoubleBuilder amount(sluice::DataType::Double());
  sluice::Int64Builder ts(sluice::DataType::Timestamp());
  sluice::BinaryBuilder user(sluice::DataType::String());
  for (auto* b : std::initializer_list<sluice::ColumnBuilder*>{&id, &category, &amount, &ts, &user}) b->Reserve(rows);
  char buf[32];
  for (int64_t i = first; i < first + rows; ++i) {
    id.Append(i);
    std::memcpy(buf, "category_", 9);
    char* end = std::to_chars(buf + 9, buf + sizeof(buf), i % 16).ptr;
    category.Append(std::string_view(buf, end - buf));
    amount.Append(static_cast<double>(i % 100003) * 0.37);
    ts.Append(1704067200000000 + i * 1000);
    std::memcpy(buf, "user_", 5);
    uint64_t key = (static_cast<uint64_t>(i) * 2654435761ull) % 4294967296ull;
    end = std::to_chars(buf + 5, buf + sizeof(buf), key).ptr;
    user.Append(std::string_view(buf, end - buf));
  }
  return *sluice::RecordBatch::Make(schema, {id.Finish(), category.Finish(), amount.Finish(), ts.Finish(), user.Finish()},
                                    rows);
}

// CPU time of this process: on a shared machine it moves less than wall time.
double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t rows = 10'000'000;
  int64_t batch_rows = 64 * 1024;
  std::string out = "/tmp/sluice_parquet_write_bench.parquet";
  std::string codec = "snappy";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--rows") {
      rows = std::atoll(argv[i + 1]);
    } else if (flag == "--out") {
      out = argv[i + 1];
    } else if (flag == "--codec") {
      codec = argv[i + 1];
    } else if (flag == "--batch") {
      batch_rows = std::atoll(argv[i + 1]);
    } else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  sluice::parquet::WriterOptions options;
  if (codec == "zstd") {
    options.compression = sluice::parquet::CompressionCodec::kZstd;
  } else if (codec == "uncompressed") {
    options.compression = sluice::parquet::CompressionCodec::kUncompressed;
  } else if (codec != "snappy") {
    std::fprintf(stderr, "unknown codec %s\n", codec.c_str());
    return 2;
  }

  TypePtr schema = BenchSchema();
  auto file = sluice::LocalFileSystem()->OpenForWrite(out);
  if (!file.ok()) {
    std::fprintf(stderr, "%s\n", file.status().ToString().c_str());
    return 1;
  }
  auto writer = sluice::parquet::ParquetWriter::Open(std::move(*file), schema, options);
  if (!writer.ok()) {
    std::fprintf(stderr, "%s\n", writer.status().ToString().c_str());
    return 1;
  }
  std::chrono::steady_clock::duration timed{};
  double cpu = 0;
  for (int64_t first = 0; first < rows; first += batch_rows) {
    BatchPtr batch = MakeBatch(schema, first, std::min(batch_rows, rows - first));
    auto start = std::chrono::steady_clock::now();
    double cpu_start = CpuSeconds();
    sluice::Status s = (*writer)->Write(*batch);
    cpu += CpuSeconds() - cpu_start;
    timed += std::chrono::steady_clock::now() - start;
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      return 1;
    }
  }
  auto start = std::chrono::steady_clock::now();
  double cpu_start = CpuSeconds();
  auto stats = (*writer)->Close();
  cpu += CpuSeconds() - cpu_start;
  timed += std::chrono::steady_clock::now() - start;
  if (!stats.ok()) {
    std::fprintf(stderr, "%s\n", stats.status().ToString().c_str());
    return 1;
  }
  double seconds = std::chrono::duration<double>(timed).count();
  std::printf("wrote %lld rows (%s) to %s: %.3f s (%.3f s CPU), %.0f rows/s, %lld bytes\n",
              static_cast<long long>(rows), codec.c_str(), out.c_str(), seconds, cpu,
              static_cast<double>(rows) / seconds, static_cast<long long>(stats->file_size));
  std::printf("parquet_write rows=%lld seconds=%.3f cpu_seconds=%.3f rows_per_s=%.0f bytes=%lld\n",
              static_cast<long long>(rows), seconds, cpu, static_cast<double>(rows) / seconds,
              static_cast<long long>(stats->file_size));
  return 0;
}
