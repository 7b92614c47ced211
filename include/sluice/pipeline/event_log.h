// The event log of a pipeline: one JSON object per line in <storage>/system/events.jsonl, in the
// shape of Spark Declarative Pipelines' event log, so that what people query there reads the same:
//
//   {"id":"<uuid>","sequence":42,"timestamp":"2026-01-31T10:00:00.000Z","level":"INFO",
//    "origin":{"pipeline":"orders","flow":"generate","dataset":"lake"},
//    "event_type":"flow_progress","message":"...","details":{"flow_progress":{...}}}
//
// event_type is one of flow_definition, sink_definition, flow_progress, data_quality, warning,
// error; level one of INFO, WARN, ERROR, METRICS. Sequence numbers grow by one per event across
// runs. Lines are appended whole with O_APPEND and flushed to the OS per event; after a crash the
// last line may be torn, in which case the next run starts a new line and readers skip the torn
// one. The log is for people and monitoring; exactly-once state lives in checkpoints, not here.
//
// On an object store (a `storage` that is an s3:// URI), where nothing can be appended to, the log
// is a folder of segments, <storage>/system/events/<first sequence>-<writer id>.jsonl: each
// process rewrites its current segment whole after every event (one PUT per event) and starts a
// new one past 256 KiB. Readers list the segments and order the lines by sequence.
//
// Thread-safe: flows append from their own threads.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/clock.h"
#include "sluice/core/status.h"

namespace sluice::pipeline {

struct EventOrigin {
  std::string pipeline;
  std::string flow;     // empty when the event is about the whole pipeline
  std::string dataset;  // the sink the flow writes, when there is one
};

struct Event {
  std::string level = "INFO";
  EventOrigin origin;
  std::string event_type;
  std::string message;
  std::string details = "{}";  // a JSON object
};

class EventLog {
 public:
  // The log file of a pipeline whose storage root is `storage`.
  static std::string PathFor(const std::string& storage);
  // Opens (creating directories and the file as needed) the log at `path`; sequence numbers
  // continue after the last readable line. IO_ERROR when the file cannot be opened.
  static Result<std::unique_ptr<EventLog>> Open(const std::string& path, std::shared_ptr<Clock> clock = SystemClock());
  ~EventLog();
  EventLog(const EventLog&) = delete;
  EventLog& operator=(const EventLog&) = delete;

  // Appends one event, assigning its id, sequence and timestamp. IO_ERROR if the write fails.
  Status Append(const Event& event);

  // Every complete event line of the log at `path`, oldest first (torn or unparsable lines are
  // skipped). An absent file has no events.
  static Result<std::vector<std::string>> ReadLines(const std::string& path);

 private:
  EventLog(int fd, int64_t next_sequence, std::shared_ptr<Clock> clock)
      : fd_(fd), next_sequence_(next_sequence), clock_(std::move(clock)) {}
  Status AppendToSegment(const std::string& line);

  std::mutex mutex_;
  int fd_;  // -1 on an object store
  std::string segments_;  // the segments' folder on an object store
  std::string segment_path_;
  std::string segment_text_;
  int64_t next_sequence_;
  std::shared_ptr<Clock> clock_;
};

}  // namespace sluice::pipeline
