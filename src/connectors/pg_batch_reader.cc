#include "sluice/connectors/pg_batch_reader.h"

#include <libpq-fe.h>

#include <algorithm>
#include <cctype>
#include <mutex>
#include <thread>

#include "sluice/connectors/pg_connection.h"
#include "sluice/connectors/pg_types.h"
#include "sluice/core/builder.h"
#include "sluice/core/error_classes.h"

namespace sluice::connectors {

namespace {

struct ResultDeleter {
  void operator()(PGresult* r) const { PQclear(r); }
};
using ResultPtr = std::unique_ptr<PGresult, ResultDeleter>;

std::string ServerMessage(PGconn* conn, const PGresult* result) {
  std::string message = result ? PQresultErrorMessage(result) : "";
  if (message.empty()) message = PQerrorMessage(conn);
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  const char* state = result ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  if (state != nullptr) message += std::string(" (SQLSTATE ") + state + ")";
  return message;
}

Status ServerFailure(PGconn* conn, std::string_view what, const PGresult* result) {
  std::string_view error_class = PQstatus(conn) == CONNECTION_OK ? errors::kPgQueryFailed : errors::kPgConnectionFailed;
  return Status::Error(error_class, std::string(what) + ": " + ServerMessage(conn, result));
}

Status InvalidOptions(std::string message) {
  return Status::Error(errors::kInvalidOptions, "postgresql batch read: " + message);
}

// The statement whose rows the read returns, before partitioning.
Result<std::string> BaseQuery(const PgBatchReadOptions& options) {
  if (options.query.has_value() == options.dbtable.has_value()) {
    return InvalidOptions("set exactly one of `query` (a SQL query) and `dbtable` (a table name)");
  }
  if (options.query) {
    std::string query = *options.query;
    while (!query.empty() && (query.back() == ';' || query.back() == ' ' || query.back() == '\n')) query.pop_back();
    if (query.empty()) return InvalidOptions("`query` is empty");
    return query;
  }
  SLUICE_ASSIGN_OR_RETURN(TableName table, ParseTableName(*options.dbtable));
  return "SELECT * FROM " + table.Quoted();
}

// One statement per partition, following Spark's JDBC strides.
Result<std::vector<std::string>> PartitionQueries(const PgBatchReadOptions& options, const std::string& base) {
  bool any = options.partition_column || options.lower_bound || options.upper_bound;
  if (!any) {
    if (options.num_partitions != 1) {
      return InvalidOptions("`num_partitions` needs `partition_column`, `lower_bound` and `upper_bound`");
    }
    return std::vector<std::string>{base};
  }
  if (!options.partition_column || !options.lower_bound || !options.upper_bound) {
    return InvalidOptions("set all of `partition_column`, `lower_bound` and `upper_bound`, or none");
  }
  if (options.num_partitions < 1) return InvalidOptions("`num_partitions` must be at least 1");
  if (*options.lower_bound > *options.upper_bound) {
    return InvalidOptions("`lower_bound` must not be greater than `upper_bound`");
  }
  if (!IsSimpleIdentifier(*options.partition_column)) {
    return Status::Error(errors::kInvalidArgument, "partition column `" + *options.partition_column +
                                                      "` is not a simple identifier (a letter or underscore, then "
                                                      "letters, digits or underscores)");
  }
  int64_t lower = *options.lower_bound;
  int64_t upper = *options.upper_bound;
  // Like Spark: never more partitions than distinct values in the range.
  int64_t partitions = std::min<int64_t>(options.num_partitions, std::max<int64_t>(1, upper - lower));
  std::string wrapped = "SELECT * FROM (" + base + ") AS sluice_partitioned";
  if (partitions == 1) return std::vector<std::string>{wrapped};
  std::string column = QuoteIdentifier(*options.partition_column);
  int64_t stride = upper / partitions - lower / partitions;
  std::vector<std::string> queries;
  int64_t bound = lower;
  for (int64_t i = 0; i < partitions; ++i) {
    std::string low = column + " >= " + std::to_string(bound);
    bound += stride;
    std::string high = column + " < " + std::to_string(bound);
    if (i == 0) {
      queries.push_back(wrapped + " WHERE " + high + " OR " + column + " IS NULL");
    } else if (i == partitions - 1) {
      queries.push_back(wrapped + " WHERE " + low);
    } else {
      queries.push_back(wrapped + " WHERE " + low + " AND " + high);
    }
  }
  return queries;
}

// Undoes COPY's text escapes (backslash sequences) of one field into `out`.
void Unescape(std::string_view field, std::string* out) {
  out->clear();
  for (size_t i = 0; i < field.size(); ++i) {
    char c = field[i];
    if (c != '\\' || i + 1 == field.size()) {
      out->push_back(c);
      continue;
    }
    char e = field[++i];
    switch (e) {
      case 'b': out->push_back('\b'); break;
      case 'f': out->push_back('\f'); break;
      case 'n': out->push_back('\n'); break;
      case 'r': out->push_back('\r'); break;
      case 't': out->push_back('\t'); break;
      case 'v': out->push_back('\v'); break;
      case 'x': {
        int value = 0, digits = 0;
        while (digits < 2 && i + 1 < field.size() && std::isxdigit(static_cast<unsigned char>(field[i + 1]))) {
          char h = field[++i];
          value = value * 16 + (h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
          ++digits;
        }
        if (digits == 0) {
          out->push_back('x');
        } else {
          out->push_back(static_cast<char>(value));
        }
        break;
      }
      default:
        if (e >= '0' && e <= '7') {
          int value = e - '0', digits = 1;
          while (digits < 3 && i + 1 < field.size() && field[i + 1] >= '0' && field[i + 1] <= '7') {
            value = value * 8 + (field[++i] - '0');
            ++digits;
          }
          out->push_back(static_cast<char>(value));
        } else {
          out->push_back(e);
        }
    }
  }
}

}  // namespace

struct PgBatchReader::State {
  PgBatchReadOptions options;
  std::unique_ptr<PgConnection> first;  // described the result; reads the first partition
  TypePtr schema;
  std::vector<PgColumnMapping> mappings;
  std::vector<std::string> queries;
};

namespace {

// Learns the result's columns by preparing and describing the statement (nothing runs).
Status Describe(PgConnection* conn, const std::string& query, PgBatchReader::State* state) {
  PGconn* raw = conn->raw();
  ResultPtr prepared(PQprepare(raw, "sluice_batch_read", query.c_str(), 0, nullptr));
  if (PQresultStatus(prepared.get()) != PGRES_COMMAND_OK) {
    return ServerFailure(raw, "the postgresql batch read query failed", prepared.get());
  }
  ResultPtr described(PQdescribePrepared(raw, "sluice_batch_read"));
  if (PQresultStatus(described.get()) != PGRES_COMMAND_OK) {
    return ServerFailure(raw, "describing the postgresql batch read query failed", described.get());
  }
  int columns = PQnfields(described.get());
  std::vector<std::optional<std::string>> oid_list{std::string("{")};
  for (int c = 0; c < columns; ++c) {
    *oid_list[0] += (c ? "," : "") + std::to_string(PQftype(described.get(), c));
  }
  *oid_list[0] += "}";
  SLUICE_ASSIGN_OR_RETURN(PgRows enums,
                          conn->Query("SELECT oid::int8 FROM pg_catalog.pg_type WHERE typtype = 'e' AND oid = ANY($1::oid[])",
                                      oid_list));
  std::vector<Field> fields;
  for (int c = 0; c < columns; ++c) {
    uint32_t oid = PQftype(described.get(), c);
    bool is_enum = false;
    for (const auto& row : enums) is_enum |= row[0] && *row[0] == std::to_string(oid);
    state->mappings.push_back(MapPgType(oid, PQfmod(described.get(), c), is_enum));
    fields.push_back(Field{PQfname(described.get(), c), state->mappings.back().type, true});
  }
  SLUICE_RETURN_IF_ERROR(conn->Execute("DEALLOCATE sluice_batch_read"));
  SLUICE_ASSIGN_OR_RETURN(state->schema, DataType::Struct(std::move(fields)));
  return Status::OK();
}

// Streams one COPY (query) TO STDOUT into batches.
class CopyReader {
 public:
  CopyReader(const PgBatchReader::State& state, PgConnection* conn) : state_(state), conn_(conn) {}

