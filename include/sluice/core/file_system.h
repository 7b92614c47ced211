// FileSystem: every file sluice touches (Delta tables, checkpoints, the catalog) goes through
// this interface, so that object stores can be added and tests can inject faults.
//
// Paths are absolute strings with '/' separators (a relative path fails with INVALID_ARGUMENT).
// Implementations are thread-safe; the files they hand out are used by one thread at a time.
// Errors: FILE_NOT_FOUND when the path does not exist, FILE_ALREADY_EXISTS when PutIfAbsent or
// Rename(no_replace) meets an existing target, IO_ERROR for everything else (with the path and
// the OS error).
//
// Writes that publish a file (WritableFile::Close, AtomicWrite, PutIfAbsent) stage the bytes in a
// hidden file beside the target; List() never shows staging files, so a reader never meets a file
// that is still being written. Once a publishing call returns OK, the file and its name are
// durable (fsynced, directory included).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/status.h"

namespace sluice {

struct FileInfo {
  std::string path;        // absolute
  int64_t size = 0;        // bytes; 0 for directories
  int64_t modification_time_ms = 0;
  bool is_directory = false;
};

// A file being written sequentially. Nothing is visible at the final path until Close()
// returns OK (writers stage into a temporary file in the same directory and publish on Close).
// Destroying it without a successful Close() discards what was written.
class WritableFile {
 public:
  virtual ~WritableFile() = default;
  virtual Status Append(std::string_view data) = 0;
  virtual int64_t Tell() const = 0;
  // Flushes, fsyncs and publishes the file (replacing any file at the path).
  virtual Status Close() = 0;
};

// A file read at arbitrary offsets (Parquet footers, pages).
class RandomAccessFile {
 public:
  virtual ~RandomAccessFile() = default;
  virtual int64_t Size() const = 0;
  // Reads exactly `length` bytes at `offset` into `out` (resized), or IO_ERROR when the file is
  // shorter.
  virtual Status ReadAt(int64_t offset, int64_t length, std::string* out) const = 0;
};

// An exclusive lock (FileSystem::Lock), held until this object is destroyed or its process dies.
class FileLock {
 public:
  virtual ~FileLock() = default;
  // OK while the lock is still this process's; STORAGE_LEASE_HELD once another process has taken
  // it (an object store's lease not renewed in time, because this process stalled or lost the
  // store). Holders check it before each step they publish, and stop when it fails.
  virtual Status Check() const = 0;
};

class FileSystem {
 public:
  virtual ~FileSystem() = default;

  virtual Result<std::string> ReadFile(const std::string& path) = 0;
  virtual Result<std::unique_ptr<RandomAccessFile>> OpenForRead(const std::string& path) = 0;
  // Creates parent directories as needed.
  virtual Result<std::unique_ptr<WritableFile>> OpenForWrite(const std::string& path) = 0;
  // Writes the whole file so that a reader sees either the old content or the new, never a part
  // (temp file + fsync + rename). Creates parent directories.
  virtual Status AtomicWrite(const std::string& path, std::string_view data) = 0;
  // Creates `path` with `data` only if nothing exists there: exactly one of several racing
  // writers succeeds, the others get FILE_ALREADY_EXISTS. The content is durable and complete
  // when visible. This is the primitive Delta commits and the checkpoint log rely on.
  virtual Status PutIfAbsent(const std::string& path, std::string_view data) = 0;
  virtual Result<FileInfo> Stat(const std::string& path) = 0;
  virtual Result<bool> Exists(const std::string& path) = 0;
  // Entries directly inside `directory` whose names start with `prefix` and sort after
  // `start_after` (a name, compared bytewise), sorted by name. An absent directory lists as empty.
  // Object stores pass both to the store, so a listing from a point in a long folder (a Delta log
  // from its last checkpoint) costs what it returns, not the whole folder.
  virtual Result<std::vector<FileInfo>> List(const std::string& directory, std::string_view prefix = "",
                                             std::string_view start_after = "") = 0;
  virtual Status Delete(const std::string& path) = 0;            // a file; absent is OK
  virtual Status DeleteRecursively(const std::string& path) = 0;  // a tree; absent is OK
  virtual Status CreateDirectories(const std::string& path) = 0;
  // Renames a file; the directory of `to` must exist. With no_replace, fails with
  // FILE_ALREADY_EXISTS if `to` exists (atomically: two racing renames cannot both succeed).
  virtual Status Rename(const std::string& from, const std::string& to, bool no_replace) = 0;
  // Takes the exclusive lock named by `path` for this process: on the local disk flock() on that
  // file (the kernel drops it when the process dies); on object stores a lease object with an
  // expiry, renewed by a heartbeat and taken over once expired (storage/lease.h). Fails with
  // STORAGE_LEASE_HELD, naming the holder, while another process holds it; IO_ERROR otherwise.
  virtual Result<std::unique_ptr<FileLock>> Lock(const std::string& path) = 0;
};

// The local disk. One shared instance; thread-safe. Object stores, and the file system that serves
// local paths and URIs alike, are in the storage layer (sluice/storage/file_systems.h).
std::shared_ptr<FileSystem> LocalFileSystem();

}  // namespace sluice
