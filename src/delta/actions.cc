// Serialization of log actions (hand-written JSON, exact field names) and their parsing with
// simdjson's DOM. Each line is parsed on its own so that an error names its line; a
// thread-local parser keeps its buffers across lines and files, so replaying a long log
// allocates little.
#include "sluice/delta/actions.h"

#include <cstdio>

#include <fmt/format.h>
#include <simdjson.h>

#include "delta/json_writer.h"
#include "sluice/core/json_text.h"
#include "sluice/core/error_classes.h"

namespace sluice::delta {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;
using simdjson::dom::object;

// ---------------------------------------------------------------- serialization

// Writes one JSON object, field by field in call order; an empty optional leaves its field out.
// The Delta protocol names every field, so each action's writer is one line per field.
class ObjectWriter {
 public:
  explicit ObjectWriter(std::string* out) : out_(out) { out_->push_back('{'); }
  void End() { out_->push_back('}'); }

  void Field(std::string_view key, const std::string& value) { json::AppendString(value, Key(key)); }
  void Field(std::string_view key, int64_t value) { json::AppendInt(value, Key(key)); }
  void Field(std::string_view key, int32_t value) { json::AppendInt(value, Key(key)); }
  void Field(std::string_view key, bool value) { Key(key)->append(value ? "true" : "false"); }
  void Field(std::string_view key, const StringMap& value) { AppendJsonStringMap(Key(key), value); }
  void Field(std::string_view key, const PartitionValues& value) { json::AppendNullableStringMap(value, Key(key)); }
  void Field(std::string_view key, const std::vector<std::string>& value) { AppendJsonStringArray(Key(key), value); }
  void Field(std::string_view key, const DeletionVectorDescriptor& dv) {
    ObjectWriter object(Key(key));
    object.Field("storageType", dv.storage_type);
    object.Field("pathOrInlineDv", dv.path_or_inline_dv);
    object.Field("offset", dv.offset);
    object.Field("sizeInBytes", dv.size_in_bytes);
    object.Field("cardinality", dv.cardinality);
    object.End();
  }
  void Field(std::string_view key, const Format& format) {
    ObjectWriter object(Key(key));
    object.Field("provider", format.provider);
    object.Field("options", format.options);
    object.End();
  }
  template <typename T>
  void Field(std::string_view key, const std::optional<T>& value) {
    if (value) Field(key, *value);
  }

 protected:
  std::string* Key(std::string_view key) {
    json::AppendKey(key, &first_, out_);
    return out_;
  }

  std::string* out_;

 private:
  bool first_ = true;
};

// `{"<name>":` + the action's object + `}`.
class ActionWriter : public ObjectWriter {
 public:
  ActionWriter(std::string_view name, std::string* out) : ObjectWriter(Open(name, out)) {}
  void End() {
    ObjectWriter::End();
    out_->push_back('}');
  }

 private:
  static std::string* Open(std::string_view name, std::string* out) {
    out->append("{\"").append(name).append("\":");
    return out;
  }
};

struct Serializer {
  std::string* out;

  void operator()(const CommitInfo& info) const {
    ActionWriter w("commitInfo", out);
    w.Field("timestamp", info.timestamp);
    w.Field("inCommitTimestamp", info.in_commit_timestamp);
    w.Field("operation", info.operation);
    w.Field("operationParameters", info.operation_parameters);
    w.Field("operationMetrics", info.operation_metrics);
    w.Field("readVersion", info.read_version);
    w.Field("isolationLevel", info.isolation_level);
    w.Field("isBlindAppend", info.is_blind_append);
    w.Field("engineInfo", info.engine_info);
    w.Field("txnId", info.txn_id);
    w.End();
  }

  void operator()(const Protocol& protocol) const {
    ActionWriter w("protocol", out);
    w.Field("minReaderVersion", protocol.min_reader_version);
    w.Field("minWriterVersion", protocol.min_writer_version);
    w.Field("readerFeatures", protocol.reader_features);
    w.Field("writerFeatures", protocol.writer_features);
    w.End();
  }

