#include <algorithm>
#include <cstdlib>
#include <chrono>
#include <deque>
#include <future>
#include <vector>

#include <fmt/format.h>

#include "sluice/core/error_classes.h"
#include "sluice/storage/lease.h"
#include "sluice/storage/object_store.h"

namespace sluice::storage {
namespace {

// The first kPrefetchBytes of the object come with the open (one ranged GET instead of a HEAD),
// so that a small file — a Delta checkpoint, a commit's data file — is read in one request
// whatever its reader asks for; reads past them are ranged GETs.
constexpr int64_t kPrefetchBytes = 1 << 20;

class ObjectRandomAccessFile final : public RandomAccessFile {
 public:
  ObjectRandomAccessFile(ObjectStore* store, std::string key, int64_t size, std::string prefix)
      : store_(store), key_(std::move(key)), size_(size), prefix_(std::move(prefix)) {}
  int64_t Size() const override { return size_; }
  Status ReadAt(int64_t offset, int64_t length, std::string* out) const override {
    out->clear();
    if (length == 0) return Status::OK();
    if (offset < 0 || length < 0 || offset + length > size_) {
      return Status::Error(errors::kIoError, fmt::format("{}: read of {} bytes at {} past its end ({} bytes)",
                                                         store_->Uri(key_), length, offset, size_));
    }
    if (offset + length <= static_cast<int64_t>(prefix_.size())) {
      out->assign(prefix_, static_cast<size_t>(offset), static_cast<size_t>(length));
      return Status::OK();
    }
    SLUICE_ASSIGN_OR_RETURN(RangedBytes read, store_->GetRange(key_, offset, length));
    if (static_cast<int64_t>(read.bytes.size()) < length) {
      return Status::Error(errors::kIoError, fmt::format("{}: the store gave {} bytes of the {} asked for at {}",
                                                         store_->Uri(key_), read.bytes.size(), length, offset));
    }
    *out = std::move(read.bytes);
    return Status::OK();
  }

 private:
  ObjectStore* const store_;
  const std::string key_;
  const int64_t size_;
  const std::string prefix_;
};

// Buffers a part, then uploads it on a thread of its own while the writer fills the next ones:
// up to kPartsInFlight parts go up at once (as the stores' own command-line tools upload), so the
// memory held is at most kPartsInFlight + 1 parts, and a file's tail is uploaded in parallel
// after its writer closes it.
class ObjectWritableFile final : public WritableFile {
 public:
  static constexpr size_t kPartsInFlight = 4;

  ObjectWritableFile(ObjectStore* store, std::string key, int64_t part_size)
      : store_(store), key_(std::move(key)), part_size_(part_size) {}

  ~ObjectWritableFile() override {
    for (InFlight& part : in_flight_) part.done.wait();
    if (upload_ && !closed_) upload_->Abort();
  }

  Status Append(std::string_view data) override {
    written_ += static_cast<int64_t>(data.size());
    // Parts of exactly part_size, so that a large append (a row group's column chunk) is split
    // into parts that go up side by side.
    while (!data.empty()) {
      const size_t room = static_cast<size_t>(part_size_) - buffer_.size();
      buffer_.append(data.substr(0, room));
      data.remove_prefix(std::min(room, data.size()));
      if (static_cast<int64_t>(buffer_.size()) == part_size_) SLUICE_RETURN_IF_ERROR(StartPart());
    }
    return Status::OK();
  }

  int64_t Tell() const override { return written_; }

  Status Close() override {
    if (closed_) return Status::OK();
    if (!upload_) {
      SLUICE_RETURN_IF_ERROR(store_->Put(key_, buffer_, /*if_absent=*/false, nullptr));
      closed_ = true;
      return Status::OK();
    }
    if (!buffer_.empty()) SLUICE_RETURN_IF_ERROR(StartPart());
    while (!in_flight_.empty()) SLUICE_RETURN_IF_ERROR(WaitForOldest());
    SLUICE_RETURN_IF_ERROR(upload_->Complete(parts_));
    closed_ = true;
    return Status::OK();
  }

