#include "sluice/connectors/pg_connection.h"

#include <libpq-fe.h>

#include <fmt/format.h>

#include "sluice/connectors/pg_copy.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/logging.h"

namespace sluice::connectors {

namespace {

void AppendConninfo(std::string* out, std::string_view key, std::string_view value) {
  *out += std::string(key) + "='";
  for (char c : value) {
    if (c == '\'' || c == '\\') *out += '\\';
    *out += c;
  }
  *out += "' ";
}

}  // namespace

std::string PgConninfo(const ValidatedOptions& options, std::string_view database) {
  std::string c;
  AppendConninfo(&c, "host", options.GetString("host"));
  AppendConninfo(&c, "port", std::to_string(options.GetInt64("port")));
  AppendConninfo(&c, "dbname", database);
  AppendConninfo(&c, "sslmode", options.GetString("sslmode"));
  if (options.Has("user")) AppendConninfo(&c, "user", options.GetString("user"));
  if (options.Has("password")) AppendConninfo(&c, "password", options.GetSecret("password"));
  for (const char* file : {"sslrootcert", "sslcert", "sslkey"}) {
    if (options.Has(file)) AppendConninfo(&c, file, options.GetString(file));
  }
  AppendConninfo(&c, "application_name", "sluice");
  // A connection attempt never waits forever: a server (or a proxy before it) that accepts the
  // TCP connection but never answers would otherwise hold a writer's retry loop in libpq for
  // good; after this, the attempt fails as PG_CONNECTION_FAILED and is retried like any other.
  AppendConninfo(&c, "connect_timeout", std::to_string(kPgConnectTimeoutSeconds));
  return c;
}


namespace {

struct ResultDeleter {
  void operator()(PGresult* r) const { PQclear(r); }
};
using ResultPtr = std::unique_ptr<PGresult, ResultDeleter>;

std::string Trimmed(const char* message) {
  std::string out = message ? message : "";
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

}  // namespace

bool IsSimpleIdentifier(std::string_view name) {
  if (name.empty() || name.size() > 63) return false;
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!letter(name[0])) return false;
  for (char c : name) {
    if (!letter(c) && !(c >= '0' && c <= '9')) return false;
  }
  return true;
}

Result<TableName> ParseTableName(std::string_view text) {
  TableName name;
  size_t dot = text.find('.');
  if (dot == std::string_view::npos) {
    name.schema = "public";
    name.table = std::string(text);
  } else {
    name.schema = std::string(text.substr(0, dot));
    name.table = std::string(text.substr(dot + 1));
  }
  if (!IsSimpleIdentifier(name.schema) || !IsSimpleIdentifier(name.table)) {
    return Status::Error(errors::kInvalidArgument,
                         "table name `" + std::string(text) +
                             "` is not valid: write `table` or `schema.table`, each a letter or underscore followed by "
                             "letters, digits or underscores (at most 63 characters)");
  }
  return name;
}

std::string TableName::Quoted() const { return QuoteIdentifier(schema) + "." + QuoteIdentifier(table); }

Status CheckPgColumnNames(const DataType& schema) {
  constexpr size_t kMaxIdentifierBytes = 63;  // NAMEDATALEN - 1
  for (const Field& field : schema.fields()) {
    if (field.name.size() > kMaxIdentifierBytes) {
      return Status::Error(errors::kInvalidSchema,
                           fmt::format("column `{}` has a name of {} bytes; PostgreSQL keeps {} bytes of a name: give "
                                       "it a shorter alias (`... AS short_name`)",
                                       field.name, field.name.size(), kMaxIdentifierBytes));
    }
  }
  return Status::OK();
}

Result<std::vector<bool>> PgArraysHeldAsJsonb(PgConnection* conn, const std::string& table, const DataType& schema) {
  std::vector<bool> as_json(static_cast<size_t>(schema.num_fields()), false);
  bool any_array = false;
  for (const Field& field : schema.fields()) any_array |= IsPgNativeArray(*field.type);
  if (!any_array) return as_json;
  SLUICE_ASSIGN_OR_RETURN(PgRows json_columns,
                          conn->Query("SELECT attname FROM pg_catalog.pg_attribute WHERE attrelid = $1::regclass "
                                      "AND attnum > 0 AND NOT attisdropped AND atttypid = 'jsonb'::regtype",
                                      {table}));
  for (const auto& row : json_columns) {
    const int index = schema.FieldIndex(*row[0]);
    if (index >= 0 && IsPgNativeArray(*schema.field(index).type)) as_json[static_cast<size_t>(index)] = true;
  }
  return as_json;
}

std::string QuoteIdentifier(std::string_view name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}


void RouteNoticesToDebugLog(PGconn* conn) {
  PQsetNoticeProcessor(
      conn, [](void*, const char* message) { LogDebug("PostgreSQL: {}", Trimmed(message)); }, nullptr);
}

Result<std::unique_ptr<PgConnection>> PgConnection::Connect(const std::string& conninfo) {
  std::string full = conninfo + " options='-c DateStyle=ISO -c TimeZone=UTC -c extra_float_digits=3 -c bytea_output=hex'";
  PGconn* conn = PQconnectdb(full.c_str());
  if (conn == nullptr || PQstatus(conn) != CONNECTION_OK) {
    std::string message = conn ? Trimmed(PQerrorMessage(conn)) : "out of memory";
    if (conn) PQfinish(conn);
    return Status::Error(errors::kPgConnectionFailed, "cannot connect to PostgreSQL: " + message);
  }
  RouteNoticesToDebugLog(conn);
  return std::unique_ptr<PgConnection>(new PgConnection(conn));
}

PgConnection::~PgConnection() { PQfinish(conn_); }

bool PgConnection::is_open() const { return PQstatus(conn_) == CONNECTION_OK; }

Status PgConnection::Failure(std::string_view what, const void* raw_result) {
  const PGresult* result = static_cast<const PGresult*>(raw_result);
  const char* state = result ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  last_sqlstate_ = state ? state : "";
  std::string message = Trimmed(result ? PQresultErrorMessage(result) : PQerrorMessage(conn_));
  if (message.empty()) message = Trimmed(PQerrorMessage(conn_));
  if (!is_open() || last_sqlstate_.starts_with("08")) {
    return Status::Error(errors::kPgConnectionFailed, std::string(what) + ": " + message);
  }
  return Status::Error(errors::kPgQueryFailed,
                       std::string(what) + ": " + message + (last_sqlstate_.empty() ? "" : " (SQLSTATE " + last_sqlstate_ + ")"));
}

Status PgConnection::Execute(std::string_view sql) {
  last_sqlstate_.clear();
  ResultPtr result(PQexec(conn_, std::string(sql).c_str()));
  ExecStatusType status = PQresultStatus(result.get());
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) return Failure("statement failed", result.get());
  return Status::OK();
}

