#include "sluice/core/arrow_c.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

#include "sluice/core/error_classes.h"

namespace sluice {
namespace {

// Where a buffer of no bytes points: consumers may read its address, never its bytes.
alignas(64) const uint8_t kNoBytes[64] = {};

// ---- export -------------------------------------------------------------------------------

// What an exported schema owns. Children are separate holders, so a consumer may move a child
// out and release it on its own.
struct SchemaHolder {
  std::string format;
  std::string name;
  std::vector<ArrowSchema> children;
  std::vector<ArrowSchema*> child_pointers;
};

void ReleaseSchema(ArrowSchema* schema) {
  if (schema == nullptr || schema->release == nullptr) return;
  for (int64_t i = 0; i < schema->n_children; ++i) {
    ArrowSchema* child = schema->children[i];
    if (child->release != nullptr) child->release(child);
  }
  delete static_cast<SchemaHolder*>(schema->private_data);
  schema->release = nullptr;
}

std::string FormatOf(const DataType& type) {
  switch (type.id()) {
    case TypeId::kBoolean: return "b";
    case TypeId::kByte: return "c";
    case TypeId::kShort: return "s";
    case TypeId::kInteger: return "i";
    case TypeId::kLong: return "l";
    case TypeId::kFloat: return "f";
    case TypeId::kDouble: return "g";
    case TypeId::kDecimal: return "d:" + std::to_string(type.precision()) + "," + std::to_string(type.scale());
    case TypeId::kString: return "U";
    case TypeId::kBinary: return "Z";
    case TypeId::kDate: return "tdD";
    case TypeId::kTimestamp: return "tsu:UTC";
    case TypeId::kTimestampNtz: return "tsu:";
    case TypeId::kStruct: return "+s";
    case TypeId::kArray: return "+L";
    case TypeId::kMap: return "+m";
  }
  return "n";
}

void FillSchema(const TypePtr& type, std::string name, bool nullable, int64_t extra_flags, ArrowSchema* out);

void AddChild(SchemaHolder* holder, const TypePtr& type, std::string name, bool nullable, int64_t extra_flags = 0) {
  holder->children.emplace_back();
  FillSchema(type, std::move(name), nullable, extra_flags, &holder->children.back());
}

void FillSchema(const TypePtr& type, std::string name, bool nullable, int64_t extra_flags, ArrowSchema* out) {
  auto* holder = new SchemaHolder{FormatOf(*type), std::move(name), {}, {}};
  switch (type->id()) {
    case TypeId::kStruct:
      holder->children.reserve(type->fields().size());
      for (const Field& field : type->fields()) AddChild(holder, field.type, field.name, field.nullable);
      break;
    case TypeId::kArray:
      holder->children.reserve(1);
      AddChild(holder, type->element_type(), "item", type->contains_null());
      break;
    case TypeId::kMap: {
      holder->children.reserve(1);
      TypePtr entries = *DataType::Struct(
          {Field{"key", type->key_type(), false}, Field{"value", type->value_type(), type->value_contains_null()}});
      AddChild(holder, entries, "entries", false);
      break;
    }
    default:
      break;
  }
  for (ArrowSchema& child : holder->children) holder->child_pointers.push_back(&child);
  out->format = holder->format.c_str();
  out->name = holder->name.c_str();
  out->metadata = nullptr;
  out->flags = (nullable ? ARROW_FLAG_NULLABLE : 0) | extra_flags;
  out->n_children = static_cast<int64_t>(holder->children.size());
  out->children = holder->child_pointers.empty() ? nullptr : holder->child_pointers.data();
  out->dictionary = nullptr;
  out->release = ReleaseSchema;
  out->private_data = holder;
}

// What an exported array owns: a reference to the column whose buffers it points into, and the
// buffers the export had to make.
struct ArrayHolder {
  ColumnPtr column;
  BatchPtr batch;
  std::vector<uint8_t> validity_bits;
  std::vector<uint8_t> value_bits;
  std::vector<int32_t> offsets32;
  std::vector<const void*> buffers;
  std::vector<ArrowArray> children;
  std::vector<ArrowArray*> child_pointers;
};

void ReleaseArray(ArrowArray* array) {
  if (array == nullptr || array->release == nullptr) return;
  for (int64_t i = 0; i < array->n_children; ++i) {
    ArrowArray* child = array->children[i];
    if (child->release != nullptr) child->release(child);
  }
  delete static_cast<ArrayHolder*>(array->private_data);
  array->release = nullptr;
}

std::vector<uint8_t> PackBits(const uint8_t* bytes, int64_t length) {
  std::vector<uint8_t> bits(static_cast<size_t>((length + 7) / 8), 0);
  for (int64_t i = 0; i < length; ++i) {
    if (bytes[i] != 0) bits[static_cast<size_t>(i >> 3)] |= static_cast<uint8_t>(1u << (i & 7));
  }
  return bits;
}

const void* BytesOf(const std::vector<uint8_t>& bytes) { return bytes.empty() ? kNoBytes : bytes.data(); }

const void* OffsetsOf(const std::vector<int64_t>& offsets) {
  return offsets.empty() ? static_cast<const void*>(kNoBytes) : offsets.data();
}

void FillArray(const ColumnPtr& column, ArrowArray* out);

void AddChildArray(ArrayHolder* holder, const ColumnPtr& column) {
  holder->children.emplace_back();
  FillArray(column, &holder->children.back());
}

void FillArray(const ColumnPtr& column, ArrowArray* out) {
  auto* holder = new ArrayHolder;
  holder->column = column;
  const Column& c = *column;
  const void* validity = nullptr;
  if (c.null_count > 0 && !c.validity.empty()) {
    holder->validity_bits = PackBits(c.validity.data(), c.length);
    validity = BytesOf(holder->validity_bits);
  }
  holder->buffers.push_back(validity);
  switch (c.type->id()) {
    case TypeId::kBoolean:
      holder->value_bits = PackBits(c.data.data(), c.length);
      holder->buffers.push_back(BytesOf(holder->value_bits));
      break;
    case TypeId::kString:
    case TypeId::kBinary:
      holder->buffers.push_back(OffsetsOf(c.offsets));
      holder->buffers.push_back(BytesOf(c.data));
      break;
    case TypeId::kStruct:
      holder->children.reserve(c.children.size());
      for (const ColumnPtr& child : c.children) AddChildArray(holder, child);
      break;
    case TypeId::kArray:
      holder->buffers.push_back(OffsetsOf(c.offsets));
      holder->children.reserve(1);
      AddChildArray(holder, c.children[0]);
      break;
    case TypeId::kMap: {
      // Arrow's map offsets are 32-bit; a map column of more than 2^31 entries cannot be one
      // Arrow array, which no batch sluice makes comes near.
      holder->offsets32.resize(c.offsets.size());
      for (size_t i = 0; i < c.offsets.size(); ++i) holder->offsets32[i] = static_cast<int32_t>(c.offsets[i]);
      if (holder->offsets32.empty()) holder->offsets32.push_back(0);
      holder->buffers.push_back(holder->offsets32.data());
      auto entries = std::make_shared<Column>();
      entries->type = *DataType::Struct({Field{"key", c.type->key_type(), false},
                                         Field{"value", c.type->value_type(), c.type->value_contains_null()}});
      entries->length = c.children[0]->length;
      entries->children = {c.children[0], c.children[1]};
      holder->children.reserve(1);
      AddChildArray(holder, entries);
      break;
    }
    default:
      holder->buffers.push_back(BytesOf(c.data));
      break;
  }
  for (ArrowArray& child : holder->children) holder->child_pointers.push_back(&child);
  out->length = c.length;
  out->null_count = validity == nullptr ? 0 : c.null_count;
  out->offset = 0;
  out->n_buffers = static_cast<int64_t>(holder->buffers.size());
  out->n_children = static_cast<int64_t>(holder->children.size());
  out->buffers = holder->buffers.data();
  out->children = holder->child_pointers.empty() ? nullptr : holder->child_pointers.data();
  out->dictionary = nullptr;
  out->release = ReleaseArray;
  out->private_data = holder;
}

struct StreamHolder {
  TypePtr schema;
  std::vector<BatchPtr> batches;
  size_t next = 0;
};

int StreamGetSchema(ArrowArrayStream* stream, ArrowSchema* out) {
  ExportSchema(static_cast<StreamHolder*>(stream->private_data)->schema, out);
  return 0;
}

int StreamGetNext(ArrowArrayStream* stream, ArrowArray* out) {
  auto* holder = static_cast<StreamHolder*>(stream->private_data);
  if (holder->next == holder->batches.size()) {
    std::memset(out, 0, sizeof(*out));
    out->release = nullptr;
    return 0;
  }
  ExportBatch(holder->batches[holder->next++], out);
  return 0;
}

const char* StreamLastError(ArrowArrayStream*) { return nullptr; }

void StreamRelease(ArrowArrayStream* stream) {
  if (stream == nullptr || stream->release == nullptr) return;
  delete static_cast<StreamHolder*>(stream->private_data);
  stream->release = nullptr;
}

// ---- import -------------------------------------------------------------------------------

std::string PathOf(const std::string& parent, const char* name) {
  std::string own = name == nullptr || *name == '\0' ? "<unnamed>" : name;
  return parent.empty() ? own : parent + "." + own;
}

Status Unsupported(const std::string& path, std::string_view format) {
  return Status::Error(errors::kNotImplemented, "Arrow field '" + path + "' has format '" + std::string(format) +
                                                    "', which sluice cannot import");
}

Status Malformed(const std::string& path, const std::string& problem) {
  return Status::Error(errors::kInvalidArgument, "Arrow array of field '" + path + "': " + problem);
}

Result<TypePtr> TypeOf(const ArrowSchema& schema, const std::string& path);

Result<std::vector<Field>> FieldsOf(const ArrowSchema& schema, const std::string& path) {
  std::vector<Field> fields;
  for (int64_t i = 0; i < schema.n_children; ++i) {
    const ArrowSchema& child = *schema.children[i];
    std::string child_path = PathOf(path, child.name);
    SLUICE_ASSIGN_OR_RETURN(TypePtr type, TypeOf(child, child_path));
    fields.push_back(Field{child.name == nullptr ? "" : child.name, std::move(type),
                           (child.flags & ARROW_FLAG_NULLABLE) != 0});
  }
  return fields;
}

Result<TypePtr> TypeOf(const ArrowSchema& schema, const std::string& path) {
  if (schema.format == nullptr) return Malformed(path, "no format");
  std::string_view format = schema.format;
  if (schema.dictionary != nullptr) return Unsupported(path, std::string(format) + " (dictionary-encoded)");
  if (format == "n" || format == "u" || format == "U" || format == "vu") return DataType::String();
  if (format == "z" || format == "Z" || format == "vz") return DataType::Binary();
  if (format == "b") return DataType::Boolean();
  if (format == "c") return DataType::Byte();
  if (format == "s" || format == "C") return DataType::Short();
  if (format == "i" || format == "S") return DataType::Integer();
  if (format == "l" || format == "I") return DataType::Long();
  if (format == "L") return DataType::Decimal(20, 0);
  if (format == "e" || format == "f") return DataType::Float();
  if (format == "g") return DataType::Double();
  if (format == "tdD" || format == "tdm") return DataType::Date();
  if (format.size() >= 4 && format.substr(0, 2) == "ts" && format[3] == ':' &&
      std::string_view("smun").find(format[2]) != std::string_view::npos) {
    return format.size() == 4 ? DataType::TimestampNtz() : DataType::Timestamp();
  }
  if (format.substr(0, 2) == "d:") {
    int precision = 0, scale = 0, bits = 128;
    int fields = std::sscanf(std::string(format.substr(2)).c_str(), "%d,%d,%d", &precision, &scale, &bits);
    if (fields < 2 || bits != 128 || scale < 0) return Unsupported(path, format);
    return DataType::Decimal(precision, scale);
  }
  if (format == "+s") {
    SLUICE_ASSIGN_OR_RETURN(std::vector<Field> fields, FieldsOf(schema, path));
    return DataType::Struct(std::move(fields));
  }
  if (format == "+l" || format == "+L") {
    if (schema.n_children != 1) return Malformed(path, "a list needs one child");
    SLUICE_ASSIGN_OR_RETURN(TypePtr element, TypeOf(*schema.children[0], path + ".element"));
    return DataType::Array(std::move(element), (schema.children[0]->flags & ARROW_FLAG_NULLABLE) != 0);
  }
  if (format == "+m") {
    if (schema.n_children != 1 || schema.children[0]->n_children != 2) {
      return Malformed(path, "a map needs one entries child of two fields");
    }
    const ArrowSchema& entries = *schema.children[0];
    SLUICE_ASSIGN_OR_RETURN(TypePtr key, TypeOf(*entries.children[0], path + ".key"));
    SLUICE_ASSIGN_OR_RETURN(TypePtr value, TypeOf(*entries.children[1], path + ".value"));
    return DataType::Map(std::move(key), std::move(value), (entries.children[1]->flags & ARROW_FLAG_NULLABLE) != 0);
  }
  return Unsupported(path, format);
}

bool BitAt(const void* bits, int64_t i) {
  return (static_cast<const uint8_t*>(bits)[i >> 3] >> (i & 7)) & 1;
}

float HalfToFloat(uint16_t half) {
  int exponent = (half >> 10) & 0x1f;
  int mantissa = half & 0x3ff;
  float magnitude;
  if (exponent == 0) {
    magnitude = std::ldexp(static_cast<float>(mantissa), -24);
  } else if (exponent == 31) {
    magnitude = mantissa == 0 ? INFINITY : NAN;
  } else {
    magnitude = std::ldexp(static_cast<float>(mantissa + 1024), exponent - 25);
  }
  return (half & 0x8000) ? -magnitude : magnitude;
}

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

class Importer {
 public:
  // The `length` rows of `array` from logical row `start` (the array's own offset not yet
  // added) as a column of `type`. `parent_valid`, when given, holds one byte per row of the
  // enclosing struct: a row it marks null is null here too.
  Result<ColumnPtr> Column(const ArrowSchema& schema, const TypePtr& type, const ArrowArray& array, int64_t start,
                           int64_t length, const uint8_t* parent_valid, const std::string& path) {
    if (array.release == nullptr) return Malformed(path, "the array was released");
    if (start < 0 || length < 0 || array.offset < 0 || start + length > array.length) {
      return Malformed(path, "rows outside the array");
    }
    int64_t first = start + array.offset;
    std::string_view format = schema.format;
    auto column = std::make_shared<sluice::Column>();
    column->type = type;
    column->length = length;
    // Validity.
    bool has_bitmap = array.null_count != 0 && array.n_buffers > 0 && array.buffers[0] != nullptr && format != "n";
    if (format == "n" || has_bitmap || parent_valid != nullptr) {
      column->validity.assign(static_cast<size_t>(length), 1);
      for (int64_t i = 0; i < length; ++i) {
        bool valid = format != "n" && (!has_bitmap || BitAt(array.buffers[0], first + i)) &&
                     (parent_valid == nullptr || parent_valid[i] != 0);
        column->validity[static_cast<size_t>(i)] = valid ? 1 : 0;
        column->null_count += valid ? 0 : 1;
      }
      if (column->null_count == 0) column->validity.clear();
    }
    if (format == "n") {
      column->offsets.assign(static_cast<size_t>(length) + 1, 0);
      return ColumnPtr(column);
    }
    auto buffer = [&](int64_t i) -> const uint8_t* {
      if (i >= array.n_buffers) return nullptr;
      return static_cast<const uint8_t*>(array.buffers[i]);
    };
    auto require = [&](int64_t i) -> Result<const uint8_t*> {
      const uint8_t* b = buffer(i);
      if (b == nullptr && length > 0) return Malformed(path, "buffer " + std::to_string(i) + " is missing");
      return b;
    };
    const uint8_t* valid = column->validity.empty() ? nullptr : column->validity.data();
    switch (type->id()) {
      case TypeId::kBoolean: {
        SLUICE_ASSIGN_OR_RETURN(const uint8_t* bits, require(1));
        column->data.resize(static_cast<size_t>(length));
        for (int64_t i = 0; i < length; ++i) column->data[static_cast<size_t>(i)] = BitAt(bits, first + i) ? 1 : 0;
        break;
      }
      case TypeId::kByte:
      case TypeId::kShort:
      case TypeId::kInteger:
      case TypeId::kLong:
      case TypeId::kFloat:
      case TypeId::kDouble:
      case TypeId::kDecimal:
      case TypeId::kDate:
      case TypeId::kTimestamp:
      case TypeId::kTimestampNtz:
        SLUICE_RETURN_IF_ERROR(FixedWidth(format, *type, buffer(1), first, length, column.get(), path));
        break;
      case TypeId::kString:
      case TypeId::kBinary:
        SLUICE_RETURN_IF_ERROR(Bytes(format, array, first, length, column.get(), path));
        break;
      case TypeId::kStruct:
        for (int i = 0; i < type->num_fields(); ++i) {
          if (i >= array.n_children) return Malformed(path, "a struct child is missing");
          SLUICE_ASSIGN_OR_RETURN(ColumnPtr child,
                                  Column(*schema.children[i], type->field(i).type, *array.children[i], first, length,
                                         valid, PathOf(path, schema.children[i]->name)));
          column->children.push_back(std::move(child));
        }
        break;
      case TypeId::kArray:
      case TypeId::kMap: {
        if (array.n_children != 1) return Malformed(path, "a list or map needs one child");
        SLUICE_ASSIGN_OR_RETURN(const uint8_t* raw_offsets, require(1));
        column->offsets.resize(static_cast<size_t>(length) + 1, 0);
        bool wide = format == "+L";
        auto offset_at = [&](int64_t i) -> int64_t {
          if (wide) {
            int64_t v;
            std::memcpy(&v, raw_offsets + (first + i) * 8, 8);
            return v;
          }
          int32_t v;
          std::memcpy(&v, raw_offsets + (first + i) * 4, 4);
          return v;
        };
        int64_t base = length > 0 ? offset_at(0) : 0;
        for (int64_t i = 0; i <= length && length > 0; ++i) {
          int64_t o = offset_at(i);
          if (o < base || (i > 0 && o < base + column->offsets[static_cast<size_t>(i - 1)])) {
            return Malformed(path, "offsets are not ascending");
          }
          column->offsets[static_cast<size_t>(i)] = o - base;
        }
        int64_t count = column->offsets.back();
        const ArrowArray& child = *array.children[0];
        if (base + count > child.length) return Malformed(path, "offsets run past the child's rows");
        const ArrowSchema& child_schema = *schema.children[0];
        if (type->id() == TypeId::kArray) {
          SLUICE_ASSIGN_OR_RETURN(ColumnPtr elements, Column(child_schema, type->element_type(), child, base, count,
                                                             nullptr, path + ".element"));
          column->children.push_back(std::move(elements));
        } else {
          if (child.n_children != 2 || child_schema.n_children != 2) {
            return Malformed(path, "a map's entries need two children");
          }
          int64_t entries_first = base + child.offset;
          SLUICE_ASSIGN_OR_RETURN(ColumnPtr keys, Column(*child_schema.children[0], type->key_type(),
                                                         *child.children[0], entries_first, count, nullptr, path + ".key"));
          if (keys->null_count > 0) return Malformed(path, "a map key is null");
          SLUICE_ASSIGN_OR_RETURN(ColumnPtr values,
                                  Column(*child_schema.children[1], type->value_type(), *child.children[1],
                                         entries_first, count, nullptr, path + ".value"));
          column->children = {std::move(keys), std::move(values)};
        }
        break;
      }
    }
    return ColumnPtr(column);
  }

