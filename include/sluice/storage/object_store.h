// ObjectStore: the few calls of one bucket's (or container's) API that ObjectStoreFileSystem
// builds every FileSystem operation on, so that what a file system means on an object store —
// prefetching opens, part-by-part uploads, put-if-absent resolved after a lost reply, folders as
// key prefixes, leases — is written once for every store. S3 (s3_file_system.h) and Azure Blob
// Storage (azure_file_system.h) implement it.
//
// Keys are object names inside the bucket, without a leading '/'. Every call sends its requests
// with retries (RetryPolicy, http_client.h) and maps the store's answers to sluice's errors:
// FILE_NOT_FOUND for an absent object, FILE_ALREADY_EXISTS for a put-if-absent whose condition
// failed, STORAGE_ACCESS_DENIED for 401/403, IO_ERROR otherwise, each naming the store's operation,
// the object's URI and the store's error code.
//
// Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/file_system.h"
#include "sluice/core/options.h"
#include "sluice/storage/commit_coordinator.h"
#include "sluice/storage/http_client.h"
#include "sluice/storage/xml_reply.h"

namespace sluice::storage {

// A large object written in parts (S3's multipart upload, Azure's staged blocks). Parts are
// uploaded one at a time, numbered from 1; nothing is visible at the key until Complete returns OK.
class PartUpload {
 public:
  virtual ~PartUpload() = default;
  virtual Status UploadPart(int number, std::string_view data) = 0;
  // Publishes parts 1..`parts` as the object.
  virtual Status Complete(int parts) = 0;
  // Best effort: discards the parts (a store that cannot keeps them until its own cleanup).
  virtual void Abort() = 0;
};

struct RangedBytes {
  std::string bytes;
  int64_t object_size = 0;
};

// The answer to a ranged GET as HTTP defines it, whatever the store: 206 with a Content-Range
// naming the object's size, 200 with the whole object (a store that ignored the range), or 416
// for an empty object read from 0. nullopt for any other answer (the store's failure).
std::optional<RangedBytes> RangedAnswer(HttpResponse& response, int64_t offset, int64_t length);

class ObjectStore {
 public:
  virtual ~ObjectStore() = default;

  // The URI of the bucket or container, the prefix of every path of its file system:
  // "s3://bucket", "az://container", "abfss://container@account.dfs.core.windows.net".
  virtual const std::string& root() const = 0;
  // The store's name in messages: "S3", "Azure Blob Storage".
  virtual std::string_view kind() const = 0;

  virtual Result<std::string> Get(const std::string& key) = 0;
  // The bytes [offset, offset + length) — fewer at the object's end, none of an empty object
  // read from 0 — and the object's size (RangedAnswer reads the store's answer).
  virtual Result<RangedBytes> GetRange(const std::string& key, int64_t offset, int64_t length) = 0;
  // Writes the object whole. With `if_absent`, only when no object has the key
  // (FILE_ALREADY_EXISTS otherwise); `ambiguous` (when not null) is then set when an attempt
  // before the answered one may have reached the store, so that the answer may be to our own write.
  virtual Status Put(const std::string& key, std::string_view data, bool if_absent, bool* ambiguous) = 0;
  // The object's size and time; FILE_NOT_FOUND when absent.
  virtual Result<ListedObject> Head(const std::string& key) = 0;
  // Every page of the objects whose keys start with `prefix` and sort after `start_after` (a key;
  // "" for all), with `/` as the folder delimiter when `by_folder` (folders then come as common
  // prefixes ending in `/`). `visit` returns false to stop before the next page.
  virtual Status List(const std::string& prefix, bool by_folder, const std::string& start_after,
                      const std::function<bool(ListPage&)>& visit) = 0;
  // Absent is OK.
  virtual Status Delete(const std::string& key) = 0;
  virtual Result<std::unique_ptr<PartUpload>> StartUpload(const std::string& key) = 0;

  // Requests sent so far, retries included (for benchmarks and round-trip tests).
  int64_t requests_sent() const { return requests_sent_.load(); }
  std::string Uri(std::string_view key) const { return root() + "/" + std::string(key); }

