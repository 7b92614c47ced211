// `sluice postgres-embedded`: a private PostgreSQL server in the foreground, for trying sluice or
// inspecting what a demo wrote.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/termination_signals.h"
#include "sluice/connectors/embedded_postgres.h"

namespace sluice::cli {
namespace {

struct PostgresEmbeddedOptions {
  std::string dir;
};

Status Run(const PostgresEmbeddedOptions& options) {
  // Blocked before the server is forked; the child restores the default mask before exec.
  BlockTerminationSignals();
  connectors::EmbeddedPostgresOptions server_options;
  server_options.data_dir = options.dir;
  connectors::EmbeddedPostgres server(server_options);
  SLUICE_RETURN_IF_ERROR(server.Start());
  std::printf("%s\n", server.ConnectionString("postgres").c_str());
  std::fflush(stdout);
  std::fprintf(stderr,
               "embedded PostgreSQL 15 on %s:%d, superuser %s, data directory %s (OS user %s), log %s. "
               "Stop with Ctrl-C.\n",
               server.host().c_str(), server.port(), server.superuser().c_str(), server.data_dir().c_str(),
               server.os_user().c_str(), server.log_path().c_str());
  int signal_number = WaitForTerminationSignal();
  SLUICE_RETURN_IF_ERROR(server.Stop());
  std::fprintf(stderr, "embedded PostgreSQL stopped (signal %d)\n", signal_number);
  return Status::OK();
}

}  // namespace

void RegisterPostgresEmbeddedCommand(CLI::App& app) {
  auto options = std::make_shared<PostgresEmbeddedOptions>();
  CLI::App* command = app.add_subcommand(
      "postgres-embedded", "Run a private PostgreSQL 15 server (wal_level=logical, loopback only) until Ctrl-C; "
                           "prints a connection string on the first line");
  command->add_option("--dir", options->dir, "Data directory (created and initialized on first use)")->required();
  command->callback([options] {
    Status status = Run(*options);
    if (!status.ok()) {
      std::fprintf(stderr, "sluice postgres-embedded: %s\n", status.ToString().c_str());
      throw CLI::RuntimeError(1);
    }
  });
}

}  // namespace sluice::cli
