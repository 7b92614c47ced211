// JSON Schema -> sluice type. The schema is outside input (a stream definition, a registry), so
// every element's shape is checked and each failure names its JSON pointer. $ref is followed
// only into the document's own definitions, with a depth cap that also catches recursive
// references (a recursive type has no columnar shape).
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <simdjson.h>

#include "sluice/core/error_classes.h"
#include "sluice/formats/json.h"

namespace sluice::formats {
namespace {

using simdjson::dom::element;
using simdjson::dom::object;

// Deeper than any real schema; far shallower than what would threaten the stack.
constexpr int kMaxDepth = 64;

struct Mapped {
  TypePtr type;
  bool nullable = false;
};

class SchemaMapper {
 public:
  explicit SchemaMapper(element root) : root_(root) {}

  Result<Mapped> Map(element schema, const std::string& path, int depth);

 private:
  Status Invalid(const std::string& path, std::string_view what) const {
    return Status::Error(errors::kJsonSchemaInvalid, fmt::format("at {}: {}", path, what));
  }
  Result<element> Resolve(std::string_view ref, const std::string& path) const;
  Result<Mapped> MapTyped(object schema, std::string_view type_name, const std::string& path, int depth);
  Result<Mapped> MapObject(object schema, const std::string& path, int depth);
  Result<Mapped> MapAlternatives(simdjson::dom::array alternatives, const std::string& path, int depth);