  void operator()(const Metadata& metadata) const {
    ActionWriter w("metaData", out);
    w.Field("id", metadata.id);
    w.Field("name", metadata.name);
    w.Field("description", metadata.description);
    w.Field("format", metadata.format);
    w.Field("schemaString", metadata.schema_string);
    w.Field("partitionColumns", metadata.partition_columns);
    w.Field("configuration", metadata.configuration);
    w.Field("createdTime", metadata.created_time);
    w.End();
  }

  void operator()(const AddFile& add) const {
    ActionWriter w("add", out);
    w.Field("path", add.path);
    w.Field("partitionValues", add.partition_values);
    w.Field("size", add.size);
    w.Field("modificationTime", add.modification_time);
    w.Field("dataChange", add.data_change);
    w.Field("stats", add.stats);
    w.Field("tags", add.tags);
    w.Field("deletionVector", add.deletion_vector);
    w.Field("baseRowId", add.base_row_id);
    w.Field("defaultRowCommitVersion", add.default_row_commit_version);
    w.Field("clusteringProvider", add.clustering_provider);
    w.End();
  }

  void operator()(const RemoveFile& remove) const {
    ActionWriter w("remove", out);
    w.Field("path", remove.path);
    w.Field("deletionTimestamp", remove.deletion_timestamp);
    w.Field("dataChange", remove.data_change);
    w.Field("extendedFileMetadata", remove.extended_file_metadata);
    w.Field("partitionValues", remove.partition_values);
    w.Field("size", remove.size);
    w.Field("stats", remove.stats);
    w.Field("tags", remove.tags);
    w.Field("deletionVector", remove.deletion_vector);
    w.Field("baseRowId", remove.base_row_id);
    w.Field("defaultRowCommitVersion", remove.default_row_commit_version);
    w.End();
  }

  void operator()(const AddCdcFile& cdc) const {
    ActionWriter w("cdc", out);
    w.Field("path", cdc.path);
    w.Field("partitionValues", cdc.partition_values);
    w.Field("size", cdc.size);
    w.Field("dataChange", cdc.data_change);
    w.Field("tags", cdc.tags);
    w.End();
  }

  void operator()(const SetTransaction& txn) const {
    ActionWriter w("txn", out);
    w.Field("appId", txn.app_id);
    w.Field("version", txn.version);
    w.Field("lastUpdated", txn.last_updated);
    w.End();
  }

  void operator()(const DomainMetadata& domain) const {
    ActionWriter w("domainMetadata", out);
    w.Field("domain", domain.domain);
    w.Field("configuration", domain.configuration);
    w.Field("removed", domain.removed);
    w.End();
  }
};

// ---------------------------------------------------------------- parsing

// Reads the fields of one JSON object, recording the first type error. Each accessor returns
// the value or a default and leaves the error in `status`, so that a whole action is read in
// straight-line code and checked once.
class FieldReader {
 public:
  FieldReader(std::string_view source, int64_t line, std::string_view action)
      : source_(source), line_(line), action_(action) {}

  const Status& status() const { return status_; }

  void Fail(std::string_view field, std::string_view problem) {
    if (!status_.ok()) return;
    status_ = Status::Error(errors::kDeltaLogCorrupt,
                            fmt::format("{} line {}: {}.{} {}", source_, line_, action_, field, problem));
  }

  // Looks up `key`; absent or JSON null yields false.
  bool Find(const object& obj, std::string_view key, element* value) {
    if (obj.at_key(key).get(*value) != simdjson::SUCCESS) return false;
    return value->type() != element_type::NULL_VALUE;
  }

  std::string RequiredString(const object& obj, std::string_view key) {
    element value;
    if (!Find(obj, key, &value)) {
      Fail(key, "is missing");
      return {};
    }
    return AsString(value, key);
  }

  std::optional<std::string> OptionalString(const object& obj, std::string_view key) {
    element value;
    if (!Find(obj, key, &value)) return std::nullopt;
    return AsString(value, key);
  }

  int64_t RequiredInt(const object& obj, std::string_view key) {
    element value;
    if (!Find(obj, key, &value)) {
      Fail(key, "is missing");
      return 0;
    }
    return AsInt(value, key);
  }

  std::optional<int64_t> OptionalInt(const object& obj, std::string_view key) {
    element value;
    if (!Find(obj, key, &value)) return std::nullopt;
    return AsInt(value, key);
  }

