#include "sluice/delta/writer.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <simdjson.h>

#include "delta/column_mapping.h"
#include "delta/data_files.h"
#include "delta/json_writer.h"
#include "delta/type_widening.h"
#include "delta/uuid.h"
#include "sluice/core/ascii.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/json_text.h"
#include "sluice/delta/features.h"
#include "sluice/delta/table_writer.h"

namespace sluice::delta {
namespace {


Status Mismatch(std::string_view path, std::string message) {
  return Status::Error(errors::kDeltaSchemaMismatch,
                       fmt::format("column '{}': {}", path.empty() ? "<root>" : path, std::move(message)));
}

std::string Join(std::string_view path, std::string_view name) {
  return path.empty() ? std::string(name) : fmt::format("{}.{}", path, name);
}

// The merge of one type; with `widen`, a narrower table type is widened to the data's and the
// change reported in `changes` (paths relative to the nearest struct field).
Result<TypePtr> MergeType(const TypePtr& table, const TypePtr& incoming, const std::string& path, bool widen,
                          std::vector<TypeChange>* changes) {
  auto nested = [&](const TypePtr& t, const TypePtr& i, const std::string& child_path,
                    std::string_view step) -> Result<TypePtr> {
    std::vector<TypeChange> inner;
    SLUICE_ASSIGN_OR_RETURN(TypePtr merged, MergeType(t, i, child_path, widen, &inner));
    for (TypeChange& change : inner) {
      change.field_path = change.field_path.empty() ? std::string(step) : std::string(step) + "." + change.field_path;
      changes->push_back(std::move(change));
    }
    return merged;
  };
  if (table->id() == TypeId::kStruct && incoming->id() == TypeId::kStruct) {
    std::vector<Field> fields = table->fields();
    for (const Field& field : incoming->fields()) {
      int index = table->FieldIndexIgnoreCase(field.name);
      if (index == -2) return Mismatch(Join(path, field.name), "matches several table columns");
      if (index < 0) {
        fields.push_back(Field{field.name, field.type, true, field.metadata});
        continue;
      }
      std::vector<TypeChange> field_changes;
      SLUICE_ASSIGN_OR_RETURN(fields[index].type, MergeType(fields[index].type, field.type, Join(path, field.name),
                                                            widen, &field_changes));
      if (!field_changes.empty()) fields[index].metadata = WithTypeChanges(fields[index].metadata, field_changes);
    }
    return DataType::Struct(std::move(fields));
  }
  if (table->id() == TypeId::kArray && incoming->id() == TypeId::kArray) {
    SLUICE_ASSIGN_OR_RETURN(TypePtr element,
                            nested(table->element_type(), incoming->element_type(), path + ".element", "element"));
    return DataType::Array(std::move(element), table->contains_null());
  }
  if (table->id() == TypeId::kMap && incoming->id() == TypeId::kMap) {
    SLUICE_ASSIGN_OR_RETURN(TypePtr key, nested(table->key_type(), incoming->key_type(), path + ".key", "key"));
    SLUICE_ASSIGN_OR_RETURN(TypePtr value,
                            nested(table->value_type(), incoming->value_type(), path + ".value", "value"));
    return DataType::Map(std::move(key), std::move(value), table->value_contains_null());
  }
  if (table->Equals(*incoming)) return table;
  // Data narrower than the column is written widened (ConformColumn); a wider one widens the
  // column when asked to.
  if (ReadsWidened(*incoming, *table)) return table;
  if (widen && IsAutomaticTypeWidening(*table, *incoming)) {
    changes->push_back({"", table, incoming});
    return incoming;
  }
  return Mismatch(path, fmt::format("the table has type {}, the data {}{}", table->ToString(), incoming->ToString(),
                                    IsAutomaticTypeWidening(*table, *incoming)
                                        ? "; widening a column needs delta.enableTypeWidening (or a writer that enables it)"
                                        : "; this type change is not a widening"));
}

Result<ColumnPtr> ConformColumn(const ColumnPtr& column, const TypePtr& target, const std::string& path,
                                FieldsOutsideTable outside);

// The children of a struct column (or the columns of a batch) arranged as `target`'s fields.
Result<std::vector<ColumnPtr>> ConformFields(const std::vector<ColumnPtr>& children, const DataType& source,
                                             const DataType& target, int64_t length, const std::string& path,
                                             FieldsOutsideTable outside) {
  for (const Field& field : source.fields()) {
    if (outside == FieldsOutsideTable::kRefuse && target.FieldIndexIgnoreCase(field.name) < 0) {
      return Mismatch(Join(path, field.name), "is not in the table (write with mergeSchema to add it)");
    }
  }
  std::vector<ColumnPtr> result;
  result.reserve(target.num_fields());
  for (const Field& field : target.fields()) {
    int index = source.FieldIndexIgnoreCase(field.name);
    if (index < 0) {
      if (!field.nullable) return Mismatch(Join(path, field.name), "is missing and not nullable");
      result.push_back(MakeNullColumn(field.type, length));
      continue;
    }
    SLUICE_ASSIGN_OR_RETURN(ColumnPtr child, ConformColumn(children[index], field.type, Join(path, field.name), outside));
    result.push_back(std::move(child));
  }
  return result;
}

Result<ColumnPtr> ConformColumn(const ColumnPtr& column, const TypePtr& target, const std::string& path,
                                FieldsOutsideTable outside) {
  if (column->type->Equals(*target)) return column;
  // Files written before a column was widened, and data narrower than its column.
  if (ReadsWidened(*column->type, *target)) return WidenColumn(*column, target);
  // A data file read may hold a timestamp column as Parquet timestamps not adjusted to UTC (some
  // writers store every timestamp so): the same microseconds, read as UTC, as Spark and delta-rs
  // read them.
  if (outside == FieldsOutsideTable::kLeaveOut && column->type->id() == TypeId::kTimestampNtz &&
      target->id() == TypeId::kTimestamp) {
    auto relabeled = std::make_shared<Column>(*column);
    relabeled->type = target;
    return ColumnPtr(std::move(relabeled));
  }
  TypeId id = target->id();
  if (id != column->type->id() || (id != TypeId::kStruct && id != TypeId::kArray && id != TypeId::kMap)) {
    return Mismatch(path, fmt::format("the table has type {}, the data {}", target->ToString(), column->type->ToString()));
  }
  auto result = std::make_shared<Column>(*column);
  result->type = target;
  if (id == TypeId::kStruct) {
    SLUICE_ASSIGN_OR_RETURN(result->children,
                            ConformFields(column->children, *column->type, *target, column->length, path, outside));
  } else if (id == TypeId::kArray) {
    SLUICE_ASSIGN_OR_RETURN(result->children[0],
                            ConformColumn(column->children[0], target->element_type(), path + ".element", outside));
  } else {
    SLUICE_ASSIGN_OR_RETURN(result->children[0], ConformColumn(column->children[0], target->key_type(), path + ".key", outside));
    SLUICE_ASSIGN_OR_RETURN(result->children[1],
                            ConformColumn(column->children[1], target->value_type(), path + ".value", outside));
  }
  return ColumnPtr(std::move(result));
}


std::string PartitionByParameter(const std::vector<std::string>& columns) {
  std::string out;
  AppendJsonStringArray(&out, columns);
  return out;
}


}  // namespace

Result<TypePtr> MergeSchemas(const TypePtr& table_schema, const TypePtr& incoming, bool widen) {
  std::vector<TypeChange> changes;  // only struct fields change types: the root is a struct
  return MergeType(table_schema, incoming, "", widen, &changes);
}

Result<BatchPtr> ConformToSchema(const BatchPtr& batch, const TypePtr& table_schema, FieldsOutsideTable outside) {
  if (batch->schema()->Equals(*table_schema)) return batch;
  SLUICE_ASSIGN_OR_RETURN(std::vector<ColumnPtr> columns,
                          ConformFields(batch->columns(), *batch->schema(), *table_schema, batch->num_rows(), "", outside));
  return RecordBatch::Make(table_schema, std::move(columns), batch->num_rows());
}

Result<WriteResult> WriteTable(std::shared_ptr<FileSystem> fs, const std::string& table_path,
                               const std::vector<BatchPtr>& batches, const WriteOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Transaction> txn, Transaction::Start(fs, table_path));
  Result<WriteResult> written = WriteInTransaction(*txn, batches, options);
  // Two writers found no table and both tried to create it; the loser writes into the winner's
  // table as any later writer would (its schema checks and txn versions apply as usual).
  if (!written.ok() && written.status().error_class() == errors::kDeltaTableAlreadyExists) {
    SLUICE_ASSIGN_OR_RETURN(txn, Transaction::Start(std::move(fs), table_path));
    return WriteInTransaction(*txn, batches, options);
  }
  return written;
}

