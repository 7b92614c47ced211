#include "sluice/engine/rocksdb_state_store.h"

#include <fmt/format.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/table.h>
#include <rocksdb/iterator.h>
#include <rocksdb/metadata.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <set>

#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/logging.h"
#include "sluice/engine/checkpoint.h"
#include "sluice/engine/state_store.h"
#include "core/group_keys.h"
#include "engine/state_files.h"
#include "engine/state_rows.h"

namespace sluice::engine {
namespace {

constexpr std::string_view kVersionHeader = "sluice rocksdb state 1";
constexpr std::string_view kVersionSuffix = ".rocksdb";
constexpr std::string_view kTableFolder = "sst/";
constexpr int64_t kChunkBytes = 4 << 20;
constexpr int64_t kRowsPerChunk = 4096;

Status Failed(const rocksdb::Status& status, std::string_view what) {
  return Status::Error(errors::kIoError, fmt::format("RocksDB state: {}: {}", what, status.ToString()));
}

Status CannotLoad(std::string message) { return Status::Error(errors::kCannotLoadStateStore, std::move(message)); }

// A file name RocksDB gives (000012.sst, MANIFEST-000005, CURRENT): letters, digits, '.', '-', '_'.
bool PlainName(std::string_view name) {
  if (name.empty() || name == "." || name == "..") return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') return false;
  }
  return true;
}

// The key of row `row` of `keys`: equal bytes for keys Spark groups together.
void KeyOf(const std::vector<ColumnPtr>& keys, int64_t row, std::string* out) {
  out->clear();
  for (const ColumnPtr& key : keys) AppendKey(*key, row, out);
}

// Copies the local file `from` (its first `size` bytes) to `to` on `file_system`, published whole.
Status Upload(const std::string& from, uint64_t size, FileSystem& file_system, const std::string& to) {
  std::ifstream in(from, std::ios::binary);
  if (!in) return Status::Error(errors::kIoError, fmt::format("cannot read {}", from));
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> out, file_system.OpenForWrite(to));
  std::string chunk;
  for (uint64_t left = size; left > 0;) {
    chunk.resize(static_cast<size_t>(std::min<uint64_t>(left, kChunkBytes)));
    if (!in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()))) {
      return Status::Error(errors::kIoError, fmt::format("{} ended before {} bytes", from, size));
    }
    SLUICE_RETURN_IF_ERROR(out->Append(chunk));
    left -= chunk.size();
  }
  return out->Close();
}

Status Download(FileSystem& file_system, const std::string& from, const std::string& to) {
  auto fail = [&](const Status& why) { return CannotLoad(fmt::format("state file {}: {}", from, why.message())); };
  Result<std::unique_ptr<RandomAccessFile>> in = file_system.OpenForRead(from);
  if (!in.ok()) return fail(in.status());
  std::ofstream out(to, std::ios::binary | std::ios::trunc);
  std::string chunk;
  const int64_t size = (*in)->Size();
  for (int64_t at = 0; at < size; at += kChunkBytes) {
    chunk.clear();
    if (Status read = (*in)->ReadAt(at, std::min(kChunkBytes, size - at), &chunk); !read.ok()) return fail(read);
    out.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
  }
  out.close();
  if (!out) return Status::Error(errors::kIoError, fmt::format("cannot write {}", to));
  return Status::OK();
}

// The versions in the state folder `directory`, and whether it holds the memory store's files.
struct FolderContents {
  std::set<int64_t> versions;
  bool memory_store_files = false;
};

Result<FolderContents> ListFolder(FileSystem& file_system, const std::string& directory) {
  FolderContents contents;
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> names, StateFileNames(file_system, directory));
  for (const std::string& name : names) {
    if (name.ends_with(".parquet")) contents.memory_store_files = true;
    if (std::optional<int64_t> version = StateVersionOf(name, kVersionSuffix)) contents.versions.insert(*version);
  }
  return contents;
}

