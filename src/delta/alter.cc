#include "sluice/delta/alter.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <functional>

#include "delta/column_mapping.h"
#include "delta/field_metadata.h"
#include "delta/type_widening.h"
#include "sluice/core/column_path.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/ascii.h"
#include "sluice/core/json_text.h"
#include "sluice/core/types.h"
#include "sluice/delta/features.h"
#include "sluice/delta/transaction.h"
#include "sluice/delta/writer.h"

namespace sluice::delta {
namespace {

constexpr std::string_view kOperationSetProperties = "SET TBLPROPERTIES";
constexpr std::string_view kOperationUnsetProperties = "UNSET TBLPROPERTIES";
constexpr std::string_view kOperationRenameColumn = "RENAME COLUMN";
constexpr std::string_view kOperationDropColumns = "DROP COLUMNS";
constexpr std::string_view kOperationAddColumns = "ADD COLUMNS";
constexpr std::string_view kOperationChangeColumn = "CHANGE COLUMN";

// The `delta.` properties sluice implements and a user may set (docs/delta.md, "Table properties").
constexpr std::array<std::string_view, 12> kSettable = {
    "delta.appendOnly",
    "delta.autoOptimize.autoCompact",
    "delta.checkpointInterval",
    "delta.checkpointPolicy",
    "delta.columnMapping.mode",
    "delta.deletedFileRetentionDuration",
    "delta.enableDeletionVectors",
    "delta.enableRowTracking",
    "delta.enableTypeWidening",
    "delta.logRetentionDuration",
    "delta.setTransactionRetentionDuration",
    "delta.targetFileSize",
};
// Properties the table keeps for itself.
constexpr std::array<std::string_view, 3> kTableOwned = {
    kColumnMappingMaxId, kMaterializedRowIdColumn, kMaterializedRowCommitVersionColumn};
constexpr std::string_view kMinReaderVersion = "delta.minReaderVersion";
constexpr std::string_view kMinWriterVersion = "delta.minWriterVersion";

// The latest version of the table, in a transaction that will change its metadata.
Result<std::unique_ptr<Transaction>> StartChange(std::shared_ptr<FileSystem> fs, const std::string& table_path) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Transaction> transaction, Transaction::Start(std::move(fs), table_path));
  if (transaction->read_snapshot() == nullptr) {
    return Status::Error(errors::kDeltaTableNotFound, fmt::format("no Delta table at '{}'", table_path));
  }
  return transaction;
}

std::string ModeName(const Metadata& metadata) {
  auto it = metadata.configuration.find(std::string(kColumnMappingMode));
  return it == metadata.configuration.end() ? "none" : AsciiLower(it->second);
}

// StartChange for a change of columns (`what`: "renaming a column"), which only a table with
// column mapping takes: `refusal` names why not otherwise.
Result<std::unique_ptr<Transaction>> StartColumnChange(std::shared_ptr<FileSystem> fs, const std::string& table_path,
                                                       std::string_view refusal, std::string_view what) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Transaction> transaction, StartChange(std::move(fs), table_path));
  if (ModeName(transaction->read_snapshot()->metadata()) == "none") {
    return Status::Error(refusal, fmt::format("{} needs column mapping: enable it first with the table property "
                                              "delta.columnMapping.mode = name (SET TBLPROPERTIES), which rewrites "
                                              "no file",
                                              what));
  }
  return transaction;
}

// `key`, as Delta names it, when it is one of `names` ignoring case (Spark's keys are
// case-insensitive); else `key` itself.
template <size_t N>
std::string Canonical(const std::string& key, const std::array<std::string_view, N>& names) {
  for (std::string_view name : names) {
    if (EqualsIgnoreCase(name, key)) return std::string(name);
  }
  return key;
}

// A legacy protocol version a property asks for, within [low, high].
Result<int32_t> RequestedVersion(std::string_view key, const std::string& value, int32_t low, int32_t high) {
  int32_t version = 0;
  auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), version);
  if (error != std::errc() || end != value.data() + value.size() || version < low || version > high) {
    return Status::Error(errors::kInvalidArgument,
                         fmt::format("{} is {} to {} here, not '{}': sluice raises legacy protocols this way, and "
                                     "gives tables the features their properties need by itself",
                                     key, low, high, value));
  }
  return version;
}

