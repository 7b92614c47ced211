#include "sluice/connectors/pg_upsert_writer.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <set>
#include <thread>

#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"

namespace sluice::connectors {

namespace {

constexpr const char* kStage = "pg_temp.\"sluice_stage\"";
constexpr const char* kClaimStatement = "sluice_claim";
constexpr const char* kWriteStatement = "sluice_write";
// The rows through the staging table and the prepared upsert, then COMMIT.
const std::string& StagedWrite() {
  static const std::string sql =
      std::string("COPY ") + kStage + " FROM STDIN (FORMAT binary); EXECUTE " + kWriteStatement + "; COMMIT";
  return sql;
}
// After a COPY straight into the table met a key already there: back to before it, then staged.
const std::string& StagedWriteAfterConflict() {
  static const std::string sql = "ROLLBACK TO SAVEPOINT sluice_direct; " + StagedWrite();
  return sql;
}
// Chunks written staged after a direct COPY met a conflict, before the next direct attempt.
constexpr int kStagedChunksAfterConflict = 15;

std::string JoinQuoted(const std::vector<std::string>& names, std::string_view prefix = "") {
  std::string out;
  for (const std::string& n : names) {
    if (!out.empty()) out += ", ";
    out += std::string(prefix) + QuoteIdentifier(n);
  }
  return out;
}

std::string JoinPlain(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

bool ComparableKeyType(const DataType& type) { return !type.is_nested(); }

// Whether rows i and j of `column` hold the same value (nulls equal each other).
bool SameValue(const Column& column, int64_t i, int64_t j) {
  bool null_i = column.IsNull(i), null_j = column.IsNull(j);
  if (null_i || null_j) return null_i == null_j;
  if (column.type->is_binary_like()) return column.View(i) == column.View(j);
  const int width = column.type->byte_width();
  return std::memcmp(column.data.data() + i * width, column.data.data() + j * width, width) == 0;
}

// Whether the values of an integer `column` at `rows` are non-null and strictly increasing (false
// for columns of other types, which take the general sort).
bool StrictlyIncreasing(const Column& column, std::span<const int64_t> rows) {
  auto check = [&](const auto* values) {
    for (size_t i = 0; i < rows.size(); ++i) {
      if (column.IsNull(rows[i]) || (i > 0 && values[rows[i]] <= values[rows[i - 1]])) return false;
    }
    return true;
  };
  switch (column.type->id()) {
    case TypeId::kShort: return check(column.values<int16_t>());
    case TypeId::kInteger: return check(column.values<int32_t>());
    case TypeId::kLong: return check(column.values<int64_t>());
    default: return false;
  }
}

}  // namespace

bool IsTransientSqlState(std::string_view s) {
  return s.starts_with("08") || s.starts_with("53") || s == "57P01" || s == "57P02" || s == "57P03" || s == "40P01" ||
         s == "40001" || s == "55P03" || s == "55006";
}

PgUpsertWriter::PgUpsertWriter(PgUpsertWriterOptions options, TypePtr schema)
    : options_(std::move(options)), schema_(std::move(schema)) {}

Result<std::unique_ptr<PgUpsertWriter>> PgUpsertWriter::Open(PgUpsertWriterOptions options, TypePtr schema) {
  SLUICE_RETURN_IF_ERROR(CheckPgColumnNames(*schema));
  std::unique_ptr<PgUpsertWriter> writer(new PgUpsertWriter(std::move(options), std::move(schema)));
  // The first connection is retried like every later one (a server restarting as the sink starts).
  SLUICE_RETURN_IF_ERROR(writer->RunWithRetries([&] { return writer->PrepareTable(); }));
  SLUICE_RETURN_IF_ERROR(writer->PrepareSession());
  return writer;
}

Status PgUpsertWriter::Connect() {
  conn_.reset();
  SLUICE_ASSIGN_OR_RETURN(conn_, PgConnection::Connect(options_.conninfo));
  return Status::OK();
}

Status PgUpsertWriter::PrepareTable() {
  const TableName& t = options_.table;
  const std::string qualified = t.schema + "." + t.table;
  for (const std::string& k : options_.upsert_key) {
    int index = schema_->FieldIndex(k);
    if (index < 0) {
      return Status::Error(errors::kPgUpsertKeyMismatch, "upsertkey column `" + k + "` is not a column of the stream");
    }
    if (!ComparableKeyType(*schema_->field(index).type)) {
      return Status::Error(errors::kPgUpsertKeyMismatch, "upsertkey column `" + k + "` is of type " +
                                                             schema_->field(index).type->ToString() +
                                                             ", which cannot be a key (struct, array and map cannot)");
    }
  }

  const std::string find_table =
      "SELECT c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
      "WHERE n.nspname = $1 AND c.relname = $2 AND c.relkind IN ('r', 'p')";
  SLUICE_ASSIGN_OR_RETURN(PgRows found, conn_->Query(find_table, {t.schema, t.table}));
  if (found.empty()) {
    std::string ddl = "CREATE TABLE IF NOT EXISTS " + t.Quoted() + " (";
    for (int i = 0; i < schema_->num_fields(); ++i) {
      const Field& f = schema_->field(i);
      ddl += (i ? ", " : "") + QuoteIdentifier(f.name) + " " + PgColumnType(*f.type);
    }
    if (!options_.upsert_key.empty()) ddl += ", PRIMARY KEY (" + JoinQuoted(options_.upsert_key) + ")";
    ddl += ")";
    // Half of each page left free: an upsert that changes every existing row then writes each new
    // version beside the old one (a HOT update: no index entry, old versions pruned in the page),
    // about twice as fast as an update that moves rows to other pages.
    if (!options_.upsert_key.empty()) ddl += " WITH (fillfactor = 50)";
    Status created = conn_->Execute(ddl);
    // Two writers creating the table at once: the loser sees a duplicate; the table is there.
    if (!created.ok() && conn_->last_sqlstate() != "23505" && conn_->last_sqlstate() != "42P07") return created;
    SLUICE_ASSIGN_OR_RETURN(found, conn_->Query(find_table, {t.schema, t.table}));
    if (found.empty()) return Status::Error(errors::kPgQueryFailed, "table " + qualified + " vanished after creation");
  }
  const std::string oid = *found[0][0];
  table_oid_ = oid;
  SLUICE_ASSIGN_OR_RETURN(arrays_as_jsonb_, PgArraysHeldAsJsonb(conn_.get(), oid, *schema_));
  encoder_ = PgCopyEncoder(arrays_as_jsonb_);

  SLUICE_ASSIGN_OR_RETURN(
      PgRows columns,
      conn_->Query("SELECT attname FROM pg_attribute WHERE attrelid = $1::oid AND attnum > 0 AND NOT attisdropped",
                   {oid}));
  std::set<std::string> table_columns;
  for (const auto& row : columns) table_columns.insert(*row[0]);
  std::vector<std::string> missing;
  for (const Field& f : schema_->fields()) {
    if (!table_columns.count(f.name)) missing.push_back(f.name);
  }
  if (!missing.empty()) {
    return Status::Error(errors::kPgSchemaMismatch, "table " + qualified + " has no column " + JoinPlain(missing) +
                                                        " of the stream; add the columns or leave them out of the stream");
  }

  SLUICE_ASSIGN_OR_RETURN(
      PgRows pk_rows,
      conn_->Query("SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid "
                   "AND a.attnum = ANY(i.indkey) WHERE i.indrelid = $1::oid AND i.indisprimary ORDER BY a.attnum",
                   {oid}));
  std::vector<std::string> primary_key;
  for (const auto& row : pk_rows) primary_key.push_back(*row[0]);

  if (options_.upsert_key.empty()) {
    key_names_ = primary_key;
    for (const std::string& k : key_names_) {
      if (schema_->FieldIndex(k) < 0) {
        return Status::Error(errors::kPgUpsertKeyMismatch, "the primary key of " + qualified + " (" +
                                                               JoinPlain(primary_key) + ") includes `" + k +
                                                               "`, which is not a column of the stream");
      }
    }
  } else {
    std::set<std::string> given(options_.upsert_key.begin(), options_.upsert_key.end());
    std::set<std::string> pk(primary_key.begin(), primary_key.end());
    if (given != pk || given.size() != options_.upsert_key.size()) {
      return Status::Error(errors::kPgUpsertKeyMismatch,
                           "upsertkey (" + JoinPlain(options_.upsert_key) + ") must equal the primary key of " +
                               qualified + " (" + (primary_key.empty() ? "none" : JoinPlain(primary_key)) + ")");
    }
    key_names_ = options_.upsert_key;
  }
  key_columns_.clear();
  for (const std::string& k : key_names_) key_columns_.push_back(schema_->FieldIndex(k));
  all_columns_.clear();
  for (int i = 0; i < schema_->num_fields(); ++i) all_columns_.push_back(i);

  progress_table_ = QuoteIdentifier(t.schema) + ".\"_sluice_progress\"";
  Status progress = conn_->Execute("CREATE TABLE IF NOT EXISTS " + progress_table_ +
                                   " (query_id text NOT NULL, batch_id bigint NOT NULL, chunk integer NOT NULL, "
                                   "committed_at timestamptz NOT NULL DEFAULT now(), "
                                   "PRIMARY KEY (query_id, batch_id, chunk))");
  if (!progress.ok() && conn_->last_sqlstate() != "23505" && conn_->last_sqlstate() != "42P07") return progress;
  return Status::OK();
}

Status PgUpsertWriter::PrepareSession() {
  std::vector<std::string> names;
  std::string stage = "CREATE TEMP TABLE IF NOT EXISTS \"sluice_stage\" (";
  for (int i = 0; i < schema_->num_fields(); ++i) {
    const Field& f = schema_->field(i);
    names.push_back(f.name);
    stage += (i ? ", " : "") + QuoteIdentifier(f.name) + " " + PgColumnType(*f.type, arrays_as_jsonb_[i]);
  }
  stage += ") ON COMMIT DELETE ROWS";
  SLUICE_RETURN_IF_ERROR(conn_->Execute(stage));
  SLUICE_RETURN_IF_ERROR(conn_->Prepare(kClaimStatement, "INSERT INTO " + progress_table_ +
                                                             " (query_id, batch_id, chunk) VALUES ($1, $2, $3) "
                                                             "ON CONFLICT DO NOTHING RETURNING 1"));

  // Binary COPY straight into the table needs each column to be of the type the rows are encoded
  // for, which the staging table's columns are.
  SLUICE_ASSIGN_OR_RETURN(
      PgRows same_types,
      conn_->Query("SELECT count(*) FROM pg_attribute s JOIN pg_attribute t ON t.attname = s.attname "
                   "WHERE s.attrelid = 'pg_temp.sluice_stage'::regclass AND t.attrelid = $1::oid AND s.attnum > 0 "
                   "AND NOT s.attisdropped AND NOT t.attisdropped AND t.attgenerated = '' "
                   "AND s.atttypid = t.atttypid AND s.atttypmod = t.atttypmod",
                   {table_oid_}));
  direct_copy_possible_ = same_types.size() == 1 && same_types[0][0] == std::to_string(schema_->num_fields());
  const std::string columns = JoinQuoted(names);
  direct_write_ = "SAVEPOINT sluice_direct; COPY " + options_.table.Quoted() + " (" + columns +
                  ") FROM STDIN (FORMAT binary); COMMIT";

  std::string sql = std::string("INSERT INTO ") + options_.table.Quoted() + " AS t (" + columns + ") SELECT " +
                    columns + " FROM " + kStage;
  if (!key_names_.empty()) {
    std::vector<std::string> values;
    for (const std::string& n : names) {
      if (std::find(key_names_.begin(), key_names_.end(), n) == key_names_.end()) values.push_back(n);
    }
    sql += " ON CONFLICT (" + JoinQuoted(key_names_) + ")";
    if (values.empty()) {
      sql += " DO NOTHING";
    } else {
      std::string set;
      for (const std::string& v : values) set += (set.empty() ? "" : ", ") + QuoteIdentifier(v) + " = EXCLUDED." + QuoteIdentifier(v);
      // Rows that would not change are skipped: no new row version, no WAL, no bloat.
      sql += " DO UPDATE SET " + set + " WHERE (" + JoinQuoted(values, "t.") + ") IS DISTINCT FROM (" +
             JoinQuoted(values, "EXCLUDED.") + ")";
    }
  }
  return conn_->Prepare(kWriteStatement, sql);
}

Result<std::vector<int64_t>> PgUpsertWriter::OrderRows(const RecordBatch& batch, std::span<const int64_t> rows) const {
  std::vector<int64_t> ordered(rows.begin(), rows.end());
  if (key_columns_.empty()) return ordered;
  // Sources often hand over rows already in key order (ids, offsets): nothing to sort or collapse.
  if (key_columns_.size() == 1 && StrictlyIncreasing(*batch.column(key_columns_[0]), rows)) return ordered;
  std::vector<Field> key_fields;
  std::vector<ColumnPtr> key_values;
  for (int c : key_columns_) {
    key_fields.push_back(schema_->field(c));
    key_values.push_back(Take(batch.column(c), rows));
  }
  SLUICE_ASSIGN_OR_RETURN(TypePtr key_schema, DataType::Struct(key_fields));
  SLUICE_ASSIGN_OR_RETURN(BatchPtr keys, RecordBatch::Make(key_schema, key_values, static_cast<int64_t>(rows.size())));
  std::vector<int> all_keys(key_columns_.size());
  for (size_t i = 0; i < all_keys.size(); ++i) all_keys[i] = static_cast<int>(i);
  SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> sorted, SortIndices(keys, all_keys));
  // The sort is stable, so the last of a run of equal keys is the latest row for that key.
  ordered.clear();
  for (size_t i = 0; i < sorted.size(); ++i) {
    bool last_of_run = i + 1 == sorted.size();
    if (!last_of_run) {
      for (int k : all_keys) {
        if (!SameValue(*keys->column(k), sorted[i], sorted[i + 1])) {
          last_of_run = true;
          break;
        }
      }
    }
    if (last_of_run) ordered.push_back(rows[sorted[i]]);
  }
  return ordered;
}

Result<std::vector<int64_t>> PgUpsertWriter::CanonicalOrder(const BatchPtr& batch) const {
  std::vector<int64_t> rows(batch->num_rows());
  for (int64_t r = 0; r < batch->num_rows(); ++r) rows[r] = r;
  if (!key_columns_.empty()) return OrderRows(*batch, rows);
  const std::vector<uint64_t> hashes = HashRows(batch, all_columns_);
  std::sort(rows.begin(), rows.end(), [&](int64_t a, int64_t b) { return hashes[a] < hashes[b]; });
  return rows;
}

Result<int64_t> PgUpsertWriter::TryWriteChunk(const std::string& query_id, int64_t batch_id, int32_t chunk,
                                              const RecordBatch& batch, std::span<const int64_t> rows) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> ordered, OrderRows(batch, rows));
  copy_buffer_.clear();
  PgCopyEncoder::AppendHeader(&copy_buffer_);
  encoder_.AppendRows(batch, all_columns_, ordered, &copy_buffer_);
  PgCopyEncoder::AppendTrailer(&copy_buffer_);
  // Claim first: a chunk an earlier attempt committed is not written again.
  SLUICE_RETURN_IF_ERROR(conn_->Execute("BEGIN"));
  SLUICE_ASSIGN_OR_RETURN(PgRows claimed, conn_->ExecutePrepared(kClaimStatement, {query_id, std::to_string(batch_id),
                                                                                   std::to_string(chunk)}));
  if (claimed.size() != 1) {
    SLUICE_RETURN_IF_ERROR(conn_->Execute("ROLLBACK"));
    return int64_t{0};
  }
  // Rows whose keys are not in the table yet (new keys, key-less tables) go in fastest by COPY
  // straight into the table, as psql's \copy does; a key already there fails that COPY with a
  // unique violation, and the chunk is written through the staging table and the upsert instead.
  // After such a conflict the next chunks go staged at once, trying direct again now and then.
  const std::string_view row_data[] = {copy_buffer_};
  if (direct_copy_possible_ && staged_chunks_to_go_ == 0) {
    Result<PgRows> direct = conn_->ExecuteWithCopyData(direct_write_, row_data);
    if (direct.ok()) return static_cast<int64_t>(ordered.size());
    if (conn_->last_sqlstate() != "23505" || key_names_.empty()) return direct.status();
    staged_chunks_to_go_ = kStagedChunksAfterConflict;
    SLUICE_RETURN_IF_ERROR(conn_->ExecuteWithCopyData(StagedWriteAfterConflict(), row_data).status());
    return static_cast<int64_t>(ordered.size());
  }
  if (staged_chunks_to_go_ > 0) --staged_chunks_to_go_;
  SLUICE_RETURN_IF_ERROR(conn_->ExecuteWithCopyData(StagedWrite(), row_data).status());
  return static_cast<int64_t>(ordered.size());
}

