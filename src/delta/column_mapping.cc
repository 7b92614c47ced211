#include "delta/column_mapping.h"

#include <algorithm>
#include <charconv>
#include <functional>
#include <map>

#include <fmt/format.h>
#include <simdjson.h>

#include "delta/field_metadata.h"
#include "delta/uuid.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/json_text.h"

namespace sluice::delta {
namespace {

constexpr std::string_view kIdKey = "delta.columnMapping.id";
constexpr std::string_view kPhysicalNameKey = "delta.columnMapping.physicalName";
constexpr std::string_view kParquetFieldIdKey = "parquet.field.id";
// Without column mapping a column's name is its name in the Parquet files and in the statistics'
// paths, where readers (Spark among them) refuse these characters.
constexpr std::string_view kCharactersNeedingColumnMapping = " ,;{}()\n\t=.";

bool MentionsColumnMapping(const std::string& metadata) {
  return metadata.find("delta.columnMapping.") != std::string::npos;
}

// A member of the field's metadata: its text when it is a string, its integer when a number.
std::optional<std::string> MetadataString(const std::string& metadata, std::string_view key) {
  if (metadata.find(key) == std::string::npos) return std::nullopt;
  simdjson::dom::parser parser;
  simdjson::dom::object object;
  std::string_view value;
  if (parser.parse(simdjson::padded_string(metadata)).get(object) != simdjson::SUCCESS ||
      object[key].get_string().get(value) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  return std::string(value);
}

std::optional<int64_t> MetadataInteger(const std::string& metadata, std::string_view key) {
  if (metadata.find(key) == std::string::npos) return std::nullopt;
  simdjson::dom::parser parser;
  simdjson::dom::object object;
  int64_t value = 0;
  if (parser.parse(simdjson::padded_string(metadata)).get(object) != simdjson::SUCCESS ||
      object[key].get_int64().get(value) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  return value;
}

// Rebuilds every struct field of `type`, at any depth, as `change` makes it (children first).
TypePtr MapFields(const TypePtr& type, const std::function<Field(Field)>& change) {
  switch (type->id()) {
    case TypeId::kStruct: {
      std::vector<Field> fields;
      bool changed = false;
      for (const Field& field : type->fields()) {
        Field copy = field;
        copy.type = MapFields(field.type, change);
        copy = change(std::move(copy));
        changed = changed || !(copy == field);
        fields.push_back(std::move(copy));
      }
      if (!changed) return type;
      Result<TypePtr> made = DataType::Struct(std::move(fields));
      return made.ok() ? *made : type;
    }
    case TypeId::kArray: {
      TypePtr element = MapFields(type->element_type(), change);
      return element == type->element_type() ? type : DataType::Array(element, type->contains_null());
    }
    case TypeId::kMap: {
      TypePtr key = MapFields(type->key_type(), change);
      TypePtr value = MapFields(type->value_type(), change);
      if (key == type->key_type() && value == type->value_type()) return type;
      return DataType::Map(key, value, type->value_contains_null());
    }
    default:
      return type;
  }
}

// The type of the same position in `previous` as `type` has in its parent, for carrying ids over:
// the field of the same name (ignoring case) in a struct, the element, key or value otherwise.
const DataType* Counterpart(const DataType* previous, TypeId id) {
  return previous != nullptr && previous->id() == id ? previous : nullptr;
}

struct Assigner {
  int64_t max_id = 0;

  // `type` with ids and physical names on every field, taken from `previous` where it has the field.
  Result<TypePtr> Assign(const TypePtr& type, const DataType* previous) {
    switch (type->id()) {
      case TypeId::kStruct: {
        const DataType* before = Counterpart(previous, TypeId::kStruct);
        std::vector<Field> fields;
        for (const Field& field : type->fields()) {
          const Field* old = nullptr;
          if (before != nullptr) {
            int index = before->FieldIndexIgnoreCase(field.name);
            if (index >= 0) old = &before->field(index);
          }
          Field copy = field;
          if (!MetadataInteger(copy.metadata, kIdKey) || !MetadataString(copy.metadata, kPhysicalNameKey)) {
            std::optional<int64_t> id = old ? MetadataInteger(old->metadata, kIdKey) : std::nullopt;
            std::optional<std::string> physical = old ? MetadataString(old->metadata, kPhysicalNameKey) : std::nullopt;
            if (!id || !physical) {
              id = ++max_id;
              // A column the table had before it was mapped keeps its name in the files it wrote.
              physical = old ? old->name : "col-" + NewUuid();
            }
            std::string extra = fmt::format("\"{}\":{},", kIdKey, *id);
            AppendJsonString(&extra, kPhysicalNameKey);
            extra.push_back(':');
            AppendJsonString(&extra, *physical);
            copy.metadata = EditedMetadata(
                copy.metadata, [](std::string_view key) { return key == kIdKey || key == kPhysicalNameKey; }, extra);
          }
          max_id = std::max(max_id, MetadataInteger(copy.metadata, kIdKey).value_or(0));
          // Ids in pre-order: a field's before its nested fields'.
          SLUICE_ASSIGN_OR_RETURN(copy.type, Assign(field.type, old ? old->type.get() : nullptr));
          fields.push_back(std::move(copy));
        }
        return DataType::Struct(std::move(fields));
      }
      case TypeId::kArray: {
        const DataType* before = Counterpart(previous, TypeId::kArray);
        SLUICE_ASSIGN_OR_RETURN(TypePtr element, Assign(type->element_type(), before ? before->element_type().get() : nullptr));
        return DataType::Array(element, type->contains_null());
      }
      case TypeId::kMap: {
        const DataType* before = Counterpart(previous, TypeId::kMap);
        SLUICE_ASSIGN_OR_RETURN(TypePtr key, Assign(type->key_type(), before ? before->key_type().get() : nullptr));
        SLUICE_ASSIGN_OR_RETURN(TypePtr value, Assign(type->value_type(), before ? before->value_type().get() : nullptr));
        return DataType::Map(key, value, type->value_contains_null());
      }
      default:
        return type;
    }
  }
};

// The largest column id any field of `type` carries.
int64_t MaxColumnId(const DataType& type) {
  int64_t max_id = 0;
  switch (type.id()) {
    case TypeId::kStruct:
      for (const Field& field : type.fields()) {
        max_id = std::max({max_id, MetadataInteger(field.metadata, kIdKey).value_or(0), MaxColumnId(*field.type)});
      }
      return max_id;
    case TypeId::kArray: return MaxColumnId(*type.element_type());
    case TypeId::kMap: return std::max(MaxColumnId(*type.key_type()), MaxColumnId(*type.value_type()));
    default: return 0;
  }
}

Status Internal(const std::string& what) { return Status::Error(errors::kInternalError, what); }

// Every field of `type` with a column id, at any depth: id -> the dot path of names to it.
void ColumnPaths(const DataType& type, const std::string& prefix, std::map<int64_t, std::string>* paths) {
  switch (type.id()) {
    case TypeId::kStruct:
      for (const Field& field : type.fields()) {
        const std::string path = prefix.empty() ? field.name : prefix + "." + field.name;
        if (std::optional<int64_t> id = MetadataInteger(field.metadata, kIdKey)) (*paths)[*id] = path;
        ColumnPaths(*field.type, path, paths);
      }
      return;
    case TypeId::kArray: return ColumnPaths(*type.element_type(), prefix + ".element", paths);
    case TypeId::kMap:
      ColumnPaths(*type.key_type(), prefix + ".key", paths);
      return ColumnPaths(*type.value_type(), prefix + ".value", paths);
    default: return;
  }
}

}  // namespace

Result<ColumnMappingMode> MappingModeOf(const Metadata& metadata) {
  auto it = metadata.configuration.find(std::string(kColumnMappingMode));
  if (it == metadata.configuration.end()) return ColumnMappingMode::kNone;
  std::string mode = it->second;
  std::transform(mode.begin(), mode.end(), mode.begin(), [](unsigned char c) { return std::tolower(c); });
  if (mode == "none") return ColumnMappingMode::kNone;
  if (mode == "name") return ColumnMappingMode::kName;
  if (mode == "id") return ColumnMappingMode::kId;
  return Status::Error(errors::kDeltaProtocolUnsupported,
                       fmt::format("{} is '{}'; the protocol defines none, name and id", kColumnMappingMode, it->second));
}

bool NeedsColumnMapping(const DataType& schema) {
  switch (schema.id()) {
    case TypeId::kStruct:
      return std::any_of(schema.fields().begin(), schema.fields().end(), [](const Field& field) {
        return field.name.find_first_of(kCharactersNeedingColumnMapping) != std::string::npos ||
               NeedsColumnMapping(*field.type);
      });
    case TypeId::kArray: return NeedsColumnMapping(*schema.element_type());
    case TypeId::kMap: return NeedsColumnMapping(*schema.key_type()) || NeedsColumnMapping(*schema.value_type());
    default: return false;
  }
}

std::string PhysicalName(const Field& field) {
  if (!MentionsColumnMapping(field.metadata)) return field.name;
  return MetadataString(field.metadata, kPhysicalNameKey).value_or(field.name);
}

TypePtr PhysicalSchema(const TypePtr& schema, bool field_ids) {
  return MapFields(schema, [field_ids](Field field) {
    if (!MentionsColumnMapping(field.metadata)) return field;
    field.name = PhysicalName(field);
    std::string extra;
    std::optional<int64_t> id = field_ids ? MetadataInteger(field.metadata, kIdKey) : std::nullopt;
    if (id) extra = fmt::format("\"{}\":{}", kParquetFieldIdKey, *id);
    field.metadata = EditedMetadata(field.metadata, [](std::string_view key) { return key == kParquetFieldIdKey; },
                                    extra);
    return field;
  });
}

TypePtr WithoutColumnMapping(const TypePtr& schema) {
  return MapFields(schema, [](Field field) {
    if (!MentionsColumnMapping(field.metadata)) return field;
    field.metadata = EditedMetadata(
        field.metadata, [](std::string_view key) { return key.starts_with("delta.columnMapping."); }, "");
    return field;
  });
}

std::optional<std::vector<std::string>> PhysicalPath(const TypePtr& schema, const std::vector<std::string>& path) {
  std::vector<std::string> physical;
  const DataType* type = schema.get();
  for (const std::string& name : path) {
    if (type == nullptr || type->id() != TypeId::kStruct) return std::nullopt;
    int index = type->FieldIndexIgnoreCase(name);
    if (index < 0) return std::nullopt;
    physical.push_back(PhysicalName(type->field(index)));
    type = type->field(index).type.get();
  }
  return physical;
}

Result<ColumnPtr> Relabel(const ColumnPtr& column, const TypePtr& type) {
  if (column->type == type || column->type->Equals(*type)) return column;
  const TypeId id = type->id();
  if (column->type->id() != id) {
    return Internal(fmt::format("a column of {} cannot be read as {}", column->type->ToString(), type->ToString()));
  }
  auto result = std::make_shared<Column>(*column);
  result->type = type;
  switch (id) {
    case TypeId::kStruct: {
      if (static_cast<int>(column->children.size()) != type->num_fields()) {
        return Internal(fmt::format("a struct of {} fields cannot be read as {}", column->children.size(), type->ToString()));
      }
      for (int i = 0; i < type->num_fields(); ++i) {
        SLUICE_ASSIGN_OR_RETURN(result->children[i], Relabel(column->children[i], type->field(i).type));
      }
      break;
    }
    case TypeId::kArray: {
      SLUICE_ASSIGN_OR_RETURN(result->children[0], Relabel(column->children[0], type->element_type()));
      break;
    }
    case TypeId::kMap: {
      SLUICE_ASSIGN_OR_RETURN(result->children[0], Relabel(column->children[0], type->key_type()));
      SLUICE_ASSIGN_OR_RETURN(result->children[1], Relabel(column->children[1], type->value_type()));
      break;
    }
    default:
      break;  // the same layout: decimal precision or the like is the caller's to match
  }
  return ColumnPtr(std::move(result));
}

std::optional<std::string> RenamedOrDroppedColumn(const DataType& before, const DataType& after) {
  std::map<int64_t, std::string> old_paths, new_paths;
  ColumnPaths(before, "", &old_paths);
  ColumnPaths(after, "", &new_paths);
  for (const auto& [id, path] : old_paths) {
    auto now = new_paths.find(id);
    if (now == new_paths.end() || now->second != path) return path;
  }
  return std::nullopt;
}

Result<TypePtr> ApplyColumnMapping(Metadata* metadata, const TypePtr& previous) {
  SLUICE_ASSIGN_OR_RETURN(TypePtr schema, ParseTypeJson(metadata->schema_string));
  SLUICE_ASSIGN_OR_RETURN(ColumnMappingMode mode, MappingModeOf(*metadata));
  if (mode == ColumnMappingMode::kNone && NeedsColumnMapping(*schema)) {
    if (previous != nullptr) {
      return Status::Error(errors::kDeltaInvalidCharactersInColumnNames,
                           "a column name holds one of ' ,;{}()\\n\\t=.', which a Delta table without column "
                           "mapping cannot name; give it another name (an alias), or write a new table, which "
                           "gets column mapping for such names");
    }
    metadata->configuration[std::string(kColumnMappingMode)] = "name";
    mode = ColumnMappingMode::kName;
  }
  if (mode == ColumnMappingMode::kNone) {
    TypePtr plain = WithoutColumnMapping(schema);
    if (plain != schema) metadata->schema_string = plain->ToJson();
    return plain;
  }
  Assigner assigner;
  auto configured = metadata->configuration.find(std::string(kColumnMappingMaxId));
  if (configured != metadata->configuration.end()) {
    const std::string& text = configured->second;
    std::from_chars(text.data(), text.data() + text.size(), assigner.max_id);
  }
  assigner.max_id = std::max({assigner.max_id, MaxColumnId(*schema), previous ? MaxColumnId(*previous) : 0});
  SLUICE_ASSIGN_OR_RETURN(TypePtr mapped, assigner.Assign(schema, previous.get()));
  metadata->configuration[std::string(kColumnMappingMaxId)] = std::to_string(assigner.max_id);
  metadata->schema_string = mapped->ToJson();
  return mapped;
}

}  // namespace sluice::delta
