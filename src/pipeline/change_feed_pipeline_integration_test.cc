// A pipeline downstream of a change feed, as in the inventory example of docs/change-feed.md: the
// feed captures `products` and `orders` of a real PostgreSQL into Delta history tables, and a flow
// reads `lb_orders_history` as a Delta stream and keeps `ops.inventory_levels` in the same database
// equal to stock minus what the current orders hold, through inserts, edits (quantity or product
// changed), cancellations (deletes) and a restart of the pipeline in the middle.
#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <thread>

#include "delta/scan_testing.h"
#include "delta/spark_testing.h"
#include "sluice/connectors/register_formats.h"
#include "sluice/connectors/testing/postgres_fixture.h"
#include "sluice/core/error_classes.h"
#include "sluice/delta/scan.h"
#include "sluice/delta/snapshot.h"
#include "sluice/connectors/pg_change_feed.h"
#include "sluice/pipeline/event_log.h"
#include "sluice/pipeline/pipeline_runner.h"
#include "testing/temp_dir.h"

namespace sluice::pipeline {
namespace {

using connectors::testing::PostgresTestDatabase;
using connectors::testing::Rows;

// What on hand should be: stock minus every current order's quantity.
constexpr std::string_view kExpectedLevels =
    "SELECT p.product_id, p.stock - coalesce(sum(o.quantity), 0) FROM products p "
    "LEFT JOIN orders o USING (product_id) GROUP BY p.product_id, p.stock ORDER BY 1";
constexpr std::string_view kLevels = "SELECT product_id, on_hand FROM ops.inventory_levels ORDER BY 1";

class ChangeFeedPipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = PostgresTestDatabase::Create();
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(db).value();
    ASSERT_TRUE(db_->Execute(R"(
      CREATE TABLE products (product_id bigint PRIMARY KEY, stock bigint NOT NULL);
      CREATE TABLE orders (order_id bigint PRIMARY KEY, product_id bigint NOT NULL, quantity bigint NOT NULL);
      ALTER TABLE products REPLICA IDENTITY FULL;
      ALTER TABLE orders REPLICA IDENTITY FULL;
      CREATE TABLE notes (note_id bigint PRIMARY KEY, text text);
      INSERT INTO notes VALUES (1, 'key-only identity');
      INSERT INTO products VALUES (1, 100), (2, 50), (3, 10);
      CREATE SCHEMA ops;
      CREATE TABLE ops.inventory_levels (product_id bigint PRIMARY KEY, on_hand bigint NOT NULL);
      INSERT INTO ops.inventory_levels SELECT product_id, stock FROM products;
      CREATE TABLE ops.applied_batches (batch_id bigint PRIMARY KEY);
    )").ok());
    registry_ = std::make_unique<engine::Registry>();
    ASSERT_TRUE(connectors::RegisterAllFormats(registry_.get()).ok());
    ASSERT_TRUE(registry_
                    ->RegisterForeachBatch("apply_inventory",
                                           [this](const RecordBatch& batch, const engine::BatchContext& context) {
                                             return Apply(batch, context.batch_id);
                                           })
                    .ok());
    const connectors::EmbeddedPostgres& server = db_->server();
    yaml_ = R"(
name: inventory
storage: )" + dir_.Join("storage") + R"(
warehouse: )" + dir_.Join("warehouse") + R"(
connections:
  shop_db: {type: postgresql, host: ")" + server.host() + R"(", port: )" + std::to_string(server.port()) +
            R"(, user: )" + server.superuser() + R"(, database: )" + db_->name() + R"(}
change_feeds:
  - name: shop_changes
    connection: shop_db
    schema: public
    target: main.cdc
    slot_name: inventory_)" + db_->name() + R"(
    flush_interval: 100 milliseconds
sinks:
  levels: {format: foreachBatch, options: {function: apply_inventory}}
flows:
  - name: inventory
    source: {format: delta, table: main.cdc.lb_orders_history}
    select:
      - product_id
      - "CASE WHEN _pg_change_type IN ('insert','update_postimage') THEN -quantity ELSE quantity END AS delta"
    sink: levels
    trigger: {kind: processing_time, interval: 100 milliseconds}
)";
  }

