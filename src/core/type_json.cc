// Spark's JSON form of data types, as Delta stores it in metaData.schemaString.
//
// Writing is a straightforward walk of the type. Reading uses simdjson's DOM and checks the shape
// of every element, because the text comes from table logs and schema registries we do not
// control: every failure is INVALID_SCHEMA naming the JSON path of the element at fault
// ("$.fields[2].type.elementType"). Nesting is capped at kMaxTypeDepth so hostile documents
// cannot exhaust the stack. Field metadata is kept as compact JSON re-written by simdjson: the
// same values, without whitespace (a number may be spelled differently, e.g. 1E2 as 100.0).
#include <charconv>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <simdjson.h>

#include "sluice/core/json_text.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/types.h"

namespace sluice {
namespace {

// Deeper than any real schema; far shallower than what would threaten the stack.
constexpr int kMaxTypeDepth = 64;

// The JSON name of a type that is written as a bare string ("integer", "decimal(10,2)").
std::string PrimitiveJsonName(const DataType& type) {
  if (type.id() == TypeId::kDecimal) return fmt::format("decimal({},{})", type.precision(), type.scale());
  return std::string(TypeIdName(type.id()));
}

void AppendTypeJson(const DataType& type, std::string* out) {
  switch (type.id()) {
    case TypeId::kStruct: {
      out->append(R"({"type":"struct","fields":[)");
      bool first = true;
      for (const Field& field : type.fields()) {
        if (!first) out->push_back(',');
        first = false;
        out->append(R"({"name":)");
        AppendJsonString(out, field.name);
        out->append(R"(,"type":)");
        AppendTypeJson(*field.type, out);
        out->append(field.nullable ? R"(,"nullable":true)" : R"(,"nullable":false)");
        out->append(R"(,"metadata":)");
        out->append(field.metadata.empty() ? std::string_view("{}") : std::string_view(field.metadata));
        out->push_back('}');
      }
      out->append("]}");
      return;
    }
    case TypeId::kArray:
      out->append(R"({"type":"array","elementType":)");
      AppendTypeJson(*type.element_type(), out);
      out->append(type.contains_null() ? R"(,"containsNull":true})" : R"(,"containsNull":false})");
      return;
    case TypeId::kMap:
      out->append(R"({"type":"map","keyType":)");
      AppendTypeJson(*type.key_type(), out);
      out->append(R"(,"valueType":)");
      AppendTypeJson(*type.value_type(), out);
      out->append(type.value_contains_null() ? R"(,"valueContainsNull":true})"
                                             : R"(,"valueContainsNull":false})");
      return;
    default:
      AppendJsonString(out, PrimitiveJsonName(type));
  }
}

using simdjson::dom::element;
using simdjson::dom::element_type;
using simdjson::dom::object;

Status SchemaError(const std::string& path, std::string_view what) {
  return Status::Error(errors::kInvalidSchema, fmt::format("{} at {}", what, path));
}

std::string_view KindName(element_type type) {
  switch (type) {
    case element_type::ARRAY: return "an array";
    case element_type::OBJECT: return "an object";
    case element_type::INT64:
    case element_type::UINT64:
    case element_type::DOUBLE: return "a number";
    case element_type::STRING: return "a string";
    case element_type::BOOL: return "a boolean";
    case element_type::NULL_VALUE: return "null";
  }
  return "an unknown value";
}

// Parses an unsigned decimal number of at most a few digits (no sign, no overflow).
bool ParseSmallInt(std::string_view text, int* out) {
  if (text.empty() || text.size() > 4 || text.front() < '0' || text.front() > '9') return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// "decimal(p,s)" as Spark writes and reads it (spaces tolerated around the numbers).
Result<TypePtr> ParseDecimalName(std::string_view name, const std::string& path) {
  std::string_view inner = name.substr(8);  // after "decimal("
  if (inner.empty() || inner.back() != ')') {
    return SchemaError(path, fmt::format("malformed decimal type \"{}\"", name));
  }
  inner.remove_suffix(1);
  size_t comma = inner.find(',');
  int precision = 0;
  int scale = 0;
  if (comma == std::string_view::npos || !ParseSmallInt(Trim(inner.substr(0, comma)), &precision) ||
      !ParseSmallInt(Trim(inner.substr(comma + 1)), &scale)) {
    return SchemaError(path, fmt::format("malformed decimal type \"{}\"", name));
  }
  Result<TypePtr> type = DataType::Decimal(precision, scale);
  if (!type.ok()) return SchemaError(path, type.status().message());
  return type;
}

Result<TypePtr> ParsePrimitiveName(std::string_view name, const std::string& path) {
  struct Named {
    std::string_view name;
    TypePtr (*make)();
  };
  static constexpr Named kPrimitives[] = {
      {"boolean", &DataType::Boolean}, {"byte", &DataType::Byte},
      {"short", &DataType::Short},     {"integer", &DataType::Integer},
      {"long", &DataType::Long},       {"float", &DataType::Float},
      {"double", &DataType::Double},   {"string", &DataType::String},
      {"binary", &DataType::Binary},   {"date", &DataType::Date},
      {"timestamp", &DataType::Timestamp}, {"timestamp_ntz", &DataType::TimestampNtz},
  };
  for (const Named& primitive : kPrimitives) {
    if (name == primitive.name) return primitive.make();
  }
  // Spark reads a bare "decimal" as its default decimal(10,0).
  if (name == "decimal") return DataType::Decimal(10, 0);
  if (name.starts_with("decimal(")) return ParseDecimalName(name, path);
  return SchemaError(path, fmt::format("unknown data type \"{}\"", name));
}

class TypeJsonReader {
 public:
  Result<TypePtr> ReadType(element value, const std::string& path, int depth) {
    if (depth > kMaxTypeDepth) {
      return SchemaError(path, fmt::format("types nested deeper than {} levels", kMaxTypeDepth));
    }
    if (value.type() == element_type::STRING) {
      return ParsePrimitiveName(std::string_view(value.get_string().value_unsafe()), path);
    }
    if (value.type() != element_type::OBJECT) {
      return SchemaError(path, fmt::format("expected a type name or object, found {}", KindName(value.type())));
    }
    object obj = value.get_object().value_unsafe();
    SLUICE_ASSIGN_OR_RETURN(std::string_view kind, RequiredString(obj, "type", path));
    if (kind == "struct") return ReadStruct(obj, path, depth);
    if (kind == "array") return ReadArray(obj, path, depth);
    if (kind == "map") return ReadMap(obj, path, depth);
    return SchemaError(path + ".type", fmt::format("unknown complex type \"{}\"", kind));
  }

 private:
  Result<element> Required(object obj, std::string_view key, const std::string& path) {
    element child;
    if (obj.at_key(key).get(child) != simdjson::SUCCESS) {
      return SchemaError(path, fmt::format("missing key \"{}\"", key));
    }
    return child;
  }

  Result<std::string_view> RequiredString(object obj, std::string_view key, const std::string& path) {
    SLUICE_ASSIGN_OR_RETURN(element child, Required(obj, key, path));
    if (child.type() != element_type::STRING) {
      return SchemaError(fmt::format("{}.{}", path, key),
                         fmt::format("expected a string, found {}", KindName(child.type())));
    }
    return std::string_view(child.get_string().value_unsafe());
  }

  Result<bool> RequiredBool(object obj, std::string_view key, const std::string& path) {
    SLUICE_ASSIGN_OR_RETURN(element child, Required(obj, key, path));
    if (child.type() != element_type::BOOL) {
      return SchemaError(fmt::format("{}.{}", path, key),
                         fmt::format("expected a boolean, found {}", KindName(child.type())));
    }
    return child.get_bool().value_unsafe();
  }

  Result<TypePtr> ReadStruct(object obj, const std::string& path, int depth) {
    SLUICE_ASSIGN_OR_RETURN(element fields_value, Required(obj, "fields", path));
    std::string fields_path = path + ".fields";
    if (fields_value.type() != element_type::ARRAY) {
      return SchemaError(fields_path, fmt::format("expected an array, found {}", KindName(fields_value.type())));
    }
    std::vector<Field> fields;
    size_t index = 0;
    simdjson::dom::array fields_array = fields_value.get_array().value_unsafe();
    for (element field_value : fields_array) {
      std::string field_path = fmt::format("{}[{}]", fields_path, index++);
      SLUICE_ASSIGN_OR_RETURN(Field field, ReadField(field_value, field_path, depth));
      fields.push_back(std::move(field));
    }
    Result<TypePtr> type = DataType::Struct(std::move(fields));
    if (!type.ok()) return SchemaError(path, type.status().message());
    return type;
  }

  Result<Field> ReadField(element value, const std::string& path, int depth) {
    if (value.type() != element_type::OBJECT) {
      return SchemaError(path, fmt::format("expected a field object, found {}", KindName(value.type())));
    }
    object obj = value.get_object().value_unsafe();
    Field field;
    SLUICE_ASSIGN_OR_RETURN(std::string_view name, RequiredString(obj, "name", path));
    field.name = std::string(name);
    SLUICE_ASSIGN_OR_RETURN(element type_value, Required(obj, "type", path));
    SLUICE_ASSIGN_OR_RETURN(field.type, ReadType(type_value, path + ".type", depth + 1));
    SLUICE_ASSIGN_OR_RETURN(field.nullable, RequiredBool(obj, "nullable", path));
    // Spark writes metadata always but reads fields without it.
    element metadata;
    if (obj.at_key("metadata").get(metadata) == simdjson::SUCCESS) {
      if (metadata.type() != element_type::OBJECT) {
        return SchemaError(path + ".metadata", fmt::format("expected an object, found {}", KindName(metadata.type())));
      }
      field.metadata = simdjson::minify(metadata);
    }
    return field;
  }

  Result<TypePtr> ReadArray(object obj, const std::string& path, int depth) {
    SLUICE_ASSIGN_OR_RETURN(element element_value, Required(obj, "elementType", path));
    SLUICE_ASSIGN_OR_RETURN(TypePtr element_type, ReadType(element_value, path + ".elementType", depth + 1));
    SLUICE_ASSIGN_OR_RETURN(bool contains_null, RequiredBool(obj, "containsNull", path));
    return DataType::Array(std::move(element_type), contains_null);
  }

  Result<TypePtr> ReadMap(object obj, const std::string& path, int depth) {
    SLUICE_ASSIGN_OR_RETURN(element key_value, Required(obj, "keyType", path));
    SLUICE_ASSIGN_OR_RETURN(TypePtr key_type, ReadType(key_value, path + ".keyType", depth + 1));
    SLUICE_ASSIGN_OR_RETURN(element value_value, Required(obj, "valueType", path));
    SLUICE_ASSIGN_OR_RETURN(TypePtr value_type, ReadType(value_value, path + ".valueType", depth + 1));
    SLUICE_ASSIGN_OR_RETURN(bool value_contains_null, RequiredBool(obj, "valueContainsNull", path));
    return DataType::Map(std::move(key_type), std::move(value_type), value_contains_null);
  }
};

}  // namespace

std::string DataType::ToJson() const {
  std::string out;
  AppendTypeJson(*this, &out);
  return out;
}

Result<TypePtr> ParseTypeJson(std::string_view json) {
  simdjson::dom::parser parser;
  simdjson::padded_string padded(json);
  element root;
  simdjson::error_code error = parser.parse(padded).get(root);
  if (error != simdjson::SUCCESS) {
    return Status::Error(errors::kInvalidSchema,
                         fmt::format("schema is not valid JSON: {}", simdjson::error_message(error)));
  }
  TypeJsonReader reader;
  return reader.ReadType(root, "$", 1);
}

}  // namespace sluice
