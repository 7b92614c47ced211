// PgChangeFeed's insides, shared by its set-up (pg_change_feed.cc) and its streaming loop
// (pg_change_feed_stream.cc). Used by the feed's thread only.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "pg_change_feed_internal.h"
#include "sluice/connectors/pg_change_feed.h"
#include "sluice/connectors/pg_connection.h"
#include "sluice/connectors/pg_replication.h"

namespace sluice::connectors {

using cdf::HistoryTable;

int64_t NowMs();

class PgChangeFeed::Impl {
 public:
  Impl(ChangeFeedConfig config, ChangeFeedProgress* progress);
  ~Impl();

  Status Setup();
  Status Run(const std::atomic<bool>& stop);
  // Records in status.json that the feed stopped on `error` (when this process holds the lock, so
  // that a second process never overwrites the running one's status).
  void ReportFailure(const Status& error);

 private:
  Status Lock();
  HistoryTable* AddHistory(const cdf::TableState& table);
  // Adds the table to the state under a history name claimed for this feed (ClaimHistoryName).
  Result<cdf::TableState*> RegisterTable(uint32_t oid, std::string schema, std::string name,
                                         std::vector<cdf::SourceColumn> columns, char replica_identity);
  // <target>/_change_feeds/history-names: the history names claimed by the feeds of the target.
  std::string HistoryClaimsDirectory() const;
  void NoteReplicaIdentity(cdf::TableState* table);
  // Copies the tables of the schema (only those without history when `only_new`) under the
  // exported snapshot `snapshot_name` taken at `snapshot_lsn`.
  Status SnapshotTables(const std::string& snapshot_name, Lsn snapshot_lsn, bool only_new);

  Status HandleFrame(const ReplicationFrame& frame);
  Status HandleMessage(const PgOutputMessage& message, int64_t now_micros);
  Status HandleRelation(const PgOutputMessage& message);
  Status HandleChange(const PgOutputMessage& message, int64_t now_micros);
  Status HandleCommit(const PgOutputMessage& message);
  // Writes every buffered row, then state.json (the last whole transaction) and status.json, then
  // confirms that transaction's end LSN to the server.
  Status Flush();
  // Writes every buffered row (but for tables awaiting a re-snapshot), nothing else.
  Status FlushTables();
  // Rewrites a table's history with its current rows after its columns changed.
  Status Resnapshot(uint32_t oid);
  // Marks a table FAILED with `error` and returns it.
  Status TableFailed(cdf::TableState* table, Status error);
  // Writes status.json, listing the tables of the schema not captured as SKIPPED.
  Status WriteStatus(std::string_view feed_status);
  Status StreamUntil(const std::atomic<bool>& stop);
  Status SendStatus(bool reply_requested);
  int64_t BufferedRows() const;

  ChangeFeedConfig config;
  std::shared_ptr<FileSystem> fs;
  std::string state_path;
  std::string status_path;
  ChangeFeedProgress* progress;
  std::atomic<uint64_t>* confirmed_lsn;  // &progress->confirmed_lsn
  std::unique_ptr<FileLock> lock;  // the feed's, while it runs

  std::unique_ptr<PgConnection> sql;
  std::unique_ptr<PgReplicationConnection> replication;
  cdf::FeedState state;
  std::map<uint32_t, std::unique_ptr<HistoryTable>> histories;

  // The next `_sort_by`, advanced by every change of every transaction after the cursor.
  int64_t next_sort_by = 1;
  // The last whole transaction read: what state.json records at the next flush.
  Lsn cursor_commit_lsn = 0;
  Lsn cursor_end_lsn = 0;
  int64_t cursor_next_sort_by = 1;
  int64_t cursor_commit_time = 0;  // microseconds since the PostgreSQL epoch
  bool state_dirty = false;

  // The transaction being read.
  bool in_transaction = false;
  bool skip_transaction = false;
  Lsn transaction_commit_lsn = 0;
  uint32_t transaction_xid = 0;
  std::set<uint32_t> touched;
  // Tables whose columns changed in this transaction: re-snapshot after its commit.
  std::map<uint32_t, std::vector<cdf::SourceColumn>> resnapshot;

  // Relations announced but without a change yet.
  std::map<uint32_t, cdf::CatalogTable> unregistered;
  // Which columns form each relation's replica identity key, from its Relation message.
  std::map<uint32_t, std::vector<bool>> key_columns;
  std::vector<TupleValue> scratch;
  PgOutputMessage message;
  std::chrono::steady_clock::time_point next_flush;
  std::chrono::steady_clock::time_point next_status;

  // What status.json reports beside the state.
  std::vector<cdf::SkippedTable> skipped;
  std::string feed_error;
};

}  // namespace sluice::connectors
