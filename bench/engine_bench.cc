// Per-batch overhead of the streaming engine, and rows/s through it.
//
//   BM_LogWritesReference   the floor: the two put-if-absent log files every batch writes
//                           (offsets/N and commits/N), on the same disk, without the engine
//   BM_EmptyBatches         batches whose range is not empty but holds no rows (a source that
//                           advances its offset past filtered records)
//   BM_OneRowBatches        batches of one row
//   BM_RateToMemory         rate source into the memory sink, 100 000-row batches
//   BM_RateThroughOperators the same through a filter (half the rows) and a projection of two
//                           computed columns, as a flow's where/select run; its ratio to
//                           BM_RateToMemory is what the operators cost
//   BM_RateToDelta          rate source into a Delta table, 100 000-row batches (one Parquet
//                           file and one commit each), beside the same rows written by
//                           delta::WriteTable without the engine (BM_DeltaWriteReference)
// The batch benchmarks report batches/s and their ratio to the reference; the rate benchmark rows/s.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "sluice/core/builder.h"
#include "sluice/core/clock.h"
#include "sluice/delta/writer.h"
#include "sluice/connectors/delta/formats.h"
#include "sluice/engine/memory_sink.h"
#include "sluice/engine/rate_source.h"
#include "sluice/engine/relational_operators.h"
#include "sluice/engine/streaming_query.h"

namespace sluice::engine {
namespace {

constexpr int64_t kBatchesPerRun = 200;

std::string MakeTempDirectory() {
  char pattern[] = "/tmp/sluice-bench-XXXXXX";
  const char* made = ::mkdtemp(pattern);
  return made == nullptr ? std::string("/tmp/sluice-bench") : std::string(made);
}

// Offsets {"n":K}; every step holds `rows_per_step` rows (0 or 1), and there are always more.
class StepSource final : public Source {
 public:
  explicit StepSource(int64_t rows_per_step) : rows_per_step_(rows_per_step) {
    schema_ = DataType::Struct({Field{"timestamp", DataType::Timestamp()}, Field{"value", DataType::Long()}}).value();
  }
  std::string description() const override { return "StepSource"; }
  TypePtr schema() const override { return schema_; }
  Status Open(const SourceContext&) override { return Status::OK(); }
  Result<std::string> InitialOffset() override { return Format(0); }
  Result<std::string> LatestOffset(const std::string& start, const ReadLimit&) override {
    return Format(Parse(start) + 1);
  }
  Result<std::vector<BatchPtr>> Read(const std::string& start, const std::string&) override {
    if (rows_per_step_ == 0) return std::vector<BatchPtr>{};
    Int64Builder timestamps(DataType::Timestamp()), values(DataType::Long());
    timestamps.Append(0);
    values.Append(Parse(start));
    SLUICE_ASSIGN_OR_RETURN(BatchPtr batch, RecordBatch::Make(schema_, {timestamps.Finish(), values.Finish()}, 1));
    return std::vector<BatchPtr>{batch};
  }
  Status Commit(const std::string&) override { return Status::OK(); }