 private:
  static Status FixedWidth(std::string_view format, const DataType& type, const uint8_t* values, int64_t first,
                           int64_t length, sluice::Column* column, const std::string& path) {
    int width = type.byte_width();
    column->data.resize(static_cast<size_t>(length) * static_cast<size_t>(width));
    if (length == 0) return Status::OK();
    if (values == nullptr) return Malformed(path, "buffer 1 is missing");
    uint8_t* out = column->data.data();
    auto widen = [&]<typename From, typename To>(From*, To*, auto convert) {
      for (int64_t i = 0; i < length; ++i) {
        From v;
        std::memcpy(&v, values + (first + i) * static_cast<int64_t>(sizeof(From)), sizeof(From));
        To w = convert(v);
        std::memcpy(out + i * static_cast<int64_t>(sizeof(To)), &w, sizeof(To));
      }
    };
    if (format == "C") {
      widen(static_cast<uint8_t*>(nullptr), static_cast<int16_t*>(nullptr), [](uint8_t v) { return int16_t(v); });
    } else if (format == "S") {
      widen(static_cast<uint16_t*>(nullptr), static_cast<int32_t*>(nullptr), [](uint16_t v) { return int32_t(v); });
    } else if (format == "I") {
      widen(static_cast<uint32_t*>(nullptr), static_cast<int64_t*>(nullptr), [](uint32_t v) { return int64_t(v); });
    } else if (format == "L") {
      widen(static_cast<uint64_t*>(nullptr), static_cast<int128_t*>(nullptr), [](uint64_t v) { return int128_t(v); });
    } else if (format == "e") {
      widen(static_cast<uint16_t*>(nullptr), static_cast<float*>(nullptr), HalfToFloat);
    } else if (format == "tdm") {
      widen(static_cast<int64_t*>(nullptr), static_cast<int32_t*>(nullptr),
            [](int64_t ms) { return static_cast<int32_t>(FloorDiv(ms, 86'400'000)); });
    } else if (format.substr(0, 2) == "ts" && format[2] != 'u') {
      char unit = format[2];
      for (int64_t i = 0; i < length; ++i) {
        int64_t v;
        std::memcpy(&v, values + (first + i) * 8, 8);
        int64_t micros;
        if (unit == 'n') {
          micros = FloorDiv(v, 1000);
        } else {
          int64_t factor = unit == 's' ? 1'000'000 : 1000;
          if (__builtin_mul_overflow(v, factor, &micros)) {
            return Malformed(path, "a timestamp is outside the microsecond range");
          }
        }
        std::memcpy(out + i * 8, &micros, 8);
      }
    } else {
      std::memcpy(out, values + first * width, static_cast<size_t>(length) * static_cast<size_t>(width));
    }
    return Status::OK();
  }

