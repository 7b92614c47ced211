// Reading checkpoints written by any engine. Columns are found by name, not position (engines
// order and extend the checkpoint schema differently), and each column's type is checked before
// its values are read, so a checkpoint of an unexpected shape is DELTA_LOG_CORRUPT, never a crash.
#include <algorithm>

#include <fmt/format.h>
#include <simdjson.h>

#include "delta/data_files.h"
#include "sluice/core/error_classes.h"
#include "sluice/delta/checkpoint.h"
#include "sluice/parquet/reader.h"

namespace sluice::delta {
namespace {

// The actions a checkpoint holds; `sidecar` rows (V2 checkpoints) name the files holding its add
// and remove actions.
constexpr std::string_view kActionColumns[] = {"txn",      "add",           "remove", "metaData",
                                               "protocol", "domainMetadata", "sidecar"};

// The fields of one struct column of a batch, looked up by name and checked for type.
class StructColumn {
 public:
  StructColumn(const Column* column, std::string path, Status* status)
      : column_(column), path_(std::move(path)), status_(status) {}

  bool valid(int64_t row) const { return column_ != nullptr && column_->IsValid(row); }

  // The child column `name`, or nullptr when absent; a child of another type than `id` is an
  // error (recorded in the shared status).
  const Column* Child(std::string_view name, TypeId id) const {
    if (column_ == nullptr) return nullptr;
    int index = column_->type->FieldIndex(name);
    if (index < 0) return nullptr;
    const Column* child = column_->children[index].get();
    if (child->type->id() != id) {
      Fail(fmt::format("{}.{} has type {}, expected {}", path_, name, child->type->ToString(), TypeIdName(id)));
      return nullptr;
    }
    return child;
  }

  StructColumn Struct(std::string_view name) const {
    return StructColumn(Child(name, TypeId::kStruct), fmt::format("{}.{}", path_, name), status_);
  }

  // A map<string,string> or array<string> child, checked element by element type.
  const Column* StringMap(std::string_view name) const {
    const Column* map = Child(name, TypeId::kMap);
    if (map != nullptr && (map->type->key_type()->id() != TypeId::kString ||
                           map->type->value_type()->id() != TypeId::kString)) {
      Fail(fmt::format("{}.{} must be map<string,string>", path_, name));
      return nullptr;
    }
    return map;
  }
  const Column* StringArray(std::string_view name) const {
    const Column* array = Child(name, TypeId::kArray);
    if (array != nullptr && array->type->element_type()->id() != TypeId::kString) {
      Fail(fmt::format("{}.{} must be array<string>", path_, name));
      return nullptr;
    }
    return array;
  }

 private:
  void Fail(std::string message) const {
    if (status_->ok()) *status_ = Status::Error(errors::kDeltaLogCorrupt, std::move(message));
  }

