#include "core/group_keys.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"

namespace sluice {
namespace {

template <typename T>
void AppendRaw(T value, std::string* out) {
  out->append(reinterpret_cast<const char*>(&value), sizeof(T));
}

// A floating-point key column as Spark groups it: -0.0 as 0.0, every NaN as the one NaN.
ColumnPtr NormalizedFloats(ColumnPtr column) {
  const TypeId id = column->type->id();
  if (id != TypeId::kFloat && id != TypeId::kDouble) return column;
  auto normalized = std::make_shared<Column>(*column);
  auto fix = [&](auto* values) {
    using T = std::remove_pointer_t<decltype(values)>;
    for (int64_t row = 0; row < normalized->length; ++row) {
      if (std::isnan(values[row])) values[row] = std::numeric_limits<T>::quiet_NaN();
      if (values[row] == 0) values[row] = 0;
    }
  };
  if (id == TypeId::kFloat) {
    fix(reinterpret_cast<float*>(normalized->data.data()));
  } else {
    fix(reinterpret_cast<double*>(normalized->data.data()));
  }
  return normalized;
}

}  // namespace

// Grouping keys (their bytes, AppendKey) to dense group ids 0, 1, ..., by open addressing on a
// 64-bit hash of the key columns (HashRows), the keys' bytes in one arena: no allocation per
// group, and one probe in a flat array per row.
class GroupTable {
 public:
  GroupTable() { Clear(); }
  void Clear() {
    shift_ = 64 - 10;
    slots_.assign(size_t{1} << 10, Slot{});
    bytes_.clear();
    groups_ = 0;
  }
  int64_t size() const { return groups_; }
  // Brings the slot where a key of this hash starts its probe into the cache (the table is far
  // larger than the caches once it holds many groups, and rows probe it in random order).
  void Prefetch(uint64_t hash) const { __builtin_prefetch(&slots_[Home(hash)]); }
  // The group of `key` (whose hash is `hash`), added as group size() when absent.
  int32_t FindOrInsert(uint64_t hash, std::string_view key, bool* inserted) {
    const size_t mask = slots_.size() - 1;
    for (size_t i = Home(hash);; i = (i + 1) & mask) {
      Slot& slot = slots_[i];
      if (slot.group < 0) {
        slot = Slot{hash, static_cast<int64_t>(bytes_.size()), static_cast<int32_t>(groups_),
                    static_cast<uint32_t>(key.size())};
        bytes_.append(key);
        ++groups_;
        *inserted = true;
        const int32_t group = slot.group;
        if (static_cast<size_t>(groups_) * 2 > slots_.size()) Rehash();
        return group;
      }
      if (slot.hash == hash && slot.length == key.size() &&
          std::memcmp(bytes_.data() + slot.offset, key.data(), key.size()) == 0) {
        *inserted = false;
        return slot.group;
      }
    }
  }
  // The group of `key`, or -1.
  int32_t Find(uint64_t hash, std::string_view key) const {
    const size_t mask = slots_.size() - 1;
    for (size_t i = Home(hash);; i = (i + 1) & mask) {
      const Slot& slot = slots_[i];
      if (slot.group < 0) return -1;
      if (slot.hash == hash && slot.length == key.size() &&
          std::memcmp(bytes_.data() + slot.offset, key.data(), key.size()) == 0) {
        return slot.group;
      }
    }
  }
  int64_t memory_bytes() const { return static_cast<int64_t>(slots_.capacity() * sizeof(Slot) + bytes_.capacity()); }

 private:
  struct Slot {
    uint64_t hash = 0;
    int64_t offset = 0;  // of the key's bytes in bytes_
    int32_t group = -1;  // -1: empty
    uint32_t length = 0;
  };
  size_t Home(uint64_t hash) const { return static_cast<size_t>((hash * 0x9E3779B97F4A7C15ull) >> shift_); }
  void Rehash() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.size() * 2, Slot{});
    --shift_;
    const size_t mask = slots_.size() - 1;
    for (const Slot& slot : old) {
      if (slot.group < 0) continue;
      size_t i = Home(slot.hash);
      while (slots_[i].group >= 0) i = (i + 1) & mask;
      slots_[i] = slot;
    }
  }

  int shift_ = 54;
  std::vector<Slot> slots_;
  std::string bytes_;  // every group's key, one after another
  int64_t groups_ = 0;
};

void AppendKey(const Column& column, int64_t row, std::string* out) {
  if (column.IsNull(row)) {
    out->push_back('\0');
    return;
  }
  out->push_back('\1');
  switch (column.type->id()) {
    case TypeId::kBoolean:
    case TypeId::kByte: AppendRaw(column.Value<int8_t>(row), out); break;
    case TypeId::kShort: AppendRaw(column.Value<int16_t>(row), out); break;
    case TypeId::kInteger:
    case TypeId::kDate: AppendRaw(column.Value<int32_t>(row), out); break;
    case TypeId::kLong:
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: AppendRaw(column.Value<int64_t>(row), out); break;
    case TypeId::kFloat: {
      float v = column.Value<float>(row);
      AppendRaw(std::isnan(v) ? std::numeric_limits<float>::quiet_NaN() : v == 0 ? 0.0f : v, out);
      break;
    }
    case TypeId::kDouble: {
      double v = column.Value<double>(row);
      AppendRaw(std::isnan(v) ? std::numeric_limits<double>::quiet_NaN() : v == 0 ? 0.0 : v, out);
      break;
    }
    case TypeId::kDecimal: AppendRaw(column.Value<int128_t>(row), out); break;
    case TypeId::kString:
    case TypeId::kBinary: {
      std::string_view bytes = column.View(row);
      AppendRaw(static_cast<uint64_t>(bytes.size()), out);
      out->append(bytes);
      break;
    }
    case TypeId::kStruct:
    case TypeId::kArray:
    case TypeId::kMap: {
      std::string json;
      AppendValueJson(column, row, &json);
      AppendRaw(static_cast<uint64_t>(json.size()), out);
      out->append(json);
      break;
    }
  }
}

