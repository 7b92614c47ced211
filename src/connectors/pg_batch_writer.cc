#include "sluice/connectors/pg_batch_writer.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <numeric>
#include <thread>

#include "sluice/connectors/pg_connection.h"
#include "sluice/connectors/pg_copy.h"
#include "sluice/core/error_classes.h"

namespace sluice::connectors {

namespace {

constexpr std::string_view kDuplicateTable = "42P07";
constexpr std::string_view kStagingTable = "sluice_overwrite_staging";

// Rows encoded per COPY chunk: small enough that a chunk's column scratch stays in cache and its
// buffer is reused without page faults, large enough that the hand-over per chunk is negligible.
constexpr int64_t kChunkRows = 4096;

// `arrays_as_jsonb` as PgCopyEncoder takes it: empty, or one flag per field.
std::string ColumnDefinitions(const DataType& schema, const std::vector<bool>& arrays_as_jsonb = {}) {
  std::string out;
  for (int i = 0; i < schema.num_fields(); ++i) {
    const Field& field = schema.field(i);
    const bool as_jsonb = static_cast<size_t>(i) < arrays_as_jsonb.size() && arrays_as_jsonb[i];
    out += (i ? ", " : "") + QuoteIdentifier(field.name) + " " + PgColumnType(*field.type, as_jsonb);
  }
  return out;
}

std::string ColumnList(const DataType& schema) {
  std::string out;
  for (int i = 0; i < schema.num_fields(); ++i) out += (i ? ", " : "") + QuoteIdentifier(schema.field(i).name);
  return out;
}

// Sends COPY data on its own thread, so the caller encodes the next chunk while the server takes
// the previous one. Two buffers circulate: the caller fills one while the other is sent. The
// connection is used only by the sending thread until Finish() returns.
class CopySender {
 public:
  explicit CopySender(PgConnection* conn) : conn_(conn), thread_([this] { Loop(); }) {}
  ~CopySender() { Stop(); }

  // A buffer to fill, empty; it goes back with Send().
  std::string* Acquire() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return !free_.empty(); });
    std::string* buffer = free_.back();
    free_.pop_back();
    buffer->clear();
    return buffer;
  }

  // Queues the filled buffer; the first send failure is returned here (and by Finish) from then on.
  Status Send(std::string* buffer) {
    std::lock_guard lock(mutex_);
    queued_.push_back(buffer);
    changed_.notify_all();
    return status_;
  }

  // Waits until everything queued is sent and stops the thread.
  Status Finish() {
    Stop();
    return status_;
  }

 private:
  void Stop() {
    {
      std::lock_guard lock(mutex_);
      if (!thread_.joinable()) return;
      done_ = true;
      changed_.notify_all();
    }
    thread_.join();
  }

  void Loop() {
    std::unique_lock lock(mutex_);
    while (true) {
      changed_.wait(lock, [&] { return done_ || !queued_.empty(); });
      if (queued_.empty()) return;
      std::string* buffer = queued_.front();
      queued_.erase(queued_.begin());
      if (status_.ok()) {
        lock.unlock();
        Status sent = conn_->PutCopyData(*buffer);
        lock.lock();
        status_ = std::move(sent);
      }
      free_.push_back(buffer);
      changed_.notify_all();
    }
  }

  PgConnection* conn_;
  std::string buffers_[2];
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::string*> free_{&buffers_[0], &buffers_[1]};
  std::vector<std::string*> queued_;
  Status status_;
  bool done_ = false;
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace

Result<PgWriteMode> ParsePgWriteMode(std::string_view text) {
  std::string lower;
  for (char c : text) lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  if (lower == "append") return PgWriteMode::kAppend;
  if (lower == "overwrite") return PgWriteMode::kOverwrite;
  if (lower == "errorifexists" || lower == "error" || lower == "default") return PgWriteMode::kErrorIfExists;
  if (lower == "ignore") return PgWriteMode::kIgnore;
  return Status::Error(errors::kInvalidOptions, "postgresql batch write: `mode` `" + std::string(text) +
                                                    "` is not one of append, overwrite, errorifexists, ignore");
}

struct PgBatchWriter::Impl {
  std::unique_ptr<PgConnection> conn;
  TypePtr schema;
  TableName table;
  bool staged = false;  // overwrite of an existing table: rows go to the staging table first
  bool failed = false;
  bool committed = false;
  std::vector<int> columns;
  std::vector<int64_t> rows;
  PgCopyEncoder encoder;
  std::unique_ptr<CopySender> sender;  // from Open until Commit
};

PgBatchWriter::~PgBatchWriter() = default;

Status PgBatchWriter::Fail(Status status) {
  if (!status.ok() && impl_) impl_->failed = true;
  return status;
}

