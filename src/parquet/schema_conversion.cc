#include "parquet/schema_conversion.h"

#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "sluice/core/error_classes.h"

namespace sluice::parquet {

namespace {

constexpr int kMaxNesting = 100;

using Kind = LogicalType::Kind;

// The Parquet field id a field's metadata gives (`"parquet.field.id":N`, Spark's key), if any.
std::optional<int32_t> FieldIdOf(const Field& field) {
  constexpr std::string_view kKey = "\"parquet.field.id\":";
  size_t at = field.metadata.find(kKey);
  if (at == std::string::npos) return std::nullopt;
  const char* begin = field.metadata.data() + at + kKey.size();
  int32_t id = 0;
  auto [end, error] = std::from_chars(begin, field.metadata.data() + field.metadata.size(), id);
  if (error != std::errc()) return std::nullopt;
  return id;
}

// Appends the elements of a struct field, with its field id.
Status AppendFieldElements(const Field& field, std::vector<SchemaElement>* out);

bool IsAnnotated(const SchemaElement& e, Kind kind, ConvertedType converted) {
  if (e.logical_type && e.logical_type->kind == kind) return true;
  return e.converted_type && *e.converted_type == converted;
}

bool IsRepeated(const SchemaElement& e) { return e.repetition_type == FieldRepetitionType::kRepeated; }
bool IsOptional(const SchemaElement& e) { return e.repetition_type == FieldRepetitionType::kOptional; }
bool IsGroup(const SchemaElement& e) { return e.num_children.has_value(); }

// The decimal annotation of a leaf, if it has a usable one: precision 1..38 and 0 <= scale <=
// precision, small enough for its physical type.
bool DecimalOf(const SchemaElement& e, int* precision, int* scale) {
  if (e.logical_type && e.logical_type->kind == Kind::kDecimal) {
    *precision = e.logical_type->precision;
    *scale = e.logical_type->scale;
  } else if (e.converted_type == ConvertedType::kDecimal && e.precision) {
    *precision = *e.precision;
    *scale = e.scale.value_or(0);
  } else {
    return false;
  }
  if (*precision < 1 || *precision > 38 || *scale < 0 || *scale > *precision) return false;
  if (*e.type != Type::kInt32 && *e.type != Type::kInt64 && *e.type != Type::kFixedLenByteArray &&
      *e.type != Type::kByteArray) {
    return false;
  }
  if (*e.type == Type::kInt32 && *precision > 9) return false;
  if (*e.type == Type::kInt64 && *precision > 18) return false;
  return *e.type != Type::kFixedLenByteArray || (e.type_length && *e.type_length >= DecimalByteWidth(*precision) &&
                                                 *e.type_length <= 16);
}

TypePtr LeafType(const SchemaElement& e) {
  int precision, scale;
  if (DecimalOf(e, &precision, &scale)) return *DataType::Decimal(precision, scale);
  // A logical type this version does not know leaves the converted type to go by.
  std::optional<LogicalType> l = e.logical_type;
  if (l && l->kind == Kind::kOther) l.reset();
  const std::optional<ConvertedType>& c = e.converted_type;
  switch (*e.type) {
    case Type::kBoolean:
      return DataType::Boolean();
    case Type::kInt32: {
      int width = 32;
      bool is_signed = true;
      if (l && l->kind == Kind::kInteger) {
        width = l->bit_width;
        is_signed = l->is_signed;
      } else if (c && *c >= ConvertedType::kUint8 && *c <= ConvertedType::kInt32) {
        static constexpr int kWidths[] = {8, 16, 32, 64, 8, 16, 32};
        int i = static_cast<int>(*c) - static_cast<int>(ConvertedType::kUint8);
        width = kWidths[i];
        is_signed = *c >= ConvertedType::kInt8;
      } else if (IsAnnotated(e, Kind::kDate, ConvertedType::kDate)) {
        return DataType::Date();
      }
      if (is_signed) return width == 8 ? DataType::Byte() : width == 16 ? DataType::Short() : DataType::Integer();
      // Unsigned values get the next wider signed type, as Spark reads them.
      return width == 8 ? DataType::Short() : width == 16 ? DataType::Integer() : DataType::Long();
    }
    case Type::kInt64: {
      if (l && l->kind == Kind::kTimestamp) return l->is_adjusted_to_utc ? DataType::Timestamp() : DataType::TimestampNtz();
      if (!l && (c == ConvertedType::kTimestampMicros || c == ConvertedType::kTimestampMillis)) return DataType::Timestamp();
      bool is_unsigned = (l && l->kind == Kind::kInteger && !l->is_signed) || (!l && c == ConvertedType::kUint64);
      if (is_unsigned) return *DataType::Decimal(20, 0);
      return DataType::Long();
    }
    case Type::kInt96:
      return DataType::Timestamp();
    case Type::kFloat:
      return DataType::Float();
    case Type::kDouble:
      return DataType::Double();
    case Type::kByteArray:
      if (IsAnnotated(e, Kind::kString, ConvertedType::kUtf8) || IsAnnotated(e, Kind::kEnum, ConvertedType::kEnum) ||
          IsAnnotated(e, Kind::kJson, ConvertedType::kJson)) {
        return DataType::String();
      }
      return DataType::Binary();
    case Type::kFixedLenByteArray:
      return DataType::Binary();
  }
  return nullptr;
}

Status Corrupt(std::string message) {
  return Status::Error(errors::kParquetCorruptFile, "bad Parquet schema: " + std::move(message));
}

class SchemaReader {
 public:
  SchemaReader(const std::vector<SchemaElement>& elements, ParquetSchema* out) : elements_(elements), out_(out) {}

