// The PostgreSQL change feed: every insert, update and delete of the tables of one schema,
// captured from the write-ahead log through logical replication (pgoutput) and appended to one
// Delta history table per source table (docs/change-feed.md).
//
// Set-up: a publication FOR TABLES IN SCHEMA (publish_via_partition_root) is created before the
// replication slot; the slot exports a snapshot under which every non-empty table is copied as
// `insert` rows; streaming starts at the slot's consistent point, so there is no gap and no
// overlap. Each source table (by relation OID, so a rename keeps its history) maps to
// `lb_<table>_history` in the target schema (`_1`, `_2` ... on collision); the mapping, the
// confirmed position and the `_sort_by` counter live in `state.json` in the feed's state
// directory, `status.json` beside it.
//
// Exactly once: every `flush_interval` the buffered changes go to Delta, one commit per table,
// each carrying two txn actions: `<slot>/<history table>` with the commit LSN of the last whole
// transaction written, and `<slot>/<history table>/sort_by` with the last `_sort_by` written.
// `_sort_by` is a counter advanced by every change of every transaction after the confirmed
// position, so a replay numbers the same changes the same way; a replayed change is skipped for a
// table when its transaction's commit LSN is at most the first version or its `_sort_by` at most
// the second. This lets a large transaction be flushed in parts (memory stays bounded by
// `max_buffered_rows`). The server is told a Commit's end LSN only after `state.json` recording
// it is durable, which happens after every Delta commit covering it.
//
// Errors: CDF_INVALID_OPTIONS (bad options), CDF_NOT_READY (the server cannot feed changes:
// wal_level, privileges, no free slot), CDF_STATE_CORRUPT (state.json unreadable),
// CDF_ALREADY_RUNNING (another process runs this feed), and those of the PostgreSQL connections
// (PG_CONNECTION_FAILED, PG_QUERY_FAILED, PG_REPLICATION_PROTOCOL_ERROR) and of the Delta layer.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "sluice/core/options.h"
#include "sluice/core/status.h"

namespace sluice::connectors {

// The options a change feed accepts (connection fields as the `postgresql` sink names them, plus
// schema, target, warehouse, slot_name, publication_name, flush_interval).
std::span<const OptionSpec> ChangeFeedOptionSpecs();

struct ChangeFeedConfig {
  std::string conninfo;  // libpq connection string of the source database
  std::string schema;    // the source schema
  // Where the history tables go: <warehouse>/<target_catalog>/<target_schema>. Empty when the
  // options gave no target (enough for check and set-replica-identity, not to run a feed).
  std::string warehouse;
  std::string target_catalog;
  std::string target_schema;
  std::string slot_name;
  std::string publication_name;
  std::chrono::microseconds flush_interval{std::chrono::seconds(1)};
  // Buffered history rows (all tables) that force a flush, even inside a transaction.
  int64_t max_buffered_rows = 100000;

  // CDF_INVALID_OPTIONS unless warehouse and target are set.
  Status CheckTarget() const;
  // <warehouse>/<catalog>/<schema>: where the history tables are.
  std::string target_directory() const;
  // <target_directory>/_change_feeds/<slot_name>: state.json, status.json, the lock, the running
  // process's pid. The warehouse may be a local path or an object store's URI.
  std::string state_directory() const;
};

// Checks options against ChangeFeedOptionSpecs() (CDF_INVALID_OPTIONS, UNRESOLVED_SECRET); `target`
// and `warehouse` are optional here and required by CheckTarget().
Result<ChangeFeedConfig> MakeChangeFeedConfig(const std::map<std::string, std::string>& options);

// What `sluice cdf check` reports.
struct ChangeFeedCheck {
  std::string wal_level;
  bool can_replicate = false;  // superuser or REPLICATION
  int64_t free_slots = 0;
  struct Table {
    std::string name;
    std::string replica_identity;  // default, full, index, nothing
    bool ready() const { return replica_identity == "full"; }
  };
  std::vector<Table> tables;
  // One line per thing to fix; empty when the server can feed changes.
  std::vector<std::string> problems;
};
Result<ChangeFeedCheck> CheckChangeFeed(const std::string& conninfo, const std::string& schema);

// ALTER TABLE ... REPLICA IDENTITY FULL on every table of `schema`; with `future`, an event
// trigger does the same for tables created later. Returns the tables changed.
Result<std::vector<std::string>> SetReplicaIdentityFull(const std::string& conninfo, const std::string& schema,
                                                        bool future);

// What a running feed has done, for progress displays; its fields may be read from any thread
// while the feed runs (and after it ended: a holder keeps the last values).
struct ChangeFeedProgress {
  // The end LSN of the last transaction confirmed to the server (everything before it is in Delta).
  std::atomic<uint64_t> confirmed_lsn{0};
  // Rows in the feed's history tables: the initial snapshots' and the changes captured since.
  std::atomic<int64_t> history_rows{0};
  // WAL the server keeps for the slot beyond what is in Delta; -1 until first measured.
  std::atomic<int64_t> slot_lag_bytes{-1};
};

class PgChangeFeed {
 public:
  // Sets up (publication, slot, initial snapshot into Delta) or resumes from state.json, and
  // starts streaming. Holds the feed's lock (FileSystem::Lock: flock locally, a lease on object
  // stores) until destroyed; CDF_ALREADY_RUNNING while another process holds it.
  static Result<std::unique_ptr<PgChangeFeed>> Start(ChangeFeedConfig config);
  ~PgChangeFeed();
  PgChangeFeed(const PgChangeFeed&) = delete;
  PgChangeFeed& operator=(const PgChangeFeed&) = delete;

  // Streams until `stop` becomes true (checked at least every 100 ms), then flushes what whole
  // transactions it holds. An error stops the feed; a restart resumes without loss.
  Status Run(const std::atomic<bool>& stop);

  // The end LSN of the last transaction confirmed to the server (everything before it is in
  // Delta). Thread-safe.
  uint64_t confirmed_lsn() const { return progress_->confirmed_lsn.load(); }
  // Updated as the feed runs (at each flush and status refresh).
  std::shared_ptr<const ChangeFeedProgress> progress() const { return progress_; }

  class Impl;

 private:
  explicit PgChangeFeed(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  std::shared_ptr<ChangeFeedProgress> progress_ = std::make_shared<ChangeFeedProgress>();
};

// Drops the feed's replication slot (the server stops retaining WAL for it). state.json keeps the
// table mapping; a later Start makes a new slot and says that changes made in between are missing.
// Must not run while the feed runs (CDF_ALREADY_RUNNING). Without a target only the slot is dropped.
Status DropChangeFeedSlot(const ChangeFeedConfig& config);

// The pid of the process running the feed on this host, or 0 when none does.
int64_t RunningChangeFeedPid(const ChangeFeedConfig& config);

// The content of status.json (a JSON object) as the feed last wrote it (at start and after every
// flush). FILE_NOT_FOUND when the feed never ran.
Result<std::string> ChangeFeedStatus(const ChangeFeedConfig& config);

}  // namespace sluice::connectors