namespace {

// A new table's partition columns: the data's columns named (ignoring case, given their names in
// the data), each once, of primitive types, and not all of them (a file needs a column), as Delta
// requires.
Result<std::vector<std::string>> PartitionColumnsOf(const DataType& data, const std::vector<std::string>& named) {
  std::vector<std::string> columns;
  for (const std::string& name : named) {
    int index = data.FieldIndex(name);
    if (index < 0) index = data.FieldIndexIgnoreCase(name);
    if (index < 0) {
      std::vector<std::string> names;
      for (const Field& field : data.fields()) names.push_back(field.name);
      return Status::Error(errors::kDeltaPartitionColumnNotFound,
                           fmt::format("partition column `{}` not found in schema [{}]", name, fmt::join(names, ", ")));
    }
    const Field& field = data.field(index);
    if (field.type->is_nested()) {
      return Status::Error(errors::kDeltaInvalidPartitionColumnType,
                           fmt::format("using column `{}` of type {} as a partition column is not supported: "
                                       "partition by a column of a primitive type",
                                       field.name, field.type->ToString()));
    }
    if (std::find(columns.begin(), columns.end(), field.name) != columns.end()) {
      return Status::Error(errors::kDeltaDuplicateColumnsFound,
                           fmt::format("found duplicate column(s) `{}` in the partition columns", field.name));
    }
    columns.push_back(field.name);
  }
  if (!columns.empty() && static_cast<int>(columns.size()) == data.num_fields()) {
    return Status::Error(errors::kDeltaCannotUseAllColumnsForPartition,
                         "cannot use all columns for partition columns: the data files would hold no column");
  }
  return columns;
}

// Whether two lists of partition columns name the same columns in the same order, ignoring case.
bool SameColumns(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!EqualsIgnoreCase(a[i], b[i])) return false;
  }
  return true;
}

}  // namespace

