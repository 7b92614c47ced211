#include "sluice/pipeline/catalog_server.h"

#include <algorithm>
#include <limits>
#include <set>
#include <sstream>

#include "sluice/core/error_classes.h"
#include "sluice/core/json_text.h"
#include "sluice/pipeline/event_log.h"
#include "sluice/storage/file_systems.h"

namespace sluice::pipeline {

struct CatalogServer::Supervised {
  std::string kind;  // "stream" or "change_feed"
  std::string name;
  std::string definition;  // the one running
  std::unique_ptr<PipelineRun> run;
  std::string state = "STARTING";
  int restarts = 0;
  std::string last_error;
  bool stop = false;         // deleted, or the server stops
  bool restart_now = false;  // updated
  std::thread thread;
};

std::string CatalogServer::StatusPath(const std::string& warehouse) {
  return warehouse + "/_sluice/serve/status.json";
}

CatalogServer::CatalogServer(std::string warehouse, CatalogServerOptions options)
    : warehouse_(std::move(warehouse)),
      options_(options),
      catalog_(storage::DefaultFileSystem(), warehouse_, options_.registry),
      feeds_(storage::DefaultFileSystem(), warehouse_, options_.registry) {}

Result<std::unique_ptr<CatalogServer>> CatalogServer::Start(std::string warehouse, CatalogServerOptions options) {
  if (warehouse.empty() || warehouse[0] != '/') {
    return Status::Error(errors::kInvalidArgument, "the warehouse must be an absolute path");
  }
  SLUICE_RETURN_IF_ERROR(storage::DefaultFileSystem()->CreateDirectories(warehouse + "/_sluice/serve"));
  std::unique_ptr<CatalogServer> server(new CatalogServer(std::move(warehouse), options));
  CatalogServer* raw = server.get();
  server->poller_ = std::thread([raw] { raw->Poll(); });
  return server;
}

CatalogServer::~CatalogServer() { Stop(); }

void CatalogServer::Stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ && !poller_.joinable()) return;
    stopping_ = true;
    changed_.notify_all();
  }
  if (poller_.joinable()) poller_.join();
  std::vector<Supervised*> all;
  {
    std::lock_guard lock(mutex_);
    for (auto& [name, stream] : streams_) {
      stream->stop = true;
      if (stream->run) stream->run->Stop();
      all.push_back(stream.get());
    }
    changed_.notify_all();
  }
  for (Supervised* stream : all) {
    if (stream->thread.joinable()) stream->thread.join();
  }
  WriteStatus();
}

Result<std::map<std::string, CatalogServer::Entry>> CatalogServer::ListEntries() const {
  std::map<std::string, Entry> entries;
  SLUICE_ASSIGN_OR_RETURN(std::vector<StoredStream> streams, catalog_.List(std::numeric_limits<size_t>::max()));
  for (StoredStream& stored : streams) {
    entries["stream:" + stored.spec.name] = {"stream", stored.spec.name, std::move(stored.definition)};
  }
  SLUICE_ASSIGN_OR_RETURN(std::vector<StoredChangeFeed> feeds, feeds_.List());
  for (StoredChangeFeed& stored : feeds) {
    entries["change_feed:" + stored.spec.name] = {"change_feed", stored.spec.name, std::move(stored.definition)};
  }
  return entries;
}

Result<std::pair<std::string, PipelineSpec>> CatalogServer::Current(const Supervised& entry) const {
  if (entry.kind == "stream") {
    SLUICE_ASSIGN_OR_RETURN(StoredStream stored, catalog_.Get(entry.name));
    return std::make_pair(std::move(stored.definition), catalog_.PipelineOf(stored.spec));
  }
  SLUICE_ASSIGN_OR_RETURN(StoredChangeFeed stored, feeds_.Get(entry.name));
  return std::make_pair(std::move(stored.definition), feeds_.PipelineOf(stored.spec));
}

void CatalogServer::Poll() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    Result<std::map<std::string, Entry>> listed = ListEntries();
    lock.lock();
    if (listed.ok()) {
      for (const auto& [key, entry] : *listed) {
        auto found = streams_.find(key);
        if (found == streams_.end()) {
          auto stream = std::make_unique<Supervised>();
          stream->kind = entry.kind;
          stream->name = entry.name;
          Supervised* raw = stream.get();
          streams_.emplace(key, std::move(stream));
          raw->thread = std::thread([this, raw] { Supervise(raw); });
        } else if (found->second->definition != entry.definition && !found->second->definition.empty()) {
          found->second->restart_now = true;
          if (found->second->run) found->second->run->Stop();
          changed_.notify_all();
        }
      }
      for (auto it = streams_.begin(); it != streams_.end();) {
        if (listed->count(it->first)) {
          ++it;
          continue;
        }
        Supervised* gone = it->second.get();
        gone->stop = true;
        if (gone->run) gone->run->Stop();
        changed_.notify_all();
        lock.unlock();
        if (gone->thread.joinable()) gone->thread.join();
        lock.lock();
        it = streams_.erase(it);
      }
    }
    lock.unlock();
    WriteStatus();
    lock.lock();
    changed_.wait_for(lock, options_.poll_interval, [this] { return stopping_; });
  }
}

