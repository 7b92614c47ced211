#include "sluice/storage/file_systems.h"

#include <filesystem>
#include <mutex>

#include <fmt/format.h>

#include "sluice/core/error_classes.h"
#include "sluice/storage/azure_file_system.h"
#include "sluice/storage/s3_file_system.h"

namespace sluice::storage {
namespace {

Status InvalidUri(std::string_view path, std::string_view why) {
  return Status::Error(errors::kInvalidStorageUri, fmt::format("`{}` {}; see docs/storage.md", path, why));
}

// S3's rules for bucket names: 3 to 63 lower-case letters, digits, `.` and `-`, starting and
// ending with a letter or digit.
bool ValidBucket(std::string_view bucket) {
  if (bucket.size() < 3 || bucket.size() > 63) return false;
  for (char c : bucket) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-')) return false;
  }
  auto alphanumeric = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  return alphanumeric(bucket.front()) && alphanumeric(bucket.back()) && bucket.find("..") == std::string_view::npos;
}

// Azure's rules for container names: 3 to 63 lower-case letters, digits and `-`, starting and
// ending with a letter or digit, no `--`.
bool ValidContainer(std::string_view container) {
  if (container.size() < 3 || container.size() > 63 || container.find("--") != std::string_view::npos) return false;
  for (char c : container) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return container.front() != '-' && container.back() != '-';
}

std::string_view BucketOf(std::string_view uri) {
  std::string_view rest = uri.substr(uri.find("://") + 3);
  return rest.substr(0, rest.find('/'));
}

bool IsAzureUri(std::string_view path) { return path.starts_with("az://") || path.starts_with("abfss://"); }

// Validates a store's options for the URI's scheme.
Status ValidateStoreOptions(std::string_view uri, const std::map<std::string, std::string>& options) {
  if (IsAzureUri(uri)) return AzureOptionsFrom(options).status();
  return S3OptionsFrom(options).status();
}

Result<std::shared_ptr<FileSystem>> NewStore(const std::string& root, const std::map<std::string, std::string>& options) {
  if (IsAzureUri(root)) {
    SLUICE_ASSIGN_OR_RETURN(AzureOptions azure, AzureOptionsFrom(options));
    SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<ObjectStoreFileSystem> store, NewAzureFileSystem(root, std::move(azure)));
    return std::shared_ptr<FileSystem>(std::move(store));
  }
  SLUICE_ASSIGN_OR_RETURN(S3Options s3, S3OptionsFrom(options));
  return std::shared_ptr<FileSystem>(NewS3FileSystem(std::string(BucketOf(root)), std::move(s3)));
}

class Stores {
 public:
  Status Configure(const std::string& prefix, const std::map<std::string, std::string>& options) {
    SLUICE_ASSIGN_OR_RETURN(std::string resolved, ResolvePath(prefix));
    if (!IsObjectStoreUri(resolved)) {
      return InvalidUri(prefix, "is not an object store's URI (s3://bucket[/prefix], az://container[/prefix], "
                                "abfss://container@account.dfs.core.windows.net[/prefix])");
    }
    SLUICE_RETURN_IF_ERROR(ValidateStoreOptions(resolved, options));
    std::lock_guard lock(mutex_);
    options_[resolved] = options;
    return Status::OK();
  }

  Result<std::shared_ptr<FileSystem>> For(const std::string& path) {
    if (!IsObjectStoreUri(path)) return LocalFileSystem();
    const std::string root = path.substr(0, path.find("://") + 3) + std::string(BucketOf(path));
    std::lock_guard lock(mutex_);
    // The longest configured prefix that contains the path picks the options (one file system per
    // bucket and prefix).
    std::string chosen;
    for (const auto& [prefix, options] : options_) {
      if ((path == prefix || path.starts_with(prefix + "/")) && prefix.size() > chosen.size()) chosen = prefix;
    }
    if (chosen.empty()) chosen = root;
    auto found = stores_.find(chosen);
    if (found != stores_.end()) return found->second;
    auto configured = options_.find(chosen);
    SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<FileSystem> store,
                            NewStore(root, configured == options_.end() ? std::map<std::string, std::string>()
                                                                        : configured->second));
    stores_[chosen] = store;
    return store;
  }

 private:
  std::mutex mutex_;
  std::map<std::string, std::map<std::string, std::string>> options_;
  std::map<std::string, std::shared_ptr<FileSystem>> stores_;
};

Stores& TheStores() {
  static Stores* stores = new Stores();
  return *stores;
}

