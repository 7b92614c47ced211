#include "sluice/connectors/postgres_sink.h"

#include <future>

#include "sluice/connectors/pg_batch_source.h"
#include "sluice/connectors/pg_connection.h"
#include "sluice/connectors/pg_real_time_writer.h"
#include "sluice/connectors/pg_upsert_writer.h"
#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"

namespace sluice::connectors {

namespace {

constexpr std::string_view kWriteModes[] = {"append", "overwrite", "errorifexists", "ignore"};

std::vector<std::string> SplitKey(std::string_view text);

std::string TableNameProblem(std::string_view text) {
  Result<TableName> table = ParseTableName(text);
  return table.ok() ? "" : std::string(table.status().message());
}

std::string KeyProblem(std::string_view text) {
  for (const std::string& column : SplitKey(text)) {
    if (column.empty()) return "has an empty column name";
  }
  return "";
}

constexpr auto kOptions = WithPgConnectionOptions({
    {"dbtable", OptionType::kString, std::nullopt, true,
     "Target table, `table` or `schema.table` (schema public by default); simple identifiers only.", {}, std::nullopt,
     std::nullopt, TableNameProblem},
    {"upsertkey", OptionType::kString, std::nullopt, false,
     "Comma-separated key columns; must equal the table's primary key. Inferred from it when omitted.", {},
     std::nullopt, std::nullopt, KeyProblem},
    {"batchsize", OptionType::kInt, "1000", false, "Most rows per database transaction.", {}, 1},
    {"batchinterval", OptionType::kDuration, "100 milliseconds", false, "Longest a row waits in the buffer.", {}, 1},
    {"checkpointLocation", OptionType::kString, std::nullopt, true, "The query's checkpoint directory; unique per query."},
    {"tasks_per_connection", OptionType::kInt, "1", false, "Parallel writer tasks, one connection each.", {}, 1, 64},
    {"maxretries", OptionType::kInt, "8", false, "Retries of a transient failure before the query fails.", {}, 0},
    {"mode", OptionType::kEnum, std::nullopt, false,
     "Batch write mode (docs/batch.md); absent: streaming upserts.", kWriteModes},
});


std::vector<std::string> SplitKey(std::string_view text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string_view part = text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    while (!part.empty() && part.back() == ' ') part.remove_suffix(1);
    out.emplace_back(part);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}


class PostgresSink final : public engine::Sink {
 public:
  static Result<std::unique_ptr<engine::Sink>> Make(const ValidatedOptions& options) {
    // The option table has checked every value (bounds, the table name, the key's columns).
    auto sink = std::unique_ptr<PostgresSink>(new PostgresSink());
    sink->table_ = ParseTableName(options.GetString("dbtable")).value();
    if (options.Has("upsertkey")) sink->key_ = SplitKey(options.GetString("upsertkey"));
    sink->batch_size_ = options.GetInt64("batchsize");
    sink->batch_interval_ = options.GetDuration("batchinterval");
    sink->tasks_ = options.GetInt64("tasks_per_connection");
    sink->max_retries_ = static_cast<int>(options.GetInt64("maxretries"));
    sink->conninfo_ = PgConninfo(options, options.GetString("database"));
    if (options.Has("mode")) {
      SLUICE_ASSIGN_OR_RETURN(PgWriteMode mode, ParsePgWriteMode(options.GetString("mode")));
      return MakePostgresBatchSink(sink->conninfo_, options.GetString("dbtable"), mode);
    }
    return std::unique_ptr<engine::Sink>(std::move(sink));
  }

  std::string description() const override { return "PostgresSink[" + table_.schema + "." + table_.table + "]"; }
  std::vector<engine::OutputMode> supported_output_modes() const override {
    return {engine::OutputMode::kAppend, engine::OutputMode::kUpdate};
  }

  Status Open(const engine::SinkContext& context) override {
    query_id_ = context.query_id;
    stop_requested_ = context.stop_requested;
    return Status::OK();
  }

  bool supports_real_time() const override { return true; }

  Status AddRealTimeRows(int64_t epoch_id, const RecordBatch& rows) override {
    if (rows.num_rows() == 0) return Status::OK();
    if (real_time_ == nullptr) SLUICE_RETURN_IF_ERROR(StartRealTime(rows.schema()));
    return real_time_->Add(epoch_id, rows);
  }

  Status EndEpoch(int64_t epoch_id) override {
    return real_time_ == nullptr ? Status::OK() : real_time_->EndEpoch(epoch_id);
  }

  Result<std::unique_ptr<engine::BatchWriter>> BeginBatch(const engine::BatchInfo& info) override {
    return engine::WholeBatchWriter::Concatenating(
        info.schema, [this, batch_id = info.batch_id](const RecordBatch& batch) { return WriteBatch(batch_id, batch); });
  }

