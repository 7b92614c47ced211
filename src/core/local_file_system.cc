// FileSystem on the local disk, with POSIX calls so that every durability step is explicit.
//
// Every publish follows the same order: write a staging file beside the target, fsync it, make it
// visible under the final name (rename, or link for put-if-absent), then fsync the directory so
// the new name survives a power loss. Staging files are named ".<name>.<pid>.<n>.sluice-tmp";
// List() hides them, so readers never see a file that is still being written.
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "sluice/core/error_classes.h"
#include "sluice/core/file_system.h"

namespace sluice {
namespace {

constexpr std::string_view kStagingSuffix = ".sluice-tmp";

std::string_view ErrorClassOf(int error_number) {
  if (error_number == ENOENT) return errors::kFileNotFound;
  if (error_number == EEXIST) return errors::kFileAlreadyExists;
  return errors::kIoError;
}

Status OsError(std::string_view operation, const std::string& path, int error_number) {
  return Status::Error(ErrorClassOf(error_number),
                       std::string(operation) + " '" + path + "': " + std::strerror(error_number));
}

Status CheckAbsolute(const std::string& path) {
  if (path.empty() || path.front() != '/') {
    return Status::Error(errors::kInvalidArgument, "file paths must be absolute, got '" + path + "'");
  }
  return Status::OK();
}

std::string ParentOf(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == 0 || slash == std::string::npos) return "/";
  return path.substr(0, slash);
}

std::string BaseNameOf(const std::string& path) { return path.substr(path.find_last_of('/') + 1); }

bool IsStagingName(std::string_view name) {
  return name.size() > kStagingSuffix.size() && name.front() == '.' && name.ends_with(kStagingSuffix);
}

// Closes a descriptor on scope exit unless released.
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  ~FdCloser() {
    if (fd_ >= 0) ::close(fd_);
  }
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

Status WriteAll(int fd, std::string_view data, const std::string& path) {
  while (!data.empty()) {
    ssize_t written = ::write(fd, data.data(), data.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return OsError("write", path, errno);
    }
    data.remove_prefix(static_cast<size_t>(written));
  }
  return Status::OK();
}

Status SyncDirectory(const std::string& directory) {
  int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return OsError("open directory", directory, errno);
  FdCloser closer(fd);
  if (::fsync(fd) != 0) return OsError("fsync directory", directory, errno);
  return Status::OK();
}

Status MakeDirectories(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return Status::OK();
    return Status::Error(errors::kIoError, "create directory '" + path + "': a file is in the way");
  }
  if (errno != ENOENT) return OsError("stat", path, errno);
  if (path != "/") SLUICE_RETURN_IF_ERROR(MakeDirectories(ParentOf(path)));
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) return OsError("create directory", path, errno);
  // The new entry lives in the parent directory: sync it so the directory survives a crash.
  return SyncDirectory(ParentOf(path));
}

// A staging file beside `target`, created exclusively so that concurrent writers (threads or
// processes) never share one.
struct StagingFile {
  std::string path;
  int fd = -1;
};

Result<StagingFile> CreateStagingFile(const std::string& target) {
  static std::atomic<uint64_t> counter{0};
  std::string prefix = ParentOf(target);
  if (prefix != "/") prefix += '/';
  prefix += '.' + BaseNameOf(target) + '.' + std::to_string(::getpid()) + '.';
  // A forked child inherits the counter, so a name may already be taken: try the next ones, but
  // not forever (a name that always exists means something else is wrong).
  for (int attempt = 0;; ++attempt) {
    std::string path = prefix + std::to_string(counter.fetch_add(1)) + std::string(kStagingSuffix);
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) return StagingFile{std::move(path), fd};
    if (errno != EEXIST || attempt == 1000) return OsError("create", path, errno);
  }
}

// Writes `data` to a new fsync'ed and closed staging file beside `target`.
Result<std::string> WriteStagingFile(const std::string& target, std::string_view data) {
  SLUICE_ASSIGN_OR_RETURN(StagingFile staging, CreateStagingFile(target));
  FdCloser closer(staging.fd);
  Status status = WriteAll(staging.fd, data, staging.path);
  if (status.ok() && ::fsync(staging.fd) != 0) status = OsError("fsync", staging.path, errno);
  if (status.ok() && ::close(closer.release()) != 0) status = OsError("close", staging.path, errno);
  if (!status.ok()) {
    ::unlink(staging.path.c_str());
    return status;
  }
  return staging.path;
}

