#include "sluice/connectors/testing/postgres_fixture.h"

#include <libpq-fe.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <optional>

#include <fmt/format.h>

#include "sluice/core/error_classes.h"

namespace sluice::connectors::testing {
namespace {

std::atomic<int> next_database{0};

class SharedServer {
 public:
  ~SharedServer() {
    server_.reset();
    if (!dir_.empty() && std::getenv("SLUICE_KEEP_TEST_DIRS") == nullptr) {
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
    }
  }

  Result<EmbeddedPostgres*> Get() {
    std::lock_guard<std::mutex> lock(mu_);
    if (!start_status_) start_status_ = StartLocked();
    if (!start_status_->ok()) return *start_status_;
    return server_.get();
  }

 private:
  Status StartLocked() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/sluice-pg-test-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      return Status::Error(errors::kEmbeddedServiceFailed,
                           fmt::format("cannot create a temporary directory {}", pattern));
    }
    dir_ = pattern;
    // mkdtemp makes it 0700; the server may run as another OS user (when tests run as root), which
    // must be able to reach its data directory inside.
    chmod(dir_.c_str(), 0755);
    EmbeddedPostgresOptions options;
    options.data_dir = dir_ + "/data";
    options.fsync = false;
    server_ = std::make_unique<EmbeddedPostgres>(options);
    return server_->Start();
  }

  std::mutex mu_;
  std::string dir_;
  std::unique_ptr<EmbeddedPostgres> server_;
  std::optional<Status> start_status_;
};

// Notices such as "table does not exist, skipping" would only clutter test output.
void IgnoreNotices(PGconn* conn) {
  PQsetNoticeProcessor(conn, [](void*, const char*) {}, nullptr);
}

Status SqlFailure(std::string_view sql, PGconn* conn, const PGresult* result) {
  const char* message = result != nullptr ? PQresultErrorMessage(result) : PQerrorMessage(conn);
  return Status::Error(errors::kEmbeddedServiceFailed, fmt::format("SQL failed: {}\n  in: {}", message, sql));
}

}  // namespace

Result<EmbeddedPostgres*> SharedPostgres() {
  static SharedServer server;
  return server.Get();
}

PostgresTestDatabase::PostgresTestDatabase(EmbeddedPostgres* server, std::string name, PGconn* conn)
    : server_(server), name_(std::move(name)), conn_(conn) {}

PostgresTestDatabase::~PostgresTestDatabase() { PQfinish(conn_); }

Result<std::unique_ptr<PostgresTestDatabase>> PostgresTestDatabase::Create() {
  SLUICE_ASSIGN_OR_RETURN(EmbeddedPostgres * server, SharedPostgres());
  std::string name = fmt::format("test_{}", next_database++);
  SLUICE_RETURN_IF_ERROR(server->CreateDatabase(name));
  PGconn* conn = PQconnectdb(server->ConnectionString(name).c_str());
  if (PQstatus(conn) != CONNECTION_OK) {
    Status failure = Status::Error(errors::kEmbeddedServiceFailed,
                                   fmt::format("cannot connect to test database {}: {}", name, PQerrorMessage(conn)));
    PQfinish(conn);
    return failure;
  }
  IgnoreNotices(conn);
  return std::unique_ptr<PostgresTestDatabase>(new PostgresTestDatabase(server, std::move(name), conn));
}

Status PostgresTestDatabase::Execute(std::string_view sql) {
  SLUICE_ASSIGN_OR_RETURN(Rows ignored, Query(sql));
  return Status::OK();
}

Result<Rows> PostgresTestDatabase::Query(std::string_view sql) {
  // A test may restart the server (its port changes): reconnect instead of failing.
  if (PQstatus(conn_) != CONNECTION_OK) {
    PQfinish(conn_);
    conn_ = PQconnectdb(connection_string().c_str());
    if (PQstatus(conn_) != CONNECTION_OK) return SqlFailure(sql, conn_, nullptr);
    IgnoreNotices(conn_);
  }
  std::string text(sql);
  // PQexec runs several statements and keeps the last result; the last one is what callers assert on.
  std::unique_ptr<PGresult, decltype(&PQclear)> result(PQexec(conn_, text.c_str()), &PQclear);
  ExecStatusType status = PQresultStatus(result.get());
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) return SqlFailure(sql, conn_, result.get());
  Rows rows;
  int columns = PQnfields(result.get());
  for (int r = 0; r < PQntuples(result.get()); ++r) {
    std::vector<std::string>& row = rows.emplace_back();
    for (int c = 0; c < columns; ++c) {
      row.push_back(PQgetisnull(result.get(), r, c) ? "NULL" : PQgetvalue(result.get(), r, c));
    }
  }
  return rows;
}

Result<std::string> PostgresTestDatabase::QueryValue(std::string_view sql) {
  SLUICE_ASSIGN_OR_RETURN(Rows rows, Query(sql));
  if (rows.size() != 1 || rows[0].size() != 1) {
    return Status::Error(errors::kEmbeddedServiceFailed,
                         fmt::format("expected one row of one column, got {} rows\n  in: {}", rows.size(), sql));
  }
  return rows[0][0];
}

}  // namespace sluice::connectors::testing