Status CheckPartitionColumns(const std::vector<std::string>& table, const std::vector<std::string>& named) {
  if (named.empty() || SameColumns(table, named)) return Status::OK();
  auto quoted = [](const std::vector<std::string>& names) {
    std::vector<std::string> out;
    for (const std::string& name : names) out.push_back("`" + name + "`");
    return fmt::format("[{}]", fmt::join(out, ", "));
  };
  return Status::Error(errors::kDeltaMetadataMismatch,
                       fmt::format("partition columns do not match the partition columns of the table: given {}, "
                                   "table {}; to change the partitioning, overwrite the table with the option "
                                   "overwriteSchema",
                                   quoted(named), quoted(table)));
}

struct TableWriter::State {
  std::shared_ptr<FileSystem> fs;      // Start only: for the retry when another writer creates the table
  std::string table_path;
  std::unique_ptr<Transaction> owned;  // Start only
  Transaction* txn = nullptr;
  TypePtr incoming;
  WriteOptions options;
  bool skipped = false;
  int64_t now = 0;
  TypePtr table_schema;
  Metadata metadata;
  std::unique_ptr<DataFileWriter> files;
  int64_t num_rows = 0;
  Status error;
  bool committed = false;

  // Whether the table already records every one of options.transactions (none: false).
  bool AllTransactionsRecorded() const {
    if (options.transactions.empty() || txn->read_snapshot() == nullptr) return false;
    for (const SetTransaction& app : options.transactions) {
      std::optional<int64_t> recorded = txn->TransactionVersion(app.app_id);
      if (!recorded || *recorded < app.version) return false;
    }
    return true;
  }

  // Whether an overwrite_schema overwrite changes the table's metadata: a schema other than the
  // data's, or other partition columns than the write names. (An unchanged table, as each batch of
  // a complete-mode stream finds it, commits no metadata.)
  bool ReplacesSchemaOrPartitioning(const Snapshot& snapshot) const {
    return !SameColumns(snapshot.metadata().partition_columns, options.partition_columns) ||
           !WithoutColumnMapping(snapshot.schema())->Equals(*incoming);
  }

