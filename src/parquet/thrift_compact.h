// The Thrift compact protocol, the encoding of every Parquet footer and page header.
//
// CompactWriter appends to a caller-owned std::string. CompactReader reads from a caller-owned
// byte range that must outlive it; it never reads outside that range, limits struct nesting to
// kMaxDepth, and checks every length and element count against the bytes that remain, so a
// hostile input cannot make it over-read, recurse without bound, or over-allocate. Its errors are
// PARQUET_CORRUPT_FILE. Neither class is synchronized.
//
// Wire format summary (Thrift's compact protocol specification):
//   field header  one byte (delta << 4 | type) when the id grows by 1..15 over the previous field
//                 of the same struct, else the type byte followed by the zigzag-varint i16 id
//   bool field    carried in the header's type (1 = true, 2 = false)
//   i16/i32/i64   zigzag varint; i8 one byte; double 8 bytes little-endian
//   binary        varint length, then the bytes
//   list/set      one byte (size << 4 | element type) when size < 15, else (0xF0 | type) + varint
//   map           varint size, then (key type << 4 | value type) when size > 0
//   struct        its fields, then a stop byte (0)
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "sluice/core/status.h"

namespace sluice::parquet::thrift {

enum class CType : uint8_t {
  kStop = 0,
  kBoolTrue = 1,
  kBoolFalse = 2,
  kByte = 3,
  kI16 = 4,
  kI32 = 5,
  kI64 = 6,
  kDouble = 7,
  kBinary = 8,
  kList = 9,
  kSet = 10,
  kMap = 11,
  kStruct = 12,
};

inline constexpr int kMaxDepth = 64;

class CompactWriter {
 public:
  explicit CompactWriter(std::string* out) : out_(out) {}

  // A struct: StructBegin, its fields, StructEnd (writes the stop byte). The outermost struct of
  // a message is written this way too. Nesting deeper than kMaxDepth is a programming error.
  void StructBegin();
  void StructEnd();

  void FieldBool(int16_t id, bool value) { FieldHeader(id, value ? CType::kBoolTrue : CType::kBoolFalse); }
  void FieldI8(int16_t id, int8_t value) {
    FieldHeader(id, CType::kByte);
    out_->push_back(static_cast<char>(value));
  }
  void FieldI32(int16_t id, int32_t value) {
    FieldHeader(id, CType::kI32);
    I32(value);
  }
  void FieldI64(int16_t id, int64_t value) {
    FieldHeader(id, CType::kI64);
    I64(value);
  }
  void FieldBinary(int16_t id, std::string_view value) {
    FieldHeader(id, CType::kBinary);
    Binary(value);
  }
  // A struct-valued field: the header, then StructBegin. Close it with StructEnd.
  void FieldStructBegin(int16_t id) {
    FieldHeader(id, CType::kStruct);
    StructBegin();
  }
  // A list-valued field: the header, then exactly `size` elements written with the element
  // functions below (StructBegin/StructEnd for struct elements).
  void FieldListBegin(int16_t id, CType element_type, uint32_t size) {
    FieldHeader(id, CType::kList);
    ListBegin(element_type, size);
  }

  // Element values (inside lists) and raw values.
  void ListBegin(CType element_type, uint32_t size);
  void I32(int32_t value) { Varint(ZigZag(value)); }
  void I64(int64_t value) { Varint(ZigZag(value)); }
  void Binary(std::string_view value);
  void Varint(uint64_t value);

  void FieldHeader(int16_t id, CType type);

 private:
  static uint64_t ZigZag(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }

  std::string* out_;
  int16_t last_field_id_ = 0;
  int depth_ = 0;
  int16_t saved_ids_[kMaxDepth] = {};
};

class CompactReader {
 public:
  explicit CompactReader(std::string_view data)
      : data_(reinterpret_cast<const uint8_t*>(data.data())), size_(data.size()) {}

  // Bytes consumed so far.
  size_t position() const { return pos_; }
  size_t remaining() const { return size_ - pos_; }

  // Enters a struct (the outermost message too). Fails past kMaxDepth levels.
  Status StructBegin();
  void StructEnd();

  // The next field of the current struct; *type is kStop (and *id 0) after its last field.
  Status ReadFieldHeader(int16_t* id, CType* type);

  // A bool field's value lives in its header type; pass that type here.
  static Status BoolFromFieldType(CType type, bool* value);
  // A bool element of a list (one byte).
  Status ReadListBool(bool* value);
  Status ReadI8(int8_t* value);
  Status ReadI16(int16_t* value);
  Status ReadI32(int32_t* value);
  Status ReadI64(int64_t* value);
  Status ReadDouble(double* value);
  Status ReadBinary(std::string* value);
  // A list or set header. *size is at most remaining() (every element takes a byte or more).
  Status ReadListHeader(CType* element_type, uint32_t* size);
  // Skips one value of the given type, nested values included.
  Status Skip(CType type);

 private:
  Status ReadVarint(uint64_t* value);
  Status ReadMapHeader(CType* key_type, CType* value_type, uint32_t* size);
  Status Corrupt(std::string_view what) const;

  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  int16_t last_field_id_ = 0;
  int depth_ = 0;
  int16_t saved_ids_[kMaxDepth] = {};
};

}  // namespace sluice::parquet::thrift
