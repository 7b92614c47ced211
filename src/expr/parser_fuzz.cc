// libFuzzer target: arbitrary bytes as an expression. Parsing must never crash; a parsed tree
// must print to text that parses back to the same text; binding against a small schema and
// evaluating over a small batch must return a value or an error, never crash.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "sluice/core/builder.h"
#include "sluice/expr/expression.h"

namespace {

const sluice::BatchPtr& Batch() {
  static sluice::BatchPtr batch = [] {
    sluice::Int64Builder n(sluice::DataType::Long());
    sluice::BinaryBuilder s(sluice::DataType::String());
    sluice::DoubleBuilder d(sluice::DataType::Double());
    for (int i = 0; i < 4; ++i) {
      n.Append(i - 1);
      if (i == 2) s.AppendNull();
      else s.Append(i == 1 ? "{\"a\": [1, 2]}" : "Banana");
      d.Append(i * 0.5);
    }
    sluice::TypePtr schema = *sluice::DataType::Struct(
        {{"n", sluice::DataType::Long()}, {"s", sluice::DataType::String()}, {"d", sluice::DataType::Double()}});
    return *sluice::RecordBatch::Make(schema, {n.Finish(), s.Finish(), d.Finish()}, 4);
  }();
  return batch;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = sluice::expr::Expression::Parse(text);
  if (!parsed.ok()) return 0;
  std::string printed = parsed->ToSql();
  auto reparsed = sluice::expr::Expression::Parse(printed);
  // Printing parenthesizes every operation, so a long flat chain (`0+F+0+...`) prints nested
  // deeper than the parser's depth limit; that refusal is the limit working, not a bug.
  bool too_deep = !reparsed.ok() && reparsed.status().ToString().find("nests deeper than") != std::string::npos;
  if (!too_deep && (!reparsed.ok() || reparsed->ToSql() != printed)) std::abort();
  auto bound = sluice::expr::Bind(*parsed, Batch()->schema());
  if (!bound.ok()) return 0;
  auto result = bound->Evaluate(*Batch());
  if (result.ok() && !(*result)->Validate().ok()) std::abort();
  if (bound->result_type()->id() == sluice::TypeId::kBoolean) (void)bound->Filter(*Batch());
  return 0;
}
