#include "sluice/delta/alter.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <functional>

#include "delta/column_mapping.h"
#include "sluice/core/column_path.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/ascii.h"
#include "sluice/core/types.h"
#include "sluice/delta/features.h"
#include "sluice/delta/transaction.h"

namespace sluice::delta {
namespace {

constexpr std::string_view kOperationSetProperties = "SET TBLPROPERTIES";
constexpr std::string_view kOperationUnsetProperties = "UNSET TBLPROPERTIES";
constexpr std::string_view kOperationRenameColumn = "RENAME COLUMN";
constexpr std::string_view kOperationDropColumns = "DROP COLUMNS";

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

// The schema of `metadata` with `change` applied to the struct holding the field at `path`
// (logical names, ignoring case): `change` gets that struct's fields and the index of the field.
Result<TypePtr> ChangeField(const TypePtr& schema, const std::vector<std::string>& path, const std::string& shown,
                            const std::function<Status(std::vector<Field>*, size_t)>& change) {
  std::vector<Field> fields = schema->fields();
  const int index = schema->FieldIndexIgnoreCase(path[0]);
  if (index < 0) {
    return Status::Error(errors::kUnresolvedColumn, fmt::format("the table has no column `{}`", shown));
  }
  if (path.size() == 1) {
    SLUICE_RETURN_IF_ERROR(change(&fields, static_cast<size_t>(index)));
  } else {
    if (fields[index].type->id() != TypeId::kStruct) {
      return Status::Error(errors::kUnresolvedColumn, fmt::format("`{}` is not a struct in `{}`", path[0], shown));
    }
    SLUICE_ASSIGN_OR_RETURN(fields[index].type, ChangeField(fields[index].type, {path.begin() + 1, path.end()}, shown, change));
  }
  return DataType::Struct(std::move(fields));
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
    const std::string key = Canonical(Canonical(given_key, kSettable), std::array{kMinReaderVersion, kMinWriterVersion});
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
    const std::string key = Canonical(given, kSettable);
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

}  // namespace sluice::delta
