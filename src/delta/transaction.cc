#include "sluice/delta/transaction.h"

#include <algorithm>
#include <charconv>
#include <unordered_set>

#include <fmt/format.h>
#include <simdjson.h>
#include <spdlog/spdlog.h>

#include "delta/column_mapping.h"
#include "delta/data_files.h"
#include "delta/uuid.h"
#include "sluice/core/ascii.h"
#include "sluice/core/error_classes.h"
#include "sluice/delta/checkpoint.h"
#include "sluice/delta/features.h"
#include "sluice/delta/log.h"
#include "sluice/delta/maintenance.h"

namespace sluice::delta {
namespace {

constexpr std::string_view kRowTrackingDomain = "delta.rowTracking";

// The row id high-water mark the domain `delta.rowTracking` records among `domains`; -1 for none.
int64_t RowIdHighWaterMark(const std::map<std::string, DomainMetadata>& domains) {
  auto it = domains.find(std::string(kRowTrackingDomain));
  if (it == domains.end() || it->second.removed) return -1;
  simdjson::dom::parser parser;
  int64_t mark = -1;
  if (parser.parse(simdjson::padded_string(it->second.configuration))["rowIdHighWaterMark"].get(mark) !=
      simdjson::SUCCESS) {
    return -1;
  }
  return mark;
}

Status Conflict(std::string_view kind, int64_t version, std::string_view what) {
  return Status::Error(errors::kDeltaConcurrentModification,
                       fmt::format("{}: the concurrent commit of version {} {}; retry the operation on the new "
                                   "version of the table",
                                   kind, version, what));
}

}  // namespace

std::string EngineInfo() { return "sluice/" SLUICE_VERSION; }

Transaction::Transaction(std::shared_ptr<FileSystem> fs, std::string table_path)
    : fs_(std::move(fs)), table_path_(std::move(table_path)), txn_id_(NewUuid()) {}

Transaction::Transaction(SnapshotPtr snapshot) : Transaction(snapshot->file_system(), snapshot->table_path()) {
  snapshot_ = std::move(snapshot);
}

Result<std::unique_ptr<Transaction>> Transaction::Start(std::shared_ptr<FileSystem> fs, std::string table_path) {
  while (table_path.size() > 1 && table_path.back() == '/') table_path.pop_back();
  Result<SnapshotPtr> snapshot = Snapshot::Load(fs, table_path);
  if (snapshot.ok()) return std::make_unique<Transaction>(std::move(snapshot).value());
  if (snapshot.status().error_class() != errors::kDeltaTableNotFound) return snapshot.status();
  return std::unique_ptr<Transaction>(new Transaction(std::move(fs), std::move(table_path)));
}

std::optional<int64_t> Transaction::TransactionVersion(std::string_view app_id) {
  read_app_ids_.emplace(app_id);
  return snapshot_ ? snapshot_->TransactionVersion(app_id) : std::nullopt;
}

void Transaction::ReadFiles(const std::vector<AddFile>& files) {
  read_files_declared_ = true;
  for (const AddFile& file : files) read_files_.insert(file.path);
}

void Transaction::SetTransactionVersion(std::string app_id, int64_t version) {
  txns_.push_back(SetTransaction{std::move(app_id), version, NowMs()});
}

Result<TypePtr> Transaction::SetMetadata(Metadata metadata) {
  SLUICE_ASSIGN_OR_RETURN(TypePtr schema, ApplyColumnMapping(&metadata, snapshot_ ? snapshot_->schema() : nullptr));
  auto tracking = metadata.configuration.find(std::string(kEnableRowTracking));
  if (tracking != metadata.configuration.end() && AsciiLower(tracking->second) == "true") {
    if (snapshot_ && !TracksRowIds()) {
      return Status::Error(errors::kDeltaProtocolUnsupported,
                           fmt::format("'{}' exists without row tracking; sluice enables {} only on the tables it "
                                       "creates (the existing rows would need their ids first)",
                                       table_path_, kEnableRowTracking));
    }
    // Where rows that move into new files would keep their ids (names unique to the table, as
    // Delta Spark makes them); a table keeps the names it has.
    metadata.configuration.try_emplace(std::string(kMaterializedRowIdColumn), "_row-id-col-" + NewUuid());
    metadata.configuration.try_emplace(std::string(kMaterializedRowCommitVersionColumn),
                                       "_row-commit-version-col-" + NewUuid());
  }
  if (snapshot_) {
    SLUICE_ASSIGN_OR_RETURN(std::optional<Protocol> protocol,
                            ProtocolForEvolvedSchema(protocol_ ? *protocol_ : snapshot_->protocol(), *schema, metadata));
    if (protocol) protocol_ = std::move(*protocol);
  }
  metadata_ = std::move(metadata);
  return schema;
}

const Metadata* Transaction::effective_metadata() const {
  if (metadata_) return &*metadata_;
  return snapshot_ ? &snapshot_->metadata() : nullptr;
}

Status Transaction::Validate() const {
  if (committed_) return Status::Error(errors::kInvalidArgument, "the transaction was already committed");
  const Metadata* metadata = effective_metadata();
  if (metadata == nullptr) {
    return Status::Error(errors::kInvalidArgument,
                         fmt::format("'{}' is not a Delta table yet: the first commit must set its metadata", table_path_));
  }
  const Protocol& protocol = protocol_ ? *protocol_ : snapshot_->protocol();
  SLUICE_RETURN_IF_ERROR(CheckWriteSupport(protocol, *metadata));
  auto append_only = metadata->configuration.find("delta.appendOnly");
  if (append_only != metadata->configuration.end() && append_only->second == "true") {
    for (const RemoveFile& remove : removes_) {
      if (remove.data_change) {
        return Status::Error(errors::kInvalidArgument,
                             fmt::format("'{}' is append-only (delta.appendOnly=true): data cannot be removed", table_path_));
      }
    }
  }
  // The protocol forbids two file actions of the same kind for one path in a commit.
  std::unordered_set<std::string_view> paths;
  for (const AddFile& add : adds_) {
    if (!paths.insert(add.path).second) {
      return Status::Error(errors::kInvalidArgument, fmt::format("the commit adds '{}' twice", add.path));
    }
  }
  paths.clear();
  for (const RemoveFile& remove : removes_) {
    if (!paths.insert(remove.path).second) {
      return Status::Error(errors::kInvalidArgument, fmt::format("the commit removes '{}' twice", remove.path));
    }
  }
  return Status::OK();
}

std::vector<Action> Transaction::BuildActions(std::string_view operation, StringMap parameters,
                                              std::optional<StringMap> metrics) const {
  std::vector<Action> actions;
  actions.reserve(3 + txns_.size() + domains_.size() + removes_.size() + adds_.size());
  CommitInfo info;
  info.timestamp = NowMs();
  info.operation = std::string(operation);
  info.operation_parameters = std::move(parameters);
  info.operation_metrics = std::move(metrics);
  if (snapshot_) info.read_version = snapshot_->version();
  info.isolation_level = read_files_declared_ && !read_whole_table_ ? "WriteSerializable" : "Serializable";
  info.is_blind_append = removes_.empty() && !read_whole_table_ && !read_files_declared_ && !metadata_;
  info.engine_info = EngineInfo();
  info.txn_id = txn_id_;
  actions.emplace_back(std::move(info));
  if (protocol_) actions.emplace_back(*protocol_);
  if (metadata_) actions.emplace_back(*metadata_);
  for (const DomainMetadata& domain : domains_) actions.emplace_back(domain);
  for (const SetTransaction& txn : txns_) actions.emplace_back(txn);
  for (const RemoveFile& remove : removes_) actions.emplace_back(remove);
  for (const AddFile& add : adds_) actions.emplace_back(add);
  return actions;
}

Status Transaction::CheckConflicts(int64_t version, const std::vector<Action>& winner) const {
  if (!snapshot_) {
    return Status::Error(errors::kDeltaTableAlreadyExists,
                         fmt::format("another writer created the table at '{}' first", table_path_));
  }
  std::unordered_set<std::string> our_removes;
  for (const RemoveFile& remove : removes_) our_removes.insert(LogicalFileKey(remove.path, remove.deletion_vector));
  bool winner_blind_append = false;
  for (const Action& action : winner) {
    if (const auto* info = std::get_if<CommitInfo>(&action)) winner_blind_append = info->is_blind_append.value_or(false);
  }
  for (const Action& action : winner) {
    if (std::holds_alternative<Protocol>(action)) {
      return Conflict("ProtocolChanged", version, "changed the table's protocol");
    }
    if (std::holds_alternative<Metadata>(action)) {
      return Conflict("MetadataChanged", version, "changed the table's metadata");
    }
    if (const auto* txn = std::get_if<SetTransaction>(&action)) {
      bool ours = read_app_ids_.contains(txn->app_id);
      for (const SetTransaction& mine : txns_) ours = ours || mine.app_id == txn->app_id;
      if (ours) {
        return Conflict("ConcurrentTransaction", version,
                        fmt::format("recorded progress for application '{}'", txn->app_id));
      }
    } else if (const auto* add = std::get_if<AddFile>(&action)) {
      if (add->data_change && (read_whole_table_ || (read_files_declared_ && !winner_blind_append))) {
        return Conflict("ConcurrentAppend", version, fmt::format("added '{}' to data this one read", add->path));
      }
    } else if (const auto* remove = std::get_if<RemoveFile>(&action)) {
      if (our_removes.contains(LogicalFileKey(remove->path, remove->deletion_vector))) {
        return Conflict("ConcurrentDeleteDelete", version, fmt::format("also removed '{}'", remove->path));
      }
      if (read_whole_table_ || read_files_.contains(remove->path)) {
        return Conflict("ConcurrentDeleteRead", version, fmt::format("removed '{}', which this one read", remove->path));
      }
    } else if (const auto* domain = std::get_if<DomainMetadata>(&action)) {
      for (const DomainMetadata& mine : domains_) {
        if (mine.domain == domain->domain) {
          return Conflict("ConcurrentDomainMetadata", version, fmt::format("changed domain '{}'", domain->domain));
        }
      }
    }
  }
  return Status::OK();
}

bool Transaction::TracksRowIds() const {
  const Protocol* protocol = protocol_ ? &*protocol_ : snapshot_ ? &snapshot_->protocol() : nullptr;
  return protocol != nullptr && delta::TracksRowIds(*protocol);
}

Status Transaction::AssignRowIds(std::vector<Action>* actions, int64_t version, int64_t high_water_mark) const {
  const int64_t start = high_water_mark;
  for (Action& action : *actions) {
    auto* add = std::get_if<AddFile>(&action);
    if (add == nullptr || add->base_row_id) continue;
    std::optional<int64_t> records = StatsNumRecords(add->stats);
    if (!records) {
      return Status::Error(errors::kInternalError,
                           fmt::format("'{}' has no numRecords, which row ids are assigned by", add->path));
    }
    add->base_row_id = high_water_mark + 1;
    add->default_row_commit_version = version;
    high_water_mark += *records;
  }
  if (high_water_mark != start) {
    actions->emplace_back(DomainMetadata{std::string(kRowTrackingDomain),
                                         fmt::format("{{\"rowIdHighWaterMark\":{}}}", high_water_mark), false});
  }
  return Status::OK();
}

void Transaction::CheckpointIfDue(int64_t version) const {
  const Metadata* metadata = effective_metadata();
  auto it = metadata->configuration.find("delta.checkpointInterval");
  int64_t interval = 10;
  if (it != metadata->configuration.end()) {
    auto [end, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), interval);
    if (ec != std::errc() || interval < 1) interval = 10;
  }
  if (version == 0 || version % interval != 0) return;
  // The commit stands whatever happens here: a missing checkpoint only makes loading slower.
  Result<SnapshotPtr> snapshot = Snapshot::Load(fs_, table_path_, {.version = version});
  Status status = snapshot.ok() ? WriteCheckpoint(**snapshot, NowMs()) : snapshot.status();
  if (!status.ok()) {
    spdlog::warn("checkpoint of version {} of '{}' not written: {}", version, table_path_, status.ToString());
  }
}

