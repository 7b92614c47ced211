#include "sluice/core/builder.h"

#include <cstring>

namespace sluice {

void ColumnBuilder::MarkNull() {
  if (validity_.empty()) {
    validity_.reserve(length_ + 64);
    validity_.assign(length_, 1);
  }
  validity_.push_back(0);
  ++length_;
  ++null_count_;
}

void ColumnBuilder::FinishCommon(Column* column) {
  column->type = type_;
  column->length = length_;
  column->null_count = null_count_;
  column->validity = std::move(validity_);
  validity_.clear();
  length_ = 0;
  null_count_ = 0;
}

template <typename T>
ColumnPtr FixedWidthBuilder<T>::Finish() {
  auto column = std::make_shared<Column>();
  column->data.resize(values_.size() * sizeof(T));
  if (!values_.empty()) std::memcpy(column->data.data(), values_.data(), column->data.size());
  values_.clear();
  FinishCommon(column.get());
  return column;
}

template class FixedWidthBuilder<uint8_t>;
template class FixedWidthBuilder<int8_t>;
template class FixedWidthBuilder<int16_t>;
template class FixedWidthBuilder<int32_t>;
template class FixedWidthBuilder<int64_t>;
template class FixedWidthBuilder<float>;
template class FixedWidthBuilder<double>;
template class FixedWidthBuilder<int128_t>;

BinaryBuilder::BinaryBuilder(TypePtr type) : ColumnBuilder(std::move(type)) { offsets_.push_back(0); }

ColumnPtr BinaryBuilder::Finish() {
  auto column = std::make_shared<Column>();
  column->data = std::move(bytes_);
  column->offsets = std::move(offsets_);
  bytes_.clear();
  offsets_.assign(1, 0);
  FinishCommon(column.get());
  return column;
}

StructBuilder::StructBuilder(TypePtr type) : ColumnBuilder(std::move(type)) {
  for (const Field& f : type_->fields()) fields_.push_back(ColumnBuilder::Make(f.type));
}

void StructBuilder::AppendNull() {
  for (auto& f : fields_) f->AppendNull();
  MarkNull();
}

void StructBuilder::Reserve(int64_t rows) {
  for (auto& f : fields_) f->Reserve(rows);
}

ColumnPtr StructBuilder::Finish() {
  auto column = std::make_shared<Column>();
  for (auto& f : fields_) column->children.push_back(f->Finish());
  FinishCommon(column.get());
  return column;
}

ListBuilder::ListBuilder(TypePtr type) : ColumnBuilder(std::move(type)) {
  if (type_->id() == TypeId::kArray) {
    children_.push_back(ColumnBuilder::Make(type_->element_type()));
  } else {
    children_.push_back(ColumnBuilder::Make(type_->key_type()));
    children_.push_back(ColumnBuilder::Make(type_->value_type()));
  }
  offsets_.push_back(0);
}

ColumnPtr ListBuilder::Finish() {
  auto column = std::make_shared<Column>();
  for (auto& c : children_) column->children.push_back(c->Finish());
  column->offsets = std::move(offsets_);
  offsets_.assign(1, 0);
  FinishCommon(column.get());
  return column;
}

std::unique_ptr<ColumnBuilder> ColumnBuilder::Make(TypePtr type) {
  switch (type->id()) {
    case TypeId::kBoolean: return std::make_unique<BooleanBuilder>(std::move(type));
    case TypeId::kByte: return std::make_unique<Int8Builder>(std::move(type));
    case TypeId::kShort: return std::make_unique<Int16Builder>(std::move(type));
    case TypeId::kInteger:
    case TypeId::kDate: return std::make_unique<Int32Builder>(std::move(type));
    case TypeId::kLong:
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: return std::make_unique<Int64Builder>(std::move(type));
    case TypeId::kFloat: return std::make_unique<FloatBuilder>(std::move(type));
    case TypeId::kDouble: return std::make_unique<DoubleBuilder>(std::move(type));
    case TypeId::kDecimal: return std::make_unique<DecimalBuilder>(std::move(type));
    case TypeId::kString:
    case TypeId::kBinary: return std::make_unique<BinaryBuilder>(std::move(type));
    case TypeId::kStruct: return std::make_unique<StructBuilder>(std::move(type));
    case TypeId::kArray:
    case TypeId::kMap: return std::make_unique<ListBuilder>(std::move(type));
  }
  return nullptr;
}

}  // namespace sluice