// Removes the working folders (`<pid>-XXXXXX` under `root`) of processes that are gone: a process
// killed with -9 leaves its folder behind.
void RemoveAbandonedWorkingFolders(const std::filesystem::path& root) {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(root, error)) {
    const std::string name = entry.path().filename().string();
    pid_t pid = 0;
    auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), pid);
    if (ec != std::errc() || end == name.data() + name.size() || *end != '-' || pid <= 0) continue;
    if (kill(pid, 0) != 0 && errno == ESRCH) std::filesystem::remove_all(entry.path(), error);
  }
}

}  // namespace

std::string FormatRocksDbVersion(const RocksDbVersion& version) {
  std::string text = fmt::format("{}\nrows {}\n", kVersionHeader, version.rows);
  for (const auto& [local, stored] : version.files) text += fmt::format("file {} {}\n", local, stored);
  return text;
}

Result<RocksDbVersion> ParseRocksDbVersion(std::string_view text) {
  RocksDbVersion version;
  bool header = false;
  bool rows = false;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    if (end == std::string_view::npos) return CannotLoad("a RocksDB state version file is cut short");
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end + 1);
    if (!header) {
      if (line != kVersionHeader) return CannotLoad("not a RocksDB state version file");
      header = true;
    } else if (line.starts_with("rows ")) {
      std::string_view digits = line.substr(5);
      auto [at, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), version.rows);
      if (rows || ec != std::errc() || at != digits.data() + digits.size() || version.rows < 0) {
        return CannotLoad(fmt::format("a RocksDB state version file has a bad line '{}'", line));
      }
      rows = true;
    } else if (line.starts_with("file ")) {
      std::string_view names = line.substr(5);
      const size_t blank = names.find(' ');
      std::string_view local = names.substr(0, blank);
      std::string_view stored = blank == std::string_view::npos ? "" : names.substr(blank + 1);
      std::string_view stored_name = stored.starts_with(kTableFolder) ? stored.substr(kTableFolder.size()) : stored;
      if (!PlainName(local) || !PlainName(stored_name) ||
          !version.files.emplace(std::string(local), std::string(stored)).second) {
        return CannotLoad(fmt::format("a RocksDB state version file has a bad line '{}'", line));
      }
    } else {
      return CannotLoad(fmt::format("a RocksDB state version file has a bad line '{}'", line));
    }
  }
  if (!header || !rows) return CannotLoad("a RocksDB state version file is cut short");
  return version;
}

Result<std::unique_ptr<RocksDbStateStore>> RocksDbStateStore::Open(std::shared_ptr<FileSystem> file_system,
                                                                   std::string directory, TypePtr schema,
                                                                   int key_columns) {
  const std::filesystem::path root = std::filesystem::temp_directory_path() / "sluice-state";
  std::error_code error;
  std::filesystem::create_directories(root, error);
  RemoveAbandonedWorkingFolders(root);
  std::string pattern = (root / (std::to_string(getpid()) + "-XXXXXX")).string();
  if (mkdtemp(pattern.data()) == nullptr) {
    return Status::Error(errors::kIoError, fmt::format("cannot make a folder for RocksDB state like {}", pattern));
  }
  return std::unique_ptr<RocksDbStateStore>(new RocksDbStateStore(std::move(file_system), std::move(directory),
                                                                  std::move(schema), key_columns, pattern));
}

RocksDbStateStore::RocksDbStateStore(std::shared_ptr<FileSystem> file_system, std::string directory, TypePtr schema,
                                     int key_columns, std::string working)
    : file_system_(std::move(file_system)),
      directory_(std::move(directory)),
      schema_(std::move(schema)),
      key_columns_(key_columns),
      working_(std::move(working)) {}

RocksDbStateStore::~RocksDbStateStore() {
  CloseDatabase();
  std::error_code ignored;
  std::filesystem::remove_all(working_, ignored);
}