void Transaction::CompactIfDue(int64_t version, std::string_view operation) const {
  if (operation == kOperationOptimize || adds_.empty()) return;
  const Metadata* metadata = effective_metadata();
  if (metadata->configuration.count("delta.autoOptimize.autoCompact") == 0) return;
  // The commit stands whatever happens here: the files stay small until the next try.
  Status status = AutoCompact(fs_, table_path_, version, adds_);
  if (!status.ok()) {
    spdlog::warn("automatic compaction after version {} of '{}' not done: {}", version, table_path_,
                 status.ToString());
  }
}

Result<int64_t> Transaction::Commit(std::string_view operation, StringMap operation_parameters,
                                    std::optional<StringMap> operation_metrics, const CommitOptions& options) {
  if (!snapshot_ && metadata_ && !protocol_) {
    SLUICE_ASSIGN_OR_RETURN(TypePtr schema, ParseTypeJson(metadata_->schema_string));
    protocol_ = ProtocolForNewTable(*schema, *metadata_);
  }
  SLUICE_RETURN_IF_ERROR(Validate());
  const bool row_ids = TracksRowIds();
  const std::vector<Action> actions =
      BuildActions(operation, std::move(operation_parameters), std::move(operation_metrics));
  int64_t high_water_mark = snapshot_ ? RowIdHighWaterMark(snapshot_->domains()) : -1;
  // Row ids depend on the version and on the mark the winners of earlier attempts left.
  auto content_at = [&](int64_t version) -> Result<std::string> {
    if (!row_ids) return SerializeActions(actions);
    std::vector<Action> with_ids = actions;
    SLUICE_RETURN_IF_ERROR(AssignRowIds(&with_ids, version, high_water_mark));
    return SerializeActions(with_ids);
  };

  int64_t version = read_version() + 1;
  for (int attempt = 1;; ++attempt) {
    std::string path = CommitPath(table_path_, version);
    SLUICE_ASSIGN_OR_RETURN(const std::string content, content_at(version));
    Status put = fs_->PutIfAbsent(path, content);
    if (put.ok()) {
      committed_ = true;
      CheckpointIfDue(version);
      CompactIfDue(version, operation);
      return version;
    }
    if (put.error_class() != errors::kFileAlreadyExists) {
      // The write may have gone through with its reply lost. Our commit is recognized by its
      // content (the txnId in commitInfo makes it unique); another content there is a lost race.
      Result<std::string> existing = fs_->ReadFile(path);
      if (existing.ok() && *existing == content) {
        committed_ = true;
        CheckpointIfDue(version);
        CompactIfDue(version, operation);
        return version;
      }
      if (!existing.ok()) {
        if (existing.status().error_class() == errors::kFileNotFound) return put;
        return put.WithContext(fmt::format("commit of version {} of '{}' has an unknown outcome", version, table_path_));
      }
    }
    if (attempt >= options.max_attempts) {
      return Status::Error(errors::kDeltaConcurrentModification,
                           fmt::format("gave up committing to '{}' after {} attempts lost to concurrent writers",
                                       table_path_, attempt));
    }
    SLUICE_ASSIGN_OR_RETURN(std::vector<Action> winner, ReadCommit(*fs_, table_path_, version));
    SLUICE_RETURN_IF_ERROR(CheckConflicts(version, winner));
    for (const Action& action : winner) {
      if (const auto* domain = std::get_if<DomainMetadata>(&action); domain && domain->domain == kRowTrackingDomain) {
        high_water_mark = std::max(high_water_mark, RowIdHighWaterMark({{domain->domain, *domain}}));
      }
    }
    ++version;
  }
}

}  // namespace sluice::delta