  // The batch's rows in chunks, each chunk's transaction recording it in the progress table.
  Status WriteBatch(int64_t batch_id, const RecordBatch& batch) {
    if (batch.num_rows() == 0) return Status::OK();
    // A query that ran under real_time and now runs batches had its last epoch replayed first
    // (through the real-time writer, which took the connections).
    real_time_.reset();
    if (writers_.empty()) SLUICE_RETURN_IF_ERROR(OpenWriters(batch.schema()));
    // The engine asks for batch N once N - 1 is committed in its log: earlier claims are not needed.
    SLUICE_RETURN_IF_ERROR(writers_[0]->ForgetBatchesBefore(query_id_, batch_id));
    // Chunks are cut from the rows in their canonical order, so a replay of the batch puts the same
    // rows under the same chunk ids even when the source hands them over in another order.
    auto shared = std::make_shared<const RecordBatch>(batch);
    SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> canonical, writers_[0]->CanonicalOrder(shared));
    // Rows per task: by key hash, so one key always goes through one connection (key-less rows by
    // their place in the canonical order).
    std::vector<std::vector<int64_t>> task_rows(writers_.size());
    if (writers_.size() == 1) {
      task_rows[0] = std::move(canonical);
    } else {
      std::vector<int> key_columns;
      for (const std::string& k : writers_[0]->upsert_key()) key_columns.push_back(batch.schema()->FieldIndex(k));
      std::vector<uint64_t> hashes;
      if (!key_columns.empty()) hashes = HashRows(shared, key_columns);
      for (size_t i = 0; i < canonical.size(); ++i) {
        const int64_t r = canonical[i];
        const uint64_t h = key_columns.empty() ? static_cast<uint64_t>(i) : hashes[r];
        task_rows[h % writers_.size()].push_back(r);
      }
    }
    std::vector<std::future<Status>> running;
    for (size_t t = 0; t < writers_.size(); ++t) {
      running.push_back(std::async(std::launch::async, [&, t]() -> Status {
        const std::vector<int64_t>& rows = task_rows[t];
        for (size_t start = 0, chunk = 0; start < rows.size(); start += batch_size_, ++chunk) {
          size_t end = std::min(rows.size(), start + static_cast<size_t>(batch_size_));
          // Chunk ids: task in the high bits, sequence in the low, the same on every replay.
          int32_t chunk_id = static_cast<int32_t>((t << 24) | chunk);
          SLUICE_RETURN_IF_ERROR(writers_[t]
                                     ->WriteChunk(query_id_, batch_id, chunk_id, batch,
                                                  std::span<const int64_t>(rows).subspan(start, end - start))
                                     .status());
        }
        return Status::OK();
      }));
    }
    Status result;
    for (auto& f : running) {
      Status s = f.get();
      if (result.ok() && !s.ok()) result = s;
    }
    return result;
  }

 private:
  // From now on every write goes through real-time chunks (the writers move there).
  Status StartRealTime(const TypePtr& schema) {
    if (writers_.empty()) SLUICE_RETURN_IF_ERROR(OpenWriters(schema));
    real_time_ = std::make_unique<PgRealTimeWriter>(
        std::move(writers_), PgRealTimeWriterOptions{query_id_, batch_size_, batch_interval_});
    writers_.clear();
    return Status::OK();
  }

  Status OpenWriters(const TypePtr& schema) {
    for (int64_t t = 0; t < tasks_; ++t) {
      PgUpsertWriterOptions options;
      options.conninfo = conninfo_;
      options.table = table_;
      options.upsert_key = key_;
      options.max_retries = max_retries_;
      options.stop_requested = stop_requested_;
      SLUICE_ASSIGN_OR_RETURN(auto writer, PgUpsertWriter::Open(std::move(options), schema));
      writers_.push_back(std::move(writer));
    }
    return Status::OK();
  }

  TableName table_;
  std::vector<std::string> key_;
  int64_t batch_size_ = 1000;
  std::chrono::microseconds batch_interval_{100'000};
  int64_t tasks_ = 1;
  int max_retries_ = 8;
  const std::atomic<bool>* stop_requested_ = nullptr;
  std::string conninfo_;
  std::string query_id_;
  std::vector<std::unique_ptr<PgUpsertWriter>> writers_;
  std::unique_ptr<PgRealTimeWriter> real_time_;
};

}  // namespace

Status RegisterPostgresSink(engine::Registry* registry) {
  engine::SinkFormat format;
  format.name = "postgresql";
  format.options = kOptions;
  format.error_class = errors::kJdbcStreamingSinkInvalidOptions;
  format.make = [](const ValidatedOptions& options, const engine::Registry&) { return PostgresSink::Make(options); };
  return registry->RegisterSink(std::move(format));
}

}  // namespace sluice::connectors