 private:
  static std::string Format(int64_t n) { return "{\"n\":" + std::to_string(n) + "}"; }
  static int64_t Parse(const std::string& offset) { return std::strtoll(offset.c_str() + 5, nullptr, 10); }
  int64_t rows_per_step_;
  TypePtr schema_;
};

// Measured by BM_LogWritesReference, which runs first.
double reference_batches_per_second = 0;

double Seconds(std::chrono::steady_clock::duration duration) {
  return std::chrono::duration<double>(duration).count();
}

void ReportAgainstReference(benchmark::State& state, int64_t batches, std::chrono::steady_clock::duration timed) {
  double batches_per_second = static_cast<double>(batches) / Seconds(timed);
  state.counters["batches_per_s"] = batches_per_second;
  if (reference_batches_per_second > 0) {
    state.counters["ratio_to_log_writes"] = batches_per_second / reference_batches_per_second;
  }
}

void BM_LogWritesReference(benchmark::State& state) {
  std::string directory = MakeTempDirectory();
  std::shared_ptr<FileSystem> fs = LocalFileSystem();
  int64_t n = 0;
  auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    (void)fs->PutIfAbsent(directory + "/offsets/" + std::to_string(n), "v1\n{}\n{\"n\":1}");
    (void)fs->PutIfAbsent(directory + "/commits/" + std::to_string(n), "v1\n{}");
    ++n;
  }
  reference_batches_per_second =
      static_cast<double>(state.iterations()) / Seconds(std::chrono::steady_clock::now() - start);
  state.counters["batches_per_s"] = reference_batches_per_second;
  (void)fs->DeleteRecursively(directory);
}

void RunBatches(benchmark::State& state, int64_t rows_per_step) {
  std::chrono::steady_clock::duration timed{0};
  for (auto _ : state) {
    state.PauseTiming();
    std::string directory = MakeTempDirectory();
    auto table = std::make_shared<MemoryTable>();
    QueryConfig config;
    config.checkpoint_location = directory + "/checkpoint";
    config.trigger = Trigger::ProcessingTime(std::chrono::microseconds(0));
    StreamingQuery* running = nullptr;
    config.on_progress = [&running](const QueryProgress& progress) {
      if (progress.batch_id + 1 >= kBatchesPerRun) running->Stop();
    };
    auto query = StreamingQuery::Start(std::make_unique<StepSource>(rows_per_step), std::make_unique<MemorySink>(table),
                                       std::move(config));
    if (!query.ok()) {
      state.SkipWithError(query.status().ToString().c_str());
      return;
    }
    running = query->get();
    state.ResumeTiming();
    auto start = std::chrono::steady_clock::now();
    Status status = (*query)->Run();
    timed += std::chrono::steady_clock::now() - start;
    state.PauseTiming();
    if (!status.ok()) state.SkipWithError(status.ToString().c_str());
    query->reset();
    (void)LocalFileSystem()->DeleteRecursively(directory);
    state.ResumeTiming();
  }
  ReportAgainstReference(state, state.iterations() * kBatchesPerRun, timed);
}

void BM_EmptyBatches(benchmark::State& state) { RunBatches(state, 0); }
void BM_OneRowBatches(benchmark::State& state) { RunBatches(state, 1); }

constexpr int64_t kRowsPerBatch = 100'000;
constexpr int64_t kRateBatches = 20;
double reference_rows_per_second = 0;
double memory_rows_per_second = 0;

enum class RateTarget { kMemory, kMemoryThroughOperators, kDelta };

void RunRate(benchmark::State& state, RateTarget target) {
  const bool into_delta = target == RateTarget::kDelta;
  std::chrono::steady_clock::duration timed{0};
  for (auto _ : state) {
    state.PauseTiming();
    std::string directory = MakeTempDirectory();
    // A clock far ahead of the rate source's start: all rows are due; the run reads 20 batches.
    auto clock = std::make_shared<ManualClock>(int64_t{1} << 40);
    std::map<std::string, std::string> options = {{"rowsPerSecond", "1000000"},
                                                  {"maxRowsPerBatch", std::to_string(kRowsPerBatch)},
                                                  {"startTimestamp", "0"}};
    auto source = MakeRateSource(ValidateOptions("rate source", kRateSourceOptions, options).value()).value();
    QueryConfig config;
    config.checkpoint_location = directory + "/checkpoint";
    config.clock = clock;
    config.trigger = Trigger::ProcessingTime(std::chrono::microseconds(0));
    StreamingQuery* running = nullptr;
    config.on_progress = [&running](const QueryProgress& progress) {
      if (progress.batch_id + 1 >= kRateBatches) running->Stop();
    };
    if (target == RateTarget::kMemoryThroughOperators) {
      config.operators.push_back(std::make_unique<FilterOperator>(expr::Expression::Parse("value % 2 = 0").value(),
                                                                  expr::SqlOptions{}, "where"));
      std::vector<expr::NamedExpression> items = {expr::ParseNamedExpression("value * 3 + 1 AS x").value(),
                                                  expr::ParseNamedExpression("timestamp AS at").value()};
      config.operators.push_back(std::make_unique<ProjectOperator>(std::move(items), expr::SqlOptions{}, "select"));
    }
    std::unique_ptr<Sink> sink;
    if (into_delta) {
      std::map<std::string, std::string> delta_options = {{"path", directory + "/table"}};
      sink = connectors::MakeDeltaSink(ValidateOptions("delta sink", connectors::kDeltaSinkOptions, delta_options).value()).value();
    } else {
      sink = std::make_unique<MemorySink>(std::make_shared<MemoryTable>());
    }
    auto query = StreamingQuery::Start(std::move(source), std::move(sink), std::move(config));
    running = query->get();
    state.ResumeTiming();
    auto start = std::chrono::steady_clock::now();
    Status status = (*query)->Run();
    timed += std::chrono::steady_clock::now() - start;
    state.PauseTiming();
    if (!status.ok()) state.SkipWithError(status.ToString().c_str());
    query->reset();
    (void)LocalFileSystem()->DeleteRecursively(directory);
    state.ResumeTiming();
  }
  double rows_per_second = static_cast<double>(state.iterations() * kRateBatches * kRowsPerBatch) / Seconds(timed);
  state.counters["rows_per_s"] = rows_per_second;
  if (into_delta && reference_rows_per_second > 0) {
    state.counters["ratio_to_write_table"] = rows_per_second / reference_rows_per_second;
  }
  if (target == RateTarget::kMemory) memory_rows_per_second = rows_per_second;
  if (target == RateTarget::kMemoryThroughOperators && memory_rows_per_second > 0) {
    state.counters["ratio_to_rate_to_memory"] = rows_per_second / memory_rows_per_second;
  }
}

void BM_RateToMemory(benchmark::State& state) { RunRate(state, RateTarget::kMemory); }
void BM_RateThroughOperators(benchmark::State& state) { RunRate(state, RateTarget::kMemoryThroughOperators); }
void BM_RateToDelta(benchmark::State& state) { RunRate(state, RateTarget::kDelta); }

// The same rows and batch sizes appended with delta::WriteTable directly.
void BM_DeltaWriteReference(benchmark::State& state) {
  auto schema = DataType::Struct({Field{"timestamp", DataType::Timestamp(), false},
                                  Field{"value", DataType::Long(), false}})
                    .value();
  std::chrono::steady_clock::duration timed{0};
  for (auto _ : state) {
    state.PauseTiming();
    std::string directory = MakeTempDirectory();
    std::vector<BatchPtr> batches;
    for (int64_t b = 0; b < kRateBatches; ++b) {
      Int64Builder timestamps(DataType::Timestamp()), values(DataType::Long());
      for (int64_t row = b * kRowsPerBatch; row < (b + 1) * kRowsPerBatch; ++row) {
        timestamps.Append(row);
        values.Append(row);
      }
      batches.push_back(RecordBatch::Make(schema, {timestamps.Finish(), values.Finish()}, kRowsPerBatch).value());
    }
    state.ResumeTiming();
    auto start = std::chrono::steady_clock::now();
    for (const BatchPtr& batch : batches) {
      auto written = delta::WriteTable(LocalFileSystem(), directory + "/table", {batch});
      if (!written.ok()) state.SkipWithError(written.status().ToString().c_str());
    }
    timed += std::chrono::steady_clock::now() - start;
    state.PauseTiming();
    (void)LocalFileSystem()->DeleteRecursively(directory);
    state.ResumeTiming();
  }
  reference_rows_per_second = static_cast<double>(state.iterations() * kRateBatches * kRowsPerBatch) / Seconds(timed);
  state.counters["rows_per_s"] = reference_rows_per_second;
}

BENCHMARK(BM_LogWritesReference)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_EmptyBatches)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_OneRowBatches)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_RateToMemory)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_RateThroughOperators)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_DeltaWriteReference)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_RateToDelta)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace sluice::engine

BENCHMARK_MAIN();