  int32_t RequiredInt32(const object& obj, std::string_view key) {
    int64_t value = RequiredInt(obj, key);
    if (value < INT32_MIN || value > INT32_MAX) {
      Fail(key, "is out of the range of an int");
      return 0;
    }
    return static_cast<int32_t>(value);
  }

  bool RequiredBool(const object& obj, std::string_view key) {
    element value;
    if (!Find(obj, key, &value)) {
      Fail(key, "is missing");
      return false;
    }
    return AsBool(value, key);
  }

  std::optional<bool> OptionalBool(const object& obj, std::string_view key) {
    element value;
    if (!Find(obj, key, &value)) return std::nullopt;
    return AsBool(value, key);
  }

  // A map of strings. With `stringify_values`, non-string values are kept as compact JSON
  // (commitInfo's operationParameters are free-form).
  std::optional<StringMap> OptionalStringMap(const object& obj, std::string_view key, bool stringify_values = false) {
    element value;
    if (!Find(obj, key, &value)) return std::nullopt;
    object map;
    if (value.get_object().get(map) != simdjson::SUCCESS) {
      Fail(key, "must be an object");
      return std::nullopt;
    }
    StringMap result;
    for (auto field : map) {
      std::string_view text;
      if (field.value.get_string().get(text) == simdjson::SUCCESS) {
        result.emplace(std::string(field.key), std::string(text));
      } else if (stringify_values) {
        result.emplace(std::string(field.key), simdjson::minify(field.value));
      } else if (field.value.type() != element_type::NULL_VALUE) {
        Fail(key, "must map to strings");
        return std::nullopt;
      }
    }
    return result;
  }

  std::optional<PartitionValues> OptionalPartitionValues(const object& obj, std::string_view key) {
    element value;
    if (!Find(obj, key, &value)) return std::nullopt;
    object map;
    if (value.get_object().get(map) != simdjson::SUCCESS) {
      Fail(key, "must be an object");
      return std::nullopt;
    }
    PartitionValues result;
    for (auto field : map) {
      std::string_view text;
      if (field.value.type() == element_type::NULL_VALUE) {
        result.emplace(std::string(field.key), std::nullopt);
      } else if (field.value.get_string().get(text) == simdjson::SUCCESS) {
        result.emplace(std::string(field.key), std::string(text));
      } else {
        Fail(key, "must map to strings or null");
        return std::nullopt;
      }
    }
    return result;
  }

  PartitionValues RequiredPartitionValues(const object& obj, std::string_view key) {
    auto values = OptionalPartitionValues(obj, key);
    if (!values) {
      Fail(key, "is missing");
      return {};
    }
    return std::move(*values);
  }

  std::optional<std::vector<std::string>> OptionalStringArray(const object& obj, std::string_view key) {
    element value;
    if (!Find(obj, key, &value)) return std::nullopt;
    simdjson::dom::array array;
    if (value.get_array().get(array) != simdjson::SUCCESS) {
      Fail(key, "must be an array");
      return std::nullopt;
    }
    std::vector<std::string> result;
    for (element item : array) {
      std::string_view text;
      if (item.get_string().get(text) != simdjson::SUCCESS) {
        Fail(key, "must hold strings");
        return std::nullopt;
      }
      result.emplace_back(text);
    }
    return result;
  }

  std::optional<DeletionVectorDescriptor> OptionalDeletionVector(const object& obj) {
    element value;
    if (!Find(obj, "deletionVector", &value)) return std::nullopt;
    object dv_object;
    if (value.get_object().get(dv_object) != simdjson::SUCCESS) {
      Fail("deletionVector", "must be an object");
      return std::nullopt;
    }
    DeletionVectorDescriptor dv;
    dv.storage_type = RequiredString(dv_object, "storageType");
    dv.path_or_inline_dv = RequiredString(dv_object, "pathOrInlineDv");
    if (auto offset = OptionalInt(dv_object, "offset")) {
      if (*offset < 0 || *offset > INT32_MAX) Fail("deletionVector.offset", "is out of range");
      dv.offset = static_cast<int32_t>(*offset);
    }
    dv.size_in_bytes = RequiredInt32(dv_object, "sizeInBytes");
    dv.cardinality = RequiredInt(dv_object, "cardinality");
    return dv;
  }

