// A connection to PostgreSQL for ordinary SQL and COPY, with identifier rules shared by every
// PostgreSQL source and sink.
//
// Values never travel inside SQL text: they are bound parameters or COPY data. Identifiers are
// validated by ParseTableName and always double-quoted by QuoteIdentifier. One connection is
// used by one thread at a time. Errors: PG_CONNECTION_FAILED (cannot connect, or the connection
// was lost: the outcome of an open transaction is then unknown), PG_QUERY_FAILED (the server
// refused a statement); last_sqlstate() tells which SQLSTATE the server gave.
#pragma once

#include <array>
#include <iterator>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/options.h"
#include "sluice/core/status.h"
#include "sluice/core/types.h"

typedef struct pg_conn PGconn;

namespace sluice::connectors {

// `schema.table` or `table` (schema defaults to `public`), each part a simple identifier: a
// letter or underscore, then letters, digits or underscores, at most 63 characters. Anything else
// is INVALID_ARGUMENT: names are never quoted through, so a hostile name cannot reach SQL.
struct TableName {
  std::string schema;
  std::string table;
  // "\"schema\".\"table\""
  std::string Quoted() const;
};
Result<TableName> ParseTableName(std::string_view text);
bool IsSimpleIdentifier(std::string_view name);

// Sends the server's notices and warnings on `conn` ("relation ... already exists, skipping") to
// the debug log, instead of libpq's default of printing them to stderr.
void RouteNoticesToDebugLog(PGconn* conn);

// A double-quoted identifier with embedded quotes doubled (column names may be any text).
std::string QuoteIdentifier(std::string_view name);

// INVALID_SCHEMA naming the first column whose name is longer than PostgreSQL keeps (63 bytes):
// the server would cut it, and every later write would miss the column (and two long names with
// one prefix would collide). Checked before a writer touches its table.
Status CheckPgColumnNames(const DataType& schema);

// The options by which every PostgreSQL format reaches its server: host, port, user, password (a
// secret reference), sslmode (+ sslrootcert, sslcert, sslkey) and database.
inline constexpr std::string_view kPgSslModes[] = {"disable", "allow", "prefer", "require", "verify-ca", "verify-full"};
inline constexpr OptionSpec kPgConnectionOptions[] = {
    {"host", OptionType::kString, "127.0.0.1", false, "Server host name or address."},
    {"port", OptionType::kInt, "5432", false, "Server port."},
    {"user", OptionType::kString, std::nullopt, false, "Role to connect as (default: the OS user)."},
    {"password", OptionType::kSecret, std::nullopt, false, "Password, as a reference: ${env:NAME} or ${file:/path}."},
    {"sslmode", OptionType::kEnum, "prefer", false, "libpq sslmode.", kPgSslModes},
    {"sslrootcert", OptionType::kString, std::nullopt, false, "CA certificate file (PEM)."},
    {"sslcert", OptionType::kString, std::nullopt, false, "Client certificate file (PEM)."},
    {"sslkey", OptionType::kString, std::nullopt, false, "Client key file (PEM)."},
    {"database", OptionType::kString, "postgres", false, "Database name."},
};

// A format's option table: the connection options, then the format's own.
template <size_t N>
constexpr std::array<OptionSpec, std::size(kPgConnectionOptions) + N> WithPgConnectionOptions(
    const OptionSpec (&own)[N]) {
  std::array<OptionSpec, std::size(kPgConnectionOptions) + N> all{};
  size_t i = 0;
  for (const OptionSpec& option : kPgConnectionOptions) all[i++] = option;
  for (const OptionSpec& option : own) all[i++] = option;
  return all;
}

// How long one connection attempt may take, handshake included, before it fails.
inline constexpr int kPgConnectTimeoutSeconds = 30;

// The libpq connection string of those options for `database` (application_name sluice,
// connect_timeout kPgConnectTimeoutSeconds), every value quoted so that none can inject another
// keyword.
std::string PgConninfo(const ValidatedOptions& options, std::string_view database);

// Rows of a query result as text; nullopt is SQL NULL.
using PgRows = std::vector<std::vector<std::optional<std::string>>>;

class PgConnection {
 public:
  // `conninfo` is a libpq connection string. The session uses UTC and ISO dates, so values read
  // back as text are unambiguous.
  static Result<std::unique_ptr<PgConnection>> Connect(const std::string& conninfo);
  ~PgConnection();
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  // Runs SQL that carries no values (DDL, BEGIN/COMMIT); may hold several statements.
  Status Execute(std::string_view sql);
  // Runs one statement with text parameters $1, $2, ... and returns its rows (empty for commands).
  Result<PgRows> Query(std::string_view sql, const std::vector<std::optional<std::string>>& params = {});

  // A server-side prepared statement, created once per session and run many times: the server
  // parses and plans it once.
  Status Prepare(const std::string& name, std::string_view sql);
  Result<PgRows> ExecutePrepared(const std::string& name, const std::vector<std::optional<std::string>>& params = {});
  // Runs `sql`, one or more statements without values (as Execute) among which the i-th
  // `COPY ... FROM STDIN` reads `copy_data[i]`, and returns the rows of the last statement that
  // returned rows. The whole string costs one round trip plus one per COPY, where BeginCopy,
  // PutCopyData and EndCopy cost two per COPY and Execute one per other statement. The first
  // failure stops the rest of the string (inside an explicit transaction block, the block is then
  // aborted until ROLLBACK). Fails with PG_QUERY_FAILED when the statements hold more or fewer
  // COPYs than `copy_data` has entries.
  Result<PgRows> ExecuteWithCopyData(std::string_view sql, std::span<const std::string_view> copy_data);

  // COPY ... FROM STDIN: BeginCopy, any number of PutCopyData, then EndCopy (which reports
  // errors in the data, such as a constraint violation).
  Status BeginCopy(std::string_view copy_sql);
  Status PutCopyData(std::string_view bytes);
  Status EndCopy();

  // The SQLSTATE of the last failure the server reported ("" when none or when the connection
  // itself failed).
  const std::string& last_sqlstate() const { return last_sqlstate_; }
  bool is_open() const;
  PGconn* raw() { return conn_; }

 private:
  explicit PgConnection(PGconn* conn) : conn_(conn) {}
  Status Failure(std::string_view what, const void* result);
  Result<PgRows> Collect(void* result, std::string_view what);

  PGconn* conn_;
  std::string last_sqlstate_;
};

// For each field of `schema`: whether the existing table `table` (an oid or a quoted name) holds
// it in a jsonb column although sluice sends it as a PostgreSQL array (IsPgNativeArray in
// pg_copy.h), as tables created before arrays became PostgreSQL arrays do. Writers send those
// columns as jsonb (PgCopyEncoder's arrays_as_jsonb).
Result<std::vector<bool>> PgArraysHeldAsJsonb(PgConnection* conn, const std::string& table, const DataType& schema);

}  // namespace sluice::connectors