Result<int64_t> PgUpsertWriter::WriteChunk(const std::string& query_id, int64_t batch_id, int32_t chunk,
                                           const RecordBatch& batch, std::span<const int64_t> rows) {
  int64_t written = 0;
  SLUICE_RETURN_IF_ERROR(RunWithRetries([&]() -> Status {
    SLUICE_ASSIGN_OR_RETURN(written, TryWriteChunk(query_id, batch_id, chunk, batch, rows));
    return Status::OK();
  }));
  return written;
}

Result<int64_t> PgUpsertWriter::LastCommittedChunk(const std::string& query_id, int64_t batch_id) {
  int64_t last = 0;
  SLUICE_RETURN_IF_ERROR(RunWithRetries([&]() -> Status {
    SLUICE_ASSIGN_OR_RETURN(PgRows rows, conn_->Query("SELECT coalesce(max(chunk), 0) FROM " + progress_table_ +
                                                          " WHERE query_id = $1 AND batch_id = $2",
                                                      {query_id, std::to_string(batch_id)}));
    const std::string* text = rows.size() == 1 && rows[0].size() == 1 && rows[0][0] ? &*rows[0][0] : nullptr;
    if (text == nullptr || std::from_chars(text->data(), text->data() + text->size(), last).ec != std::errc()) {
      return Status::Error(errors::kPgQueryFailed, "the progress table answered something other than a chunk id");
    }
    return Status::OK();
  }));
  return last;
}

