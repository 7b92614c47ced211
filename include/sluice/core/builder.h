// Builders append values row by row into a Column without a heap allocation per value (buffers
// grow geometrically; Reserve() avoids even that). A builder is used by one thread at a time.
// Finish() hands out the column and leaves the builder empty and reusable.
//
// Nested builders own their child builders: append the children's values, then call Append()
// on the parent for each row (struct: after the row's fields; array/map: after its elements).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "sluice/core/column.h"

namespace sluice {

class ColumnBuilder {
 public:
  virtual ~ColumnBuilder() = default;
  // A builder for any type; nested types get nested builders.
  static std::unique_ptr<ColumnBuilder> Make(TypePtr type);

  const TypePtr& type() const { return type_; }
  int64_t length() const { return length_; }
  int64_t null_count() const { return null_count_; }

  // Appends a null row (for a struct: nulls in every child too).
  virtual void AppendNull() = 0;
  virtual void Reserve(int64_t rows) = 0;
  virtual ColumnPtr Finish() = 0;

 protected:
  explicit ColumnBuilder(TypePtr type) : type_(std::move(type)) {}
  void MarkValid() {
    if (!validity_.empty()) validity_.push_back(1);
    ++length_;
  }
  void MarkNull();
  // Moves validity, length and null count into `column` and resets them.
  void FinishCommon(Column* column);

  TypePtr type_;
  int64_t length_ = 0;
  int64_t null_count_ = 0;
  std::vector<uint8_t> validity_;  // materialized at the first null
};

// boolean (T = uint8_t), byte, short, integer, long, float, double, decimal (T = int128_t),
// date (int32_t), timestamp and timestamp_ntz (int64_t).
template <typename T>
class FixedWidthBuilder final : public ColumnBuilder {
 public:
  explicit FixedWidthBuilder(TypePtr type) : ColumnBuilder(std::move(type)) {}
  void Append(T value) {
    values_.push_back(value);
    MarkValid();
  }
  void AppendNull() override {
    values_.push_back(T{});
    MarkNull();
  }
  void Reserve(int64_t rows) override { values_.reserve(values_.size() + rows); }
  ColumnPtr Finish() override;

 private:
  std::vector<T> values_;
};

using BooleanBuilder = FixedWidthBuilder<uint8_t>;
using Int8Builder = FixedWidthBuilder<int8_t>;
using Int16Builder = FixedWidthBuilder<int16_t>;
using Int32Builder = FixedWidthBuilder<int32_t>;
using Int64Builder = FixedWidthBuilder<int64_t>;
using FloatBuilder = FixedWidthBuilder<float>;
using DoubleBuilder = FixedWidthBuilder<double>;
using DecimalBuilder = FixedWidthBuilder<int128_t>;

// string and binary.
class BinaryBuilder final : public ColumnBuilder {
 public:
  explicit BinaryBuilder(TypePtr type);
  void Append(std::string_view value) {
    bytes_.insert(bytes_.end(), value.begin(), value.end());
    offsets_.push_back(static_cast<int64_t>(bytes_.size()));
    MarkValid();
  }
  // Appends a valid value of `size` bytes and returns where the caller writes them (valid until
  // the next call on this builder): decoders fill values in place without a temporary.
  uint8_t* AppendUninitialized(int64_t size) {
    size_t start = bytes_.size();
    bytes_.resize(start + static_cast<size_t>(size));
    offsets_.push_back(static_cast<int64_t>(bytes_.size()));
    MarkValid();
    return bytes_.data() + start;
  }
  void AppendNull() override {
    offsets_.push_back(static_cast<int64_t>(bytes_.size()));
    MarkNull();
  }
  void Reserve(int64_t rows) override { offsets_.reserve(offsets_.size() + rows); }
  void ReserveBytes(int64_t bytes) { bytes_.reserve(bytes_.size() + bytes); }
  ColumnPtr Finish() override;

 private:
  std::vector<uint8_t> bytes_;
  std::vector<int64_t> offsets_;
};

class StructBuilder final : public ColumnBuilder {
 public:
  explicit StructBuilder(TypePtr type);
  ColumnBuilder* field_builder(int i) { return fields_[i].get(); }
  int num_fields() const { return static_cast<int>(fields_.size()); }
  // Ends a valid row: each field builder must already hold this row's value.
  void Append() { MarkValid(); }
  void AppendNull() override;
  void Reserve(int64_t rows) override;
  ColumnPtr Finish() override;

 private:
  std::vector<std::unique_ptr<ColumnBuilder>> fields_;
};

// array (one child: elements) and map (two children: keys and values, appended pairwise).
class ListBuilder final : public ColumnBuilder {
 public:
  explicit ListBuilder(TypePtr type);
  ColumnBuilder* element_builder() { return children_[0].get(); }
  ColumnBuilder* key_builder() { return children_[0].get(); }
  ColumnBuilder* value_builder() { return children_[1].get(); }
  // Ends a valid row holding every element appended to the children since the previous row.
  void Append() {
    offsets_.push_back(children_[0]->length());
    MarkValid();
  }
  void AppendNull() override {
    offsets_.push_back(children_[0]->length());
    MarkNull();
  }
  void Reserve(int64_t rows) override { offsets_.reserve(offsets_.size() + rows); }
  ColumnPtr Finish() override;

 private:
  std::vector<std::unique_ptr<ColumnBuilder>> children_;
  std::vector<int64_t> offsets_;
};

}  // namespace sluice
