// `sluice serve` on a real catalog and the Kafka mock cluster: streams created, updated, failing
// and deleted while it runs.
#include "sluice/pipeline/catalog_server.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "pipeline/stream_testing.h"
#include "sluice/connectors/register_formats.h"
#include "sluice/connectors/testing/kafka_fixture.h"
#include "sluice/connectors/testing/postgres_fixture.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/compute.h"
#include "sluice/pipeline/event_log.h"
#include "testing/temp_dir.h"

namespace sluice::pipeline {
namespace {

using std::chrono::milliseconds;

class CatalogServerTest : public testing::KafkaTopicTest {
 protected:
  std::string Definition(const std::string& name, const std::string& topic, bool with_note) const {
    const std::string properties =
        std::string(R"("amount":{"type":"integer"})") + (with_note ? R"(,"note":{"type":["string","null"]})" : "");
    return "name: " + name + "\nsource: {format: kafka, options: {bootstrap_servers: \"" + bootstrap_ +
           "\", subscribe: " + topic + ", starting_offsets: earliest}}\nschema_config:\n  value: {format: json, "
           "schema: '{\"type\":\"object\",\"properties\":{" + properties + "}}'}\n"
           "ingestion_config: {table: " + name + "}\ntrigger: {kind: processing_time, interval: 100 milliseconds}\n";
  }
  std::vector<connectors::KafkaTestMessage> Records(int begin, int end) const {
    std::vector<connectors::KafkaTestMessage> records;
    for (int i = begin; i < end; ++i) {
      connectors::KafkaTestMessage m;
      m.value = "{\"amount\":" + std::to_string(i) + ",\"note\":\"n" + std::to_string(i) + "\"}";
      m.partition = i % 3;
      records.push_back(std::move(m));
    }
    return records;
  }
  // The rows of a stream's table as "amount note" ("-" for a null note, "absent" without the column).
  std::multiset<std::string> Rows(const std::string& table) const {
    std::multiset<std::string> rows;
    if (!std::filesystem::exists(table + "/_delta_log/00000000000000000000.json")) return rows;
    testing::ForEachBatch(table, [&](const RecordBatch& b) {
      ColumnPtr amount = b.ColumnAt("value.amount").value();
      Result<ColumnPtr> note = b.ColumnAt("value.note");
      for (int64_t row = 0; row < b.num_rows(); ++row) {
        rows.insert(FormatValue(*amount, row) + " " + (note.ok() ? FormatValue(**note, row) : "absent"));
      }
    });
    return rows;
  }
  template <typename Condition>
  bool Eventually(Condition condition) {
    for (int i = 0; i < 400; ++i) {
      if (condition()) return true;
      std::this_thread::sleep_for(milliseconds(25));
    }
    return condition();
  }
  std::string ServeStatus() const {
    std::ifstream in(CatalogServer::StatusPath(Warehouse()));
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  bool Contains(const std::string& text, const std::string& part) const { return text.find(part) != std::string::npos; }
  std::string Warehouse() const { return dir_.Join("warehouse"); }

  sluice::testing::TempDir dir_;
  StreamCatalog catalog_{LocalFileSystem(), dir_.Join("warehouse"), &connectors::AllFormatsRegistry()};
};

TEST_F(CatalogServerTest, RunsEveryStreamAndFollowsCreationUpdateFailureAndDeletion) {
  CatalogServerOptions options;
  options.poll_interval = milliseconds(100);
  options.first_backoff = milliseconds(100);
  options.max_backoff = milliseconds(400);
  options.registry = &connectors::AllFormatsRegistry();
  auto server = CatalogServer::Start(Warehouse(), options);
  ASSERT_TRUE(server.ok()) << server.status().ToString();

  // A stream created while it serves is picked up.
  ASSERT_TRUE(catalog_.Create(Definition("main.raw.a", topic_, false)).ok());
  ASSERT_TRUE(connectors::ProduceMessages(bootstrap_, topic_, Records(0, 30)).ok());
  const std::string table_a = Warehouse() + "/main/raw/a";
  ASSERT_TRUE(Eventually([&] { return Rows(table_a).size() == 30; })) << Rows(table_a).size();
  EXPECT_TRUE(Eventually([&] { return (*server)->ready(); }));
  EXPECT_TRUE(Eventually([&] {
    return Contains(ServeStatus(), R"({"kind":"stream","name":"main.raw.a","state":"RUNNING","restarts":0,"last_error":null})");
  })) << ServeStatus();
  EXPECT_TRUE(Contains((*server)->PrometheusText(), "sluice_flow_input_rows_total")) << (*server)->PrometheusText();

  // An update restarts it with the new definition: later rows have the new column.
  ASSERT_TRUE(catalog_.Update(Definition("main.raw.a", topic_, true)).ok());
  std::this_thread::sleep_for(milliseconds(500));
  ASSERT_TRUE(connectors::ProduceMessages(bootstrap_, topic_, Records(30, 36)).ok());
  ASSERT_TRUE(Eventually([&] { return Rows(table_a).size() == 36; })) << Rows(table_a).size();
  std::multiset<std::string> rows = Rows(table_a);
  EXPECT_EQ(rows.count("35 n35"), 1u);
  EXPECT_EQ(rows.count("0 null"), 1u) << "rows before the update keep their shape";

  // A stream whose table cannot be made fails, restarts with a growing back-off, and runs once
  // the cause is gone.
  const std::string blocked = Warehouse() + "/main/raw/b";
  std::filesystem::create_directories(Warehouse() + "/main/raw");
  std::ofstream(blocked) << "not a folder";
  ASSERT_TRUE(catalog_.Create(Definition("main.raw.b", topic_, true)).ok());
  ASSERT_TRUE(Eventually([&] { return Contains(ServeStatus(), R"("name":"main.raw.b","state":"RESTARTING","restarts":2)"); }))
      << ServeStatus();
  EXPECT_FALSE((*server)->ready());
  auto events = EventLog::ReadLines(EventLog::PathFor(Warehouse() + "/_sluice/streams/main.raw.b"));
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  std::string log;
  for (const std::string& line : *events) log += line + "\n";
  EXPECT_TRUE(Contains(log, "\"event_type\":\"error\"")) << log;
  EXPECT_TRUE(Contains(log, "\"status\":\"RESTARTING\"")) << log;
  std::filesystem::remove(blocked);
  ASSERT_TRUE(Eventually([&] { return Contains(ServeStatus(), R"("name":"main.raw.b","state":"RUNNING")"); })) << ServeStatus();
  ASSERT_TRUE(Eventually([&] { return Rows(blocked).size() == 36; })) << Rows(blocked).size();

  // A deleted stream is stopped, so that its deletion finishes.
  Status deleted = catalog_.Delete("main.raw.a", milliseconds(10000));
  ASSERT_TRUE(deleted.ok()) << deleted.ToString();
  ASSERT_TRUE(Eventually([&] { return !Contains(ServeStatus(), "main.raw.a"); })) << ServeStatus();
  EXPECT_FALSE(std::filesystem::exists(table_a));

  (*server)->Stop();
  EXPECT_TRUE(Contains(ServeStatus(), R"({"served":[{"kind":"stream","name":"main.raw.b","state":"STOPPED")")) << ServeStatus();
  EXPECT_FALSE(Contains(ServeStatus(), "RUNNING")) << ServeStatus();
}

// A change feed kept in the catalog (`sluice cdf create`) is run by the server against a real
// PostgreSQL, and stopped when it is deleted from the catalog.
TEST(CatalogServerFeedTest, RunsTheCatalogsChangeFeedsUntilTheyAreDeleted) {
  auto db = connectors::testing::PostgresTestDatabase::Create();
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  ASSERT_TRUE((*db)->Execute("CREATE TABLE items (id bigint PRIMARY KEY, label text); "
                             "ALTER TABLE items REPLICA IDENTITY FULL; INSERT INTO items VALUES (1, 'one')")
                  .ok());
  sluice::testing::TempDir dir;
  const std::string warehouse = dir.Join("warehouse");
  const connectors::EmbeddedPostgres& server = (*db)->server();
  const std::string definition = "name: shop_changes\nhost: \"" + server.host() + "\"\nport: " +
                                 std::to_string(server.port()) + "\nuser: " + server.superuser() + "\ndatabase: " +
                                 (*db)->name() + "\nschema: public\ntarget: main.cdc\nslot_name: served_" +
                                 (*db)->name() + "\nflush_interval: 100 milliseconds\n";
  FeedCatalog feeds(LocalFileSystem(), warehouse, &connectors::AllFormatsRegistry());
  ASSERT_TRUE(feeds.Create(definition).ok());
  EXPECT_EQ(feeds.Create(definition).status().error_class(), errors::kCdfAlreadyExists);
  EXPECT_EQ(feeds.Create("name: bad\nschema: public\nbogus: 1\n").status().error_class(), errors::kInvalidPipeline);

  CatalogServerOptions options;
  options.poll_interval = milliseconds(100);
  options.registry = &connectors::AllFormatsRegistry();
  auto served = CatalogServer::Start(warehouse, options);
  ASSERT_TRUE(served.ok()) << served.status().ToString();
  const std::string history = warehouse + "/main/cdc/lb_items_history";
  auto rows = [&] {
    size_t count = 0;
    // The first commit, not the log directory, which the feed makes a moment before it.
    if (!std::filesystem::exists(history + "/_delta_log/00000000000000000000.json")) return count;
    testing::ForEachBatch(history, [&](const RecordBatch& b) { count += static_cast<size_t>(b.num_rows()); });
    return count;
  };
  for (int i = 0; i < 400 && rows() < 1; ++i) std::this_thread::sleep_for(milliseconds(25));
  ASSERT_EQ(rows(), 1u) << "the initial copy";
  ASSERT_TRUE((*db)->Execute("INSERT INTO items VALUES (2, 'two'); UPDATE items SET label = 'uno' WHERE id = 1").ok());
  // The copy (1 row), the insert and the update's two images.
  for (int i = 0; i < 400 && rows() < 4; ++i) std::this_thread::sleep_for(milliseconds(25));
  EXPECT_EQ(rows(), 4u);
  EXPECT_NE((*served)->StatusJson().find(R"({"kind":"change_feed","name":"shop_changes","state":"RUNNING")"),
            std::string::npos)
      << (*served)->StatusJson();

  ASSERT_TRUE(feeds.Delete("shop_changes").ok());
  EXPECT_EQ(feeds.Delete("shop_changes").error_class(), errors::kCdfNotFound);
  for (int i = 0; i < 200 && (*served)->StatusJson().find("shop_changes") != std::string::npos; ++i) {
    std::this_thread::sleep_for(milliseconds(25));
  }
  EXPECT_EQ((*served)->StatusJson(), R"({"served":[]})");
  (*served)->Stop();
}

}  // namespace
}  // namespace sluice::pipeline
