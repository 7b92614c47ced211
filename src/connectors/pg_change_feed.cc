// The change feed's set-up and resume: lock, publication, slot, initial snapshot, history tables.
// Streaming lives in pg_change_feed_stream.cc.
#include "sluice/connectors/pg_change_feed.h"

#include <signal.h>
#include <unistd.h>

#include <charconv>
#include <thread>

#include <fmt/format.h>

#include "pg_change_feed_impl.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/logging.h"
#include "sluice/storage/file_systems.h"

namespace sluice::connectors {

namespace {

using cdf::CatalogTable;
using cdf::FeedState;
using cdf::TableState;

// Rows per Delta commit while a table is copied.
constexpr int64_t kSnapshotChunkRows = 200000;

std::string LockPath(const ChangeFeedConfig& config) { return config.state_directory() + "/lock"; }
// The running feed's process id, for `sluice cdf stop` and status (the lock says who may run).
std::string PidPath(const ChangeFeedConfig& config) { return config.state_directory() + "/pid"; }

bool ProcessAlive(int64_t pid) { return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM); }

int64_t ReadPid(FileSystem& fs, const std::string& path) {
  auto text = fs.ReadFile(path);
  if (!text.ok()) return 0;
  int64_t pid = 0;
  std::from_chars(text->data(), text->data() + text->size(), pid);
  return pid;
}

// The exported snapshot's id goes into SET TRANSACTION SNAPSHOT, which takes no parameters.
Status ImportSnapshot(PgConnection& conn, const std::string& snapshot_name) {
  for (char c : snapshot_name) {
    if (!((c >= '0' && c <= '9') || (c >= 'A' && c <= 'F') || c == '-')) {
      return Status::Error(errors::kPgReplicationProtocolError, "the server exported an unexpected snapshot id");
    }
  }
  return conn.Execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET TRANSACTION SNAPSHOT '" + snapshot_name +
                      "'");
}

Result<bool> SlotExists(PgConnection& conn, const std::string& slot) {
  SLUICE_ASSIGN_OR_RETURN(PgRows rows, conn.Query("SELECT 1 FROM pg_replication_slots WHERE slot_name = $1", {slot}));
  return !rows.empty();
}

