// `sluice demo`: the bundled pipeline on the embedded defaults. It starts an in-memory Kafka
// cluster and a private PostgreSQL server under the demo directory, produces sample JSON order
// events, writes the pipeline file <dir>/pipeline.yaml and runs it in two steps: Kafka orders and
// a `rate` stream through expectations into Delta tables of <dir>/warehouse, beside a change feed
// of the PostgreSQL table `shop.stock` (edited while it runs) into a Delta history table; then a
// foreachBatch summary of one table and the orders upserted into PostgreSQL. It prints what
// landed and how to look at it, and stops both services.
#include <CLI/CLI.hpp>
#include <libpq-fe.h>

#include <chrono>
#include <cstdio>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <thread>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <functional>
#include <map>

#include "cli/commands.h"
#include "cli/termination_signals.h"
#include "sluice/connectors/embedded_kafka.h"
#include "sluice/connectors/embedded_postgres.h"
#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/logging.h"
#include "sluice/delta/scan.h"
#include "sluice/delta/snapshot.h"
#include "sluice/pipeline/pipeline_runner.h"
#include "sluice/storage/file_systems.h"

namespace sluice::cli {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kTopic = "demo.orders";
constexpr int kPartitions = 3;
constexpr const char* kDatabase = "sluice_demo";
constexpr const char* kSlot = "sluice_demo_changes";

struct DemoOptions {
  std::string dir = "sluice-demo";
  int events = 60;
  bool keep_running = false;  // leave Kafka and PostgreSQL up until SIGINT/SIGTERM
};

// One libpq connection; every failure becomes EMBEDDED_SERVICE_FAILED with the server's message.
class Connection {
 public:
  static Result<Connection> Open(const std::string& conninfo) {
    Connection c(PQconnectdb(conninfo.c_str()));
    if (PQstatus(c.conn_.get()) != CONNECTION_OK) {
      return Status::Error(errors::kEmbeddedServiceFailed,
                           fmt::format("cannot connect to the demo database: {}", PQerrorMessage(c.conn_.get())));
    }
    return c;
  }

  // Runs `sql` with text parameters and returns the rows as text.
  Result<std::vector<std::vector<std::string>>> Run(const std::string& sql, const std::vector<std::string>& params = {}) {
    std::vector<const char*> values;
    for (const std::string& p : params) values.push_back(p.c_str());
    std::unique_ptr<PGresult, decltype(&PQclear)> result(
        PQexecParams(conn_.get(), sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(), nullptr,
                     nullptr, 0),
        &PQclear);
    ExecStatusType status = PQresultStatus(result.get());
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
      return Status::Error(errors::kEmbeddedServiceFailed,
                           fmt::format("SQL failed: {}  in: {}", PQresultErrorMessage(result.get()), sql));
    }
    std::vector<std::vector<std::string>> rows;
    for (int r = 0; r < PQntuples(result.get()); ++r) {
      auto& row = rows.emplace_back();
      for (int c = 0; c < PQnfields(result.get()); ++c) row.emplace_back(PQgetvalue(result.get(), r, c));
    }
    return rows;
  }

 private:
  // The demo prints its own account of what happened; server notices ("table does not exist,
  // skipping") would only interleave with it.
  explicit Connection(PGconn* conn) : conn_(conn, &PQfinish) {
    PQsetNoticeProcessor(conn, [](void*, const char*) {}, nullptr);
  }
  std::unique_ptr<PGconn, decltype(&PQfinish)> conn_;
};

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::vector<connectors::KafkaTestMessage> SampleOrders(int count) {
  static const char* const kCustomers[] = {"ada", "grace", "linus", "barbara", "edsger"};
  static const char* const kItems[] = {"coffee beans", "teapot", "oat milk", "espresso cups", "grinder"};
  static const int kPriceCents[] = {1250, 3400, 299, 1899, 8900};
  std::vector<connectors::KafkaTestMessage> orders;
  for (int i = 0; i < count; ++i) {
    int quantity = i % 10 == 9 ? 0 : 1 + i % 3;
    int cents = kPriceCents[i % 5] * quantity;
    connectors::KafkaTestMessage m;
    m.key = fmt::format("order-{}", 1000 + i);
    m.value = fmt::format(
        R"({{"order_id":{},"customer":"{}","item":"{}","quantity":{},"amount":{}.{:02d},"ordered_at":"2026-01-15T09:{:02d}:00Z"}})",
        1000 + i, kCustomers[(i * 7) % 5], kItems[i % 5], quantity, cents / 100, cents % 100, i % 60);
    m.headers = {{"source", "sluice-demo"}};
    orders.push_back(std::move(m));
  }
  return orders;
}

