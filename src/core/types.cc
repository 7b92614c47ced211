#include "sluice/core/types.h"

#include <cctype>
#include <unordered_set>

#include "sluice/core/ascii.h"
#include "sluice/core/error_classes.h"

namespace sluice {

namespace {

// Field names print bare when Spark's simpleString would accept them back.
bool NeedsQuoting(std::string_view name) {
  if (name.empty()) return true;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return true;
  }
  return false;
}

}  // namespace

bool Field::operator==(const Field& other) const {
  return name == other.name && nullable == other.nullable && metadata == other.metadata &&
         type->Equals(*other.type);
}

#define SLUICE_PRIMITIVE_FACTORY(Name, Id)                             \
  TypePtr DataType::Name() {                                           \
    static const TypePtr instance(new DataType(TypeId::Id));           \
    return instance;                                                   \
  }
SLUICE_PRIMITIVE_FACTORY(Boolean, kBoolean)
SLUICE_PRIMITIVE_FACTORY(Byte, kByte)
SLUICE_PRIMITIVE_FACTORY(Short, kShort)
SLUICE_PRIMITIVE_FACTORY(Integer, kInteger)
SLUICE_PRIMITIVE_FACTORY(Long, kLong)
SLUICE_PRIMITIVE_FACTORY(Float, kFloat)
SLUICE_PRIMITIVE_FACTORY(Double, kDouble)
SLUICE_PRIMITIVE_FACTORY(String, kString)
SLUICE_PRIMITIVE_FACTORY(Binary, kBinary)
SLUICE_PRIMITIVE_FACTORY(Date, kDate)
SLUICE_PRIMITIVE_FACTORY(Timestamp, kTimestamp)
SLUICE_PRIMITIVE_FACTORY(TimestampNtz, kTimestampNtz)
#undef SLUICE_PRIMITIVE_FACTORY

Result<TypePtr> DataType::Decimal(int precision, int scale) {
  if (precision < 1 || precision > 38 || scale < 0 || scale > precision) {
    return Status::Error(errors::kInvalidDataType,
                         "decimal(" + std::to_string(precision) + "," + std::to_string(scale) +
                             ") is not valid: precision must be 1 to 38 and scale 0 to precision");
  }
  auto* type = new DataType(TypeId::kDecimal);
  type->precision_ = precision;
  type->scale_ = scale;
  return TypePtr(type);
}

Result<TypePtr> DataType::Struct(std::vector<Field> fields) {
  std::unordered_set<std::string_view> seen;
  for (const Field& f : fields) {
    if (f.name.empty()) return Status::Error(errors::kInvalidSchema, "a struct field has an empty name");
    if (f.type == nullptr) return Status::Error(errors::kInvalidSchema, "field `" + f.name + "` has no type");
    if (!seen.insert(f.name).second) {
      return Status::Error(errors::kInvalidSchema, "field name `" + f.name + "` appears twice in one struct");
    }
  }
  auto* type = new DataType(TypeId::kStruct);
  type->fields_ = std::move(fields);
  return TypePtr(type);
}

TypePtr DataType::Array(TypePtr element, bool contains_null) {
  auto* type = new DataType(TypeId::kArray);
  type->element_ = std::move(element);
  type->contains_null_ = contains_null;
  return TypePtr(type);
}

TypePtr DataType::Map(TypePtr key, TypePtr value, bool value_contains_null) {
  auto* type = new DataType(TypeId::kMap);
  type->element_ = std::move(key);
  type->value_ = std::move(value);
  type->contains_null_ = value_contains_null;
  return TypePtr(type);
}

bool DataType::is_integral() const {
  return id_ == TypeId::kByte || id_ == TypeId::kShort || id_ == TypeId::kInteger || id_ == TypeId::kLong;
}

bool DataType::is_numeric() const {
  return is_integral() || id_ == TypeId::kFloat || id_ == TypeId::kDouble || id_ == TypeId::kDecimal;
}

int DataType::byte_width() const {
  switch (id_) {
    case TypeId::kBoolean:
    case TypeId::kByte:
      return 1;
    case TypeId::kShort:
      return 2;
    case TypeId::kInteger:
    case TypeId::kFloat:
    case TypeId::kDate:
      return 4;
    case TypeId::kLong:
    case TypeId::kDouble:
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz:
      return 8;
    case TypeId::kDecimal:
      return 16;
    default:
      return 0;
  }
}

