// Writing checkpoints: every live action of a snapshot becomes one row of the checkpoint file,
// with the column of its kind set and every other column null.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <type_traits>

#include <fmt/format.h>

#include "delta/uuid.h"
#include "sluice/core/builder.h"
#include "sluice/core/error_classes.h"
#include "sluice/delta/checkpoint.h"
#include "sluice/parquet/writer.h"

namespace sluice::delta {
namespace {

constexpr std::string_view kCheckpointSchema =
    "struct<"
    "txn:struct<appId:string,version:bigint,lastUpdated:bigint>,"
    "add:struct<path:string,partitionValues:map<string,string>,size:bigint,modificationTime:bigint,"
    "dataChange:boolean,stats:string,tags:map<string,string>,"
    "deletionVector:struct<storageType:string,pathOrInlineDv:string,offset:int,sizeInBytes:int,cardinality:bigint>,"
    "baseRowId:bigint,defaultRowCommitVersion:bigint>,"
    "remove:struct<path:string,deletionTimestamp:bigint,dataChange:boolean,extendedFileMetadata:boolean,"
    "partitionValues:map<string,string>,size:bigint,"
    "deletionVector:struct<storageType:string,pathOrInlineDv:string,offset:int,sizeInBytes:int,cardinality:bigint>,"
    "baseRowId:bigint,defaultRowCommitVersion:bigint>,"
    "metaData:struct<id:string,name:string,description:string,"
    "format:struct<provider:string,options:map<string,string>>,schemaString:string,"
    "partitionColumns:array<string>,configuration:map<string,string>,createdTime:bigint>,"
    "protocol:struct<minReaderVersion:int,minWriterVersion:int,readerFeatures:array<string>,"
    "writerFeatures:array<string>>,"
    "domainMetadata:struct<domain:string,configuration:string,removed:boolean>"
    ">";

// Column order of kCheckpointSchema.
enum CheckpointColumn { kTxn, kAdd, kRemove, kMetaData, kProtocol, kDomainMetadata, kColumnCount };

void PutString(ColumnBuilder* builder, const std::optional<std::string>& value) {
  auto* strings = static_cast<BinaryBuilder*>(builder);
  if (value) {
    strings->Append(*value);
  } else {
    strings->AppendNull();
  }
}

template <typename T, typename V>
void PutFixed(ColumnBuilder* builder, const std::optional<V>& value) {
  auto* fixed = static_cast<FixedWidthBuilder<T>*>(builder);
  if (value) {
    fixed->Append(static_cast<T>(*value));
  } else {
    fixed->AppendNull();
  }
}

void PutStringMap(ColumnBuilder* builder, const StringMap* map) {
  auto* list = static_cast<ListBuilder*>(builder);
  if (map == nullptr) {
    list->AppendNull();
    return;
  }
  for (const auto& [key, value] : *map) {
    static_cast<BinaryBuilder*>(list->key_builder())->Append(key);
    static_cast<BinaryBuilder*>(list->value_builder())->Append(value);
  }
  list->Append();
}

void PutPartitionValues(ColumnBuilder* builder, const PartitionValues* values) {
  auto* list = static_cast<ListBuilder*>(builder);
  if (values == nullptr) {
    list->AppendNull();
    return;
  }
  for (const auto& [key, value] : *values) {
    static_cast<BinaryBuilder*>(list->key_builder())->Append(key);
    PutString(list->value_builder(), value);
  }
  list->Append();
}

void PutStringArray(ColumnBuilder* builder, const std::optional<std::vector<std::string>>& values) {
  auto* list = static_cast<ListBuilder*>(builder);
  if (!values) {
    list->AppendNull();
    return;
  }
  for (const std::string& value : *values) static_cast<BinaryBuilder*>(list->element_builder())->Append(value);
  list->Append();
}

void PutDeletionVector(ColumnBuilder* builder, const std::optional<DeletionVectorDescriptor>& dv) {
  auto* record = static_cast<StructBuilder*>(builder);
  if (!dv) {
    record->AppendNull();
    return;
  }
  PutString(record->field_builder(0), dv->storage_type);
  PutString(record->field_builder(1), dv->path_or_inline_dv);
  PutFixed<int32_t>(record->field_builder(2), dv->offset);
  PutFixed<int32_t>(record->field_builder(3), std::optional<int32_t>(dv->size_in_bytes));
  PutFixed<int64_t>(record->field_builder(4), std::optional<int64_t>(dv->cardinality));
  record->Append();
}

// Builds the checkpoint rows; each Put* appends one row to every column.
class CheckpointRows {
 public:
  explicit CheckpointRows(const TypePtr& schema) {
    for (const Field& field : schema->fields()) {
      columns_.push_back(std::unique_ptr<StructBuilder>(static_cast<StructBuilder*>(ColumnBuilder::Make(field.type).release())));
    }
  }