 private:
  struct InFlight {
    std::unique_ptr<std::string> bytes;  // alive until its upload ends
    std::future<Status> done;
  };

  Status StartPart() {
    if (!upload_) {
      SLUICE_ASSIGN_OR_RETURN(upload_, store_->StartUpload(key_));
    }
    while (in_flight_.size() >= kPartsInFlight) SLUICE_RETURN_IF_ERROR(WaitForOldest());
    const int number = ++parts_;
    auto bytes = std::make_unique<std::string>(std::move(buffer_));
    buffer_.clear();
    const std::string* part = bytes.get();
    PartUpload* upload = upload_.get();
    in_flight_.push_back(
        {std::move(bytes), std::async(std::launch::async, [upload, number, part] { return upload->UploadPart(number, *part); })});
    return Status::OK();
  }

  Status WaitForOldest() {
    Status status = in_flight_.front().done.get();
    in_flight_.pop_front();
    return status;
  }

  ObjectStore* const store_;
  const std::string key_;
  const int64_t part_size_;
  std::string buffer_;
  std::deque<InFlight> in_flight_;
  std::unique_ptr<PartUpload> upload_;
  int parts_ = 0;
  int64_t written_ = 0;
  bool closed_ = false;
};

constexpr OptionSpec kCommonStoreOptionSpecs[] = {
    {"max_retries", OptionType::kInt, "10", false, "retries of a failed request", {}, 0, 100},
    {"retry_base_delay", OptionType::kDuration, "100ms", false, "the first retry's longest wait"},
    {"retry_max_delay", OptionType::kDuration, "10s", false, "the longest wait between retries"},
    {"connect_timeout", OptionType::kDuration, "10s", false, "longest wait for a connection"},
    {"request_timeout", OptionType::kDuration, "60s", false, "longest wait for one request's answer"},
    {"lease_duration", OptionType::kDuration, "60s", false,
     "how long a checkpoint's lease outlives its last renewal (a killed process holds it that long)"},
    {"ca_file", OptionType::kString, std::nullopt, false, "a PEM bundle of the CAs that sign the store's certificate"},
    {"commit_coordinator", OptionType::kSecret, std::nullopt, false,
     "a reference to a PostgreSQL connection string whose table decides put-if-absent (stores without "
     "conditional writes)"},
    {"commit_coordinator_table", OptionType::kString, "sluice_commit_coordinator", false,
     "the coordinator's table, `name` or `schema.name`"},
};

}  // namespace

std::vector<OptionSpec> WithCommonStoreOptions(std::span<const OptionSpec> own) {
  std::vector<OptionSpec> specs(own.begin(), own.end());
  specs.insert(specs.end(), std::begin(kCommonStoreOptionSpecs), std::end(kCommonStoreOptionSpecs));
  return specs;
}

Result<CommonStoreOptions> CommonStoreOptionsFrom(const ValidatedOptions& validated, std::string_view store) {
  using std::chrono::duration_cast;
  using std::chrono::milliseconds;
  CommonStoreOptions options;
  options.retry.max_retries = static_cast<int>(validated.GetInt64("max_retries"));
  options.retry.base_delay = duration_cast<milliseconds>(validated.GetDuration("retry_base_delay"));
  options.retry.max_delay = duration_cast<milliseconds>(validated.GetDuration("retry_max_delay"));
  options.http.connect_timeout = duration_cast<milliseconds>(validated.GetDuration("connect_timeout"));
  options.http.request_timeout = duration_cast<milliseconds>(validated.GetDuration("request_timeout"));
  if (validated.Has("ca_file")) options.http.ca_file = validated.GetString("ca_file");
  options.settings.lease_duration = duration_cast<milliseconds>(validated.GetDuration("lease_duration"));
  if (validated.Has("commit_coordinator")) options.settings.commit_coordinator = validated.GetSecret("commit_coordinator");
  options.settings.commit_coordinator_table = validated.GetString("commit_coordinator_table");
  if (options.settings.lease_duration.count() < 300) {
    return Status::Error(errors::kInvalidStorageUri, fmt::format("{} option `lease_duration` is at least 300ms", store));
  }
  return options;
}

std::optional<RangedBytes> RangedAnswer(HttpResponse& response, int64_t offset, int64_t length) {
  RangedBytes read;
  if (response.status == 206) {
    const std::string_view range = response.Header("content-range");  // bytes 0-1048575/123456789
    const size_t slash = range.rfind('/');
    if (slash == std::string_view::npos) return std::nullopt;
    read.object_size = std::strtoll(std::string(range.substr(slash + 1)).c_str(), nullptr, 10);
    read.bytes = std::move(response.body);
  } else if (response.status == 200) {
    read.object_size = static_cast<int64_t>(response.body.size());
    read.bytes = response.body.substr(std::min<size_t>(static_cast<size_t>(offset), response.body.size()));
  } else if (response.status == 416 && offset == 0) {
    read.object_size = 0;  // an empty object: no range is satisfiable
  } else {
    return std::nullopt;
  }
  if (static_cast<int64_t>(read.bytes.size()) > length) read.bytes.resize(static_cast<size_t>(length));
  return read;
}

Status StoreFailure(const ObjectStore& store, std::string_view operation, std::string_view key,
                    const HttpResponse& response, bool absent) {
  const ErrorReply reply = ParseErrorReply(response.body);
  const std::string detail = fmt::format("{} {} {}: HTTP {}{}{}", store.kind(), operation, store.Uri(key),
                                         response.status, reply.code.empty() ? "" : " " + reply.code,
                                         reply.message.empty() ? "" : " (" + reply.message + ")");
  if (absent) return Status::Error(errors::kFileNotFound, detail);
  if (response.status == 401 || response.status == 403) return Status::Error(errors::kStorageAccessDenied, detail);
  return Status::Error(errors::kIoError, detail);
}

ObjectStoreFileSystem::ObjectStoreFileSystem(std::unique_ptr<ObjectStore> store, ObjectStoreSettings settings)
    : store_(std::move(store)), settings_(settings) {}

ObjectStoreFileSystem::~ObjectStoreFileSystem() = default;

Result<std::string> ObjectStoreFileSystem::KeyOf(const std::string& path) const {
  const std::string& root = store_->root();
  if (path == root || path == root + "/") return std::string();
  if (!path.starts_with(root + "/")) {
    return Status::Error(errors::kInvalidStorageUri, fmt::format("`{}` is not in {}", path, root));
  }
  std::string key = path.substr(root.size() + 1);
  while (!key.empty() && key.back() == '/') key.pop_back();
  return key;
}

Result<std::string> ObjectStoreFileSystem::ReadFile(const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(std::string key, KeyOf(path));
  return store_->Get(key);
}

Result<std::unique_ptr<RandomAccessFile>> ObjectStoreFileSystem::OpenForRead(const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(std::string key, KeyOf(path));
  SLUICE_ASSIGN_OR_RETURN(RangedBytes first, store_->GetRange(key, 0, kPrefetchBytes));
  return std::unique_ptr<RandomAccessFile>(
      new ObjectRandomAccessFile(store_.get(), key, first.object_size, std::move(first.bytes)));
}

Result<std::unique_ptr<WritableFile>> ObjectStoreFileSystem::OpenForWrite(const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(std::string key, KeyOf(path));
  return std::unique_ptr<WritableFile>(new ObjectWritableFile(store_.get(), key, settings_.part_size));
}

Status ObjectStoreFileSystem::AtomicWrite(const std::string& path, std::string_view data) {
  SLUICE_ASSIGN_OR_RETURN(std::string key, KeyOf(path));
  return store_->Put(key, data, /*if_absent=*/false, nullptr);
}

Status ObjectStoreFileSystem::CheckConditionalWrites(const std::string& near_key) {
  std::lock_guard lock(probe_mutex_);
  if (conditional_writes_checked_) return Status::OK();
  const size_t slash = near_key.rfind('/');
  const std::string probe =
      (slash == std::string::npos ? "" : near_key.substr(0, slash + 1)) +
      fmt::format("_sluice_conditional_write_probe_{}", std::chrono::steady_clock::now().time_since_epoch().count());
  SLUICE_RETURN_IF_ERROR(store_->Put(probe, "1", /*if_absent=*/true, nullptr));
  const Status second = store_->Put(probe, "2", /*if_absent=*/true, nullptr);
  (void)store_->Delete(probe);
  if (second.error_class() != errors::kFileAlreadyExists) {
    SLUICE_RETURN_IF_ERROR(second.WithContext("conditional write check"));
    return Status::Error(errors::kStorageConditionalWriteUnsupported,
                         fmt::format("the store behind {} does not honour If-None-Match: * (a second conditional "
                                     "write of one object succeeded), so concurrent commits could overwrite each "
                                     "other: give it a commit_coordinator (docs/storage.md)",
                                     store_->root()));
  }
  conditional_writes_checked_ = true;
  return Status::OK();
}

Status ObjectStoreFileSystem::PutThroughCoordinator(const std::string& key, std::string_view data) {
  CommitCoordinator* coordinator = nullptr;
  {
    std::lock_guard lock(probe_mutex_);
    if (!coordinator_) {
      SLUICE_ASSIGN_OR_RETURN(coordinator_, ConnectPostgresCommitCoordinator(settings_.commit_coordinator,
                                                                             settings_.commit_coordinator_table));
    }
    coordinator = coordinator_.get();
  }
  const std::string uri = store_->Uri(key);
  SLUICE_ASSIGN_OR_RETURN(CommitCoordinator::Claim claim, coordinator->TryClaim(uri, data));
  // Ours: won now, or won by an attempt whose reply was lost (the same bytes).
  const bool ours = claim.won || claim.bytes == data;
  if (!claim.complete) {
    // Our write, or that of a winner that died before writing or completing it: the claimed bytes
    // go to the store either way (a second writing of the same bytes is harmless).
    SLUICE_RETURN_IF_ERROR(store_->Put(key, ours ? data : std::string_view(claim.bytes), /*if_absent=*/false, nullptr));
    SLUICE_RETURN_IF_ERROR(coordinator->Complete(uri));
  }
  if (!ours) return Status::Error(errors::kFileAlreadyExists, fmt::format("{} already exists", uri));
  return Status::OK();
}

Status ObjectStoreFileSystem::PutIfAbsent(const std::string& path, std::string_view data) {
  SLUICE_ASSIGN_OR_RETURN(std::string key, KeyOf(path));
  if (!settings_.commit_coordinator.empty()) return PutThroughCoordinator(key, data);
  SLUICE_RETURN_IF_ERROR(CheckConditionalWrites(key));
  bool ambiguous = false;
  Status put = store_->Put(key, data, /*if_absent=*/true, &ambiguous);
  if (put.error_class() == errors::kFileAlreadyExists && ambiguous) {
    // An earlier attempt may have written the object and lost its reply: ours if the bytes are.
    Result<std::string> existing = store_->Get(key);
    if (existing.ok() && *existing == data) return Status::OK();
  }
  return put;
}

Result<FileInfo> ObjectStoreFileSystem::Stat(const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(std::string key, KeyOf(path));
  if (key.empty()) return FileInfo{store_->root(), 0, 0, true};
  // One listing page answers for a file and a folder at once (a HEAD would need a listing after it
  // to tell a folder from nothing): the key itself, or `key/` among the common prefixes.
  std::optional<FileInfo> found;
  bool more = false;
  Status listed = store_->List(key, /*by_folder=*/true, "", [&](ListPage& page) {
    for (const ListedObject& object : page.objects) {
      if (object.key == key) found = FileInfo{store_->Uri(key), object.size, object.last_modified_ms, false};
    }
    for (const std::string& common : page.common_prefixes) {
      if (!found && common == key + "/") found = FileInfo{store_->Uri(key), 0, 0, true};
    }
    more = page.truncated;
    return false;
  });
  SLUICE_RETURN_IF_ERROR(listed);
  if (found) return *found;
  if (more) {
    // More than a page of keys extend this one: ask for the object, then for the folder.
    Result<ListedObject> head = store_->Head(key);
    if (head.ok()) return FileInfo{store_->Uri(key), head->size, head->last_modified_ms, false};
    if (head.status().error_class() != errors::kFileNotFound) return head.status();
    bool inside = false;
    SLUICE_RETURN_IF_ERROR(store_->List(key + "/", /*by_folder=*/true, "", [&](ListPage& page) {
      inside = !page.objects.empty() || !page.common_prefixes.empty();
      return false;
    }));
    if (inside) return FileInfo{store_->Uri(key), 0, 0, true};
  }
  return Status::Error(errors::kFileNotFound, fmt::format("{} does not exist", path));
}

Result<bool> ObjectStoreFileSystem::Exists(const std::string& path) {
  Result<FileInfo> info = Stat(path);
  if (info.ok()) return true;
  if (info.status().error_class() == errors::kFileNotFound) return false;
  return info.status();
}

Result<std::vector<FileInfo>> ObjectStoreFileSystem::List(const std::string& directory, std::string_view prefix,
                                                          std::string_view start_after) {
  SLUICE_ASSIGN_OR_RETURN(std::string key, KeyOf(directory));
  const std::string folder = key.empty() ? "" : key + "/";
  std::vector<FileInfo> entries;
  SLUICE_RETURN_IF_ERROR(store_->List(
      folder + std::string(prefix), /*by_folder=*/true, start_after.empty() ? "" : folder + std::string(start_after),
      [&](ListPage& page) {
        for (ListedObject& object : page.objects) {
          if (object.key.ends_with('/')) continue;  // a "folder" marker another tool made
          entries.push_back(FileInfo{store_->Uri(object.key), object.size, object.last_modified_ms, false});
        }
        for (std::string& common : page.common_prefixes) {
          if (common.ends_with('/')) common.pop_back();
          entries.push_back(FileInfo{store_->Uri(common), 0, 0, true});
        }
        return true;
      }));
  std::sort(entries.begin(), entries.end(), [](const FileInfo& a, const FileInfo& b) { return a.path < b.path; });
  if (!start_after.empty()) {
    // Stores that cannot start a listing after a key filter here.
    const std::string after = store_->Uri(folder + std::string(start_after));
    std::erase_if(entries, [&](const FileInfo& entry) { return entry.path <= after; });
  }
  return entries;
}

Status ObjectStoreFileSystem::Delete(const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(std::string key, KeyOf(path));
  return store_->Delete(key);
}

Status ObjectStoreFileSystem::DeleteRecursively(const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(std::string key, KeyOf(path));
  std::vector<std::string> keys;
  SLUICE_RETURN_IF_ERROR(store_->List(key.empty() ? "" : key + "/", /*by_folder=*/false, "", [&](ListPage& page) {
    for (ListedObject& object : page.objects) keys.push_back(std::move(object.key));
    return true;
  }));
  for (const std::string& each : keys) SLUICE_RETURN_IF_ERROR(store_->Delete(each));
  if (!key.empty()) return store_->Delete(key);
  return Status::OK();
}

Status ObjectStoreFileSystem::CreateDirectories(const std::string& path) { return KeyOf(path).status(); }

Status ObjectStoreFileSystem::Rename(const std::string& from, const std::string& to, bool no_replace) {
  SLUICE_ASSIGN_OR_RETURN(std::string data, ReadFile(from));
  SLUICE_RETURN_IF_ERROR(no_replace ? PutIfAbsent(to, data) : AtomicWrite(to, data));
  return Delete(from);
}

Result<std::unique_ptr<FileLock>> ObjectStoreFileSystem::Lock(const std::string& path) {
  SLUICE_RETURN_IF_ERROR(KeyOf(path).status());
  return TakeLease(shared_from_this(), path, settings_.lease_duration);
}

}  // namespace sluice::storage