  // Decides, from the transaction's snapshot, whether the write is skipped and else the table
  // schema and metadata it writes under (and the removals of an overwrite).
  Status Prepare() {
    const SnapshotPtr& snapshot = txn->read_snapshot();
    for (const auto& [app_id, expected] : options.expected_transactions) {
      // Read through the transaction: a concurrent commit for the appId then conflicts.
      const std::optional<int64_t> recorded = txn->TransactionVersion(app_id);
      if (recorded != expected) {
        auto text = [](const std::optional<int64_t>& version) {
          return version ? std::to_string(*version) : std::string("none");
        };
        return Status::Error(errors::kDeltaConcurrentModification,
                             fmt::format("ConcurrentTransaction: version {} of the table records progress {} for "
                                         "application '{}', where this write expected {}",
                                         txn->read_version(), text(recorded), app_id, text(expected)));
      }
    }
    skipped = AllTransactionsRecorded();
    if (skipped) return Status::OK();
    now = NowMs();
    if (!snapshot) {
      metadata = Metadata{};
      metadata.id = NewUuid();
      metadata.name = options.table_name;
      metadata.schema_string = incoming->ToJson();
      SLUICE_ASSIGN_OR_RETURN(metadata.partition_columns, PartitionColumnsOf(*incoming, options.partition_columns));
      metadata.configuration = options.table_properties;
      metadata.created_time = now;
      SLUICE_ASSIGN_OR_RETURN(table_schema, txn->SetMetadata(metadata));
      metadata = *txn->effective_metadata();
    } else if (options.overwrite_schema && options.mode == WriteMode::kOverwrite &&
               ReplacesSchemaOrPartitioning(*snapshot)) {
      // The table's id, properties and protocol stay; its schema and partitioning become the data's.
      metadata = snapshot->metadata();
      metadata.schema_string = incoming->ToJson();
      SLUICE_ASSIGN_OR_RETURN(metadata.partition_columns, PartitionColumnsOf(*incoming, options.partition_columns));
      SLUICE_ASSIGN_OR_RETURN(table_schema, txn->SetMetadata(metadata));
      metadata = *txn->effective_metadata();
    } else {
      metadata = snapshot->metadata();
      table_schema = snapshot->schema();
      SLUICE_RETURN_IF_ERROR(CheckPartitionColumns(metadata.partition_columns, options.partition_columns));
      if (options.merge_schema) {
        auto enabled = metadata.configuration.find(std::string(kEnableTypeWidening));
        const bool widen = options.widen_types ||
                           (enabled != metadata.configuration.end() && enabled->second == "true");
        SLUICE_ASSIGN_OR_RETURN(TypePtr merged, MergeSchemas(table_schema, incoming, widen));
        if (!merged->Equals(*table_schema)) {
          metadata.schema_string = merged->ToJson();
          if (widen && RecordsTypeChanges(metadata.schema_string)) {
            metadata.configuration[std::string(kEnableTypeWidening)] = "true";
          }
          SLUICE_ASSIGN_OR_RETURN(table_schema, txn->SetMetadata(metadata));
          metadata = *txn->effective_metadata();
        }
      }
    }
    if (options.mode == WriteMode::kOverwrite && snapshot) {
      txn->ReadWholeTable();
      for (const AddFile& file : snapshot->files()) txn->Remove(RemovalOf(file, now));
    }
    return Status::OK();
  }

  Status Open() {
    SLUICE_RETURN_IF_ERROR(Prepare());
    if (skipped) return Status::OK();
    SLUICE_ASSIGN_OR_RETURN(files,
                            DataFileWriter::Open(*txn->file_system(), txn->table_path(), table_schema, metadata, now));
    return Status::OK();
  }

  Status Write(const BatchPtr& batch) {
    if (!batch->schema()->Equals(*incoming)) {
      return Status::Error(errors::kInvalidArgument, "the batches of one write must share one schema");
    }
    if (skipped) return Status::OK();
    SLUICE_ASSIGN_OR_RETURN(BatchPtr arranged, ConformToSchema(batch, table_schema));
    num_rows += arranged->num_rows();
    return files->Write(arranged);
  }

  Result<int64_t> CommitFiles(std::vector<AddFile> adds) {
    int64_t bytes = 0;
    const size_t num_files = adds.size();
    for (AddFile& add : adds) {
      bytes += add.size;
      txn->Add(std::move(add));
    }
    for (const SetTransaction& app : options.transactions) txn->SetTransactionVersion(app.app_id, app.version);
    StringMap parameters = options.operation_parameters;
    parameters.emplace("mode", options.mode == WriteMode::kAppend ? "Append" : "Overwrite");
    parameters.emplace("partitionBy", PartitionByParameter(metadata.partition_columns));
    if (options.overwrite_schema && options.mode == WriteMode::kOverwrite) parameters.emplace("canOverwriteSchema", "true");
    StringMap metrics = {{"numFiles", std::to_string(num_files)},
                         {"numOutputRows", std::to_string(num_rows)},
                         {"numOutputBytes", std::to_string(bytes)}};
    return txn->Commit(options.operation, std::move(parameters), std::move(metrics));
  }