  // The foreachBatch function: every batch's deltas added to on hand, once per batch id: one
  // statement records the id and updates the levels only when the id was new, so a batch replayed
  // after a crash changes nothing.
  Status Apply(const RecordBatch& batch, int64_t batch_id) {
    const int product_index = batch.schema()->FieldIndex("product_id");
    const int delta_index = batch.schema()->FieldIndex("delta");
    if (product_index < 0 || delta_index < 0) {
      return Status::Error(errors::kInvalidArgument, "apply_inventory needs product_id and delta");
    }
    std::map<int64_t, int64_t> deltas;
    for (int64_t row = 0; row < batch.num_rows(); ++row) {
      deltas[batch.column(product_index)->Value<int64_t>(row)] += batch.column(delta_index)->Value<int64_t>(row);
    }
    std::string sql = "WITH fresh AS (INSERT INTO ops.applied_batches VALUES (" + std::to_string(batch_id) +
                      ") ON CONFLICT DO NOTHING RETURNING batch_id) ";
    if (deltas.empty()) {
      sql += "SELECT count(*) FROM fresh";
    } else {
      std::string values;
      for (const auto& [product, delta] : deltas) {
        values += (values.empty() ? "(" : ", (") + std::to_string(product) + ", " + std::to_string(delta) + ")";
      }
      sql += "UPDATE ops.inventory_levels l SET on_hand = l.on_hand + d.delta FROM (VALUES " + values +
             ") AS d(product_id, delta) WHERE l.product_id = d.product_id AND EXISTS (SELECT 1 FROM fresh)";
    }
    std::unique_ptr<PGconn, decltype(&PQfinish)> conn(PQconnectdb(db_->connection_string().c_str()), &PQfinish);
    std::unique_ptr<PGresult, decltype(&PQclear)> result(PQexec(conn.get(), sql.c_str()), &PQclear);
    ExecStatusType status = PQresultStatus(result.get());
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
      return Status::Error(errors::kPgQueryFailed, PQerrorMessage(conn.get()));
    }
    return Status::OK();
  }

  Result<std::unique_ptr<PipelineRun>> StartPipeline() {
    SLUICE_ASSIGN_OR_RETURN(PipelineSpec spec, ParsePipelineSpec(yaml_));
    RunOptions options;
    options.registry = registry_.get();
    return PipelineRun::Start(std::move(spec), options);
  }

  // Waits until inventory_levels equals what the source tables say, or 20 seconds.
  void ExpectLevelsCatchUp(const std::string& round) {
    Rows expected, levels;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      expected = db_->Query(kExpectedLevels).value();
      levels = db_->Query(kLevels).value();
      if (levels == expected) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << round << ": inventory_levels did not catch up";
    for (size_t i = 0; i < expected.size(); ++i) {
      EXPECT_EQ(levels.size() > i ? levels[i] : std::vector<std::string>{}, expected[i]) << round << " row " << i;
    }
  }

  // The pipeline's event log, one event a line.
  std::string Events() {
    Result<std::vector<std::string>> lines = EventLog::ReadLines(EventLog::PathFor(dir_.Join("storage")));
    std::string text;
    for (const std::string& line : lines.value()) text += line + "\n";
    return text;
  }

  testing::TempDir dir_;
  std::unique_ptr<PostgresTestDatabase> db_;
  std::unique_ptr<engine::Registry> registry_;
  std::string yaml_;
};

