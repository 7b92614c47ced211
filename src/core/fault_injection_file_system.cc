#include "sluice/core/error_classes.h"
#include "sluice/core/fault_injection.h"

namespace sluice {

std::string_view FileOpName(FileOp op) {
  switch (op) {
    case FileOp::kReadFile: return "ReadFile";
    case FileOp::kOpenForRead: return "OpenForRead";
    case FileOp::kReadAt: return "ReadAt";
    case FileOp::kOpenForWrite: return "OpenForWrite";
    case FileOp::kAppend: return "Append";
    case FileOp::kClose: return "Close";
    case FileOp::kAtomicWrite: return "AtomicWrite";
    case FileOp::kPutIfAbsent: return "PutIfAbsent";
    case FileOp::kStat: return "Stat";
    case FileOp::kExists: return "Exists";
    case FileOp::kList: return "List";
    case FileOp::kDelete: return "Delete";
    case FileOp::kDeleteRecursively: return "DeleteRecursively";
    case FileOp::kCreateDirectories: return "CreateDirectories";
    case FileOp::kRename: return "Rename";
    case FileOp::kLock: return "Lock";
  }
  return "unknown";
}

class FaultInjectionFileSystem::FaultyRandomAccessFile final : public RandomAccessFile {
 public:
  FaultyRandomAccessFile(FaultInjectionFileSystem* owner, std::string path, std::unique_ptr<RandomAccessFile> base)
      : owner_(owner), path_(std::move(path)), base_(std::move(base)) {}

  int64_t Size() const override { return base_->Size(); }

  Status ReadAt(int64_t offset, int64_t length, std::string* out) const override {
    return owner_->Apply(FileOp::kReadAt, path_, [&] { return base_->ReadAt(offset, length, out); });
  }

 private:
  FaultInjectionFileSystem* owner_;
  std::string path_;
  std::unique_ptr<RandomAccessFile> base_;
};

class FaultInjectionFileSystem::FaultyWritableFile final : public WritableFile {
 public:
  FaultyWritableFile(FaultInjectionFileSystem* owner, std::string path, std::unique_ptr<WritableFile> base)
      : owner_(owner), path_(std::move(path)), base_(std::move(base)) {}

  Status Append(std::string_view data) override {
    return owner_->Apply(FileOp::kAppend, path_, [&] { return base_->Append(data); });
  }

  int64_t Tell() const override { return base_->Tell(); }

  Status Close() override {
    return owner_->Apply(FileOp::kClose, path_, [&] { return base_->Close(); });
  }

