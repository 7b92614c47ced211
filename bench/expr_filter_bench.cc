// Filter and projection throughput of the expression evaluator, one thread, 10 million rows of
// a Kafka-like value struct<event_type: string, amount: double> (a quarter of the rows are
// 'transaction'; amounts uniform in [0, 100)). Beside each figure: a hand-written C++ loop
// computing the same selection straight from the column buffers, the ceiling for this layout.
// The filters and the projection run in ANSI mode (the default) and, as *NonAnsi, in non-ANSI mode.
//
//   cmake -S . -B build-rel -G Ninja -DCMAKE_BUILD_TYPE=Release -DSLUICE_BENCH=ON
//   cmake --build build-rel --target expr_filter_bench && build-rel/expr_filter_bench
#include <benchmark/benchmark.h>

#include <cstring>
#include <random>

#include "sluice/core/builder.h"
#include "sluice/expr/expression.h"

namespace {

using sluice::BatchPtr;

constexpr int64_t kRows = 10'000'000;

const BatchPtr& Events() {
  static BatchPtr batch = [] {
    sluice::TypePtr value = *sluice::DataType::Struct({{"event_type", sluice::DataType::String()},
                                                       {"amount", sluice::DataType::Double()}});
    sluice::StructBuilder builder(value);
    auto* type = static_cast<sluice::BinaryBuilder*>(builder.field_builder(0));
    auto* amount = static_cast<sluice::DoubleBuilder*>(builder.field_builder(1));
    builder.Reserve(kRows);
    type->ReserveBytes(kRows * 9);
    std::mt19937_64 rng(42);
    const char* kTypes[] = {"transaction", "refund", "purchase", "view"};
    std::uniform_real_distribution<double> amounts(0, 100);
    for (int64_t i = 0; i < kRows; ++i) {
      type->Append(kTypes[rng() % 4]);
      amount->Append(amounts(rng));
      builder.Append();
    }
    sluice::TypePtr schema = *sluice::DataType::Struct({{"value", value}});
    return *sluice::RecordBatch::Make(schema, {builder.Finish()}, kRows);
  }();
  return batch;
}

void RunFilter(benchmark::State& state, const char* sql, sluice::expr::SqlOptions options = {}) {
  const BatchPtr& batch = Events();
  auto bound = sluice::expr::BindPredicate(*sluice::expr::Expression::Parse(sql), batch->schema(), options);
  if (!bound.ok()) {
    state.SkipWithError(bound.status().ToString().c_str());
    return;
  }
  // One selection vector for every iteration, as a query filtering batch after batch keeps one.
  std::vector<int64_t> rows;
  for (auto _ : state) {
    if (!bound->Filter(*batch, &rows).ok()) {
      state.SkipWithError("filter failed");
      return;
    }
    benchmark::DoNotOptimize(rows.data());
  }
  size_t selected = rows.size();
  state.SetItemsProcessed(state.iterations() * kRows);
  state.counters["selected"] = static_cast<double>(selected);
}

void BM_FilterNumeric(benchmark::State& state) { RunFilter(state, "value.amount > 10.0"); }
void BM_FilterNumericNonAnsi(benchmark::State& state) { RunFilter(state, "value.amount > 10.0", {.ansi = false}); }
// Integer arithmetic, which ANSI mode checks for overflow.
void BM_FilterIntegerArithmetic(benchmark::State& state) {
  RunFilter(state, "CAST(value.amount AS int) * 3 + 7 > 100");
}
void BM_FilterIntegerArithmeticNonAnsi(benchmark::State& state) {
  RunFilter(state, "CAST(value.amount AS int) * 3 + 7 > 100", {.ansi = false});
}
void BM_FilterStringEquality(benchmark::State& state) { RunFilter(state, "value.event_type = 'transaction'"); }
void BM_FilterStringAndNumeric(benchmark::State& state) {
  RunFilter(state, "value.event_type = 'transaction' AND value.amount > 10.0");
}

void RunProjection(benchmark::State& state, const char* sql, sluice::expr::SqlOptions options = {}) {
  const BatchPtr& batch = Events();
  auto bound = sluice::expr::Bind(*sluice::expr::Expression::Parse(sql), batch->schema(), options);
  for (auto _ : state) {
    auto column = bound->Evaluate(*batch);
    benchmark::DoNotOptimize((*column)->data.data());
  }
  state.SetItemsProcessed(state.iterations() * kRows);
}

constexpr const char* kCase =
    "CASE WHEN value.event_type = 'refund' THEN -value.amount WHEN value.amount > 50 THEN value.amount * 2 "
    "ELSE value.amount END";
// Integer division in a branch: ANSI mode evaluates it only on the rows that take the branch.
constexpr const char* kGuardedDivision =
    "CASE WHEN value.amount < 1 THEN 0 ELSE 1000 div CAST(value.amount AS int) END";
void BM_CaseProjection(benchmark::State& state) { RunProjection(state, kCase); }
void BM_CaseProjectionNonAnsi(benchmark::State& state) { RunProjection(state, kCase, {.ansi = false}); }
void BM_GuardedDivision(benchmark::State& state) { RunProjection(state, kGuardedDivision); }
void BM_GuardedDivisionNonAnsi(benchmark::State& state) { RunProjection(state, kGuardedDivision, {.ansi = false}); }

// The reference: the string-and-numeric filter as a plain loop over the buffers, returning a
// fresh row vector per call as Filter() does.
void BM_ReferenceLoopNumeric(benchmark::State& state) {
  const double* amount = Events()->column(0)->children[1]->values<double>();
  std::vector<int64_t> rows;
  rows.reserve(kRows);
  for (auto _ : state) {
    rows.clear();
    for (int64_t i = 0; i < kRows; ++i) {
      if (amount[i] > 10.0) rows.push_back(i);
    }
    benchmark::DoNotOptimize(rows.data());
  }
  state.SetItemsProcessed(state.iterations() * kRows);
}

void BM_ReferenceLoopStringAndNumeric(benchmark::State& state) {
  const BatchPtr& batch = Events();
  const sluice::Column& value = *batch->column(0);
  const sluice::Column& type = *value.children[0];
  const double* amount = value.children[1]->values<double>();
  const char* bytes = reinterpret_cast<const char*>(type.data.data());
  const int64_t* offsets = type.offsets.data();
  std::vector<int64_t> rows;
  rows.reserve(kRows);
  for (auto _ : state) {
    rows.clear();
    for (int64_t i = 0; i < kRows; ++i) {
      int64_t len = offsets[i + 1] - offsets[i];
      if (len == 11 && std::memcmp(bytes + offsets[i], "transaction", 11) == 0 && amount[i] > 10.0) rows.push_back(i);
    }
    benchmark::DoNotOptimize(rows.data());
  }
  state.SetItemsProcessed(state.iterations() * kRows);
}

BENCHMARK(BM_FilterNumeric)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FilterNumericNonAnsi)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReferenceLoopNumeric)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FilterIntegerArithmetic)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FilterIntegerArithmeticNonAnsi)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FilterStringEquality)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FilterStringAndNumeric)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReferenceLoopStringAndNumeric)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CaseProjection)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CaseProjectionNonAnsi)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GuardedDivision)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GuardedDivisionNonAnsi)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