  const Column* column_;
  std::string path_;
  Status* status_;
};

std::optional<std::string> GetString(const Column* column, int64_t row) {
  if (column == nullptr || column->IsNull(row)) return std::nullopt;
  return std::string(column->View(row));
}

std::optional<int64_t> GetLong(const Column* column, int64_t row) {
  if (column == nullptr || column->IsNull(row)) return std::nullopt;
  return column->Value<int64_t>(row);
}

std::optional<int32_t> GetInt(const Column* column, int64_t row) {
  if (column == nullptr || column->IsNull(row)) return std::nullopt;
  return column->Value<int32_t>(row);
}

std::optional<bool> GetBool(const Column* column, int64_t row) {
  if (column == nullptr || column->IsNull(row)) return std::nullopt;
  return column->Value<uint8_t>(row) != 0;
}

std::optional<delta::StringMap> GetStringMap(const Column* map, int64_t row) {
  if (map == nullptr || map->IsNull(row)) return std::nullopt;
  const Column& keys = *map->children[0];
  const Column& values = *map->children[1];
  delta::StringMap result;
  for (int64_t i = map->offsets[row]; i < map->offsets[row + 1]; ++i) {
    if (keys.IsNull(i) || values.IsNull(i)) continue;
    result.emplace(std::string(keys.View(i)), std::string(values.View(i)));
  }
  return result;
}

std::optional<PartitionValues> GetPartitionValues(const Column* map, int64_t row) {
  if (map == nullptr || map->IsNull(row)) return std::nullopt;
  const Column& keys = *map->children[0];
  const Column& values = *map->children[1];
  PartitionValues result;
  for (int64_t i = map->offsets[row]; i < map->offsets[row + 1]; ++i) {
    if (keys.IsNull(i)) continue;
    result.emplace(std::string(keys.View(i)), GetString(&values, i));
  }
  return result;
}

std::optional<std::vector<std::string>> GetStringArray(const Column* array, int64_t row) {
  if (array == nullptr || array->IsNull(row)) return std::nullopt;
  const Column& elements = *array->children[0];
  std::vector<std::string> result;
  for (int64_t i = array->offsets[row]; i < array->offsets[row + 1]; ++i) {
    if (elements.IsValid(i)) result.emplace_back(elements.View(i));
  }
  return result;
}

// The deletion vector child of an add or remove column.
struct DvColumns {
  explicit DvColumns(const StructColumn& parent)
      : dv(parent.Struct("deletionVector")),
        storage_type(dv.Child("storageType", TypeId::kString)),
        path_or_inline_dv(dv.Child("pathOrInlineDv", TypeId::kString)),
        offset(dv.Child("offset", TypeId::kInteger)),
        size_in_bytes(dv.Child("sizeInBytes", TypeId::kInteger)),
        cardinality(dv.Child("cardinality", TypeId::kLong)) {}

  std::optional<DeletionVectorDescriptor> Get(int64_t row) const {
    if (!dv.valid(row)) return std::nullopt;
    return DeletionVectorDescriptor{GetString(storage_type, row).value_or(""),
                                    GetString(path_or_inline_dv, row).value_or(""), GetInt(offset, row),
                                    GetInt(size_in_bytes, row).value_or(0), GetLong(cardinality, row).value_or(0)};
  }