 protected:
  std::atomic<int64_t> requests_sent_{0};
};

struct ObjectStoreSettings {
  int64_t part_size = 8 << 20;  // files larger than this are uploaded in parts of this size
  std::chrono::milliseconds lease_duration{60'000};
  // A PostgreSQL connection string: put-if-absent through that database's commit coordinator
  // (commit_coordinator.h) instead of the store's conditional write. Empty: the store's own.
  std::string commit_coordinator;
  std::string commit_coordinator_table = "sluice_commit_coordinator";
};

// What every object store's options section sets beside its own keys (docs/storage.md): retries
// (max_retries, retry_base_delay, retry_max_delay), timeouts (connect_timeout, request_timeout),
// ca_file, lease_duration, commit_coordinator and commit_coordinator_table (the settings'
// part_size is the store's own option).
struct CommonStoreOptions {
  RetryPolicy retry;
  HttpClientOptions http;
  ObjectStoreSettings settings;
};
// A store's own option specs followed by the common ones. Validated options point into the
// result: callers keep it as long as the process (a function-local static).
std::vector<OptionSpec> WithCommonStoreOptions(std::span<const OptionSpec> own);
// The common options of a validated section; INVALID_STORAGE_URI for a lease under 300 ms.
Result<CommonStoreOptions> CommonStoreOptionsFrom(const ValidatedOptions& validated, std::string_view store);

// The FileSystem of one bucket or container. How each operation maps to the store's calls:
//   ReadFile          Get
//   OpenForRead       GetRange of the first MiB (small files are then read in one request, and
//                     the size comes with it), GetRange past it (Parquet footers, column chunks)
//   OpenForWrite      one Put on Close, or a PartUpload once the file passes `part_size`: each part
//                     is uploaded while the writer fills the next; a file destroyed without Close
//                     aborts its upload
//   AtomicWrite       Put (an object is replaced whole)
//   PutIfAbsent       Put if_absent. The first PutIfAbsent of a file system checks that the store
//                     honours the condition and fails with STORAGE_CONDITIONAL_WRITE_UNSUPPORTED
//                     when it does not. A reply lost after the write happened is resolved by
//                     reading the object back. With a `commit_coordinator`, a claim in its
//                     database, then a plain Put (commit_coordinator.h), and no check.
//   List              List by folder from `start_after`
//   Stat / Exists     one List with the key as prefix: the object itself, or `key/` among the
//                     common prefixes (a folder)
//   Delete            Delete; DeleteRecursively lists the prefix and deletes each key
//   CreateDirectories nothing (object stores have no folders)
//   Rename            the bytes copied, then Delete (not atomic; no_replace by PutIfAbsent)
//   Lock              a lease (lease.h) of `lease_duration`
// Owned by a shared_ptr (leases hold it).
class ObjectStoreFileSystem final : public FileSystem, public std::enable_shared_from_this<ObjectStoreFileSystem> {
 public:
  ObjectStoreFileSystem(std::unique_ptr<ObjectStore> store, ObjectStoreSettings settings);
  ~ObjectStoreFileSystem() override;

  Result<std::string> ReadFile(const std::string& path) override;
  Result<std::unique_ptr<RandomAccessFile>> OpenForRead(const std::string& path) override;
  Result<std::unique_ptr<WritableFile>> OpenForWrite(const std::string& path) override;
  Status AtomicWrite(const std::string& path, std::string_view data) override;
  Status PutIfAbsent(const std::string& path, std::string_view data) override;
  Result<FileInfo> Stat(const std::string& path) override;
  Result<bool> Exists(const std::string& path) override;
  Result<std::vector<FileInfo>> List(const std::string& directory, std::string_view prefix = "",
                                     std::string_view start_after = "") override;
  Status Delete(const std::string& path) override;
  Status DeleteRecursively(const std::string& path) override;
  Status CreateDirectories(const std::string& path) override;
  Status Rename(const std::string& from, const std::string& to, bool no_replace) override;
  Result<std::unique_ptr<FileLock>> Lock(const std::string& path) override;

  ObjectStore& store() { return *store_; }
  int64_t requests_sent() const { return store_->requests_sent(); }

 private:
  Result<std::string> KeyOf(const std::string& path) const;
  Status CheckConditionalWrites(const std::string& near_key);
  Status PutThroughCoordinator(const std::string& key, std::string_view data);

  const std::unique_ptr<ObjectStore> store_;
  const ObjectStoreSettings settings_;
  std::mutex probe_mutex_;
  bool conditional_writes_checked_ = false;
  std::shared_ptr<CommitCoordinator> coordinator_;  // connected on first use
};

// The error of an answered request that failed: FILE_NOT_FOUND when `absent` (the store said the
// object does not exist), STORAGE_ACCESS_DENIED for 401/403, IO_ERROR otherwise; the message names
// the store, its operation, the URI, the HTTP status and the store's code and message.
Status StoreFailure(const ObjectStore& store, std::string_view operation, std::string_view key,
                    const HttpResponse& response, bool absent);

}  // namespace sluice::storage
