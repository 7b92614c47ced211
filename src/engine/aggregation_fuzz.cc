// libFuzzer target: arbitrary bytes as a flow's SQL. Parsing must never crash; a statement that
// binds as an aggregation over a small schema must aggregate a small batch twice, give its
// update and complete output, and survive a round trip of its state, or return an error: never
// crash.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "sluice/core/builder.h"
#include "sluice/engine/hash_aggregation.h"
#include "sluice/expr/select.h"

namespace {

const sluice::BatchPtr& Batch() {
  static sluice::BatchPtr batch = [] {
    sluice::Int64Builder n(sluice::DataType::Long());
    sluice::BinaryBuilder s(sluice::DataType::String());
    sluice::DoubleBuilder d(sluice::DataType::Double());
    for (int i = 0; i < 6; ++i) {
      n.Append(i % 3 - 1);
      if (i == 2) s.AppendNull();
      else s.Append(i % 2 ? "a" : "Banana");
      if (i == 4) d.AppendNull();
      else d.Append(i == 3 ? -0.0 : i * 0.5);
    }
    sluice::TypePtr schema = *sluice::DataType::Struct(
        {{"n", sluice::DataType::Long()}, {"s", sluice::DataType::String()}, {"d", sluice::DataType::Double()}});
    return *sluice::RecordBatch::Make(schema, {n.Finish(), s.Finish(), d.Finish()}, 6);
  }();
  return batch;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using sluice::engine::OutputMode;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto select = sluice::expr::ParseSelect(text);
  if (!select.ok() || !select->is_aggregation()) return 0;
  for (bool ansi : {true, false}) {
    auto plan = sluice::expr::BindAggregation(*select, Batch()->schema(), {.ansi = ansi});
    if (!plan.ok()) continue;
    auto groups = sluice::engine::HashAggregation::Make(*plan, {.ansi = ansi});
    if (!groups.ok()) continue;
    if (!(*groups)->Add(*Batch()).ok() || !(*groups)->Add(*Batch()).ok()) continue;
    auto changed = (*groups)->Output(OutputMode::kUpdate);
    auto state = (*groups)->State();
    if (!state.ok()) continue;
    auto again = sluice::engine::HashAggregation::Make(*plan, {.ansi = ansi});
    if (!again.ok() || !(*again)->Load(**state).ok()) std::abort();
    auto complete = (*again)->Output(OutputMode::kComplete);
    if (changed.ok() && complete.ok() && (*complete)->num_rows() < (*changed)->num_rows()) std::abort();
  }
  return 0;
}