  StructColumn dv;
  const Column *storage_type, *path_or_inline_dv, *offset, *size_in_bytes, *cardinality;
};

Status Corrupt(const std::string& path, int64_t row, std::string_view what) {
  return Status::Error(errors::kDeltaLogCorrupt, fmt::format("checkpoint '{}' row {}: {}", path, row, what));
}

// Decodes the actions of one batch, in row order.
// Decodes the actions of one batch of a checkpoint file into `sink` and the paths its sidecar
// rows name into `sidecars`.
Status DecodeBatch(const RecordBatch& batch, const std::string& path, int64_t first_row, const ActionSink& sink,
                   std::vector<std::string>* sidecars) {
  Status status;
  auto column = [&](std::string_view name) {
    int index = batch.schema()->FieldIndex(name);
    const Column* found = index < 0 ? nullptr : batch.column(index).get();
    if (found != nullptr && found->type->id() != TypeId::kStruct) {
      status = Corrupt(path, first_row, fmt::format("column '{}' is not a struct", name));
      found = nullptr;
    }
    return StructColumn(found, std::string(name), &status);
  };
  StructColumn txn = column("txn"), add = column("add"), remove = column("remove"), metadata = column("metaData"),
               protocol = column("protocol"), domain = column("domainMetadata"), sidecar = column("sidecar");
  const Column* sidecar_path = sidecar.Child("path", TypeId::kString);

  const Column* txn_app_id = txn.Child("appId", TypeId::kString);
  const Column* txn_version = txn.Child("version", TypeId::kLong);
  const Column* txn_last_updated = txn.Child("lastUpdated", TypeId::kLong);

  const Column* add_path = add.Child("path", TypeId::kString);
  const Column* add_partition_values = add.StringMap("partitionValues");
  const Column* add_size = add.Child("size", TypeId::kLong);
  const Column* add_modification_time = add.Child("modificationTime", TypeId::kLong);
  const Column* add_data_change = add.Child("dataChange", TypeId::kBoolean);
  const Column* add_stats = add.Child("stats", TypeId::kString);
  const Column* add_tags = add.StringMap("tags");
  DvColumns add_dv(add);
  const Column* add_base_row_id = add.Child("baseRowId", TypeId::kLong);
  const Column* add_default_row_commit_version = add.Child("defaultRowCommitVersion", TypeId::kLong);

  const Column* remove_path = remove.Child("path", TypeId::kString);
  const Column* remove_deletion_timestamp = remove.Child("deletionTimestamp", TypeId::kLong);
  const Column* remove_data_change = remove.Child("dataChange", TypeId::kBoolean);
  const Column* remove_extended = remove.Child("extendedFileMetadata", TypeId::kBoolean);
  const Column* remove_partition_values = remove.StringMap("partitionValues");
  const Column* remove_size = remove.Child("size", TypeId::kLong);
  DvColumns remove_dv(remove);

  const Column* metadata_id = metadata.Child("id", TypeId::kString);
  const Column* metadata_name = metadata.Child("name", TypeId::kString);
  const Column* metadata_description = metadata.Child("description", TypeId::kString);
  StructColumn format = metadata.Struct("format");
  const Column* format_provider = format.Child("provider", TypeId::kString);
  const Column* format_options = format.StringMap("options");
  const Column* metadata_schema = metadata.Child("schemaString", TypeId::kString);
  const Column* metadata_partition_columns = metadata.StringArray("partitionColumns");
  const Column* metadata_configuration = metadata.StringMap("configuration");
  const Column* metadata_created_time = metadata.Child("createdTime", TypeId::kLong);

  const Column* protocol_reader = protocol.Child("minReaderVersion", TypeId::kInteger);
  const Column* protocol_writer = protocol.Child("minWriterVersion", TypeId::kInteger);
  const Column* protocol_reader_features = protocol.StringArray("readerFeatures");
  const Column* protocol_writer_features = protocol.StringArray("writerFeatures");

  const Column* domain_name = domain.Child("domain", TypeId::kString);
  const Column* domain_configuration = domain.Child("configuration", TypeId::kString);
  const Column* domain_removed = domain.Child("removed", TypeId::kBoolean);
  if (!status.ok()) return status.WithContext(fmt::format("checkpoint '{}'", path));

  for (int64_t row = 0; row < batch.num_rows(); ++row) {
    int64_t file_row = first_row + row;
    if (add.valid(row)) {
      AddFile action;
      auto file_path = GetString(add_path, row);
      auto size = GetLong(add_size, row);
      auto modification_time = GetLong(add_modification_time, row);
      if (!file_path || file_path->empty() || !size || *size < 0 || !modification_time) {
        return Corrupt(path, file_row, "add lacks path, size or modificationTime");
      }
      action.path = std::move(*file_path);
      action.partition_values = GetPartitionValues(add_partition_values, row).value_or(PartitionValues{});
      action.size = *size;
      action.modification_time = *modification_time;
      action.data_change = GetBool(add_data_change, row).value_or(false);
      action.stats = GetString(add_stats, row);
      action.tags = GetStringMap(add_tags, row);
      action.deletion_vector = add_dv.Get(row);
      action.base_row_id = GetLong(add_base_row_id, row);
      action.default_row_commit_version = GetLong(add_default_row_commit_version, row);
      sink(std::move(action));
    } else if (remove.valid(row)) {
      RemoveFile action;
      auto file_path = GetString(remove_path, row);
      if (!file_path || file_path->empty()) return Corrupt(path, file_row, "remove lacks a path");
      action.path = std::move(*file_path);
      action.deletion_timestamp = GetLong(remove_deletion_timestamp, row);
      action.data_change = GetBool(remove_data_change, row).value_or(false);
      action.extended_file_metadata = GetBool(remove_extended, row);
      action.partition_values = GetPartitionValues(remove_partition_values, row);
      action.size = GetLong(remove_size, row);
      action.deletion_vector = remove_dv.Get(row);
      sink(std::move(action));
    } else if (txn.valid(row)) {
      auto app_id = GetString(txn_app_id, row);
      auto version = GetLong(txn_version, row);
      if (!app_id || !version) return Corrupt(path, file_row, "txn lacks appId or version");
      sink(SetTransaction{std::move(*app_id), *version, GetLong(txn_last_updated, row)});
    } else if (metadata.valid(row)) {
      Metadata action;
      auto id = GetString(metadata_id, row);
      auto schema = GetString(metadata_schema, row).value_or(std::string(kEmptySchemaString));
      if (!id) return Corrupt(path, file_row, "metaData lacks id");
      action.id = std::move(*id);
      action.name = GetString(metadata_name, row);
      action.description = GetString(metadata_description, row);
      action.format.provider = GetString(format_provider, row).value_or("parquet");
      action.format.options = GetStringMap(format_options, row).value_or(delta::StringMap{});
      action.schema_string = std::move(schema);
      action.partition_columns = GetStringArray(metadata_partition_columns, row).value_or(std::vector<std::string>{});
      action.configuration = GetStringMap(metadata_configuration, row).value_or(delta::StringMap{});
      action.created_time = GetLong(metadata_created_time, row);
      sink(std::move(action));
    } else if (protocol.valid(row)) {
      auto reader = GetInt(protocol_reader, row);
      auto writer = GetInt(protocol_writer, row);
      if (!reader || !writer) return Corrupt(path, file_row, "protocol lacks its versions");
      sink(Protocol{*reader, *writer, GetStringArray(protocol_reader_features, row),
                    GetStringArray(protocol_writer_features, row)});
    } else if (sidecar.valid(row)) {
      auto sidecar_file = GetString(sidecar_path, row);
      if (!sidecar_file) return Corrupt(path, file_row, "sidecar lacks its path");
      sidecars->push_back(std::move(*sidecar_file));
    } else if (domain.valid(row)) {
      auto name = GetString(domain_name, row);
      auto configuration = GetString(domain_configuration, row);
      if (!name || !configuration) return Corrupt(path, file_row, "domainMetadata lacks domain or configuration");
      sink(DomainMetadata{std::move(*name), std::move(*configuration), GetBool(domain_removed, row).value_or(false)});
    }
  }
  return Status::OK();
}

// A V2 checkpoint in JSON: one action per line, as in a commit, sidecar actions among them.
Status ReadJsonCheckpointFile(FileSystem& fs, const std::string& path, const ActionSink& sink,
                              std::vector<std::string>* sidecars) {
  SLUICE_ASSIGN_OR_RETURN(std::string text, fs.ReadFile(path));
  std::vector<Action> actions;
  SLUICE_RETURN_IF_ERROR(ParseActions(text, path, &actions));
  for (Action& action : actions) sink(std::move(action));
  // Sidecar actions are a checkpoint's own: the commit parser passes over them.
  simdjson::dom::parser parser;
  size_t start = 0;
  int64_t line_number = 0;
  while (start < text.size()) {
    size_t end = std::min(text.find('\n', start), text.size());
    ++line_number;
    std::string_view line(text.data() + start, end - start);
    start = end + 1;
    if (line.find("\"sidecar\"") == std::string_view::npos) continue;
    simdjson::dom::element document;
    std::string_view sidecar_file;
    if (parser.parse(line.data(), line.size()).get(document) != simdjson::SUCCESS) {
      return Corrupt(path, line_number, "a line is not JSON");
    }
    simdjson::dom::element sidecar;
    if (document["sidecar"].get(sidecar) != simdjson::SUCCESS) continue;
    if (sidecar["path"].get_string().get(sidecar_file) != simdjson::SUCCESS) {
      return Corrupt(path, line_number, "sidecar lacks its path");
    }
    sidecars->emplace_back(sidecar_file);
  }
  return Status::OK();
}

Status ReadCheckpointFile(FileSystem& fs, const std::string& path, const ActionSink& sink,
                          std::vector<std::string>* sidecars) {
  if (path.ends_with(".json")) return ReadJsonCheckpointFile(fs, path, sink, sidecars);
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<parquet::ParquetReader> reader, parquet::ParquetReader::Open(fs, path));
  parquet::ReadOptions options;
  for (std::string_view name : kActionColumns) {
    if (reader->schema()->FieldIndex(name) >= 0) options.columns.emplace_back(name);
  }
  if (options.columns.empty()) return Corrupt(path, 0, "no action column");
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<parquet::BatchReader> batches, reader->NewBatchReader(options));
  int64_t first_row = 0;
  while (true) {
    SLUICE_ASSIGN_OR_RETURN(BatchPtr batch, batches->Next());
    if (batch == nullptr) return Status::OK();
    SLUICE_RETURN_IF_ERROR(DecodeBatch(*batch, path, first_row, sink, sidecars));
    first_row += batch->num_rows();
  }
}