Status PgUpsertWriter::ForgetBatchesBefore(const std::string& query_id, int64_t batch_id) {
  return RunWithRetries([&]() -> Status {
    return conn_
        ->Query("DELETE FROM " + progress_table_ + " WHERE query_id = $1 AND batch_id < $2",
                {query_id, std::to_string(batch_id)})
        .status();
  });
}

Status PgUpsertWriter::RunWithRetries(const std::function<Status()>& attempt_once) {
  std::chrono::milliseconds backoff = options_.initial_backoff;
  for (int attempt = 0;; ++attempt) {
    Status failure;
    if (conn_ == nullptr || !conn_->is_open()) {
      failure = Connect();
      // The session's statements need the table; before PrepareTable has run, Open prepares them.
      if (failure.ok() && !table_oid_.empty()) failure = PrepareSession();
    }
    if (failure.ok()) {
      failure = attempt_once();
      if (failure.ok()) return failure;
    }
    const std::string sqlstate = conn_ ? conn_->last_sqlstate() : "";
    const bool transient = failure.error_class() == errors::kPgConnectionFailed || IsTransientSqlState(sqlstate);
    // Leave no transaction half open on a live connection, whatever happens next.
    if (conn_ != nullptr && conn_->is_open()) (void)conn_->Execute("ROLLBACK");
    if (!transient || attempt >= options_.max_retries) {
      if (transient) return failure.WithContext("giving up after " + std::to_string(attempt + 1) + " attempts");
      return failure;
    }
    ++retries_;
    std::uniform_int_distribution<int64_t> jitter(0, backoff.count() / 2);
    auto wake = std::chrono::steady_clock::now() + backoff + std::chrono::milliseconds(jitter(jitter_));
    while (std::chrono::steady_clock::now() < wake) {
      if (options_.stop_requested != nullptr && options_.stop_requested->load()) {
        return Status::Error(errors::kQueryStopped, "stopped while waiting to retry: " + std::string(failure.message()));
      }
      std::this_thread::sleep_until(std::min(wake, std::chrono::steady_clock::now() + std::chrono::milliseconds(20)));
    }
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
}

}  // namespace sluice::connectors
