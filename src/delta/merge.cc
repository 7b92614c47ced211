#include "sluice/delta/merge.h"

#include <unordered_set>

#include <fmt/format.h>
#include <simdjson.h>

#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "sluice/delta/scan.h"

namespace sluice::delta {
namespace {

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

// The range of a one-column key in the batch and in a file's statistics, compared as the
// statistics JSON writes them: integers as numbers, strings, dates and timestamps as text.
struct KeyRange {
  bool numeric = false;
  int64_t min_number = 0, max_number = 0;
  std::string min_text, max_text;
};

std::optional<KeyRange> BatchKeyRange(const Column& column) {
  KeyRange range;
  bool any = false;
  TypeId id = column.type->id();
  range.numeric = column.type->is_integral();
  if (!range.numeric && id != TypeId::kString) return std::nullopt;
  for (int64_t row = 0; row < column.length; ++row) {
    if (column.IsNull(row)) continue;
    if (range.numeric) {
      int64_t v = 0;
      switch (id) {
        case TypeId::kByte: v = column.Value<int8_t>(row); break;
        case TypeId::kShort: v = column.Value<int16_t>(row); break;
        case TypeId::kInteger: v = column.Value<int32_t>(row); break;
        default: v = column.Value<int64_t>(row); break;
      }
      range.min_number = any ? std::min(range.min_number, v) : v;
      range.max_number = any ? std::max(range.max_number, v) : v;
    } else {
      std::string_view v = column.View(row);
      if (!any || v < range.min_text) range.min_text = v;
      if (!any || v > range.max_text) range.max_text = v;
    }
    any = true;
  }
  if (!any) return std::nullopt;
  return range;
}

// Whether a file may hold a key in `range`, judging by its statistics (true when they do not
// say: missing stats, missing bounds, or a file with nulls only in the key).
bool MayHoldKeys(const AddFile& file, const std::string& key, const KeyRange& range) {
  if (!file.stats) return true;
  simdjson::dom::parser parser;
  simdjson::dom::element stats;
  if (parser.parse(*file.stats).get(stats) != simdjson::SUCCESS) return true;
  simdjson::dom::element min, max;
  if (stats.at_pointer("/minValues/" + key).get(min) != simdjson::SUCCESS ||
      stats.at_pointer("/maxValues/" + key).get(max) != simdjson::SUCCESS) {
    return true;
  }
  if (range.numeric) {
    int64_t file_min = 0, file_max = 0;
    if (min.get_int64().get(file_min) != simdjson::SUCCESS || max.get_int64().get(file_max) != simdjson::SUCCESS) {
      return true;
    }
    return !(file_max < range.min_number || file_min > range.max_number);
  }
  std::string_view file_min, file_max;
  if (min.get_string().get(file_min) != simdjson::SUCCESS || max.get_string().get(file_max) != simdjson::SUCCESS) {
    return true;
  }
  return !(file_max < range.min_text || file_min > range.max_text);
}

}  // namespace

Result<WriteResult> InsertNewRows(std::shared_ptr<FileSystem> fs, const std::string& table_path, const BatchPtr& batch,
                                  const MergeOptions& options) {
  if (options.key_columns.empty()) return Status::Error(errors::kInvalidArgument, "an insert-only merge needs key columns");
  std::vector<const Column*> batch_keys;
  for (const std::string& name : options.key_columns) {
    int index = batch->schema()->FieldIndexIgnoreCase(name);
    if (index < 0) return Status::Error(errors::kUnresolvedColumn, fmt::format("key column '{}' is not in the data", name));
    batch_keys.push_back(batch->column(index).get());
  }
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Transaction> txn, Transaction::Start(fs, table_path));
  WriteOptions write{.partition_columns = options.partition_columns, .transactions = options.transactions,
                     .operation = std::string(kOperationMerge)};
  write.operation_parameters = {{"predicate", fmt::format("[\"insert when not matched on {}\"]",
                                                          fmt::join(options.key_columns, ", "))}};

  std::unordered_set<std::string> existing;
  if (const SnapshotPtr& snapshot = txn->read_snapshot()) {
    // (A replay of recorded transactions is recognized by WriteInTransaction, which writes nothing.)
    txn->ReadWholeTable();
    std::vector<AddFile> candidates;
    std::optional<KeyRange> range;
    std::string key_name;
    if (batch_keys.size() == 1) {
      range = BatchKeyRange(*batch_keys[0]);
      int index = snapshot->schema()->FieldIndexIgnoreCase(options.key_columns[0]);
      if (index >= 0) key_name = snapshot->schema()->field(index).name;
    }
    for (const AddFile& file : snapshot->files()) {
      if (!range || key_name.empty() || MayHoldKeys(file, key_name, *range)) candidates.push_back(file);
    }
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<TableScan> scan,
                            TableScan::Open(snapshot, {.columns = options.key_columns, .files = std::move(candidates)}));
    while (true) {
      SLUICE_ASSIGN_OR_RETURN(BatchPtr keys, scan->Next());
      if (keys == nullptr) break;
      std::vector<const Column*> columns;
      for (const ColumnPtr& column : keys->columns()) columns.push_back(column.get());
      for (int64_t row = 0; row < keys->num_rows(); ++row) existing.insert(RowKey(columns, row));
    }
  }

  std::vector<int64_t> new_rows;
  for (int64_t row = 0; row < batch->num_rows(); ++row) {
    if (existing.insert(RowKey(batch_keys, row)).second) new_rows.push_back(row);
  }
  return WriteInTransaction(*txn, {Take(batch, new_rows)}, write);
}

}  // namespace sluice::delta
