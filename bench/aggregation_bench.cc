// Streaming aggregation throughput and state overhead, one thread.
//
//   aggregation_bench FILE [--repeat N]      aggregate a Parquet file with columns k (bigint),
//                                            x (bigint), d (double)
//   aggregation_bench --state GROUPS         per-batch state overhead for GROUPS groups, 1% changed
//
// The first form reads FILE batch by batch into
//   SELECT k, count(*), sum(x), min(x), max(d), avg(d) ... GROUP BY k
// and times reading plus aggregating plus the complete result (the best of --repeat runs, default
// 3); it also times reading alone, so the aggregation's own share shows. Its last line is
// machine-readable: `aggregation rows=N groups=G seconds=S read_seconds=R bytes_per_group=B`.
//
// The second form fills GROUPS groups, then runs 21 batches that each change 1% of them (one row
// per changed group), writing each batch's state version to a temporary StateStore as a flow does
// (a delta per batch, a snapshot every tenth, written on a thread of its own): milliseconds per
// batch for the delta batches, for the batches starting a snapshot and for the batches right after
// them (back to back, they wait for the snapshot), and the bytes of a delta and a snapshot file.
// It then runs the same batches on the rocksdb state store (the operator holding only a batch's
// groups, reading the others from RocksDB): milliseconds per batch and the memory held, beside the
// memory store's figures as ratios.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "sluice/core/builder.h"
#include "sluice/core/file_system.h"
#include "sluice/engine/hash_aggregation.h"
#include "sluice/engine/rocksdb_state_store.h"
#include "sluice/engine/state_store.h"
#include "sluice/expr/select.h"
#include "sluice/parquet/reader.h"

namespace {

using sluice::BatchPtr;
using sluice::DataType;
using sluice::engine::HashAggregation;
using sluice::engine::OutputMode;

constexpr const char* kSql = "SELECT k, count(*) AS n, sum(x) AS s, min(x) AS lo, max(d) AS hi, avg(d) AS a "
                             "FROM STREAM(t) GROUP BY k";

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

std::unique_ptr<HashAggregation> MakeGroups(const sluice::TypePtr& schema) {
  auto select = sluice::expr::ParseSelect(kSql);
  auto plan = sluice::expr::BindAggregation(*select, schema);
  if (!plan.ok()) {
    std::fprintf(stderr, "%s\n", plan.status().ToString().c_str());
    std::exit(1);
  }
  return std::move(HashAggregation::Make(*plan, {}).value());
}

void Check(const sluice::Status& status) {
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.ToString().c_str());
    std::exit(1);
  }
}

int Throughput(const std::string& path, int repeat) {
  double best = 1e300, best_read = 1e300;
  int64_t rows = 0, groups = 0, bytes = 0;
  for (int run = 0; run < repeat; ++run) {
    for (bool aggregate : {false, true}) {
      const auto start = std::chrono::steady_clock::now();
      auto reader = sluice::parquet::ParquetReader::Open(*sluice::LocalFileSystem(), path);
      Check(reader.status());
      auto batches = (*reader)->NewBatchReader({});
      Check(batches.status());
      std::unique_ptr<HashAggregation> state = aggregate ? MakeGroups((*reader)->schema()) : nullptr;
      rows = 0;
      while (true) {
        auto batch = (*batches)->Next();
        Check(batch.status());
        if (!*batch) break;
        rows += (*batch)->num_rows();
        if (state) Check(state->Add(**batch));
      }
      if (state) {
        auto result = state->Output(OutputMode::kComplete);
        Check(result.status());
        groups = (*result)->num_rows();
        bytes = state->memory_bytes();
        best = std::min(best, Seconds(start));
      } else {
        best_read = std::min(best_read, Seconds(start));
      }
    }
  }
  std::printf("aggregated %lld rows into %lld groups: %.3f s (reading alone %.3f s), %.0f rows/s; %lld bytes/group\n",
              static_cast<long long>(rows), static_cast<long long>(groups), best, best_read,
              static_cast<double>(rows) / best, static_cast<long long>(groups ? bytes / groups : 0));
  std::printf("aggregation rows=%lld groups=%lld seconds=%.3f read_seconds=%.3f bytes_per_group=%lld\n",
              static_cast<long long>(rows), static_cast<long long>(groups), best, best_read,
              static_cast<long long>(groups ? bytes / groups : 0));
  return 0;
}

BatchPtr Rows(const sluice::TypePtr& schema, const std::vector<int64_t>& keys, int64_t salt) {
  sluice::Int64Builder k(DataType::Long()), x(DataType::Long());
  sluice::DoubleBuilder d(DataType::Double());
  for (int64_t key : keys) {
    k.Append(key);
    x.Append(key % 1000 + salt);
    d.Append(static_cast<double>(key) * 0.37);
  }
  return sluice::RecordBatch::Make(schema, {k.Finish(), x.Finish(), d.Finish()}, static_cast<int64_t>(keys.size()))
      .value();
}

// Batch `version`'s rows: one for each of 1% of the groups, picked at random.
BatchPtr ChangedRows(const sluice::TypePtr& schema, int64_t groups, int64_t version, std::mt19937_64& random) {
  std::vector<int64_t> changed(static_cast<size_t>(groups / 100));
  for (int64_t& key : changed) key = static_cast<int64_t>(random() % static_cast<uint64_t>(groups));
  return Rows(schema, changed, version);
}