void RocksDbStateStore::CloseDatabase() {
  if (db_ == nullptr) return;
  // Compactions in the background are cancelled rather than waited for.
  db_->Close();
  db_.reset();
}

Status RocksDbStateStore::OpenDatabase() {
  rocksdb::Options options;
  options.create_if_missing = true;
  // The MANIFEST is copied with every version: keep it small.
  options.max_manifest_file_size = 4 << 20;
  // Every batch flushes a small table file, and each file a compaction writes is copied to the
  // state folder: let more of them gather before they are merged (fewer, larger rewrites and
  // copies), with Bloom filters so that a key's lookup skips the files without it.
  options.level0_file_num_compaction_trigger = 16;
  // A batch's changes are flushed with the batch: the memtable never holds more than one batch.
  options.write_buffer_size = 16 << 20;
  options.level0_slowdown_writes_trigger = 48;
  options.level0_stop_writes_trigger = 64;
  rocksdb::BlockBasedTableOptions table;
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  options.info_log_level = rocksdb::InfoLogLevel::ERROR_LEVEL;
  options.keep_log_file_num = 1;
  rocksdb::DB* db = nullptr;
  rocksdb::Status opened = rocksdb::DB::Open(options, working_ + "/db", &db);
  if (!opened.ok()) return Failed(opened, "open " + working_ + "/db");
  db_.reset(db);
  return Status::OK();
}

Status RocksDbStateStore::Load(int64_t version) {
  if (version == loaded_ && db_ != nullptr) return Status::OK();
  CloseDatabase();
  loaded_ = kUnknown;
  stored_.clear();
  asked_.clear();
  std::error_code error;
  std::filesystem::remove_all(working_ + "/db", error);
  std::filesystem::create_directories(working_ + "/db", error);
  if (error) return Status::Error(errors::kIoError, fmt::format("cannot make {}/db: {}", working_, error.message()));
  num_rows_ = 0;
  if (version >= 0) {
    const std::string path = fmt::format("{}/{}{}", directory_, version, kVersionSuffix);
    Result<std::string> text = file_system_->ReadFile(path);
    if (!text.ok()) {
      SLUICE_ASSIGN_OR_RETURN(FolderContents contents, ListFolder(*file_system_, directory_));
      if (contents.memory_store_files) {
        return CannotLoad(fmt::format("{} holds the state of the memory state store; run the query with it, or "
                                      "start it from a new checkpoint to use rocksdb",
                                      directory_));
      }
      return CannotLoad(fmt::format("state version {} needs {}, which is missing", version, path));
    }
    Result<RocksDbVersion> files = ParseRocksDbVersion(*text);
    if (!files.ok()) return files.status().WithContext(path);
    for (const auto& [local, stored] : files->files) {
      SLUICE_RETURN_IF_ERROR(Download(*file_system_, directory_ + "/" + stored, working_ + "/db/" + local));
      if (stored.starts_with(kTableFolder)) stored_.emplace(local, stored);
    }
    num_rows_ = files->rows;
  }
  Status opened = OpenDatabase();
  if (!opened.ok()) return CannotLoad(fmt::format("state version {} of {}: {}", version, directory_, opened.message()));
  loaded_ = version;
  return Status::OK();
}

