// The `sluice` command. Exit codes: 0 success, 1 a command that failed (its error class printed),
// 2 invalid input (an unknown command, flag or option value, a missing argument).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>

#include "cli/commands.h"
#include "cli/project_file.h"
#include "sluice/core/edit_distance.h"

namespace {

constexpr int kInvalidInput = 2;

// "unknown command `runn`; did you mean `run`?" for a first argument that names no command.
void SuggestCommand(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return;
  const std::string given = argv[1];
  std::string nearest;
  size_t best = given.size() / 2 + 1;  // suggest only what is closer than half the word
  for (const CLI::App* command : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (command->get_name() == given) return;  // a command: the error is inside it
    const size_t distance = sluice::EditDistance(given, command->get_name());
    if (distance < best) {
      best = distance;
      nearest = command->get_name();
    }
  }
  std::fprintf(stderr, "unknown command `%s`%s\n", given.c_str(),
               nearest.empty() ? "" : ("; did you mean `" + nearest + "`?").c_str());
}

}  // namespace

int main(int argc, char** argv) {
  // The project file's defaults come before the commands that take them.
  sluice::Result<sluice::cli::ProjectDefaults> project = sluice::cli::LoadProjectFile(argc, argv);
  if (!project.ok()) {
    std::fprintf(stderr, "%s\n", project.status().ToString().c_str());
    return kInvalidInput;
  }
  CLI::App app{"sluice: moves data exactly once between Kafka, PostgreSQL and Delta Lake tables"};
  app.require_subcommand(1);
  app.fallthrough();  // --config may also follow the command
  sluice::cli::AddConfigOption(&app);
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
  sluice::cli::RegisterEventsCommand(app);
  sluice::cli::RegisterStreamCommand(app);
  sluice::cli::RegisterServeCommand(app);
  sluice::cli::RegisterHelpCommands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& failed) {
    return failed.get_exit_code();  // a command that ran and failed has said why
  } catch (const CLI::CallForHelp& help) {
    return app.exit(help);
  } catch (const CLI::CallForAllHelp& help) {
    return app.exit(help);
  } catch (const CLI::CallForVersion& version) {
    return app.exit(version);
  } catch (const CLI::ParseError& invalid) {
    if (dynamic_cast<const CLI::ExtrasError*>(&invalid) != nullptr ||
        dynamic_cast<const CLI::RequiredError*>(&invalid) != nullptr) {
      SuggestCommand(app, argc, argv);
    }
    (void)app.exit(invalid);  // prints the error and the usage hint
    return kInvalidInput;
  }
  return 0;
}
