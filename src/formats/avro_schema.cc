// Avro schema text -> AvroSchema. The text is outside input (a stream definition, a registry):
// every element is checked and every failure names its place ("record Order, field lines,
// items"). Named types are resolved against the enclosing namespace as the specification says.
// The sluice type is computed by expanding the node graph; a record met again while it is being
// expanded is recursive and refused, and the expansion is capped so that a schema referencing
// one type many times over cannot blow up.
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <simdjson.h>

#include "sluice/core/error_classes.h"
#include "sluice/formats/avro.h"

namespace sluice::formats {
namespace {

using simdjson::dom::element;
using Kind = AvroNode::Kind;
using Logical = AvroNode::Logical;

constexpr int kMaxDepth = 64;
constexpr int kMaxExpandedNodes = 100000;

Status Invalid(const std::string& where, std::string_view what) {
  return Status::Error(errors::kAvroSchemaInvalid, fmt::format("{}: {}", where, what));
}

bool PrimitiveKind(std::string_view name, Kind* kind) {
  static constexpr std::pair<std::string_view, Kind> kPrimitives[] = {
      {"null", Kind::kNull},     {"boolean", Kind::kBoolean}, {"int", Kind::kInt},
      {"long", Kind::kLong},     {"float", Kind::kFloat},     {"double", Kind::kDouble},
      {"bytes", Kind::kBytes},   {"string", Kind::kString},
  };
  for (const auto& [primitive, k] : kPrimitives) {
    if (primitive == name) {
      *kind = k;
      return true;
    }
  }
  return false;
}

class SchemaParser {
 public:
  Result<int> Parse(element schema, const std::string& where, const std::string& namespace_, int depth);
  std::vector<AvroNode> TakeNodes() { return std::move(nodes_); }

 private:
  Result<int> ParseNamed(simdjson::dom::object schema, std::string_view type, const std::string& where,
                         const std::string& namespace_, int depth);
  Status ApplyLogical(simdjson::dom::object schema, const std::string& where, AvroNode* node);
  std::string FullName(std::string_view name, const std::string& namespace_) const {
    if (name.find('.') != std::string_view::npos || namespace_.empty()) return std::string(name);
    return namespace_ + "." + std::string(name);
  }
  int Add(AvroNode node) {
    nodes_.push_back(std::move(node));
    return static_cast<int>(nodes_.size()) - 1;
  }

