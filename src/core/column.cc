#include "sluice/core/column.h"

#include <string>

#include "sluice/core/builder.h"
#include "sluice/core/error_classes.h"

namespace sluice {

namespace {

Status Broken(const Column& column, const std::string& what) {
  return Status::Error(errors::kInternalError,
                       "malformed " + column.type->ToString() + " column: " + what);
}

Status CheckOffsets(const Column& column, int64_t target_size) {
  if (static_cast<int64_t>(column.offsets.size()) != column.length + 1) {
    return Broken(column, "offsets hold " + std::to_string(column.offsets.size()) + " entries for " +
                              std::to_string(column.length) + " rows");
  }
  if (column.offsets[0] != 0) return Broken(column, "the first offset is not 0");
  for (int64_t i = 0; i < column.length; ++i) {
    if (column.offsets[i + 1] < column.offsets[i]) return Broken(column, "offsets decrease at row " + std::to_string(i));
  }
  if (column.offsets[column.length] != target_size) {
    return Broken(column, "the last offset is " + std::to_string(column.offsets[column.length]) + " but the target holds " +
                              std::to_string(target_size));
  }
  return Status::OK();
}

}  // namespace

Status Column::Validate() const {
  if (type == nullptr) return Status::Error(errors::kInternalError, "column without a type");
  if (length < 0) return Broken(*this, "negative length");
  if (!validity.empty()) {
    if (static_cast<int64_t>(validity.size()) != length) return Broken(*this, "validity size differs from length");
    int64_t nulls = 0;
    for (uint8_t v : validity) nulls += v == 0;
    if (nulls != null_count) return Broken(*this, "null_count " + std::to_string(null_count) + " but " + std::to_string(nulls) + " nulls");
  } else if (null_count != 0) {
    return Broken(*this, "null_count without a validity buffer");
  }
  const DataType& t = *type;
  switch (t.id()) {
    case TypeId::kString:
    case TypeId::kBinary:
      if (!children.empty()) return Broken(*this, "unexpected children");
      return CheckOffsets(*this, static_cast<int64_t>(data.size()));
    case TypeId::kStruct: {
      if (static_cast<int>(children.size()) != t.num_fields()) return Broken(*this, "child count differs from field count");
      for (int i = 0; i < t.num_fields(); ++i) {
        const ColumnPtr& child = children[i];
        if (child == nullptr || child->length != length) return Broken(*this, "field " + t.field(i).name + " has a wrong length");
        if (!child->type->Equals(*t.field(i).type)) return Broken(*this, "field " + t.field(i).name + " has a wrong type");
        for (int64_t row = 0; row < length; ++row) {
          if (IsNull(row) && child->IsValid(row)) return Broken(*this, "a null struct row has a valid field");
        }
        SLUICE_RETURN_IF_ERROR(child->Validate());
      }
      return Status::OK();
    }
    case TypeId::kArray:
    case TypeId::kMap: {
      size_t expected = t.id() == TypeId::kArray ? 1 : 2;
      if (children.size() != expected) return Broken(*this, "wrong child count");
      const TypePtr& first = t.id() == TypeId::kArray ? t.element_type() : t.key_type();
      if (children[0] == nullptr || !children[0]->type->Equals(*first)) return Broken(*this, "wrong element type");
      if (expected == 2) {
        if (children[1] == nullptr || !children[1]->type->Equals(*t.value_type())) return Broken(*this, "wrong value type");
        if (children[1]->length != children[0]->length) return Broken(*this, "keys and values differ in length");
        if (children[0]->null_count != 0) return Broken(*this, "a map key is null");
      }
      SLUICE_RETURN_IF_ERROR(CheckOffsets(*this, children[0]->length));
      for (const ColumnPtr& child : children) SLUICE_RETURN_IF_ERROR(child->Validate());
      return Status::OK();
    }
    default:
      if (!children.empty() || !offsets.empty()) return Broken(*this, "unexpected offsets or children");
      if (static_cast<int64_t>(data.size()) != length * t.byte_width()) {
        return Broken(*this, "values buffer holds " + std::to_string(data.size()) + " bytes for " + std::to_string(length) + " rows");
      }
      return Status::OK();
  }
}

ColumnPtr MakeNullColumn(const TypePtr& type, int64_t length) {
  auto builder = ColumnBuilder::Make(type);
  builder->Reserve(length);
  for (int64_t i = 0; i < length; ++i) builder->AppendNull();
  return builder->Finish();
}

}  // namespace sluice
