// `sluice cdf check|set-replica-identity|start|stop|status`: the PostgreSQL change feed
// (docs/change-feed.md).
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

#include "cli/commands.h"
#include "cli/project_file.h"
#include "cli/row_printer.h"
#include "cli/termination_signals.h"
#include "cli/warehouse.h"
#include "sluice/connectors/pg_change_feed.h"
#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "sluice/pipeline/catalog.h"
#include "sluice/pipeline/feed_catalog.h"
#include "sluice/storage/file_systems.h"

namespace sluice::cli {
namespace {

struct CdfOptions {
  std::string connection;
  std::string host, port, user, password_ref, database;
  std::string schema = "public";
  std::string target;
  std::string warehouse;
  std::string slot_name, publication_name, flush_interval;
  bool future = false;
  bool drop_slot = false;
  bool json = false;
};

// The feed's options from the flags, with a named connection's fields under those given.
Result<connectors::ChangeFeedConfig> Config(const CdfOptions& options) {
  std::map<std::string, std::string> given = {{"schema", options.schema}};
  auto put = [&](const char* key, const std::string& value) {
    if (!value.empty()) given[key] = value;
  };
  put("host", options.host);
  put("port", options.port);
  put("user", options.user);
  put("password", options.password_ref);
  put("database", options.database);
  put("target", options.target);
  put("slot_name", options.slot_name);
  put("publication_name", options.publication_name);
  put("flush_interval", options.flush_interval);
  std::string warehouse = AbsolutePath(options.warehouse);
  given["warehouse"] = warehouse;
  if (!options.connection.empty()) {
    given["connection"] = options.connection;
    pipeline::Catalog catalog(storage::DefaultFileSystem(), warehouse);
    SLUICE_ASSIGN_OR_RETURN(given, pipeline::ExpandConnection(
                                       given, pipeline::OwnThenCatalog(Project().connections, catalog), "postgresql"));
  }
  return connectors::MakeChangeFeedConfig(given);
}

Status RunCheck(const CdfOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(connectors::ChangeFeedConfig config, Config(options));
  SLUICE_ASSIGN_OR_RETURN(connectors::ChangeFeedCheck check, connectors::CheckChangeFeed(config.conninfo, config.schema));
  std::printf("wal_level: %s\nreplication privilege: %s\nfree replication slots: %lld\n", check.wal_level.c_str(),
              check.can_replicate ? "yes" : "no", static_cast<long long>(check.free_slots));
  std::printf("tables of schema %s:\n", config.schema.c_str());
  for (const auto& table : check.tables) {
    std::printf("  %-40s replica identity %-8s %s\n", table.name.c_str(), table.replica_identity.c_str(),
                table.ready() ? "ready" : "updates and deletes carry only the key (sluice cdf set-replica-identity)");
  }
  for (const std::string& problem : check.problems) std::printf("problem: %s\n", problem.c_str());
  if (!check.problems.empty()) {
    return Status::Error(errors::kCdfNotReady, "the server cannot feed changes yet: fix the problems above");
  }
  return Status::OK();
}

Status RunSetReplicaIdentity(const CdfOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(connectors::ChangeFeedConfig config, Config(options));
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> changed,
                          connectors::SetReplicaIdentityFull(config.conninfo, config.schema, options.future));
  for (const std::string& table : changed) std::printf("REPLICA IDENTITY FULL: %s.%s\n", config.schema.c_str(), table.c_str());
  if (options.future) std::printf("tables created later in %s get REPLICA IDENTITY FULL too\n", config.schema.c_str());
  return Status::OK();
}

// Runs `feed` until it fails or a termination signal arrives (then sets *signalled).
Status RunUntilSignal(connectors::PgChangeFeed& feed, bool* signalled) {
  std::atomic<bool> stop{false};
  std::atomic<bool> done{false};
  Status result;
  std::thread runner([&] {
    result = feed.Run(stop);
    done = true;
  });
  while (!done.load()) {
    if (WaitForTerminationSignalFor(std::chrono::milliseconds(200))) {
      *signalled = true;
      break;
    }
  }
  stop = true;
  runner.join();
  return result;
}

// Starts and runs the feed until a termination signal. When the server goes away later (a
// restart, a crash, a network cut) the feed ends with PG_CONNECTION_FAILED; it is started again
// after a pause that doubles up to 30 seconds, and resumes where its Delta tables end.
Status RunStart(const CdfOptions& options) {
  BlockTerminationSignals();
  SLUICE_ASSIGN_OR_RETURN(connectors::ChangeFeedConfig config, Config(options));
  std::chrono::seconds pause(1);
  for (bool first = true;; first = false) {
    bool signalled = false;
    auto feed = connectors::PgChangeFeed::Start(config);
    // A first start that cannot connect is a wrong address more likely than a server restarting.
    if (!feed.ok() && first) return feed.status();
    if (first) {
      std::fprintf(stderr,
                   "change feed %s: %s -> %s; status in %s/status.json. Stop with Ctrl-C or sluice cdf stop.\n",
                   config.slot_name.c_str(), config.schema.c_str(), config.target_directory().c_str(),
                   config.state_directory().c_str());
    }
    if (feed.ok()) pause = std::chrono::seconds(1);
    Status result = feed.ok() ? RunUntilSignal(**feed, &signalled) : feed.status();
    if (result.ok() || signalled || result.error_class() != errors::kPgConnectionFailed) return result;
    std::fprintf(stderr, "change feed %s: %s; starting again in %lld s\n", config.slot_name.c_str(),
                 result.ToString().c_str(), static_cast<long long>(pause.count()));
    if (WaitForTerminationSignalFor(pause)) return result;
    pause = std::min(pause * 2, std::chrono::seconds(30));
  }
}

Status RunStop(const CdfOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(connectors::ChangeFeedConfig config, Config(options));
  SLUICE_RETURN_IF_ERROR(config.CheckTarget());
  if (int64_t pid = connectors::RunningChangeFeedPid(config); pid != 0) {
    ::kill(static_cast<pid_t>(pid), SIGTERM);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (connectors::RunningChangeFeedPid(config) != 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        return Status::Error(errors::kCdfAlreadyRunning,
                             "the change feed did not stop within 60 seconds of SIGTERM (process " +
                                 std::to_string(pid) + ")");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    std::printf("change feed %s stopped\n", config.slot_name.c_str());
  }
  if (options.drop_slot) {
    SLUICE_RETURN_IF_ERROR(connectors::DropChangeFeedSlot(config));
    std::printf("replication slot %s dropped: a later start misses the changes made until then\n",
                config.slot_name.c_str());
  } else {
    std::printf("replication slot %s kept: the server retains WAL for it until the feed starts again\n",
                config.slot_name.c_str());
  }
  return Status::OK();
}

}  // namespace

std::string ChangeFeedStatusText(const pipeline::ChangeFeedStatusView& view) {
  std::string out = fmt::format("slot {}, confirmed LSN {}, slot lag {} bytes ({:.1f}s)\n", view.slot_name,
                                pipeline::FormatLsn(view.confirmed_lsn), view.slot_lag_bytes, view.slot_lag_seconds);
  if (!view.error.empty()) out += "error: " + view.error + "\n";
  std::vector<std::vector<std::string>> tables;
  for (const pipeline::ChangeFeedTableStatus& table : view.tables) {
    std::string note = table.reason;
    if (!table.replica_identity_full && table.status != "SKIPPED") {
      note += std::string(note.empty() ? "" : "; ") + "not REPLICA IDENTITY FULL: updates and deletes carry only the key";
    }
    std::string when = "-";
    if (table.last_write_ms > 0) when = TimestampText(table.last_write_ms * 1000);
    tables.push_back({table.source, table.history.empty() ? "-" : table.history, table.status,
                      std::to_string(table.rows), pipeline::FormatLsn(table.committed_lsn), when,
                      note.empty() ? "-" : note});
  }
  return out + TextTable({"table", "history", "status", "rows", "committed LSN", "last write", "note"}, tables);
}

namespace {

Status RunStatus(const CdfOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(connectors::ChangeFeedConfig config, Config(options));
  SLUICE_RETURN_IF_ERROR(config.CheckTarget());
  SLUICE_ASSIGN_OR_RETURN(std::string status, connectors::ChangeFeedStatus(config));
  int64_t pid = connectors::RunningChangeFeedPid(config);
  if (options.json) {
    std::printf("%s", status.c_str());
    return Status::OK();
  }
  SLUICE_ASSIGN_OR_RETURN(pipeline::ChangeFeedStatusView view, pipeline::ParseChangeFeedStatus(status));
  std::printf("change feed %s: %s (%s)\n%s", view.slot_name.c_str(), view.status.c_str(),
              pid != 0 ? ("running in process " + std::to_string(pid)).c_str() : "not running",
              ChangeFeedStatusText(view).c_str());
  return Status::OK();
}

void AddCommon(CLI::App* command, CdfOptions* options, bool needs_target) {
  command->add_option("--connection", options->connection, "Named connection of the warehouse's catalog");
  command->add_option("--host", options->host, "Server host (default 127.0.0.1)");
  command->add_option("--port", options->port, "Server port (default 5432)");
  command->add_option("--user", options->user, "Role to connect as");
  command->add_option("--password-ref", options->password_ref, "Password reference: ${env:NAME} or ${file:/path}");
  command->add_option("--database", options->database, "Database (default postgres)");
  command->add_option("--schema", options->schema, "Source schema")->capture_default_str();
  AddWarehouseOption(command, &options->warehouse);
  if (needs_target) {
    command->add_option("--target", options->target, "Target catalog.schema of the history tables")->required();
    command->add_option("--slot-name", options->slot_name, "Replication slot (default sluice_cdf_<database>_<schema>)");
  }
}

void Attach(CLI::App* command, std::shared_ptr<CdfOptions> options, Status (*run)(const CdfOptions&),
            const char* name) {
  command->callback([options, run, name] {
    Status status = run(*options);
    if (!status.ok()) {
      std::fprintf(stderr, "sluice cdf %s: %s\n", name, status.ToString().c_str());
      throw CLI::RuntimeError(1);
    }
  });
}

// The change feeds of the warehouse's catalog, which `sluice serve` runs.
struct CatalogFeedArguments {
  std::string warehouse;
  std::string file;
  std::string name;
};

pipeline::FeedCatalog FeedCatalogOf(const CatalogFeedArguments& arguments) {
  return pipeline::FeedCatalog(storage::DefaultFileSystem(), AbsolutePath(arguments.warehouse), &CommandRegistry());
}

[[noreturn]] void FailWith(const Status& status) {
  std::fprintf(stderr, "%s\n", status.ToString().c_str());
  throw CLI::RuntimeError(1);
}

void CreateFeed(const CatalogFeedArguments& arguments) {
  Result<std::string> definition = storage::DefaultFileSystem()->ReadFile(AbsolutePath(arguments.file));
  if (!definition.ok()) FailWith(definition.status());
  Result<pipeline::ChangeFeedSpec> created = FeedCatalogOf(arguments).Create(*definition);
  if (!created.ok()) FailWith(created.status());
  std::printf("created change feed %s (`sluice serve` runs it)\n", created->name.c_str());
}

void ListFeeds(const CatalogFeedArguments& arguments) {
  Result<std::vector<pipeline::StoredChangeFeed>> feeds = FeedCatalogOf(arguments).List();
  if (!feeds.ok()) FailWith(feeds.status());
  for (const pipeline::StoredChangeFeed& feed : *feeds) std::printf("%s\n", feed.spec.name.c_str());
}

void DeleteFeed(const CatalogFeedArguments& arguments) {
  Status deleted = FeedCatalogOf(arguments).Delete(arguments.name);
  if (!deleted.ok()) FailWith(deleted);
  std::printf("deleted change feed %s from the catalog (its slot and history tables are kept)\n",
              arguments.name.c_str());
}

}  // namespace

void RegisterCdfCommand(CLI::App& app) {
  CLI::App* cdf = app.add_subcommand("cdf", "PostgreSQL change feed into Delta history tables");
  cdf->require_subcommand(1);

  auto check = std::make_shared<CdfOptions>();
  CLI::App* check_command = cdf->add_subcommand("check", "Report what the server lacks to feed changes");
  AddCommon(check_command, check.get(), false);
  Attach(check_command, check, RunCheck, "check");

  auto identity = std::make_shared<CdfOptions>();
  CLI::App* identity_command =
      cdf->add_subcommand("set-replica-identity", "ALTER TABLE ... REPLICA IDENTITY FULL on every table of the schema");
  AddCommon(identity_command, identity.get(), false);
  identity_command->add_flag("--future", identity->future, "Also for tables created later (an event trigger)");
  Attach(identity_command, identity, RunSetReplicaIdentity, "set-replica-identity");

  auto start = std::make_shared<CdfOptions>();
  CLI::App* start_command = cdf->add_subcommand("start", "Set up (publication, slot, snapshot) and run until stopped");
  AddCommon(start_command, start.get(), true);
  start_command->add_option("--publication-name", start->publication_name, "Publication (default the slot name)");
  start_command->add_option("--flush-interval", start->flush_interval, "How often to commit to Delta (default 1 second)");
  Attach(start_command, start, RunStart, "start");

  auto stop = std::make_shared<CdfOptions>();
  CLI::App* stop_command = cdf->add_subcommand("stop", "Stop a running feed; keep its slot unless --drop-slot");
  AddCommon(stop_command, stop.get(), true);
  stop_command->add_flag("--drop-slot", stop->drop_slot, "Drop the replication slot (changes until the next start are lost)");
  Attach(stop_command, stop, RunStop, "stop");

  auto status = std::make_shared<CdfOptions>();
  CLI::App* status_command = cdf->add_subcommand("status", "Per-table status, committed LSN, rows and slot lag");
  AddCommon(status_command, status.get(), true);
  status_command->add_flag("--json", status->json, "Print status.json as the feed wrote it");
  Attach(status_command, status, RunStatus, "status");

  auto feed = std::make_shared<CatalogFeedArguments>();
  CLI::App* create_command =
      cdf->add_subcommand("create", "Keep a change feed definition (YAML, as a change_feeds: entry) in the catalog");
  AddWarehouseOption(create_command, &feed->warehouse);
  create_command->add_option("FILE", feed->file, "Change feed definition (YAML)")->required();
  create_command->callback([feed] { CreateFeed(*feed); });
  CLI::App* list_command = cdf->add_subcommand("list", "The change feeds of the catalog");
  AddWarehouseOption(list_command, &feed->warehouse);
  list_command->callback([feed] { ListFeeds(*feed); });
  CLI::App* delete_command = cdf->add_subcommand("delete", "Remove a change feed from the catalog");
  AddWarehouseOption(delete_command, &feed->warehouse);
  delete_command->add_option("NAME", feed->name, "Change feed name")->required();
  delete_command->callback([feed] { DeleteFeed(*feed); });
}

}  // namespace sluice::cli
