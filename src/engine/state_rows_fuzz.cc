// libFuzzer target: arbitrary bytes as what the rocksdb state store reads back from a checkpoint —
// a version file, and state rows of a schema with every kind of column (fixed-width, string,
// struct, array, map, nulls). Each must parse into a valid batch (every row re-encodes to the same
// bytes) or be refused as CANNOT_LOAD_STATE_STORE: never crash.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/error_classes.h"
#include "sluice/engine/rocksdb_state_store.h"
#include "engine/state_rows.h"

namespace {

const sluice::TypePtr& Schema() {
  static sluice::TypePtr schema = *sluice::DataType::Struct(
      {{"k", sluice::DataType::String()},
       {"n", sluice::DataType::Long()},
       {"d", *sluice::DataType::Decimal(20, 2)},
       {"b", sluice::DataType::Boolean()},
       {"s", *sluice::DataType::Struct({{"x", sluice::DataType::Integer()}, {"y", sluice::DataType::Binary()}})},
       {"a", sluice::DataType::Array(sluice::DataType::String())},
       {"m", sluice::DataType::Map(sluice::DataType::Integer(), sluice::DataType::Double())}});
  return schema;
}

void Check(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto version = sluice::engine::ParseRocksDbVersion(bytes);
  if (version.ok()) {
    Check(sluice::engine::ParseRocksDbVersion(sluice::engine::FormatRocksDbVersion(*version)).ok());
  } else {
    Check(version.status().error_class() == sluice::errors::kCannotLoadStateStore);
  }
  // The bytes as one row, and split at a 0xff byte into several.
  std::vector<std::string_view> rows;
  for (size_t start = 0;;) {
    size_t end = bytes.find('\xff', start);
    rows.push_back(bytes.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  for (const auto& input : {std::vector<std::string_view>{bytes}, rows}) {
    auto decoded = sluice::engine::DecodeStateRows(Schema(), input);
    if (!decoded.ok()) {
      Check(decoded.status().error_class() == sluice::errors::kCannotLoadStateStore);
      continue;
    }
    for (int64_t row = 0; row < (*decoded)->num_rows(); ++row) {
      std::string again;
      sluice::engine::EncodeStateRow(**decoded, row, &again);
      auto twice = sluice::engine::DecodeStateRows(Schema(), {again});
      Check(twice.ok() && (*twice)->num_rows() == 1);
    }
  }
  return 0;
}
