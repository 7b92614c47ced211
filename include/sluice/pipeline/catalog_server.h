// `sluice serve`: runs every stream and change feed of a warehouse's catalog (stream_catalog.h,
// feed_catalog.h) and follows the catalog. One created is started within a poll interval, one
// updated restarts with its new definition, one deleted stops; a run that fails is started again
// after a back-off that doubles from `first_backoff` to `max_backoff` (an `error` event from the
// run, then a `flow_progress` event with status RESTARTING in its event log). The state of every stream is written to
// <warehouse>/_sluice/serve/status.json at each poll (`sluice status --warehouse` prints it).
//
// Thread safety: Start/Stop/Wait from one thread; StatusJson, PrometheusText and ready from any.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "sluice/pipeline/feed_catalog.h"
#include "sluice/pipeline/pipeline_runner.h"
#include "sluice/pipeline/stream_catalog.h"

namespace sluice::pipeline {

struct CatalogServerOptions {
  std::chrono::milliseconds poll_interval{1000};
  std::chrono::milliseconds first_backoff{1000};
  std::chrono::milliseconds max_backoff{60000};
  const engine::Registry* registry = &connectors::AllFormatsRegistry();
};

class CatalogServer {
 public:
  // `warehouse` is an absolute path. Starts polling at once.
  static Result<std::unique_ptr<CatalogServer>> Start(std::string warehouse, CatalogServerOptions options);
  ~CatalogServer();

  // Stops every stream after its batch in progress and waits for them; the status file says
  // STOPPED for each.
  void Stop();

  // {"served":[{"kind":"stream|change_feed","name":…,"state":"STARTING|RUNNING|RESTARTING|ENDED|
  //   STOPPED","restarts":N,"last_error":…|null}]}, change feeds first, each kind by name.
  std::string StatusJson() const;
  // Every running stream's figures in Prometheus' text format (each family described once).
  std::string PrometheusText() const;
  // Everything served is RUNNING (or ENDED: its trigger is done).
  bool ready() const;

  static std::string StatusPath(const std::string& warehouse);

 private:
  struct Supervised;
  // What the catalog holds now: by "kind:name".
  struct Entry {
    std::string kind, name, definition;
  };
  CatalogServer(std::string warehouse, CatalogServerOptions options);
  Result<std::map<std::string, Entry>> ListEntries() const;
  // The entry's definition and the pipeline that runs it, as the catalog holds them now.
  Result<std::pair<std::string, PipelineSpec>> Current(const Supervised& entry) const;
  void Poll();
  void Supervise(Supervised* stream);
  void WriteStatus() const;

  const std::string warehouse_;
  const CatalogServerOptions options_;
  StreamCatalog catalog_;
  FeedCatalog feeds_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  bool stopping_ = false;
  std::map<std::string, std::unique_ptr<Supervised>> streams_;
  std::thread poller_;
};

}  // namespace sluice::pipeline
