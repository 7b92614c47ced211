// Transaction: one atomic change to a Delta table under optimistic concurrency
// (PROTOCOL.md, "Creation of New Log Entries").
//
// A transaction reads a snapshot, collects actions, and commits them as the next version with
// put-if-absent of `_delta_log/%020d.json`. When another writer took that version first, the
// winning commits are checked for conflicts the way Spark checks them, and the commit is retried
// at the next version (bounded). Conflicts fail with DELTA_CONCURRENT_MODIFICATION naming the
// kind:
//   ProtocolChanged, MetadataChanged   the winner changed the protocol or the metadata;
//   ConcurrentTransaction              the winner recorded a txn for an appId this one read or sets;
//   ConcurrentAppend                   the winner added files and this one read the whole table, or
//                                      the winner, not a blind append, added files and this one
//                                      read rows of the table (WriteSerializable, as UPDATE, DELETE
//                                      and MERGE read);
//   ConcurrentDeleteRead               the winner removed files and this one read the whole table,
//                                      or removed a file this one read;
//   ConcurrentDeleteDelete             the winner removed a file this one removes too;
//   ConcurrentDomainMetadata           both change the same metadata domain.
// Blind appends (adds only, nothing read) never conflict with other appends.
//
// Every commit starts with a commitInfo action (timestamp, operation, operationParameters,
// readVersion, isBlindAppend, engineInfo "sluice/<version>", txnId).
//
// A Transaction is used by one thread; it is spent by Commit().
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/file_system.h"
#include "sluice/delta/actions.h"
#include "sluice/delta/snapshot.h"

namespace sluice::delta {

// Spark's operation names, shown by `sluice delta history`.
inline constexpr std::string_view kOperationCreateTable = "CREATE TABLE";
inline constexpr std::string_view kOperationWrite = "WRITE";
inline constexpr std::string_view kOperationStreamingUpdate = "STREAMING UPDATE";
inline constexpr std::string_view kOperationMerge = "MERGE";
inline constexpr std::string_view kOperationTruncate = "TRUNCATE";
inline constexpr std::string_view kOperationUpdate = "UPDATE";
inline constexpr std::string_view kOperationDelete = "DELETE";
inline constexpr std::string_view kOperationOptimize = "OPTIMIZE";
inline constexpr std::string_view kOperationVacuumStart = "VACUUM START";
inline constexpr std::string_view kOperationVacuumEnd = "VACUUM END";
inline constexpr std::string_view kOperationRestore = "RESTORE";

struct CommitOptions {
  // How many versions a commit may move forward past lost races before giving up with
  // DELTA_CONCURRENT_MODIFICATION.
  int max_attempts = 1000;
};

class Transaction {
 public:
  // A transaction on the latest version of the table at `table_path`, or on a table that does not
  // exist yet (read_snapshot() is then null and the commit must create it with SetMetadata).
  static Result<std::unique_ptr<Transaction>> Start(std::shared_ptr<FileSystem> fs, std::string table_path);
  // A transaction that read `snapshot`.
  explicit Transaction(SnapshotPtr snapshot);

  const SnapshotPtr& read_snapshot() const { return snapshot_; }
  // The version read, or -1 for a new table.
  int64_t read_version() const { return snapshot_ ? snapshot_->version() : -1; }
  const std::string& table_path() const { return table_path_; }
  const std::shared_ptr<FileSystem>& file_system() const { return fs_; }

  // The latest txn version of `app_id` in the read snapshot. Reading it makes a concurrent txn
  // for the same appId a conflict.
  std::optional<int64_t> TransactionVersion(std::string_view app_id);
  // Declares that what this transaction writes depends on the table's whole content (overwrite,
  // merge, truncate): any concurrent add or remove of data then conflicts.
  void ReadWholeTable() { read_whole_table_ = true; }
  // Declares that what this transaction writes depends on the rows of `files` (the files a
  // predicate could not rule out), under Delta's WriteSerializable isolation: a concurrent
  // removal of one of them conflicts, and so does a concurrent commit adding data unless it is a
  // blind append (rows appended meanwhile are as if appended after this commit).
  void ReadFiles(const std::vector<AddFile>& files);