// Where the PostgreSQL cluster lives: under the demo directory, unless the server's OS user cannot
// reach it (relocated, see EmbeddedPostgresOptions::relocate_if_unreachable).
connectors::EmbeddedPostgresOptions PostgresOptions(const std::string& dir) {
  connectors::EmbeddedPostgresOptions options;
  options.data_dir = dir + "/postgres";
  options.relocate_if_unreachable = true;
  return options;
}

// The bundled pipeline, with the embedded services' addresses filled in.
std::string PipelineYaml(const std::string& dir, const std::string& bootstrap, const connectors::EmbeddedPostgres& pg) {
  return fmt::format(R"(# The sluice demo pipeline, written by `sluice demo`.
name: demo
storage: {dir}/storage
warehouse: {dir}/warehouse
sinks:
  orders_table: {{format: delta, table: main.shop.orders}}
  ticks_table: {{format: delta, table: main.demo.ticks}}
  summary: {{format: foreachBatch, options: {{function: demo_summary}}}}
  orders_db:
    format: postgresql
    options: {{host: "{pg_host}", port: {pg_port}, user: {pg_user}, database: {database}, dbtable: public.orders, upsertkey: order_id}}
change_feeds:
  # Every insert, update and delete of the database's shop schema, into Delta history tables
  # main.cdc.lb_<table>_history.
  - name: shop_changes
    host: "{pg_host}"
    port: {pg_port}
    user: {pg_user}
    database: {database}
    schema: shop
    target: main.cdc
    slot_name: {slot}
flows:
  # Kafka JSON order events, decoded by SQL expressions, judged by expectations, into Delta.
  - name: orders
    source: {{format: kafka, options: {{bootstrap_servers: "{bootstrap}", subscribe: {topic}, starting_offsets: earliest}}}}
    select:
      - CAST(get_json_object(CAST(value AS STRING), '$.order_id') AS BIGINT) AS order_id
      - get_json_object(CAST(value AS STRING), '$.customer') AS customer
      - get_json_object(CAST(value AS STRING), '$.item') AS item
      - CAST(get_json_object(CAST(value AS STRING), '$.quantity') AS INT) AS quantity
      - CAST(get_json_object(CAST(value AS STRING), '$.amount') AS DECIMAL(10,2)) AS amount
      - partition AS kafka_partition
      - offset AS kafka_offset
    expectations:
      - {{name: positive_quantity, expect_or_drop: quantity > 0}}
      - {{name: known_customer, expect: customer IS NOT NULL}}
    sink: orders_table
    trigger: available_now
  # A generated stream, filtered and judged, into Delta once a second.
  - name: ticks
    source: {{format: rate, options: {{rowsPerSecond: 20}}}}
    where: value % 10 <> 3
    select: [value, timestamp, value % 7 AS bucket]
    expectations:
      - {{name: even_value, expect: value % 2 = 0}}
    sink: ticks_table
    trigger: {{kind: processing_time, interval: 1 second}}
  # The ticks table read back as a stream, one summary line per batch.
  - name: tick_summary
    source: {{format: delta, table: main.demo.ticks, options: {{maxFilesPerTrigger: 1}}}}
    sink: summary
    trigger: available_now
  # The orders table upserted into PostgreSQL by order_id.
  - name: orders_to_postgres
    source: {{format: delta, table: main.shop.orders}}
    sink: orders_db
    trigger: available_now
materialized_views:
  # Sales per item, kept current from the orders table by SQL, its groups in the checkpoint: a
  # Delta table any reader can query.
  - name: main.shop.sales_by_item
    sql: >
      SELECT item, count(*) AS orders, sum(quantity) AS units, sum(amount) AS revenue
      FROM main.shop.orders GROUP BY item
    trigger: available_now
)",
                     fmt::arg("dir", dir), fmt::arg("bootstrap", bootstrap), fmt::arg("topic", kTopic),
                     fmt::arg("pg_host", pg.host()), fmt::arg("pg_port", pg.port()), fmt::arg("pg_user", pg.superuser()),
                     fmt::arg("database", kDatabase), fmt::arg("slot", kSlot));
}

