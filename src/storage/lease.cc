#include "sluice/storage/lease.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <ctime>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <simdjson.h>

#include "sluice/core/clock.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/json_text.h"

namespace sluice::storage {
namespace {

int64_t NowMs() { return SystemClock()->NowMicros() / 1000; }

std::string GenerationName(int64_t generation) { return fmt::format("{:020d}", generation); }

std::string Holder() {
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  return fmt::format("{} pid {}", host, getpid());
}

std::string LeaseJson(const std::string& holder, int64_t expires_ms) {
  return fmt::format("{{\"holder\":{},\"expires_ms\":{}}}", JsonString(holder), expires_ms);
}

// Whether the holder ran on this host as a process that no longer exists: its lease is stale at
// once (a query restarted after a kill -9 need not wait for the expiry).
bool DeadHereAndNow(const std::string& holder) {
  const std::string own = Holder();
  const std::string prefix = own.substr(0, own.rfind(" pid ") + 5);
  if (!holder.starts_with(prefix)) return false;
  const long pid = std::strtol(holder.c_str() + prefix.size(), nullptr, 10);
  return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

struct LeaseState {
  std::string holder;
  int64_t expires_ms = 0;
};

Result<LeaseState> ParseLease(const std::string& text, const std::string& path) {
  simdjson::dom::parser parser;
  simdjson::dom::element document;
  std::string_view holder;
  int64_t expires = 0;
  if (parser.parse(text).get(document) != simdjson::SUCCESS || document["holder"].get(holder) != simdjson::SUCCESS ||
      document["expires_ms"].get(expires) != simdjson::SUCCESS) {
    return Status::Error(errors::kIoError, fmt::format("the lease {} is not a lease sluice wrote", path));
  }
  return LeaseState{std::string(holder), expires};
}

// The generations present, ascending.
Result<std::vector<int64_t>> Generations(FileSystem& fs, const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<FileInfo> entries, fs.List(path));
  std::vector<int64_t> generations;
  for (const FileInfo& entry : entries) {
    std::string_view name = std::string_view(entry.path).substr(entry.path.rfind('/') + 1);
    if (name.size() == 20 && name.find_first_not_of("0123456789") == std::string_view::npos) {
      generations.push_back(std::stoll(std::string(name)));
    }
  }
  return generations;
}

class Lease final : public FileLock {
 public:
  Lease(std::shared_ptr<FileSystem> fs, std::string path, int64_t generation, std::string holder,
        std::chrono::milliseconds duration, int64_t expires_ms)
      : fs_(std::move(fs)),
        path_(std::move(path)),
        generation_(generation),
        holder_(std::move(holder)),
        duration_(duration),
        expires_ms_(expires_ms) {
    heartbeat_ = std::thread([this] { Heartbeat(); });
  }

  ~Lease() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    heartbeat_.join();
    if (!lost_.load()) (void)fs_->AtomicWrite(Own(), LeaseJson(holder_, 0));
  }

  Status Check() const override {
    if (lost_.load() || NowMs() >= expires_ms_.load()) {
      return Status::Error(errors::kStorageLeaseHeld,
                           fmt::format("the lease {} was lost (not renewed in time, or taken over by another "
                                       "process); this process stops writing under it",
                                       path_));
    }
    return Status::OK();
  }

 private:
  std::string Own() const { return path_ + "/" + GenerationName(generation_); }

  void Heartbeat() {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      wake_.wait_for(lock, duration_ / 3, [this] { return stopping_; });
      if (stopping_) break;
      lock.unlock();
      Renew();
      lock.lock();
    }
  }

  void Renew() {
    Result<std::vector<int64_t>> generations = Generations(*fs_, path_);
    if (generations.ok() && !generations->empty() && generations->back() > generation_) {
      lost_ = true;
      return;
    }
    const int64_t expires = NowMs() + duration_.count();
    if (generations.ok() && fs_->AtomicWrite(Own(), LeaseJson(holder_, expires)).ok()) expires_ms_ = expires;
  }

  const std::shared_ptr<FileSystem> fs_;
  const std::string path_;
  const int64_t generation_;
  const std::string holder_;
  const std::chrono::milliseconds duration_;
  std::atomic<int64_t> expires_ms_;
  std::atomic<bool> lost_{false};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread heartbeat_;
};

}  // namespace

Result<std::unique_ptr<FileLock>> TakeLease(std::shared_ptr<FileSystem> file_system, const std::string& path,
                                            std::chrono::milliseconds duration) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> generations, Generations(*file_system, path));
  int64_t next = 0;
  if (!generations.empty()) {
    const std::string latest = path + "/" + GenerationName(generations.back());
    SLUICE_ASSIGN_OR_RETURN(std::string text, file_system->ReadFile(latest));
    SLUICE_ASSIGN_OR_RETURN(LeaseState state, ParseLease(text, latest));
    if (state.expires_ms > NowMs() && !DeadHereAndNow(state.holder)) {
      return Status::Error(errors::kStorageLeaseHeld,
                           fmt::format("{} is held by {} for {} ms more (renewed while it runs)", path, state.holder,
                                       state.expires_ms - NowMs()));
    }
    next = generations.back() + 1;
  }
  const std::string holder =
      Holder() + " since " + fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::time(nullptr)));
  const int64_t expires = NowMs() + duration.count();
  Status taken = file_system->PutIfAbsent(path + "/" + GenerationName(next), LeaseJson(holder, expires));
  if (taken.error_class() == errors::kFileAlreadyExists) {
    return Status::Error(errors::kStorageLeaseHeld, fmt::format("{} was just taken by another process", path));
  }
  SLUICE_RETURN_IF_ERROR(taken);
  // Generations before the one just replaced are history nobody reads.
  for (size_t i = 0; i + 1 < generations.size(); ++i) {
    (void)file_system->Delete(path + "/" + GenerationName(generations[i]));
  }
  return std::unique_ptr<FileLock>(new Lease(std::move(file_system), path, next, holder, duration, expires));
}

}  // namespace sluice::storage
