// The shared PostgreSQL server of integration tests: one per test binary, started lazily on first
// use and stopped at process exit (the Kafka counterpart is kafka_fixture.h).
//
// Each test asks for its own database (PostgresTestDatabase::Create), so tests never see each
// other's data and the expensive start happens once. The server runs in a
// fresh directory under $TMPDIR (default /tmp) with fsync off; the directory is removed at exit
// (kept when SLUICE_KEEP_TEST_DIRS is set).
//
// First use must happen on the thread that lives as long as the tests (GoogleTest's main thread):
// the server is stopped if that thread exits (see embedded_postgres.h). Creating databases is
// thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/connectors/embedded_postgres.h"
#include "sluice/core/status.h"

typedef struct pg_conn PGconn;

namespace sluice::connectors::testing {

// The shared server, started on first call. A failed start is remembered and returned again.
Result<EmbeddedPostgres*> SharedPostgres();

// Rows of a query result as text; SQL NULL is rendered as "NULL".
using Rows = std::vector<std::vector<std::string>>;

// A fresh database `test_<n>` on the shared server, with one open connection for assertions.
// Not thread-safe. The database is left in place (replication slots or open connections a test
// created would block a drop); the whole server goes away at exit.
class PostgresTestDatabase {
 public:
  static Result<std::unique_ptr<PostgresTestDatabase>> Create();
  ~PostgresTestDatabase();
  PostgresTestDatabase(const PostgresTestDatabase&) = delete;
  PostgresTestDatabase& operator=(const PostgresTestDatabase&) = delete;

  const std::string& name() const { return name_; }
  // A libpq connection string for this database.
  std::string connection_string() const { return server_->ConnectionString(name_); }
  EmbeddedPostgres& server() const { return *server_; }

  // Runs one or more statements; fails with the server's message.
  Status Execute(std::string_view sql);
  // Runs a query and returns all rows as text.
  Result<Rows> Query(std::string_view sql);
  // Runs a query expected to return exactly one row of one column.
  Result<std::string> QueryValue(std::string_view sql);

 private:
  PostgresTestDatabase(EmbeddedPostgres* server, std::string name, PGconn* conn);

  EmbeddedPostgres* server_;
  std::string name_;
  PGconn* conn_;
};

}  // namespace sluice::connectors::testing