int StateOverhead(int64_t groups) {
  const sluice::TypePtr schema =
      DataType::Struct({{"k", DataType::Long()}, {"x", DataType::Long()}, {"d", DataType::Double()}}).value();
  std::unique_ptr<HashAggregation> state = MakeGroups(schema);
  std::vector<int64_t> all(static_cast<size_t>(groups));
  for (int64_t g = 0; g < groups; ++g) all[static_cast<size_t>(g)] = g;
  Check(state->Add(*Rows(schema, all, 0)));
  state->ClearChanges();

  const std::string dir = std::filesystem::temp_directory_path() / ("sluice-aggregation-bench-" + std::to_string(getpid()));
  auto store = std::make_unique<sluice::engine::StateStore>(sluice::LocalFileSystem(), dir, state->state_schema());
  std::mt19937_64 random(7);
  // Per kind of batch: those writing a delta alone, those starting a snapshot (10, 20; the
  // snapshot is written on a thread of its own), and those right after them (11; batches back to
  // back here, so it waits for the snapshot to finish).
  double delta_ms = 0, snapshot_ms = 0, after_ms = 0;
  int deltas = 0, snapshots = 0, afters = 0;
  constexpr int64_t kInterval = sluice::engine::StateStore::kSnapshotInterval;
  for (int64_t version = 1; version <= 2 * kInterval + 1; ++version) {
    BatchPtr rows = ChangedRows(schema, groups, version, random);
    const auto start = std::chrono::steady_clock::now();
    Check(state->Add(*rows));
    auto out = state->Output(OutputMode::kUpdate);
    Check(out.status());
    auto delta = state->ChangedState();
    Check(delta.status());
    Check(store->Write(version, **delta, [&] { return state->State(); }));
    state->ClearChanges();
    const double ms = Seconds(start) * 1000;
    if (version % kInterval == 0) {
      snapshot_ms += ms;
      ++snapshots;
    } else if (version % kInterval == 1 && version > 1) {
      after_ms += ms;
      ++afters;
    } else {
      delta_ms += ms;
      ++deltas;
    }
  }
  store.reset();  // waits for the last snapshot
  const auto size = [&](const char* name) { return static_cast<long long>(std::filesystem::file_size(dir + "/" + name)); };
  std::printf("%lld groups, 1%% changed per batch: %.1f ms per batch with a delta, %.1f ms for the batch starting a "
              "snapshot, %.1f ms for the next batch back to back (it waits for the snapshot); delta %lld bytes, "
              "snapshot %lld bytes; %lld bytes/group in memory\n",
              static_cast<long long>(groups), delta_ms / deltas, snapshot_ms / snapshots, after_ms / afters,
              size("19.delta.parquet"), size("20.snapshot.parquet"),
              static_cast<long long>(state->memory_bytes() / groups));
  std::printf("aggregation_state groups=%lld delta_batch_ms=%.1f snapshot_batch_ms=%.1f next_batch_ms=%.1f\n",
              static_cast<long long>(groups), delta_ms / deltas, snapshot_ms / snapshots, after_ms / afters);
  const double memory_batch_ms = (delta_ms + snapshot_ms + after_ms) / (deltas + snapshots + afters);
  const int64_t memory_bytes = state->memory_bytes();
  std::filesystem::remove_all(dir);

  // The same batches on the rocksdb state store, version 0 holding every group, with an
  // aggregation of its own (memory the first run's groups left allocated is not counted).
  state = MakeGroups(schema);
  auto rocksdb = sluice::engine::RocksDbStateStore::Open(sluice::LocalFileSystem(), dir, state->state_schema(), 1);
  Check(rocksdb.status());
  state->set_backing(rocksdb->get());
  Check((*rocksdb)->Load(-1));
  state->Reset();
  Check(state->Add(*Rows(schema, all, 0)));
  Check((*rocksdb)->Write(0, *state->ChangedState().value()));
  state = MakeGroups(schema);
  state->set_backing(rocksdb->get());
  state->Reset();
  random.seed(7);
  double rocksdb_ms = 0;
  int64_t rocksdb_memory = 0;
  for (int64_t version = 1; version <= 2 * kInterval + 1; ++version) {
    BatchPtr rows = ChangedRows(schema, groups, version, random);
    const auto start = std::chrono::steady_clock::now();
    Check(state->Add(*rows));
    Check(state->Output(OutputMode::kUpdate).status());
    Check((*rocksdb)->Write(version, *state->ChangedState().value()));
    rocksdb_memory = std::max(rocksdb_memory, state->memory_bytes() + (*rocksdb)->memory_bytes());
    state->ClearChanges();
    state->Reset();
    rocksdb_ms += Seconds(start) * 1000;
  }
  rocksdb_ms /= 2 * kInterval + 1;
  int64_t folder_bytes = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) folder_bytes += static_cast<int64_t>(entry.file_size());
  }
  std::printf("rocksdb state store: %.1f ms per batch (memory store %.1f ms: %.2fx), at most %lld bytes in memory "
              "(memory store %lld: %.3fx), state folder %lld bytes\n",
              rocksdb_ms, memory_batch_ms, rocksdb_ms / memory_batch_ms, static_cast<long long>(rocksdb_memory),
              static_cast<long long>(memory_bytes), static_cast<double>(rocksdb_memory) / memory_bytes,
              static_cast<long long>(folder_bytes));
  std::printf("aggregation_state_rocksdb groups=%lld batch_ms=%.1f memory_bytes=%lld\n", static_cast<long long>(groups),
              rocksdb_ms, static_cast<long long>(rocksdb_memory));
  rocksdb->reset();
  std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 3 && std::string(argv[1]) == "--state") return StateOverhead(std::atoll(argv[2]));
  if (argc < 2) {
    std::fprintf(stderr, "usage: aggregation_bench FILE [--repeat N] | aggregation_bench --state GROUPS\n");
    return 2;
  }
  int repeat = 3;
  if (argc >= 4 && std::string(argv[2]) == "--repeat") repeat = std::atoi(argv[3]);
  return Throughput(argv[1], repeat);
}
