#include "sluice/pipeline/stream_compatibility.h"

#include <fmt/format.h>

#include <algorithm>

#include "sluice/core/error_classes.h"
#include "sluice/formats/protobuf_decoder.h"

namespace sluice::pipeline {
namespace {

Status Incompatible(const std::string& path, const std::string& what) {
  return Status::Error(errors::kStreamSchemaIncompatible,
                       fmt::format("{} {}; an update may only change a schema in a backward compatible way "
                                   "(docs/streams.md, compatibility rules)",
                                   path, what));
}

std::string FormatName(formats::SchemaFormat format) {
  switch (format) {
    case formats::SchemaFormat::kJson: return "json";
    case formats::SchemaFormat::kAvro: return "avro";
    case formats::SchemaFormat::kProtobuf: return "protobuf";
    case formats::SchemaFormat::kBinary: return "binary";
  }
  return "?";
}

Status CheckType(formats::SchemaFormat format, const TypePtr& before, const TypePtr& after, const std::string& path);

Status CheckStruct(formats::SchemaFormat format, const DataType& before, const DataType& after, const std::string& path) {
  const bool avro = format == formats::SchemaFormat::kAvro;
  const bool protobuf = format == formats::SchemaFormat::kProtobuf;
  int last_kept = -1;  // index in `after` of the previous field kept, for the order rule
  const Field* removed = nullptr;  // the first field of `before` that `after` lacks
  for (const Field& old_field : before.fields()) {
    const std::string field_path = path + "." + old_field.name;
    int index = after.FieldIndexIgnoreCase(old_field.name);
    if (index < 0) {
      if (removed == nullptr) removed = &old_field;
      continue;
    }
    if (avro && removed != nullptr) {
      return Incompatible(path + "." + removed->name, "is removed before " + old_field.name +
                                                          ", and an Avro schema may only drop trailing fields");
    }
    const Field& new_field = after.fields()[index];
    if (!protobuf && index < last_kept) return Incompatible(field_path, "moves before a field it followed");
    last_kept = std::max(last_kept, index);
    if (old_field.nullable && !new_field.nullable) return Incompatible(field_path, "becomes required");
    SLUICE_RETURN_IF_ERROR(CheckType(format, old_field.type, new_field.type, field_path));
  }
  for (int index = 0; index < after.num_fields(); ++index) {
    const Field& new_field = after.fields()[index];
    if (before.FieldIndexIgnoreCase(new_field.name) >= 0) continue;
    const std::string field_path = path + "." + new_field.name;
    if (avro) return Incompatible(field_path, "is added, and an Avro schema may only widen int to long or drop trailing fields");
    if (!protobuf && !new_field.nullable) return Incompatible(field_path, "is added as a required field");
    if (!protobuf && index < last_kept) return Incompatible(field_path, "is added between existing fields");
  }
  return Status::OK();
}

Status CheckType(formats::SchemaFormat format, const TypePtr& before, const TypePtr& after, const std::string& path) {
  if (before->Equals(*after)) return Status::OK();
  TypeId from = before->id(), to = after->id();
  if (from == TypeId::kInteger && to == TypeId::kLong) return Status::OK();
  if (from == TypeId::kStruct && to == TypeId::kStruct) return CheckStruct(format, *before, *after, path);
  if (from == TypeId::kArray && to == TypeId::kArray) {
    if (before->contains_null() && !after->contains_null()) return Incompatible(path, "no longer admits null elements");
    return CheckType(format, before->element_type(), after->element_type(), path + ".element");
  }
  if (from == TypeId::kMap && to == TypeId::kMap) {
    if (before->value_contains_null() && !after->value_contains_null()) {
      return Incompatible(path, "no longer admits null map values");
    }
    SLUICE_RETURN_IF_ERROR(CheckType(format, before->key_type(), after->key_type(), path + ".key"));
    return CheckType(format, before->value_type(), after->value_type(), path + ".value");
  }
  return Incompatible(path, fmt::format("changes type from {} to {}", before->ToString(), after->ToString()));
}

std::string Kind(const std::optional<formats::DecoderSpec>& schema) {
  if (!schema) return "no schema (a string)";
  if (schema->raw_bytes()) return "binary";
  return schema->from_registry() ? "a registry schema" : "an inline " + FormatName(schema->format) + " schema";
}

Status CheckPart(const std::optional<formats::DecoderSpec>& before, const std::optional<formats::DecoderSpec>& after,
                 const std::string& part) {
  const std::string path = "schema_config." + part;
  if (Kind(before) != Kind(after)) {
    return Incompatible(path, "changes from " + Kind(before) + " to " + Kind(after));
  }
  if (!before || before->raw_bytes()) return Status::OK();
  if (before->from_registry()) {
    // Its schema is the subject's: it evolves by new versions in the registry, which the stream
    // takes up as it runs.
    if (before->registry_options != after->registry_options || before->message_name != after->message_name) {
      return Status::Error(errors::kStreamUpdateNotAllowed,
                           "the update changes " + path + ", whose schema a Schema Registry holds: it evolves by "
                           "registering new versions of the subject there, which the running stream takes up; "
                           "delete and create the stream to read another subject or registry");
    }
    return Status::OK();
  }
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<formats::Decoder> old_decoder, formats::MakeDecoder(*before));
  Result<std::unique_ptr<formats::Decoder>> new_decoder = formats::MakeDecoder(*after);
  if (!new_decoder.ok()) return new_decoder.status().WithContext(path);
  SLUICE_RETURN_IF_ERROR(CheckTypeEvolution(before->format, old_decoder->type(), (*new_decoder)->type(), part));
  if (before->format == formats::SchemaFormat::kProtobuf) {
    SLUICE_ASSIGN_OR_RETURN(std::optional<std::string> change, formats::ProtobufEncodingChange(*before, *after));
    if (change) return Incompatible(path, *change + ": values written before would not read as the new type");
  }
  return Status::OK();
}

Status NotAllowed(const std::string& key) {
  return Status::Error(errors::kStreamUpdateNotAllowed,
                       "the update changes " + key +
                           "; an update may only change schema_config and excluded_columns (delete and create "
                           "the stream to change anything else)");
}

}  // namespace

Status CheckTypeEvolution(formats::SchemaFormat format, const TypePtr& before, const TypePtr& after,
                          const std::string& path) {
  return CheckType(format, before, after, path);
}

Status CheckStreamUpdate(const StreamSpec& before, const StreamSpec& after) {
  if (before.source.format != after.source.format || before.source.options != after.source.options ||
      before.source.table != after.source.table) {
    return NotAllowed("source");
  }
  if (before.record_type_filter != after.record_type_filter) return NotAllowed("record_type_filter");
  if (before.table != after.table || before.backfill_source != after.backfill_source ||
      before.deduplication_columns != after.deduplication_columns ||
      before.backfill_overlap != after.backfill_overlap || before.backfill_max_wait != after.backfill_max_wait) {
    return NotAllowed("ingestion_config");
  }
  if (before.trigger != after.trigger || before.trigger_interval != after.trigger_interval) return NotAllowed("trigger");
  SLUICE_RETURN_IF_ERROR(CheckPart(before.key_schema, after.key_schema, "key"));
  return CheckPart(before.value_schema, after.value_schema, "value");
}

}  // namespace sluice::pipeline