  // Sets the table's metadata (creating the table, or changing its schema or properties) and
  // returns the schema the commit leaves, which data files of this transaction are written with.
  // With column mapping (delta.columnMapping.mode name or id; a new table gets `name` when a
  // column name needs it) fields without a column id get one and a physical name, kept from the
  // read schema for fields it has. The protocol is raised to the features the metadata uses
  // (ProtocolForEvolvedSchema). DELTA_INVALID_CHARACTERS_IN_COLUMN_NAMES when an existing table
  // without column mapping would get a name it cannot hold; DELTA_PROTOCOL_UNSUPPORTED.
  Result<TypePtr> SetMetadata(Metadata metadata);
  void SetProtocol(Protocol protocol) { protocol_ = std::move(protocol); }
  void Add(AddFile add) { adds_.push_back(std::move(add)); }
  void Remove(RemoveFile remove) { removes_.push_back(std::move(remove)); }
  // Records progress of an application (several appIds may be set in one commit).
  void SetTransactionVersion(std::string app_id, int64_t version);
  void SetDomainMetadata(DomainMetadata domain) { domains_.push_back(std::move(domain)); }

  // The metadata the commit will leave: the one set, else the read snapshot's (null if neither).
  const Metadata* effective_metadata() const;

  // Commits and returns the version written. When that version is a multiple of
  // delta.checkpointInterval (default 10), a checkpoint of it is written too, and on a table with
  // delta.autoOptimize.autoCompact small files may be compacted in a next commit (AutoCompact,
  // maintenance.h); a failure of either is logged, and the commit stands. Errors: DELTA_CONCURRENT_MODIFICATION (see above),
  // DELTA_TABLE_ALREADY_EXISTS when creating a table that another writer created first,
  // DELTA_PROTOCOL_UNSUPPORTED when sluice cannot write the table, INVALID_ARGUMENT for an
  // inconsistent transaction (no metadata for a new table, removing from an append-only table),
  // IO errors. After an IO error the outcome is checked by reading the commit back: an error
  // means the commit was not made, unless its message says the outcome is unknown (the read-back
  // failed too); a retry then finds out through its txn versions.
  Result<int64_t> Commit(std::string_view operation, StringMap operation_parameters,
                         std::optional<StringMap> operation_metrics = std::nullopt,
                         const CommitOptions& options = {});

 private:
  Transaction(std::shared_ptr<FileSystem> fs, std::string table_path);
  Status Validate() const;
  std::vector<Action> BuildActions(std::string_view operation, StringMap parameters,
                                   std::optional<StringMap> metrics) const;
  // OK when the commit that won `version` leaves this transaction valid.
  Status CheckConflicts(int64_t version, const std::vector<Action>& winner) const;
  // Row tracking (a table with the rowTracking writer feature): each file of new rows gets fresh
  // row ids above the table's high-water mark (`baseRowId`) and the commit's version
  // (`defaultRowCommitVersion`), and the commit raises the mark (domain `delta.rowTracking`).
  // Files re-added as they were (with a deletion vector, by RESTORE) keep theirs. Rows a commit
  // copies into new files (UPDATE, MERGE, copy-on-write DELETE, OPTIMIZE) keep their ids in the
  // files' materialized columns, which the writers of those operations fill (DataFileWriter).
  bool TracksRowIds() const;
  // `actions` as committed at `version` after the mark `high_water_mark` (-1: none yet).
  Status AssignRowIds(std::vector<Action>* actions, int64_t version, int64_t high_water_mark) const;
  void CheckpointIfDue(int64_t version) const;
  // Runs automatic compaction after committing `version` when the table asks for it.
  void CompactIfDue(int64_t version, std::string_view operation) const;

  std::shared_ptr<FileSystem> fs_;
  std::string table_path_;
  SnapshotPtr snapshot_;
  std::string txn_id_;
  bool read_whole_table_ = false;
  bool read_files_declared_ = false;
  std::set<std::string, std::less<>> read_files_;
  std::set<std::string, std::less<>> read_app_ids_;
  std::optional<Metadata> metadata_;
  std::optional<Protocol> protocol_;
  std::vector<AddFile> adds_;
  std::vector<RemoveFile> removes_;
  std::vector<SetTransaction> txns_;
  std::vector<DomainMetadata> domains_;
  bool committed_ = false;
};

// "sluice/<version>", the engineInfo of every commit.
std::string EngineInfo();

}  // namespace sluice::delta