  Status Run(const std::string& query, const std::function<Status(BatchPtr)>& emit) {
    PGconn* raw = conn_->raw();
    ResultPtr started(PQexec(raw, ("COPY (" + query + ") TO STDOUT").c_str()));
    if (PQresultStatus(started.get()) != PGRES_COPY_OUT) {
      return ServerFailure(raw, "the postgresql batch read query failed", started.get());
    }
    NewBuilders();
    Status status;
    char* line = nullptr;
    int size;
    while ((size = PQgetCopyData(raw, &line, 0)) > 0) {
      if (status.ok()) status = ParseRow(std::string_view(line, static_cast<size_t>(size)));
      PQfreemem(line);
      if (status.ok() && rows_ == state_.options.batch_size) status = Flush(emit);
    }
    if (size == -2) return ServerFailure(raw, "reading the postgresql batch read result failed", nullptr);
    while (PGresult* raw_result = PQgetResult(raw)) {
      ResultPtr result(raw_result);
      if (status.ok() && PQresultStatus(raw_result) != PGRES_COMMAND_OK) {
        status = ServerFailure(raw, "the postgresql batch read query failed", raw_result);
      }
    }
    SLUICE_RETURN_IF_ERROR(status);
    if (rows_ > 0) return Flush(emit);
    return Status::OK();
  }

