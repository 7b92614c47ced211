// What the PostgreSQL benches share: stopping on an error, a private server in a fresh
// directory, and percentiles of measured latencies.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "sluice/connectors/embedded_postgres.h"
#include "sluice/core/status.h"

namespace sluice::bench {

// Prints `what: <error>` and exits 1 unless `status` is OK.
inline void Die(const Status& status, const char* what) {
  if (status.ok()) return;
  std::fprintf(stderr, "%s: %s\n", what, status.ToString().c_str());
  std::exit(1);
}

// A fresh directory /tmp/<prefix>-XXXXXX.
inline std::string FreshDirectory(const std::string& prefix) {
  std::string pattern = "/tmp/" + prefix + "-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) Die(Status::Error("BENCH", "mkdtemp " + pattern), "directory");
  return pattern;
}

// A private PostgreSQL 15 with its data in `dir`/pg, started.
inline std::unique_ptr<connectors::EmbeddedPostgres> StartPostgres(const std::string& dir) {
  connectors::EmbeddedPostgresOptions options;
  options.data_dir = dir + "/pg";
  options.relocate_if_unreachable = true;
  auto server = std::make_unique<connectors::EmbeddedPostgres>(options);
  Die(server->Start(), "server");
  return server;
}

// The value at fraction `p` (0.5, 0.99) of `sorted` (ascending, not empty).
template <typename T>
T Percentile(const std::vector<T>& sorted, double p) {
  return sorted[std::min(sorted.size() - 1, static_cast<size_t>(p * static_cast<double>(sorted.size())))];
}

}  // namespace sluice::bench
