// Parsers for PostgreSQL's logical replication stream: the replication protocol's CopyData
// frames (XLogData 'w', primary keepalive 'k') and the pgoutput plugin's messages inside them
// (protocol versions 1 and 2: Begin, Commit, Origin, Relation, Type, Insert, Update, Delete,
// Truncate, Message, and the Stream Start/Stop/Commit/Abort messages of streamed transactions).
//
// The bytes come from the server and are treated as untrusted: every length is checked and a
// malformed message yields PG_REPLICATION_PROTOCOL_ERROR, never a crash or an over-read.
// Parsed messages hold string_views INTO the input buffer; they are valid while it is. The functions
// are thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/status.h"

namespace sluice::connectors {

using Lsn = uint64_t;

// "16/B374D848", the form PostgreSQL prints and accepts.
std::string FormatLsn(Lsn lsn);
Result<Lsn> ParseLsn(std::string_view text);

// Microseconds between the Unix epoch and PostgreSQL's epoch (2000-01-01 UTC).
inline constexpr int64_t kPostgresEpochOffsetMicros = 946684800LL * 1000000LL;

// One CopyData frame of a replication connection.
struct XLogData {
  Lsn wal_start = 0;
  Lsn wal_end = 0;
  int64_t send_time = 0;     // microseconds since the PostgreSQL epoch
  std::string_view payload;  // one pgoutput message
};
struct PrimaryKeepalive {
  Lsn wal_end = 0;
  int64_t send_time = 0;
  bool reply_requested = false;
};
struct ReplicationFrame {
  enum class Kind { kXLogData, kKeepalive } kind;
  XLogData xlog;
  PrimaryKeepalive keepalive;
};
Result<ReplicationFrame> ParseReplicationFrame(std::string_view bytes);

// The Standby Status Update ('r') a client sends: written/flushed/applied positions.
std::string EncodeStandbyStatusUpdate(Lsn written, Lsn flushed, Lsn applied, int64_t client_time_pg_micros,
                                      bool reply_requested);

// A column value in a tuple. For kText/kBinary, `data` holds the value's bytes.
struct TupleValue {
  enum class Kind : char { kNull = 'n', kUnchangedToast = 'u', kText = 't', kBinary = 'b' } kind;
  std::string_view data;
};

struct RelationColumn {
  bool part_of_key = false;
  std::string_view name;
  uint32_t type_oid = 0;
  int32_t type_modifier = -1;
};

struct PgOutputMessage {
  enum class Kind : char {
    kBegin = 'B',
    kCommit = 'C',
    kOrigin = 'O',
    kRelation = 'R',
    kType = 'Y',
    kInsert = 'I',
    kUpdate = 'U',
    kDelete = 'D',
    kTruncate = 'T',
    kMessage = 'M',
    kStreamStart = 'S',
    kStreamStop = 'E',
    kStreamCommit = 'c',
    kStreamAbort = 'A',
  } kind;

  // Present on every message of a streamed transaction (between Stream Start and Stop), and on
  // Stream Start/Commit/Abort; 0 elsewhere, and the Begin message's xid otherwise.
  uint32_t xid = 0;

  // Begin: final_lsn, timestamp. Commit / Stream Commit: commit_lsn, end_lsn, timestamp.
  // Message: lsn in commit_lsn. Origin: origin commit lsn in commit_lsn.
  Lsn final_lsn = 0;
  Lsn commit_lsn = 0;
  Lsn end_lsn = 0;
  int64_t timestamp = 0;  // microseconds since the PostgreSQL epoch
  uint8_t flags = 0;      // Commit flags; Message: 1 = transactional; Truncate options; Stream Start: 1 = first segment

  // Relation, Type, Insert, Update, Delete: the relation (or type) oid.
  uint32_t oid = 0;
  std::string_view namespace_name;  // Relation, Type
  std::string_view name;            // Relation / Type name, Origin name, Message prefix
  char replica_identity = 0;        // Relation: 'd' default, 'n' nothing, 'f' full, 'i' index
  std::vector<RelationColumn> columns;

  // Update: old_kind is 'K' (key columns only), 'O' (whole old row) or 0 (no old row sent).
  // Delete: 'K' or 'O'. old_tuple holds that row; new_tuple the inserted / updated row.
  char old_kind = 0;
  std::vector<TupleValue> old_tuple;
  std::vector<TupleValue> new_tuple;

  std::vector<uint32_t> truncated_oids;  // Truncate
  std::string_view content;              // Message content
  uint32_t subxid = 0;                   // Stream Abort
};

// Parses one pgoutput message into `out`, reusing its vectors (so a caller that keeps one
// PgOutputMessage allocates only while its vectors grow). `in_stream` tells whether the message
// lies between Stream Start and Stream Stop (then data messages carry an xid).
Status ParsePgOutputMessage(std::string_view bytes, bool in_stream, PgOutputMessage* out);

}  // namespace sluice::connectors
