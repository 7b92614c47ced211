// A small HTTP endpoint for monitoring a running pipeline: `GET /metrics` answers the metrics in
// Prometheus' text format, `GET /ready` answers 200 when the pipeline is ready and 503 when not
// (for orchestrators' readiness probes); anything else is 404, methods other than GET 405.
//
// One request at a time on one thread; a request must arrive within two seconds and fit in 8 KiB.
// The callbacks are called on the server's thread and must be thread-safe.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "sluice/core/status.h"

namespace sluice::pipeline {

class MetricsServer {
 public:
  // Listens on `address` (an IPv4 address; "127.0.0.1" keeps it on the machine, "0.0.0.0" opens
  // it to the network) and `port` (0: any free port, see port()). IO_ERROR when it cannot listen.
  static Result<std::unique_ptr<MetricsServer>> Start(const std::string& address, int port,
                                                      std::function<std::string()> metrics,
                                                      std::function<bool()> ready);
  // Stops listening and joins the server's thread.
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  int port() const { return port_; }

 private:
  MetricsServer(int listener, int wake_read, int wake_write, int port, std::function<std::string()> metrics,
                std::function<bool()> ready);
  void Serve();
  void Answer(int client);

  int listener_;
  int wake_read_;   // a pipe whose write end the destructor writes to, so poll() returns at once
  int wake_write_;
  int port_;
  std::function<std::string()> metrics_;
  std::function<bool()> ready_;
  std::thread thread_;
};

}  // namespace sluice::pipeline