  void Put(const SetTransaction& txn) {
    StructBuilder* b = Begin(kTxn);
    PutString(b->field_builder(0), txn.app_id);
    PutFixed<int64_t>(b->field_builder(1), std::optional<int64_t>(txn.version));
    PutFixed<int64_t>(b->field_builder(2), txn.last_updated);
    b->Append();
  }

  void Put(const AddFile& add) {
    StructBuilder* b = Begin(kAdd);
    PutString(b->field_builder(0), add.path);
    PutPartitionValues(b->field_builder(1), &add.partition_values);
    PutFixed<int64_t>(b->field_builder(2), std::optional<int64_t>(add.size));
    PutFixed<int64_t>(b->field_builder(3), std::optional<int64_t>(add.modification_time));
    PutFixed<uint8_t>(b->field_builder(4), std::optional<bool>(add.data_change));
    PutString(b->field_builder(5), add.stats);
    PutStringMap(b->field_builder(6), add.tags ? &*add.tags : nullptr);
    PutDeletionVector(b->field_builder(7), add.deletion_vector);
    PutFixed<int64_t>(b->field_builder(8), add.base_row_id);
    PutFixed<int64_t>(b->field_builder(9), add.default_row_commit_version);
    b->Append();
    ++num_adds_;
  }

  void Put(const RemoveFile& remove) {
    StructBuilder* b = Begin(kRemove);
    PutString(b->field_builder(0), remove.path);
    PutFixed<int64_t>(b->field_builder(1), remove.deletion_timestamp);
    PutFixed<uint8_t>(b->field_builder(2), std::optional<bool>(remove.data_change));
    PutFixed<uint8_t>(b->field_builder(3), remove.extended_file_metadata);
    PutPartitionValues(b->field_builder(4), remove.partition_values ? &*remove.partition_values : nullptr);
    PutFixed<int64_t>(b->field_builder(5), remove.size);
    PutDeletionVector(b->field_builder(6), remove.deletion_vector);
    PutFixed<int64_t>(b->field_builder(7), remove.base_row_id);
    PutFixed<int64_t>(b->field_builder(8), remove.default_row_commit_version);
    b->Append();
  }

  void Put(const Metadata& metadata) {
    StructBuilder* b = Begin(kMetaData);
    PutString(b->field_builder(0), metadata.id);
    PutString(b->field_builder(1), metadata.name);
    PutString(b->field_builder(2), metadata.description);
    auto* format = static_cast<StructBuilder*>(b->field_builder(3));
    PutString(format->field_builder(0), metadata.format.provider);
    PutStringMap(format->field_builder(1), &metadata.format.options);
    format->Append();
    PutString(b->field_builder(4), metadata.schema_string);
    PutStringArray(b->field_builder(5), metadata.partition_columns);
    PutStringMap(b->field_builder(6), &metadata.configuration);
    PutFixed<int64_t>(b->field_builder(7), metadata.created_time);
    b->Append();
  }

  void Put(const Protocol& protocol) {
    StructBuilder* b = Begin(kProtocol);
    PutFixed<int32_t>(b->field_builder(0), std::optional<int32_t>(protocol.min_reader_version));
    PutFixed<int32_t>(b->field_builder(1), std::optional<int32_t>(protocol.min_writer_version));
    PutStringArray(b->field_builder(2), protocol.reader_features);
    PutStringArray(b->field_builder(3), protocol.writer_features);
    b->Append();
  }

  void Put(const DomainMetadata& domain) {
    StructBuilder* b = Begin(kDomainMetadata);
    PutString(b->field_builder(0), domain.domain);
    PutString(b->field_builder(1), domain.configuration);
    PutFixed<uint8_t>(b->field_builder(2), std::optional<bool>(domain.removed));
    b->Append();
  }

