// The `sluice` command.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"sluice: moves data exactly once between Kafka, PostgreSQL and Delta Lake tables"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("sluice ") + SLUICE_VERSION);
  sluice::cli::RegisterDemoCommand(app);
  sluice::cli::RegisterKafkaEmbeddedCommand(app);
  sluice::cli::RegisterPostgresEmbeddedCommand(app);
  sluice::cli::RegisterParquetCommand(app);
  sluice::cli::RegisterDeltaCommand(app);
  sluice::cli::RegisterCdfCommand(app);
  sluice::cli::RegisterConnectionCommand(app);
  sluice::cli::RegisterCopyCommand(app);
  sluice::cli::RegisterPipelineCommands(app);
  sluice::cli::RegisterStreamCommand(app);
  sluice::cli::RegisterServeCommand(app);
  CLI11_PARSE(app, argc, argv);
  return 0;
}