// `schema` with `change` applied to the fields of the struct at `parent` (logical names, ignoring
// case; empty for the table's columns). `shown` names the column in errors.
Result<TypePtr> ChangeStruct(const TypePtr& schema, const std::vector<std::string>& parent, const std::string& shown,
                             const std::function<Status(std::vector<Field>*)>& change) {
  std::vector<Field> fields = schema->fields();
  if (parent.empty()) {
    SLUICE_RETURN_IF_ERROR(change(&fields));
  } else {
    const int index = schema->FieldIndexIgnoreCase(parent[0]);
    if (index < 0) {
      return Status::Error(errors::kUnresolvedColumn, fmt::format("the table has no column `{}`", shown));
    }
    if (fields[index].type->id() != TypeId::kStruct) {
      return Status::Error(errors::kInvalidFieldName,
                           fmt::format("field name `{}` is invalid: `{}` is not a struct", shown, parent[0]));
    }
    SLUICE_ASSIGN_OR_RETURN(fields[index].type,
                            ChangeStruct(fields[index].type, {parent.begin() + 1, parent.end()}, shown, change));
  }
  return DataType::Struct(std::move(fields));
}

// `schema` with `change` applied to the struct holding the field at `path`: `change` gets that
// struct's fields and the index of the field.
Result<TypePtr> ChangeField(const TypePtr& schema, const std::vector<std::string>& path, const std::string& shown,
                            const std::function<Status(std::vector<Field>*, size_t)>& change) {
  return ChangeStruct(schema, {path.begin(), path.end() - 1}, shown, [&](std::vector<Field>* fields) {
    int index = -1;
    for (size_t i = 0; i < fields->size(); ++i) {
      if (EqualsIgnoreCase((*fields)[i].name, path.back())) index = static_cast<int>(i);
    }
    if (index < 0) return Status::Error(errors::kUnresolvedColumn, fmt::format("the table has no column `{}`", shown));
    return change(fields, static_cast<size_t>(index));
  });
}

// Puts `field` among `fields` at `position`.
Status Place(std::vector<Field>* fields, Field field, const ColumnPosition& position) {
  auto at = fields->end();
  if (position.kind == ColumnPosition::Kind::kFirst) at = fields->begin();
  if (position.kind == ColumnPosition::Kind::kAfter) {
    at = std::find_if(fields->begin(), fields->end(),
                      [&](const Field& sibling) { return EqualsIgnoreCase(sibling.name, position.after); });
    if (at == fields->end()) {
      return Status::Error(errors::kUnresolvedColumn,
                           fmt::format("no column `{}` to place `{}` after", position.after, field.name));
    }
    ++at;
  }
  fields->insert(at, std::move(field));
  return Status::OK();
}

std::string PositionText(const ColumnPosition& position) {
  switch (position.kind) {
    case ColumnPosition::Kind::kFirst: return "FIRST";
    case ColumnPosition::Kind::kAfter: return "AFTER " + position.after;
    default: return "";
  }
}

// A column as commitInfo's parameters describe it: {"name":path,"type":...,"nullable":...,"metadata":...}.
std::string ColumnParameter(const std::string& path, const Field& field) {
  return fmt::format(R"({{"name":{},"type":{},"nullable":{},"metadata":{}}})", JsonString(path), field.type->ToJson(),
                     field.nullable ? "true" : "false", field.metadata);
}

// The field's metadata with its comment set.
std::string WithComment(const std::string& metadata, const std::string& comment) {
  return EditedMetadata(metadata, [](std::string_view key) { return key == "comment"; },
                        "\"comment\":" + JsonString(comment));
}

bool TypeWideningEnabled(const Metadata& metadata) {
  auto it = metadata.configuration.find(std::string(kEnableTypeWidening));
  return it != metadata.configuration.end() && AsciiLower(it->second) == "true";
}

// Whether Spark takes `from` to `to` as a change of a column's type at all, though Delta does not
// widen it: a number to a type later in byte < short < int < long < float < double (long to
// double), or one of the changes readers widen but Delta no longer makes (byte to decimal(4,1)).
bool IsUpcastDeltaDoesNotWiden(const DataType& from, const DataType& to) {
  constexpr std::array<TypeId, 6> kOrder = {TypeId::kByte, TypeId::kShort, TypeId::kInteger,
                                            TypeId::kLong, TypeId::kFloat, TypeId::kDouble};
  auto rank = [&](TypeId id) { return std::find(kOrder.begin(), kOrder.end(), id) - kOrder.begin(); };
  return ReadsWidened(from, to) ||
         (rank(from.id()) < rank(to.id()) && rank(to.id()) < static_cast<std::ptrdiff_t>(kOrder.size()));
}

