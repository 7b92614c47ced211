#include "sluice/pipeline/stream_decoding.h"

#include <algorithm>

#include "sluice/core/ascii.h"
#include "sluice/core/builder.h"
#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/utf8.h"

namespace sluice::pipeline {
namespace {

// `column` (a struct) without the field at `path` (relative to it), or UNRESOLVED_COLUMN.
Result<ColumnPtr> Exclude(const ColumnPtr& column, const std::vector<std::string>& path, size_t depth,
                          const std::string& full_path) {
  const DataType& type = *column->type;
  int index = type.id() == TypeId::kStruct ? type.FieldIndexIgnoreCase(path[depth]) : -1;
  if (index < 0) {
    return Status::Error(errors::kUnresolvedColumn,
                         "excluded column '" + full_path + "' is not in the stream's decoded schema");
  }
  std::vector<Field> fields = type.fields();
  auto result = std::make_shared<Column>(*column);
  if (depth + 1 == path.size()) {
    fields.erase(fields.begin() + index);
    result->children.erase(result->children.begin() + index);
  } else {
    SLUICE_ASSIGN_OR_RETURN(ColumnPtr child, Exclude(column->children[index], path, depth + 1, full_path));
    fields[index].type = child->type;
    result->children[index] = std::move(child);
  }
  SLUICE_ASSIGN_OR_RETURN(result->type, DataType::Struct(std::move(fields)));
  return ColumnPtr(std::move(result));
}

// The bytes of a key or value without a schema as a string column: valid UTF-8 as it is, and
// each invalid row with its invalid sequences replaced by U+FFFD and counted as malformed (the
// one UTF-8 rule, core/utf8.h: a table never holds a string that is not UTF-8).
Result<ColumnPtr> AsUtf8String(const Column& bytes, int64_t* malformed, std::vector<int64_t>* malformed_rows) {
  std::vector<int64_t> invalid;
  for (int64_t row = 0; row < bytes.length; ++row) {
    if (bytes.IsValid(row) && !IsValidUtf8(bytes.View(row))) invalid.push_back(row);
  }
  if (invalid.empty()) {
    auto strings = std::make_shared<Column>(bytes);
    strings->type = DataType::String();
    return ColumnPtr(std::move(strings));
  }
  *malformed += static_cast<int64_t>(invalid.size());
  malformed_rows->insert(malformed_rows->end(), invalid.begin(), invalid.end());
  BinaryBuilder strings(DataType::String());
  for (int64_t row = 0; row < bytes.length; ++row) {
    if (bytes.IsNull(row)) {
      strings.AppendNull();
    } else {
      strings.Append(MakeValidUtf8(bytes.View(row)));
    }
  }
  return strings.Finish();
}

// `column` with every nested field, array element and map value nullable: the ingestion table's
// shape, so that a later schema may drop a field (rows written after read it as null). Rewrites
// types only, never data.
ColumnPtr Relaxed(const ColumnPtr& column) {
  const DataType& type = *column->type;
  if (type.id() != TypeId::kStruct && type.id() != TypeId::kArray && type.id() != TypeId::kMap) return column;
  auto result = std::make_shared<Column>(*column);
  for (ColumnPtr& child : result->children) child = Relaxed(child);
  if (type.id() == TypeId::kStruct) {
    std::vector<Field> fields = type.fields();
    for (size_t i = 0; i < fields.size(); ++i) {
      fields[i].nullable = true;
      fields[i].type = result->children[i]->type;
    }
    // The names are those of a valid struct already.
    result->type = DataType::Struct(std::move(fields)).value();
  } else if (type.id() == TypeId::kArray) {
    result->type = DataType::Array(result->children[0]->type, true);
  } else {
    result->type = DataType::Map(result->children[0]->type, result->children[1]->type, true);
  }
  return result;
}

// The columns of the `kafka` source a stream decodes from.
constexpr std::string_view kRecordColumns[] = {"key", "value", "topic", "partition", "offset", "timestamp"};

}  // namespace

Result<IngestionSpec> IngestionSpecOf(const PipelineSpec& pipeline, const StreamSpec& stream) {
  IngestionSpec spec;
  spec.stream_id = stream.name;
  SLUICE_ASSIGN_OR_RETURN(spec.table_path, pipeline.TablePath(stream.table));
  spec.key_schema = stream.key_schema;
  spec.value_schema = stream.value_schema;
  if (auto subscribe = stream.source.options.find("subscribe"); subscribe != stream.source.options.end()) {
    if (subscribe->second.find(',') == std::string::npos) spec.topic = subscribe->second;
  }
  spec.record_type_filter = stream.record_type_filter;
  spec.sql = pipeline.sql;
  spec.excluded_columns = stream.excluded_columns;
  if (stream.backfill_source) {
    BackfillSpec backfill;
    backfill.stream_id = stream.name;
    backfill.table_path = spec.table_path;
    SLUICE_ASSIGN_OR_RETURN(backfill.backfill_path, pipeline.TablePath(*stream.backfill_source));
    backfill.deduplication_columns = stream.deduplication_columns;
    if (!stream.backfill_overlap.empty()) {
      SLUICE_ASSIGN_OR_RETURN(backfill.overlap, ParseDuration(stream.backfill_overlap));
    }
    if (!stream.backfill_max_wait.empty()) {
      SLUICE_ASSIGN_OR_RETURN(backfill.max_wait, ParseDuration(stream.backfill_max_wait));
    }
    spec.backfill = std::move(backfill);
  } else if (!stream.deduplication_columns.empty() || !stream.backfill_overlap.empty() ||
             !stream.backfill_max_wait.empty()) {
    return Status::Error(errors::kInvalidPipeline, "deduplication_columns, backfill_overlap and backfill_max_wait "
                                                   "apply to a backfill; give ingestion_config.backfill_source too");
  }
  return spec;
}

Result<std::unique_ptr<StreamDecodeOperator>> StreamDecodeOperator::Make(IngestionSpec spec) {
  std::unique_ptr<StreamDecodeOperator> decode(new StreamDecodeOperator(std::move(spec)));
  SLUICE_RETURN_IF_ERROR(decode->MakePart(decode->spec_.key_schema, &decode->key_));
  SLUICE_RETURN_IF_ERROR(decode->MakePart(decode->spec_.value_schema, &decode->value_));
  if (decode->spec_.record_type_filter) {
    SLUICE_RETURN_IF_ERROR(expr::Expression::Parse(*decode->spec_.record_type_filter).status());
  }
  if (decode->spec_.backfill) {
    for (const std::string& column : decode->spec_.backfill->deduplication_columns) {
      SLUICE_RETURN_IF_ERROR(decode->CheckDeduplicationColumn(column));
    }
  }
  // Exclusions are checked against empty columns of the decoded types; a registry schema is not
  // known before the stream starts.
  for (const std::string& path : decode->spec_.excluded_columns) {
    std::vector<std::string> parts = SplitFieldPath(path);
    const Part* part = parts[0] == "key" ? &decode->key_ : parts[0] == "value" ? &decode->value_ : nullptr;
    if (part != nullptr && part->subject) continue;
    if (parts.size() < 2 || part == nullptr || part->decoder == nullptr) {
      return Status::Error(errors::kUnresolvedColumn, "excluded column '" + path +
                                                          "' must be a path into a decoded key or value "
                                                          "(key.<field> or value.<field>)");
    }
    SLUICE_RETURN_IF_ERROR(Exclude(MakeNullColumn(part->decoder->type(), 0), parts, 1, path).status());
  }
  return decode;
}

Status StreamDecodeOperator::MakePart(const std::optional<formats::DecoderSpec>& schema, Part* part) {
  part->as_string = !schema;
  if (!schema || schema->raw_bytes()) return Status::OK();
  if (schema->from_registry()) {
    Result<formats::RegistrySubject> subject = formats::RegistrySubjectOf(*schema, spec_.topic, part->name == "key");
    if (!subject.ok()) return subject.status().WithContext("schema_config." + part->name);
    part->subject = std::move(subject).value();
    return Status::OK();
  }
  SLUICE_ASSIGN_OR_RETURN(part->decoder, formats::MakeDecoder(*schema));
  return Status::OK();
}

Status StreamDecodeOperator::CheckDeduplicationColumn(const std::string& column) const {
  static constexpr std::string_view kColumns[] = {"key", "value", "stream_record_timestamp", "record_source",
                                                  "kafka_topic", "kafka_partition", "kafka_offset"};
  std::vector<std::string> parts = SplitFieldPath(column);
  parts[0] = AsciiLower(parts[0]);  // column names match ignoring case, as the merge matches them
  if (std::find(std::begin(kColumns), std::end(kColumns), parts[0]) == std::end(kColumns)) {
    return Status::Error(errors::kUnresolvedColumn,
                         "deduplication column '" + column +
                             "' is not a column of the ingestion table (key, value, stream_record_timestamp, "
                             "record_source, kafka_topic, kafka_partition, kafka_offset) nor a path into the key or "
                             "value (value.<field>)");
  }
  for (const std::string& excluded : spec_.excluded_columns) {
    if (column == excluded || column.starts_with(excluded + ".")) {
      return Status::Error(errors::kUnresolvedColumn, "deduplication column '" + column + "' is excluded by '" +
                                                          excluded + "'; the merge cannot compare it");
    }
  }
  if (parts.size() == 1) return Status::OK();
  const Part* part = parts[0] == "key" ? &key_ : parts[0] == "value" ? &value_ : nullptr;
  if (part == nullptr || (part->decoder == nullptr && !part->subject)) {
    return Status::Error(errors::kUnresolvedColumn, "deduplication column '" + column +
                                                        "' must be a path into a decoded key or value (key.<field> "
                                                        "or value.<field>)");
  }
  if (part->subject) return Status::OK();  // a registry schema is known once the stream starts
  TypePtr type = part->decoder->type();
  for (size_t depth = 1; depth < parts.size(); ++depth) {
    int index = type->id() == TypeId::kStruct ? type->FieldIndexIgnoreCase(parts[depth]) : -1;
    if (index < 0) {
      return Status::Error(errors::kUnresolvedColumn,
                           "deduplication column '" + column + "' is not in the stream's decoded schema");
    }
    type = type->field(index).type;
  }
  return Status::OK();
}

Status StreamDecodeOperator::RefreshSubject(Part* part, bool opening) {
  const formats::RegistrySubject& subject = *part->subject;
  if (!opening && (subject.version != 0 || std::chrono::steady_clock::now() < part->next_refresh)) return Status::OK();
  if (part->client == nullptr) {
    SLUICE_ASSIGN_OR_RETURN(part->client, formats::SchemaRegistryClient::Make(subject.config));
  }
  part->next_refresh = std::chrono::steady_clock::now() + subject.refresh_interval;
  if (!opening) {
    // Only a new latest schema needs a new decoder; the client caches nothing for `latest`.
    SLUICE_ASSIGN_OR_RETURN(formats::RegisteredSchemaPtr latest, part->client->GetLatest(subject.subject));
    if (latest->id == part->reader_id) return Status::OK();
  }
  Result<formats::SubjectDecoder> made = formats::MakeSubjectDecoder(part->client, subject);
  if (!made.ok()) return made.status().WithContext("stream " + spec_.stream_id + " schema_config." + part->name);
  part->reader_id = made->reader->id;
  part->decoder = std::move(made->decoder);
  return Status::OK();
}

Result<TypePtr> StreamDecodeOperator::Bind(const TypePtr& input) {
  for (std::string_view column : kRecordColumns) {
    if (input->FieldIndex(std::string(column)) < 0) {
      return Status::Error(errors::kInvalidSchema, "stream " + spec_.stream_id + " decodes the kafka source's records, "
                                                   "but its rows have no column " + std::string(column) + ": " +
                                                   input->ToString());
    }
  }
  if (!subjects_opened_) {
    for (Part* part : {&key_, &value_}) {
      if (part->subject) SLUICE_RETURN_IF_ERROR(RefreshSubject(part, true));
    }
    subjects_opened_ = true;
  }
  // The shape of the rows is what an empty piece decodes to (the filter bound to it on the way).
  SLUICE_ASSIGN_OR_RETURN(BatchPtr none, Decode(*RecordBatch::Empty(input)));
  return none->schema();
}

Status StreamDecodeOperator::BeginBatch(const engine::BatchStart& /*batch*/) {
  stats_ = IngestionStats{};
  for (Part* part : {&key_, &value_}) {
    if (part->subject) SLUICE_RETURN_IF_ERROR(RefreshSubject(part, false));
  }
  return Status::OK();
}

Result<BatchPtr> StreamDecodeOperator::Push(const engine::BatchStart& /*batch*/, const BatchPtr& piece) {
  return Decode(*piece);
}

Result<ColumnPtr> StreamDecodeOperator::DecodePart(const ColumnPtr& encoded, Part* part, int64_t* malformed,
                                            std::vector<int64_t>* malformed_rows) {
  ColumnPtr decoded = encoded;
  if (part->as_string) {
    SLUICE_ASSIGN_OR_RETURN(decoded, AsUtf8String(*encoded, malformed, malformed_rows));
  } else if (part->decoder != nullptr) {
    DecodeStats stats;
    SLUICE_ASSIGN_OR_RETURN(decoded, part->decoder->Decode(*encoded, &stats));
    *malformed += stats.malformed;
    stats_.mismatched_fields += stats.mismatched_fields;
    malformed_rows->insert(malformed_rows->end(), stats.malformed_rows.begin(), stats.malformed_rows.end());
  }
  for (const std::string& path : spec_.excluded_columns) {
    std::vector<std::string> parts = SplitFieldPath(path);
    if (parts[0] != part->name) continue;
    Result<ColumnPtr> excluded = Exclude(decoded, parts, 1, path);
    // A registry schema may lack an excluded field (an older or newer version).
    if (!excluded.ok() && part->subject && excluded.status().error_class() == errors::kUnresolvedColumn) continue;
    SLUICE_ASSIGN_OR_RETURN(decoded, std::move(excluded));
  }
  return Relaxed(decoded);
}

Result<BatchPtr> StreamDecodeOperator::Decode(const RecordBatch& batch) {
  const int64_t n = batch.num_rows();
  stats_.records += n;
  SLUICE_ASSIGN_OR_RETURN(ColumnPtr key, batch.ColumnAt("key"));
  SLUICE_ASSIGN_OR_RETURN(ColumnPtr value, batch.ColumnAt("value"));
  SLUICE_ASSIGN_OR_RETURN(ColumnPtr topic, batch.ColumnAt("topic"));
  SLUICE_ASSIGN_OR_RETURN(ColumnPtr partition, batch.ColumnAt("partition"));
  SLUICE_ASSIGN_OR_RETURN(ColumnPtr offset, batch.ColumnAt("offset"));
  SLUICE_ASSIGN_OR_RETURN(ColumnPtr timestamp, batch.ColumnAt("timestamp"));

  std::vector<int64_t> malformed_rows;
  SLUICE_ASSIGN_OR_RETURN(ColumnPtr decoded_key, DecodePart(key, &key_, &stats_.malformed_keys, &malformed_rows));
  SLUICE_ASSIGN_OR_RETURN(ColumnPtr decoded_value,
                          DecodePart(value, &value_, &stats_.malformed_values, &malformed_rows));
  for (int64_t row : malformed_rows) {
    if (stats_.malformed_samples.size() >= DecodeStats::kMaxSampledRows) break;
    stats_.malformed_samples.push_back(std::string(topic->View(row)) + "/" +
                                       std::to_string(partition->Value<int32_t>(row)) + "@" +
                                       std::to_string(offset->Value<int64_t>(row)));
  }

  BinaryBuilder source(DataType::String());
  for (int64_t row = 0; row < n; ++row) source.Append("stream");
  SLUICE_ASSIGN_OR_RETURN(
      TypePtr schema,
      DataType::Struct({Field{"key", decoded_key->type, true}, Field{"value", decoded_value->type, true},
                        Field{"stream_record_timestamp", DataType::Timestamp(), true},
                        Field{"record_source", DataType::String(), false},
                        // Nullable: backfill rows may come without a Kafka place.
                        Field{"kafka_topic", DataType::String(), true},
                        Field{"kafka_partition", DataType::Integer(), true},
                        Field{"kafka_offset", DataType::Long(), true}}));
  SLUICE_ASSIGN_OR_RETURN(BatchPtr out, RecordBatch::Make(schema,
                                                          {decoded_key, decoded_value, timestamp, source.Finish(),
                                                           topic, partition, offset},
                                                          n));
  if (spec_.record_type_filter) {
    // Bound once per decoded shape, not per piece: the shape changes only with a registry schema.
    if (!filter_ || !filter_schema_->Equals(*schema)) {
      SLUICE_ASSIGN_OR_RETURN(expr::Expression filter, expr::Expression::Parse(*spec_.record_type_filter));
      Result<expr::BoundExpression> bound = expr::BindPredicate(filter, schema, spec_.sql);
      if (!bound.ok()) return bound.status().WithContext("stream " + spec_.stream_id + " record_type_filter");
      filter_ = std::move(bound).value();
      filter_schema_ = schema;
    }
    SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> kept, filter_->Filter(*out));
    const int64_t filtered_out = n - static_cast<int64_t>(kept.size());
    stats_.filtered_out += filtered_out;
    if (filtered_out > 0) out = Take(out, kept);
  }
  return out;
}

}  // namespace sluice::pipeline
