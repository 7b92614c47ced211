#include "sluice/storage/commit_coordinator.h"

#include <libpq-fe.h>

#include <memory>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "sluice/core/error_classes.h"

namespace sluice::storage {
namespace {

bool SimpleIdentifier(std::string_view name) {
  if (name.empty() || name.size() > 63) return false;
  if (!((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= 'A' && name[0] <= 'Z') || name[0] == '_')) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

struct ResultDeleter {
  void operator()(PGresult* result) const { PQclear(result); }
};
using PgResult = std::unique_ptr<PGresult, ResultDeleter>;

class PostgresCommitCoordinator final : public CommitCoordinator {
 public:
  PostgresCommitCoordinator(std::string connection, std::string quoted_table)
      : connection_(std::move(connection)), table_(std::move(quoted_table)) {}
  ~PostgresCommitCoordinator() override {
    if (conn_ != nullptr) PQfinish(conn_);
  }

  Status Open() {
    std::lock_guard lock(mutex_);
    SLUICE_RETURN_IF_ERROR(Connect());
    const std::string create =
        fmt::format("CREATE TABLE IF NOT EXISTS {} (path text PRIMARY KEY, bytes bytea NOT NULL, "
                    "complete boolean NOT NULL DEFAULT false, claimed_at timestamptz NOT NULL DEFAULT now())",
                    table_);
    // Two processes creating the table at once: one of them fails on the catalog's unique index
    // (IF NOT EXISTS does not cover the race); its second try finds the table.
    if (Exec(create, {}, nullptr).ok()) return Status::OK();
    return Exec(create, {}, nullptr);
  }

  Result<Claim> TryClaim(const std::string& uri, std::string_view bytes) override {
    std::lock_guard lock(mutex_);
    PgResult inserted;
    SLUICE_RETURN_IF_ERROR(
        Exec(fmt::format("INSERT INTO {} (path, bytes) VALUES ($1, $2) ON CONFLICT (path) DO NOTHING", table_),
             {uri, std::string(bytes)}, &inserted));
    Claim claim;
    if (std::string_view(PQcmdTuples(inserted.get())) == "1") {
      claim.won = true;
      return claim;
    }
    PgResult held;
    SLUICE_RETURN_IF_ERROR(Exec(fmt::format("SELECT bytes, complete FROM {} WHERE path = $1", table_), {uri}, &held));
    if (PQntuples(held.get()) != 1) {
      return Status::Error(errors::kPgQueryFailed, fmt::format("the commit coordinator lost the claim of {}", uri));
    }
    claim.bytes.assign(PQgetvalue(held.get(), 0, 0), static_cast<size_t>(PQgetlength(held.get(), 0, 0)));
    claim.complete = PQgetlength(held.get(), 0, 1) == 1 && PQgetvalue(held.get(), 0, 1)[0] == 1;
    return claim;
  }

  Status Complete(const std::string& uri) override {
    std::lock_guard lock(mutex_);
    return Exec(fmt::format("UPDATE {} SET complete = true WHERE path = $1", table_), {uri}, nullptr);
  }

 private:
  Status Connect() {
    if (conn_ != nullptr && PQstatus(conn_) == CONNECTION_OK) return Status::OK();
    if (conn_ != nullptr) PQfinish(conn_);
    const char* keywords[] = {"dbname", "connect_timeout", "application_name", nullptr};
    const char* values[] = {connection_.c_str(), "30", "sluice-commit-coordinator", nullptr};
    conn_ = PQconnectdbParams(keywords, values, /*expand_dbname=*/1);
    if (PQstatus(conn_) != CONNECTION_OK) {
      // libpq's message names the host and the reason, never the password.
      std::string reason = PQerrorMessage(conn_);
      while (!reason.empty() && reason.back() == '\n') reason.pop_back();
      return Status::Error(errors::kPgConnectionFailed, "the commit coordinator's PostgreSQL: " + reason);
    }
    PQsetNoticeProcessor(conn_, [](void*, const char*) {}, nullptr);
    return Status::OK();
  }

  // Runs `sql` with text parameters (binary for the bytes) and binary results, reconnecting once
  // when the connection was lost before the statement reached the server.
  Status Exec(const std::string& sql, const std::vector<std::string>& parameters, PgResult* out) {
    std::vector<const char*> values;
    std::vector<int> lengths, formats;
    for (const std::string& parameter : parameters) {
      values.push_back(parameter.data());
      lengths.push_back(static_cast<int>(parameter.size()));
      formats.push_back(1);
    }
    for (int attempt = 0;; ++attempt) {
      SLUICE_RETURN_IF_ERROR(Connect());
      PgResult result(PQexecParams(conn_, sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(),
                                   lengths.data(), formats.data(), /*resultFormat=*/1));
      const ExecStatusType status = result ? PQresultStatus(result.get()) : PGRES_FATAL_ERROR;
      if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) {
        if (out != nullptr) *out = std::move(result);
        return Status::OK();
      }
      if (PQstatus(conn_) != CONNECTION_OK && attempt == 0) continue;  // a statement is atomic: try again
      std::string reason = PQerrorMessage(conn_);
      while (!reason.empty() && reason.back() == '\n') reason.pop_back();
      return Status::Error(PQstatus(conn_) == CONNECTION_OK ? errors::kPgQueryFailed : errors::kPgConnectionFailed,
                           "the commit coordinator's PostgreSQL: " + reason);
    }
  }

  const std::string connection_;
  const std::string table_;
  std::mutex mutex_;
  PGconn* conn_ = nullptr;
};

}  // namespace

Result<std::shared_ptr<CommitCoordinator>> ConnectPostgresCommitCoordinator(const std::string& connection,
                                                                            const std::string& table) {
  const size_t dot = table.find('.');
  const std::string schema = dot == std::string::npos ? "" : table.substr(0, dot);
  const std::string name = dot == std::string::npos ? table : table.substr(dot + 1);
  if (!SimpleIdentifier(name) || (dot != std::string::npos && !SimpleIdentifier(schema))) {
    return Status::Error(errors::kInvalidStorageUri,
                         fmt::format("commit coordinator table `{}` is not `name` or `schema.name` of letters, digits "
                                     "and `_`",
                                     table));
  }
  const std::string quoted = schema.empty() ? fmt::format("\"{}\"", name) : fmt::format("\"{}\".\"{}\"", schema, name);
  auto coordinator = std::make_shared<PostgresCommitCoordinator>(connection, quoted);
  SLUICE_RETURN_IF_ERROR(coordinator->Open());
  return std::shared_ptr<CommitCoordinator>(std::move(coordinator));
}

}  // namespace sluice::storage