Status RocksDbStateStore::Write(int64_t version, const RecordBatch& changed) {
  if (db_ == nullptr || loaded_ != version - 1) {
    return Status::Error(errors::kInternalError,
                         fmt::format("RocksDB state version {} written on top of another version", version));
  }
  if (!changed.schema()->Equals(*schema_)) {
    return Status::Error(errors::kInternalError, "RocksDB state rows of another schema");
  }
  loaded_ = kUnknown;
  std::vector<ColumnPtr> keys(changed.columns().begin(), changed.columns().begin() + key_columns_);
  rocksdb::WriteBatch batch;
  std::string key;
  std::string value;
  std::string existing;
  int64_t added = 0;
  for (int64_t row = 0; row < changed.num_rows(); ++row) {
    KeyOf(keys, row, &key);
    // Whether the key is new: known when Find was asked for it in this batch, else read.
    if (auto asked = asked_.find(key); asked != asked_.end()) {
      added += asked->second ? 0 : 1;
    } else if (rocksdb::Status found = db_->Get(rocksdb::ReadOptions(), key, &existing); found.IsNotFound()) {
      ++added;
    } else if (!found.ok()) {
      return Failed(found, "read");
    }
    value.clear();
    EncodeStateRow(changed, row, &value);
    batch.Put(key, value);
  }
  // Each version is flushed and copied whole: a WAL would only be written and thrown away.
  rocksdb::WriteOptions write;
  write.disableWAL = true;
  asked_.clear();
  if (rocksdb::Status written = db_->Write(write, &batch); !written.ok()) return Failed(written, "write");
  if (rocksdb::Status flushed = db_->Flush(rocksdb::FlushOptions()); !flushed.ok()) return Failed(flushed, "flush");
  num_rows_ += added;
  SLUICE_RETURN_IF_ERROR(Keep(version));
  loaded_ = version;
  if (version % StateStore::kSnapshotInterval == 0) return Purge(version);
  return Status::OK();
}

Status RocksDbStateStore::Keep(int64_t version) {
  // The files of the database as it is now, kept from deletion while they are copied.
  if (rocksdb::Status disabled = db_->DisableFileDeletions(); !disabled.ok()) return Failed(disabled, "keep files");
  std::vector<rocksdb::LiveFileStorageInfo> live;
  rocksdb::Status listed = db_->GetLiveFilesStorageInfo(rocksdb::LiveFilesStorageInfoOptions(), &live);
  Status copied = listed.ok() ? Status::OK() : Failed(listed, "list files");
  RocksDbVersion kept;
  kept.rows = num_rows_;
  // The table files already stored that this version still names; the others stay only as long
  // as an older kept version names them (Purge).
  std::map<std::string, std::string> already = std::move(stored_);
  stored_.clear();
  SLUICE_RETURN_IF_ERROR(file_system_->CreateDirectories(directory_ + "/" + std::string(kTableFolder)));
  for (const rocksdb::LiveFileStorageInfo& file : live) {
    if (!copied.ok()) break;
    const std::string& name = file.relative_filename;
    if (file.file_type == rocksdb::kWalFile || file.file_type == rocksdb::kInfoLogFile || !PlainName(name)) continue;
    std::string stored;
    const bool table = file.file_type == rocksdb::kTableFile || file.file_type == rocksdb::kBlobFile;
    if (table) {
      auto it = already.find(name);
      if (it != already.end()) {
        kept.files.emplace(name, it->second);
        stored_.emplace(name, it->second);
        continue;
      }
      stored = fmt::format("{}{}-{}", kTableFolder, name, NewUuid());
    } else {
      stored = fmt::format("{}.{}", version, name);
    }
    const std::string target = directory_ + "/" + stored;
    copied = file.replacement_contents.empty()
                 ? Upload(file.directory + "/" + name, file.size, *file_system_, target)
                 : file_system_->AtomicWrite(target, file.replacement_contents);
    if (copied.ok() && table) stored_.emplace(name, stored);
    kept.files.emplace(name, std::move(stored));
  }
  db_->EnableFileDeletions(/*force=*/false);
  SLUICE_RETURN_IF_ERROR(copied);
  return file_system_->AtomicWrite(fmt::format("{}/{}{}", directory_, version, kVersionSuffix),
                                   FormatRocksDbVersion(kept));
}