  std::vector<AvroNode> nodes_;
  std::unordered_map<std::string, int> named_;
};

Result<int> SchemaParser::Parse(element schema, const std::string& where, const std::string& namespace_, int depth) {
  if (depth > kMaxDepth) return Invalid(where, fmt::format("nested deeper than {} levels", kMaxDepth));
  std::string_view name;
  if (schema.get_string().get(name) == simdjson::SUCCESS) {
    Kind kind;
    if (PrimitiveKind(name, &kind)) {
      AvroNode node;
      node.kind = kind;
      return Add(std::move(node));
    }
    auto it = named_.find(FullName(name, namespace_));
    if (it == named_.end()) it = named_.find(std::string(name));
    if (it == named_.end()) return Invalid(where, fmt::format("unknown type \"{}\"", name));
    return it->second;
  }
  simdjson::dom::array branches;
  if (schema.get_array().get(branches) == simdjson::SUCCESS) {
    AvroNode node;
    node.kind = Kind::kUnion;
    size_t index = 0;
    for (element branch : branches) {
      SLUICE_ASSIGN_OR_RETURN(int child, Parse(branch, fmt::format("{}, union branch {}", where, index++), namespace_, depth + 1));
      node.children.push_back(child);
    }
    if (node.children.empty()) return Invalid(where, "a union needs at least one branch");
    for (size_t i = 0; i < node.children.size(); ++i) {
      const AvroNode& a = nodes_[node.children[i]];
      if (a.kind == Kind::kUnion) return Invalid(where, "a union may not directly hold another union");
      for (size_t j = 0; j < i; ++j) {
        const AvroNode& b = nodes_[node.children[j]];
        if (a.kind == b.kind && a.name == b.name) {
          return Invalid(where, fmt::format("a union holds two branches of one type (branches {} and {})", j, i));
        }
      }
    }
    return Add(std::move(node));
  }
  simdjson::dom::object object;
  if (schema.get_object().get(object) != simdjson::SUCCESS) {
    return Invalid(where, "a schema must be a type name, an object or a union array");
  }
  element type;
  if (object["type"].get(type) != simdjson::SUCCESS) return Invalid(where, "an object schema needs \"type\"");
  std::string_view type_name;
  if (type.get_string().get(type_name) != simdjson::SUCCESS) {
    return Parse(type, where, namespace_, depth + 1);  // {"type": {...}} or {"type": [...]}: the inner schema
  }
  Kind kind;
  if (PrimitiveKind(type_name, &kind)) {
    AvroNode node;
    node.kind = kind;
    SLUICE_RETURN_IF_ERROR(ApplyLogical(object, where, &node));
    return Add(std::move(node));
  }
  if (type_name == "array" || type_name == "map") {
    element items;
    std::string_view key = type_name == "array" ? "items" : "values";
    if (object[key].get(items) != simdjson::SUCCESS) return Invalid(where, fmt::format("{} needs \"{}\"", type_name, key));
    SLUICE_ASSIGN_OR_RETURN(int child, Parse(items, fmt::format("{}, {}", where, key), namespace_, depth + 1));
    AvroNode node;
    node.kind = type_name == "array" ? Kind::kArray : Kind::kMap;
    node.children.push_back(child);
    return Add(std::move(node));
  }
  if (type_name == "record" || type_name == "error" || type_name == "enum" || type_name == "fixed") {
    return ParseNamed(object, type_name, where, namespace_, depth);
  }
  // A named type written as {"type": "com.example.Name"}.
  return Parse(type, where, namespace_, depth + 1);
}

Result<int> SchemaParser::ParseNamed(simdjson::dom::object schema, std::string_view type, const std::string& where,
                                     const std::string& namespace_, int depth) {
  std::string_view name;
  if (schema["name"].get_string().get(name) != simdjson::SUCCESS || name.empty()) {
    return Invalid(where, fmt::format("a {} needs a \"name\"", type));
  }
  std::string inner_namespace = namespace_;
  std::string_view declared_namespace;
  if (schema["namespace"].get_string().get(declared_namespace) == simdjson::SUCCESS) {
    inner_namespace = std::string(declared_namespace);
  }
  std::string full_name = FullName(name, inner_namespace);
  if (size_t dot = full_name.rfind('.'); dot != std::string::npos) inner_namespace = full_name.substr(0, dot);
  if (named_.count(full_name) != 0) return Invalid(where, fmt::format("the name \"{}\" is defined twice", full_name));
  std::string here = fmt::format("{} {}", type == "error" ? "record" : type, full_name);

  AvroNode node;
  node.name = full_name;
  if (type == "enum") {
    node.kind = Kind::kEnum;
    simdjson::dom::array symbols;
    if (schema["symbols"].get_array().get(symbols) != simdjson::SUCCESS) return Invalid(here, "an enum needs \"symbols\"");
    for (element symbol : symbols) {
      std::string_view text;
      if (symbol.get_string().get(text) != simdjson::SUCCESS) return Invalid(here, "symbols must be strings");
      node.symbols.emplace_back(text);
    }
    if (node.symbols.empty()) return Invalid(here, "an enum needs at least one symbol");
  } else if (type == "fixed") {
    node.kind = Kind::kFixed;
    int64_t size;
    if (schema["size"].get_int64().get(size) != simdjson::SUCCESS || size < 0 || size > (1 << 20)) {
      return Invalid(here, "a fixed needs a \"size\" between 0 and 1048576");
    }
    node.fixed_size = size;
    SLUICE_RETURN_IF_ERROR(ApplyLogical(schema, here, &node));
  } else {
    node.kind = Kind::kRecord;
  }
  int index = Add(std::move(node));
  named_.emplace(full_name, index);  // before the fields: a field may refer to its own record
  if (type != "record" && type != "error") return index;

  simdjson::dom::array fields;
  if (schema["fields"].get_array().get(fields) != simdjson::SUCCESS) return Invalid(here, "a record needs \"fields\"");
  std::vector<AvroNode::RecordField> parsed;
  for (element field : fields) {
    std::string_view field_name;
    if (field["name"].get_string().get(field_name) != simdjson::SUCCESS || field_name.empty()) {
      return Invalid(here, "every field needs a \"name\"");
    }
    element field_type;
    std::string field_where = fmt::format("{}, field {}", here, field_name);
    if (field["type"].get(field_type) != simdjson::SUCCESS) return Invalid(field_where, "a field needs a \"type\"");
    for (const AvroNode::RecordField& previous : parsed) {
      if (previous.name == field_name) return Invalid(field_where, "the field is defined twice");
    }
    SLUICE_ASSIGN_OR_RETURN(int child, Parse(field_type, field_where, inner_namespace, depth + 1));
    AvroNode::RecordField record_field;
    record_field.name = std::string(field_name);
    record_field.node = child;
    element default_value;
    if (field["default"].get(default_value) == simdjson::SUCCESS) {
      record_field.has_default = true;
      record_field.default_json = simdjson::minify(default_value);
    }
    parsed.push_back(std::move(record_field));
  }
  nodes_[index].fields = std::move(parsed);
  return index;
}

Status SchemaParser::ApplyLogical(simdjson::dom::object schema, const std::string& where, AvroNode* node) {
  std::string_view logical;
  if (schema["logicalType"].get_string().get(logical) != simdjson::SUCCESS) return Status::OK();
  Kind kind = node->kind;
  if (logical == "decimal" && (kind == Kind::kBytes || kind == Kind::kFixed)) {
    int64_t precision = 0, scale = 0;
    if (schema["precision"].get_int64().get(precision) != simdjson::SUCCESS) return Invalid(where, "a decimal needs \"precision\"");
    if (auto s = schema["scale"]; s.error() == simdjson::SUCCESS && s.get_int64().get(scale) != simdjson::SUCCESS) {
      return Invalid(where, "a decimal's \"scale\" must be an integer");
    }
    if (precision < 1 || precision > 38 || scale < 0 || scale > precision) {
      return Invalid(where, fmt::format("decimal({},{}) cannot be held: precision must be 1 to 38 and scale 0 to precision",
                                        precision, scale));
    }
    if (kind == Kind::kFixed && node->fixed_size > 16) {
      return Invalid(where, "a decimal fixed wider than 16 bytes cannot be held in 128 bits");
    }
    node->logical = Logical::kDecimal;
    node->precision = static_cast<int>(precision);
    node->scale = static_cast<int>(scale);
  } else if (logical == "date" && kind == Kind::kInt) {
    node->logical = Logical::kDate;
  } else if (kind == Kind::kLong && logical == "timestamp-millis") {
    node->logical = Logical::kTimestampMillis;
  } else if (kind == Kind::kLong && logical == "timestamp-micros") {
    node->logical = Logical::kTimestampMicros;
  } else if (kind == Kind::kLong && logical == "local-timestamp-millis") {
    node->logical = Logical::kLocalTimestampMillis;
  } else if (kind == Kind::kLong && logical == "local-timestamp-micros") {
    node->logical = Logical::kLocalTimestampMicros;
  } else if (kind == Kind::kString && logical == "uuid") {
    node->logical = Logical::kUuid;
  }
  // Any other logical type is read as its underlying type, as the specification requires.
  return Status::OK();
}

std::string_view BranchName(const AvroNode& node) {
  switch (node.kind) {
    case Kind::kRecord:
    case Kind::kEnum:
    case Kind::kFixed: {
      std::string_view name = node.name;
      size_t dot = name.rfind('.');
      return dot == std::string_view::npos ? name : name.substr(dot + 1);
    }
    case Kind::kNull: return "null";
    case Kind::kBoolean: return "boolean";
    case Kind::kInt: return "int";
    case Kind::kLong: return "long";
    case Kind::kFloat: return "float";
    case Kind::kDouble: return "double";
    case Kind::kBytes: return "bytes";
    case Kind::kString: return "string";
    case Kind::kArray: return "array";
    case Kind::kMap: return "map";
    case Kind::kUnion: return "union";
  }
  return "";
}

struct MappedType {
  TypePtr type;
  bool nullable = false;
};

class TypeMapper {
 public:
  explicit TypeMapper(const std::vector<AvroNode>& nodes) : nodes_(nodes), expanding_(nodes.size(), 0) {}
  Result<MappedType> Map(int index);

