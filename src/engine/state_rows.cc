#include "engine/state_rows.h"

#include <fmt/format.h>

#include <cstring>
#include <memory>

#include "sluice/core/error_classes.h"

namespace sluice::engine {
namespace {

void AppendLength(uint64_t length, std::string* out) {
  char bytes[sizeof length];
  std::memcpy(bytes, &length, sizeof length);
  out->append(bytes, sizeof length);
}

void EncodeValue(const Column& column, int64_t row, std::string* out) {
  if (column.IsNull(row)) {
    out->push_back('\0');
    return;
  }
  out->push_back('\1');
  const DataType& type = *column.type;
  switch (type.id()) {
    case TypeId::kString:
    case TypeId::kBinary: {
      std::string_view bytes = column.View(row);
      AppendLength(bytes.size(), out);
      out->append(bytes);
      return;
    }
    case TypeId::kStruct:
      for (const ColumnPtr& field : column.children) EncodeValue(*field, row, out);
      return;
    case TypeId::kArray:
    case TypeId::kMap: {
      const int64_t begin = column.offsets[row];
      const int64_t end = column.offsets[row + 1];
      AppendLength(static_cast<uint64_t>(end - begin), out);
      for (int64_t i = begin; i < end; ++i) {
        for (const ColumnPtr& child : column.children) EncodeValue(*child, i, out);
      }
      return;
    }
    default: {
      const size_t width = static_cast<size_t>(type.byte_width());
      out->append(reinterpret_cast<const char*>(column.data.data()) + static_cast<size_t>(row) * width, width);
      return;
    }
  }
}

// A column being decoded, value by value.
struct Decoding {
  explicit Decoding(TypePtr column_type) : type(std::move(column_type)) {
    if (type->id() == TypeId::kString || type->id() == TypeId::kBinary || type->id() == TypeId::kArray ||
        type->id() == TypeId::kMap) {
      offsets.push_back(0);
    }
    switch (type->id()) {
      case TypeId::kStruct:
        for (const Field& field : type->fields()) children.push_back(std::make_unique<Decoding>(field.type));
        break;
      case TypeId::kArray: children.push_back(std::make_unique<Decoding>(type->element_type())); break;
      case TypeId::kMap:
        children.push_back(std::make_unique<Decoding>(type->key_type()));
        children.push_back(std::make_unique<Decoding>(type->value_type()));
        break;
      default: break;
    }
  }

  void AppendNull() {
    validity.push_back(0);
    ++length;
    ++null_count;
    switch (type->id()) {
      case TypeId::kString:
      case TypeId::kBinary: offsets.push_back(static_cast<int64_t>(data.size())); break;
      case TypeId::kArray:
      case TypeId::kMap: offsets.push_back(children[0]->length); break;
      case TypeId::kStruct:
        for (auto& child : children) child->AppendNull();
        break;
      default: data.resize(data.size() + static_cast<size_t>(type->byte_width()), 0); break;
    }
  }

  ColumnPtr Finish() {
    auto column = std::make_shared<Column>();
    column->type = type;
    column->length = length;
    column->null_count = null_count;
    if (null_count > 0) column->validity = std::move(validity);
    column->data = std::move(data);
    column->offsets = std::move(offsets);
    for (auto& child : children) column->children.push_back(child->Finish());
    return column;
  }

  TypePtr type;
  int64_t length = 0;
  int64_t null_count = 0;
  std::vector<uint8_t> validity;
  std::vector<uint8_t> data;
  std::vector<int64_t> offsets;
  std::vector<std::unique_ptr<Decoding>> children;
};

class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  bool done() const { return at_ == bytes_.size(); }

  bool Take(size_t n, const char** out) {
    if (bytes_.size() - at_ < n) return false;
    *out = bytes_.data() + at_;
    at_ += n;
    return true;
  }
  bool Length(uint64_t* length) {
    const char* bytes;
    if (!Take(sizeof *length, &bytes)) return false;
    std::memcpy(length, bytes, sizeof *length);
    // Each element or byte takes at least one byte: a length past the end is damage.
    return *length <= bytes_.size() - at_;
  }

  bool Value(Decoding& into) {
    const char* flag;
    if (!Take(1, &flag)) return false;
    if (*flag == '\0') {
      into.AppendNull();
      return true;
    }
    if (*flag != '\1') return false;
    switch (into.type->id()) {
      case TypeId::kString:
      case TypeId::kBinary: {
        uint64_t size;
        const char* bytes;
        if (!Length(&size) || !Take(size, &bytes)) return false;
        into.data.insert(into.data.end(), bytes, bytes + size);
        into.offsets.push_back(static_cast<int64_t>(into.data.size()));
        break;
      }
      case TypeId::kStruct:
        for (auto& child : into.children) {
          if (!Value(*child)) return false;
        }
        break;
      case TypeId::kArray:
      case TypeId::kMap: {
        uint64_t count;
        if (!Length(&count)) return false;
        for (uint64_t i = 0; i < count; ++i) {
          for (auto& child : into.children) {
            if (!Value(*child)) return false;
          }
          // A map's key is never null.
          if (into.type->id() == TypeId::kMap && into.children[0]->validity.back() == 0) return false;
        }
        into.offsets.push_back(into.children[0]->length);
        break;
      }
      default: {
        const size_t width = static_cast<size_t>(into.type->byte_width());
        const char* bytes;
        if (!Take(width, &bytes)) return false;
        if (into.type->id() == TypeId::kBoolean && static_cast<uint8_t>(*bytes) > 1) return false;
        into.data.insert(into.data.end(), bytes, bytes + width);
        break;
      }
    }
    into.validity.push_back(1);
    ++into.length;
    return true;
  }

 private:
  std::string_view bytes_;
  size_t at_ = 0;
};

}  // namespace

void EncodeStateRow(const RecordBatch& rows, int64_t row, std::string* out) {
  for (const ColumnPtr& column : rows.columns()) EncodeValue(*column, row, out);
}

Result<BatchPtr> DecodeStateRows(const TypePtr& schema, const std::vector<std::string_view>& encoded) {
  std::vector<std::unique_ptr<Decoding>> columns;
  for (const Field& field : schema->fields()) columns.push_back(std::make_unique<Decoding>(field.type));
  for (size_t i = 0; i < encoded.size(); ++i) {
    Reader reader(encoded[i]);
    for (auto& column : columns) {
      if (!reader.Value(*column)) {
        return Status::Error(errors::kCannotLoadStateStore,
                             fmt::format("a state row ({} bytes) is damaged: it is not a row of {}",
                                         encoded[i].size(), schema->ToString()));
      }
    }
    if (!reader.done()) {
      return Status::Error(errors::kCannotLoadStateStore,
                           fmt::format("a state row ({} bytes) has bytes past its end", encoded[i].size()));
    }
  }
  std::vector<ColumnPtr> finished;
  for (auto& column : columns) {
    finished.push_back(column->Finish());
    // Whatever else the bytes got wrong is damage too.
    if (Status valid = finished.back()->Validate(); !valid.ok()) {
      return Status::Error(errors::kCannotLoadStateStore, fmt::format("damaged state rows: {}", valid.message()));
    }
  }
  return RecordBatch::Make(schema, std::move(finished), static_cast<int64_t>(encoded.size()));
}

}  // namespace sluice::engine