namespace {

std::vector<const char*> ParamPointers(const std::vector<std::optional<std::string>>& params) {
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const auto& p : params) values.push_back(p ? p->c_str() : nullptr);
  return values;
}

}  // namespace

Result<PgRows> PgConnection::Collect(void* raw_result, std::string_view what) {
  ResultPtr result(static_cast<PGresult*>(raw_result));
  ExecStatusType status = PQresultStatus(result.get());
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) return Failure(what, result.get());
  PgRows rows(PQntuples(result.get()));
  int columns = PQnfields(result.get());
  for (size_t r = 0; r < rows.size(); ++r) {
    rows[r].resize(columns);
    for (int c = 0; c < columns; ++c) {
      if (!PQgetisnull(result.get(), static_cast<int>(r), c)) rows[r][c] = PQgetvalue(result.get(), static_cast<int>(r), c);
    }
  }
  return rows;
}

Result<PgRows> PgConnection::Query(std::string_view sql, const std::vector<std::optional<std::string>>& params) {
  last_sqlstate_.clear();
  std::vector<const char*> values = ParamPointers(params);
  return Collect(PQexecParams(conn_, std::string(sql).c_str(), static_cast<int>(values.size()), nullptr,
                              values.data(), nullptr, nullptr, 0),
                 "query failed");
}