void CatalogServer::Supervise(Supervised* stream) {
  std::chrono::milliseconds backoff = options_.first_backoff;
  std::unique_lock lock(mutex_);
  while (!stream->stop) {
    // An update from here on stops the run about to start, which then starts again.
    stream->restart_now = false;
    lock.unlock();
    Result<std::pair<std::string, PipelineSpec>> current = Current(*stream);
    Result<std::unique_ptr<PipelineRun>> run = current.status();
    PipelineSpec pipeline;
    if (current.ok()) {
      pipeline = current->second;
      RunOptions run_options;
      run_options.registry = options_.registry;
      run = PipelineRun::Start(pipeline, run_options);
    }
    lock.lock();
    if (current.ok()) stream->definition = current->first;
    Status ended;
    if (run.ok()) {
      stream->run = std::move(run).value();
      stream->state = "RUNNING";
      if (stream->stop || stream->restart_now) stream->run->Stop();
      lock.unlock();
      ended = stream->run->Wait();
      lock.lock();
      stream->run.reset();
    } else {
      ended = run.status();
    }
    if (stream->stop) break;
    if (stream->restart_now) {
      backoff = options_.first_backoff;
      stream->state = "STARTING";
      continue;
    }
    if (ended.ok()) {
      // Its trigger is done: it waits for an update or the end.
      stream->state = "ENDED";
      changed_.wait(lock, [&] { return stream->stop || stream->restart_now; });
      continue;
    }
    stream->last_error = ended.ToString();
    ++stream->restarts;
    stream->state = "RESTARTING";
    if (current.ok()) {
      Result<std::unique_ptr<EventLog>> log = EventLog::Open(EventLog::PathFor(pipeline.storage));
      if (log.ok()) {
        Event event;
        event.level = "WARN";
        event.origin = {pipeline.name, stream->name, ""};
        event.event_type = "flow_progress";
        event.message = stream->kind + " '" + stream->name + "' is RESTARTING in " + std::to_string(backoff.count()) +
                        " ms";
        event.details = "{\"flow_progress\":{\"status\":\"RESTARTING\",\"restarts\":" +
                        std::to_string(stream->restarts) + ",\"backoff_ms\":" + std::to_string(backoff.count()) + "}}";
        (void)(*log)->Append(event);
      }
    }
    changed_.wait_for(lock, backoff, [&] { return stream->stop || stream->restart_now; });
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
  stream->state = "STOPPED";
}

std::string CatalogServer::StatusJson() const {
  std::lock_guard lock(mutex_);
  std::string out = "{\"served\":[";
  bool first = true;
  for (const auto& [name, stream] : streams_) {
    if (!first) out += ",";
    first = false;
    out += "{\"kind\":" + JsonString(stream->kind) + ",\"name\":" + JsonString(stream->name) +
           ",\"state\":" + JsonString(stream->state) +
           ",\"restarts\":" + std::to_string(stream->restarts) + ",\"last_error\":" +
           (stream->last_error.empty() ? "null" : JsonString(stream->last_error)) + "}";
  }
  return out + "]}";
}

std::string CatalogServer::PrometheusText() const {
  std::lock_guard lock(mutex_);
  std::set<std::string> described;
  std::string out;
  for (const auto& [name, stream] : streams_) {
    if (!stream->run) continue;
    std::istringstream lines(stream->run->PrometheusText());
    for (std::string line; std::getline(lines, line);) {
      if (line.starts_with("#") && !described.insert(line).second) continue;
      out += line + "\n";
    }
  }
  return out;
}

bool CatalogServer::ready() const {
  std::lock_guard lock(mutex_);
  return std::all_of(streams_.begin(), streams_.end(), [](const auto& entry) {
    return entry.second->state == "RUNNING" || entry.second->state == "ENDED";
  });
}

void CatalogServer::WriteStatus() const {
  (void)storage::DefaultFileSystem()->AtomicWrite(StatusPath(warehouse_), StatusJson());
}

}  // namespace sluice::pipeline