// The column `field` (at `shown`) with its type changed to `to`, recorded as a type change.
Result<Field> Widened(Field field, const TypePtr& to, const std::string& shown, const Metadata& metadata) {
  if (field.type->Equals(*to)) return field;
  const TypePtr& from = field.type;
  const std::string change = fmt::format("changing column {} from {} to {}", shown, from->ToString(), to->ToString());
  if (IsTypeWidening(*from, *to) && TypeWideningEnabled(metadata)) {
    field.metadata = WithTypeChanges(field.metadata, {TypeChange{"", from, to}});
    field.type = to;
    return field;
  }
  if (IsTypeWidening(*from, *to)) {
    return Status::Error(errors::kDeltaUnsupportedAlterTableChangeColOp,
                         fmt::format("ALTER TABLE CHANGE COLUMN is not supported for {}: widening a column's type "
                                     "needs the table property {} = true",
                                     change, kEnableTypeWidening));
  }
  if (IsUpcastDeltaDoesNotWiden(*from, *to)) {
    return Status::Error(errors::kDeltaUnsupportedAlterTableChangeColOp,
                         fmt::format("ALTER TABLE CHANGE COLUMN is not supported for {}: it is not a type widening "
                                     "(its values would need rewriting)",
                                     change));
  }
  return Status::Error(errors::kNotSupportedChangeColumn,
                       fmt::format("ALTER TABLE ALTER/CHANGE COLUMN is not supported for {}", change));
}

// Commits `metadata` (with its schema) as the change `operation` made.
Result<int64_t> CommitMetadata(Transaction* transaction, Metadata metadata, std::string_view operation,
                               StringMap parameters) {
  SLUICE_RETURN_IF_ERROR(transaction->SetMetadata(std::move(metadata)).status());
  return transaction->Commit(operation, std::move(parameters));
}

}  // namespace

Result<int64_t> SetTableProperties(std::shared_ptr<FileSystem> fs, const std::string& table_path,
                                   const StringMap& properties) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Transaction> transaction, StartChange(std::move(fs), table_path));
  const SnapshotPtr& snapshot = transaction->read_snapshot();
  Metadata metadata = snapshot->metadata();
  Protocol protocol = snapshot->protocol();
  bool protocol_requested = false;
  std::string shown;
  for (const auto& [given_key, value] : properties) {
    const std::string key = Canonical(Canonical(Canonical(given_key, kSettable), kTableOwned),
                                      std::array{kMinReaderVersion, kMinWriterVersion});
    shown += fmt::format("{}{}={}", shown.empty() ? "" : ", ", key, value);
    if (key == kMinReaderVersion || key == kMinWriterVersion) {
      const bool reader = key == kMinReaderVersion;
      SLUICE_ASSIGN_OR_RETURN(int32_t version, RequestedVersion(key, value, reader ? 1 : 2, reader ? 2 : 5));
      // A table of features already has what the legacy versions grant.
      if (protocol.min_reader_version < 3 && protocol.min_writer_version < 7) {
        int32_t& current = reader ? protocol.min_reader_version : protocol.min_writer_version;
        protocol_requested = protocol_requested || version > current;
        current = std::max(current, version);
      }
      continue;
    }
    if (std::find(kTableOwned.begin(), kTableOwned.end(), key) != kTableOwned.end()) {
      return Status::Error(errors::kDeltaCannotModifyTableProperty,
                           fmt::format("{} is the table's own, kept by the writers; it cannot be set", key));
    }
    if (AsciiLower(key).starts_with("delta.") &&
        std::find(kSettable.begin(), kSettable.end(), key) == kSettable.end()) {
      return Status::Error(errors::kDeltaUnknownConfiguration,
                           fmt::format("unknown configuration {}: sluice takes the table properties {}", given_key,
                                       fmt::join(kSettable, ", ")));
    }
    if (key == kColumnMappingMode) {
      const std::string from = ModeName(metadata), to = AsciiLower(value);
      if (from != to && !(from == "none" && to == "name")) {
        return Status::Error(errors::kDeltaUnsupportedColumnMappingModeChange,
                             fmt::format("changing the column mapping mode from '{}' to '{}' is not supported: a "
                                         "table without column mapping can get mode 'name', and keeps it",
                                         from, to));
      }
    }
    metadata.configuration[key] = value;
  }
  if (protocol_requested) transaction->SetProtocol(protocol);
  return CommitMetadata(transaction.get(), std::move(metadata), kOperationSetProperties,
                        {{"properties", "{" + shown + "}"}});
}