Result<std::unique_ptr<PgBatchWriter>> PgBatchWriter::Open(const PgBatchWriteOptions& options, TypePtr schema) {
  if (!schema || schema->id() != TypeId::kStruct) {
    return Status::Error(errors::kInvalidArgument, "postgresql batch write: the schema must be a struct");
  }
  SLUICE_ASSIGN_OR_RETURN(TableName table, ParseTableName(options.dbtable));
  SLUICE_RETURN_IF_ERROR(CheckPgColumnNames(*schema));
  std::unique_ptr<PgBatchWriter> writer(new PgBatchWriter());
  writer->impl_ = std::make_unique<Impl>();
  Impl& impl = *writer->impl_;
  impl.schema = schema;
  impl.table = table;
  impl.columns.resize(schema->num_fields());
  std::iota(impl.columns.begin(), impl.columns.end(), 0);
  SLUICE_ASSIGN_OR_RETURN(impl.conn, PgConnection::Connect(options.conninfo));
  PgConnection& conn = *impl.conn;
  // CREATE TABLE IF NOT EXISTS notices are expected, not news.
  SLUICE_RETURN_IF_ERROR(conn.Execute("SET client_min_messages = warning; BEGIN"));

  std::string definition = table.Quoted() + " (" + ColumnDefinitions(*schema) + ")";
  std::string create = "CREATE TABLE " + definition;
  std::string target = table.Quoted();
  switch (options.mode) {
    case PgWriteMode::kAppend: {
      SLUICE_RETURN_IF_ERROR(conn.Execute("CREATE TABLE IF NOT EXISTS " + definition));
      SLUICE_ASSIGN_OR_RETURN(std::vector<bool> arrays_as_jsonb, PgArraysHeldAsJsonb(&conn, target, *schema));
      impl.encoder = PgCopyEncoder(std::move(arrays_as_jsonb));
      break;
    }
    case PgWriteMode::kErrorIfExists:
    case PgWriteMode::kIgnore: {
      Status created = conn.Execute(create);
      if (!created.ok() && conn.last_sqlstate() == kDuplicateTable) {
        SLUICE_RETURN_IF_ERROR(conn.Execute("ROLLBACK"));
        if (options.mode == PgWriteMode::kErrorIfExists) {
          return Status::Error(errors::kPgTableAlreadyExists,
                               "table " + table.schema + "." + table.table +
                                   " already exists: choose mode append or overwrite, or write to another table");
        }
        writer->skipped_ = true;
        return writer;
      }
      SLUICE_RETURN_IF_ERROR(created);
      break;
    }
    case PgWriteMode::kOverwrite: {
      SLUICE_ASSIGN_OR_RETURN(PgRows exists, conn.Query("SELECT to_regclass($1) IS NOT NULL", {target}));
      if (exists.size() == 1 && exists[0][0] == "t") {
        impl.staged = true;
        SLUICE_ASSIGN_OR_RETURN(std::vector<bool> arrays_as_jsonb, PgArraysHeldAsJsonb(&conn, target, *schema));
        SLUICE_RETURN_IF_ERROR(conn.Execute("CREATE TEMPORARY TABLE " + std::string(kStagingTable) + " (" +
                                            ColumnDefinitions(*schema, arrays_as_jsonb) + ") ON COMMIT DROP"));
        impl.encoder = PgCopyEncoder(std::move(arrays_as_jsonb));
        target = std::string(kStagingTable);
      } else {
        SLUICE_RETURN_IF_ERROR(conn.Execute(create));
      }
      break;
    }
  }
  SLUICE_RETURN_IF_ERROR(conn.BeginCopy("COPY " + target + " (" + ColumnList(*schema) + ") FROM STDIN (FORMAT binary)"));
  impl.sender = std::make_unique<CopySender>(&conn);
  std::string* header = impl.sender->Acquire();
  PgCopyEncoder::AppendHeader(header);
  SLUICE_RETURN_IF_ERROR(impl.sender->Send(header));
  return writer;
}

Status PgBatchWriter::Write(const RecordBatch& batch) {
  if (skipped_) return Status::OK();
  if (impl_->failed || impl_->committed) {
    return Status::Error(errors::kInvalidArgument, "postgresql batch write: the writer has already failed or committed");
  }
  if (!batch.schema()->Equals(*impl_->schema)) {
    return Fail(Status::Error(errors::kDatatypeMismatch, "postgresql batch write: a batch of schema " +
                                                             batch.schema()->ToString() + " in a write of schema " +
                                                             impl_->schema->ToString()));
  }
  for (int64_t first = 0; first < batch.num_rows(); first += kChunkRows) {
    impl_->rows.resize(std::min(kChunkRows, batch.num_rows() - first));
    std::iota(impl_->rows.begin(), impl_->rows.end(), first);
    std::string* chunk = impl_->sender->Acquire();
    impl_->encoder.AppendRows(batch, impl_->columns, impl_->rows, chunk);
    SLUICE_RETURN_IF_ERROR(Fail(impl_->sender->Send(chunk)));
  }
  return Status::OK();
}

Status PgBatchWriter::Commit() {
  if (skipped_) return Status::OK();
  if (impl_->failed || impl_->committed) {
    return Status::Error(errors::kInvalidArgument, "postgresql batch write: the writer has already failed or committed");
  }
  PgConnection& conn = *impl_->conn;
  std::string* trailer = impl_->sender->Acquire();
  PgCopyEncoder::AppendTrailer(trailer);
  SLUICE_RETURN_IF_ERROR(Fail(impl_->sender->Send(trailer)));
  SLUICE_RETURN_IF_ERROR(Fail(impl_->sender->Finish()));
  SLUICE_RETURN_IF_ERROR(Fail(conn.EndCopy()));
  if (impl_->staged) {
    std::string columns = ColumnList(*impl_->schema);
    SLUICE_RETURN_IF_ERROR(Fail(conn.Execute("TRUNCATE " + impl_->table.Quoted() + "; INSERT INTO " +
                                             impl_->table.Quoted() + " (" + columns + ") SELECT " + columns +
                                             " FROM " + std::string(kStagingTable))));
  }
  SLUICE_RETURN_IF_ERROR(Fail(conn.Execute("COMMIT")));
  impl_->committed = true;
  return Status::OK();
}

Status WritePostgres(const PgBatchWriteOptions& options, TypePtr schema, const std::vector<BatchPtr>& batches) {
  SLUICE_ASSIGN_OR_RETURN(auto writer, PgBatchWriter::Open(options, std::move(schema)));
  for (const auto& batch : batches) SLUICE_RETURN_IF_ERROR(writer->Write(*batch));
  return writer->Commit();
}

}  // namespace sluice::connectors