 private:
  const std::vector<AvroNode>& nodes_;
  std::vector<uint8_t> expanding_;
  int expanded_ = 0;
};

Result<MappedType> TypeMapper::Map(int index) {
  if (++expanded_ > kMaxExpandedNodes) {
    return Status::Error(errors::kAvroSchemaInvalid, fmt::format("the schema expands to more than {} types", kMaxExpandedNodes));
  }
  const AvroNode& node = nodes_[index];
  switch (node.kind) {
    case Kind::kNull:
      return Status::Error(errors::kAvroSchemaInvalid, "a value that is always null has no column type; use a union [\"null\", T]");
    case Kind::kBoolean: return MappedType{DataType::Boolean()};
    case Kind::kInt: return MappedType{node.logical == Logical::kDate ? DataType::Date() : DataType::Integer()};
    case Kind::kLong:
      switch (node.logical) {
        case Logical::kTimestampMillis:
        case Logical::kTimestampMicros: return MappedType{DataType::Timestamp()};
        case Logical::kLocalTimestampMillis:
        case Logical::kLocalTimestampMicros: return MappedType{DataType::TimestampNtz()};
        default: return MappedType{DataType::Long()};
      }
    case Kind::kFloat: return MappedType{DataType::Float()};
    case Kind::kDouble: return MappedType{DataType::Double()};
    case Kind::kString:
    case Kind::kEnum: return MappedType{DataType::String()};
    case Kind::kBytes:
    case Kind::kFixed:
      if (node.logical == Logical::kDecimal) {
        SLUICE_ASSIGN_OR_RETURN(TypePtr decimal, DataType::Decimal(node.precision, node.scale));
        return MappedType{decimal};
      }
      return MappedType{DataType::Binary()};
    case Kind::kArray: {
      SLUICE_ASSIGN_OR_RETURN(MappedType items, Map(node.children[0]));
      return MappedType{DataType::Array(items.type, items.nullable)};
    }
    case Kind::kMap: {
      SLUICE_ASSIGN_OR_RETURN(MappedType values, Map(node.children[0]));
      return MappedType{DataType::Map(DataType::String(), values.type, values.nullable)};
    }
    case Kind::kRecord: {
      if (expanding_[index]) {
        return Status::Error(errors::kAvroSchemaInvalid,
                             fmt::format("record {} contains itself; a recursive record has no column type", node.name));
      }
      expanding_[index] = 1;
      std::vector<Field> fields;
      for (const AvroNode::RecordField& field : node.fields) {
        Result<MappedType> mapped = Map(field.node);
        if (!mapped.ok()) {
          expanding_[index] = 0;
          return mapped.status().WithContext(fmt::format("record {}, field {}", node.name, field.name));
        }
        fields.push_back(Field{field.name, mapped->type, mapped->nullable});
      }
      expanding_[index] = 0;
      Result<TypePtr> type = DataType::Struct(std::move(fields));
      if (!type.ok()) return Status::Error(errors::kAvroSchemaInvalid, std::string(type.status().message()));
      return MappedType{*type};
    }
    case Kind::kUnion: {
      std::vector<int> non_null;
      bool nullable = false;
      for (int child : node.children) {
        if (nodes_[child].kind == Kind::kNull) {
          nullable = true;
        } else {
          non_null.push_back(child);
        }
      }
      if (non_null.empty()) {
        return Status::Error(errors::kAvroSchemaInvalid, "a union of null alone has no column type");
      }
      if (non_null.size() == 1) {
        SLUICE_ASSIGN_OR_RETURN(MappedType only, Map(non_null[0]));
        return MappedType{only.type, nullable || only.nullable};
      }
      std::vector<Field> fields;
      for (int child : non_null) {
        SLUICE_ASSIGN_OR_RETURN(MappedType branch, Map(child));
        fields.push_back(Field{std::string(BranchName(nodes_[child])), branch.type, true});
      }
      Result<TypePtr> type = DataType::Struct(std::move(fields));
      if (!type.ok()) {
        return Status::Error(errors::kAvroSchemaInvalid,
                             fmt::format("union branches need distinct names: {}", type.status().message()));
      }
      return MappedType{*type, nullable};
    }
  }
  return Status::Error(errors::kInternalError, "unknown Avro node kind");
}

}  // namespace

Result<AvroSchemaPtr> ParseAvroSchema(std::string_view schema_json, std::span<const std::string> references) {
  SchemaParser schema_parser;
  simdjson::dom::parser parser;
  element root;
  for (size_t i = 0; i < references.size(); ++i) {
    if (auto error = parser.parse(references[i]).get(root); error != simdjson::SUCCESS) {
      return Status::Error(errors::kAvroSchemaInvalid,
                           fmt::format("referenced schema {} is not JSON: {}", i, simdjson::error_message(error)));
    }
    SLUICE_RETURN_IF_ERROR(schema_parser.Parse(root, fmt::format("referenced schema {}", i), "", 0).status());
  }
  if (auto error = parser.parse(schema_json.data(), schema_json.size()).get(root); error != simdjson::SUCCESS) {
    return Status::Error(errors::kAvroSchemaInvalid, fmt::format("the schema is not JSON: {}", simdjson::error_message(error)));
  }
  SLUICE_ASSIGN_OR_RETURN(int root_index, schema_parser.Parse(root, "schema", "", 0));
  auto schema = std::make_shared<AvroSchema>();
  schema->nodes = schema_parser.TakeNodes();
  schema->root = root_index;
  TypeMapper mapper(schema->nodes);
  SLUICE_ASSIGN_OR_RETURN(MappedType mapped, mapper.Map(root_index));
  if (schema->nodes[root_index].kind == Kind::kRecord) {
    schema->type = mapped.type;
  } else {
    SLUICE_ASSIGN_OR_RETURN(schema->type, DataType::Struct({Field{"value", mapped.type, mapped.nullable}}));
  }
  return AvroSchemaPtr(std::move(schema));
}

}  // namespace sluice::formats
