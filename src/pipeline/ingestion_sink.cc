#include "sluice/pipeline/ingestion_sink.h"

#include <simdjson.h>

#include <algorithm>
#include <map>

#include "sluice/core/builder.h"
#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/json_text.h"
#include "sluice/delta/snapshot.h"
#include "sluice/delta/writer.h"
#include "sluice/expr/expression.h"

namespace sluice::pipeline {
namespace {

std::vector<std::string> SplitPath(const std::string& path) {
  std::vector<std::string> parts;
  size_t begin = 0;
  while (true) {
    size_t dot = path.find('.', begin);
    parts.push_back(path.substr(begin, dot == std::string::npos ? std::string::npos : dot - begin));
    if (dot == std::string::npos) return parts;
    begin = dot + 1;
  }
}

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

struct PartitionEnd {
  std::string_view topic;
  int32_t partition;
  int64_t last_offset;
};

std::string AppId(const std::string& stream_id, std::string_view topic, int32_t partition) {
  return stream_id + "-" + std::string(topic) + "-" + std::to_string(partition);
}

}  // namespace

Result<IngestionSpec> IngestionSpecOf(const PipelineSpec& pipeline, const StreamSpec& stream) {
  IngestionSpec spec;
  spec.stream_id = stream.name;
  SLUICE_ASSIGN_OR_RETURN(spec.table_path, pipeline.TablePath(stream.table));
  spec.key_schema = stream.key_schema;
  spec.value_schema = stream.value_schema;
  spec.record_type_filter = stream.record_type_filter;
  spec.excluded_columns = stream.excluded_columns;
  return spec;
}

Result<std::unique_ptr<IngestionSink>> IngestionSink::Make(IngestionSpec spec, std::shared_ptr<FileSystem> fs) {
  std::unique_ptr<IngestionSink> sink(new IngestionSink(std::move(spec), std::move(fs)));
  if (sink->spec_.key_schema) {
    SLUICE_ASSIGN_OR_RETURN(sink->key_decoder_, formats::MakeDecoder(*sink->spec_.key_schema));
  }
  if (sink->spec_.value_schema) {
    SLUICE_ASSIGN_OR_RETURN(sink->value_decoder_, formats::MakeDecoder(*sink->spec_.value_schema));
  }
  if (sink->spec_.record_type_filter) {
    SLUICE_RETURN_IF_ERROR(expr::Expression::Parse(*sink->spec_.record_type_filter).status());
  }
  // Exclusions are checked against empty columns of the decoded types.
  for (const std::string& path : sink->spec_.excluded_columns) {
    std::vector<std::string> parts = SplitPath(path);
    formats::Decoder* decoder = parts[0] == "key" ? sink->key_decoder_.get()
                                : parts[0] == "value" ? sink->value_decoder_.get()
                                                      : nullptr;
    if (parts.size() < 2 || decoder == nullptr) {
      return Status::Error(errors::kUnresolvedColumn, "excluded column '" + path +
                                                          "' must be a path into a decoded key or value "
                                                          "(key.<field> or value.<field>)");
    }
    SLUICE_RETURN_IF_ERROR(Exclude(MakeNullColumn(decoder->type(), 0), parts, 1, path).status());
  }
  return sink;
}

Status IngestionSink::Open(const engine::SinkContext&) { return Status::OK(); }

Result<ColumnPtr> IngestionSink::DecodePart(const ColumnPtr& encoded, formats::Decoder* decoder,
                                            const std::string& part, int64_t* malformed,
                                            std::vector<int64_t>* malformed_rows) {
  ColumnPtr decoded = encoded;
  if (decoder != nullptr) {
    formats::DecodeStats stats;
    SLUICE_ASSIGN_OR_RETURN(decoded, decoder->Decode(*encoded, &stats));
    *malformed += stats.malformed;
    malformed_rows->insert(malformed_rows->end(), stats.malformed_rows.begin(), stats.malformed_rows.end());
  }
  for (const std::string& path : spec_.excluded_columns) {
    std::vector<std::string> parts = SplitPath(path);
    if (parts[0] != part) continue;
    SLUICE_ASSIGN_OR_RETURN(decoded, Exclude(decoded, parts, 1, path));
  }
  return decoded;
}

Status IngestionSink::AddBatch(int64_t, const RecordBatch& batch) {
  const int64_t n = batch.num_rows();
  stats_ = IngestionStats{};
  stats_.records = n;
  SLUICE_ASSIGN_OR_RETURN(ColumnPtr key, batch.ColumnAt("key"));
  SLUICE_ASSIGN_OR_RETURN(ColumnPtr value, batch.ColumnAt("value"));
  SLUICE_ASSIGN_OR_RETURN(ColumnPtr topic, batch.ColumnAt("topic"));
  SLUICE_ASSIGN_OR_RETURN(ColumnPtr partition, batch.ColumnAt("partition"));
  SLUICE_ASSIGN_OR_RETURN(ColumnPtr offset, batch.ColumnAt("offset"));
  SLUICE_ASSIGN_OR_RETURN(ColumnPtr timestamp, batch.ColumnAt("timestamp"));

  std::vector<int64_t> malformed_rows;
  SLUICE_ASSIGN_OR_RETURN(ColumnPtr decoded_key,
                          DecodePart(key, key_decoder_.get(), "key", &stats_.malformed_keys, &malformed_rows));
  SLUICE_ASSIGN_OR_RETURN(ColumnPtr decoded_value, DecodePart(value, value_decoder_.get(), "value",
                                                              &stats_.malformed_values, &malformed_rows));
  for (int64_t row : malformed_rows) {
    if (stats_.malformed_samples.size() >= formats::DecodeStats::kMaxSampledRows) break;
    stats_.malformed_samples.push_back(std::string(topic->View(row)) + "/" +
                                       std::to_string(partition->Value<int32_t>(row)) + "@" +
                                       std::to_string(offset->Value<int64_t>(row)));
  }

  // The highest offset of each topic-partition: a handful per batch, so a linear search.
  std::vector<PartitionEnd> ends;
  for (int64_t row = 0; row < n; ++row) {
    std::string_view t = topic->View(row);
    int32_t p = partition->Value<int32_t>(row);
    int64_t o = offset->Value<int64_t>(row);
    auto it = std::find_if(ends.begin(), ends.end(), [&](const PartitionEnd& e) { return e.partition == p && e.topic == t; });
    if (it == ends.end()) {
      ends.push_back({t, p, o});
    } else if (o > it->last_offset) {
      it->last_offset = o;
    }
  }

  BinaryBuilder source(DataType::String());
  for (int64_t row = 0; row < n; ++row) source.Append("stream");
  SLUICE_ASSIGN_OR_RETURN(
      TypePtr schema,
      DataType::Struct({Field{"key", decoded_key->type, true}, Field{"value", decoded_value->type, true},
                        Field{"stream_record_timestamp", DataType::Timestamp(), true},
                        Field{"record_source", DataType::String(), false},
                        Field{"kafka_topic", DataType::String(), false},
                        Field{"kafka_partition", DataType::Integer(), false},
                        Field{"kafka_offset", DataType::Long(), false}}));
  SLUICE_ASSIGN_OR_RETURN(BatchPtr out, RecordBatch::Make(schema,
                                                          {decoded_key, decoded_value, timestamp, source.Finish(),
                                                           topic, partition, offset},
                                                          n));
  if (spec_.record_type_filter) {
    SLUICE_ASSIGN_OR_RETURN(expr::Expression filter, expr::Expression::Parse(*spec_.record_type_filter));
    Result<expr::BoundExpression> bound = expr::BindPredicate(filter, schema);
    if (!bound.ok()) return bound.status().WithContext("stream " + spec_.stream_id + " record_type_filter");
    SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> kept, bound->Filter(*out));
    stats_.filtered_out = n - static_cast<int64_t>(kept.size());
    if (stats_.filtered_out > 0) out = Take(out, kept);
  }

  delta::WriteOptions options;
  options.operation = std::string(delta::kOperationStreamingUpdate);
  options.operation_parameters = {{"outputMode", "Append"}, {"streamId", spec_.stream_id}};
  for (const PartitionEnd& end : ends) {
    options.transactions.push_back(delta::SetTransaction{AppId(spec_.stream_id, end.topic, end.partition),
                                                         end.last_offset, std::nullopt});
  }
  if (options.transactions.empty()) return Status::OK();
  Result<delta::WriteResult> written = delta::WriteTable(fs_, spec_.table_path, {out}, options);
  return written.ok() ? Status::OK() : written.status().WithContext(description());
}

Result<std::optional<std::string>> ResumeOffsets(std::shared_ptr<FileSystem> fs, const std::string& table_path,
                                                 const std::string& stream_id) {
  SLUICE_ASSIGN_OR_RETURN(bool exists, fs->Exists(table_path + "/_delta_log"));
  if (!exists) return std::optional<std::string>();
  SLUICE_ASSIGN_OR_RETURN(delta::SnapshotPtr snapshot, delta::Snapshot::Load(fs, table_path));
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
