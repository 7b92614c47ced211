// Feeds arbitrary bytes to the binary COPY value decoders as every kind at every decimal scale.
// Any crash, over-read (ASan) or undefined behaviour (UBSan) is a finding; so is a decoder that
// fails yet changes its builder.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "sluice/connectors/pg_binary.h"

namespace {

using sluice::DataType;
using sluice::TypePtr;
using sluice::connectors::PgBinaryKind;

TypePtr TypeOf(PgBinaryKind kind, int scale) {
  switch (kind) {
    case PgBinaryKind::kBool: return DataType::Boolean();
    case PgBinaryKind::kInt2: return DataType::Short();
    case PgBinaryKind::kInt4: return DataType::Integer();
    case PgBinaryKind::kInt8: return DataType::Long();
    case PgBinaryKind::kFloat4: return DataType::Float();
    case PgBinaryKind::kFloat8: return DataType::Double();
    case PgBinaryKind::kNumeric: return *DataType::Decimal(38, scale);
    case PgBinaryKind::kDate: return DataType::Date();
    case PgBinaryKind::kTimestamp: return DataType::Timestamp();
    case PgBinaryKind::kBytes: return DataType::Binary();
    case PgBinaryKind::kJsonb:
    case PgBinaryKind::kUuid: return DataType::String();
  }
  return DataType::String();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const int scale = data[0] % 39;
  std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  for (int k = 0; k <= static_cast<int>(PgBinaryKind::kUuid); ++k) {
    const auto kind = static_cast<PgBinaryKind>(k);
    auto builder = sluice::ColumnBuilder::Make(TypeOf(kind, scale));
    const bool ok = sluice::connectors::AppendPgBinary(kind, scale, bytes, builder.get()).ok();
    if (builder->length() != (ok ? 1 : 0)) std::abort();
    if (builder->Finish()->Validate().ok() == false) std::abort();
  }
  return 0;
}
