// A change feed's status.json read into values, and those values as Prometheus metrics.
#include "sluice/pipeline/change_feed_status.h"

#include <gtest/gtest.h>

#include "sluice/core/error_classes.h"

namespace sluice::pipeline {
namespace {

// As the feed writes it (src/connectors/pg_change_feed_state.cc), one table a line.
constexpr std::string_view kStatus = R"({"status":"STREAMING","slot_name":"shop_slot","slot_dropped":false,"confirmed_lsn":"16/B374D880","slot_lag_bytes":1024,"slot_lag_seconds":1.500,"tables":[
  {"source":"public.orders","target":"lb_orders_history","status":"STREAMING","replica_identity_full":true,"committed_lsn":"16/B374D848","last_write_ms":1767225600000,"rows":17},
  {"source":"public.Odd \"name\"\\x","target":"lb_odd_name_x_history","status":"SKIPPED","reason":"no rows yet","replica_identity_full":false,"committed_lsn":"0/0","last_write_ms":0,"rows":0}]}
)";

TEST(ChangeFeedStatusTest, ReadsTheFeedAndEveryTable) {
  Result<ChangeFeedStatusView> view = ParseChangeFeedStatus(kStatus);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  EXPECT_EQ(view->status, "STREAMING");
  EXPECT_EQ(view->slot_name, "shop_slot");
  EXPECT_EQ(view->confirmed_lsn, 0x16B374D880u);
  EXPECT_EQ(view->slot_lag_bytes, 1024);
  EXPECT_DOUBLE_EQ(view->slot_lag_seconds, 1.5);
  ASSERT_EQ(view->tables.size(), 2u);
  EXPECT_EQ(view->tables[0].source, "public.orders");
  EXPECT_EQ(view->tables[0].history, "lb_orders_history");
  EXPECT_TRUE(view->tables[0].replica_identity_full);
  EXPECT_EQ(view->tables[0].committed_lsn, 0x16B374D848u);
  EXPECT_EQ(view->tables[0].rows, 17);
  EXPECT_EQ(view->tables[1].source, "public.Odd \"name\"\\x");
  EXPECT_EQ(view->tables[1].reason, "no rows yet");
  EXPECT_FALSE(view->tables[1].replica_identity_full);
}

TEST(ChangeFeedStatusTest, RefusesWhatTheFeedDidNotWrite) {
  for (std::string_view bad : {"", "{", "[]", R"({"status":"STREAMING"})",
                               R"({"status":"S","slot_name":"s","confirmed_lsn":"16","slot_lag_bytes":0,"slot_lag_seconds":0,"tables":[]})",
                               R"({"status":"S","slot_name":"s","confirmed_lsn":"1/123456789","slot_lag_bytes":0,"slot_lag_seconds":0,"tables":[]})",
                               R"({"status":"S","slot_name":"s","confirmed_lsn":"1/G","slot_lag_bytes":0,"slot_lag_seconds":0,"tables":[]})",
                               R"({"status":"S","slot_name":"s","confirmed_lsn":"0/0","slot_lag_bytes":0,"slot_lag_seconds":0,"tables":[{"source":"t"}]})"}) {
    EXPECT_EQ(ParseChangeFeedStatus(bad).status().error_class(), errors::kCdfStateCorrupt) << bad;
  }
}

TEST(ChangeFeedStatusTest, FormatsLsnsAsPostgresDoes) {
  EXPECT_EQ(FormatLsn(0x16B374D880u), "16/B374D880");
  EXPECT_EQ(FormatLsn(0), "0/0");
}

TEST(ChangeFeedStatusTest, RecognizesHistoryTablesOfATarget) {
  EXPECT_TRUE(IsChangeFeedHistoryTable("/w/main/cdc", "/w/main/cdc/lb_orders_history"));
  EXPECT_TRUE(IsChangeFeedHistoryTable("/w/main/cdc", "/w/main/cdc/lb_orders_history_1"));
  EXPECT_TRUE(IsChangeFeedHistoryTable("/w/main/cdc/", "/w/main/./cdc/lb_orders_history"));
  EXPECT_FALSE(IsChangeFeedHistoryTable("/w/main/cdc", "/w/main/cdc/orders"));
  EXPECT_FALSE(IsChangeFeedHistoryTable("/w/main/cdc", "/w/main/other/lb_orders_history"));
}

TEST(ChangeFeedMetricsTest, ExposesEveryFeedAndTableWithEscapedLabels) {
  ChangeFeedSample running{"shop_changes", true, ParseChangeFeedStatus(kStatus).value()};
  ChangeFeedSample never_ran{"billing", false, std::nullopt};
  const ChangeFeedSample samples[] = {running, never_ran};
  const std::string text = ChangeFeedPrometheusText("shop \"eu\"", samples);
  const std::string feed = R"(pipeline="shop \"eu\"",feed="shop_changes")";
  const std::string orders = feed + R"(,table="public.orders",history="lb_orders_history")";
  const std::string odd = feed + R"(,table="public.Odd \"name\"\\x",history="lb_odd_name_x_history")";
  for (const std::string& expected : {
           std::string("# TYPE sluice_change_feed_up gauge\n"),
           "sluice_change_feed_up{" + feed + "} 1\n",
           std::string(R"(sluice_change_feed_up{pipeline="shop \"eu\"",feed="billing"} 0)") + "\n",
           "sluice_change_feed_confirmed_lsn{" + feed + "} 97500059776\n",
           "sluice_change_feed_slot_lag_bytes{" + feed + "} 1024\n",
           "sluice_change_feed_slot_lag_seconds{" + feed + "} 1.5\n",
           "sluice_change_feed_table_rows_captured{" + orders + "} 17\n",
           "sluice_change_feed_table_rows_captured{" + odd + "} 0\n",
           "sluice_change_feed_table_committed_lsn{" + orders + "} 97500059720\n",
           "sluice_change_feed_table_status{" + orders + ",status=\"STREAMING\"} 1\n",
           "sluice_change_feed_table_status{" + odd + ",status=\"SKIPPED\"} 1\n",
       }) {
    EXPECT_NE(text.find(expected), std::string::npos) << expected << "\nin:\n" << text;
  }
  // A feed without a status.json shows only whether it runs.
  EXPECT_EQ(text.find("slot_lag_bytes{pipeline=\"shop \\\"eu\\\"\",feed=\"billing\""), std::string::npos) << text;
  size_t type_lines = 0;
  for (size_t at = text.find("# TYPE"); at != std::string::npos; at = text.find("# TYPE", at + 1)) ++type_lines;
  EXPECT_EQ(type_lines, 7u);
}

TEST(ChangeFeedMetricsTest, NoFeedsNoText) { EXPECT_EQ(ChangeFeedPrometheusText("p", {}), ""); }

TEST(ChangeFeedMetricsTest, EscapesNewlinesInLabelValues) {
  EXPECT_EQ(PrometheusLabelValue("a\nb\\c\"d"), "a\\nb\\\\c\\\"d");
}

}  // namespace
}  // namespace sluice::pipeline
