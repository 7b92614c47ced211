// History tables of the change feed: source columns plus _pg_change_type, _pg_lsn, _pg_xid,
// _timestamp and _sort_by, appended to Delta with the feed's txn actions.
#include <chrono>

#include <fmt/format.h>

#include "pg_change_feed_internal.h"
#include "sluice/core/error_classes.h"
#include "sluice/delta/transaction.h"
#include "sluice/delta/writer.h"

namespace sluice::connectors::cdf {

namespace {

constexpr int kMetadataColumns = 5;

std::string SortByAppId(const std::string& app_id) { return app_id + "/sort_by"; }

}  // namespace

HistoryTable::HistoryTable(std::shared_ptr<FileSystem> fs, std::string path, std::string app_id)
    : fs_(std::move(fs)), path_(std::move(path)), app_id_(std::move(app_id)) {}

void HistoryTable::SetColumns(const std::vector<SourceColumn>& columns) {
  columns_ = columns;
  BuildSchema();
}

void HistoryTable::BuildSchema() {
  std::vector<Field> fields;
  mappings_.clear();
  for (const SourceColumn& column : columns_) {
    PgColumnMapping mapping = MapPgType(column.type_oid, column.type_modifier);
    // A history table written before arrays became Delta arrays keeps its string column.
    if (mapping.text_kind == PgTextKind::kArray && table_schema_ != nullptr) {
      const int index = table_schema_->FieldIndex(column.name);
      if (index >= 0 && table_schema_->field(index).type->id() == TypeId::kString) {
        mapping = {DataType::String(), PgTextKind::kText};
      }
    }
    fields.push_back(Field{column.name, mapping.type, true});
    mappings_.push_back(std::move(mapping));
  }
  fields.push_back(Field{"_pg_change_type", DataType::String(), false});
  fields.push_back(Field{"_pg_lsn", DataType::Long(), false});
  fields.push_back(Field{"_pg_xid", DataType::Integer(), true});
  fields.push_back(Field{"_timestamp", DataType::TimestampNtz(), false});
  fields.push_back(Field{"_sort_by", DataType::Long(), false});
  // Source column names are unique within a table and never start with `_pg_`/`_sort_by` in
  // practice; a clash makes the schema invalid, which the first write reports.
  auto schema = DataType::Struct(std::move(fields));
  schema_ = schema.ok() ? *schema : nullptr;
  builders_.clear();
  if (schema_ == nullptr) return;
  for (const Field& field : schema_->fields()) builders_.push_back(ColumnBuilder::Make(field.type));
  buffered_rows_ = 0;
}

Status HistoryTable::LoadVersions() {
  auto snapshot = delta::Snapshot::Load(fs_, path_);
  if (!snapshot.ok()) {
    if (snapshot.status().error_class() == errors::kDeltaTableNotFound) return Status::OK();
    return snapshot.status();
  }
  table_schema_ = (*snapshot)->schema();
  if (buffered_rows_ == 0) BuildSchema();
  lsn_version_ = static_cast<Lsn>((*snapshot)->TransactionVersion(app_id_).value_or(0));
  sort_by_version_ = (*snapshot)->TransactionVersion(SortByAppId(app_id_)).value_or(0);
  return Status::OK();
}

void HistoryTable::Append(std::string_view change_type, const std::vector<TupleValue>& tuple,
                          const std::vector<TupleValue>* toast_source, Lsn lsn, std::optional<uint32_t> xid,
                          int64_t now_micros, int64_t sort_by) {
  if (schema_ == nullptr) {
    // Counted, so that the next flush reports the unusable schema.
    ++buffered_rows_;
    return;
  }
  const size_t source_columns = mappings_.size();
  for (size_t i = 0; i < source_columns; ++i) {
    ColumnBuilder* builder = builders_[i].get();
    const TupleValue* value = i < tuple.size() ? &tuple[i] : nullptr;
    if (value != nullptr && value->kind == TupleValue::Kind::kUnchangedToast) {
      value = toast_source != nullptr && i < toast_source->size() ? &(*toast_source)[i] : nullptr;
    }
    if (value == nullptr || value->kind != TupleValue::Kind::kText) {
      builder->AppendNull();
      continue;
    }
    if (!AppendPgText(mappings_[i], value->data, builder).ok()) {
      builder->AppendNull();
      ++malformed_values_;
    }
  }
  static_cast<BinaryBuilder*>(builders_[source_columns].get())->Append(change_type);
  static_cast<Int64Builder*>(builders_[source_columns + 1].get())->Append(static_cast<int64_t>(lsn));
  auto* xid_builder = static_cast<Int32Builder*>(builders_[source_columns + 2].get());
  if (xid) {
    xid_builder->Append(static_cast<int32_t>(*xid));
  } else {
    xid_builder->AppendNull();
  }
  static_cast<Int64Builder*>(builders_[source_columns + 3].get())->Append(now_micros);
  static_cast<Int64Builder*>(builders_[source_columns + 4].get())->Append(sort_by);
  last_sort_by_ = sort_by;
  ++buffered_rows_;
}

Result<BatchPtr> HistoryTable::TakeBatch() {
  if (schema_ == nullptr) {
    return Status::Error(errors::kInvalidSchema,
                         fmt::format("the history table {} cannot hold its source's columns (a column name is "
                                     "used twice or clashes with a _pg_ column)",
                                     path_));
  }
  std::vector<ColumnPtr> columns;
  for (auto& builder : builders_) columns.push_back(builder->Finish());
  int64_t rows = buffered_rows_;
  buffered_rows_ = 0;
  return RecordBatch::Make(schema_, std::move(columns), rows);
}

Result<int64_t> HistoryTable::Flush() {
  if (buffered_rows_ == 0) return 0;
  SLUICE_ASSIGN_OR_RETURN(BatchPtr batch, TakeBatch());
  Lsn lsn = std::max(lsn_version_, complete_lsn_);
  delta::WriteOptions options;
  options.operation = std::string(delta::kOperationStreamingUpdate);
  options.transactions = {{app_id_, static_cast<int64_t>(lsn), std::nullopt},
                          {SortByAppId(app_id_), last_sort_by_, std::nullopt}};
  SLUICE_ASSIGN_OR_RETURN(delta::WriteResult result, delta::WriteTable(fs_, path_, {batch}, options));
  lsn_version_ = lsn;
  sort_by_version_ = last_sort_by_;
  return result.num_rows;
}

Status HistoryTable::Reset(int64_t sort_by_version) {
  if (schema_ == nullptr) return TakeBatch().status();
  builders_.clear();
  for (const Field& field : schema_->fields()) builders_.push_back(ColumnBuilder::Make(field.type));
  buffered_rows_ = 0;
  sort_by_version_ = sort_by_version;
  last_sort_by_ = sort_by_version;
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<delta::Transaction> txn, delta::Transaction::Start(fs_, path_));
  if (txn->read_snapshot() == nullptr) return Status::OK();
  delta::Metadata metadata = txn->read_snapshot()->metadata();
  metadata.schema_string = schema_->ToJson();
  SLUICE_RETURN_IF_ERROR(txn->SetMetadata(std::move(metadata)).status());
  txn->ReadWholeTable();
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  for (const delta::AddFile& file : txn->read_snapshot()->files()) {
    delta::RemoveFile remove;
    remove.path = file.path;
    remove.deletion_timestamp = now_ms;
    remove.data_change = true;
    remove.extended_file_metadata = true;
    remove.partition_values = file.partition_values;
    remove.size = file.size;
    txn->Remove(std::move(remove));
  }
  txn->SetTransactionVersion(app_id_, static_cast<int64_t>(lsn_version_));
  txn->SetTransactionVersion(SortByAppId(app_id_), sort_by_version);
  return txn->Commit(delta::kOperationWrite, {{"mode", "Overwrite"}, {"reason", "re-snapshot"}}).status();
}

Status HistoryTable::FinishSnapshot(Lsn lsn) {
  complete_lsn_ = lsn;
  if (buffered_rows_ > 0) return Flush().status();
  if (schema_ == nullptr) return TakeBatch().status();
  delta::WriteOptions options;
  options.transactions = {{app_id_, static_cast<int64_t>(lsn), std::nullopt},
                          {SortByAppId(app_id_), last_sort_by_, std::nullopt}};
  SLUICE_RETURN_IF_ERROR(delta::WriteTable(fs_, path_, {RecordBatch::Empty(schema_)}, options).status());
  lsn_version_ = lsn;
  return Status::OK();
}

}  // namespace sluice::connectors::cdf
