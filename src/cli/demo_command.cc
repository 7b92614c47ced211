// `sluice demo`: a short end-to-end run on the embedded services. It starts an in-memory Kafka
// cluster and a private PostgreSQL server under the demo directory, produces sample JSON order
// events, reads them back from Kafka, writes them into a PostgreSQL table with bound parameters in
// one transaction, prints what happened, and stops both services.
#include <CLI/CLI.hpp>
#include <libpq-fe.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.h"
#include "sluice/connectors/embedded_kafka.h"
#include "sluice/connectors/embedded_postgres.h"
#include "sluice/core/error_classes.h"

namespace sluice::cli {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kTopic = "demo.orders";
constexpr int kPartitions = 3;
constexpr const char* kDatabase = "sluice_demo";

struct DemoOptions {
  std::string dir = "sluice-demo";
  int events = 12;
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
    int quantity = 1 + i % 3;
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

Status Run(const DemoOptions& options) {
  Clock::time_point start = Clock::now();
  std::error_code ec;
  std::filesystem::create_directories(options.dir, ec);
  if (ec) {
    return Status::Error(errors::kIoError, fmt::format("cannot create demo directory {}: {}", options.dir, ec.message()));
  }
  std::string dir = std::filesystem::canonical(options.dir).string();
  std::printf("sluice demo in %s\n\n", dir.c_str());

  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<connectors::EmbeddedKafka> kafka, connectors::EmbeddedKafka::Start(1));
  SLUICE_RETURN_IF_ERROR(kafka->CreateTopic(kTopic, kPartitions));
  std::printf("[1/5] Kafka       embedded mock cluster at %s, topic %s with %d partitions  (%.1fs)\n",
              kafka->bootstrap_servers().c_str(), kTopic, kPartitions, SecondsSince(start));

  connectors::EmbeddedPostgres postgres(PostgresOptions(dir));
  SLUICE_RETURN_IF_ERROR(postgres.Start());
  std::printf("[2/5] PostgreSQL  private server on %s:%d, OS user %s, data in %s  (%.1fs)\n", postgres.host().c_str(),
              postgres.port(), postgres.os_user().c_str(), postgres.data_dir().c_str(), SecondsSince(start));
  if (postgres.relocated()) {
    std::printf("                  (OS user %s cannot reach %s/postgres, so the data lives in %s)\n",
                postgres.os_user().c_str(), dir.c_str(), postgres.data_dir().c_str());
  }

  std::vector<connectors::KafkaTestMessage> orders = SampleOrders(options.events);
  SLUICE_RETURN_IF_ERROR(connectors::ProduceMessages(kafka->bootstrap_servers(), kTopic, orders));
  std::printf("[3/5] produced    %zu JSON order events keyed by order id, e.g.\n                  %s\n", orders.size(),
              orders.front().value->c_str());

  SLUICE_ASSIGN_OR_RETURN(std::vector<connectors::KafkaTestMessage> read,
                          connectors::ReadAllMessages(kafka->bootstrap_servers(), kTopic));
  std::vector<int> per_partition(kPartitions, 0);
  for (const connectors::KafkaTestMessage& m : read) ++per_partition[m.partition];
  std::printf("[4/5] consumed    %zu events back from Kafka (per partition: %s)\n", read.size(),
              fmt::format("{}", fmt::join(per_partition, " / ")).c_str());

  {
    SLUICE_ASSIGN_OR_RETURN(Connection admin, Connection::Open(postgres.ConnectionString("postgres")));
    SLUICE_ASSIGN_OR_RETURN(auto existing, admin.Run("SELECT 1 FROM pg_database WHERE datname = $1", {kDatabase}));
    if (existing.empty()) SLUICE_RETURN_IF_ERROR(postgres.CreateDatabase(kDatabase));
  }
  SLUICE_ASSIGN_OR_RETURN(Connection db, Connection::Open(postgres.ConnectionString(kDatabase)));
  SLUICE_RETURN_IF_ERROR(db.Run("DROP TABLE IF EXISTS demo_orders").status());
  SLUICE_RETURN_IF_ERROR(db.Run("CREATE TABLE demo_orders ("
                                "  kafka_partition int NOT NULL,"
                                "  kafka_offset bigint NOT NULL,"
                                "  order_key text,"
                                "  event jsonb NOT NULL,"
                                "  PRIMARY KEY (kafka_partition, kafka_offset))")
                             .status());
  SLUICE_RETURN_IF_ERROR(db.Run("BEGIN").status());
  for (const connectors::KafkaTestMessage& m : read) {
    SLUICE_RETURN_IF_ERROR(db.Run("INSERT INTO demo_orders VALUES ($1, $2, $3, $4::jsonb)",
                                  {std::to_string(m.partition), std::to_string(m.offset), m.key.value_or(""),
                                   m.value.value_or("null")})
                               .status());
  }
  SLUICE_RETURN_IF_ERROR(db.Run("COMMIT").status());
  SLUICE_ASSIGN_OR_RETURN(auto totals,
                          db.Run("SELECT count(*), count(DISTINCT event->>'customer'), "
                                 "sum((event->>'amount')::numeric) FROM demo_orders"));
  std::printf("[5/5] PostgreSQL  inserted %s rows into %s.public.demo_orders in one transaction  (%.1fs)\n\n",
              totals[0][0].c_str(), kDatabase, SecondsSince(start));

  SLUICE_ASSIGN_OR_RETURN(auto by_customer,
                          db.Run("SELECT event->>'customer', count(*), sum((event->>'amount')::numeric) "
                                 "FROM demo_orders GROUP BY 1 ORDER BY 3 DESC, 1"));
  std::printf("  %-10s %6s %10s\n", "customer", "orders", "amount");
  for (const auto& row : by_customer) {
    std::printf("  %-10s %6s %10s\n", row[0].c_str(), row[1].c_str(), row[2].c_str());
  }
  std::printf("  %-10s %6s %10s   (%s customers)\n\n", "total", totals[0][0].c_str(), totals[0][2].c_str(),
              totals[0][1].c_str());

  Clock::time_point stopping = Clock::now();
  SLUICE_RETURN_IF_ERROR(postgres.Stop());
  kafka.reset();
  std::printf("Stopped PostgreSQL and Kafka cleanly in %.1fs; %.1fs in all.\n", SecondsSince(stopping),
              SecondsSince(start));
  std::printf("The PostgreSQL data stays in %s; look at it with\n  sluice postgres-embedded --dir %s\n",
              postgres.data_dir().c_str(), postgres.data_dir().c_str());
  std::printf("then psql with the connection string it prints, dbname=%s. Kafka data lived in memory only.\n",
              kDatabase);
  return Status::OK();
}

}  // namespace

void RegisterDemoCommand(CLI::App& app) {
  auto options = std::make_shared<DemoOptions>();
  CLI::App* command = app.add_subcommand(
      "demo", "Run a short end-to-end demo on an embedded Kafka cluster and an embedded PostgreSQL server");
  command->add_option("--dir", options->dir, "Directory for the demo's state (created if absent)")->capture_default_str();
  command->add_option("--events", options->events, "Number of sample events")->check(CLI::Range(1, 100000))
      ->capture_default_str();
  command->callback([options] {
    Status status = Run(*options);
    if (!status.ok()) {
      std::fprintf(stderr, "sluice demo: %s\n", status.ToString().c_str());
      throw CLI::RuntimeError(1);
    }
  });
}

}  // namespace sluice::cli
