// Object-store figures, against moto's S3 server and Azurite (Azure Blob Storage) on loopback
// (started by the bench, as the tests start them), each beside a reference measured in the same
// run on the same store:
//   1. writing Parquet data files of a Delta table to the store, beside raw PUTs of the same bytes (one
//      PutObject per file, nothing encoded);
//   2. the requests of an uncontended commit (the conditional PUT and what precedes it), and the
//      commit rate beside bare conditional PUTs of files of the commit's size;
//   3. loading the latest snapshot of a V-version table with a checkpoint at V-10: its requests
//      (aim: a listing, the checkpoint, at most 10 GETs) and time, beside the same load on the
//      local disk.
// moto (Python) and Azurite (Node.js) are emulators: their figures are a floor for the real
// services, not theirs; the ratios and the request counts are what carry over.
//
//   storage_bench [--store s3|azure|both] [--rows N] [--commits N] [--versions N]
//
// Machine-readable lines, STORE being s3 or azure: `STORE_parquet_write ... ratio=X`,
// `STORE_commit ... requests_per_commit=R`, `STORE_snapshot ... requests=R ratio=X`.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include "sluice/core/builder.h"
#include "sluice/delta/checkpoint.h"
#include "sluice/delta/snapshot.h"
#include "sluice/delta/transaction.h"
#include "sluice/delta/writer.h"
#include "sluice/storage/s3_file_system.h"
#include "sluice/storage/azure_file_system.h"
#include "testing/azure_server.h"
#include "testing/s3_server.h"
#include "delta_log_support.h"

namespace {

using Clock = std::chrono::steady_clock;
using sluice::storage::ObjectStoreFileSystem;

double Seconds(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

void Check(const sluice::Status& status, const char* what) {
  if (!status.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, status.ToString().c_str());
    std::exit(1);
  }
}

sluice::BatchPtr Rows(int64_t first, int64_t count) {
  auto schema = sluice::ParseTypeString("struct<id:bigint,price:double,name:string>").value();
  sluice::Int64Builder ids(sluice::DataType::Long());
  sluice::DoubleBuilder prices(sluice::DataType::Double());
  sluice::BinaryBuilder names(sluice::DataType::String());
  std::mt19937_64 random(static_cast<uint64_t>(first));
  for (int64_t i = first; i < first + count; ++i) {
    ids.Append(i);
    prices.Append(static_cast<double>(random() % 100000) / 100);
    names.Append("customer-" + std::to_string(random() % 1000000));
  }
  return sluice::RecordBatch::Make(schema, {ids.Finish(), prices.Finish(), names.Finish()}, count).value();
}

void BenchParquetWrite(const char* store, const std::shared_ptr<ObjectStoreFileSystem>& fs, const std::string& root,
                       int64_t rows) {
  std::vector<sluice::BatchPtr> batches;
  for (int64_t at = 0; at < rows; at += 100'000) batches.push_back(Rows(at, std::min<int64_t>(100'000, rows - at)));
  const std::string table = root + "/write";
  auto start = Clock::now();
  Check(sluice::delta::WriteTable(fs, table, batches).status(), "write");
  const double seconds = Seconds(start);
  auto snapshot = sluice::delta::Snapshot::Load(fs, table).value();
  std::vector<std::string> files;
  int64_t bytes = 0;
  for (const auto& add : snapshot->files()) {
    files.push_back(fs->ReadFile(table + "/" + add.path).value());
    bytes += add.size;
  }
  start = Clock::now();
  for (size_t i = 0; i < files.size(); ++i) {
    Check(fs->AtomicWrite(root + "/raw/" + std::to_string(i), files[i]), "raw put");
  }
  const double reference = Seconds(start);
  // The same table on the local disk: what encoding costs without the store.
  char pattern[] = "/tmp/storage_bench_XXXXXX";
  if (mkdtemp(pattern) == nullptr) std::exit(1);
  auto local = sluice::LocalFileSystem();
  start = Clock::now();
  Check(sluice::delta::WriteTable(local, std::string(pattern) + "/write", batches).status(), "local write");
  const double local_seconds = Seconds(start);
  Check(local->DeleteRecursively(pattern), "clean up");
  std::printf(
      "%s_parquet_write rows=%lld files=%zu mib=%.1f mib_per_s=%.1f raw_put_mib_per_s=%.1f ratio=%.3f "
      "local_disk_mib_per_s=%.1f store_over_local=%.3f\n",
      store, static_cast<long long>(rows), files.size(), bytes / 1048576.0, bytes / 1048576.0 / seconds,
      bytes / 1048576.0 / reference, reference / seconds, bytes / 1048576.0 / local_seconds, local_seconds / seconds);
}

