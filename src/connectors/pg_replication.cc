#include "sluice/connectors/pg_replication.h"

#include <libpq-fe.h>
#include <poll.h>

#include <chrono>

#include "sluice/connectors/pg_connection.h"
#include "sluice/core/error_classes.h"

namespace sluice::connectors {

namespace {

Status InvalidName(std::string_view what, std::string_view name) {
  return Status::Error(errors::kInvalidArgument, std::string(what) + " `" + std::string(name) +
                                                     "` is not valid: use 1 to 63 lower-case letters, digits and underscores");
}

// Escapes a value for a single-quoted libpq conninfo parameter.
std::string ConninfoQuote(std::string_view value) {
  std::string out = "'";
  for (char c : value) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

int64_t PostgresNowMicros() {
  auto now = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch());
  return now.count() - kPostgresEpochOffsetMicros;
}

}  // namespace

bool IsValidReplicationName(std::string_view name) {
  if (name.empty() || name.size() > 63) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

Result<std::unique_ptr<PgReplicationConnection>> PgReplicationConnection::Connect(const std::string& conninfo) {
  std::string full = conninfo + " replication=database options=" +
                     ConninfoQuote("-c DateStyle=ISO -c bytea_output=hex -c extra_float_digits=3 -c TimeZone=UTC");
  PGconn* conn = PQconnectdb(full.c_str());
  if (conn == nullptr || PQstatus(conn) != CONNECTION_OK) {
    std::string message = conn ? PQerrorMessage(conn) : "out of memory";
    if (conn) PQfinish(conn);
    while (!message.empty() && message.back() == '\n') message.pop_back();
    return Status::Error(errors::kPgConnectionFailed, "cannot open a replication connection: " + message);
  }
  RouteNoticesToDebugLog(conn);
  return std::unique_ptr<PgReplicationConnection>(new PgReplicationConnection(conn));
}

PgReplicationConnection::~PgReplicationConnection() {
  if (buffer_ != nullptr) PQfreemem(buffer_);
  PQfinish(conn_);
}

Status PgReplicationConnection::Fail(std::string_view what) const {
  std::string message = PQerrorMessage(conn_);
  while (!message.empty() && message.back() == '\n') message.pop_back();
  std::string_view error_class = PQstatus(conn_) == CONNECTION_OK ? errors::kPgQueryFailed : errors::kPgConnectionFailed;
  return Status::Error(error_class, std::string(what) + ": " + message);
}

Result<ReplicationSlot> PgReplicationConnection::CreateSlot(const std::string& slot_name, bool export_snapshot) {
  if (!IsValidReplicationName(slot_name)) return InvalidName("replication slot name", slot_name);
  std::string command = "CREATE_REPLICATION_SLOT " + slot_name + " LOGICAL pgoutput " +
                        (export_snapshot ? "EXPORT_SNAPSHOT" : "NOEXPORT_SNAPSHOT");
  PGresult* result = PQexec(conn_, command.c_str());
  if (PQresultStatus(result) != PGRES_TUPLES_OK || PQntuples(result) != 1 || PQnfields(result) < 4) {
    PQclear(result);
    return Fail("cannot create replication slot " + slot_name);
  }
  ReplicationSlot slot;
  slot.name = PQgetvalue(result, 0, 0);
  auto lsn = ParseLsn(PQgetvalue(result, 0, 1));
  if (!PQgetisnull(result, 0, 2)) slot.snapshot_name = PQgetvalue(result, 0, 2);
  PQclear(result);
  if (!lsn.ok()) return lsn.status();
  slot.consistent_point = *lsn;
  return slot;
}

Status PgReplicationConnection::DropSlot(const std::string& slot_name) {
  if (!IsValidReplicationName(slot_name)) return InvalidName("replication slot name", slot_name);
  PGresult* result = PQexec(conn_, ("DROP_REPLICATION_SLOT " + slot_name + " WAIT").c_str());
  bool ok = PQresultStatus(result) == PGRES_COMMAND_OK;
  PQclear(result);
  return ok ? Status::OK() : Fail("cannot drop replication slot " + slot_name);
}

Status PgReplicationConnection::StartReplication(const std::string& slot_name, Lsn start,
                                                 const std::vector<std::string>& publications) {
  if (!IsValidReplicationName(slot_name)) return InvalidName("replication slot name", slot_name);
  if (publications.empty()) return Status::Error(errors::kInvalidArgument, "at least one publication is needed");
  std::string names;
  for (const std::string& p : publications) {
    if (!IsValidReplicationName(p)) return InvalidName("publication name", p);
    if (!names.empty()) names += ",";
    names += p;
  }
  std::string command = "START_REPLICATION SLOT " + slot_name + " LOGICAL " + FormatLsn(start) +
                        " (proto_version '1', publication_names '" + names + "')";
  PGresult* result = PQexec(conn_, command.c_str());
  bool ok = PQresultStatus(result) == PGRES_COPY_BOTH;
  PQclear(result);
  return ok ? Status::OK() : Fail("cannot start replication from slot " + slot_name);
}

Status PgReplicationConnection::StreamEnded() const {
  PGresult* result = PQgetResult(conn_);
  std::string message = result != nullptr ? PQresultErrorMessage(result) : "";
  const char* state = result != nullptr ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  const std::string code = state != nullptr ? state : "";
  PQclear(result);
  if (message.empty()) message = PQerrorMessage(conn_);
  while (!message.empty() && message.back() == '\n') message.pop_back();
  // A shutdown, a crash or a terminated walsender (SQLSTATE classes 57 and 08, or no error at
  // all) is the connection's end; anything else (e.g. an invalidated slot) is the stream's own.
  const bool connection = code.empty() || code.starts_with("57") || code.starts_with("08");
  return Status::Error(connection ? errors::kPgConnectionFailed : errors::kPgQueryFailed,
                       "the server ended the replication stream: " + message);
}

Result<std::optional<ReplicationFrame>> PgReplicationConnection::ReadFrame(std::chrono::milliseconds timeout) {
  if (buffer_ != nullptr) {
    PQfreemem(buffer_);
    buffer_ = nullptr;
  }
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int length = PQgetCopyData(conn_, &buffer_, /*async=*/1);
    if (length > 0) {
      SLUICE_ASSIGN_OR_RETURN(ReplicationFrame frame, ParseReplicationFrame(std::string_view(buffer_, length)));
      return std::optional<ReplicationFrame>(frame);
    }
    if (length == -1) return StreamEnded();
    if (length == -2) return Fail("reading the replication stream failed");
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return std::optional<ReplicationFrame>();
    pollfd fd{PQsocket(conn_), POLLIN, 0};
    int wait_ms = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count());
    if (poll(&fd, 1, wait_ms) < 0 && errno != EINTR) return Fail("waiting for the replication stream failed");
    if (PQconsumeInput(conn_) == 0) return Fail("reading the replication stream failed");
  }
}

Status PgReplicationConnection::SendStatus(Lsn flushed, bool reply_requested) {
  std::string message = EncodeStandbyStatusUpdate(flushed, flushed, flushed, PostgresNowMicros(), reply_requested);
  if (PQputCopyData(conn_, message.data(), static_cast<int>(message.size())) != 1 || PQflush(conn_) != 0) {
    return Fail("cannot send the standby status update");
  }
  return Status::OK();
}

}  // namespace sluice::connectors