GroupKeys::GroupKeys(TypePtr key_schema) : key_schema_(std::move(key_schema)), table_(std::make_unique<GroupTable>()) {
  Clear();
}
GroupKeys::~GroupKeys() = default;

void GroupKeys::Clear() {
  table_->Clear();
  chunks_.assign(static_cast<size_t>(key_schema_->num_fields()), {});
  // Without keys there is one group, the empty key's.
  if (key_schema_->num_fields() == 0) {
    bool inserted = false;
    table_->FindOrInsert(0, "", &inserted);
  }
}

int64_t GroupKeys::size() const { return table_->size(); }

namespace {

// Calls `visit(row, hash, key bytes)` for each of the `n` rows of the key columns, in order, with
// the table's slot of a row a few rows ahead prefetched; stops at the first error it returns.
template <typename Visit>
Status ForEachKey(const GroupTable& table, const TypePtr& key_schema, const std::vector<ColumnPtr>& keys, int64_t n,
                  Visit&& visit) {
  SLUICE_ASSIGN_OR_RETURN(BatchPtr key_rows, RecordBatch::Make(key_schema, keys, n));
  std::vector<int> columns(keys.size());
  for (size_t k = 0; k < keys.size(); ++k) columns[k] = static_cast<int>(k);
  const std::vector<uint64_t> hashes = HashRows(key_rows, columns);
  std::string key;
  constexpr int64_t kPrefetchDistance = 16;
  for (int64_t row = 0; row < std::min(n, kPrefetchDistance); ++row) table.Prefetch(hashes[static_cast<size_t>(row)]);
  for (int64_t row = 0; row < n; ++row) {
    if (row + kPrefetchDistance < n) table.Prefetch(hashes[static_cast<size_t>(row + kPrefetchDistance)]);
    key.clear();
    for (const ColumnPtr& column : keys) AppendKey(*column, row, &key);
    SLUICE_RETURN_IF_ERROR(visit(row, hashes[static_cast<size_t>(row)], key));
  }
  return Status::OK();
}

}  // namespace

Status GroupKeys::Assign(const std::vector<ColumnPtr>& keys, int64_t n, std::vector<int32_t>* groups,
                         std::vector<int64_t>* new_rows) {
  groups->assign(static_cast<size_t>(n), 0);
  new_rows->clear();
  if (keys.empty()) return Status::OK();
  SLUICE_RETURN_IF_ERROR(ForEachKey(*table_, key_schema_, keys, n, [&](int64_t row, uint64_t hash, std::string_view key) {
    if (table_->size() >= std::numeric_limits<int32_t>::max() - 1) {
      return Status::Error(errors::kInvalidArgument, "a streaming operator holds at most 2^31 keys");
    }
    bool inserted = false;
    (*groups)[static_cast<size_t>(row)] = table_->FindOrInsert(hash, key, &inserted);
    if (inserted) new_rows->push_back(row);
    return Status::OK();
  }));
  if (!new_rows->empty()) {
    for (size_t k = 0; k < keys.size(); ++k) chunks_[k].push_back(NormalizedFloats(Take(keys[k], *new_rows)));
  }
  return Status::OK();
}

Status GroupKeys::Find(const std::vector<ColumnPtr>& keys, int64_t n, std::vector<int32_t>* groups) const {
  groups->assign(static_cast<size_t>(n), keys.empty() ? 0 : -1);
  if (keys.empty() || n == 0) return Status::OK();
  return ForEachKey(*table_, key_schema_, keys, n, [&](int64_t row, uint64_t hash, std::string_view key) {
    (*groups)[static_cast<size_t>(row)] = table_->Find(hash, key);
    return Status::OK();
  });
}

Status GroupKeys::Append(const std::vector<int64_t>& groups, std::vector<ColumnPtr>* columns) {
  for (std::vector<ColumnPtr>& chunks : chunks_) {
    if (chunks.size() > 1) {
      SLUICE_ASSIGN_OR_RETURN(ColumnPtr whole, Concatenate(chunks));
      chunks = {std::move(whole)};
    }
    columns->push_back(Take(chunks[0], groups));
  }
  return Status::OK();
}

int64_t GroupKeys::memory_bytes() const {
  int64_t bytes = table_->memory_bytes();
  for (const auto& chunks : chunks_) {
    for (const ColumnPtr& chunk : chunks) bytes += static_cast<int64_t>(chunk->data.size() + chunk->offsets.size() * 8);
  }
  return bytes;
}

}  // namespace sluice
