#include "sluice/pipeline/ingestion_sink.h"

#include <simdjson.h>

#include <algorithm>
#include <map>

#include "sluice/core/builder.h"
#include "sluice/core/compute.h"
#include "sluice/core/ascii.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/utf8.h"
#include "sluice/core/json_text.h"
#include "sluice/delta/snapshot.h"
#include "sluice/delta/table_writer.h"
#include "sluice/delta/writer.h"
#include "sluice/expr/expression.h"

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

}  // namespace

std::string IngestionAppId(const std::string& stream_id, std::string_view topic, int32_t partition) {
  return stream_id + "-" + std::string(topic) + "-" + std::to_string(partition);
}

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

Status IngestionSink::MakePart(const std::optional<formats::DecoderSpec>& schema, Part* part) {
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

Status IngestionSink::CheckDeduplicationColumn(const std::string& column) const {
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

Result<std::unique_ptr<IngestionSink>> IngestionSink::Make(IngestionSpec spec, std::shared_ptr<FileSystem> fs) {
  std::unique_ptr<IngestionSink> sink(new IngestionSink(std::move(spec), std::move(fs)));
  SLUICE_RETURN_IF_ERROR(sink->MakePart(sink->spec_.key_schema, &sink->key_));
  SLUICE_RETURN_IF_ERROR(sink->MakePart(sink->spec_.value_schema, &sink->value_));
  if (sink->spec_.record_type_filter) {
    SLUICE_RETURN_IF_ERROR(expr::Expression::Parse(*sink->spec_.record_type_filter).status());
  }
  if (sink->spec_.backfill) {
    for (const std::string& column : sink->spec_.backfill->deduplication_columns) {
      SLUICE_RETURN_IF_ERROR(sink->CheckDeduplicationColumn(column));
    }
  }
  // Exclusions are checked against empty columns of the decoded types; a registry schema is not
  // known before the stream starts.
  for (const std::string& path : sink->spec_.excluded_columns) {
    std::vector<std::string> parts = SplitFieldPath(path);
    const Part* part = parts[0] == "key" ? &sink->key_ : parts[0] == "value" ? &sink->value_ : nullptr;
    if (part != nullptr && part->subject) continue;
    if (parts.size() < 2 || part == nullptr || part->decoder == nullptr) {
      return Status::Error(errors::kUnresolvedColumn, "excluded column '" + path +
                                                          "' must be a path into a decoded key or value "
                                                          "(key.<field> or value.<field>)");
    }
    SLUICE_RETURN_IF_ERROR(Exclude(MakeNullColumn(part->decoder->type(), 0), parts, 1, path).status());
  }
  return sink;
}

Status IngestionSink::RefreshSubject(Part* part, bool opening) {
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

Status IngestionSink::Open(const engine::SinkContext&) {
  for (Part* part : {&key_, &value_}) {
    if (part->subject) SLUICE_RETURN_IF_ERROR(RefreshSubject(part, true));
  }
  if (spec_.backfill) {
    SLUICE_ASSIGN_OR_RETURN(backfill_, Backfill::Open(fs_, *spec_.backfill));
    SLUICE_RETURN_IF_ERROR(RunBackfillIfDue(std::nullopt));
  }
  return Status::OK();
}

Status IngestionSink::RunBackfillIfDue(std::optional<int64_t> written_min_us) {
  if (backfill_ == nullptr || backfill_->done()) return Status::OK();
  const int64_t now_us = std::chrono::duration_cast<std::chrono::microseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  SLUICE_ASSIGN_OR_RETURN(std::optional<int64_t> inserted, backfill_->RunIfDue(written_min_us, now_us));
  if (inserted) unreported_backfill_ = inserted;
  return Status::OK();
}

Result<ColumnPtr> IngestionSink::DecodePart(const ColumnPtr& encoded, Part* part, int64_t* malformed,
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

Status IngestionSink::BeginBatchStats() {
  stats_ = IngestionStats{};
  // Registry schemas are refreshed between batches, so all pieces of one decode alike.
  for (Part* part : {&key_, &value_}) {
    if (part->subject) SLUICE_RETURN_IF_ERROR(RefreshSubject(part, false));
  }
  return Status::OK();
}

Result<BatchPtr> IngestionSink::Prepare(const RecordBatch& batch, PartitionEnds* ends) {
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

  // The highest offset of each topic-partition. Rows come in runs of one partition, so the
  // previous row's entry is tried first and the map is searched rarely.
  int64_t* last = nullptr;
  std::string_view last_topic;
  int32_t last_partition = -1;
  for (int64_t row = 0; row < n; ++row) {
    std::string_view t = topic->View(row);
    int32_t p = partition->Value<int32_t>(row);
    int64_t o = offset->Value<int64_t>(row);
    if (last == nullptr || p != last_partition || t != last_topic) {
      auto [it, inserted] = ends->try_emplace({std::string(t), p}, o);
      last = &it->second;
      last_topic = t;
      last_partition = p;
    }
    *last = std::max(*last, o);
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

// Decodes each piece as it comes (beside the source reading the next one) and writes it into
// the table's data files at once; the batch is committed once, with one txn per topic-partition.
class IngestionSink::PieceWriter final : public engine::BatchWriter {
 public:
  // `ends` null: the writer keeps them itself.
  PieceWriter(IngestionSink* sink, std::optional<OwnedPartitions> owned, PartitionEnds* ends)
      : sink_(sink), owned_(std::move(owned)), ends_(ends != nullptr ? ends : &own_ends_) {}

  Status Add(BatchPtr piece) override {
    SLUICE_ASSIGN_OR_RETURN(BatchPtr out, sink_->Prepare(*piece, ends_));
    if (table_ == nullptr) {
      delta::WriteOptions options;
      options.operation = std::string(delta::kOperationStreamingUpdate);
      options.operation_parameters = {{"outputMode", "Append"}, {"streamId", sink_->spec_.stream_id}};
      // Fields a newer schema adds become new nullable columns; rows written before read them null.
      // A field it widens (int to long) widens its column (Delta's typeWidening).
      options.merge_schema = true;
      options.widen_types = true;
      if (owned_) {
        for (const auto& [place, version] : *owned_) {
          options.expected_transactions.emplace_back(
              IngestionAppId(sink_->spec_.stream_id, place.first, place.second), version);
        }
      }
      Result<std::unique_ptr<delta::TableWriter>> started =
          delta::TableWriter::Start(sink_->fs_, sink_->spec_.table_path, out->schema(), std::move(options));
      if (!started.ok()) return started.status().WithContext(sink_->description());
      table_ = std::move(started).value();
    }
    if (sink_->backfill_ != nullptr && !sink_->backfill_->done()) {
      const Column& timestamps = *out->column(2);
      for (int64_t row = 0; row < out->num_rows(); ++row) {
        if (timestamps.IsValid(row) && (!written_min_us_ || timestamps.Value<int64_t>(row) < *written_min_us_)) {
          written_min_us_ = timestamps.Value<int64_t>(row);
        }
      }
    }
    Status written = table_->Write(out);
    return written.ok() ? written : written.WithContext(sink_->description());
  }

  Status Commit() override {
    if (ends_->empty()) return Status::OK();
    std::vector<delta::SetTransaction> transactions;
    for (const auto& [place, last_offset] : *ends_) {
      transactions.push_back(
          delta::SetTransaction{IngestionAppId(sink_->spec_.stream_id, place.first, place.second), last_offset, std::nullopt});
    }
    Result<delta::WriteResult> committed = table_->Commit(std::move(transactions));
    if (!committed.ok()) return committed.status().WithContext(sink_->description());
    return sink_->RunBackfillIfDue(written_min_us_);
  }

 private:
  IngestionSink* sink_;
  const std::optional<OwnedPartitions> owned_;
  std::unique_ptr<delta::TableWriter> table_;
  PartitionEnds own_ends_;
  PartitionEnds* ends_;
  std::optional<int64_t> written_min_us_;
};

Result<std::unique_ptr<engine::BatchWriter>> IngestionSink::BeginBatch(int64_t, TypePtr) {
  SLUICE_RETURN_IF_ERROR(BeginBatchStats());
  return std::unique_ptr<engine::BatchWriter>(new PieceWriter(this, std::nullopt, nullptr));
}

Result<std::unique_ptr<engine::BatchWriter>> IngestionSink::BeginOwnedBatch(OwnedPartitions owned,
                                                                           PartitionEnds* ends) {
  SLUICE_RETURN_IF_ERROR(BeginBatchStats());
  return std::unique_ptr<engine::BatchWriter>(new PieceWriter(this, std::move(owned), ends));
}

Result<std::optional<std::string>> ResumeOffsets(std::shared_ptr<FileSystem> fs, const std::string& table_path,
                                                 const std::string& stream_id) {
  SLUICE_ASSIGN_OR_RETURN(bool exists, fs->Exists(table_path + "/_delta_log"));
  if (!exists) return std::optional<std::string>();
  Result<delta::SnapshotPtr> loaded = delta::Snapshot::Load(fs, table_path);
  // A crash during the first commit leaves a _delta_log without commits: no table yet.
  if (!loaded.ok() && loaded.status().error_class() == errors::kDeltaTableNotFound) return std::optional<std::string>();
  SLUICE_ASSIGN_OR_RETURN(delta::SnapshotPtr snapshot, std::move(loaded));
  // appId = <stream id>-<topic>-<partition>; the topic may itself contain '-', the partition not.
  std::map<std::string, std::map<int32_t, int64_t>> next;
  const std::string prefix = stream_id + "-";
  for (const auto& [app_id, txn] : snapshot->transactions()) {
    if (app_id.compare(0, prefix.size(), prefix) != 0) continue;
    size_t dash = app_id.rfind('-');
    if (dash == std::string::npos || dash < prefix.size()) continue;
    std::string topic = app_id.substr(prefix.size(), dash - prefix.size());
    int32_t partition = 0;
    std::string digits = app_id.substr(dash + 1);
    if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    partition = std::stoi(digits);
    next[topic][partition] = txn.version + 1;
  }
  if (next.empty()) return std::optional<std::string>();
  std::string json = "{";
  for (const auto& [topic, partitions] : next) {
    if (json.size() > 1) json += ',';
    json += JsonString(topic) + ":{";
    bool first = true;
    for (const auto& [partition, offset] : partitions) {
      json += (first ? "\"" : ",\"") + std::to_string(partition) + "\":" + std::to_string(offset);
      first = false;
    }
    json += '}';
  }
  return std::optional<std::string>(json + "}");
}

}  // namespace sluice::pipeline