Result<int64_t> UnsetTableProperties(std::shared_ptr<FileSystem> fs, const std::string& table_path,
                                     const std::vector<std::string>& names, bool if_exists) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Transaction> transaction, StartChange(std::move(fs), table_path));
  Metadata metadata = transaction->read_snapshot()->metadata();
  for (const std::string& given : names) {
    const std::string key = Canonical(Canonical(given, kSettable), kTableOwned);
    if (key == kColumnMappingMode && ModeName(metadata) != "none") {
      return Status::Error(errors::kDeltaUnsupportedColumnMappingModeChange,
                           fmt::format("the table keeps column mapping mode '{}': it cannot be unset",
                                       ModeName(metadata)));
    }
    if (std::find(kTableOwned.begin(), kTableOwned.end(), key) != kTableOwned.end()) {
      return Status::Error(errors::kDeltaCannotModifyTableProperty,
                           fmt::format("{} is the table's own, kept by the writers; it cannot be unset", key));
    }
    if (metadata.configuration.erase(key) == 0 && !if_exists) {
      return Status::Error(errors::kInvalidArgument,
                           fmt::format("the table has no property {} (IF EXISTS leaves such names alone)", given));
    }
  }
  return CommitMetadata(transaction.get(), std::move(metadata), kOperationUnsetProperties,
                        {{"propKeys", fmt::format("[{}]", fmt::join(names, ", "))}, {"ifExists", if_exists ? "true" : "false"}});
}

Result<int64_t> RenameColumn(std::shared_ptr<FileSystem> fs, const std::string& table_path, const std::string& column,
                             const std::string& new_name) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> path, ParseColumnPath(column));
  if (new_name.empty()) return Status::Error(errors::kInvalidArgument, "a column's new name cannot be empty");
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Transaction> transaction,
                          StartColumnChange(std::move(fs), table_path, errors::kDeltaUnsupportedRenameColumn,
                                            "renaming a column"));
  Metadata metadata = transaction->read_snapshot()->metadata();
  std::string old_name;
  SLUICE_ASSIGN_OR_RETURN(TypePtr schema, ParseTypeJson(metadata.schema_string));
  SLUICE_ASSIGN_OR_RETURN(schema, ChangeField(schema, path, column, [&](std::vector<Field>* fields, size_t index) {
    for (size_t i = 0; i < fields->size(); ++i) {
      if (i != index && EqualsIgnoreCase((*fields)[i].name, new_name)) {
        return Status::Error(errors::kDeltaSchemaMismatch,
                             fmt::format("cannot rename `{}` to `{}`: a column of that name exists", column, new_name));
      }
    }
    old_name = (*fields)[index].name;
    (*fields)[index].name = new_name;
    return Status::OK();
  }));
  if (path.size() == 1) {
    for (std::string& partition : metadata.partition_columns) {
      if (partition == old_name) partition = new_name;
    }
  }
  metadata.schema_string = schema->ToJson();
  return CommitMetadata(transaction.get(), std::move(metadata), kOperationRenameColumn,
                        {{"oldColumnPath", column}, {"newColumnPath", new_name}});
}

Result<int64_t> DropColumns(std::shared_ptr<FileSystem> fs, const std::string& table_path,
                            const std::vector<std::string>& columns) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Transaction> transaction,
                          StartColumnChange(std::move(fs), table_path, errors::kDeltaUnsupportedDropColumn,
                                            "dropping a column"));
  Metadata metadata = transaction->read_snapshot()->metadata();
  SLUICE_ASSIGN_OR_RETURN(TypePtr schema, ParseTypeJson(metadata.schema_string));
  for (const std::string& column : columns) {
    SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> path, ParseColumnPath(column));
    SLUICE_ASSIGN_OR_RETURN(schema, ChangeField(schema, path, column, [&](std::vector<Field>* fields, size_t index) {
      const std::string& name = (*fields)[index].name;
      if (path.size() == 1 && std::find(metadata.partition_columns.begin(), metadata.partition_columns.end(), name) !=
                                  metadata.partition_columns.end()) {
        return Status::Error(errors::kDeltaUnsupportedDropPartitionColumn,
                             fmt::format("`{}` partitions the table; a partition column cannot be dropped", name));
      }
      if (fields->size() == 1) {
        return Status::Error(errors::kDeltaUnsupportedDropColumn,
                             fmt::format("`{}` is the only column {}; it cannot be dropped", column,
                                         path.size() == 1 ? "of the table" : "of its struct"));
      }
      fields->erase(fields->begin() + static_cast<std::ptrdiff_t>(index));
      return Status::OK();
    }));
  }
  metadata.schema_string = schema->ToJson();
  return CommitMetadata(transaction.get(), std::move(metadata), kOperationDropColumns,
                        {{"columns", fmt::format("[{}]", fmt::join(columns, ", "))}});
}