// After a client dies, its walsender holds the slot until it notices: wait for that (bounded).
Status WaitUntilSlotIsFree(PgConnection& conn, const std::string& slot) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (;;) {
    SLUICE_ASSIGN_OR_RETURN(PgRows rows,
                            conn.Query("SELECT active_pid FROM pg_replication_slots WHERE slot_name = $1 AND active",
                                       {slot}));
    if (rows.empty()) return Status::OK();
    if (std::chrono::steady_clock::now() > deadline) {
      return Status::Error(errors::kCdfAlreadyRunning,
                           fmt::format("the replication slot {} is in use by server process {}", slot,
                                       rows[0][0].value_or("?")));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace

PgChangeFeed::Impl::Impl(ChangeFeedConfig config_in, ChangeFeedProgress* progress_in)
    : config(std::move(config_in)),
      fs(storage::DefaultFileSystem()),
      state_path(config.state_directory() + "/state.json"),
      status_path(config.state_directory() + "/status.json"),
      progress(progress_in),
      confirmed_lsn(&progress_in->confirmed_lsn) {}

PgChangeFeed::Impl::~Impl() {
  if (lock != nullptr) (void)fs->Delete(PidPath(config));
}

Status PgChangeFeed::Impl::Lock() {
  SLUICE_RETURN_IF_ERROR(fs->CreateDirectories(config.state_directory()));
  // FileSystem::Lock: flock() on the local disk (gone with a killed process), a lease on object
  // stores (taken over once a killed process's lease expires).
  Result<std::unique_ptr<FileLock>> taken = fs->Lock(LockPath(config));
  if (!taken.ok()) {
    if (taken.status().error_class() != errors::kStorageLeaseHeld) return taken.status();
    const int64_t pid = ReadPid(*fs, PidPath(config));
    return Status::Error(errors::kCdfAlreadyRunning,
                         fmt::format("the change feed {} already runs{}: {}", config.slot_name,
                                     pid > 0 ? fmt::format(" in process {}", pid) : "", taken.status().message()));
  }
  lock = std::move(taken).value();
  return fs->AtomicWrite(PidPath(config), std::to_string(::getpid()));
}

HistoryTable* PgChangeFeed::Impl::AddHistory(const TableState& table) {
  auto history = std::make_unique<HistoryTable>(fs, config.target_directory() + "/" + table.history_name,
                                                config.slot_name + "/" + table.history_name);
  history->SetColumns(table.columns);
  HistoryTable* raw = history.get();
  histories[table.oid] = std::move(history);
  return raw;
}

std::string PgChangeFeed::Impl::HistoryClaimsDirectory() const {
  return config.target_directory() + "/_change_feeds/history-names";
}

Result<TableState*> PgChangeFeed::Impl::RegisterTable(uint32_t oid, std::string schema, std::string name,
                                                      std::vector<cdf::SourceColumn> columns, char replica_identity) {
  TableState table;
  table.oid = oid;
  table.source_schema = std::move(schema);
  table.source_name = std::move(name);
  SLUICE_ASSIGN_OR_RETURN(table.history_name,
                          cdf::ClaimHistoryName(*fs, HistoryClaimsDirectory(), state, table.source_name));
  table.columns = std::move(columns);
  table.replica_identity = replica_identity;
  NoteReplicaIdentity(&table);
  state.tables.push_back(std::move(table));
  TableState* added = &state.tables.back();
  LogInfo("change feed {}: {}.{} -> {}", config.slot_name, added->source_schema, added->source_name,
          added->history_name);
  return added;
}

void PgChangeFeed::Impl::NoteReplicaIdentity(TableState* table) {
  if (table->replica_identity == 'f') {
    if (table->reason.starts_with("REPLICA IDENTITY")) table->reason.clear();
    return;
  }
  std::string reason =
      "REPLICA IDENTITY is not FULL: updates and deletes carry only the key; run sluice cdf set-replica-identity";
  if (table->reason != reason) {
    LogWarn("change feed {}: {}.{}: {}", config.slot_name, table->source_schema, table->source_name, reason);
    table->reason = reason;
  }
}

Status PgChangeFeed::Impl::SnapshotTables(const std::string& snapshot_name, Lsn snapshot_lsn, bool only_new) {
  SLUICE_RETURN_IF_ERROR(ImportSnapshot(*sql, snapshot_name));
  const Lsn copied_through = cdf::LastCommitInSnapshot(snapshot_lsn);
  SLUICE_ASSIGN_OR_RETURN(std::vector<CatalogTable> tables, cdf::ListTables(*sql, config.schema));
  for (const CatalogTable& table : tables) {
    if (only_new && state.FindTable(table.oid) != nullptr) continue;
    SLUICE_ASSIGN_OR_RETURN(PgRows any, sql->Query("SELECT EXISTS (SELECT 1 FROM " + QuoteIdentifier(table.schema) +
                                                   "." + QuoteIdentifier(table.name) + ")"));
    if (any.empty() || any[0].empty() || any[0][0] != "t") {
      LogInfo("change feed {}: {}.{} is empty; its history table appears with its first row", config.slot_name,
              table.schema, table.name);
      continue;
    }
    SLUICE_ASSIGN_OR_RETURN(TableState * entry,
                            RegisterTable(table.oid, table.schema, table.name, table.columns, table.replica_identity));
    entry->status = std::string(cdf::kSnapshotting);
    HistoryTable* history = AddHistory(*entry);
    auto copy = [&]() -> Result<int64_t> {
      SLUICE_RETURN_IF_ERROR(history->Reset(state.next_sort_by - 1));
      SLUICE_ASSIGN_OR_RETURN(int64_t rows, cdf::SnapshotTable(*sql, table, snapshot_lsn, history,
                                                               &state.next_sort_by, kSnapshotChunkRows));
      SLUICE_RETURN_IF_ERROR(history->FinishSnapshot(copied_through));
      return rows;
    };
    Result<int64_t> rows = copy();
    if (!rows.ok()) return TableFailed(entry, rows.status());
    entry->status = std::string(cdf::kStreaming);
    entry->rows = *rows;
    entry->committed_lsn = copied_through;
    entry->last_write_ms = NowMs();
    LogInfo("change feed {}: copied {} rows of {}.{}", config.slot_name, *rows, table.schema, table.name);
  }
  return sql->Execute("COMMIT");
}

Status PgChangeFeed::Impl::Setup() {
  SLUICE_RETURN_IF_ERROR(config.CheckTarget());
  SLUICE_RETURN_IF_ERROR(Lock());
  SLUICE_ASSIGN_OR_RETURN(std::optional<FeedState> saved, cdf::ReadState(*fs, state_path));
  SLUICE_ASSIGN_OR_RETURN(sql, PgConnection::Connect(config.conninfo));
  SLUICE_ASSIGN_OR_RETURN(PgRows level, sql->Query("SELECT current_setting('wal_level')"));
  if (level.empty() || level[0].empty() || level[0][0] != "logical") {
    return Status::Error(errors::kCdfNotReady, "the server's wal_level is not logical; run sluice cdf check");
  }
  // The publication first: a slot decodes with the publications that exist when changes are read.
  SLUICE_ASSIGN_OR_RETURN(PgRows publication,
                          sql->Query("SELECT 1 FROM pg_publication WHERE pubname = $1", {config.publication_name}));
  if (publication.empty()) {
    SLUICE_RETURN_IF_ERROR(sql->Execute(fmt::format(
        "CREATE PUBLICATION {} FOR TABLES IN SCHEMA {} WITH (publish_via_partition_root = true)",
        config.publication_name, QuoteIdentifier(config.schema))));
  }
  SLUICE_ASSIGN_OR_RETURN(replication, PgReplicationConnection::Connect(config.conninfo));
  SLUICE_ASSIGN_OR_RETURN(bool slot_exists, SlotExists(*sql, config.slot_name));
  if (slot_exists) SLUICE_RETURN_IF_ERROR(WaitUntilSlotIsFree(*sql, config.slot_name));
  if (saved && !saved->slot_dropped && slot_exists) {
    state = std::move(*saved);
    SLUICE_RETURN_IF_ERROR(cdf::ClaimHistoryNames(*fs, HistoryClaimsDirectory(), state));
  } else {
    bool resume = saved.has_value();
    if (resume) {
      state = std::move(*saved);
      LogWarn("change feed {}: the replication slot was dropped; changes made since {} are not captured",
              config.slot_name, FormatLsn(state.end_lsn));
    } else if (slot_exists) {
      // A set-up that did not finish: its snapshot is gone with the process that took it.
      SLUICE_RETURN_IF_ERROR(replication->DropSlot(config.slot_name));
    }
    state.slot_name = config.slot_name;
    state.slot_dropped = false;
    SLUICE_RETURN_IF_ERROR(cdf::ClaimHistoryNames(*fs, HistoryClaimsDirectory(), state));
    for (const TableState& table : state.tables) AddHistory(table);
    SLUICE_ASSIGN_OR_RETURN(ReplicationSlot slot, replication->CreateSlot(config.slot_name, true));
    SLUICE_RETURN_IF_ERROR(SnapshotTables(slot.snapshot_name, slot.consistent_point, resume));
    // Streaming starts at the consistent point, and a transaction committed right at it is not
    // in the copy: only those before it are skipped.
    state.commit_lsn = cdf::LastCommitInSnapshot(slot.consistent_point);
    state.end_lsn = slot.consistent_point;
    SLUICE_RETURN_IF_ERROR(cdf::WriteState(*fs, state_path, state));
  }
  for (const TableState& table : state.tables) {
    HistoryTable* history = histories.count(table.oid) ? histories[table.oid].get() : AddHistory(table);
    SLUICE_RETURN_IF_ERROR(history->LoadVersions());
  }
  cursor_commit_lsn = state.commit_lsn;
  cursor_end_lsn = state.end_lsn;
  next_sort_by = state.next_sort_by;
  cursor_next_sort_by = state.next_sort_by;
  confirmed_lsn->store(state.end_lsn);
  SLUICE_RETURN_IF_ERROR(WriteStatus(cdf::kStreaming));
  return replication->StartReplication(config.slot_name, state.end_lsn, {config.publication_name});
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

PgChangeFeed::PgChangeFeed(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PgChangeFeed::~PgChangeFeed() = default;

Result<std::unique_ptr<PgChangeFeed>> PgChangeFeed::Start(ChangeFeedConfig config) {
  auto feed = std::unique_ptr<PgChangeFeed>(new PgChangeFeed(nullptr));
  feed->impl_ = std::make_unique<Impl>(std::move(config), feed->progress_.get());
  if (Status setup = feed->impl_->Setup(); !setup.ok()) {
    feed->impl_->ReportFailure(setup);
    return setup;
  }
  return feed;
}

Status PgChangeFeed::Run(const std::atomic<bool>& stop) { return impl_->Run(stop); }

int64_t RunningChangeFeedPid(const ChangeFeedConfig& config) {
  int64_t pid = ReadPid(*storage::DefaultFileSystem(), PidPath(config));
  return ProcessAlive(pid) ? pid : 0;
}

Status DropChangeFeedSlot(const ChangeFeedConfig& config) {
  if (int64_t pid = config.CheckTarget().ok() ? RunningChangeFeedPid(config) : 0; pid != 0) {
    return Status::Error(errors::kCdfAlreadyRunning,
                         fmt::format("the change feed {} runs in process {}; stop it first", config.slot_name, pid));
  }
  SLUICE_ASSIGN_OR_RETURN(auto sql, PgConnection::Connect(config.conninfo));
  SLUICE_ASSIGN_OR_RETURN(bool exists, SlotExists(*sql, config.slot_name));
  if (exists) {
    SLUICE_ASSIGN_OR_RETURN(auto replication, PgReplicationConnection::Connect(config.conninfo));
    SLUICE_RETURN_IF_ERROR(replication->DropSlot(config.slot_name));
  }
  if (!config.CheckTarget().ok()) return Status::OK();
  auto fs = storage::DefaultFileSystem();
  const std::string path = config.state_directory() + "/state.json";
  SLUICE_ASSIGN_OR_RETURN(std::optional<FeedState> state, cdf::ReadState(*fs, path));
  if (!state) return Status::OK();
  state->slot_dropped = true;
  return cdf::WriteState(*fs, path, *state);
}

Result<std::string> ChangeFeedStatus(const ChangeFeedConfig& config) {
  return storage::DefaultFileSystem()->ReadFile(config.state_directory() + "/status.json");
}

}  // namespace sluice::connectors