 private:
  std::string AsString(element value, std::string_view key) {
    std::string_view text;
    if (value.get_string().get(text) != simdjson::SUCCESS) {
      Fail(key, "must be a string");
      return {};
    }
    return std::string(text);
  }

  int64_t AsInt(element value, std::string_view key) {
    int64_t number;
    if (value.get_int64().get(number) != simdjson::SUCCESS) {
      Fail(key, "must be an integer");
      return 0;
    }
    return number;
  }

  bool AsBool(element value, std::string_view key) {
    bool flag;
    if (value.get_bool().get(flag) != simdjson::SUCCESS) {
      Fail(key, "must be a boolean");
      return false;
    }
    return flag;
  }

  std::string_view source_;
  int64_t line_;
  std::string_view action_;
  Status status_;
};

Result<Action> ParseCommitInfo(FieldReader& r, const object& obj) {
  CommitInfo info;
  info.timestamp = r.OptionalInt(obj, "timestamp");
  info.in_commit_timestamp = r.OptionalInt(obj, "inCommitTimestamp");
  info.operation = r.OptionalString(obj, "operation").value_or("");
  info.operation_parameters = r.OptionalStringMap(obj, "operationParameters", true).value_or(StringMap{});
  info.operation_metrics = r.OptionalStringMap(obj, "operationMetrics", true);
  info.read_version = r.OptionalInt(obj, "readVersion");
  info.isolation_level = r.OptionalString(obj, "isolationLevel");
  info.is_blind_append = r.OptionalBool(obj, "isBlindAppend");
  info.engine_info = r.OptionalString(obj, "engineInfo");
  info.txn_id = r.OptionalString(obj, "txnId");
  if (!r.status().ok()) return r.status();
  return Action(std::move(info));
}

Result<Action> ParseProtocol(FieldReader& r, const object& obj) {
  Protocol protocol;
  protocol.min_reader_version = r.RequiredInt32(obj, "minReaderVersion");
  protocol.min_writer_version = r.RequiredInt32(obj, "minWriterVersion");
  protocol.reader_features = r.OptionalStringArray(obj, "readerFeatures");
  protocol.writer_features = r.OptionalStringArray(obj, "writerFeatures");
  if (!r.status().ok()) return r.status();
  return Action(std::move(protocol));
}

Result<Action> ParseMetadata(FieldReader& r, const object& obj) {
  Metadata metadata;
  metadata.id = r.RequiredString(obj, "id");
  metadata.name = r.OptionalString(obj, "name");
  metadata.description = r.OptionalString(obj, "description");
  element format;
  object format_object;
  if (!r.Find(obj, "format", &format)) {
    r.Fail("format", "is missing");
  } else if (format.get_object().get(format_object) != simdjson::SUCCESS) {
    r.Fail("format", "must be an object");
  } else {
    metadata.format.provider = r.OptionalString(format_object, "provider").value_or("parquet");
    metadata.format.options = r.OptionalStringMap(format_object, "options").value_or(StringMap{});
  }
  metadata.schema_string = r.OptionalString(obj, "schemaString").value_or(std::string(kEmptySchemaString));
  metadata.partition_columns = r.OptionalStringArray(obj, "partitionColumns").value_or(std::vector<std::string>{});
  metadata.configuration = r.OptionalStringMap(obj, "configuration").value_or(StringMap{});
  metadata.created_time = r.OptionalInt(obj, "createdTime");
  if (!r.status().ok()) return r.status();
  return Action(std::move(metadata));
}

Result<Action> ParseAdd(FieldReader& r, const object& obj) {
  AddFile add;
  add.path = r.RequiredString(obj, "path");
  add.partition_values = r.RequiredPartitionValues(obj, "partitionValues");
  add.size = r.RequiredInt(obj, "size");
  add.modification_time = r.RequiredInt(obj, "modificationTime");
  add.data_change = r.RequiredBool(obj, "dataChange");
  add.stats = r.OptionalString(obj, "stats");
  add.tags = r.OptionalStringMap(obj, "tags");
  add.deletion_vector = r.OptionalDeletionVector(obj);
  add.base_row_id = r.OptionalInt(obj, "baseRowId");
  add.default_row_commit_version = r.OptionalInt(obj, "defaultRowCommitVersion");
  add.clustering_provider = r.OptionalString(obj, "clusteringProvider");
  if (add.size < 0) r.Fail("size", "must not be negative");
  if (r.status().ok() && add.path.empty()) r.Fail("path", "must not be empty");
  if (!r.status().ok()) return r.status();
  return Action(std::move(add));
}

Result<Action> ParseRemove(FieldReader& r, const object& obj) {
  RemoveFile remove;
  remove.path = r.RequiredString(obj, "path");
  remove.deletion_timestamp = r.OptionalInt(obj, "deletionTimestamp");
  remove.data_change = r.RequiredBool(obj, "dataChange");
  remove.extended_file_metadata = r.OptionalBool(obj, "extendedFileMetadata");
  remove.partition_values = r.OptionalPartitionValues(obj, "partitionValues");
  remove.size = r.OptionalInt(obj, "size");
  remove.stats = r.OptionalString(obj, "stats");
  remove.tags = r.OptionalStringMap(obj, "tags");
  remove.deletion_vector = r.OptionalDeletionVector(obj);
  remove.base_row_id = r.OptionalInt(obj, "baseRowId");
  remove.default_row_commit_version = r.OptionalInt(obj, "defaultRowCommitVersion");
  if (r.status().ok() && remove.path.empty()) r.Fail("path", "must not be empty");
  if (!r.status().ok()) return r.status();
  return Action(std::move(remove));
}

Result<Action> ParseCdc(FieldReader& r, const object& obj) {
  AddCdcFile cdc;
  cdc.path = r.RequiredString(obj, "path");
  cdc.partition_values = r.OptionalPartitionValues(obj, "partitionValues").value_or(PartitionValues{});
  cdc.size = r.RequiredInt(obj, "size");
  cdc.data_change = r.OptionalBool(obj, "dataChange").value_or(false);
  cdc.tags = r.OptionalStringMap(obj, "tags");
  if (!r.status().ok()) return r.status();
  return Action(std::move(cdc));
}

Result<Action> ParseTxn(FieldReader& r, const object& obj) {
  SetTransaction txn;
  txn.app_id = r.RequiredString(obj, "appId");
  txn.version = r.RequiredInt(obj, "version");
  txn.last_updated = r.OptionalInt(obj, "lastUpdated");
  if (!r.status().ok()) return r.status();
  return Action(std::move(txn));
}

Result<Action> ParseDomainMetadata(FieldReader& r, const object& obj) {
  DomainMetadata domain;
  domain.domain = r.RequiredString(obj, "domain");
  domain.configuration = r.RequiredString(obj, "configuration");
  domain.removed = r.RequiredBool(obj, "removed");
  if (!r.status().ok()) return r.status();
  return Action(std::move(domain));
}

simdjson::dom::parser& ThreadParser() {
  thread_local simdjson::dom::parser parser;
  return parser;
}

Status Corrupt(std::string_view source, int64_t line, std::string_view problem) {
  return Status::Error(errors::kDeltaLogCorrupt, fmt::format("{} line {}: {}", source, line, problem));
}

// Parses one line holding one action object. Keys naming actions this version does not know
// (newer protocol versions, extensions) are skipped.
Status ParseLine(std::string_view line, std::string_view source, int64_t line_number, std::vector<Action>* actions) {
  element document;
  auto error = ThreadParser().parse(line.data(), line.size()).get(document);
  if (error != simdjson::SUCCESS) {
    return Corrupt(source, line_number, fmt::format("not valid JSON ({})", simdjson::error_message(error)));
  }
  object root;
  if (document.get_object().get(root) != simdjson::SUCCESS) {
    return Corrupt(source, line_number, "an action must be a JSON object");
  }
  for (auto field : root) {
    object body;
    if (field.value.get_object().get(body) != simdjson::SUCCESS) {
      if (field.value.type() == element_type::NULL_VALUE) continue;
      return Corrupt(source, line_number, fmt::format("action '{}' must be a JSON object", field.key));
    }
    FieldReader reader(source, line_number, field.key);
    Result<Action> action = Status::Error(errors::kInternalError, "unparsed action");
    std::string_view key = field.key;
    if (key == "add") {
      action = ParseAdd(reader, body);
    } else if (key == "remove") {
      action = ParseRemove(reader, body);
    } else if (key == "txn") {
      action = ParseTxn(reader, body);
    } else if (key == "commitInfo") {
      action = ParseCommitInfo(reader, body);
    } else if (key == "metaData") {
      action = ParseMetadata(reader, body);
    } else if (key == "protocol") {
      action = ParseProtocol(reader, body);
    } else if (key == "cdc") {
      action = ParseCdc(reader, body);
    } else if (key == "domainMetadata") {
      action = ParseDomainMetadata(reader, body);
    } else {
      continue;  // an action of a newer protocol version or an extension: ignored by rule
    }
    if (!action.ok()) return action.status();
    actions->push_back(std::move(action).value());
  }
  return Status::OK();
}

}  // namespace