Result<int64_t> AddColumns(std::shared_ptr<FileSystem> fs, const std::string& table_path,
                           const std::vector<NewColumn>& columns) {
  if (columns.empty()) return Status::Error(errors::kInvalidArgument, "ADD COLUMNS needs at least one column");
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Transaction> transaction, StartChange(std::move(fs), table_path));
  Metadata metadata = transaction->read_snapshot()->metadata();
  SLUICE_ASSIGN_OR_RETURN(TypePtr schema, ParseTypeJson(metadata.schema_string));
  std::string parameter = "[";
  for (const NewColumn& column : columns) {
    SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> path, ParseColumnPath(column.path));
    if (column.type == nullptr) {
      return Status::Error(errors::kInvalidArgument, fmt::format("the new column `{}` needs a type", column.path));
    }
    if (!column.nullable) {
      return Status::Error(errors::kDeltaOperationNotAllowed,
                           fmt::format("operation not allowed: `NOT NULL in ALTER TABLE ADD COLUMNS` (`{}`) is not "
                                       "supported for Delta tables: the table's files have no value for it",
                                       column.path));
    }
    Field field{path.back(), column.type, true,
                column.comment.empty() ? std::string("{}") : WithComment("{}", column.comment)};
    const std::string described = ColumnParameter(column.path, field);
    SLUICE_ASSIGN_OR_RETURN(schema, ChangeStruct(schema, {path.begin(), path.end() - 1}, column.path,
                                                 [&](std::vector<Field>* fields) {
      for (const Field& sibling : *fields) {
        if (EqualsIgnoreCase(sibling.name, field.name)) {
          return Status::Error(errors::kFieldAlreadyExists,
                               fmt::format("cannot add column `{}`: it already exists", column.path));
        }
      }
      return Place(fields, std::move(field), column.position);
    }));
    parameter += fmt::format("{}{{\"column\":{}", parameter.size() > 1 ? "," : "", described);
    if (column.position.kind != ColumnPosition::Kind::kLast) {
      parameter += ",\"position\":" + JsonString(PositionText(column.position));
    }
    parameter += "}";
  }
  metadata.schema_string = schema->ToJson();
  return CommitMetadata(transaction.get(), std::move(metadata), kOperationAddColumns, {{"columns", parameter + "]"}});
}

Result<int64_t> ChangeColumn(std::shared_ptr<FileSystem> fs, const std::string& table_path, const std::string& column,
                             const ColumnChange& change) {
  if (change.type == nullptr && !change.comment && !change.nullable && !change.position) {
    return Status::Error(errors::kInvalidArgument,
                         fmt::format("CHANGE COLUMN `{}` needs a type, a comment, a nullability or a position", column));
  }
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> path, ParseColumnPath(column));
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Transaction> transaction, StartChange(std::move(fs), table_path));
  Metadata metadata = transaction->read_snapshot()->metadata();
  SLUICE_ASSIGN_OR_RETURN(TypePtr schema, ParseTypeJson(metadata.schema_string));
  std::string described;
  SLUICE_ASSIGN_OR_RETURN(schema, ChangeField(schema, path, column, [&](std::vector<Field>* fields, size_t index) {
    Field field = (*fields)[index];
    if (change.type != nullptr) {
      SLUICE_ASSIGN_OR_RETURN(field, Widened(std::move(field), change.type, column, metadata));
    }
    if (change.comment) field.metadata = WithComment(field.metadata, *change.comment);
    if (change.nullable == false && field.nullable) {
      return Status::Error(errors::kDeltaUnsupportedAlterTableChangeColOp,
                           fmt::format("ALTER TABLE CHANGE COLUMN is not supported for changing column {} from "
                                       "nullable to NOT NULL: existing files may hold nulls",
                                       column));
    }
    if (change.nullable == true) field.nullable = true;
    described = ColumnParameter(column, field);
    if (!change.position) {
      (*fields)[index] = std::move(field);
      return Status::OK();
    }
    fields->erase(fields->begin() + static_cast<std::ptrdiff_t>(index));
    return Place(fields, std::move(field), *change.position);
  }));
  metadata.schema_string = schema->ToJson();
  StringMap parameters = {{"column", described}};
  if (change.position) parameters["position"] = PositionText(*change.position);
  return CommitMetadata(transaction.get(), std::move(metadata), kOperationChangeColumn, std::move(parameters));
}

}  // namespace sluice::delta
