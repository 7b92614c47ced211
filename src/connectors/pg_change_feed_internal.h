// The parts of the change feed (pg_change_feed.h): its persisted state, the history tables and
// the snapshot reader. Used by one thread, the feed's.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/connectors/pg_connection.h"
#include "sluice/connectors/pg_types.h"
#include "sluice/connectors/pgoutput.h"
#include "sluice/core/builder.h"
#include "sluice/core/file_system.h"
#include "sluice/core/record_batch.h"

namespace sluice::connectors::cdf {

struct SourceColumn {
  std::string name;
  uint32_t type_oid = 0;
  int32_t type_modifier = -1;
  bool operator==(const SourceColumn&) const = default;
};

// Per-table status values of status.json.
inline constexpr std::string_view kSnapshotting = "SNAPSHOTTING";
inline constexpr std::string_view kStreaming = "STREAMING";
inline constexpr std::string_view kFailed = "FAILED";
// A table of the schema the feed does not capture (yet): listed in status.json, not in state.json.
inline constexpr std::string_view kSkipped = "SKIPPED";

// One source table and its history table.
struct TableState {
  uint32_t oid = 0;
  std::string source_schema;
  std::string source_name;
  std::string history_name;  // lb_<table>_history[_n]
  std::vector<SourceColumn> columns;
  char replica_identity = 'd';
  std::string status = std::string(kStreaming);
  std::string reason;  // why updates and deletes carry only the key (replica identity not FULL)
  std::string error;   // with status FAILED: why the last write of its history failed
  // Progress of the history table, as its txn actions record it.
  Lsn committed_lsn = 0;
  int64_t rows = 0;
  int64_t last_write_ms = 0;
};

// state.json: what a restart resumes from.
struct FeedState {
  std::string slot_name;
  bool slot_dropped = false;
  // The last transaction whose changes are all in Delta: a replay skips transactions up to it.
  Lsn commit_lsn = 0;
  Lsn end_lsn = 0;
  int64_t next_sort_by = 1;
  std::deque<TableState> tables;  // a deque: entries keep their address as tables are added

  TableState* FindTable(uint32_t oid);
};

// History names are unique across every feed of a target (two feeds of schemas `sales` and
// `marketing` may both capture a `users` table): each is claimed by a file in `claims_directory`
// (<target>/_change_feeds/history-names; no slot name has a hyphen) holding the slot name of the
// feed that writes it, made with PutIfAbsent so that feeds running at once never share one.
//
// The first of lb_<table>_history, lb_<table>_history_1, ... that neither this feed's tables nor
// another feed's claim holds, claimed for state.slot_name (a claim of this feed's that a crash kept
// out of state.json is taken again).
Result<std::string> ClaimHistoryName(FileSystem& fs, const std::string& claims_directory, const FeedState& state,
                                     std::string_view source_name);
// Claims the history names of every table of `state` (those of a state written before names were
// claimed); CDF_HISTORY_NAME_TAKEN when another feed claimed one.
Status ClaimHistoryNames(FileSystem& fs, const std::string& claims_directory, const FeedState& state);

// nullopt when the file does not exist; CDF_STATE_CORRUPT when it does not parse.
Result<std::optional<FeedState>> ReadState(FileSystem& fs, const std::string& path);
Status WriteState(FileSystem& fs, const std::string& path, const FeedState& state);

struct FeedLag {
  int64_t bytes = -1;
  double seconds = -1;
};

// A table of the source schema without a history table, and why.
struct SkippedTable {
  std::string schema;
  std::string name;
  std::string reason;
};

// status.json: the feed's status (STREAMING, STOPPED, FAILED with `feed_error`), its lag, every
// captured table, then every skipped one.
std::string StatusJson(const FeedState& state, const FeedLag& lag, std::string_view feed_status,
                       std::string_view feed_error = {}, const std::vector<SkippedTable>& skipped = {});

// Quotes a JSON string.
void AppendJsonString(std::string* out, std::string_view text);

// The commit LSN of the last transaction a copy under a slot's exported snapshot holds. A slot
// becomes consistent at the end of a running-transactions record, its consistent point: the
// snapshot holds the transactions whose Commit record starts before that point, and the server
// streams those whose Commit starts at or after it, the first of them possibly right at it.
inline Lsn LastCommitInSnapshot(Lsn consistent_point) { return consistent_point - 1; }

// The history table of one source table: buffers history rows in column builders and appends
// them to Delta with the feed's txn actions.
class HistoryTable {
 public:
  HistoryTable(std::shared_ptr<FileSystem> fs, std::string path, std::string app_id);

