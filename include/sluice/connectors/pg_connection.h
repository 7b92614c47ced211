// A connection to PostgreSQL for ordinary SQL and COPY, with identifier rules shared by every
// PostgreSQL source and sink.
//
// Values never travel inside SQL text: they are bound parameters or COPY data. Identifiers are
// validated by ParseTableName and always double-quoted by QuoteIdentifier. One connection is
// used by one thread at a time. Errors: PG_CONNECTION_FAILED (cannot connect, or the connection
// was lost: the outcome of an open transaction is then unknown), PG_QUERY_FAILED (the server
// refused a statement); last_sqlstate() tells which SQLSTATE the server gave.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/status.h"

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

// A double-quoted identifier with embedded quotes doubled (column names may be any text).
std::string QuoteIdentifier(std::string_view name);

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

}  // namespace sluice::connectors