  element root_;
};

Result<element> SchemaMapper::Resolve(std::string_view ref, const std::string& path) const {
  if (!ref.starts_with("#/")) {
    return Invalid(path, fmt::format("$ref \"{}\" is not a reference into this schema (#/definitions/... or #/$defs/...)", ref));
  }
  element target;
  if (root_.at_pointer(ref.substr(1)).get(target) != simdjson::SUCCESS) {
    return Invalid(path, fmt::format("$ref \"{}\" names nothing in this schema", ref));
  }
  return target;
}

Result<Mapped> SchemaMapper::Map(element schema, const std::string& path, int depth) {
  if (depth > kMaxDepth) {
    return Invalid(path, fmt::format("nested deeper than {} levels (a recursive $ref has no table shape)", kMaxDepth));
  }
  if (schema.is_bool()) {
    if (!schema.get_bool().value()) return Invalid(path, "the schema `false` accepts no value");
    return Mapped{DataType::String(), true};  // `true` accepts anything: kept as JSON text
  }
  object obj;
  if (schema.get_object().get(obj) != simdjson::SUCCESS) return Invalid(path, "a schema must be an object or a boolean");
  for (std::string_view unsupported : {"allOf", "not", "if", "patternProperties"}) {
    if (obj[unsupported].error() == simdjson::SUCCESS) {
      return Invalid(path, fmt::format("\"{}\" cannot be mapped to a column type; describe the value without it", unsupported));
    }
  }
  std::string_view ref;
  if (obj["$ref"].get_string().get(ref) == simdjson::SUCCESS) {
    SLUICE_ASSIGN_OR_RETURN(element target, Resolve(ref, path));
    return Map(target, std::string(ref), depth + 1);
  }
  for (std::string_view key : {"oneOf", "anyOf"}) {
    element alternatives;
    if (obj[key].get(alternatives) != simdjson::SUCCESS) continue;
    if (!alternatives.is_array()) return Invalid(path + "/" + std::string(key), "must be an array of schemas");
    return MapAlternatives(alternatives.get_array().value(), path + "/" + std::string(key), depth);
  }
  element type;
  if (obj["type"].get(type) != simdjson::SUCCESS) {
    if (obj["properties"].error() == simdjson::SUCCESS || obj["additionalProperties"].error() == simdjson::SUCCESS) {
      return MapObject(obj, path, depth);
    }
    if (obj["items"].error() == simdjson::SUCCESS) return MapTyped(obj, "array", path, depth);
    return Mapped{DataType::String(), true};  // no type: any JSON value, kept as its text
  }
  if (type.is_string()) return MapTyped(obj, type.get_string().value(), path, depth);
  if (!type.is_array()) return Invalid(path + "/type", "must be a type name or an array of type names");
  std::string_view non_null;
  bool nullable = false;
  for (element name : type.get_array()) {
    std::string_view text;
    if (name.get_string().get(text) != simdjson::SUCCESS) return Invalid(path + "/type", "must hold type names only");
    if (text == "null") {
      nullable = true;
    } else if (non_null.empty()) {
      non_null = text;
    } else {
      return Invalid(path + "/type", fmt::format("several types (\"{}\", \"{}\") cannot share one column", non_null, text));
    }
  }
  if (non_null.empty()) return Invalid(path + "/type", "a value that is always null has no column type");
  SLUICE_ASSIGN_OR_RETURN(Mapped mapped, MapTyped(obj, non_null, path, depth));
  mapped.nullable = mapped.nullable || nullable;
  return mapped;
}

Result<Mapped> SchemaMapper::MapAlternatives(simdjson::dom::array alternatives, const std::string& path, int depth) {
  std::optional<Mapped> chosen;
  bool nullable = false;
  size_t index = 0;
  for (element alternative : alternatives) {
    std::string item_path = fmt::format("{}/{}", path, index++);
    object obj;
    std::string_view type_name;
    if (alternative.get_object().get(obj) == simdjson::SUCCESS && obj["type"].get_string().get(type_name) == simdjson::SUCCESS &&
        type_name == "null") {
      nullable = true;
      continue;
    }
    if (chosen.has_value()) {
      return Invalid(path, "only one alternative besides {\"type\": \"null\"} can be mapped to a column type");
    }
    SLUICE_ASSIGN_OR_RETURN(chosen, Map(alternative, item_path, depth + 1));
  }
  if (!chosen.has_value()) return Invalid(path, "no alternative other than null");
  chosen->nullable = chosen->nullable || nullable;
  return *chosen;
}

Result<Mapped> SchemaMapper::MapTyped(object schema, std::string_view type_name, const std::string& path, int depth) {
  if (type_name == "object") return MapObject(schema, path, depth);
  if (type_name == "integer") return Mapped{DataType::Long(), false};
  if (type_name == "number") return Mapped{DataType::Double(), false};
  if (type_name == "boolean") return Mapped{DataType::Boolean(), false};
  if (type_name == "string") {
    std::string_view format;
    if (schema["format"].get_string().get(format) == simdjson::SUCCESS) {
      if (format == "date-time") return Mapped{DataType::Timestamp(), false};
      if (format == "date") return Mapped{DataType::Date(), false};
    }
    return Mapped{DataType::String(), false};
  }
  if (type_name == "array") {
    element items;
    if (schema["items"].get(items) != simdjson::SUCCESS) return Mapped{DataType::Array(DataType::String()), false};
    if (items.is_array()) return Invalid(path + "/items", "tuple items (an array of schemas) cannot be mapped to one element type");
    SLUICE_ASSIGN_OR_RETURN(Mapped element_type, Map(items, path + "/items", depth + 1));
    return Mapped{DataType::Array(element_type.type, true), false};
  }
  if (type_name == "null") return Invalid(path + "/type", "a value that is always null has no column type");
  return Invalid(path + "/type", fmt::format("unknown type \"{}\"", type_name));
}

Result<Mapped> SchemaMapper::MapObject(object schema, const std::string& path, int depth) {
  object properties;
  bool has_properties = schema["properties"].get_object().get(properties) == simdjson::SUCCESS;
  if (!has_properties && schema["properties"].error() == simdjson::SUCCESS) {
    return Invalid(path + "/properties", "must be an object");
  }
  if (!has_properties || properties.size() == 0) {
    element additional;
    if (schema["additionalProperties"].get(additional) == simdjson::SUCCESS && additional.is_object()) {
      SLUICE_ASSIGN_OR_RETURN(Mapped value, Map(additional, path + "/additionalProperties", depth + 1));
      return Mapped{DataType::Map(DataType::String(), value.type, true), false};
    }
    // An open object of unknown shape: each value kept as its JSON text.
    return Mapped{DataType::Map(DataType::String(), DataType::String(), true), false};
  }
  std::vector<std::string_view> required;
  element required_list;
  if (schema["required"].get(required_list) == simdjson::SUCCESS) {
    if (!required_list.is_array()) return Invalid(path + "/required", "must be an array of property names");
    for (element name : required_list.get_array()) {
      std::string_view text;
      if (name.get_string().get(text) != simdjson::SUCCESS) return Invalid(path + "/required", "must hold property names only");
      required.push_back(text);
    }
  }
  std::vector<Field> fields;
  for (auto [key, value] : properties) {
    std::string field_path = fmt::format("{}/properties/{}", path, key);
    SLUICE_ASSIGN_OR_RETURN(Mapped mapped, Map(value, field_path, depth + 1));
    bool is_required = std::find(required.begin(), required.end(), key) != required.end();
    fields.push_back(Field{std::string(key), mapped.type, mapped.nullable || !is_required});
  }
  Result<TypePtr> type = DataType::Struct(std::move(fields));
  if (!type.ok()) return Invalid(path + "/properties", type.status().message());
  return Mapped{*type, false};
}

}  // namespace

Result<TypePtr> JsonSchemaToType(std::string_view json_schema) {
  simdjson::dom::parser parser;
  element root;
  if (auto error = parser.parse(json_schema.data(), json_schema.size()).get(root); error != simdjson::SUCCESS) {
    return Status::Error(errors::kJsonSchemaInvalid, fmt::format("the schema is not JSON: {}", simdjson::error_message(error)));
  }
  SchemaMapper mapper(root);
  SLUICE_ASSIGN_OR_RETURN(Mapped mapped, mapper.Map(root, "#", 0));
  if (mapped.type->id() != TypeId::kStruct) {
    return Status::Error(errors::kJsonSchemaInvalid,
                         fmt::format("at #: the document must be an object with properties, not {}", mapped.type->ToString()));
  }
  return mapped.type;
}

}  // namespace sluice::formats