TEST_F(ChangeFeedPipelineTest, InventoryLevelsFollowOrdersThroughEditsCancellationsAndARestart) {
  auto run = StartPipeline();
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  // orders is still empty, so its history table does not exist yet: the flow waits for it.
  ASSERT_EQ((*run)->flows().size(), 1u);
  EXPECT_EQ((*run)->flows()[0].state, "WAITING");
  ASSERT_EQ((*run)->change_feeds().size(), 1u);
  EXPECT_EQ((*run)->change_feeds()[0].state, "RUNNING");
  EXPECT_EQ((*run)->change_feeds()[0].target, "main.cdc");

  ASSERT_TRUE(db_->Execute("INSERT INTO orders VALUES (1, 1, 5), (2, 1, 3), (3, 2, 7)").ok());
  ASSERT_TRUE(db_->Execute("INSERT INTO orders VALUES (4, 3, 2); INSERT INTO orders VALUES (5, 2, 1)").ok());
  ExpectLevelsCatchUp("inserts");
  EXPECT_EQ((*run)->flows()[0].state, "RUNNING");

  ASSERT_TRUE(db_->Execute("UPDATE orders SET quantity = 9 WHERE order_id = 1").ok());
  ASSERT_TRUE(db_->Execute("UPDATE orders SET product_id = 3 WHERE order_id = 2").ok());
  ASSERT_TRUE(db_->Execute("UPDATE orders SET product_id = 1, quantity = quantity + 1 WHERE product_id = 2").ok());
  ExpectLevelsCatchUp("edits");

  const std::string metrics = (*run)->PrometheusText();
  for (std::string_view expected :
       {"sluice_change_feed_up{pipeline=\"inventory\",feed=\"shop_changes\"} 1",
        "sluice_change_feed_table_rows_captured{pipeline=\"inventory\",feed=\"shop_changes\",table=\"public.orders\","
        "history=\"lb_orders_history\"} ",
        "sluice_change_feed_table_status{pipeline=\"inventory\",feed=\"shop_changes\",table=\"public.products\","
        "history=\"lb_products_history\",status=\"STREAMING\"} 1",
        "sluice_change_feed_confirmed_lsn{pipeline=\"inventory\",feed=\"shop_changes\"} "}) {
    EXPECT_NE(metrics.find(expected), std::string::npos) << expected << "\nin:\n" << metrics;
  }

  (*run)->Stop();
  ASSERT_TRUE((*run)->Wait().ok());
  EXPECT_EQ((*run)->change_feeds()[0].state, "STOPPED");
  // The feed's figures (the progress line's) outlive it: every history row, the snapshots of
  // notes (1) and products (3) and orders' changes (5 inserts, 4 updates of one row each: a pre-
  // and a post-image).
  int64_t history_rows = 0;
  for (const char* table : {"orders", "products", "notes"}) {
    const std::string path = dir_.Join(std::string("warehouse/main/cdc/lb_") + table + "_history");
    history_rows += delta::Snapshot::Load(LocalFileSystem(), path).value()->num_records().value();
  }
  EXPECT_EQ(history_rows, 1 + 3 + 5 + 8);
  EXPECT_EQ((*run)->change_feeds()[0].history_rows, history_rows);
  EXPECT_GE((*run)->change_feeds()[0].slot_lag_bytes, 0);
  run->reset();
  // Changes while the pipeline is down wait in the replication slot.
  ASSERT_TRUE(db_->Execute("DELETE FROM orders WHERE order_id = 3").ok());
  ASSERT_TRUE(db_->Execute("INSERT INTO orders VALUES (6, 2, 4), (7, 3, 1)").ok());
  ASSERT_TRUE(db_->Execute("UPDATE orders SET product_id = 2, quantity = 2 WHERE order_id = 4").ok());

  run = StartPipeline();
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ((*run)->flows()[0].state, "RUNNING");
  ExpectLevelsCatchUp("changes made during the restart");

  ASSERT_TRUE(db_->Execute("BEGIN; DELETE FROM orders WHERE product_id = 1; "
                           "INSERT INTO orders VALUES (8, 1, 20), (9, 3, 3); "
                           "UPDATE orders SET quantity = quantity * 2 WHERE order_id IN (6, 7); COMMIT")
                  .ok());
  ASSERT_TRUE(db_->Execute("DELETE FROM orders WHERE order_id = 9").ok());
  ExpectLevelsCatchUp("cancellations");
  (*run)->Stop();
  ASSERT_TRUE((*run)->Wait().ok());

  const std::string events = Events();
  EXPECT_EQ(events.find("table public.orders has no REPLICA IDENTITY FULL"), std::string::npos) << events;
  for (std::string_view expected :
       {"change feed 'shop_changes' is RUNNING: public -> main.cdc (", "\"source\":\"public.products\"",
        "\"history\":\"lb_products_history\"",
        "table public.notes has no REPLICA IDENTITY FULL", "flow 'inventory' is WAITING for ",
        "change feed 'shop_changes' is STOPPED"}) {
    EXPECT_NE(events.find(expected), std::string::npos) << expected << "\nin:\n" << events;
  }
}

