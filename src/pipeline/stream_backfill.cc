#include "sluice/pipeline/stream_backfill.h"

#include <algorithm>
#include <limits>

#include "sluice/core/builder.h"
#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "sluice/delta/merge.h"
#include "sluice/delta/scan.h"
#include "sluice/delta/snapshot.h"

namespace sluice::pipeline {
namespace {

constexpr const char* kTimestamp = "stream_record_timestamp";

std::string BackfillAppId(const std::string& stream_id) { return stream_id + "-backfill"; }

// The oldest or newest timestamp of the table's `stream_record_timestamp` column, over the rows
// whose record_source is `source` (every row when empty).
Result<std::optional<int64_t>> Extreme(const delta::SnapshotPtr& snapshot, bool newest, const std::string& source) {
  std::vector<std::string> columns = {kTimestamp};
  if (!source.empty()) columns.push_back("record_source");
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<delta::TableScan> scan, delta::TableScan::Open(snapshot, {.columns = columns}));
  std::optional<int64_t> extreme;
  while (true) {
    SLUICE_ASSIGN_OR_RETURN(BatchPtr batch, scan->Next());
    if (batch == nullptr) return extreme;
    const Column& timestamps = *batch->column(0);
    for (int64_t row = 0; row < batch->num_rows(); ++row) {
      if (timestamps.IsNull(row) || (!source.empty() && batch->column(1)->View(row) != source)) continue;
      int64_t value = timestamps.Value<int64_t>(row);
      if (!extreme || (newest ? value > *extreme : value < *extreme)) extreme = value;
    }
  }
}

}  // namespace

std::vector<std::string> DefaultDeduplicationColumns() { return {"key", "value", kTimestamp}; }

Result<std::unique_ptr<Backfill>> Backfill::Open(std::shared_ptr<FileSystem> fs, BackfillSpec spec) {
  std::unique_ptr<Backfill> backfill(new Backfill(std::move(fs), std::move(spec)));
  SLUICE_ASSIGN_OR_RETURN(bool exists, backfill->fs_->Exists(backfill->spec_.table_path + "/_delta_log"));
  Result<delta::SnapshotPtr> loaded = Status::Error(errors::kDeltaTableNotFound, "no ingestion table yet");
  if (exists) loaded = delta::Snapshot::Load(backfill->fs_, backfill->spec_.table_path);
  // A crash during the first commit leaves a _delta_log without commits: no table yet.
  if (!loaded.ok() && loaded.status().error_class() != errors::kDeltaTableNotFound) return loaded.status();
  if (loaded.ok()) {
    const delta::SnapshotPtr& table = *loaded;
    if (table->transactions().count(BackfillAppId(backfill->spec_.stream_id))) {
      backfill->done_ = true;
      return backfill;
    }
    SLUICE_ASSIGN_OR_RETURN(backfill->stream_min_us_, Extreme(table, false, "stream"));
  }
  SLUICE_ASSIGN_OR_RETURN(delta::SnapshotPtr history, delta::Snapshot::Load(backfill->fs_, backfill->spec_.backfill_path));
  if (history->schema()->FieldIndexIgnoreCase(kTimestamp) < 0) {
    return Status::Error(errors::kUnresolvedColumn, "the backfill table " + backfill->spec_.backfill_path +
                                                        " has no stream_record_timestamp column");
  }
  SLUICE_ASSIGN_OR_RETURN(backfill->backfill_max_us_, Extreme(history, true, ""));
  return backfill;
}

Result<std::optional<int64_t>> Backfill::RunIfDue(std::optional<int64_t> written_min_us, int64_t now_us) {
  if (done_) return std::optional<int64_t>();
  if (written_min_us && (!stream_min_us_ || *written_min_us < *stream_min_us_)) stream_min_us_ = written_min_us;
  if (!stream_min_us_) return std::optional<int64_t>();  // nothing ingested yet to overlap with
  const bool overlaps = backfill_max_us_ && *backfill_max_us_ - *stream_min_us_ >= spec_.overlap.count();
  const bool waited_enough = now_us - *stream_min_us_ >= spec_.max_wait.count();
  if (!overlaps && !waited_enough) return std::optional<int64_t>();
  SLUICE_ASSIGN_OR_RETURN(int64_t inserted, Merge());
  done_ = true;
  return std::optional<int64_t>(inserted);
}

Result<int64_t> Backfill::Merge() {
  SLUICE_ASSIGN_OR_RETURN(delta::SnapshotPtr table, delta::Snapshot::Load(fs_, spec_.table_path));
  SLUICE_ASSIGN_OR_RETURN(delta::SnapshotPtr history, delta::Snapshot::Load(fs_, spec_.backfill_path));
  std::vector<std::string> columns;
  std::vector<Field> missing;  // ingestion columns the history lacks: null, of the table's type
  for (const char* name : {"key", "value", kTimestamp, "kafka_topic", "kafka_partition", "kafka_offset"}) {
    int index = history->schema()->FieldIndexIgnoreCase(name);
    if (index >= 0) {
      columns.push_back(history->schema()->field(index).name);
    } else if (int in_table = table->schema()->FieldIndexIgnoreCase(name); in_table >= 0) {
      missing.push_back(table->schema()->field(in_table));
    }
  }
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<delta::TableScan> scan, delta::TableScan::Open(history, {.columns = columns}));
  // Each history batch as ingestion rows: the missing columns null, record_source 'backfill'.
  std::vector<Field> fields = scan->schema()->fields();
  for (const Field& field : missing) fields.push_back(Field{field.name, field.type, true});
  fields.push_back(Field{"record_source", DataType::String(), true});
  SLUICE_ASSIGN_OR_RETURN(TypePtr schema, DataType::Struct(std::move(fields)));
  auto next = [&]() -> Result<BatchPtr> {
    SLUICE_ASSIGN_OR_RETURN(BatchPtr batch, scan->Next());
    if (batch == nullptr) return BatchPtr();
    const int64_t n = batch->num_rows();
    std::vector<ColumnPtr> data = batch->columns();
    for (const Field& field : missing) data.push_back(MakeNullColumn(field.type, n));
    BinaryBuilder source(DataType::String());
    for (int64_t row = 0; row < n; ++row) source.Append("backfill");
    data.push_back(source.Finish());
    return RecordBatch::Make(schema, std::move(data), n);
  };
  delta::MergeOptions options;
  options.key_columns = spec_.deduplication_columns.empty() ? DefaultDeduplicationColumns() : spec_.deduplication_columns;
  options.transactions = {delta::SetTransaction{BackfillAppId(spec_.stream_id), 0, std::nullopt}};
  Result<delta::WriteResult> merged = delta::InsertNewRowsFrom(fs_, spec_.table_path, schema, next, options);
  if (!merged.ok()) return merged.status().WithContext("backfill of stream " + spec_.stream_id);
  return merged->skipped ? int64_t{0} : merged->num_rows;
}

}  // namespace sluice::pipeline
