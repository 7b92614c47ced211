#include "sluice/pipeline/event_log.h"

#include <fcntl.h>
#include <sys/file.h>
#include <simdjson.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "sluice/core/error_classes.h"
#include "sluice/core/json_text.h"
#include "sluice/core/sensitive_values.h"
#include "sluice/engine/checkpoint.h"
#include "sluice/storage/file_systems.h"

namespace sluice::pipeline {
namespace {

Status IoError(const std::string& what, const std::string& path, int error) {
  return Status::Error(errors::kIoError, what + " " + path + ": " + std::strerror(error));
}

// The sequence number of a complete event line, or -1.
int64_t SequenceOf(std::string_view line, simdjson::dom::parser& parser) {
  simdjson::dom::element doc;
  int64_t sequence = -1;
  if (parser.parse(line.data(), line.size()).get(doc) != simdjson::SUCCESS) return -1;
  if (doc["sequence"].get(sequence) != simdjson::SUCCESS) return -1;
  return sequence;
}

// The sequence of the last complete line of the file behind `fd`, or -1: read from its tail, so
// that appends from several processes number their events one after another.
int64_t LastSequence(int fd) {
  constexpr off_t kTail = 1 << 16;
  off_t size = ::lseek(fd, 0, SEEK_END);
  if (size <= 0) return -1;
  off_t from = std::max<off_t>(0, size - kTail);
  std::string tail(static_cast<size_t>(size - from), '\0');
  if (::pread(fd, tail.data(), tail.size(), from) != static_cast<ssize_t>(tail.size())) return -1;
  simdjson::dom::parser parser;
  size_t end = tail.rfind('\n');
  while (end != std::string::npos && end > 0) {
    size_t begin = tail.rfind('\n', end - 1);
    size_t start = begin == std::string::npos ? 0 : begin + 1;
    if (begin != std::string::npos || from == 0) {
      if (int64_t sequence = SequenceOf(std::string_view(tail).substr(start, end - start), parser); sequence >= 0) {
        return sequence;
      }
    }
    if (begin == std::string::npos) break;
    end = begin;
  }
  return -1;
}

}  // namespace

std::string EventLog::PathFor(const std::string& storage) { return storage + "/system/events.jsonl"; }

namespace {

constexpr size_t kSegmentBytes = 256 * 1024;

// One event as its log line (with the newline).
std::string EventLine(const Event& event, int64_t sequence, int64_t now_micros) {
  std::string line = "{\"id\":" + JsonString(engine::NewUuid()) + ",\"sequence\":" + std::to_string(sequence) +
                     ",\"timestamp\":" + JsonString(IsoTimestampMillis(now_micros)) +
                     ",\"level\":" + JsonString(event.level) + ",\"origin\":{\"pipeline\":" +
                     JsonString(event.origin.pipeline);
  if (!event.origin.flow.empty()) line += ",\"flow\":" + JsonString(event.origin.flow);
  if (!event.origin.dataset.empty()) line += ",\"dataset\":" + JsonString(event.origin.dataset);
  // Sensitive values are masked in the text, before it is quoted; details that masking would
  // leave unparsable (a value holding JSON punctuation) are left out whole.
  std::string details = ScrubSensitiveValues(event.details);
  if (details != event.details && !IsSingleLineJson(details)) details = "{\"redacted\":true}";
  line += "},\"event_type\":" + JsonString(event.event_type) + ",\"message\":" +
          JsonString(ScrubSensitiveValues(event.message)) +
          ",\"details\":" + details + "}\n";
  return line;
}


std::string SegmentsOf(const std::string& path) { return path.substr(0, path.rfind('/')) + "/events"; }

// Every complete line of the segments, ordered by sequence.
Result<std::vector<std::string>> ReadSegments(const std::string& folder) {
  auto fs = storage::DefaultFileSystem();
  SLUICE_ASSIGN_OR_RETURN(std::vector<FileInfo> segments, fs->List(folder));
  std::vector<std::pair<int64_t, std::string>> numbered;
  simdjson::dom::parser parser;
  for (const FileInfo& segment : segments) {
    if (segment.is_directory || !segment.path.ends_with(".jsonl")) continue;
    Result<std::string> text = fs->ReadFile(segment.path);
    if (!text.ok() && text.status().error_class() == errors::kFileNotFound) continue;
    SLUICE_RETURN_IF_ERROR(text.status());
    size_t begin = 0;
    while (begin < text->size()) {
      size_t end = text->find('\n', begin);
      if (end == std::string::npos) break;
      std::string_view line(text->data() + begin, end - begin);
      if (int64_t sequence = SequenceOf(line, parser); sequence >= 0) numbered.emplace_back(sequence, line);
      begin = end + 1;
    }
  }
  std::stable_sort(numbered.begin(), numbered.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> lines;
  for (auto& [sequence, line] : numbered) lines.push_back(std::move(line));
  return lines;
}

}  // namespace

Result<std::vector<std::string>> EventLog::ReadLines(const std::string& path) {
  if (storage::IsObjectStoreUri(path)) return ReadSegments(SegmentsOf(path));
  std::vector<std::string> lines;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (!std::filesystem::exists(path)) return lines;
    return IoError("cannot read the event log", path, errno);
  }
  std::stringstream content;
  content << in.rdbuf();
  const std::string text = content.str();
  simdjson::dom::parser parser;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) break;  // a torn last line
    std::string_view line(text.data() + begin, end - begin);
    if (SequenceOf(line, parser) >= 0) lines.emplace_back(line);
    begin = end + 1;
  }
  return lines;
}