std::string DeletionVectorDescriptor::UniqueId() const {
  std::string id = storage_type + path_or_inline_dv;
  if (offset) id += "@" + std::to_string(*offset);
  return id;
}

std::string SerializeAction(const Action& action) {
  std::string out;
  std::visit(Serializer{&out}, action);
  return out;
}

std::string SerializeActions(const std::vector<Action>& actions) {
  std::string out;
  for (const Action& action : actions) {
    std::visit(Serializer{&out}, action);
    out.push_back('\n');
  }
  return out;
}

Status ParseActions(std::string_view text, std::string_view source, std::vector<Action>* actions) {
  int64_t line_number = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    ++line_number;
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    SLUICE_RETURN_IF_ERROR(ParseLine(line, source, line_number, actions));
  }
  return Status::OK();
}

std::string SerializeLastCheckpoint(const LastCheckpoint& last_checkpoint) {
  std::string out;
  ObjectWriter w(&out);
  w.Field("version", last_checkpoint.version);
  w.Field("size", last_checkpoint.size);
  w.Field("parts", last_checkpoint.parts);
  w.Field("sizeInBytes", last_checkpoint.size_in_bytes);
  w.Field("numOfAddFiles", last_checkpoint.num_of_add_files);
  w.End();
  return out;
}

Result<LastCheckpoint> ParseLastCheckpoint(std::string_view text) {
  element document;
  auto error = ThreadParser().parse(text.data(), text.size()).get(document);
  object root;
  if (error != simdjson::SUCCESS || document.get_object().get(root) != simdjson::SUCCESS) {
    return Status::Error(errors::kDeltaLogCorrupt, "_last_checkpoint is not a JSON object");
  }
  FieldReader reader("_last_checkpoint", 1, "checkpoint");
  LastCheckpoint result;
  result.version = reader.RequiredInt(root, "version");
  result.size = reader.OptionalInt(root, "size").value_or(0);
  result.parts = reader.OptionalInt(root, "parts");
  result.size_in_bytes = reader.OptionalInt(root, "sizeInBytes");
  result.num_of_add_files = reader.OptionalInt(root, "numOfAddFiles");
  if (!reader.status().ok()) return reader.status();
  if (result.version < 0) return Status::Error(errors::kDeltaLogCorrupt, "_last_checkpoint has a negative version");
  if (result.parts && (*result.parts < 1 || *result.parts > 100000)) {
    return Status::Error(errors::kDeltaLogCorrupt, "_last_checkpoint has an invalid number of parts");
  }
  return result;
}

std::string CommitFileName(int64_t version) { return fmt::format("{:020d}.json", version); }

int64_t ParseCommitFileName(std::string_view name) {
  if (name.size() != 25 || name.substr(20) != ".json") return -1;
  int64_t version = 0;
  for (size_t i = 0; i < 20; ++i) {
    char c = name[i];
    if (c < '0' || c > '9') return -1;
    if (version > (INT64_MAX - (c - '0')) / 10) return -1;
    version = version * 10 + (c - '0');
  }
  return version;
}

}  // namespace sluice::delta
