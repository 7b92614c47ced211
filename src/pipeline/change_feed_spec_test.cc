// `change_feeds:` entries of a pipeline file: their shape, their configuration and what
// ValidatePipeline checks of them.
#include <gtest/gtest.h>

#include "sluice/connectors/pg_change_feed.h"
#include "sluice/connectors/register_formats.h"
#include "sluice/core/error_classes.h"
#include "sluice/pipeline/pipeline_spec.h"

namespace sluice::pipeline {
namespace {

std::string Messages(const std::vector<Status>& problems) {
  std::string text;
  for (const Status& problem : problems) text += problem.ToString() + "\n";
  return text;
}

constexpr std::string_view kFeedAndReader = R"(
name: shop
storage: /var/lib/sluice/shop
warehouse: /var/lib/sluice/warehouse
connections:
  shop_db: {type: postgresql, host: db.example, port: 6543, user: cdc, database: shop}
change_feeds:
  - name: shop_changes
    connection: shop_db
    schema: public
    target: main.cdc
    flush_interval: 250 milliseconds
    slot_name: shop_slot
sinks:
  inventory: {format: foreachBatch, options: {function: apply_inventory}}
  order_copy: {format: delta, table: main.shop.orders_copy}
flows:
  - name: inventory
    source: {format: delta, table: main.cdc.lb_orders_history}
    select: [product_id, "CASE WHEN _pg_change_type IN ('insert','update_postimage') THEN -quantity ELSE quantity END AS delta"]
    sink: inventory
  - name: copy_orders
    source: {format: delta, table: main.cdc.lb_orders_history}
    sink: order_copy
)";

engine::Registry& RegistryWithInventory() {
  static engine::Registry* registry = [] {
    auto* made = new engine::Registry();
    (void)connectors::RegisterAllFormats(made);
    (void)made->RegisterForeachBatch("apply_inventory", [](const RecordBatch&, const engine::BatchContext&) { return Status::OK(); });
    return made;
  }();
  return *registry;
}

TEST(ChangeFeedSpecTest, AnEntryKeepsItsOptionsAndExpandsItsConnection) {
  Result<PipelineSpec> spec = ParsePipelineSpec(kFeedAndReader);
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  ASSERT_EQ(spec->change_feeds.size(), 1u);
  const ChangeFeedSpec& feed = spec->change_feeds[0];
  EXPECT_EQ(feed.name, "shop_changes");
  EXPECT_EQ(feed.options, (std::map<std::string, std::string>{{"connection", "shop_db"},
                                                               {"schema", "public"},
                                                               {"target", "main.cdc"},
                                                               {"flush_interval", "250 milliseconds"},
                                                               {"slot_name", "shop_slot"}}));
  Result<connectors::ChangeFeedConfig> config = spec->ChangeFeedConfigOf(feed);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->schema, "public");
  EXPECT_EQ(config->slot_name, "shop_slot");
  EXPECT_EQ(config->publication_name, "shop_slot");
  EXPECT_EQ(config->flush_interval, std::chrono::milliseconds(250));
  EXPECT_EQ(config->target_directory(), "/var/lib/sluice/warehouse/main/cdc");
  EXPECT_NE(config->conninfo.find("db.example"), std::string::npos) << config->conninfo;
  EXPECT_NE(config->conninfo.find("6543"), std::string::npos) << config->conninfo;
}

TEST(ChangeFeedSpecTest, FlowsMayReadTheHistoryTablesOfTheirPipeline) {
  std::vector<Status> problems = ValidatePipeline(ParsePipelineSpec(kFeedAndReader).value(), RegistryWithInventory());
  EXPECT_TRUE(problems.empty()) << Messages(problems);
}

TEST(ChangeFeedSpecTest, APipelineOfOnlyAChangeFeedIsComplete) {
  Result<PipelineSpec> spec = ParsePipelineSpec(R"(
name: capture
storage: /s
change_feeds:
  - {name: f, host: h, database: shop, schema: public, target: main.cdc}
)");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  std::vector<Status> problems = ValidatePipeline(*spec, RegistryWithInventory());
  EXPECT_TRUE(problems.empty()) << Messages(problems);
  EXPECT_EQ(spec->ChangeFeedConfigOf(spec->change_feeds[0])->slot_name, "sluice_cdf_shop_public");
}

TEST(ChangeFeedSpecTest, UnknownKeysAreProblemsWithTheirPlace) {
  Status status = ParsePipelineSpec(R"(
name: p
storage: /s
change_feeds:
  - name: f
    schema: public
    target: main.cdc
    flush_intervall: 1 second
    warehouse: /elsewhere
  - just a string
)").status();
  ASSERT_EQ(status.error_class(), errors::kInvalidPipeline);
  const std::string text = status.ToString();
  for (std::string_view expected : {"change_feeds[0].flush_intervall: unknown key; expected one of: name, connection",
                                    "change_feeds[0].warehouse: unknown key", "flush_interval",
                                    "change_feeds[1]: expected a map describing a change feed"}) {
    EXPECT_NE(text.find(expected), std::string::npos) << expected << "\nin:\n" << text;
  }
}

TEST(ChangeFeedSpecTest, ValidationFindsBadTargetsConnectionsNamesAndSlots) {
  PipelineSpec spec = ParsePipelineSpec(R"(
name: p
storage: /s
warehouse: /w
sinks:
  history_writer: {format: delta, table: main.cdc.lb_orders_history}
flows:
  - {name: orders, source: {format: rate}, sink: history_writer}
change_feeds:
  - {name: no_target, host: h, database: shop, schema: public}
  - {name: bad_target, host: h, database: shop, schema: public, target: main.cdc.extra}
  - {name: unknown_connection, connection: nowhere_db, schema: public, target: main.cdc}
  - {name: orders, host: h, database: shop, schema: sales, target: main.other}
  - {name: first, host: h, database: shop, schema: public, target: main.cdc, slot_name: shared_slot}
  - {name: first, host: h, database: shop, schema: billing, target: main.cdc2, slot_name: shared_slot}
  - {name: bad_interval, host: h, database: shop, schema: public, target: main.cdc3, slot_name: s3, flush_interval: soon}
)").value();
  std::string text = Messages(ValidatePipeline(spec, RegistryWithInventory()));
  for (std::string_view expected :
       {"CDF_INVALID_OPTIONS: change feed 'no_target': a change feed needs `target`",
        "CDF_INVALID_OPTIONS: change feed 'bad_target': target `main.cdc.extra` is not of the form catalog.schema",
        "CONNECTION_NOT_FOUND: change feed 'unknown_connection'", "two flows, streams or change feeds are named 'orders'",
        "two flows, streams or change feeds are named 'first'",
        "change feed 'first' uses the replication slot shared_slot of change feed 'first'",
        "change feed 'bad_interval'", "sink 'history_writer' writes /w/main/cdc/lb_orders_history, a history table"}) {
    EXPECT_NE(text.find(expected), std::string::npos) << expected << "\nin:\n" << text;
  }
}

}  // namespace
}  // namespace sluice::pipeline
