// Set-up of a change feed: its options, `sluice cdf check` and `sluice cdf set-replica-identity`.
#include <fmt/format.h>

#include "pg_change_feed_internal.h"
#include "sluice/connectors/pg_change_feed.h"
#include "sluice/connectors/pg_connection.h"
#include "sluice/connectors/pg_replication.h"
#include "sluice/core/error_classes.h"

namespace sluice::connectors {

namespace {


constexpr auto kOptions = WithPgConnectionOptions({
    {"schema", OptionType::kString, std::nullopt, true, "Source schema: every table in it is captured."},
    {"target", OptionType::kString, std::nullopt, false,
     "Target `catalog.schema` of the history tables (needed to run the feed)."},
    {"warehouse", OptionType::kString, std::nullopt, false, "Warehouse directory, absolute (needed to run the feed)."},
    {"slot_name", OptionType::kString, std::nullopt, false,
     "Replication slot; default sluice_cdf_<database>_<schema> in lower case."},
    {"publication_name", OptionType::kString, std::nullopt, false, "Publication; default the slot name."},
    {"flush_interval", OptionType::kDuration, "1 second", false, "How often changes are committed to Delta."},
});

Status Invalid(std::string message) { return Status::Error(errors::kCdfInvalidOptions, std::move(message)); }


std::string ToLower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string_view ReplicaIdentityName(char code) {
  switch (code) {
    case 'f': return "full";
    case 'i': return "index";
    case 'n': return "nothing";
    default: return "default";
  }
}

}  // namespace

std::span<const OptionSpec> ChangeFeedOptionSpecs() { return kOptions; }

Status ChangeFeedConfig::CheckTarget() const {
  if (target_catalog.empty() || warehouse.empty()) {
    return Invalid("a change feed needs `target` (catalog.schema) and `warehouse`");
  }
  return Status::OK();
}

std::string ChangeFeedConfig::target_directory() const {
  return warehouse + "/" + target_catalog + "/" + target_schema;
}

std::string ChangeFeedConfig::state_directory() const {
  return target_directory() + "/_change_feeds/" + slot_name;
}

Result<ChangeFeedConfig> MakeChangeFeedConfig(const std::map<std::string, std::string>& given) {
  SLUICE_ASSIGN_OR_RETURN(ValidatedOptions options,
                          ValidateOptions("change feed", kOptions, given, errors::kCdfInvalidOptions));
  ChangeFeedConfig config;
  config.schema = options.GetString("schema");
  if (!IsSimpleIdentifier(config.schema)) {
    return Invalid(fmt::format("schema `{}` is not a simple identifier", config.schema));
  }
  if (options.Has("target")) {
    const std::string& target = options.GetString("target");
    size_t dot = target.find('.');
    if (dot == std::string::npos || !IsSimpleIdentifier(target.substr(0, dot)) ||
        !IsSimpleIdentifier(target.substr(dot + 1))) {
      return Invalid(fmt::format("target `{}` is not of the form catalog.schema", target));
    }
    config.target_catalog = target.substr(0, dot);
    config.target_schema = target.substr(dot + 1);
  }
  if (options.Has("warehouse")) {
    config.warehouse = options.GetString("warehouse");
    if (config.warehouse.empty() || config.warehouse[0] != '/') {
      return Invalid(fmt::format("warehouse `{}` is not an absolute directory", config.warehouse));
    }
    while (config.warehouse.size() > 1 && config.warehouse.back() == '/') config.warehouse.pop_back();
  }
  const std::string& database = options.GetString("database");
  config.slot_name = options.Has("slot_name") ? options.GetString("slot_name")
                                              : ToLower("sluice_cdf_" + database + "_" + config.schema);
  if (!IsValidReplicationName(config.slot_name)) {
    return Invalid(fmt::format("slot_name `{}` must be 1 to 63 lower-case letters, digits and underscores{}",
                               config.slot_name, options.Has("slot_name") ? "" : "; give slot_name explicitly"));
  }
  config.publication_name = options.Has("publication_name") ? options.GetString("publication_name") : config.slot_name;
  if (!IsValidReplicationName(config.publication_name)) {
    return Invalid(fmt::format("publication_name `{}` must be 1 to 63 lower-case letters, digits and underscores",
                               config.publication_name));
  }
  config.flush_interval = options.GetDuration("flush_interval");
  if (config.flush_interval.count() <= 0) return Invalid("flush_interval must be positive");
  config.conninfo = PgConninfo(options, database);
  return config;
}

Result<ChangeFeedCheck> CheckChangeFeed(const std::string& conninfo, const std::string& schema) {
  SLUICE_ASSIGN_OR_RETURN(auto conn, PgConnection::Connect(conninfo));
  ChangeFeedCheck check;
  SLUICE_ASSIGN_OR_RETURN(PgRows rows,
                          conn->Query("SELECT current_setting('wal_level'), "
                                      "(SELECT rolsuper OR rolreplication FROM pg_roles WHERE rolname = current_user), "
                                      "current_setting('max_replication_slots')::int - "
                                      "(SELECT count(*) FROM pg_replication_slots)"));
  if (rows.size() != 1 || rows[0].size() != 3 || !rows[0][0] || !rows[0][1] || !rows[0][2]) {
    return Status::Error(errors::kPgQueryFailed, "the server's settings could not be read");
  }
  check.wal_level = *rows[0][0];
  check.can_replicate = *rows[0][1] == "t";
  check.free_slots = std::stoll(*rows[0][2]);
  if (check.wal_level != "logical") {
    check.problems.push_back(fmt::format("wal_level is `{}`: set wal_level = logical and restart the server",
                                         check.wal_level));
  }
  if (!check.can_replicate) {
    check.problems.push_back("the role may not replicate: ALTER ROLE ... WITH REPLICATION");
  }
  if (check.free_slots <= 0) {
    check.problems.push_back("no replication slot is free: raise max_replication_slots or drop an unused slot");
  }
  SLUICE_ASSIGN_OR_RETURN(std::vector<cdf::CatalogTable> tables, cdf::ListTables(*conn, schema));
  for (const cdf::CatalogTable& table : tables) {
    check.tables.push_back({table.name, std::string(ReplicaIdentityName(table.replica_identity))});
  }
  return check;
}

Result<std::vector<std::string>> SetReplicaIdentityFull(const std::string& conninfo, const std::string& schema,
                                                        bool future) {
  if (!IsSimpleIdentifier(schema)) {
    return Status::Error(errors::kInvalidArgument, fmt::format("schema `{}` is not a simple identifier", schema));
  }
  SLUICE_ASSIGN_OR_RETURN(auto conn, PgConnection::Connect(conninfo));
  // Partitions too: their changes are the ones the server decodes.
  SLUICE_ASSIGN_OR_RETURN(PgRows rows, conn->Query("SELECT c.relname FROM pg_class c JOIN pg_namespace n ON "
                                                   "n.oid = c.relnamespace WHERE n.nspname = $1 AND "
                                                   "c.relkind IN ('r', 'p') AND c.relreplident <> 'f' ORDER BY 1",
                                                   {schema}));
  std::vector<std::string> changed;
  for (const auto& row : rows) {
    if (row.empty() || !row[0]) continue;
    SLUICE_RETURN_IF_ERROR(conn->Execute("ALTER TABLE " + QuoteIdentifier(schema) + "." + QuoteIdentifier(*row[0]) +
                                         " REPLICA IDENTITY FULL"));
    changed.push_back(*row[0]);
  }
  if (future) {
    std::string function = QuoteIdentifier(schema) + ".sluice_cdf_replica_identity_full";
    std::string trigger = QuoteIdentifier(ToLower("sluice_cdf_replica_identity_" + schema).substr(0, 63));
    SLUICE_RETURN_IF_ERROR(conn->Execute(fmt::format(
        "CREATE OR REPLACE FUNCTION {0}() RETURNS event_trigger LANGUAGE plpgsql AS $fn$\n"
        "DECLARE created record;\n"
        "BEGIN\n"
        "  FOR created IN SELECT * FROM pg_event_trigger_ddl_commands()\n"
        "      WHERE object_type IN ('table', 'partitioned table') AND schema_name = '{1}' LOOP\n"
        "    EXECUTE format('ALTER TABLE %s REPLICA IDENTITY FULL', created.object_identity);\n"
        "  END LOOP;\n"
        "END $fn$;\n"
        "SET client_min_messages = warning;\n"
        "DROP EVENT TRIGGER IF EXISTS {2};\n"
        "CREATE EVENT TRIGGER {2} ON ddl_command_end WHEN TAG IN ('CREATE TABLE', 'CREATE TABLE AS', "
        "'SELECT INTO') EXECUTE FUNCTION {0}()",
        function, schema, trigger)));
  }
  return changed;
}

}  // namespace sluice::connectors