Status RocksDbStateStore::Purge(int64_t version) {
  const int64_t oldest = version - StateStore::kVersionsToKeep + 1;
  SLUICE_ASSIGN_OR_RETURN(FolderContents contents, ListFolder(*file_system_, directory_));
  std::set<std::string> needed;
  for (const auto& [local, stored] : stored_) needed.insert(stored);
  for (int64_t v : contents.versions) {
    const std::string path = fmt::format("{}/{}{}", directory_, v, kVersionSuffix);
    SLUICE_ASSIGN_OR_RETURN(std::string text, file_system_->ReadFile(path));
    Result<RocksDbVersion> files = ParseRocksDbVersion(text);
    if (!files.ok()) return files.status().WithContext(path);
    if (v >= oldest) {
      for (const auto& [local, stored] : files->files) needed.insert(stored);
      continue;
    }
    // The version file first: a version is gone as soon as it is.
    SLUICE_RETURN_IF_ERROR(file_system_->Delete(path));
    for (const auto& [local, stored] : files->files) {
      if (!stored.starts_with(kTableFolder)) SLUICE_RETURN_IF_ERROR(file_system_->Delete(directory_ + "/" + stored));
    }
  }
  // Table files no kept version names: those of purged versions, and of runs that crashed.
  const std::string tables = directory_ + "/" + std::string(kTableFolder);
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> names, StateFileNames(*file_system_, tables));
  for (const std::string& name : names) {
    if (!needed.contains(std::string(kTableFolder) + name)) SLUICE_RETURN_IF_ERROR(file_system_->Delete(tables + name));
  }
  return Status::OK();
}

Result<BatchPtr> RocksDbStateStore::Find(const std::vector<ColumnPtr>& keys, const std::vector<int64_t>& rows,
                                         std::vector<int64_t>* found) {
  found->clear();
  if (db_ == nullptr) return Status::Error(errors::kInternalError, "RocksDB state used before it was loaded");
  std::vector<std::string> key_bytes(rows.size());
  std::vector<rocksdb::Slice> slices;
  slices.reserve(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    KeyOf(keys, rows[i], &key_bytes[i]);
    slices.emplace_back(key_bytes[i]);
  }
  std::vector<std::string> values;
  std::vector<rocksdb::Status> statuses = db_->MultiGet(rocksdb::ReadOptions(), slices, &values);
  std::vector<std::string_view> encoded;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!statuses[i].ok() && !statuses[i].IsNotFound()) return Failed(statuses[i], "read");
    asked_.emplace(std::move(key_bytes[i]), statuses[i].ok());
    if (statuses[i].IsNotFound()) continue;
    encoded.push_back(values[i]);
    found->push_back(static_cast<int64_t>(i));
  }
  return DecodeStateRows(schema_, encoded);
}

Status RocksDbStateStore::ForEach(const std::function<Status(const RecordBatch&)>& visit) {
  if (db_ == nullptr) return Status::Error(errors::kInternalError, "RocksDB state used before it was loaded");
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  std::vector<std::string> values;
  auto flush = [&]() -> Status {
    if (values.empty()) return Status::OK();
    SLUICE_ASSIGN_OR_RETURN(BatchPtr rows, DecodeStateRows(schema_, {values.begin(), values.end()}));
    values.clear();
    return visit(*rows);
  };
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    values.emplace_back(it->value().data(), it->value().size());
    if (static_cast<int64_t>(values.size()) == kRowsPerChunk) SLUICE_RETURN_IF_ERROR(flush());
  }
  if (!it->status().ok()) return Failed(it->status(), "scan");
  return flush();
}

int64_t RocksDbStateStore::memory_bytes() const {
  if (db_ == nullptr) return 0;
  uint64_t memtables = 0;
  uint64_t blocks = 0;
  db_->GetIntProperty("rocksdb.cur-size-all-mem-tables", &memtables);
  db_->GetIntProperty("rocksdb.block-cache-usage", &blocks);
  return static_cast<int64_t>(memtables + blocks);
}

}  // namespace sluice::engine