// The inventory example as SQL: the orders' history aggregated per product, upserted into
// PostgreSQL (update mode, keyed by the group) and kept whole in a Delta table (complete mode),
// through inserts, edits, cancellations and a restart; both equal PostgreSQL's own GROUP BY.
TEST_F(ChangeFeedPipelineTest, AnAggregationInSqlKeepsPostgresAndDeltaEqualToTheSourcesGroupBy) {
  constexpr std::string_view kSql =
      "SELECT product_id, sum(CASE WHEN _pg_change_type IN ('insert', 'update_postimage') THEN quantity "
      "WHEN _pg_change_type IN ('delete', 'update_preimage') THEN -quantity ELSE 0 END) AS ordered, "
      "max(_pg_lsn) AS last_lsn FROM STREAM(main.cdc.lb_orders_history) GROUP BY product_id";
  yaml_ = yaml_.substr(0, yaml_.find("sinks:")) + R"(sinks:
  ordered_db: {format: postgresql, options: {connection: shop_db, dbtable: ops.ordered}}
  ordered_lake: {format: delta, table: main.ops.ordered}
flows:
  - name: ordered_in_postgres
    sql: ")" + std::string(kSql) + R"("
    sink: ordered_db
    output_mode: update
    trigger: {kind: processing_time, interval: 100 milliseconds}
  - name: ordered_in_delta
    sql: ")" + std::string(kSql) + R"("
    sink: ordered_lake
    output_mode: complete
    trigger: {kind: processing_time, interval: 100 milliseconds}
)";
  constexpr std::string_view kExpected = "SELECT product_id, sum(quantity) FROM orders GROUP BY 1 ORDER BY 1";
  constexpr std::string_view kOrdered = "SELECT product_id, ordered FROM ops.ordered WHERE ordered <> 0 ORDER BY 1";
  auto catch_up = [&](const std::string& round) {
    Rows expected, ordered;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      expected = db_->Query(kExpected).value();
      Result<Rows> got = db_->Query(kOrdered);
      if (got.ok() && *got == expected) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << round << ": ops.ordered did not catch up";
  };

  auto run = StartPipeline();
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  ASSERT_TRUE(db_->Execute("INSERT INTO orders VALUES (1, 1, 5), (2, 1, 3), (3, 2, 7), (4, 3, 2)").ok());
  catch_up("inserts");
  ASSERT_TRUE(db_->Execute("UPDATE orders SET quantity = 9 WHERE order_id = 1").ok());
  ASSERT_TRUE(db_->Execute("UPDATE orders SET product_id = 3 WHERE order_id = 2").ok());
  catch_up("edits");
  (*run)->Stop();
  ASSERT_TRUE((*run)->Wait().ok());
  run->reset();

  ASSERT_TRUE(db_->Execute("DELETE FROM orders WHERE order_id = 3").ok());
  ASSERT_TRUE(db_->Execute("INSERT INTO orders VALUES (6, 2, 4), (7, 3, 1)").ok());
  run = StartPipeline();
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  ASSERT_TRUE(db_->Execute("BEGIN; DELETE FROM orders WHERE product_id = 1; INSERT INTO orders VALUES (8, 1, 20); "
                           "UPDATE orders SET quantity = quantity * 2 WHERE order_id IN (6, 7); COMMIT")
                  .ok());
  catch_up("cancellations after a restart");
  // The group key is the table's primary key: one row per product.
  EXPECT_EQ(db_->Query("SELECT count(*) = count(DISTINCT product_id) FROM ops.ordered").value(),
            (Rows{{"t"}}));
  EXPECT_EQ(db_->Query("SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND "
                       "a.attnum = ANY(i.indkey) WHERE i.indrelid = 'ops.ordered'::regclass AND i.indisprimary")
                .value(),
            (Rows{{"product_id"}}));
  (*run)->Stop();
  ASSERT_TRUE((*run)->Wait().ok());

  // The Delta table holds every group after the last batch: the same as PostgreSQL's table.
  auto snapshot = delta::Snapshot::Load(LocalFileSystem(), dir_.Join("warehouse/main/ops/ordered"));
  ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString();
  auto scan = delta::TableScan::Open(*snapshot, {.columns = {"product_id", "ordered"}});
  ASSERT_TRUE(scan.ok()) << scan.status().ToString();
  Rows lake;
  while (true) {
    Result<BatchPtr> batch = (*scan)->Next();
    ASSERT_TRUE(batch.ok()) << batch.status().ToString();
    if (*batch == nullptr) break;
    for (int64_t row = 0; row < (*batch)->num_rows(); ++row) {
      lake.push_back({std::to_string((*batch)->column(0)->Value<int64_t>(row)),
                      std::to_string((*batch)->column(1)->Value<int64_t>(row))});
    }
  }
  std::sort(lake.begin(), lake.end());
  EXPECT_EQ(lake, db_->Query("SELECT product_id, ordered FROM ops.ordered ORDER BY 1").value());

  // Spark with Delta Lake reads both tables sluice wrote as sluice reads them: the aggregate's and
  // the orders' history (its changes, their kinds and positions).
  const std::string ordered = "sql:SELECT product_id, ordered FROM delta.`" + dir_.Join("warehouse/main/ops/ordered") + "`";
  const std::string history_path = dir_.Join("warehouse/main/cdc/lb_orders_history");
  const std::vector<std::string> kHistoryColumns = {"order_id", "product_id", "quantity", "_pg_change_type", "_pg_lsn"};
  std::string history = "sql:SELECT ";
  for (const std::string& column : kHistoryColumns) history += column + (column == kHistoryColumns.back() ? "" : ", ");
  history += " FROM delta.`" + history_path + "`";
  std::map<std::string, std::vector<std::string>> spark = delta::testing::RunSpark({ordered, history});
  std::vector<std::string> ordered_rows;
  for (const std::vector<std::string>& row : lake) ordered_rows.push_back("[" + row[0] + "," + row[1] + "]");
  std::sort(ordered_rows.begin(), ordered_rows.end());
  EXPECT_EQ(spark[ordered], ordered_rows);
  const std::vector<std::string> history_rows = delta::testing::ScannedLines(
      delta::Snapshot::Load(LocalFileSystem(), history_path).value(), {.columns = kHistoryColumns},
      delta::testing::JsonRow);
  EXPECT_FALSE(history_rows.empty());
  EXPECT_EQ(spark[history], history_rows);
}