  // Sets the source columns (a new table or a re-snapshot): the builders start empty.
  void SetColumns(const std::vector<SourceColumn>& columns);
  const TypePtr& schema() const { return schema_; }
  const std::string& path() const { return path_; }

  // Loads the txn versions the Delta table holds (none when it does not exist), and its schema:
  // an array column the table holds as a string (written before arrays became Delta arrays)
  // stays a string.
  Status LoadVersions();
  Lsn lsn_version() const { return lsn_version_; }
  int64_t sort_by_version() const { return sort_by_version_; }
  // Whether a change numbered `sort_by` of the transaction committed at `commit_lsn` is already
  // in the table.
  bool AlreadyWritten(Lsn commit_lsn, int64_t sort_by) const {
    return commit_lsn <= lsn_version_ || sort_by <= sort_by_version_;
  }

  // Appends one history row. `tuple` holds the source values; unchanged TOAST values are taken
  // from `toast_source` when given (the old row of an update). Values the mapping cannot hold
  // become null and are counted in malformed_values().
  void Append(std::string_view change_type, const std::vector<TupleValue>& tuple,
              const std::vector<TupleValue>* toast_source, Lsn lsn, std::optional<uint32_t> xid, int64_t now_micros,
              int64_t sort_by);
  int64_t buffered_rows() const { return buffered_rows_; }
  // A whole transaction committed at `commit_lsn` is in the buffer.
  void MarkComplete(Lsn commit_lsn) { complete_lsn_ = commit_lsn; }

  // Writes the buffered rows in one commit (nothing when none are buffered).
  Result<int64_t> Flush();
  // Replaces the table's schema and rows by nothing, in one commit, and sets its sort_by version
  // to `sort_by_version` (what a re-snapshot starts from).
  Status Reset(int64_t sort_by_version);
  // Records `lsn` as written (after a snapshot), with an empty commit when nothing is buffered.
  Status FinishSnapshot(Lsn lsn);

  int64_t malformed_values() const { return malformed_values_; }

 private:
  Result<BatchPtr> TakeBatch();
  // The schema and builders of columns_ (the builders start empty).
  void BuildSchema();

  std::shared_ptr<FileSystem> fs_;
  std::string path_;
  std::string app_id_;
  std::vector<SourceColumn> columns_;
  TypePtr table_schema_;  // the Delta table's, once loaded
  TypePtr schema_;
  std::vector<PgColumnMapping> mappings_;
  std::vector<std::unique_ptr<ColumnBuilder>> builders_;  // source columns, then the five metadata columns
  int64_t buffered_rows_ = 0;
  int64_t last_sort_by_ = 0;
  Lsn complete_lsn_ = 0;
  Lsn lsn_version_ = 0;
  int64_t sort_by_version_ = 0;
  int64_t malformed_values_ = 0;
};

// A source table as the catalog describes it.
struct CatalogTable {
  uint32_t oid = 0;
  std::string schema;
  std::string name;
  char replica_identity = 'd';
  std::vector<SourceColumn> columns;
};
// The tables of `schema` that the publication covers (logged ordinary tables and partitioned
// roots), read in the connection's current transaction.
Result<std::vector<CatalogTable>> ListTables(PgConnection& conn, const std::string& schema);
// The tables of `schema` the feed does not capture: those without an entry in `state` (empty so
// far: their history appears with their first row) and those no publication can publish
// (unlogged tables, foreign tables, materialized views), each with the reason.
Result<std::vector<SkippedTable>> ListSkippedTables(PgConnection& conn, const std::string& schema,
                                                    const FeedState& state);
Result<std::vector<SourceColumn>> ListColumns(PgConnection& conn, uint32_t oid);

// Copies every row of `table` (visible to the connection's open transaction) into `history` as
// `insert` rows numbered from *next_sort_by, flushing every `chunk_rows` rows. Returns the rows
// copied.
Result<int64_t> SnapshotTable(PgConnection& conn, const CatalogTable& table, Lsn snapshot_lsn, HistoryTable* history,
                              int64_t* next_sort_by, int64_t chunk_rows);

}  // namespace sluice::connectors::cdf