 private:
  FaultInjectionFileSystem* owner_;
  std::string path_;
  std::unique_ptr<WritableFile> base_;
};

FaultInjectionFileSystem::FaultInjectionFileSystem(std::shared_ptr<FileSystem> base) : base_(std::move(base)) {}

void FaultInjectionFileSystem::InjectFault(Fault fault) {
  std::lock_guard lock(mutex_);
  faults_.push_back(ArmedFault{std::move(fault)});
}

void FaultInjectionFileSystem::ClearFaults() {
  std::lock_guard lock(mutex_);
  faults_.clear();
}

int64_t FaultInjectionFileSystem::CallCount(FileOp op) const {
  std::lock_guard lock(mutex_);
  return calls_[static_cast<int>(op)];
}

int64_t FaultInjectionFileSystem::TotalCalls() const {
  std::lock_guard lock(mutex_);
  int64_t total = 0;
  for (int64_t count : calls_) total += count;
  return total;
}

int64_t FaultInjectionFileSystem::InjectedFailures() const {
  std::lock_guard lock(mutex_);
  return injected_failures_;
}

void FaultInjectionFileSystem::ResetCounts() {
  std::lock_guard lock(mutex_);
  calls_.fill(0);
  injected_failures_ = 0;
}

FaultInjectionFileSystem::Decision FaultInjectionFileSystem::Decide(FileOp op, const std::string& path) {
  std::lock_guard lock(mutex_);
  int64_t call_number = ++calls_[static_cast<int>(op)];
  Decision decision;
  for (ArmedFault& armed : faults_) {
    const Fault& fault = armed.fault;
    if (fault.op.has_value() && *fault.op != op) continue;
    if (!fault.path_substring.empty() && path.find(fault.path_substring) == std::string::npos) continue;
    ++armed.matched;
    bool fires = armed.matched == fault.nth || (fault.sticky && armed.matched > fault.nth);
    if (!fires || decision.fail_before || decision.fail_after) continue;
    Status error = fault.error.value_or(Status::Error(
        errors::kIoError, "injected fault: " + std::string(FileOpName(op)) + " '" + path + "' (call " +
                              std::to_string(call_number) + (fault.timing == FaultTiming::kAfter
                                                                 ? ", after it took effect)"
                                                                 : ", before it took effect)")));
    (fault.timing == FaultTiming::kBefore ? decision.fail_before : decision.fail_after) = std::move(error);
    ++injected_failures_;
  }
  return decision;
}

Status FaultInjectionFileSystem::Apply(FileOp op, const std::string& path, const std::function<Status()>& call) {
  Decision decision = Decide(op, path);
  if (decision.fail_before) return *decision.fail_before;
  Status status = call();
  // A real failure of the wrapped call wins over an injected one.
  if (status.ok() && decision.fail_after) return *decision.fail_after;
  return status;
}

Result<std::string> FaultInjectionFileSystem::ReadFile(const std::string& path) {
  std::optional<std::string> content;
  SLUICE_RETURN_IF_ERROR(Apply(FileOp::kReadFile, path, [&] {
    Result<std::string> result = base_->ReadFile(path);
    if (result.ok()) content = std::move(result).value();
    return result.status();
  }));
  return std::move(*content);
}

Result<std::unique_ptr<RandomAccessFile>> FaultInjectionFileSystem::OpenForRead(const std::string& path) {
  std::unique_ptr<RandomAccessFile> file;
  SLUICE_RETURN_IF_ERROR(Apply(FileOp::kOpenForRead, path, [&] {
    Result<std::unique_ptr<RandomAccessFile>> result = base_->OpenForRead(path);
    if (result.ok()) file = std::move(result).value();
    return result.status();
  }));
  return std::unique_ptr<RandomAccessFile>(std::make_unique<FaultyRandomAccessFile>(this, path, std::move(file)));
}

Result<std::unique_ptr<WritableFile>> FaultInjectionFileSystem::OpenForWrite(const std::string& path) {
  std::unique_ptr<WritableFile> file;
  SLUICE_RETURN_IF_ERROR(Apply(FileOp::kOpenForWrite, path, [&] {
    Result<std::unique_ptr<WritableFile>> result = base_->OpenForWrite(path);
    if (result.ok()) file = std::move(result).value();
    return result.status();
  }));
  return std::unique_ptr<WritableFile>(std::make_unique<FaultyWritableFile>(this, path, std::move(file)));
}

Status FaultInjectionFileSystem::AtomicWrite(const std::string& path, std::string_view data) {
  return Apply(FileOp::kAtomicWrite, path, [&] { return base_->AtomicWrite(path, data); });
}

Status FaultInjectionFileSystem::PutIfAbsent(const std::string& path, std::string_view data) {
  return Apply(FileOp::kPutIfAbsent, path, [&] { return base_->PutIfAbsent(path, data); });
}

Result<FileInfo> FaultInjectionFileSystem::Stat(const std::string& path) {
  FileInfo info;
  SLUICE_RETURN_IF_ERROR(Apply(FileOp::kStat, path, [&] {
    Result<FileInfo> result = base_->Stat(path);
    if (result.ok()) info = std::move(result).value();
    return result.status();
  }));
  return info;
}

Result<bool> FaultInjectionFileSystem::Exists(const std::string& path) {
  bool exists = false;
  SLUICE_RETURN_IF_ERROR(Apply(FileOp::kExists, path, [&] {
    Result<bool> result = base_->Exists(path);
    if (result.ok()) exists = *result;
    return result.status();
  }));
  return exists;
}

Result<std::vector<FileInfo>> FaultInjectionFileSystem::List(const std::string& directory, std::string_view prefix,
                                                             std::string_view start_after) {
  std::vector<FileInfo> entries;
  SLUICE_RETURN_IF_ERROR(Apply(FileOp::kList, directory, [&] {
    Result<std::vector<FileInfo>> result = base_->List(directory, prefix, start_after);
    if (result.ok()) entries = std::move(result).value();
    return result.status();
  }));
  return entries;
}

Status FaultInjectionFileSystem::Delete(const std::string& path) {
  return Apply(FileOp::kDelete, path, [&] { return base_->Delete(path); });
}

Status FaultInjectionFileSystem::DeleteRecursively(const std::string& path) {
  return Apply(FileOp::kDeleteRecursively, path, [&] { return base_->DeleteRecursively(path); });
}

Status FaultInjectionFileSystem::CreateDirectories(const std::string& path) {
  return Apply(FileOp::kCreateDirectories, path, [&] { return base_->CreateDirectories(path); });
}

Status FaultInjectionFileSystem::Rename(const std::string& from, const std::string& to, bool no_replace) {
  // Matched by the target: the name a commit protocol cares about.
  return Apply(FileOp::kRename, to, [&] { return base_->Rename(from, to, no_replace); });
}

Result<std::unique_ptr<FileLock>> FaultInjectionFileSystem::Lock(const std::string& path) {
  std::unique_ptr<FileLock> lock;
  SLUICE_RETURN_IF_ERROR(Apply(FileOp::kLock, path, [&] {
    Result<std::unique_ptr<FileLock>> result = base_->Lock(path);
    if (result.ok()) lock = std::move(result).value();
    return result.status();
  }));
  return lock;
}

}  // namespace sluice