Result<std::unique_ptr<EventLog>> EventLog::Open(const std::string& path, std::shared_ptr<Clock> clock) {
  if (storage::IsObjectStoreUri(path)) {
    SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> lines, ReadSegments(SegmentsOf(path)));
    simdjson::dom::parser parser;
    const int64_t next = lines.empty() ? 0 : SequenceOf(lines.back(), parser) + 1;
    std::unique_ptr<EventLog> log(new EventLog(-1, next, std::move(clock)));
    log->segments_ = SegmentsOf(path);
    return log;
  }
  std::error_code error;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), error);
  if (error) return IoError("cannot create the directory of", path, error.value());
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> lines, ReadLines(path));
  int64_t next_sequence = 0;
  simdjson::dom::parser parser;
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    if (int64_t sequence = SequenceOf(*it, parser); sequence >= 0) {
      next_sequence = sequence + 1;
      break;
    }
  }
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return IoError("cannot open the event log", path, errno);
  // After a crash the file may end inside a line; begin on a fresh one.
  off_t size = ::lseek(fd, 0, SEEK_END);
  if (size > 0) {
    char last = '\n';
    int reader = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (reader >= 0) {
      if (::pread(reader, &last, 1, size - 1) != 1) last = '\n';
      ::close(reader);
    }
    if (last != '\n' && ::write(fd, "\n", 1) != 1) {
      int saved = errno;
      ::close(fd);
      return IoError("cannot write the event log", path, saved);
    }
  }
  return std::unique_ptr<EventLog>(new EventLog(fd, next_sequence, std::move(clock)));
}

EventLog::~EventLog() {
  if (fd_ >= 0) ::close(fd_);
}

Status EventLog::AppendToSegment(const std::string& line) {
  if (segment_path_.empty() || segment_text_.size() > kSegmentBytes) {
    segment_path_ = fmt::format("{}/{:020d}-{}.jsonl", segments_, next_sequence_, engine::NewUuid());
    segment_text_.clear();
  }
  segment_text_ += line;
  Status written = storage::DefaultFileSystem()->AtomicWrite(segment_path_, segment_text_);
  if (!written.ok()) {
    segment_text_.resize(segment_text_.size() - line.size());
    return written.WithContext("cannot append to the event log");
  }
  ++next_sequence_;
  return Status::OK();
}

Status EventLog::Append(const Event& event) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (fd_ < 0) return AppendToSegment(EventLine(event, next_sequence_, clock_->NowMicros()));
  // Another process may append to the same log (a second `sluice run` refused with
  // CONCURRENT_QUERY still logs why): the file lock orders the appends, and each event takes the
  // number after the last one in the file.
  while (::flock(fd_, LOCK_EX) != 0) {
    if (errno != EINTR) return IoError("cannot lock the event log", "", errno);
  }
  struct Unlock {
    int fd;
    ~Unlock() { ::flock(fd, LOCK_UN); }
  } unlock{fd_};
  next_sequence_ = std::max(next_sequence_, LastSequence(fd_) + 1);
  const std::string line = EventLine(event, next_sequence_, clock_->NowMicros());
  size_t written = 0;
  while (written < line.size()) {
    ssize_t n = ::write(fd_, line.data() + written, line.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::Error(errors::kIoError, std::string("cannot append to the event log: ") + std::strerror(errno));
    written += static_cast<size_t>(n);
  }
  ++next_sequence_;
  return Status::OK();
}

}  // namespace sluice::pipeline