  // Elements converted so far, the root included.
  size_t consumed() const { return next_; }

  // Converts the children of the group whose element was just consumed.
  Status Children(int32_t count, const std::vector<std::string>& path, int16_t def, int16_t rep, int depth,
                  std::vector<SchemaNode>* nodes, std::vector<Field>* fields) {
    if (count < 0) return Corrupt("negative num_children at " + PathString(path));
    for (int32_t i = 0; i < count; ++i) {
      SchemaNode node;
      SLUICE_RETURN_IF_ERROR(Node(path, def, rep, depth, false, &node));
      fields->push_back(Field{node.name, node.type, node.nullable, "{}"});
      nodes->push_back(std::move(node));
    }
    return Status::OK();
  }

  // Converts the element at next_ and its subtree. With as_required, a repeated element is taken
  // as the (required) element of an enclosing list rather than as a bare repeated field.
  Status Node(const std::vector<std::string>& parent_path, int16_t parent_def, int16_t parent_rep, int depth,
              bool as_required, SchemaNode* node) {
    if (depth > kMaxNesting) return Corrupt("nested deeper than " + std::to_string(kMaxNesting) + " levels");
    if (next_ >= elements_.size()) return Corrupt("a group has more children than the schema has elements");
    const SchemaElement& e = elements_[next_++];
    std::vector<std::string> path = parent_path;
    path.push_back(e.name);
    if (!e.repetition_type && !as_required) return Corrupt("element " + PathString(path) + " has no repetition type");

    if (IsRepeated(e) && !as_required) {
      // A bare repeated field: a required array of required elements.
      node->name = e.name;
      node->nullable = false;
      node->definition_level = parent_def;
      node->repetition_level = parent_rep;
      node->element_definition_level = static_cast<int16_t>(parent_def + 1);
      --next_;
      SchemaNode element;
      SLUICE_RETURN_IF_ERROR(Node(parent_path, node->element_definition_level, static_cast<int16_t>(parent_rep + 1),
                                  depth + 1, true, &element));
      node->type = DataType::Array(element.type, false);
      node->children.push_back(std::move(element));
      return Status::OK();
    }

    node->name = e.name;
    node->nullable = !as_required && IsOptional(e);
    node->definition_level = static_cast<int16_t>(parent_def + (node->nullable ? 1 : 0));
    node->repetition_level = parent_rep;
    // An element taken as a list's element keeps the list's repeated level: it is present
    // exactly when the repeated entry is.

    if (!IsGroup(e)) {
      if (!e.type) return Corrupt("leaf " + PathString(path) + " has no physical type");
      if (*e.type < Type::kBoolean || *e.type > Type::kFixedLenByteArray) {
        return Status::Error(errors::kParquetUnsupportedFeature,
                             "column " + PathString(path) + " has unknown physical type " + TypeName(*e.type));
      }
      if (*e.type == Type::kFixedLenByteArray && (!e.type_length || *e.type_length < 0)) {
        return Corrupt("FIXED_LEN_BYTE_ARRAY column " + PathString(path) + " has no valid type_length");
      }
      node->type = LeafType(e);
      node->leaf = static_cast<int>(out_->leaves.size());
      LeafColumn leaf;
      leaf.path = std::move(path);
      leaf.element = e;
      leaf.max_definition_level = node->definition_level;
      leaf.max_repetition_level = node->repetition_level;
      leaf.type = node->type;
      out_->leaves.push_back(std::move(leaf));
      return Status::OK();
    }

    int32_t num_children = *e.num_children;
    bool is_list = IsAnnotated(e, Kind::kList, ConvertedType::kList);
    bool is_map = IsAnnotated(e, Kind::kMap, ConvertedType::kMap) ||
                  (e.converted_type == ConvertedType::kMapKeyValue && !IsRepeated(e));
    if ((is_list || is_map) && !as_required) {
      if (num_children != 1 || next_ >= elements_.size() || !IsRepeated(elements_[next_])) {
        return Corrupt(std::string(is_list ? "LIST" : "MAP") + " group " + PathString(path) +
                       " must hold exactly one repeated field");
      }
      node->element_definition_level = static_cast<int16_t>(node->definition_level + 1);
      int16_t inner_rep = static_cast<int16_t>(parent_rep + 1);
      const SchemaElement& repeated = elements_[next_];
      if (is_list) return ListElement(e, repeated, path, inner_rep, depth, node);
      return MapEntries(repeated, path, inner_rep, depth, node);
    }

    // A plain group: a struct.
    std::vector<Field> fields;
    SLUICE_RETURN_IF_ERROR(Children(num_children, path, node->definition_level, node->repetition_level, depth + 1,
                                    &node->children, &fields));
    Result<TypePtr> type = DataType::Struct(std::move(fields));
    if (!type.ok()) return Corrupt("group " + PathString(path) + ": " + std::string(type.status().message()));
    node->type = *type;
    return Status::OK();
  }