// Sends each call to the file system of its path.
class RoutingFileSystem final : public FileSystem {
 public:
  Result<std::string> ReadFile(const std::string& path) override {
    SLUICE_ASSIGN_OR_RETURN(auto fs, Route(path));
    return fs->ReadFile(path);
  }
  Result<std::unique_ptr<RandomAccessFile>> OpenForRead(const std::string& path) override {
    SLUICE_ASSIGN_OR_RETURN(auto fs, Route(path));
    return fs->OpenForRead(path);
  }
  Result<std::unique_ptr<WritableFile>> OpenForWrite(const std::string& path) override {
    SLUICE_ASSIGN_OR_RETURN(auto fs, Route(path));
    return fs->OpenForWrite(path);
  }
  Status AtomicWrite(const std::string& path, std::string_view data) override {
    SLUICE_ASSIGN_OR_RETURN(auto fs, Route(path));
    return fs->AtomicWrite(path, data);
  }
  Status PutIfAbsent(const std::string& path, std::string_view data) override {
    SLUICE_ASSIGN_OR_RETURN(auto fs, Route(path));
    return fs->PutIfAbsent(path, data);
  }
  Result<FileInfo> Stat(const std::string& path) override {
    SLUICE_ASSIGN_OR_RETURN(auto fs, Route(path));
    return fs->Stat(path);
  }
  Result<bool> Exists(const std::string& path) override {
    SLUICE_ASSIGN_OR_RETURN(auto fs, Route(path));
    return fs->Exists(path);
  }
  Result<std::vector<FileInfo>> List(const std::string& directory, std::string_view prefix,
                                     std::string_view start_after) override {
    SLUICE_ASSIGN_OR_RETURN(auto fs, Route(directory));
    return fs->List(directory, prefix, start_after);
  }
  Status Delete(const std::string& path) override {
    SLUICE_ASSIGN_OR_RETURN(auto fs, Route(path));
    return fs->Delete(path);
  }
  Status DeleteRecursively(const std::string& path) override {
    SLUICE_ASSIGN_OR_RETURN(auto fs, Route(path));
    return fs->DeleteRecursively(path);
  }
  Status CreateDirectories(const std::string& path) override {
    SLUICE_ASSIGN_OR_RETURN(auto fs, Route(path));
    return fs->CreateDirectories(path);
  }
  Status Rename(const std::string& from, const std::string& to, bool no_replace) override {
    SLUICE_ASSIGN_OR_RETURN(auto source, Route(from));
    SLUICE_ASSIGN_OR_RETURN(auto target, Route(to));
    if (source != target) {
      return Status::Error(errors::kIoError, fmt::format("cannot rename {} to {}: they are on different stores", from, to));
    }
    return source->Rename(from, to, no_replace);
  }
  Result<std::unique_ptr<FileLock>> Lock(const std::string& path) override {
    SLUICE_ASSIGN_OR_RETURN(auto fs, Route(path));
    return fs->Lock(path);
  }

 private:
  static Result<std::shared_ptr<FileSystem>> Route(const std::string& path) {
    if (path.find("://") != std::string::npos) {
      SLUICE_RETURN_IF_ERROR(ResolvePath(path).status());  // unknown schemes, malformed URIs
      if (path.starts_with("file://")) {
        return InvalidUri(path, "reached a file system call unresolved (ResolvePath makes it a local path)");
      }
    }
    return TheStores().For(path);
  }
};

}  // namespace

std::shared_ptr<FileSystem> DefaultFileSystem() {
  static const std::shared_ptr<FileSystem> routing = std::make_shared<RoutingFileSystem>();
  return routing;
}

Status ConfigureObjectStore(const std::string& uri_prefix, const std::map<std::string, std::string>& options) {
  return TheStores().Configure(uri_prefix, options);
}

bool IsObjectStoreUri(std::string_view path) {
  return path.starts_with("s3://") || path.starts_with("az://") || path.starts_with("abfss://");
}

Result<std::string> ResolvePath(std::string_view path) {
  if (path.starts_with("file://")) {
    std::string_view local = path.substr(7);
    if (!local.starts_with('/')) return InvalidUri(path, "is not file:///absolute/path");
    return ResolvePath(local);
  }
  const size_t scheme = path.find("://");
  if (scheme == std::string_view::npos) {
    if (path.empty()) return InvalidUri(path, "is empty");
    std::string absolute = std::filesystem::absolute(std::filesystem::path(path)).lexically_normal().string();
    while (absolute.size() > 1 && absolute.back() == '/') absolute.pop_back();
    return absolute;
  }
  if (!IsObjectStoreUri(path)) {
    return InvalidUri(path, "has a scheme sluice does not know (s3://, az://, abfss://, file://)");
  }
  std::string uri(path);
  while (uri.ends_with('/') && uri.size() > scheme + 3) uri.pop_back();
  std::string_view bucket = BucketOf(uri);
  if (uri.starts_with("s3://") && !ValidBucket(bucket)) {
    return InvalidUri(path, "names no valid bucket (3 to 63 lower-case letters, digits, `.` and `-`)");
  }
  if (uri.starts_with("az://") && !ValidContainer(bucket)) {
    return InvalidUri(path, "names no valid container (3 to 63 lower-case letters, digits and single `-`)");
  }
  if (uri.starts_with("abfss://")) {
    const size_t at = bucket.find('@');
    if (at == std::string_view::npos || !ValidContainer(bucket.substr(0, at)) ||
        bucket.substr(at + 1).find('.') == std::string_view::npos || bucket.substr(at + 1).front() == '.') {
      return InvalidUri(path, "is not abfss://container@account.dfs.core.windows.net/path");
    }
  }
  if (bucket.empty()) return InvalidUri(path, "names no bucket or container");
  std::string_view key = std::string_view(uri).substr(scheme + 3 + bucket.size());
  size_t at = 0;
  while (at < key.size()) {
    const size_t next = key.find('/', at + 1);
    std::string_view segment = key.substr(at + 1, (next == std::string_view::npos ? key.size() : next) - at - 1);
    if (segment.empty() || segment == "." || segment == "..") {
      return InvalidUri(path, "has an empty, `.` or `..` segment");
    }
    if (next == std::string_view::npos) break;
    at = next;
  }
  return uri;
}

std::string AbsolutePath(std::string_view path) {
  Result<std::string> resolved = ResolvePath(path);
  return resolved.ok() ? *resolved : std::string(path);
}

}  // namespace sluice::storage