void BenchCommits(const char* store, const std::shared_ptr<ObjectStoreFileSystem>& fs, const std::string& root,
                  int commits) {
  const std::string table = root + "/appends";
  Check(sluice::delta::WriteTable(fs, table, {Rows(0, 10)}).status(), "create");
  int64_t start_requests = 0, commit_requests = 0;
  auto start = Clock::now();
  for (int i = 1; i <= commits; ++i) {
    const int64_t before = fs->requests_sent();
    auto txn = sluice::delta::Transaction::Start(fs, table);
    Check(txn.status(), "start");
    sluice::delta::AddFile add;
    add.path = "part-" + std::to_string(i) + ".parquet";
    add.size = 1000;
    add.modification_time = 1800000000000 + i;
    add.data_change = true;
    (*txn)->Add(add);
    const int64_t started = fs->requests_sent();
    Check((*txn)->Commit(sluice::delta::kOperationWrite, {{"mode", "Append"}}).status(), "commit");
    start_requests += started - before;
    commit_requests += fs->requests_sent() - started;
  }
  const double seconds = Seconds(start);
  const std::string commit = fs->ReadFile(sluice::delta::CommitPath(table, 1)).value();
  start = Clock::now();
  for (int i = 0; i < commits; ++i) Check(fs->PutIfAbsent(root + "/reference/" + std::to_string(i), commit), "put");
  const double reference = Seconds(start);
  std::printf(
      "%s_commit commits=%d commits_per_s=%.1f conditional_puts_per_s=%.1f ratio=%.3f "
      "start_requests_per_commit=%.2f requests_per_commit=%.2f\n",
      store, commits, commits / seconds, commits / reference, reference / seconds,
      static_cast<double>(start_requests) / commits, static_cast<double>(commit_requests) / commits);
}

void BenchSnapshot(const char* store, const std::shared_ptr<ObjectStoreFileSystem>& fs, const std::string& root,
                   int versions) {
  char pattern[] = "/tmp/storage_bench_XXXXXX";
  if (mkdtemp(pattern) == nullptr) std::exit(1);
  const std::string local_table = std::string(pattern) + "/history";
  const std::string store_table = root + "/history";
  auto local = sluice::LocalFileSystem();
  sluice::bench::WriteSyntheticLog({{local, local_table}, {fs, store_table}}, versions);
  for (const auto& [fs, table] : {std::pair<std::shared_ptr<sluice::FileSystem>, std::string>{local, local_table},
                                  {fs, store_table}}) {
    auto at_checkpoint = sluice::delta::Snapshot::Load(fs, table, {.version = versions - 10});
    Check(at_checkpoint.status(), "load");
    Check(sluice::delta::WriteCheckpoint(**at_checkpoint, 1800000000000), "checkpoint");
  }
  auto median_ms = [&](const std::shared_ptr<sluice::FileSystem>& loaded, const std::string& table,
                       int64_t* requests) {
    std::vector<double> times;
    for (int i = 0; i < 5; ++i) {
      const int64_t before = fs->requests_sent();
      auto start = Clock::now();
      auto snapshot = sluice::delta::Snapshot::Load(loaded, table);
      times.push_back(Seconds(start) * 1000);
      Check(snapshot.status(), "load");
      if ((*snapshot)->version() != versions - 1) std::exit(1);
      if (requests != nullptr) *requests = fs->requests_sent() - before;
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
  };
  int64_t requests = 0;
  const double store_ms = median_ms(fs, store_table, &requests);
  const double local_ms = median_ms(local, local_table, nullptr);
  std::printf("%s_snapshot versions=%d load_ms=%.1f requests=%lld local_load_ms=%.2f ratio=%.2f\n", store, versions, store_ms,
              static_cast<long long>(requests), local_ms, store_ms / local_ms);
  Check(local->DeleteRecursively(pattern), "clean up");
}

}  // namespace

int main(int argc, char** argv) {
  int64_t rows = 2'000'000;
  int commits = 200;
  int versions = 10000;
  std::string which = "both";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--rows") == 0) rows = std::atoll(argv[i + 1]);
    if (std::strcmp(argv[i], "--commits") == 0) commits = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--versions") == 0) versions = std::max(20, std::atoi(argv[i + 1]));
    if (std::strcmp(argv[i], "--store") == 0) which = argv[i + 1];
  }
  auto run = [&](const char* store, const std::string& root) {
    // A file system of its own, so that its request counter counts this bench's requests alone.
    std::shared_ptr<ObjectStoreFileSystem> fs;
    if (root.starts_with("s3://")) {
      fs = sluice::storage::NewS3FileSystem(root.substr(5), sluice::storage::S3OptionsFrom({}).value());
    } else {
      fs = sluice::storage::NewAzureFileSystem(root, sluice::storage::AzureOptionsFrom({}).value()).value();
    }
    BenchParquetWrite(store, fs, root, rows);
    BenchCommits(store, fs, root, commits);
    BenchSnapshot(store, fs, root, versions);
  };
  if (which == "s3" || which == "both") run("s3", sluice::testing::S3Server::Shared().NewBucketUri());
  if (which == "azure" || which == "both") run("azure", sluice::testing::AzureServer::Shared().NewContainerUri());
  return 0;
}