  Result<WriteResult> Commit(std::vector<SetTransaction> more_transactions) {
    if (!skipped && !more_transactions.empty()) {
      options.transactions.insert(options.transactions.end(), more_transactions.begin(), more_transactions.end());
      skipped = AllTransactionsRecorded();
    }
    if (skipped) return WriteResult{txn->read_version(), true, 0, 0};
    SLUICE_ASSIGN_OR_RETURN(std::vector<AddFile> adds, files->Finish());
    const int64_t num_files = static_cast<int64_t>(adds.size());
    Result<int64_t> version = CommitFiles(adds);
    if (!version.ok() && version.status().error_class() == errors::kDeltaTableAlreadyExists && owned) {
      // Another writer created the table first: the files go into its table, as a later writer's
      // would, when they fit it.
      const TypePtr written_schema = table_schema;
      const std::vector<std::string> written_partitions = metadata.partition_columns;
      SLUICE_ASSIGN_OR_RETURN(owned, Transaction::Start(fs, table_path));
      txn = owned.get();
      SLUICE_RETURN_IF_ERROR(Prepare());
      if (skipped) return WriteResult{txn->read_version(), true, 0, 0};
      if (!table_schema->Equals(*written_schema) || metadata.partition_columns != written_partitions) {
        return version.status().WithContext("the table another writer created has another schema or partitioning");
      }
      version = CommitFiles(std::move(adds));
    }
    SLUICE_RETURN_IF_ERROR(version.status());
    return WriteResult{*version, false, num_files, num_rows};
  }
};

TableWriter::TableWriter(std::unique_ptr<State> state) : state_(std::move(state)) {}
TableWriter::~TableWriter() = default;

Result<std::unique_ptr<TableWriter>> TableWriter::Start(std::shared_ptr<FileSystem> fs, std::string table_path,
                                                        TypePtr schema, WriteOptions options) {
  auto state = std::make_unique<State>();
  SLUICE_ASSIGN_OR_RETURN(state->owned, Transaction::Start(fs, table_path));
  state->fs = std::move(fs);
  state->table_path = std::move(table_path);
  state->txn = state->owned.get();
  state->incoming = std::move(schema);
  state->options = std::move(options);
  SLUICE_RETURN_IF_ERROR(state->Open());
  return std::unique_ptr<TableWriter>(new TableWriter(std::move(state)));
}

Result<std::unique_ptr<TableWriter>> TableWriter::StartInTransaction(Transaction& transaction, TypePtr schema,
                                                                     WriteOptions options) {
  auto state = std::make_unique<State>();
  state->txn = &transaction;
  state->incoming = std::move(schema);
  state->options = std::move(options);
  SLUICE_RETURN_IF_ERROR(state->Open());
  return std::unique_ptr<TableWriter>(new TableWriter(std::move(state)));
}

Status TableWriter::Write(const BatchPtr& batch) {
  SLUICE_RETURN_IF_ERROR(state_->error);
  if (state_->committed) return Status::Error(errors::kInvalidArgument, "the table write is already committed");
  Status written = state_->Write(batch);
  if (!written.ok()) state_->error = written;
  return written;
}

Result<WriteResult> TableWriter::Commit(std::vector<SetTransaction> more_transactions) {
  SLUICE_RETURN_IF_ERROR(state_->error);
  if (state_->committed) return Status::Error(errors::kInvalidArgument, "the table write is already committed");
  state_->committed = true;
  Result<WriteResult> result = state_->Commit(std::move(more_transactions));
  if (!result.ok()) state_->error = result.status();
  return result;
}

Result<WriteResult> WriteInTransaction(Transaction& transaction, const std::vector<BatchPtr>& batches,
                                       const WriteOptions& options) {
  if (batches.empty()) {
    return Status::Error(errors::kInvalidArgument, "a write needs at least one batch (possibly empty) for its schema");
  }
  const TypePtr& incoming = batches[0]->schema();
  for (const BatchPtr& batch : batches) {
    if (!batch->schema()->Equals(*incoming)) {
      return Status::Error(errors::kInvalidArgument, "the batches of one write must share one schema");
    }
  }
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<TableWriter> writer,
                          TableWriter::StartInTransaction(transaction, incoming, options));
  for (const BatchPtr& batch : batches) SLUICE_RETURN_IF_ERROR(writer->Write(batch));
  return writer->Commit();
}

Result<int64_t> TruncateTable(std::shared_ptr<FileSystem> fs, const std::string& table_path) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Transaction> txn, Transaction::Start(fs, table_path));
  if (!txn->read_snapshot()) {
    return Status::Error(errors::kDeltaTableNotFound, fmt::format("no Delta table at '{}' to truncate", table_path));
  }
  txn->ReadWholeTable();
  int64_t now = NowMs();
  for (const AddFile& file : txn->read_snapshot()->files()) txn->Remove(RemovalOf(file, now));
  return txn->Commit(kOperationTruncate, {});
}

}  // namespace sluice::delta