 private:
  void NewBuilders() {
    builders_.clear();
    for (const auto& mapping : state_.mappings) {
      builders_.push_back(ColumnBuilder::Make(mapping.type));
      builders_.back()->Reserve(state_.options.batch_size);
    }
    rows_ = 0;
  }

  Status ParseRow(std::string_view line) {
    if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
    size_t columns = builders_.size();
    size_t start = 0;
    for (size_t c = 0; c < columns; ++c) {
      size_t tab = line.find('\t', start);
      bool last = c + 1 == columns;
      if ((tab == std::string_view::npos) != last) {
        return Status::Error(errors::kPgQueryFailed, "a COPY row from the server does not have " +
                                                         std::to_string(columns) + " fields");
      }
      std::string_view field = line.substr(start, last ? std::string_view::npos : tab - start);
      start = tab + 1;
      if (field == "\\N") {
        builders_[c]->AppendNull();
        continue;
      }
      if (field.find('\\') != std::string_view::npos) {
        Unescape(field, &scratch_);
        field = scratch_;
      }
      Status appended = AppendPgText(state_.mappings[c], field, builders_[c].get());
      if (!appended.ok()) {
        return Status::Error(appended.error_class(), "column `" + state_.schema->field(static_cast<int>(c)).name +
                                                         "`: " + std::string(appended.message()));
      }
    }
    if (columns == 0 && !line.empty()) {
      return Status::Error(errors::kPgQueryFailed, "a COPY row from the server has fields for a result without columns");
    }
    ++rows_;
    return Status::OK();
  }

  Status Flush(const std::function<Status(BatchPtr)>& emit) {
    std::vector<ColumnPtr> columns;
    for (auto& builder : builders_) columns.push_back(builder->Finish());
    SLUICE_ASSIGN_OR_RETURN(BatchPtr batch, RecordBatch::Make(state_.schema, std::move(columns), rows_));
    NewBuilders();
    return emit(std::move(batch));
  }