// Renames `from` to `to`, failing with EEXIST if `to` exists. renameat2 is atomic; file systems
// that lack RENAME_NOREPLACE get link + unlink, which is just as exclusive.
int RenameNoReplace(const std::string& from, const std::string& to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS) return -1;
  if (::link(from.c_str(), to.c_str()) != 0) return -1;
  ::unlink(from.c_str());
  return 0;
}

// Publishes the complete staging file at `target` unless something exists there (EEXIST). link()
// creates the name exclusively; file systems without hard links get RenameNoReplace instead.
int PublishExclusive(const std::string& staging, const std::string& target) {
  if (::link(staging.c_str(), target.c_str()) == 0) {
    ::unlink(staging.c_str());
    return 0;
  }
  if (errno != EPERM && errno != EOPNOTSUPP) return -1;
  return RenameNoReplace(staging, target);
}

FileInfo ToFileInfo(std::string path, const struct stat& st) {
  FileInfo info;
  info.path = std::move(path);
  info.is_directory = S_ISDIR(st.st_mode);
  info.size = info.is_directory ? 0 : static_cast<int64_t>(st.st_size);
  info.modification_time_ms = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1000000;
  return info;
}

class LocalRandomAccessFile final : public RandomAccessFile {
 public:
  LocalRandomAccessFile(std::string path, int fd, int64_t size) : path_(std::move(path)), fd_(fd), size_(size) {}
  ~LocalRandomAccessFile() override { ::close(fd_); }

  int64_t Size() const override { return size_; }

  Status ReadAt(int64_t offset, int64_t length, std::string* out) const override {
    if (offset < 0 || length < 0 || offset > size_ || length > size_ - offset) {
      return Status::Error(errors::kIoError, "read " + std::to_string(length) + " bytes at offset " +
                                                 std::to_string(offset) + " of '" + path_ + "': the file has " +
                                                 std::to_string(size_) + " bytes");
    }
    out->resize(static_cast<size_t>(length));
    int64_t done = 0;
    while (done < length) {
      ssize_t n = ::pread(fd_, out->data() + done, static_cast<size_t>(length - done), offset + done);
      if (n < 0) {
        if (errno == EINTR) continue;
        return OsError("read", path_, errno);
      }
      if (n == 0) return Status::Error(errors::kIoError, "read '" + path_ + "': the file shrank while being read");
      done += n;
    }
    return Status::OK();
  }

 private:
  std::string path_;
  int fd_;
  int64_t size_;
};

// Buffers appends and publishes the staging file on Close(). Destroying it without a successful
// Close() discards the staging file, so an abandoned write leaves nothing behind.
class LocalWritableFile final : public WritableFile {
 public:
  LocalWritableFile(std::string target, StagingFile staging)
      : target_(std::move(target)), staging_(std::move(staging)) {}

  ~LocalWritableFile() override {
    if (staging_.fd >= 0) {
      ::close(staging_.fd);
      ::unlink(staging_.path.c_str());
    }
  }

  Status Append(std::string_view data) override {
    if (staging_.fd < 0) return Closed();
    size_ += static_cast<int64_t>(data.size());
    if (buffer_.size() + data.size() < kBufferSize) {
      buffer_.append(data);
      return Status::OK();
    }
    SLUICE_RETURN_IF_ERROR(Flush());
    if (data.size() < kBufferSize) {
      buffer_.append(data);
      return Status::OK();
    }
    return WriteAll(staging_.fd, data, staging_.path);
  }

  int64_t Tell() const override { return size_; }

  Status Close() override {
    if (staging_.fd < 0) return Closed();
    SLUICE_RETURN_IF_ERROR(Flush());
    if (::fsync(staging_.fd) != 0) return OsError("fsync", staging_.path, errno);
    int fd = std::exchange(staging_.fd, -1);
    if (::close(fd) != 0) return Discard(OsError("close", staging_.path, errno));
    if (::rename(staging_.path.c_str(), target_.c_str()) != 0) return Discard(OsError("rename to", target_, errno));
    return SyncDirectory(ParentOf(target_));
  }

 private:
  static constexpr size_t kBufferSize = 1 << 16;

  Status Flush() {
    Status status = WriteAll(staging_.fd, buffer_, staging_.path);
    buffer_.clear();
    return status;
  }

  Status Discard(Status status) {
    ::unlink(staging_.path.c_str());
    return status;
  }

  Status Closed() const {
    return Status::Error(errors::kInternalError, "write to '" + target_ + "' after Close()");
  }

  std::string target_;
  StagingFile staging_;
  std::string buffer_;
  int64_t size_ = 0;
};