// The declarative-pipelines example of the change feed's page as a pipeline file: inventory
// adjustments from the orders' history, inventory levels grouped from them with expect_or_drop.
TEST_F(ChangeFeedPipelineTest, TheDeclarativePipelineExampleRunsAsMaterializedViews) {
  yaml_ = yaml_.substr(0, yaml_.find("sinks:")) + R"(materialized_views:
  - name: main.ops.inventory_adjustments
    sql: >
      SELECT product_id,
             CASE WHEN _pg_change_type IN ('insert', 'update_postimage') THEN -quantity
                  WHEN _pg_change_type IN ('delete', 'update_preimage') THEN quantity ELSE 0 END AS delta,
             _timestamp
      FROM main.cdc.lb_orders_history
    trigger: {kind: processing_time, interval: 100 milliseconds}
  - name: main.ops.inventory_levels
    sql: SELECT product_id, sum(delta) AS on_hand FROM main.ops.inventory_adjustments GROUP BY product_id
    expectations:
      - {name: non_negative_stock, expect_or_drop: on_hand >= 0}
    trigger: {kind: processing_time, interval: 100 milliseconds}
)";
  // What the view should hold: every product ever ordered (a group stays when its orders are all
  // gone, at 0) whose current orders sum to nothing; the others' on hand is negative here, and
  // dropped by the expectation. Every product of the table is ordered in the first round.
  constexpr std::string_view kExpected =
      "SELECT p.product_id, -coalesce(sum(o.quantity), 0) FROM products p LEFT JOIN orders o USING (product_id) "
      "GROUP BY 1 HAVING -coalesce(sum(o.quantity), 0) >= 0 ORDER BY 1";
  auto levels = [&]() -> Rows {
    Rows rows;
    auto snapshot = delta::Snapshot::Load(LocalFileSystem(), dir_.Join("warehouse/main/ops/inventory_levels"));
    if (!snapshot.ok()) return {{"no table yet"}};
    auto scan = delta::TableScan::Open(*snapshot, {.columns = {"product_id", "on_hand"}});
    if (!scan.ok()) return {{scan.status().ToString()}};
    while (true) {
      Result<BatchPtr> batch = (*scan)->Next();
      if (!batch.ok()) return {{batch.status().ToString()}};
      if (*batch == nullptr) break;
      for (int64_t row = 0; row < (*batch)->num_rows(); ++row) {
        rows.push_back({std::to_string((*batch)->column(0)->Value<int64_t>(row)),
                        std::to_string((*batch)->column(1)->Value<int64_t>(row))});
      }
    }
    std::sort(rows.begin(), rows.end());
    return rows;
  };
  auto catch_up = [&](const std::string& round) {
    Rows expected, got;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      expected = db_->Query(kExpected).value();
      got = levels();
      if (got == expected) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << round << ": inventory_levels did not catch up";
    EXPECT_EQ(got, expected);
  };

  auto run = StartPipeline();
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  ASSERT_TRUE(db_->Execute("INSERT INTO orders VALUES (1, 1, 5), (2, 2, 3), (3, 2, 7), (4, 3, 2)").ok());
  ASSERT_TRUE(db_->Execute("DELETE FROM orders WHERE order_id = 1").ok());
  ASSERT_TRUE(db_->Execute("INSERT INTO orders VALUES (5, 1, 0)").ok());
  catch_up("inserts and a cancellation");
  EXPECT_EQ(levels(), (Rows{{"1", "0"}}));
  ASSERT_TRUE(db_->Execute("UPDATE orders SET quantity = 0 WHERE product_id = 2").ok());
  ASSERT_TRUE(db_->Execute("DELETE FROM orders WHERE product_id = 3").ok());
  catch_up("edits");
  EXPECT_EQ(levels(), (Rows{{"1", "0"}, {"2", "0"}, {"3", "0"}}));
  (*run)->Stop();
  ASSERT_TRUE((*run)->Wait().ok());
  const std::string events = Events();
  EXPECT_NE(events.find("\"name\":\"non_negative_stock\""), std::string::npos) << events;
}