 private:
  // The list rules of LogicalTypes.md: the repeated field is the element itself when it is a
  // primitive, a group of several fields, or a one-field group named "array" or "<list>_tuple";
  // otherwise its only child is the element.
  Status ListElement(const SchemaElement& list, const SchemaElement& repeated, const std::vector<std::string>& path,
                     int16_t inner_rep, int depth, SchemaNode* node) {
    bool repeated_is_element = !IsGroup(repeated) || *repeated.num_children != 1 || repeated.name == "array" ||
                               repeated.name == list.name + "_tuple";
    SchemaNode element;
    if (repeated_is_element) {
      SLUICE_RETURN_IF_ERROR(Node(path, node->element_definition_level, inner_rep, depth + 1, true, &element));
    } else {
      ++next_;  // the repeated group
      std::vector<std::string> repeated_path = path;
      repeated_path.push_back(repeated.name);
      SLUICE_RETURN_IF_ERROR(Node(repeated_path, node->element_definition_level, inner_rep, depth + 2, false, &element));
    }
    node->type = DataType::Array(element.type, element.nullable);
    node->children.push_back(std::move(element));
    return Status::OK();
  }

  Status MapEntries(const SchemaElement& repeated, const std::vector<std::string>& path, int16_t inner_rep, int depth,
                    SchemaNode* node) {
    std::vector<std::string> repeated_path = path;
    repeated_path.push_back(repeated.name);
    if (!IsGroup(repeated) || *repeated.num_children != 2) {
      return Corrupt("the repeated group of MAP " + PathString(path) + " must hold a key and a value");
    }
    ++next_;
    SchemaNode key, value;
    SLUICE_RETURN_IF_ERROR(Node(repeated_path, node->element_definition_level, inner_rep, depth + 2, false, &key));
    SLUICE_RETURN_IF_ERROR(Node(repeated_path, node->element_definition_level, inner_rep, depth + 2, false, &value));
    node->type = DataType::Map(key.type, value.type, value.nullable);
    node->children.push_back(std::move(key));
    node->children.push_back(std::move(value));
    return Status::OK();
  }