  int64_t num_rows() const { return num_rows_; }
  int64_t num_adds() const { return num_adds_; }

  Result<BatchPtr> Finish(const TypePtr& schema) {
    std::vector<ColumnPtr> columns;
    for (auto& column : columns_) columns.push_back(column->Finish());
    return RecordBatch::Make(schema, std::move(columns), num_rows_);
  }

 private:
  // Appends null to every column but `kind`, whose builder is returned for the row's value.
  StructBuilder* Begin(CheckpointColumn kind) {
    for (int i = 0; i < kColumnCount; ++i) {
      if (i != kind) columns_[i]->AppendNull();
    }
    ++num_rows_;
    return columns_[kind].get();
  }

  std::vector<std::unique_ptr<StructBuilder>> columns_;
  int64_t num_rows_ = 0;
  int64_t num_adds_ = 0;
};

// Calls `put` with every action a checkpoint of the snapshot holds at `now_ms`: its protocol,
// metadata, txns, domains, live files and the tombstones younger than
// delta.deletedFileRetentionDuration.
template <typename Put>
Status PutCheckpointActions(const Snapshot& snapshot, int64_t now_ms, Put&& put) {
  SLUICE_ASSIGN_OR_RETURN(int64_t retention_ms,
                          ParseIntervalMs(snapshot.Property("delta.deletedFileRetentionDuration", "interval 1 week")));
  put(snapshot.protocol());
  put(snapshot.metadata());
  for (const auto& [app_id, txn] : snapshot.transactions()) put(txn);
  for (const auto& [name, domain] : snapshot.domains()) put(domain);
  for (const AddFile& add : snapshot.files()) put(add);
  for (const RemoveFile& remove : snapshot.tombstones()) {
    if (remove.deletion_timestamp.value_or(0) > now_ms - retention_ms) put(remove);
  }
  return Status::OK();
}

// Points `_last_checkpoint` at `pointer` unless it points at a checkpoint as new already.
Status UpdateLastCheckpoint(FileSystem& fs, const std::string& table_path, const LastCheckpoint& pointer) {
  std::string pointer_path = LastCheckpointPath(table_path);
  Result<std::string> current = fs.ReadFile(pointer_path);
  if (current.ok()) {
    Result<LastCheckpoint> existing = ParseLastCheckpoint(*current);
    if (existing.ok() && existing->version >= pointer.version) return Status::OK();
  } else if (current.status().error_class() != errors::kFileNotFound) {
    return current.status();
  }
  return fs.AtomicWrite(pointer_path, SerializeLastCheckpoint(pointer));
}

// A V2 checkpoint as one UUID-named JSON file (`%020d.checkpoint.<uuid>.json`, no sidecars): an
// action per line, the last one `checkpointMetadata`. A unique name, so writers never collide.
Status WriteV2Checkpoint(const Snapshot& snapshot, int64_t now_ms) {
  std::string text;
  int64_t actions = 0, adds = 0;
  SLUICE_RETURN_IF_ERROR(PutCheckpointActions(snapshot, now_ms, [&](const auto& action) {
    text += SerializeAction(Action(action));
    text.push_back('\n');
    ++actions;
    if constexpr (std::is_same_v<std::decay_t<decltype(action)>, AddFile>) ++adds;
  }));
  text += fmt::format("{{\"checkpointMetadata\":{{\"version\":{}}}}}\n", snapshot.version());
  ++actions;
  FileSystem& fs = *snapshot.file_system();
  const std::string path = fmt::format("{}/{:020d}.checkpoint.{}.json", LogDirectory(snapshot.table_path()),
                                       snapshot.version(), NewUuid());
  SLUICE_RETURN_IF_ERROR(fs.PutIfAbsent(path, text));
  return UpdateLastCheckpoint(fs, snapshot.table_path(),
                              {snapshot.version(), actions, std::nullopt, static_cast<int64_t>(text.size()), adds});
}

}  // namespace

const TypePtr& CheckpointSchema() {
  static const TypePtr schema = ParseTypeString(kCheckpointSchema).value();
  return schema;
}

Result<int64_t> ParseIntervalMs(std::string_view text) {
  auto invalid = [&] {
    return Status::Error(errors::kInvalidOptions,
                         fmt::format("'{}' is not an interval such as 'interval 7 days'", text));
  };
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  std::string_view rest = lower;
  if (!rest.starts_with("interval ")) return invalid();
  rest.remove_prefix(9);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  int64_t count = 0;
  auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), count);
  if (ec != std::errc() || count < 0) return invalid();
  std::string_view unit = rest.substr(static_cast<size_t>(end - rest.data()));
  while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  if (unit.ends_with('s')) unit.remove_suffix(1);
  static constexpr std::pair<std::string_view, int64_t> kUnits[] = {
      {"millisecond", 1}, {"second", 1000}, {"minute", 60'000}, {"hour", 3'600'000},
      {"day", 86'400'000}, {"week", 604'800'000},
  };
  for (const auto& [name, ms] : kUnits) {
    if (unit == name) {
      if (count > INT64_MAX / ms) return invalid();
      return count * ms;
    }
  }
  return invalid();
}

