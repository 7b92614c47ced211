// `sluice serve`: every stream of a warehouse's catalog, run and followed until SIGINT/SIGTERM.
#include <cstdio>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/termination_signals.h"
#include "cli/warehouse.h"
#include "sluice/pipeline/catalog_server.h"
#include "sluice/pipeline/metrics_server.h"

namespace sluice::cli {
namespace {

struct ServeArguments {
  std::string warehouse;
  int metrics_port = -1;
  std::string metrics_address = "127.0.0.1";
};

void Serve(const ServeArguments& arguments) {
  BlockTerminationSignals();
  const std::string warehouse = AbsolutePath(arguments.warehouse);
  pipeline::CatalogServerOptions options;
  options.registry = &CommandRegistry();
  Result<std::unique_ptr<pipeline::CatalogServer>> server = pipeline::CatalogServer::Start(warehouse, options);
  if (!server.ok()) {
    std::fprintf(stderr, "%s\n", server.status().ToString().c_str());
    throw CLI::RuntimeError(1);
  }
  pipeline::CatalogServer& serving = **server;
  std::unique_ptr<pipeline::MetricsServer> metrics;
  if (arguments.metrics_port >= 0) {
    auto started = pipeline::MetricsServer::Start(
        arguments.metrics_address, arguments.metrics_port, [&serving] { return serving.PrometheusText(); },
        [&serving] { return serving.ready(); });
    if (!started.ok()) {
      serving.Stop();
      std::fprintf(stderr, "%s\n", started.status().ToString().c_str());
      throw CLI::RuntimeError(1);
    }
    metrics = std::move(started).value();
    std::printf("metrics on http://%s:%d/metrics, readiness on /ready\n", arguments.metrics_address.c_str(),
                metrics->port());
  }
  std::printf("serving the streams of %s; their states in %s\n", warehouse.c_str(),
              pipeline::CatalogServer::StatusPath(warehouse).c_str());
  std::fflush(stdout);
  WaitForTerminationSignal();
  std::printf("stopping after the batches in progress...\n");
  std::fflush(stdout);
  metrics.reset();
  serving.Stop();
  std::printf("stopped\n");
}

}  // namespace

void RegisterServeCommand(CLI::App& app) {
  auto arguments = std::make_shared<ServeArguments>();
  CLI::App* serve = app.add_subcommand(
      "serve", "Run every stream of the warehouse's catalog, following creations, updates and deletions, until "
               "SIGINT/SIGTERM; a failed stream restarts with back-off");
  AddWarehouseOption(serve, &arguments->warehouse);
  serve->add_option("--metrics-port", arguments->metrics_port, "Serve Prometheus metrics and /ready at this port")
      ->check(CLI::Range(0, 65535));
  serve->add_option("--metrics-address", arguments->metrics_address, "Address the metrics endpoint listens on");
  serve->callback([arguments] { Serve(*arguments); });
}

}  // namespace sluice::cli
