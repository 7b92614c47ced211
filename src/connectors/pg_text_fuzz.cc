// Feeds arbitrary text to the reader of PostgreSQL's text forms (the values of the change feed's
// pgoutput messages and of text COPY), for every type mapping. The first byte picks the column's
// type (the element type or its array), and its numeric typmod, the rest is the value. Any input
// may be refused, none may crash; a refused value must leave the builder as it was, and an
// accepted one a valid column.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "sluice/connectors/pg_types.h"
#include "sluice/core/builder.h"

namespace {

namespace oid = sluice::connectors::pg_oid;
constexpr uint32_t kOids[] = {oid::kBool,  oid::kBytea,   oid::kChar,   oid::kName,      oid::kInt8,        oid::kInt2,
                              oid::kInt4,  oid::kText,    oid::kOid,    oid::kJson,      oid::kFloat4,      oid::kFloat8,
                              oid::kBpchar, oid::kVarchar, oid::kDate,  oid::kTime,      oid::kTimestamp,   oid::kTimestamptz,
                              oid::kInterval, oid::kNumeric, oid::kUuid, oid::kJsonb};
// numeric typmods: none, numeric(10,2), numeric(38,38), numeric(5,0), numeric(39,2) (kept as text)
constexpr int32_t kTypmods[] = {-1, ((10 << 16) | 2) + 4, ((38 << 16) | 38) + 4, (5 << 16) + 4, ((39 << 16) | 2) + 4};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  uint8_t pick = data[0];
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  uint32_t type_oid = kOids[pick % std::size(kOids)];
  const size_t variant = pick / std::size(kOids);  // 0..11
  int32_t typmod = type_oid == oid::kNumeric ? kTypmods[variant % std::size(kTypmods)] : -1;
  if (variant >= 6) type_oid = sluice::connectors::PgArrayOidOf(type_oid);
  sluice::connectors::PgColumnMapping mapping = sluice::connectors::MapPgType(type_oid, typmod);
  auto builder = sluice::ColumnBuilder::Make(mapping.type);
  sluice::Status appended = sluice::connectors::AppendPgText(mapping, text, builder.get());
  int64_t length = builder->length();
  if (appended.ok() != (length == 1)) std::abort();
  if (!builder->Finish()->Validate().ok()) std::abort();
  return 0;
}