Status DeleteTree(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::OK();
    return OsError("stat", path, errno);
  }
  if (!S_ISDIR(st.st_mode)) {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) return OsError("delete", path, errno);
    return Status::OK();
  }
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) return OsError("open directory", path, errno);
  std::vector<std::string> children;
  while (struct dirent* entry = ::readdir(dir)) {
    std::string_view name = entry->d_name;
    if (name != "." && name != "..") children.emplace_back(path + "/" + std::string(name));
  }
  ::closedir(dir);
  for (const std::string& child : children) SLUICE_RETURN_IF_ERROR(DeleteTree(child));
  if (::rmdir(path.c_str()) != 0 && errno != ENOENT) return OsError("delete directory", path, errno);
  return Status::OK();
}

// flock() on an open descriptor: the kernel releases it when the descriptor closes, so a killed
// process never leaves a stale lock.
class LocalFileLock final : public FileLock {
 public:
  explicit LocalFileLock(int fd) : fd_(fd) {}
  ~LocalFileLock() override { ::close(fd_); }
  Status Check() const override { return Status::OK(); }

 private:
  const int fd_;
};

class LocalFileSystemImpl final : public FileSystem {
 public:
  Result<std::string> ReadFile(const std::string& path) override {
    SLUICE_RETURN_IF_ERROR(CheckAbsolute(path));
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return OsError("open", path, errno);
    FdCloser closer(fd);
    std::string content;
    struct stat st;
    if (::fstat(fd, &st) == 0 && st.st_size > 0) content.reserve(static_cast<size_t>(st.st_size));
    char chunk[1 << 16];
    for (;;) {
      ssize_t n = ::read(fd, chunk, sizeof(chunk));
      if (n < 0) {
        if (errno == EINTR) continue;
        return OsError("read", path, errno);
      }
      if (n == 0) break;
      content.append(chunk, static_cast<size_t>(n));
    }
    return content;
  }

  Result<std::unique_ptr<RandomAccessFile>> OpenForRead(const std::string& path) override {
    SLUICE_RETURN_IF_ERROR(CheckAbsolute(path));
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return OsError("open", path, errno);
    FdCloser closer(fd);
    struct stat st;
    if (::fstat(fd, &st) != 0) return OsError("stat", path, errno);
    if (S_ISDIR(st.st_mode)) return OsError("open", path, EISDIR);
    return std::unique_ptr<RandomAccessFile>(
        std::make_unique<LocalRandomAccessFile>(path, closer.release(), static_cast<int64_t>(st.st_size)));
  }

  Result<std::unique_ptr<WritableFile>> OpenForWrite(const std::string& path) override {
    SLUICE_RETURN_IF_ERROR(CheckAbsolute(path));
    SLUICE_RETURN_IF_ERROR(MakeDirectories(ParentOf(path)));
    SLUICE_ASSIGN_OR_RETURN(StagingFile staging, CreateStagingFile(path));
    return std::unique_ptr<WritableFile>(std::make_unique<LocalWritableFile>(path, std::move(staging)));
  }

  Status AtomicWrite(const std::string& path, std::string_view data) override {
    SLUICE_RETURN_IF_ERROR(CheckAbsolute(path));
    SLUICE_RETURN_IF_ERROR(MakeDirectories(ParentOf(path)));
    SLUICE_ASSIGN_OR_RETURN(std::string staging, WriteStagingFile(path, data));
    if (::rename(staging.c_str(), path.c_str()) != 0) {
      Status status = OsError("rename to", path, errno);
      ::unlink(staging.c_str());
      return status;
    }
    return SyncDirectory(ParentOf(path));
  }

  Status PutIfAbsent(const std::string& path, std::string_view data) override {
    SLUICE_RETURN_IF_ERROR(CheckAbsolute(path));
    SLUICE_RETURN_IF_ERROR(MakeDirectories(ParentOf(path)));
    // A target that already exists fails before the staging write and its fsync. This is only a
    // shortcut: the exclusive publish below is what decides a race.
    if (::access(path.c_str(), F_OK) == 0) return OsError("create", path, EEXIST);
    SLUICE_ASSIGN_OR_RETURN(std::string staging, WriteStagingFile(path, data));
    // The staging file is complete and durable before the target name appears, and the kernel
    // creates the name exclusively: of racing writers, exactly one wins.
    if (PublishExclusive(staging, path) != 0) {
      Status status = OsError("create", path, errno);
      ::unlink(staging.c_str());
      return status;
    }
    return SyncDirectory(ParentOf(path));
  }

  Result<FileInfo> Stat(const std::string& path) override {
    SLUICE_RETURN_IF_ERROR(CheckAbsolute(path));
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return OsError("stat", path, errno == ENOTDIR ? ENOENT : errno);
    return ToFileInfo(path, st);
  }

