// Columns: the columnar representation every layer moves data in.
//
// A Column is an immutable value once shared (ColumnPtr is a shared_ptr to const). Its layout
// depends on its type (see TypeId in types.h):
//   validity  one byte per row, 1 = valid, 0 = null; EMPTY when no row is null.
//   data      fixed-width types: length * byte_width bytes of values (a null row's value is
//             unspecified but initialized). string/binary: the concatenated bytes.
//   offsets   string, binary, array, map: length + 1 int64 offsets into data (string/binary)
//             or into the child rows (array: children[0]; map: children[0] keys, [1] values).
//   children  struct: one per field, each of the struct's length; array/map as above.
// A null struct row has null in every child at that row. Build columns with the builders in
// builder.h, or fill the fields directly and call Validate() (decoders that know their sizes).
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

#include "sluice/core/status.h"
#include "sluice/core/types.h"

namespace sluice {

struct Column;
using ColumnPtr = std::shared_ptr<const Column>;

struct Column {
  TypePtr type;
  int64_t length = 0;
  int64_t null_count = 0;
  std::vector<uint8_t> validity;
  std::vector<uint8_t> data;
  std::vector<int64_t> offsets;
  std::vector<ColumnPtr> children;

  bool IsValid(int64_t row) const { return validity.empty() || validity[row] != 0; }
  bool IsNull(int64_t row) const { return !IsValid(row); }

  // Fixed-width values; T must match the type's physical type (see TypeId).
  template <typename T>
  const T* values() const {
    return reinterpret_cast<const T*>(data.data());
  }
  template <typename T>
  T Value(int64_t row) const {
    T v;
    std::memcpy(&v, data.data() + row * sizeof(T), sizeof(T));
    return v;
  }
  // String and binary rows.
  std::string_view View(int64_t row) const {
    return std::string_view(reinterpret_cast<const char*>(data.data()) + offsets[row],
                            static_cast<size_t>(offsets[row + 1] - offsets[row]));
  }

  // Checks every layout invariant above (sizes, offsets monotonic and in range, null_count,
  // children lengths), recursively. INTERNAL_ERROR names the broken invariant.
  Status Validate() const;
};

// A column of `length` nulls of any type.
ColumnPtr MakeNullColumn(const TypePtr& type, int64_t length);

}  // namespace sluice