  static Status Bytes(std::string_view format, const ArrowArray& array, int64_t first, int64_t length,
                      sluice::Column* column, const std::string& path) {
    column->offsets.assign(static_cast<size_t>(length) + 1, 0);
    if (length == 0) return Status::OK();
    if (format == "vu" || format == "vz") {
      if (array.n_buffers < 2 || array.buffers[1] == nullptr) return Malformed(path, "the views buffer is missing");
      const auto* views = static_cast<const uint8_t*>(array.buffers[1]);
      int64_t data_buffers = array.n_buffers - 3;  // validity, views, ..., variadic sizes
      for (int64_t i = 0; i < length; ++i) {
        const uint8_t* view = views + (first + i) * 16;
        int32_t size;
        std::memcpy(&size, view, 4);
        if (size < 0) return Malformed(path, "a view has a negative length");
        if (size <= 12) {
          column->data.insert(column->data.end(), view + 4, view + 4 + size);
        } else {
          int32_t index, offset;
          std::memcpy(&index, view + 8, 4);
          std::memcpy(&offset, view + 12, 4);
          if (index < 0 || index >= data_buffers || offset < 0 || array.buffers[2 + index] == nullptr) {
            return Malformed(path, "a view points at no buffer");
          }
          const auto* data = static_cast<const uint8_t*>(array.buffers[2 + index]) + offset;
          column->data.insert(column->data.end(), data, data + size);
        }
        column->offsets[static_cast<size_t>(i) + 1] = static_cast<int64_t>(column->data.size());
      }
      return Status::OK();
    }
    if (array.n_buffers < 3 || array.buffers[1] == nullptr) return Malformed(path, "the offsets buffer is missing");
    const auto* raw = static_cast<const uint8_t*>(array.buffers[1]);
    bool wide = format == "U" || format == "Z";
    auto offset_at = [&](int64_t i) -> int64_t {
      if (wide) {
        int64_t v;
        std::memcpy(&v, raw + (first + i) * 8, 8);
        return v;
      }
      int32_t v;
      std::memcpy(&v, raw + (first + i) * 4, 4);
      return v;
    };
    int64_t begin = offset_at(0);
    int64_t end = offset_at(length);
    if (begin < 0 || end < begin) return Malformed(path, "offsets are not ascending");
    for (int64_t i = 1; i <= length; ++i) {
      int64_t o = offset_at(i);
      if (o < begin + column->offsets[static_cast<size_t>(i - 1)] || o > end) {
        return Malformed(path, "offsets are not ascending");
      }
      column->offsets[static_cast<size_t>(i)] = o - begin;
    }
    if (end > begin) {
      if (array.buffers[2] == nullptr) return Malformed(path, "the data buffer is missing");
      const auto* data = static_cast<const uint8_t*>(array.buffers[2]);
      column->data.assign(data + begin, data + end);
    }
    return Status::OK();
  }
};

}  // namespace

void ExportSchema(const TypePtr& schema, ArrowSchema* out) { FillSchema(schema, "", false, 0, out); }

void ExportBatch(const BatchPtr& batch, ArrowArray* out) {
  auto holder = std::make_unique<ArrayHolder>();
  holder->batch = batch;
  holder->buffers.push_back(nullptr);
  holder->children.reserve(batch->columns().size());
  for (const ColumnPtr& column : batch->columns()) AddChildArray(holder.get(), column);
  for (ArrowArray& child : holder->children) holder->child_pointers.push_back(&child);
  out->length = batch->num_rows();
  out->null_count = 0;
  out->offset = 0;
  out->n_buffers = 1;
  out->n_children = static_cast<int64_t>(holder->children.size());
  out->buffers = holder->buffers.data();
  out->children = holder->child_pointers.empty() ? nullptr : holder->child_pointers.data();
  out->dictionary = nullptr;
  out->release = ReleaseArray;
  out->private_data = holder.release();
}

void ExportStream(const TypePtr& schema, std::vector<BatchPtr> batches, ArrowArrayStream* out) {
  out->get_schema = StreamGetSchema;
  out->get_next = StreamGetNext;
  out->get_last_error = StreamLastError;
  out->release = StreamRelease;
  out->private_data = new StreamHolder{schema, std::move(batches), 0};
}

Result<TypePtr> ImportSchema(const ArrowSchema& schema) {
  if (schema.release == nullptr) return Malformed("<schema>", "the schema was released");
  if (schema.format == nullptr || std::string_view(schema.format) != "+s") {
    return Status::Error(errors::kInvalidArgument,
                         std::string("an Arrow record batch has a struct schema (+s), not '") +
                             (schema.format == nullptr ? "" : schema.format) + "'");
  }
  SLUICE_ASSIGN_OR_RETURN(std::vector<Field> fields, FieldsOf(schema, ""));
  return DataType::Struct(std::move(fields));
}

Result<BatchPtr> ImportBatch(const ArrowSchema& schema, const TypePtr& type, const ArrowArray& array) {
  if (array.release == nullptr) return Malformed("<batch>", "the array was released");
  if (array.n_children != type->num_fields()) {
    return Malformed("<batch>", "it has " + std::to_string(array.n_children) + " columns, its schema " +
                                    std::to_string(type->num_fields()));
  }
  if (array.length < 0 || array.offset < 0) return Malformed("<batch>", "a negative length or offset");
  bool has_nulls = array.null_count != 0 && array.n_buffers > 0 && array.buffers[0] != nullptr;
  if (has_nulls) return Malformed("<batch>", "a record batch has no null rows");
  Importer importer;
  std::vector<ColumnPtr> columns;
  for (int i = 0; i < type->num_fields(); ++i) {
    const ArrowArray& child = *array.children[i];
    if (child.length < array.offset + array.length) return Malformed(type->field(i).name, "fewer rows than its batch");
    SLUICE_ASSIGN_OR_RETURN(ColumnPtr column, importer.Column(*schema.children[i], type->field(i).type, child,
                                                              array.offset, array.length, nullptr,
                                                              PathOf("", schema.children[i]->name)));
    if (!type->field(i).nullable && column->null_count > 0) {
      return Malformed(type->field(i).name, "a null in a field that is not nullable");
    }
    columns.push_back(std::move(column));
  }
  return RecordBatch::Make(type, std::move(columns), array.length);
}

Result<ImportedStream> ImportStream(ArrowArrayStream* stream) {
  struct Releaser {
    ArrowArrayStream* stream;
    ~Releaser() {
      if (stream->release != nullptr) stream->release(stream);
    }
  } releaser{stream};
  auto failure = [&](int code) {
    const char* message = stream->get_last_error == nullptr ? nullptr : stream->get_last_error(stream);
    return Status::Error(errors::kInvalidArgument, "the Arrow stream failed (" + std::to_string(code) + "): " +
                                                       (message == nullptr ? "no message" : message));
  };
  ArrowSchema schema{};
  if (int code = stream->get_schema(stream, &schema); code != 0) return failure(code);
  struct SchemaReleaser {
    ArrowSchema* schema;
    ~SchemaReleaser() {
      if (schema->release != nullptr) schema->release(schema);
    }
  } schema_releaser{&schema};
  ImportedStream imported;
  SLUICE_ASSIGN_OR_RETURN(imported.schema, ImportSchema(schema));
  while (true) {
    ArrowArray array{};
    if (int code = stream->get_next(stream, &array); code != 0) return failure(code);
    if (array.release == nullptr) break;
    Result<BatchPtr> batch = ImportBatch(schema, imported.schema, array);
    array.release(&array);
    if (!batch.ok()) return batch.status();
    imported.batches.push_back(*std::move(batch));
  }
  return imported;
}

}  // namespace sluice