  Result<bool> Exists(const std::string& path) override {
    SLUICE_RETURN_IF_ERROR(CheckAbsolute(path));
    struct stat st;
    if (::stat(path.c_str(), &st) == 0) return true;
    if (errno == ENOENT || errno == ENOTDIR) return false;
    return OsError("stat", path, errno);
  }

  Result<std::vector<FileInfo>> List(const std::string& directory, std::string_view prefix,
                                     std::string_view start_after) override {
    SLUICE_RETURN_IF_ERROR(CheckAbsolute(directory));
    std::vector<FileInfo> entries;
    DIR* dir = ::opendir(directory.c_str());
    if (dir == nullptr) {
      if (errno == ENOENT) return entries;
      return OsError("list", directory, errno);
    }
    std::string base = directory.back() == '/' ? directory : directory + "/";
    int dir_fd = ::dirfd(dir);
    Status status;
    while (struct dirent* entry = ::readdir(dir)) {
      std::string_view name = entry->d_name;
      if (name == "." || name == ".." || !name.starts_with(prefix) || name <= start_after || IsStagingName(name)) {
        continue;
      }
      struct stat st;
      if (::fstatat(dir_fd, entry->d_name, &st, 0) != 0) {
        // An entry deleted between readdir and stat is simply no longer listed.
        if (errno == ENOENT) continue;
        status = OsError("stat", base + std::string(name), errno);
        break;
      }
      entries.push_back(ToFileInfo(base + std::string(name), st));
    }
    ::closedir(dir);
    SLUICE_RETURN_IF_ERROR(status);
    std::sort(entries.begin(), entries.end(),
              [](const FileInfo& a, const FileInfo& b) { return a.path < b.path; });
    return entries;
  }

  Status Delete(const std::string& path) override {
    SLUICE_RETURN_IF_ERROR(CheckAbsolute(path));
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) return OsError("delete", path, errno);
    return Status::OK();
  }

  Status DeleteRecursively(const std::string& path) override {
    SLUICE_RETURN_IF_ERROR(CheckAbsolute(path));
    if (path == "/") return Status::Error(errors::kInvalidArgument, "refusing to delete '/'");
    return DeleteTree(path);
  }

  Status CreateDirectories(const std::string& path) override {
    SLUICE_RETURN_IF_ERROR(CheckAbsolute(path));
    return MakeDirectories(path);
  }

  Status Rename(const std::string& from, const std::string& to, bool no_replace) override {
    SLUICE_RETURN_IF_ERROR(CheckAbsolute(from));
    SLUICE_RETURN_IF_ERROR(CheckAbsolute(to));
    int rc = no_replace ? RenameNoReplace(from, to) : ::rename(from.c_str(), to.c_str());
    if (rc != 0) {
      int error_number = errno;
      return Status::Error(ErrorClassOf(error_number),
                           "rename '" + from + "' to '" + to + "': " + std::strerror(error_number));
    }
    SLUICE_RETURN_IF_ERROR(SyncDirectory(ParentOf(to)));
    if (ParentOf(from) != ParentOf(to)) return SyncDirectory(ParentOf(from));
    return Status::OK();
  }

  Result<std::unique_ptr<FileLock>> Lock(const std::string& path) override {
    SLUICE_RETURN_IF_ERROR(CheckAbsolute(path));
    SLUICE_RETURN_IF_ERROR(MakeDirectories(ParentOf(path)));
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return OsError("open", path, errno);
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int error = errno;
      // The holder wrote who it is into the file when it took the lock.
      char holder[256];
      const ssize_t read = error == EWOULDBLOCK ? ::pread(fd, holder, sizeof holder, 0) : 0;
      ::close(fd);
      if (error == EWOULDBLOCK) {
        return Status::Error(errors::kStorageLeaseHeld,
                             path + " is locked by " +
                                 (read > 0 ? std::string(holder, static_cast<size_t>(read)) : "another process"));
      }
      return OsError("lock", path, error);
    }
    // Who holds it, for the message of the next process that finds it taken.
    char host[256] = {0};
    ::gethostname(host, sizeof host - 1);
    const std::string holder = std::string(host) + " pid " + std::to_string(::getpid()) + " since " +
                               fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::time(nullptr)));
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, holder.data(), holder.size(), 0) < 0) {
      const int error = errno;
      ::close(fd);
      return OsError("lock", path, error);
    }
    return std::unique_ptr<FileLock>(new LocalFileLock(fd));
  }
};

}  // namespace

std::shared_ptr<FileSystem> LocalFileSystem() {
  static const std::shared_ptr<FileSystem> instance = std::make_shared<LocalFileSystemImpl>();
  return instance;
}

}  // namespace sluice
