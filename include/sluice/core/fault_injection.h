// FaultInjectionFileSystem: a FileSystem for tests that forwards to another one and makes chosen
// calls fail, so that commit protocols can be tested against every failure point.
//
//   auto fs = std::make_shared<FaultInjectionFileSystem>(LocalFileSystem());
//   // The 2nd PutIfAbsent from now takes effect, then reports an error anyway:
//   fs->InjectFault({.op = FileOp::kPutIfAbsent, .nth = 2, .timing = FaultTiming::kAfter});
//
// Faults are deterministic: each armed fault counts the calls it matches (its operation, or every
// operation when `op` is unset, and optionally only paths containing `path_substring`) from the
// moment it is armed, and fires on the nth one. With FaultTiming::kBefore the call fails without
// touching the wrapped file system; with kAfter the call is carried out and then fails, which is
// what a caller sees when a rename or put-if-absent succeeds but the reply is lost (the nasty
// case). A `sticky` fault keeps failing every matching call from the nth on (a dead disk). When
// several faults fire on the same call, the one armed first decides how it fails.
//
// A call's path is its file's path (for Rename the target, the name a commit protocol races for;
// for List the directory). Calls on files opened through this wrapper (WritableFile::Append and
// Close, RandomAccessFile::ReadAt) are operations of their own and count too. A failure injected
// after a WritableFile::Close means the file was published.
//
// Thread-safe. The wrapper must outlive the files it opens.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "sluice/core/file_system.h"

namespace sluice {

enum class FileOp {
  kReadFile,
  kOpenForRead,
  kReadAt,
  kOpenForWrite,
  kAppend,
  kClose,
  kAtomicWrite,
  kPutIfAbsent,
  kStat,
  kExists,
  kList,
  kDelete,
  kDeleteRecursively,
  kCreateDirectories,
  kRename,
  kLock,
};
inline constexpr int kFileOpCount = static_cast<int>(FileOp::kRename) + 1;

std::string_view FileOpName(FileOp op);

enum class FaultTiming { kBefore, kAfter };

struct Fault {
  std::optional<FileOp> op = std::nullopt;  // unset: any operation
  int64_t nth = 1;                          // 1 = the next matching call
  FaultTiming timing = FaultTiming::kBefore;
  bool sticky = false;                      // also fail every matching call after the nth
  std::string path_substring = {};          // empty: any path
  // What the failed call returns; IO_ERROR "injected fault: ..." when unset.
  std::optional<Status> error = std::nullopt;
};

class FaultInjectionFileSystem final : public FileSystem {
 public:
  explicit FaultInjectionFileSystem(std::shared_ptr<FileSystem> base);

  void InjectFault(Fault fault);
  // Disarms every fault (counts are kept).
  void ClearFaults();
  // Calls of one operation / of all operations since construction or ResetCounts(), failed or not.
  int64_t CallCount(FileOp op) const;
  int64_t TotalCalls() const;
  // How many calls have failed because of an injected fault.
  int64_t InjectedFailures() const;
  void ResetCounts();

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

 private:
  class FaultyRandomAccessFile;
  class FaultyWritableFile;

  // What one call should do: fail before reaching the wrapped file system, after it, or not at all.
  struct Decision {
    std::optional<Status> fail_before;
    std::optional<Status> fail_after;
  };
  Decision Decide(FileOp op, const std::string& path);
  // Runs `call` under the decision for (op, path).
  Status Apply(FileOp op, const std::string& path, const std::function<Status()>& call);

  struct ArmedFault {
    Fault fault;
    int64_t matched = 0;
  };

  std::shared_ptr<FileSystem> base_;
  mutable std::mutex mutex_;
  std::vector<ArmedFault> faults_;
  std::array<int64_t, kFileOpCount> calls_{};
  int64_t injected_failures_ = 0;
};

}  // namespace sluice