Status WriteCheckpoint(const Snapshot& snapshot, int64_t now_ms) {
  const auto& features = snapshot.protocol().writer_features;
  if (features && std::find(features->begin(), features->end(), "v2Checkpoint") != features->end()) {
    return WriteV2Checkpoint(snapshot, now_ms);
  }
  FileSystem& fs = *snapshot.file_system();
  std::string path = ClassicCheckpointPath(snapshot.table_path(), snapshot.version());
  const TypePtr& schema = CheckpointSchema();
  CheckpointRows rows(schema);
  SLUICE_RETURN_IF_ERROR(PutCheckpointActions(snapshot, now_ms, [&](const auto& action) { rows.Put(action); }));
  SLUICE_ASSIGN_OR_RETURN(BatchPtr batch, rows.Finish(schema));

  SLUICE_ASSIGN_OR_RETURN(bool exists, fs.Exists(path));
  int64_t size_in_bytes = 0;
  if (!exists) {
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, fs.OpenForWrite(path));
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<parquet::ParquetWriter> writer,
                            parquet::ParquetWriter::Open(std::move(file), schema));
    SLUICE_RETURN_IF_ERROR(writer->Write(*batch));
    SLUICE_ASSIGN_OR_RETURN(parquet::FileStats stats, writer->Close());
    size_in_bytes = stats.file_size;
  } else {
    SLUICE_ASSIGN_OR_RETURN(FileInfo info, fs.Stat(path));
    size_in_bytes = info.size;
  }

  return UpdateLastCheckpoint(fs, snapshot.table_path(),
                              {snapshot.version(), rows.num_rows(), std::nullopt, size_in_bytes, rows.num_adds()});
}

Result<int64_t> CleanUpExpiredLog(FileSystem& fs, const Snapshot& snapshot, int64_t now_ms) {
  SLUICE_ASSIGN_OR_RETURN(int64_t retention_ms,
                          ParseIntervalMs(snapshot.Property("delta.logRetentionDuration", "interval 30 days")));
  int64_t cutoff_ms = now_ms - retention_ms;
  SLUICE_ASSIGN_OR_RETURN(LogListing listing, ListLog(fs, snapshot.table_path()));
  // The oldest version to keep: the newest checkpoint before which every commit has expired.
  int64_t keep_from = -1;
  for (const auto& [version, files] : listing.checkpoints) {
    if (version > snapshot.version()) break;
    bool all_expired = true;
    for (size_t i = 0; i < listing.commit_versions.size() && listing.commit_versions[i] < version; ++i) {
      all_expired = all_expired && listing.commit_times_ms[i] < cutoff_ms;
    }
    if (all_expired) keep_from = version;
  }
  if (keep_from <= 0) return int64_t{0};
  int64_t deleted = 0;
  for (int64_t version : listing.commit_versions) {
    if (version >= keep_from) break;
    SLUICE_RETURN_IF_ERROR(fs.Delete(CommitPath(snapshot.table_path(), version)));
    ++deleted;
  }
  for (const auto& [version, files] : listing.checkpoints) {
    if (version >= keep_from) break;
    for (const std::string& path : files.paths) {
      SLUICE_RETURN_IF_ERROR(fs.Delete(path));
      ++deleted;
    }
  }
  return deleted;
}

}  // namespace sluice::delta