// Where a sidecar a checkpoint names lives: the path is a URI path, a name under
// `_delta_log/_sidecars/` unless absolute.
Result<std::string> SidecarPath(const std::string& checkpoint_path, const std::string& sidecar) {
  std::string_view uri = sidecar;
  if (uri.starts_with("file://")) uri.remove_prefix(7);
  SLUICE_ASSIGN_OR_RETURN(std::string decoded, DecodeFilePath(uri));
  if (decoded.starts_with("/") || decoded.find("://") != std::string::npos) return decoded;
  return checkpoint_path.substr(0, checkpoint_path.rfind('/')) + "/_sidecars/" + decoded;
}

}  // namespace

CheckpointFiles CheckpointFilesOf(std::string_view table_path, const LastCheckpoint& last_checkpoint) {
  CheckpointFiles files{last_checkpoint.version, {}};
  int64_t parts = last_checkpoint.parts.value_or(1);
  if (parts <= 1) {
    files.paths.push_back(ClassicCheckpointPath(table_path, last_checkpoint.version));
    return files;
  }
  for (int64_t part = 1; part <= parts; ++part) {
    files.paths.push_back(fmt::format("{}/{:020d}.checkpoint.{:010d}.{:010d}.parquet", LogDirectory(table_path),
                                      last_checkpoint.version, part, parts));
  }
  return files;
}