Status PgConnection::Prepare(const std::string& name, std::string_view sql) {
  last_sqlstate_.clear();
  ResultPtr result(PQprepare(conn_, name.c_str(), std::string(sql).c_str(), 0, nullptr));
  if (PQresultStatus(result.get()) != PGRES_COMMAND_OK) return Failure("preparing a statement failed", result.get());
  return Status::OK();
}

Result<PgRows> PgConnection::ExecutePrepared(const std::string& name,
                                             const std::vector<std::optional<std::string>>& params) {
  last_sqlstate_.clear();
  std::vector<const char*> values = ParamPointers(params);
  return Collect(PQexecPrepared(conn_, name.c_str(), static_cast<int>(values.size()), values.data(), nullptr,
                                nullptr, 0),
                 "statement failed");
}

Result<PgRows> PgConnection::ExecuteWithCopyData(std::string_view sql, std::span<const std::string_view> copy_data) {
  last_sqlstate_.clear();
  if (PQsendQuery(conn_, std::string(sql).c_str()) != 1) return Failure("sending statements failed", nullptr);
  Status status;
  PgRows rows;
  size_t copies = 0;
  while (PGresult* raw = PQgetResult(conn_)) {
    ResultPtr result(raw);
    const ExecStatusType kind = PQresultStatus(raw);
    if (kind == PGRES_COPY_IN) {
      // libpq hands out a COPY_IN result until the COPY ends, so each one is answered at once.
      const bool have_data = copies < copy_data.size();
      // In pieces, as PQputCopyData takes an int length.
      constexpr size_t kPiece = size_t{1} << 26;
      for (std::string_view rest = have_data ? copy_data[copies] : std::string_view(); !rest.empty();) {
        const std::string_view piece = rest.substr(0, kPiece);
        if (PQputCopyData(conn_, piece.data(), static_cast<int>(piece.size())) != 1) {
          return Failure("sending COPY data failed", nullptr);
        }
        rest.remove_prefix(piece.size());
      }
      if (PQputCopyEnd(conn_, have_data ? nullptr : "more COPY statements than COPY data") != 1) {
        return Failure("ending COPY failed", nullptr);
      }
      if (!have_data && status.ok()) status = Status::Error(errors::kPgQueryFailed, "more COPY statements than COPY data");
      ++copies;
    } else if (kind == PGRES_TUPLES_OK) {
      if (status.ok()) {
        auto collected = Collect(result.release(), "statement failed");
        if (!collected.ok()) status = collected.status();
        else rows = std::move(*collected);
      }
    } else if (kind != PGRES_COMMAND_OK && status.ok()) {
      status = Failure("statement failed", raw);
    }
  }
  SLUICE_RETURN_IF_ERROR(status);
  if (copies != copy_data.size()) {
    return Status::Error(errors::kPgQueryFailed, "fewer COPY statements than COPY data");
  }
  return rows;
}

Status PgConnection::BeginCopy(std::string_view copy_sql) {
  last_sqlstate_.clear();
  ResultPtr result(PQexec(conn_, std::string(copy_sql).c_str()));
  if (PQresultStatus(result.get()) != PGRES_COPY_IN) return Failure("COPY failed to start", result.get());
  return Status::OK();
}

Status PgConnection::PutCopyData(std::string_view bytes) {
  if (PQputCopyData(conn_, bytes.data(), static_cast<int>(bytes.size())) != 1) {
    return Failure("sending COPY data failed", nullptr);
  }
  return Status::OK();
}

Status PgConnection::EndCopy() {
  if (PQputCopyEnd(conn_, nullptr) != 1) return Failure("ending COPY failed", nullptr);
  Status status;
  while (PGresult* raw = PQgetResult(conn_)) {
    ResultPtr result(raw);
    if (status.ok() && PQresultStatus(raw) != PGRES_COMMAND_OK) status = Failure("COPY failed", raw);
  }
  return status;
}

}  // namespace sluice::connectors
