// The change feed's streaming loop: pgoutput messages into history rows, flushes, confirmations,
// keepalives and re-snapshots.
#include <fmt/format.h>

#include "pg_change_feed_impl.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/logging.h"

namespace sluice::connectors {

namespace {

using cdf::SourceColumn;
using cdf::TableState;

// How long one wait for a frame may last: the stop flag is looked at in between.
constexpr std::chrono::milliseconds kLongestWait(100);
// How often status.json is refreshed when no flush rewrote it (slot lag, tables created meanwhile).
constexpr std::chrono::seconds kStatusRefresh(5);

std::vector<SourceColumn> ColumnsOf(const PgOutputMessage& message) {
  std::vector<SourceColumn> columns;
  columns.reserve(message.columns.size());
  for (const RelationColumn& column : message.columns) {
    columns.push_back({std::string(column.name), column.type_oid, column.type_modifier});
  }
  return columns;
}

int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

int64_t PgChangeFeed::Impl::BufferedRows() const {
  int64_t rows = 0;
  for (const auto& [oid, history] : histories) rows += history->buffered_rows();
  return rows;
}

Status PgChangeFeed::Impl::Run(const std::atomic<bool>& stop) {
  Status status = StreamUntil(stop);
  if (!status.ok()) ReportFailure(status);
  return status;
}

void PgChangeFeed::Impl::ReportFailure(const Status& error) {
  if (lock == nullptr) return;
  feed_error = error.ToString();
  (void)WriteStatus(cdf::kFailed);
}

Status PgChangeFeed::Impl::StreamUntil(const std::atomic<bool>& stop) {
  next_flush = std::chrono::steady_clock::now() + config.flush_interval;
  next_status = std::chrono::steady_clock::now() + kStatusRefresh;
  while (!stop.load()) {
    auto now = std::chrono::steady_clock::now();
    auto wait = std::min<std::chrono::milliseconds>(
        kLongestWait, std::chrono::duration_cast<std::chrono::milliseconds>(next_flush - now));
    SLUICE_ASSIGN_OR_RETURN(std::optional<ReplicationFrame> frame,
                            replication->ReadFrame(std::max(wait, std::chrono::milliseconds(0))));
    if (frame) SLUICE_RETURN_IF_ERROR(HandleFrame(*frame));
    if (std::chrono::steady_clock::now() >= next_flush) {
      SLUICE_RETURN_IF_ERROR(Flush());
      next_flush = std::chrono::steady_clock::now() + config.flush_interval;
    } else if (BufferedRows() >= config.max_buffered_rows) {
      SLUICE_RETURN_IF_ERROR(Flush());
    }
    if (std::chrono::steady_clock::now() >= next_status) SLUICE_RETURN_IF_ERROR(WriteStatus(cdf::kStreaming));
  }
  SLUICE_RETURN_IF_ERROR(Flush());
  return WriteStatus("STOPPED");
}

Status PgChangeFeed::Impl::HandleFrame(const ReplicationFrame& frame) {
  if (frame.kind == ReplicationFrame::Kind::kKeepalive) {
    // Nothing in flight: the server's position is safe to confirm, so an idle or filtered slot
    // never pins WAL.
    if (!in_transaction && !state_dirty && BufferedRows() == 0 && frame.keepalive.wal_end > confirmed_lsn->load()) {
      confirmed_lsn->store(frame.keepalive.wal_end);
      return SendStatus(false);
    }
    if (frame.keepalive.reply_requested) return SendStatus(false);
    return Status::OK();
  }
  SLUICE_RETURN_IF_ERROR(ParsePgOutputMessage(frame.xlog.payload, /*in_stream=*/false, &message));
  return HandleMessage(message, NowMicros());
}

Status PgChangeFeed::Impl::HandleMessage(const PgOutputMessage& m, int64_t now_micros) {
  switch (m.kind) {
    case PgOutputMessage::Kind::kBegin:
      in_transaction = true;
      transaction_commit_lsn = m.final_lsn;
      transaction_xid = m.xid;
      // Transactions up to the cursor are in Delta already (the slot may resend them after a
      // server crash or when the previous run stopped before confirming).
      skip_transaction = m.final_lsn <= state.commit_lsn;
      touched.clear();
      return Status::OK();
    case PgOutputMessage::Kind::kRelation:
      return HandleRelation(m);
    case PgOutputMessage::Kind::kInsert:
    case PgOutputMessage::Kind::kUpdate:
    case PgOutputMessage::Kind::kDelete:
      return HandleChange(m, now_micros);
    case PgOutputMessage::Kind::kTruncate:
      for (uint32_t oid : m.truncated_oids) {
        if (TableState* table = state.FindTable(oid)) {
          LogWarn("change feed {}: TRUNCATE of {}.{} is not captured; its history table keeps every row",
                  config.slot_name, table->source_schema, table->source_name);
        }
      }
      return Status::OK();
    case PgOutputMessage::Kind::kCommit:
      return HandleCommit(m);
    default:
      return Status::OK();
  }
}

Status PgChangeFeed::Impl::HandleRelation(const PgOutputMessage& m) {
  std::vector<SourceColumn> columns = ColumnsOf(m);
  std::vector<bool>& key = key_columns[m.oid];
  key.clear();
  for (const RelationColumn& column : m.columns) key.push_back(column.part_of_key);
  TableState* table = state.FindTable(m.oid);
  if (table == nullptr) {
    // Registered at its first change: partitions' own Relation messages come beside their root's.
    unregistered[m.oid] = cdf::CatalogTable{m.oid, std::string(m.namespace_name), std::string(m.name),
                                            m.replica_identity, std::move(columns)};
    return Status::OK();
  }
  if (table->source_name != m.name || table->source_schema != m.namespace_name) {
    LogInfo("change feed {}: {}.{} is now {}.{}; its history stays in {}", config.slot_name, table->source_schema,
            table->source_name, m.namespace_name, m.name, table->history_name);
    table->source_schema = m.namespace_name;
    table->source_name = m.name;
    state_dirty = true;
  }
  if (table->replica_identity != m.replica_identity) {
    table->replica_identity = m.replica_identity;
    NoteReplicaIdentity(table);
    state_dirty = true;
  }
  // A transaction the history already covers (written, or inside a re-snapshot) changes nothing.
  if (columns != table->columns && !skip_transaction &&
      transaction_commit_lsn > histories[m.oid]->lsn_version()) {
    LogInfo("change feed {}: the columns of {}.{} changed; its history is re-snapshotted", config.slot_name,
            table->source_schema, table->source_name);
    resnapshot[m.oid] = std::move(columns);
  }
  return Status::OK();
}

Status PgChangeFeed::Impl::HandleChange(const PgOutputMessage& m, int64_t now_micros) {
  const bool update = m.kind == PgOutputMessage::Kind::kUpdate;
  const int64_t rows = update ? 2 : 1;
  const int64_t first = next_sort_by;
  // Every change numbers its rows, written or not, so a replay numbers them the same way.
  next_sort_by += rows;
  if (skip_transaction || resnapshot.count(m.oid)) return Status::OK();
  auto found = histories.find(m.oid);
  if (found == histories.end()) {
    auto relation = unregistered.find(m.oid);
    if (relation == unregistered.end()) {
      return Status::Error(errors::kPgReplicationProtocolError,
                           fmt::format("a change of relation {} arrived before its Relation message", m.oid));
    }
    cdf::CatalogTable& source = relation->second;
    SLUICE_ASSIGN_OR_RETURN(TableState * table, RegisterTable(source.oid, std::move(source.schema),
                                                              std::move(source.name), std::move(source.columns),
                                                              source.replica_identity));
    unregistered.erase(relation);
    HistoryTable* history = AddHistory(*table);
    // A table a crashed run registered already may hold some of the rows to come.
    SLUICE_RETURN_IF_ERROR(history->LoadVersions());
    state_dirty = true;
    found = histories.find(m.oid);
  }
  HistoryTable* history = found->second.get();
  if (history->AlreadyWritten(transaction_commit_lsn, first + rows - 1)) return Status::OK();
  touched.insert(m.oid);
  const Lsn lsn = transaction_commit_lsn;
  switch (m.kind) {
    case PgOutputMessage::Kind::kInsert:
      history->Append("insert", m.new_tuple, nullptr, lsn, transaction_xid, now_micros, first);
      break;
    case PgOutputMessage::Kind::kUpdate: {
      const std::vector<TupleValue>* old_row = &m.old_tuple;
      if (m.old_kind == 0) {
        // No old row was sent (REPLICA IDENTITY not FULL and the key unchanged): the preimage
        // holds the key, as the new row has it.
        const std::vector<bool>& key = key_columns[m.oid];
        scratch.assign(m.new_tuple.begin(), m.new_tuple.end());
        for (size_t i = 0; i < scratch.size(); ++i) {
          if (i >= key.size() || !key[i]) scratch[i] = {TupleValue::Kind::kNull, {}};
        }
        old_row = &scratch;
      }
      history->Append("update_preimage", *old_row, nullptr, lsn, transaction_xid, now_micros, first);
      history->Append("update_postimage", m.new_tuple, m.old_kind == 'O' ? &m.old_tuple : nullptr, lsn,
                      transaction_xid, now_micros, first + 1);
      break;
    }
    default:
      history->Append("delete", m.old_tuple, nullptr, lsn, transaction_xid, now_micros, first);
      break;
  }
  return Status::OK();
}

Status PgChangeFeed::Impl::HandleCommit(const PgOutputMessage& m) {
  in_transaction = false;
  if (skip_transaction) return Status::OK();
  for (uint32_t oid : touched) histories[oid]->MarkComplete(m.commit_lsn);
  cursor_commit_lsn = m.commit_lsn;
  cursor_end_lsn = m.end_lsn;
  cursor_commit_time = m.timestamp;
  cursor_next_sort_by = next_sort_by;
  state_dirty = true;
  if (resnapshot.empty()) return Status::OK();
  // The cursor moves past this transaction only once the re-snapshots are in Delta: a crash in
  // between replays the transaction, whose Relation message asks for them again.
  SLUICE_RETURN_IF_ERROR(FlushTables());
  std::map<uint32_t, std::vector<SourceColumn>> pending;
  pending.swap(resnapshot);
  for (const auto& [oid, columns] : pending) {
    if (Status copied = Resnapshot(oid); !copied.ok()) return TableFailed(state.FindTable(oid), copied);
  }
  cursor_next_sort_by = next_sort_by;
  return Flush();
}

Status PgChangeFeed::Impl::Flush() {
  SLUICE_RETURN_IF_ERROR(FlushTables());
  if (state_dirty) {
    state.commit_lsn = cursor_commit_lsn;
    state.end_lsn = cursor_end_lsn;
    state.next_sort_by = cursor_next_sort_by;
    SLUICE_RETURN_IF_ERROR(cdf::WriteState(*fs, state_path, state));
    SLUICE_RETURN_IF_ERROR(WriteStatus("STREAMING"));
    state_dirty = false;
  }
  if (state.end_lsn > confirmed_lsn->load()) confirmed_lsn->store(state.end_lsn);
  return SendStatus(false);
}

Status PgChangeFeed::Impl::FlushTables() {
  const int64_t now_ms = NowMs();
  for (auto& [oid, history] : histories) {
    if (history->buffered_rows() == 0 || resnapshot.count(oid)) continue;
    TableState* table = state.FindTable(oid);
    Result<int64_t> written = history->Flush();
    if (!written.ok()) return TableFailed(table, written.status());
    if (table->status == cdf::kFailed) {
      table->status = std::string(cdf::kStreaming);
      table->error.clear();
    }
    table->rows += *written;
    table->committed_lsn = history->lsn_version();
    table->last_write_ms = now_ms;
    state_dirty = true;
  }
  return Status::OK();
}

Status PgChangeFeed::Impl::SendStatus(bool reply_requested) {
  return replication->SendStatus(confirmed_lsn->load(), reply_requested);
}

Status PgChangeFeed::Impl::TableFailed(TableState* table, Status error) {
  table->status = std::string(cdf::kFailed);
  table->error = error.ToString();
  LogError("change feed {}: writing the history of {}.{} failed: {}", config.slot_name, table->source_schema,
           table->source_name, table->error);
  return error;
}

Status PgChangeFeed::Impl::WriteStatus(std::string_view feed_status) {
  next_status = std::chrono::steady_clock::now() + kStatusRefresh;
  cdf::FeedLag lag;
  if (sql == nullptr) return fs->AtomicWrite(status_path, cdf::StatusJson(state, lag, feed_status, feed_error, skipped));
  // The previous list stays when the server cannot be asked (it may be what failed).
  if (auto listed = cdf::ListSkippedTables(*sql, config.schema, state); listed.ok()) skipped = std::move(*listed);
  auto rows = sql->Query("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)::bigint "
                         "FROM pg_replication_slots WHERE slot_name = $1",
                         {config.slot_name});
  if (rows.ok() && !rows->empty() && !(*rows)[0].empty() && (*rows)[0][0]) {
    lag.bytes = std::stoll(*(*rows)[0][0]);
  }
  const int64_t now_pg = NowMicros() - kPostgresEpochOffsetMicros;
  lag.seconds = lag.bytes > 0 && cursor_commit_time > 0 ? static_cast<double>(now_pg - cursor_commit_time) / 1e6 : 0;
  int64_t history_rows = 0;
  for (const TableState& table : state.tables) history_rows += table.rows;
  progress->history_rows.store(history_rows);
  progress->slot_lag_bytes.store(lag.bytes);
  return fs->AtomicWrite(status_path, cdf::StatusJson(state, lag, feed_status, feed_error, skipped));
}

Status PgChangeFeed::Impl::Resnapshot(uint32_t oid) {
  TableState* table = state.FindTable(oid);
  HistoryTable* history = histories[oid].get();
  table->status = std::string(cdf::kSnapshotting);
  // A second slot, dropped at the end, exports a snapshot: its consistent point tells which
  // streamed transactions the copy already holds (those committed before it).
  const std::string slot_name = config.slot_name.substr(0, 60) + "_rs";
  SLUICE_ASSIGN_OR_RETURN(auto slot_connection, PgReplicationConnection::Connect(config.conninfo));
  SLUICE_ASSIGN_OR_RETURN(PgRows leftover,
                          sql->Query("SELECT 1 FROM pg_replication_slots WHERE slot_name = $1", {slot_name}));
  if (!leftover.empty()) SLUICE_RETURN_IF_ERROR(slot_connection->DropSlot(slot_name));
  SLUICE_ASSIGN_OR_RETURN(ReplicationSlot slot, slot_connection->CreateSlot(slot_name, true));
  SLUICE_RETURN_IF_ERROR(sql->Execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET TRANSACTION SNAPSHOT '" +
                                      slot.snapshot_name + "'"));
  SLUICE_ASSIGN_OR_RETURN(std::vector<SourceColumn> columns, cdf::ListColumns(*sql, oid));
  cdf::CatalogTable source{oid, table->source_schema, table->source_name, table->replica_identity, columns};
  history->SetColumns(columns);
  SLUICE_RETURN_IF_ERROR(history->Reset(next_sort_by - 1));
  SLUICE_ASSIGN_OR_RETURN(int64_t rows,
                          cdf::SnapshotTable(*sql, source, slot.consistent_point, history, &next_sort_by, 200000));
  // Streamed transactions committed before the consistent point are in the copy; the ones from
  // it on (one may commit right at it) are not.
  const Lsn copied_through = cdf::LastCommitInSnapshot(slot.consistent_point);
  SLUICE_RETURN_IF_ERROR(history->FinishSnapshot(copied_through));
  SLUICE_RETURN_IF_ERROR(sql->Execute("COMMIT"));
  SLUICE_RETURN_IF_ERROR(slot_connection->DropSlot(slot_name));
  table->columns = std::move(columns);
  table->status = std::string(cdf::kStreaming);
  table->rows = rows;
  table->committed_lsn = copied_through;
  table->last_write_ms = NowMs();
  LogInfo("change feed {}: re-snapshotted {}.{} ({} rows)", config.slot_name, table->source_schema,
          table->source_name, rows);
  return Status::OK();
}

}  // namespace sluice::connectors