// The foreachBatch callback of the demo: one line per batch of the ticks table.
Status PrintTickSummary(const RecordBatch& batch, const engine::BatchContext& context) {
  const int64_t batch_id = context.batch_id;
  int value_index = batch.schema()->FieldIndex("value");
  if (value_index < 0) return Status::Error(errors::kInvalidArgument, "demo_summary needs a `value` column");
  const Column& values = *batch.column(value_index);
  int64_t low = 0, high = 0, even = 0;
  for (int64_t row = 0; row < batch.num_rows(); ++row) {
    int64_t v = values.Value<int64_t>(row);
    low = row == 0 ? v : std::min(low, v);
    high = row == 0 ? v : std::max(high, v);
    even += v % 2 == 0;
  }
  std::printf("        foreachBatch demo_summary: batch %lld, %lld rows, values %lld..%lld, %lld even\n",
              static_cast<long long>(batch_id), static_cast<long long>(batch.num_rows()), static_cast<long long>(low),
              static_cast<long long>(high), static_cast<long long>(even));
  return Status::OK();
}

void PrintFigures(const pipeline::PipelineRun& run) {
  for (const pipeline::FlowFigures& flow : run.flows()) {
    std::printf("        flow %-18s %-9s %3lld batch(es), %4lld rows in, %4lld rows out -> %s\n", flow.name.c_str(),
                flow.state.c_str(), static_cast<long long>(flow.batches), static_cast<long long>(flow.input_rows),
                static_cast<long long>(flow.output_rows), flow.sink.c_str());
  }
}

// Runs `flows` (and change feeds) of the pipeline until the flows end by themselves or
// `stop_after` has passed; `while_running` is called once they have started.
Status RunFlows(const pipeline::PipelineSpec& spec, std::vector<std::string> flows, std::chrono::seconds stop_after,
                const std::function<Status()>& while_running = [] { return Status::OK(); }) {
  pipeline::RunOptions options;
  options.flows = std::move(flows);
  options.registry = &CommandRegistry();
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<pipeline::PipelineRun> run, pipeline::PipelineRun::Start(spec, options));
  Status during = while_running();
  Clock::time_point deadline = Clock::now() + stop_after;
  while (during.ok() && Clock::now() < deadline) {
    bool active = false;
    for (const pipeline::FlowFigures& flow : run->flows()) active = active || flow.state == "RUNNING";
    if (!active) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  run->Stop();
  Status status = run->Wait();
  PrintFigures(*run);
  for (const pipeline::ChangeFeedFigures& feed : run->change_feeds()) {
    std::printf("        change feed %s: %s, history tables in %s\n", feed.name.c_str(), feed.state.c_str(),
                feed.target.c_str());
  }
  return status.ok() ? during : status;
}

// The demo's edits of the stock table while the change feed runs: one insert, updates, a delete.
Status EditStock(const connectors::EmbeddedPostgres& postgres) {
  SLUICE_ASSIGN_OR_RETURN(Connection db, Connection::Open(postgres.ConnectionString(kDatabase)));
  SLUICE_RETURN_IF_ERROR(db.Run("INSERT INTO shop.stock VALUES ('kettle', 7)").status());
  SLUICE_RETURN_IF_ERROR(db.Run("UPDATE shop.stock SET on_hand = on_hand - 2 WHERE item = 'teapot'").status());
  SLUICE_RETURN_IF_ERROR(db.Run("DELETE FROM shop.stock WHERE item = 'grinder'").status());
  return db.Run("UPDATE shop.stock SET on_hand = on_hand + 10 WHERE item = 'kettle'").status();
}

// The rows of a Delta table, each column's value as text, ordered by the text of `order_by`
// read as a number.
Result<std::vector<std::map<std::string, std::string>>> DeltaRows(const std::string& table,
                                                                  const std::string& order_by) {
  SLUICE_ASSIGN_OR_RETURN(delta::SnapshotPtr snapshot, delta::Snapshot::Load(storage::DefaultFileSystem(), table));
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<delta::TableScan> scan, delta::TableScan::Open(snapshot));
  std::vector<std::map<std::string, std::string>> rows;
  while (true) {
    SLUICE_ASSIGN_OR_RETURN(BatchPtr batch, scan->Next());
    if (batch == nullptr) break;
    for (int64_t row = 0; row < batch->num_rows(); ++row) {
      auto& values = rows.emplace_back();
      for (int c = 0; c < batch->num_columns(); ++c) {
        values[batch->schema()->field(c).name] = FormatValue(*batch->column(c), row);
      }
    }
  }
  std::sort(rows.begin(), rows.end(), [&](const auto& a, const auto& b) {
    return std::stoll(a.at(order_by)) < std::stoll(b.at(order_by));
  });
  return rows;
}

