// Delta log figures on local disk:
//   1. commits per second of small appends (10 rows each, one Parquet file per commit, a
//      checkpoint every 10 commits), beside the rate of bare put-if-absent writes of files of the
//      same size as the commits (the storage primitive a commit costs at least);
//   2. the time to load the latest snapshot of a 10,000-version table with a checkpoint at
//      version 9,990 (one add per commit), beside a full replay of its 10,000 JSON commits.
//
//   delta_bench [--dir PATH] [--commits N] [--versions N]
//
// The last two lines are machine-readable: `delta_commits commits=N seconds=S commits_per_s=R
// reference_per_s=P ratio=X` and `delta_snapshot versions=N load_ms=L replay_ms=R ratio=X`.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

#include "sluice/core/builder.h"
#include "sluice/core/file_system.h"
#include "sluice/delta/checkpoint.h"
#include "sluice/delta/writer.h"
#include "delta_log_support.h"

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

sluice::BatchPtr SmallBatch(int64_t first) {
  auto schema = sluice::ParseTypeString("struct<id:bigint,name:string>").value();
  sluice::Int64Builder ids(sluice::DataType::Long());
  sluice::BinaryBuilder names(sluice::DataType::String());
  for (int64_t i = first; i < first + 10; ++i) {
    ids.Append(i);
    names.Append("name-" + std::to_string(i));
  }
  return sluice::RecordBatch::Make(schema, {ids.Finish(), names.Finish()}, 10).value();
}

void Check(const sluice::Status& status, const char* what) {
  if (!status.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, status.ToString().c_str());
    std::exit(1);
  }
}

void BenchCommits(const std::shared_ptr<sluice::FileSystem>& fs, const std::string& dir, int commits) {
  std::string table = dir + "/appends";
  auto start = Clock::now();
  for (int i = 0; i < commits; ++i) {
    Check(sluice::delta::WriteTable(fs, table, {SmallBatch(i * 10)}).status(), "append");
  }
  double seconds = Seconds(start);

  std::string commit = fs->ReadFile(sluice::delta::CommitPath(table, 1)).value();
  start = Clock::now();
  for (int i = 0; i < commits; ++i) {
    Check(fs->PutIfAbsent(dir + "/reference/" + std::to_string(i), commit), "put-if-absent");
  }
  double reference = Seconds(start);
  std::printf("delta_commits commits=%d seconds=%.3f commits_per_s=%.1f reference_per_s=%.1f ratio=%.3f\n", commits,
              seconds, commits / seconds, commits / reference, reference / seconds);
}

void BenchSnapshot(const std::shared_ptr<sluice::FileSystem>& fs, const std::string& dir, int versions) {
  std::string table = dir + "/history";
  std::string plain = dir + "/history-without-checkpoint";
  sluice::bench::WriteSyntheticLog({{fs, table}, {fs, plain}}, versions);
  int64_t checkpoint_version = versions - 10;
  auto at_checkpoint = sluice::delta::Snapshot::Load(fs, table, {.version = checkpoint_version});
  Check(at_checkpoint.status(), "load");
  Check(sluice::delta::WriteCheckpoint(**at_checkpoint, 1800000000000), "checkpoint");

  auto median_ms = [&](const std::string& path, int runs) {
    std::vector<double> times;
    for (int i = 0; i < runs; ++i) {
      auto start = Clock::now();
      auto snapshot = sluice::delta::Snapshot::Load(fs, path);
      times.push_back(Seconds(start) * 1000);
      Check(snapshot.status(), "load");
      if ((*snapshot)->version() != versions - 1 || (*snapshot)->files().size() != static_cast<size_t>(versions)) {
        std::fprintf(stderr, "wrong snapshot of %s\n", path.c_str());
        std::exit(1);
      }
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
  };
  double load_ms = median_ms(table, 21);
  double replay_ms = median_ms(plain, 5);
  std::printf("delta_snapshot versions=%d load_ms=%.2f replay_ms=%.2f ratio=%.3f\n", versions, load_ms, replay_ms,
              load_ms / replay_ms);
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir;
  int commits = 200;
  int versions = 10000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--dir") == 0) dir = argv[i + 1];
    if (std::strcmp(argv[i], "--commits") == 0) commits = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--versions") == 0) versions = std::max(20, std::atoi(argv[i + 1]));
  }
  auto fs = sluice::LocalFileSystem();
  if (dir.empty()) {
    char pattern[] = "/tmp/delta_bench_XXXXXX";
    if (mkdtemp(pattern) == nullptr) return 1;
    dir = pattern;
  }
  BenchCommits(fs, dir, commits);
  BenchSnapshot(fs, dir, versions);
  Check(fs->DeleteRecursively(dir), "clean up");
  return 0;
}
