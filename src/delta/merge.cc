#include "sluice/delta/merge.h"

#include <algorithm>
#include <utility>
#include <unordered_set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "delta/column_mapping.h"
#include "delta/file_pruning.h"
#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "sluice/delta/scan.h"
#include "sluice/delta/table_writer.h"

namespace sluice::delta {
namespace {

// The field indexes `path` names in `schema`: a top-level column, or a field of a struct column
// (`value.transaction_id`), each part matched ignoring case. `names`, when given, receives the
// parts as the schema spells them.
Result<std::vector<int>> KeyIndexes(const TypePtr& schema, const std::string& path,
                                    std::vector<std::string>* names = nullptr) {
  std::vector<std::string> parts = SplitFieldPath(path);
  std::vector<int> indexes;
  TypePtr type = schema;
  for (size_t depth = 0; depth < parts.size(); ++depth) {
    if (type->id() != TypeId::kStruct) {
      return Status::Error(errors::kUnresolvedColumn, fmt::format("key column '{}': {} is not a struct", path,
                                                                  fmt::join(parts.begin(), parts.begin() + depth, ".")));
    }
    int index = type->FieldIndexIgnoreCase(parts[depth]);
    if (index < 0) return Status::Error(errors::kUnresolvedColumn, fmt::format("key column '{}' is not in the data", path));
    if (names) names->push_back(type->field(index).name);
    indexes.push_back(index);
    type = type->field(index).type;
  }
  return indexes;
}

// The column `path` names in `batch` (as KeyIndexes).
Result<const Column*> KeyColumn(const RecordBatch& batch, const std::string& path,
                                std::vector<std::string>* names = nullptr) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<int> indexes, KeyIndexes(batch.schema(), path, names));
  const Column* column = batch.column(indexes[0]).get();
  for (size_t depth = 1; depth < indexes.size(); ++depth) column = column->children[indexes[depth]].get();
  return column;
}

// The key of one row as text: its key columns' values, with a separator no formatted value
// holds unescaped and a marker for null.
std::string RowKey(const std::vector<const Column*>& keys, int64_t row) {
  std::string key;
  for (const Column* column : keys) {
    if (column->IsNull(row)) {
      key += "\x1e";
    } else {
      key += FormatValue(*column, row);
    }
    key.push_back('\x1f');
  }
  return key;
}

}  // namespace

namespace {

// The merge of the batches `next` yields (all of `schema`). `prune_by`, when the key is one
// column, is that column of the only batch: files whose statistics rule its keys out are not read.
Result<WriteResult> Merge(std::shared_ptr<FileSystem> fs, const std::string& table_path, const TypePtr& schema,
                          const BatchSource& next, const MergeOptions& options, const Column* prune_by) {
  if (options.key_columns.empty()) return Status::Error(errors::kInvalidArgument, "an insert-only merge needs key columns");
  std::vector<std::string> scanned;  // the top-level columns the keys are in, for the table scan
  for (const std::string& path : options.key_columns) {
    std::vector<std::string> names;
    SLUICE_RETURN_IF_ERROR(KeyIndexes(schema, path, &names).status());
    if (std::find(scanned.begin(), scanned.end(), names[0]) == scanned.end()) scanned.push_back(names[0]);
  }
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Transaction> txn, Transaction::Start(fs, table_path));
  WriteOptions write{.partition_columns = options.partition_columns, .transactions = options.transactions,
                     .operation = std::string(kOperationMerge)};
  write.operation_parameters = {{"predicate", fmt::format("[\"insert when not matched on {}\"]",
                                                          fmt::join(options.key_columns, ", "))}};

  // The keys already in the table: the one part of the merge held in memory whole.
  std::unordered_set<std::string> existing;
  if (const SnapshotPtr& snapshot = txn->read_snapshot()) {
    // (A replay of recorded transactions is recognized by the writer, which writes nothing.)
    txn->ReadWholeTable();
    std::vector<AddFile> candidates;
    std::optional<KeyValues> values;
    std::vector<std::string> key_names;  // the one key's path in the table's statistics
    if (prune_by != nullptr && options.key_columns.size() == 1) {
      values = KeyValues::Of(*prune_by);
      if (!KeyIndexes(snapshot->schema(), options.key_columns[0], &key_names).ok()) key_names.clear();
      key_names = PhysicalPath(snapshot->schema(), key_names).value_or(std::vector<std::string>{});
    }
    for (const AddFile& file : snapshot->files()) {
      if (!values || key_names.empty() || values->MayBeIn(file, key_names)) candidates.push_back(file);
    }
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<TableScan> scan,
                            TableScan::Open(snapshot, {.columns = scanned, .files = std::move(candidates)}));
    while (true) {
      SLUICE_ASSIGN_OR_RETURN(BatchPtr keys, scan->Next());
      if (keys == nullptr) break;
      std::vector<const Column*> columns;
      for (const std::string& path : options.key_columns) {
        SLUICE_ASSIGN_OR_RETURN(const Column* column, KeyColumn(*keys, path));
        columns.push_back(column);
      }
      for (int64_t row = 0; row < keys->num_rows(); ++row) existing.insert(RowKey(columns, row));
    }
  }

  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<TableWriter> writer, TableWriter::StartInTransaction(*txn, schema, write));
  while (true) {
    SLUICE_ASSIGN_OR_RETURN(BatchPtr batch, next());
    if (batch == nullptr) break;
    std::vector<const Column*> batch_keys;
    for (const std::string& path : options.key_columns) {
      SLUICE_ASSIGN_OR_RETURN(const Column* column, KeyColumn(*batch, path));
      batch_keys.push_back(column);
    }
    std::vector<int64_t> new_rows;
    for (int64_t row = 0; row < batch->num_rows(); ++row) {
      if (existing.insert(RowKey(batch_keys, row)).second) new_rows.push_back(row);
    }
    if (!new_rows.empty()) SLUICE_RETURN_IF_ERROR(writer->Write(Take(batch, new_rows)));
  }
  return writer->Commit();
}

}  // namespace

Result<WriteResult> InsertNewRows(std::shared_ptr<FileSystem> fs, const std::string& table_path, const BatchPtr& batch,
                                  const MergeOptions& options) {
  const Column* prune_by = nullptr;
  if (options.key_columns.size() == 1) {
    SLUICE_ASSIGN_OR_RETURN(prune_by, KeyColumn(*batch, options.key_columns[0]));
  }
  bool given = false;
  auto once = [&]() -> Result<BatchPtr> { return std::exchange(given, true) ? nullptr : batch; };
  return Merge(std::move(fs), table_path, batch->schema(), once, options, prune_by);
}

Result<WriteResult> InsertNewRowsFrom(std::shared_ptr<FileSystem> fs, const std::string& table_path,
                                      const TypePtr& schema, const BatchSource& next, const MergeOptions& options) {
  return Merge(std::move(fs), table_path, schema, next, options, nullptr);
}

}  // namespace sluice::delta
