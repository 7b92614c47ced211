// The sink of a stream: Kafka records (as the `kafka` source reads them) decoded, filtered and
// trimmed into a Delta *ingestion table* with the columns
//
//   key, value                 structs decoded by the stream's schemas (binary when no schema)
//   stream_record_timestamp    the record's Kafka timestamp
//   record_source              'stream' (a backfill writes 'backfill')
//   kafka_topic, kafka_partition, kafka_offset
//
// Decoding is permissive: a record that cannot be decoded keeps its row with a null key or value,
// and is counted (last_stats()). A key or value whose schema lives in a Schema Registry reads the
// subject's schema when the sink opens (latest, or a pinned version) and looks the latest up again
// every schema_refresh_interval, between batches, so no record is decoded twice or skipped; the
// table's schema grows with the fields a newer schema adds (Delta mergeSchema). The record_type_filter (a SQL boolean over `key.*` and
// `value.*`) drops the records it does not pass; excluded columns (dot paths into key or value)
// are removed from the structs before writing.
//
// Exactly once without the engine's help: every commit carries one `txn` per topic-partition of
// the batch (appId `<stream id>-<topic>-<partition>`, version the highest offset read, filtered
// records included), and a batch whose txns the table already holds is skipped. ResumeOffsets
// turns those txns back into the `kafka` source's starting offsets, so the table alone says where
// ingestion stands.
//
// With a backfill (stream_backfill.h), the sink merges it once it is due: when it opens and after
// each batch it writes.
//
// Used from the query's thread only.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sluice/core/file_system.h"
#include "sluice/core/status.h"
#include "sluice/engine/sink.h"
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

// The appId of a stream's progress in one topic-partition: `<stream id>-<topic>-<partition>`.
std::string IngestionAppId(const std::string& stream_id, std::string_view topic, int32_t partition);

// The ingestion of a stream of a pipeline (INVALID_PIPELINE when its table or backfill_source is
// not catalog.schema.table, INVALID_OPTIONS for a backfill duration that does not parse).
Result<IngestionSpec> IngestionSpecOf(const PipelineSpec& pipeline, const StreamSpec& stream);

// What the last batch's decoding met.
struct IngestionStats {
  int64_t records = 0;
  int64_t filtered_out = 0;
  int64_t malformed_keys = 0;
  int64_t malformed_values = 0;
  // Fields of a kept key or value nulled because their type was not the schema's.
  int64_t mismatched_fields = 0;
  std::vector<std::string> malformed_samples;  // "topic/partition@offset" of the first few
};

class IngestionSink : public engine::Sink {
 public:
  // Builds the decoders (the schemas' error classes), parses the filter (PARSE_SYNTAX_ERROR) and
  // checks the exclusions against the decoded types (UNRESOLVED_COLUMN), before any data moves.
  // Registry schemas are only checked for their options here (INVALID_OPTIONS): the registry is
  // first asked in Open(), and exclusions absent from a registry schema are ignored.
  static Result<std::unique_ptr<IngestionSink>> Make(IngestionSpec spec, std::shared_ptr<FileSystem> fs);

  std::string description() const override { return "IngestionSink[" + spec_.table_path + "]"; }
  std::vector<engine::OutputMode> supported_output_modes() const override { return {engine::OutputMode::kAppend}; }
  // Fetches the registry schemas (SCHEMA_REGISTRY_* errors, INVALID_OPTIONS for a subject of
  // another format than declared).
  Status Open(const engine::SinkContext& context) override;
  // Decodes each piece of the batch as the source hands it over and writes it into the table's
  // data files at once; the batch is committed once.
  Result<std::unique_ptr<engine::BatchWriter>> BeginBatch(int64_t batch_id, TypePtr schema) override;

  // The last offset recorded in the table for each (topic, partition), nullopt for none.
  using OwnedPartitions = std::map<std::pair<std::string, int32_t>, std::optional<int64_t>>;
  // The highest offset of each (topic, partition) of a batch.
  using PartitionEnds = std::map<std::pair<std::string, int32_t>, int64_t>;
  // As BeginBatch, for a member of a workers group that owns `owned`: the batch commits only
  // while the table still records what `owned` says for every partition (DELTA_CONCURRENT_
  // MODIFICATION otherwise, or when another member records progress for one of them meanwhile).
  // The writer keeps the highest offset of each partition it was given in `*ends` (the progress
  // its commit records), which must outlive it.
  Result<std::unique_ptr<engine::BatchWriter>> BeginOwnedBatch(OwnedPartitions owned, PartitionEnds* ends);

  const IngestionStats& last_stats() const { return stats_; }
  // The rows the backfill merge inserted, once, after it ran (when the sink opened or after a
  // batch); nullopt otherwise. Called from the query's thread.
  std::optional<int64_t> TakeBackfillMerge() { return std::exchange(unreported_backfill_, std::nullopt); }

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

  IngestionSink(IngestionSpec spec, std::shared_ptr<FileSystem> fs) : spec_(std::move(spec)), fs_(std::move(fs)) {}
  Status MakePart(const std::optional<formats::DecoderSpec>& schema, Part* part);
  // UNRESOLVED_COLUMN unless `column` is a column of the ingestion table or a path into a decoded
  // key or value (checked against its schema unless a registry holds it), and not excluded.
  Status CheckDeduplicationColumn(const std::string& column) const;
  Status RefreshSubject(Part* part, bool opening);
  Status RunBackfillIfDue(std::optional<int64_t> written_min_us);
  class PieceWriter;
  // Resets stats_ for a new batch and refreshes registry schemas that are due.
  Status BeginBatchStats();
  // The ingestion table rows of `batch` (decoded, filtered, trimmed); adds to stats_ and `ends`.
  Result<BatchPtr> Prepare(const RecordBatch& batch, PartitionEnds* ends);

  Result<ColumnPtr> DecodePart(const ColumnPtr& encoded, Part* part, int64_t* malformed,
                               std::vector<int64_t>* malformed_rows);

  IngestionSpec spec_;
  std::shared_ptr<FileSystem> fs_;
  Part key_ = NamedPart("key");
  Part value_ = NamedPart("value");
  // The record_type_filter bound to the rows' schema `filter_schema_`.
  std::optional<expr::BoundExpression> filter_;
  TypePtr filter_schema_;
  std::unique_ptr<Backfill> backfill_;
  IngestionStats stats_;
  std::optional<int64_t> unreported_backfill_;
};

// The `kafka` source's starting_offsets JSON ({"topic":{"0":42}}, next offset per partition) for
// the partitions the ingestion table holds txns of for `stream_id`; nullopt when the table does
// not exist or holds none.
Result<std::optional<std::string>> ResumeOffsets(std::shared_ptr<FileSystem> fs, const std::string& table_path,
                                                 const std::string& stream_id);

}  // namespace sluice::pipeline