Result<std::pair<int64_t, int64_t>> DeltaRowsAndVersion(const std::string& table) {
  SLUICE_ASSIGN_OR_RETURN(delta::SnapshotPtr snapshot, delta::Snapshot::Load(storage::DefaultFileSystem(), table));
  int64_t rows = 0;
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<delta::TableScan> scan, delta::TableScan::Open(snapshot));
  while (true) {
    SLUICE_ASSIGN_OR_RETURN(BatchPtr batch, scan->Next());
    if (batch == nullptr) break;
    rows += batch->num_rows();
  }
  return std::make_pair(rows, snapshot->version());
}

Status Run(const DemoOptions& options) {
  // Kept running, the services stop on Ctrl-C like `sluice postgres-embedded` does: the signal is
  // waited for, never delivered to a thread the services started.
  if (options.keep_running) BlockTerminationSignals();
  Clock::time_point start = Clock::now();
  // The demo gives its own account of each step; the services' progress lines would bury it.
  SetLogLevel(LogLevel::kWarn);
  std::error_code ec;
  std::filesystem::create_directories(options.dir, ec);
  if (ec) {
    return Status::Error(errors::kIoError, fmt::format("cannot create demo directory {}: {}", options.dir, ec.message()));
  }
  std::string dir = std::filesystem::canonical(options.dir).string();
  // Kafka lives in memory, so offsets checkpointed by an earlier demo mean nothing now: start afresh.
  std::filesystem::remove_all(dir + "/storage", ec);
  std::filesystem::remove_all(dir + "/warehouse", ec);
  std::printf("sluice demo in %s\n\n", dir.c_str());

  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<connectors::EmbeddedKafka> kafka, connectors::EmbeddedKafka::Start(1));
  SLUICE_RETURN_IF_ERROR(kafka->CreateTopic(kTopic, kPartitions));
  std::printf("[1/6] Kafka       embedded mock cluster at %s, topic %s with %d partitions  (%.1fs)\n",
              kafka->bootstrap_servers().c_str(), kTopic, kPartitions, SecondsSince(start));

  connectors::EmbeddedPostgres postgres(PostgresOptions(dir));
  SLUICE_RETURN_IF_ERROR(postgres.Start());
  std::printf("[2/6] PostgreSQL  private server on %s:%d, data in %s  (%.1fs)\n", postgres.host().c_str(),
              postgres.port(), postgres.data_dir().c_str(), SecondsSince(start));
  {
    SLUICE_ASSIGN_OR_RETURN(Connection admin, Connection::Open(postgres.ConnectionString("postgres")));
    SLUICE_ASSIGN_OR_RETURN(auto existing, admin.Run("SELECT 1 FROM pg_database WHERE datname = $1", {kDatabase}));
    if (existing.empty()) SLUICE_RETURN_IF_ERROR(postgres.CreateDatabase(kDatabase));
    SLUICE_ASSIGN_OR_RETURN(Connection db, Connection::Open(postgres.ConnectionString(kDatabase)));
    SLUICE_RETURN_IF_ERROR(db.Run("DROP TABLE IF EXISTS orders").status());
    // The change feed starts afresh with the warehouse: the slot of an earlier demo goes too.
    SLUICE_RETURN_IF_ERROR(
        db.Run("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1", {kSlot})
            .status());
    SLUICE_RETURN_IF_ERROR(db.Run(fmt::format("DROP PUBLICATION IF EXISTS {}", kSlot)).status());
    SLUICE_RETURN_IF_ERROR(db.Run("DROP SCHEMA IF EXISTS shop CASCADE").status());
    SLUICE_RETURN_IF_ERROR(db.Run("CREATE SCHEMA shop").status());
    SLUICE_RETURN_IF_ERROR(db.Run("CREATE TABLE shop.stock (item text PRIMARY KEY, on_hand integer NOT NULL)").status());
    SLUICE_RETURN_IF_ERROR(db.Run("ALTER TABLE shop.stock REPLICA IDENTITY FULL").status());
    SLUICE_RETURN_IF_ERROR(db.Run("INSERT INTO shop.stock VALUES ('coffee beans', 40), ('teapot', 12), ('oat milk', 30), "
                                  "('espresso cups', 24), ('grinder', 5)")
                               .status());
  }

  std::vector<connectors::KafkaTestMessage> orders = SampleOrders(options.events);
  SLUICE_RETURN_IF_ERROR(connectors::ProduceMessages(kafka->bootstrap_servers(), kTopic, orders));
  std::printf("[3/6] produced    %zu JSON order events (every tenth with quantity 0), e.g.\n                  %s\n",
              orders.size(), orders.front().value->c_str());

  const std::string pipeline_file = dir + "/pipeline.yaml";
  {
    std::ofstream out(pipeline_file, std::ios::trunc);
    out << PipelineYaml(dir, kafka->bootstrap_servers(), postgres);
    if (!out) return Status::Error(errors::kIoError, "cannot write " + pipeline_file);
  }
  SLUICE_ASSIGN_OR_RETURN(pipeline::PipelineSpec spec, LoadPipelineFile(pipeline_file));
  std::vector<Status> problems = pipeline::ValidatePipeline(spec, CommandRegistry());
  if (!problems.empty()) return problems.front();
  std::printf("[4/6] pipeline    %s: %zu flows (one keeps a materialized view) and a change feed, validated; running `orders`, `ticks` and\n"
              "                  the change feed `shop_changes` for 5 seconds while the PostgreSQL table shop.stock is edited\n",
              pipeline_file.c_str(), spec.flows.size());
  SLUICE_RETURN_IF_ERROR(RunFlows(spec, {"orders", "ticks", "shop_changes"}, std::chrono::seconds(5),
                                  [&postgres] { return EditStock(postgres); }));
  std::printf("[5/6] pipeline    running `tick_summary`, `orders_to_postgres` and the materialized view\n"
              "                  `main.shop.sales_by_item` over what landed\n");
  SLUICE_RETURN_IF_ERROR(
      RunFlows(spec, {"tick_summary", "orders_to_postgres", "main.shop.sales_by_item"}, std::chrono::seconds(30)));

  const std::string orders_table = dir + "/warehouse/main/shop/orders";
  const std::string ticks_table = dir + "/warehouse/main/demo/ticks";
  SLUICE_ASSIGN_OR_RETURN(auto orders_landed, DeltaRowsAndVersion(orders_table));
  SLUICE_ASSIGN_OR_RETURN(auto ticks_landed, DeltaRowsAndVersion(ticks_table));
  SLUICE_ASSIGN_OR_RETURN(Connection db, Connection::Open(postgres.ConnectionString(kDatabase)));
  SLUICE_ASSIGN_OR_RETURN(auto totals, db.Run("SELECT count(*), coalesce(sum(amount), 0) FROM orders"));
  SLUICE_ASSIGN_OR_RETURN(auto by_customer, db.Run("SELECT customer, count(*), sum(amount) FROM orders "
                                                   "GROUP BY 1 ORDER BY 3 DESC, 1"));
  std::printf("[6/6] landed      Delta main.shop.orders: %lld rows (version %lld); main.demo.ticks: %lld rows "
              "(version %lld); PostgreSQL %s.public.orders: %s rows  (%.1fs)\n\n",
              static_cast<long long>(orders_landed.first), static_cast<long long>(orders_landed.second),
              static_cast<long long>(ticks_landed.first), static_cast<long long>(ticks_landed.second), kDatabase,
              totals[0][0].c_str(), SecondsSince(start));
  std::printf("  %-10s %6s %10s\n", "customer", "orders", "amount");
  for (const auto& row : by_customer) std::printf("  %-10s %6s %10s\n", row[0].c_str(), row[1].c_str(), row[2].c_str());
  std::printf("  %-10s %6s %10s\n\n", "total", totals[0][0].c_str(), totals[0][1].c_str());

  const std::string sales_table = dir + "/warehouse/main/shop/sales_by_item";
  SLUICE_ASSIGN_OR_RETURN(auto sales, DeltaRows(sales_table, "orders"));
  std::printf("  Delta main.shop.sales_by_item, the materialized view (SELECT item, count(*), sum(quantity),\n"
              "  sum(amount) ... GROUP BY item):\n");
  std::printf("  %-14s %6s %6s %10s\n", "item", "orders", "units", "revenue");
  for (auto it = sales.rbegin(); it != sales.rend(); ++it) {
    std::printf("  %-14s %6s %6s %10s\n", (*it)["item"].c_str(), (*it)["orders"].c_str(), (*it)["units"].c_str(),
                (*it)["revenue"].c_str());
  }
  std::printf("\n");

  const std::string history_table = dir + "/warehouse/main/cdc/lb_stock_history";
  SLUICE_ASSIGN_OR_RETURN(auto history, DeltaRows(history_table, "_sort_by"));
  constexpr size_t kShown = 7;
  std::printf("  Delta main.cdc.lb_stock_history: %zu changes of shop.stock captured, the last %zu:\n",
              history.size(), std::min(history.size(), kShown));
  std::printf("  %-14s %8s  %-17s %8s\n", "item", "on_hand", "_pg_change_type", "_sort_by");
  for (size_t i = history.size() - std::min(history.size(), kShown); i < history.size(); ++i) {
    std::printf("  %-14s %8s  %-17s %8s\n", history[i]["item"].c_str(), history[i]["on_hand"].c_str(),
                history[i]["_pg_change_type"].c_str(), history[i]["_sort_by"].c_str());
  }
  std::printf("\n");

  if (options.keep_running) {
    std::printf("Kafka (%s) and PostgreSQL (%s:%d) stay up until Ctrl-C; %.1fs so far. In another terminal:\n"
                "  # every flow and the change feed again, against them\n  sluice run %s\n"
                "  # the orders upserted into PostgreSQL\n  psql \"host=%s port=%d user=%s dbname=%s\" -c 'SELECT * FROM "
                "orders LIMIT 5'\n",
                kafka->bootstrap_servers().c_str(), postgres.host().c_str(), postgres.port(), SecondsSince(start),
                pipeline_file.c_str(), postgres.host().c_str(), postgres.port(), postgres.superuser().c_str(),
                kDatabase);
    std::fflush(stdout);
    WaitForTerminationSignal();
  }
  SLUICE_RETURN_IF_ERROR(postgres.Stop());
  kafka.reset();
  std::printf("Stopped PostgreSQL and Kafka; %.1fs in all. Look at what landed:\n", SecondsSince(start));
  std::printf("  # the orders, as any Delta reader sees them\n  sluice delta show %s --limit 5\n", orders_table.c_str());
  std::printf("  # one Delta commit per batch of the ticks flow\n  sluice delta history %s\n", ticks_table.c_str());
  std::printf("  # every change of shop.stock, in the order it happened\n  sluice delta show %s\n",
              history_table.c_str());
  std::printf("  # the materialized view, one commit per batch, each holding every group\n  sluice delta history %s\n",
              sales_table.c_str());
  std::printf("  # each flow's last state and batch, from the event log %s/system/events.jsonl\n  sluice status %s\n",
              spec.storage.c_str(), pipeline_file.c_str());
  std::printf("  # the ticks flow again, from where it stopped, until Ctrl-C\n  sluice run %s --flow ticks\n",
              pipeline_file.c_str());
  return Status::OK();
}

}  // namespace

Status RegisterDemoFunctions(engine::Registry* registry) {
  return registry->RegisterForeachBatch("demo_summary", PrintTickSummary);
}

void RegisterDemoCommand(CLI::App& app) {
  auto options = std::make_shared<DemoOptions>();
  CLI::App* command = app.add_subcommand(
      "demo", "Run a short end-to-end demo on an embedded Kafka cluster and an embedded PostgreSQL server");
  command->add_option("--dir", options->dir, "Directory for the demo's state (created if absent)")->capture_default_str();
  command->add_option("--events", options->events, "Number of sample events")->check(CLI::Range(1, 100000))
      ->capture_default_str();
  command->add_flag("--keep-running", options->keep_running,
                    "Leave the embedded Kafka and PostgreSQL up until Ctrl-C, to run the written pipeline.yaml "
                    "against them");
  command->callback([options] {
    Status status = Run(*options);
    if (!status.ok()) {
      std::fprintf(stderr, "sluice demo: %s\n", status.ToString().c_str());
      throw CLI::RuntimeError(1);
    }
  });
}

}  // namespace sluice::cli
