// The ingestion of a stream, and its first step: Kafka records (as the `kafka` source reads them)
// decoded, filtered and trimmed into the rows of the stream's Delta *ingestion table*:
//
//   key, value                 structs decoded by the stream's schemas (binary when no schema)
//   stream_record_timestamp    the record's Kafka timestamp
//   record_source              'stream' (a backfill writes 'backfill')
//   kafka_topic, kafka_partition, kafka_offset
//
// Decoding is permissive: a record that cannot be decoded keeps its row with a null key or value,
// and is counted (last_stats()). A key or value whose schema lives in a Schema Registry reads the
// subject's schema when the operator is first bound (latest, or a pinned version) and looks the
// latest up again every schema_refresh_interval, between batches, so no record is decoded twice or
// skipped; the rows then have the newer shape (the ingestion sink grows the table's schema). The
// record_type_filter (a SQL boolean over `key.*` and `value.*`) drops the records it does not
// pass; excluded columns (dot paths into key or value) are removed from the structs.
//
// The engine runs StreamDecodeOperator as the first operator of a stream's query, before its
// IngestionSink (ingestion_sink.h); a workers group drives both itself (group_ingestion.h).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sluice/core/status.h"
#include "sluice/engine/operator.h"
#include "sluice/expr/expression.h"
#include "sluice/formats/decoder.h"
#include "sluice/formats/registry_decoder.h"
#include "sluice/pipeline/pipeline_spec.h"
#include "sluice/pipeline/stream_backfill.h"

namespace sluice::pipeline {

struct IngestionSpec {
  std::string stream_id;   // the stream's name, catalog.schema.stream
  std::string table_path;  // the ingestion table's directory
  std::optional<formats::DecoderSpec> key_schema;
  std::optional<formats::DecoderSpec> value_schema;
  // The one topic the stream subscribes to (empty when several or a pattern): the subject of
  // registry schemas under TopicNameStrategy.
  std::string topic;
  std::optional<std::string> record_type_filter;
  expr::SqlOptions sql;  // how record_type_filter is typed and evaluated (the pipeline's sql:)
  std::vector<std::string> excluded_columns;  // "value.card.number", "key.region"
  std::optional<BackfillSpec> backfill;
};

// The ingestion of a stream of a pipeline (INVALID_PIPELINE when its table or backfill_source is
// not catalog.schema.table, INVALID_OPTIONS for a backfill duration that does not parse).
Result<IngestionSpec> IngestionSpecOf(const PipelineSpec& pipeline, const StreamSpec& stream);

// What a batch's decoding met.
struct IngestionStats {
  int64_t records = 0;
  int64_t filtered_out = 0;
  int64_t malformed_keys = 0;
  int64_t malformed_values = 0;
  // Fields of a kept key or value nulled because their type was not the schema's.
  int64_t mismatched_fields = 0;
  std::vector<std::string> malformed_samples;  // "topic/partition@offset" of the first few
};

class StreamDecodeOperator final : public engine::Operator {
 public:
  // Builds the decoders (the schemas' error classes), parses the filter (PARSE_SYNTAX_ERROR) and
  // checks the exclusions and the backfill's deduplication columns against the decoded types
  // (UNRESOLVED_COLUMN), before any data moves. Registry schemas are only checked for their
  // options here (INVALID_OPTIONS): the registry is first asked by Bind, and paths absent from a
  // registry schema are not checked.
  static Result<std::unique_ptr<StreamDecodeOperator>> Make(IngestionSpec spec);

  std::string_view name() const override { return "decode"; }
  // The input must have the `kafka` source's columns (INVALID_SCHEMA otherwise). The first Bind
  // fetches registry schemas (SCHEMA_REGISTRY_* errors, INVALID_OPTIONS for a subject of another
  // format than declared); the filter's binding errors come from here.
  Result<TypePtr> Bind(const TypePtr& input) override;
  // Starts the batch's figures and looks up registry schemas that are due, so that every piece of
  // a batch decodes alike.
  Status BeginBatch(const engine::BatchStart& batch) override;
  Result<BatchPtr> Push(const engine::BatchStart& batch, const BatchPtr& piece) override;

  // The figures of the batch so far (of the last one after it ended).
  const IngestionStats& last_stats() const { return stats_; }

 private:
  // How the key or the value is decoded.
  struct Part {
    std::string name;  // "key" or "value"
    std::unique_ptr<formats::Decoder> decoder;  // null: kept as a string, or as binary (format: binary)
    bool as_string = false;                     // no schema: the bytes as a UTF-8 string
    // Registry schemas only.
    std::optional<formats::RegistrySubject> subject;
    std::shared_ptr<formats::SchemaRegistryClient> client;
    int32_t reader_id = 0;
    std::chrono::steady_clock::time_point next_refresh;
  };

  static Part NamedPart(std::string name) {
    Part part;
    part.name = std::move(name);
    return part;
  }

  explicit StreamDecodeOperator(IngestionSpec spec) : spec_(std::move(spec)) {}
  Status MakePart(const std::optional<formats::DecoderSpec>& schema, Part* part);
  // UNRESOLVED_COLUMN unless `column` is a column of the ingestion table or a path into a decoded
  // key or value (checked against its schema unless a registry holds it), and not excluded.
  Status CheckDeduplicationColumn(const std::string& column) const;
  Status RefreshSubject(Part* part, bool opening);
  // The ingestion table rows of `records` (decoded, filtered, trimmed); adds to stats_.
  Result<BatchPtr> Decode(const RecordBatch& records);
  Result<ColumnPtr> DecodePart(const ColumnPtr& encoded, Part* part, int64_t* malformed,
                               std::vector<int64_t>* malformed_rows);

  IngestionSpec spec_;
  Part key_ = NamedPart("key");
  Part value_ = NamedPart("value");
  bool subjects_opened_ = false;
  // The record_type_filter bound to the rows' schema `filter_schema_`.
  std::optional<expr::BoundExpression> filter_;
  TypePtr filter_schema_;
  IngestionStats stats_;
};

}  // namespace sluice::pipeline