  const PgBatchReader::State& state_;
  PgConnection* conn_;
  std::vector<std::unique_ptr<ColumnBuilder>> builders_;
  int64_t rows_ = 0;
  std::string scratch_;
};

// A snapshot id as pg_export_snapshot() prints it (hex digits and dashes): checked before it is
// written into SET TRANSACTION SNAPSHOT, which takes no parameters.
bool IsSnapshotId(const std::string& id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id) {
    if (!std::isxdigit(static_cast<unsigned char>(c)) && c != '-') return false;
  }
  return true;
}

}  // namespace

PgBatchReader::PgBatchReader(std::unique_ptr<State> state) : state_(std::move(state)) {}
PgBatchReader::~PgBatchReader() = default;

const TypePtr& PgBatchReader::schema() const { return state_->schema; }
const std::vector<std::string>& PgBatchReader::partition_queries() const { return state_->queries; }

Result<std::unique_ptr<PgBatchReader>> PgBatchReader::Open(PgBatchReadOptions options) {
  if (options.batch_size < 1) return InvalidOptions("the batch size must be at least 1");
  SLUICE_ASSIGN_OR_RETURN(std::string base, BaseQuery(options));
  auto state = std::make_unique<State>();
  SLUICE_ASSIGN_OR_RETURN(state->queries, PartitionQueries(options, base));
  state->options = std::move(options);
  SLUICE_ASSIGN_OR_RETURN(state->first, PgConnection::Connect(state->options.conninfo));
  SLUICE_RETURN_IF_ERROR(Describe(state->first.get(), state->queries[0], state.get()));
  return std::unique_ptr<PgBatchReader>(new PgBatchReader(std::move(state)));
}

Status PgBatchReader::Read(const PgBatchConsumer& consume) {
  if (state_->queries.size() == 1) {
    CopyReader reader(*state_, state_->first.get());
    return reader.Run(state_->queries[0], consume);
  }
  // The first connection exports its snapshot; the others import it before reading.
  SLUICE_RETURN_IF_ERROR(state_->first->Execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"));
  SLUICE_ASSIGN_OR_RETURN(PgRows exported, state_->first->Query("SELECT pg_export_snapshot()"));
  if (exported.size() != 1 || !exported[0][0] || !IsSnapshotId(*exported[0][0])) {
    return Status::Error(errors::kPgQueryFailed, "the server did not export a usable snapshot");
  }
  std::vector<std::unique_ptr<PgConnection>> others;
  for (size_t i = 1; i < state_->queries.size(); ++i) {
    SLUICE_ASSIGN_OR_RETURN(auto conn, PgConnection::Connect(state_->options.conninfo));
    SLUICE_RETURN_IF_ERROR(conn->Execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET TRANSACTION SNAPSHOT '" +
                                         *exported[0][0] + "'"));
    others.push_back(std::move(conn));
  }
  std::mutex consume_mutex;
  Status consumer_status;  // once the consumer fails, every partition stops handing it batches
  auto emit = [&](BatchPtr batch) {
    std::lock_guard<std::mutex> lock(consume_mutex);
    if (consumer_status.ok()) consumer_status = consume(std::move(batch));
    return consumer_status;
  };
  std::vector<Status> statuses(state_->queries.size());
  std::vector<std::thread> threads;
  for (size_t i = 1; i < state_->queries.size(); ++i) {
    threads.emplace_back([&, i] {
      CopyReader reader(*state_, others[i - 1].get());
      statuses[i] = reader.Run(state_->queries[i], emit);
    });
  }
  CopyReader reader(*state_, state_->first.get());
  statuses[0] = reader.Run(state_->queries[0], emit);
  for (auto& thread : threads) thread.join();
  for (const auto& status : statuses) SLUICE_RETURN_IF_ERROR(status);
  for (auto& conn : others) SLUICE_RETURN_IF_ERROR(conn->Execute("COMMIT"));
  return state_->first->Execute("COMMIT");
}

Result<std::vector<BatchPtr>> ReadPostgres(PgBatchReadOptions options) {
  SLUICE_ASSIGN_OR_RETURN(auto reader, PgBatchReader::Open(std::move(options)));
  std::vector<BatchPtr> batches;
  SLUICE_RETURN_IF_ERROR(reader->Read([&](BatchPtr batch) {
    batches.push_back(std::move(batch));
    return Status::OK();
  }));
  return batches;
}

}  // namespace sluice::connectors