int DataType::FieldIndex(std::string_view name) const {
  for (size_t i = 0; i < fields_.size(); ++i) {
    if (fields_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

int DataType::FieldIndexIgnoreCase(std::string_view name) const {
  int found = -1;
  for (size_t i = 0; i < fields_.size(); ++i) {
    if (EqualsIgnoreCase(fields_[i].name, name)) {
      if (found >= 0) return -2;
      found = static_cast<int>(i);
    }
  }
  return found;
}

std::string_view TypeIdName(TypeId id) {
  switch (id) {
    case TypeId::kBoolean: return "boolean";
    case TypeId::kByte: return "byte";
    case TypeId::kShort: return "short";
    case TypeId::kInteger: return "integer";
    case TypeId::kLong: return "long";
    case TypeId::kFloat: return "float";
    case TypeId::kDouble: return "double";
    case TypeId::kDecimal: return "decimal";
    case TypeId::kString: return "string";
    case TypeId::kBinary: return "binary";
    case TypeId::kDate: return "date";
    case TypeId::kTimestamp: return "timestamp";
    case TypeId::kTimestampNtz: return "timestamp_ntz";
    case TypeId::kStruct: return "struct";
    case TypeId::kArray: return "array";
    case TypeId::kMap: return "map";
  }
  return "unknown";
}

std::string DataType::ToString() const {
  switch (id_) {
    case TypeId::kByte: return "tinyint";
    case TypeId::kShort: return "smallint";
    case TypeId::kInteger: return "int";
    case TypeId::kLong: return "bigint";
    case TypeId::kDecimal:
      return "decimal(" + std::to_string(precision_) + "," + std::to_string(scale_) + ")";
    case TypeId::kArray: return "array<" + element_->ToString() + ">";
    case TypeId::kMap: return "map<" + element_->ToString() + "," + value_->ToString() + ">";
    case TypeId::kStruct: {
      std::string out = "struct<";
      for (size_t i = 0; i < fields_.size(); ++i) {
        if (i > 0) out += ",";
        if (NeedsQuoting(fields_[i].name)) {
          out += "`";
          for (char c : fields_[i].name) {
            if (c == '`') out += '`';
            out += c;
          }
          out += "`";
        } else {
          out += fields_[i].name;
        }
        out += ":" + fields_[i].type->ToString();
      }
      return out + ">";
    }
    default:
      return std::string(TypeIdName(id_));
  }
}

bool DataType::Equals(const DataType& other) const {
  if (this == &other) return true;
  if (id_ != other.id_) return false;
  switch (id_) {
    case TypeId::kDecimal:
      return precision_ == other.precision_ && scale_ == other.scale_;
    case TypeId::kArray:
      return contains_null_ == other.contains_null_ && element_->Equals(*other.element_);
    case TypeId::kMap:
      return contains_null_ == other.contains_null_ && element_->Equals(*other.element_) &&
             value_->Equals(*other.value_);
    case TypeId::kStruct:
      return fields_ == other.fields_;
    default:
      return true;
  }
}

TypePtr AsNullable(const TypePtr& type) {
  switch (type->id()) {
    case TypeId::kStruct: {
      std::vector<Field> fields;
      for (const Field& f : type->fields()) fields.push_back(Field{f.name, AsNullable(f.type), true, f.metadata});
      return *DataType::Struct(std::move(fields));
    }
    case TypeId::kArray: return DataType::Array(AsNullable(type->element_type()), true);
    case TypeId::kMap: return DataType::Map(type->key_type(), AsNullable(type->value_type()), true);
    default: return type;
  }
}

bool EqualsIgnoringNullability(const TypePtr& a, const TypePtr& b) { return AsNullable(a)->Equals(*AsNullable(b)); }

std::vector<std::string> SplitFieldPath(std::string_view path) {
  std::vector<std::string> parts;
  size_t begin = 0;
  while (true) {
    size_t dot = path.find('.', begin);
    parts.emplace_back(path.substr(begin, dot == std::string_view::npos ? std::string_view::npos : dot - begin));
    if (dot == std::string_view::npos) return parts;
    begin = dot + 1;
  }
}

}  // namespace sluice