  static std::string PathString(const std::vector<std::string>& path) {
    std::string s;
    for (const std::string& p : path) {
      if (!s.empty()) s += '.';
      s += p;
    }
    return "'" + s + "'";
  }

  size_t next_ = 1;  // the next element to convert; 0 is the root
  const std::vector<SchemaElement>& elements_;
  ParquetSchema* out_;
};

// sluice -> Parquet elements for one field, depth first.
Status AppendElements(const std::string& name, const TypePtr& type, FieldRepetitionType repetition,
                      std::vector<SchemaElement>* out) {
  SchemaElement e;
  e.name = name;
  e.repetition_type = repetition;
  switch (type->id()) {
    case TypeId::kBoolean:
      e.type = Type::kBoolean;
      break;
    case TypeId::kByte:
    case TypeId::kShort: {
      bool is_byte = type->id() == TypeId::kByte;
      e.type = Type::kInt32;
      e.converted_type = is_byte ? ConvertedType::kInt8 : ConvertedType::kInt16;
      e.logical_type = LogicalType::Integer(is_byte ? 8 : 16, true);
      break;
    }
    case TypeId::kInteger:
      e.type = Type::kInt32;
      break;
    case TypeId::kLong:
      e.type = Type::kInt64;
      break;
    case TypeId::kFloat:
      e.type = Type::kFloat;
      break;
    case TypeId::kDouble:
      e.type = Type::kDouble;
      break;
    case TypeId::kDecimal: {
      int p = type->precision();
      if (p <= 9) {
        e.type = Type::kInt32;
      } else if (p <= 18) {
        e.type = Type::kInt64;
      } else {
        e.type = Type::kFixedLenByteArray;
        e.type_length = DecimalByteWidth(p);
      }
      e.converted_type = ConvertedType::kDecimal;
      e.precision = p;
      e.scale = type->scale();
      e.logical_type = LogicalType::Decimal(p, type->scale());
      break;
    }
    case TypeId::kString:
      e.type = Type::kByteArray;
      e.converted_type = ConvertedType::kUtf8;
      e.logical_type = LogicalType::Of(Kind::kString);
      break;
    case TypeId::kBinary:
      e.type = Type::kByteArray;
      break;
    case TypeId::kDate:
      e.type = Type::kInt32;
      e.converted_type = ConvertedType::kDate;
      e.logical_type = LogicalType::Of(Kind::kDate);
      break;
    case TypeId::kTimestamp:
      e.type = Type::kInt64;
      e.converted_type = ConvertedType::kTimestampMicros;
      e.logical_type = LogicalType::Timestamp(true, TimeUnit::kMicros);
      break;
    case TypeId::kTimestampNtz:
      // No converted type: legacy readers would take TIMESTAMP_MICROS as UTC instants.
      e.type = Type::kInt64;
      e.logical_type = LogicalType::Timestamp(false, TimeUnit::kMicros);
      break;
    case TypeId::kStruct: {
      if (type->num_fields() == 0) {
        return Status::Error(errors::kParquetUnsupportedFeature,
                             "struct field '" + name + "' has no fields; Parquet cannot store an empty group");
      }
      e.num_children = type->num_fields();
      out->push_back(std::move(e));
      for (const Field& f : type->fields()) SLUICE_RETURN_IF_ERROR(AppendFieldElements(f, out));
      return Status::OK();
    }
    case TypeId::kArray: {
      e.num_children = 1;
      e.converted_type = ConvertedType::kList;
      e.logical_type = LogicalType::Of(Kind::kList);
      out->push_back(std::move(e));
      SchemaElement list;
      list.name = "list";
      list.repetition_type = FieldRepetitionType::kRepeated;
      list.num_children = 1;
      out->push_back(std::move(list));
      return AppendElements("element", type->element_type(),
                            type->contains_null() ? FieldRepetitionType::kOptional : FieldRepetitionType::kRequired, out);
    }
    case TypeId::kMap: {
      e.num_children = 1;
      e.converted_type = ConvertedType::kMap;
      e.logical_type = LogicalType::Of(Kind::kMap);
      out->push_back(std::move(e));
      SchemaElement key_value;
      key_value.name = "key_value";
      key_value.repetition_type = FieldRepetitionType::kRepeated;
      key_value.num_children = 2;
      out->push_back(std::move(key_value));
      SLUICE_RETURN_IF_ERROR(AppendElements("key", type->key_type(), FieldRepetitionType::kRequired, out));
      return AppendElements("value", type->value_type(),
                            type->value_contains_null() ? FieldRepetitionType::kOptional : FieldRepetitionType::kRequired,
                            out);
    }
  }
  out->push_back(std::move(e));
  return Status::OK();
}

Status AppendFieldElements(const Field& field, std::vector<SchemaElement>* out) {
  const size_t first = out->size();
  SLUICE_RETURN_IF_ERROR(AppendElements(
      field.name, field.type, field.nullable ? FieldRepetitionType::kOptional : FieldRepetitionType::kRequired, out));
  (*out)[first].field_id = FieldIdOf(field);
  return Status::OK();
}

}  // namespace

int DecimalByteWidth(int precision) {
  // The smallest n with 10^precision - 1 <= 2^(8n-1) - 1.
  int128_t max_unscaled = 1;
  for (int i = 0; i < precision; ++i) max_unscaled *= 10;
  max_unscaled -= 1;
  int n = 1;
  while (n < 16 && max_unscaled > ((static_cast<int128_t>(1) << (8 * n - 1)) - 1)) ++n;
  return n;
}

Result<ParquetSchema> SchemaFromParquet(const std::vector<SchemaElement>& elements) {
  if (elements.empty()) return Corrupt("the schema has no root element");
  const SchemaElement& root = elements[0];
  if (!IsGroup(root)) return Corrupt("the root element is not a group");
  ParquetSchema out;
  SchemaReader reader(elements, &out);
  std::vector<Field> fields;
  SLUICE_RETURN_IF_ERROR(reader.Children(*root.num_children, {}, 0, 0, 1, &out.fields, &fields));
  if (reader.consumed() != elements.size()) {
    return Corrupt("the root's children end at element " + std::to_string(reader.consumed()) + " of " +
                   std::to_string(elements.size()));
  }
  Result<TypePtr> type = DataType::Struct(std::move(fields));
  if (!type.ok()) return Corrupt(std::string(type.status().message()));
  out.type = *type;
  out.elements = elements;
  return out;
}

Result<ParquetSchema> SchemaToParquet(const TypePtr& schema, std::string_view root_name) {
  if (schema->id() != TypeId::kStruct) {
    return Status::Error(errors::kInvalidSchema, "a Parquet schema must be a struct, not " + schema->ToString());
  }
  if (schema->num_fields() == 0) {
    return Status::Error(errors::kParquetUnsupportedFeature, "the schema has no columns; Parquet needs at least one");
  }
  std::vector<SchemaElement> elements;
  SchemaElement root;
  root.name = std::string(root_name);
  root.num_children = schema->num_fields();
  elements.push_back(std::move(root));
  for (const Field& f : schema->fields()) SLUICE_RETURN_IF_ERROR(AppendFieldElements(f, &elements));
  SLUICE_ASSIGN_OR_RETURN(ParquetSchema out, SchemaFromParquet(elements));
  out.type = schema;  // keeps field metadata, which the Parquet schema does not carry
  return out;
}

}  // namespace sluice::parquet