Status ReadCheckpoint(FileSystem& fs, const CheckpointFiles& checkpoint, const ActionSink& sink) {
  // The checkpoint's files, then the sidecars they name (which hold adds and removes only).
  std::vector<std::string> files = checkpoint.paths;
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string path = files[i];
    std::vector<std::string> sidecars;
    Status status = ReadCheckpointFile(fs, path, sink, &sidecars);
    if (i >= checkpoint.paths.size() && !sidecars.empty()) {
      status = Corrupt(path, 0, "a sidecar names sidecars");
    }
    for (const std::string& sidecar : sidecars) {
      Result<std::string> sidecar_path = SidecarPath(path, sidecar);
      if (!sidecar_path.ok()) return sidecar_path.status();
      files.push_back(std::move(*sidecar_path));
    }
    if (!status.ok()) {
      if (status.error_class() == errors::kFileNotFound || status.error_class() == errors::kDeltaLogCorrupt) {
        return status;
      }
      // A Parquet-level failure means the checkpoint file is not what a checkpoint must be.
      if (status.error_class() != errors::kIoError) {
        return Status::Error(errors::kDeltaLogCorrupt, fmt::format("checkpoint '{}': {}", path, status.ToString()));
      }
      return status;
    }
  }
  return Status::OK();
}

}  // namespace sluice::delta
