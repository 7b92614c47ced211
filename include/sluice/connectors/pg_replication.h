// A logical replication connection to PostgreSQL speaking the streaming replication protocol
// with the pgoutput plugin: creates and drops slots, starts streaming, hands out the frames the
// server sends, and reports the client's flushed position back.
//
// One connection is used by one thread at a time. Slot and publication names are validated
// (lower-case letters, digits and underscores, as PostgreSQL requires of slot names) before they
// reach the server; failures the server reports carry its SQLSTATE in the message. Errors:
// PG_CONNECTION_FAILED (connect / connection lost), PG_QUERY_FAILED (a command was refused),
// PG_REPLICATION_PROTOCOL_ERROR (a malformed frame), INVALID_ARGUMENT (a bad name).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sluice/connectors/pgoutput.h"
#include "sluice/core/status.h"

typedef struct pg_conn PGconn;

namespace sluice::connectors {

struct ReplicationSlot {
  std::string name;
  Lsn consistent_point = 0;
  // Valid only until the next command on the creating connection: a snapshot of the database as
  // of consistent_point, for `SET TRANSACTION SNAPSHOT` in another connection.
  std::string snapshot_name;
};

class PgReplicationConnection {
 public:
  // `conninfo` is a libpq connection string for the database; replication=database and the
  // session settings sluice reads values with (see pg_types.h) are added.
  static Result<std::unique_ptr<PgReplicationConnection>> Connect(const std::string& conninfo);
  ~PgReplicationConnection();
  PgReplicationConnection(const PgReplicationConnection&) = delete;
  PgReplicationConnection& operator=(const PgReplicationConnection&) = delete;

  // CREATE_REPLICATION_SLOT ... LOGICAL pgoutput, exporting a snapshot when asked.
  Result<ReplicationSlot> CreateSlot(const std::string& slot_name, bool export_snapshot);
  Status DropSlot(const std::string& slot_name);

  // START_REPLICATION SLOT ... LOGICAL start (proto_version 1, the given publications). After
  // this only ReadFrame and SendStatus may be called.
  Status StartReplication(const std::string& slot_name, Lsn start, const std::vector<std::string>& publications);

  // Waits at most `timeout` for the next frame. nullopt when none arrived in time. The frame's
  // views stay valid until the next call to ReadFrame.
  Result<std::optional<ReplicationFrame>> ReadFrame(std::chrono::milliseconds timeout);

  // Tells the server that everything up to `flushed` is durable on the client's side, so the
  // slot may release the WAL before it.
  Status SendStatus(Lsn flushed, bool reply_requested = false);

 private:
  explicit PgReplicationConnection(PGconn* conn) : conn_(conn) {}
  Status Fail(std::string_view what) const;
  // The error of a stream the server ended: PG_CONNECTION_FAILED when the server went away
  // (shutdown, crash, terminated backend), PG_QUERY_FAILED otherwise.
  Status StreamEnded() const;

  PGconn* conn_;
  char* buffer_ = nullptr;  // the last frame, owned by libpq
};

// Whether `name` may be used as a slot or publication name: 1 to 63 characters of [a-z0-9_].
bool IsValidReplicationName(std::string_view name);

}  // namespace sluice::connectors