TEST_F(ChangeFeedPipelineTest, AFeedThatCannotStartFailsTheRunAndSaysWhy) {
  const std::string user = "user: " + db_->server().superuser();
  yaml_.replace(yaml_.find(user), user.size(), "user: no_such_role");
  auto run = StartPipeline();
  ASSERT_FALSE(run.ok());
  EXPECT_NE(run.status().ToString().find("change feed 'shop_changes'"), std::string::npos) << run.status().ToString();
  const std::string events = Events();
  EXPECT_NE(events.find("\"level\":\"ERROR\""), std::string::npos) << events;
  EXPECT_NE(events.find("no_such_role"), std::string::npos) << events;
}

// The product ids of the Delta table at `path`, sorted (a table not made yet: none).
std::vector<int64_t> ProductIds(const std::string& path) {
  std::vector<int64_t> ids;
  auto snapshot = delta::Snapshot::Load(LocalFileSystem(), path);
  if (!snapshot.ok()) return ids;
  auto scan = delta::TableScan::Open(*snapshot, {.columns = {"product_id"}}).value();
  while (BatchPtr batch = scan->Next().value()) {
    for (int64_t row = 0; row < batch->num_rows(); ++row) ids.push_back(batch->column(0)->Value<int64_t>(row));
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

// A column added in PostgreSQL makes the feed copy `products` again into its history table (an
// overwrite): the flow copying that history into a Delta table starts over by itself — a warning
// event says why — and the copy holds each product once; with on_source_reset: fail the flow fails.
TEST_F(ChangeFeedPipelineTest, AFlowReadingAReSnapshottedHistoryTableStartsOverOrFailsWhenAskedTo) {
  for (const std::string on_reset : {"", "fail"}) {
    SCOPED_TRACE("on_source_reset: " + on_reset);
    const std::string copy = dir_.Join("warehouse/main/mart/products_" + (on_reset.empty() ? "reset" : on_reset));
    std::string yaml = yaml_.substr(0, yaml_.find("sinks:")) + "sinks:\n  copy: {format: delta, options: {path: " +
                       copy + "}}\nflows:\n  - name: products_copy\n    source: {format: delta, table: "
                       "main.cdc.lb_products_history}\n    select: [product_id, stock]\n    sink: copy\n"
                       "    trigger: {kind: processing_time, interval: 100 milliseconds}\n" +
                       (on_reset.empty() ? "" : "    on_source_reset: " + on_reset + "\n");
    const std::string storage = dir_.Join("storage-" + (on_reset.empty() ? std::string("reset") : on_reset));
    yaml.replace(yaml.find(dir_.Join("storage")), dir_.Join("storage").size(), storage);
    ASSERT_TRUE(db_->Execute("DROP TABLE IF EXISTS products; CREATE TABLE products (product_id bigint PRIMARY KEY, "
                             "stock bigint NOT NULL); ALTER TABLE products REPLICA IDENTITY FULL; "
                             "INSERT INTO products VALUES (1, 100), (2, 50), (3, 10)")
                    .ok());
    std::filesystem::remove_all(dir_.Join("warehouse/main/cdc"));
    auto spec = ParsePipelineSpec(yaml);
    ASSERT_TRUE(spec.ok()) << spec.status().ToString();
    RunOptions options;
    options.registry = registry_.get();
    auto run = PipelineRun::Start(*spec, options);
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    auto wait_for = [&](const std::vector<int64_t>& ids) {
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (ProductIds(copy) != ids && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      return ProductIds(copy);
    };
    ASSERT_EQ(wait_for({1, 2, 3}), (std::vector<int64_t>{1, 2, 3}));

    ASSERT_TRUE(db_->Execute("ALTER TABLE products ADD COLUMN note text; INSERT INTO products VALUES (4, 5, 'new')").ok());
    if (on_reset.empty()) {
      EXPECT_EQ(wait_for({1, 2, 3, 4}), (std::vector<int64_t>{1, 2, 3, 4})) << "every product once, from the new copy";
      (*run)->Stop();
      Status ended = (*run)->Wait();
      EXPECT_TRUE(ended.ok()) << ended.ToString();
    } else {
      Status ended = (*run)->Wait();
      EXPECT_EQ(ended.error_class(), errors::kDeltaSourceDataDeleted) << ended.ToString();
      EXPECT_EQ(ProductIds(copy), (std::vector<int64_t>{1, 2, 3}));
    }
    std::string events;
    for (const std::string& line : EventLog::ReadLines(EventLog::PathFor(storage)).value()) {
      events += line + "\n";
    }
    EXPECT_EQ(events.find("\"source_reset\"") != std::string::npos, on_reset.empty()) << events;
    run->reset();
    ASSERT_TRUE(connectors::DropChangeFeedSlot(spec->ChangeFeedConfigOf(spec->change_feeds[0]).value()).ok());
  }
}

}  // namespace
}  // namespace sluice::pipeline
