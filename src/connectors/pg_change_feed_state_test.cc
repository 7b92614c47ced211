// The change feed's persisted state: state.json round-trips, refuses what sluice did not write,
// and history table names never collide.
#include <gtest/gtest.h>

#include <set>

#include "pg_change_feed_internal.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/file_system.h"
#include "sluice/core/path_names.h"
#include "testing/temp_dir.h"

namespace sluice::connectors::cdf {
namespace {

FeedState SampleState() {
  FeedState state;
  state.slot_name = "sluice_cdf_shop_public";
  state.commit_lsn = 0x16B374D848;
  state.end_lsn = 0x16B374D880;
  state.next_sort_by = 4242;
  TableState orders;
  orders.oid = 16384;
  orders.source_schema = "public";
  orders.source_name = "Orders \"EU\"";
  orders.history_name = "lb_orders_history";
  orders.columns = {{"id", 23, -1}, {"amount", 1700, 655366}};
  orders.replica_identity = 'f';
  orders.committed_lsn = 0x16B374D848;
  orders.rows = 17;
  orders.last_write_ms = 1700000000000;
  state.tables.push_back(orders);
  TableState keys;
  keys.oid = 16390;
  keys.source_schema = "public";
  keys.source_name = "k";
  keys.history_name = "lb_k_history";
  keys.replica_identity = 'd';
  keys.reason = "REPLICA IDENTITY is not FULL";
  state.tables.push_back(keys);
  return state;
}

TEST(ChangeFeedStateTest, StateRoundTripsThroughItsFile) {
  sluice::testing::TempDir dir;
  auto fs = LocalFileSystem();
  FeedState written = SampleState();
  ASSERT_TRUE(WriteState(*fs, dir.Join("state.json"), written).ok());
  auto read = ReadState(*fs, dir.Join("state.json"));
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_TRUE(read->has_value());
  const FeedState& state = **read;
  EXPECT_EQ(state.slot_name, written.slot_name);
  EXPECT_FALSE(state.slot_dropped);
  EXPECT_EQ(state.commit_lsn, written.commit_lsn);
  EXPECT_EQ(state.end_lsn, written.end_lsn);
  EXPECT_EQ(state.next_sort_by, 4242);
  ASSERT_EQ(state.tables.size(), 2u);
  EXPECT_EQ(state.tables[0].source_name, "Orders \"EU\"");
  EXPECT_EQ(state.tables[0].columns, written.tables[0].columns);
  EXPECT_EQ(state.tables[0].replica_identity, 'f');
  EXPECT_EQ(state.tables[0].rows, 17);
  EXPECT_EQ(state.tables[1].reason, "REPLICA IDENTITY is not FULL");
}

TEST(ChangeFeedStateTest, AMissingFileIsNoStateAndAForeignOneIsCorrupt) {
  sluice::testing::TempDir dir;
  auto fs = LocalFileSystem();
  auto missing = ReadState(*fs, dir.Join("state.json"));
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());

  for (const char* text : {"not json", "{}", "{\"slot_name\":1}",
                           "{\"slot_name\":\"s\",\"slot_dropped\":false,\"commit_lsn\":1,\"end_lsn\":1,"
                           "\"next_sort_by\":1,\"tables\":[{\"oid\":5000000000}]}"}) {
    ASSERT_TRUE(fs->AtomicWrite(dir.Join("state.json"), text).ok());
    auto corrupt = ReadState(*fs, dir.Join("state.json"));
    ASSERT_FALSE(corrupt.ok()) << text;
    EXPECT_EQ(corrupt.status().error_class(), "CDF_STATE_CORRUPT") << text;
  }
}

TableState TableNamed(std::string history_name) {
  TableState table;
  table.source_schema = "s";
  table.source_name = "t";
  table.history_name = std::move(history_name);
  return table;
}

TEST(ChangeFeedStateTest, HistoryNamesTakeTheFirstFreeSuffix) {
  sluice::testing::TempDir dir;
  auto fs = LocalFileSystem();
  const std::string claims = dir.path() + "/_change_feeds/history-names";
  FeedState state;
  state.slot_name = "feed_a";
  EXPECT_EQ(ClaimHistoryName(*fs, claims, state, "Orders").value(), "lb_orders_history");
  state.tables.push_back(TableNamed("lb_orders_history"));
  EXPECT_EQ(ClaimHistoryName(*fs, claims, state, "orders").value(), "lb_orders_history_1");
  state.tables.push_back(TableNamed("lb_orders_history_1"));
  EXPECT_EQ(ClaimHistoryName(*fs, claims, state, "ORDERS").value(), "lb_orders_history_2");
  EXPECT_EQ(ClaimHistoryName(*fs, claims, state, "items").value(), "lb_items_history");
  EXPECT_EQ(fs->ReadFile(claims + "/lb_items_history").value(), "feed_a");
}

// A PostgreSQL table may be named anything, "../../victim" included: its history table's name is
// a path name whatever it is called, and distinct from its neighbours'; a state file holding a
// name that leaves the target folder is corrupt.
TEST(ChangeFeedStateTest, HistoryNamesOfAnyTableNameStayInTheTargetFolder) {
  sluice::testing::TempDir dir;
  auto fs = LocalFileSystem();
  const std::string claims = dir.path() + "/_change_feeds/history-names";
  FeedState state;
  state.slot_name = "feed_a";
  std::set<std::string> names;
  using std::string_view_literals::operator""sv;
  for (std::string_view table : {"../../victim"sv, "a/b"sv, ".."sv, "."sv, "x y"sv, "Été"sv, "nul\0l"sv,
                                 "back\\slash"sv, "a_b"sv, "a-b"sv, "a.b"sv}) {
    auto name = ClaimHistoryName(*fs, claims, state, table);
    ASSERT_TRUE(name.ok()) << name.status().ToString();
    EXPECT_EQ(PathNameProblem(*name), "") << *name;
    EXPECT_TRUE(names.insert(*name).second) << *name << " given twice";
    state.tables.push_back(TableNamed(*name));
  }
  EXPECT_TRUE(names.count("lb_______victim_history")) << "dots and slashes become underscores";
  EXPECT_TRUE(names.count("lb_a_b_history") && names.count("lb_a_b_history_1") && names.count("lb_a_b_history_2"));

  for (std::string_view bad : {"../lb_x_history", "a/b", "..", ""}) {
    FeedState written = SampleState();
    written.tables[0].history_name = bad;
    ASSERT_TRUE(WriteState(*fs, dir.Join("state.json"), written).ok());
    auto read = ReadState(*fs, dir.Join("state.json"));
    ASSERT_FALSE(read.ok()) << bad;
    EXPECT_EQ(read.status().error_class(), "CDF_STATE_CORRUPT") << bad;
  }
  // An older name with a space still reads.
  FeedState spaced = SampleState();
  spaced.tables[0].history_name = "lb_my orders_history";
  ASSERT_TRUE(WriteState(*fs, dir.Join("state.json"), spaced).ok());
  EXPECT_TRUE(ReadState(*fs, dir.Join("state.json")).ok());
}

// Two feeds of one target (schemas sales and marketing, each with a users table) never share a
// history table: the second takes the next free suffix, whatever order they start in.
TEST(ChangeFeedStateTest, HistoryNamesAreUniqueAcrossTheFeedsOfATarget) {
  sluice::testing::TempDir dir;
  auto fs = LocalFileSystem();
  const std::string claims = dir.path() + "/_change_feeds/history-names";
  FeedState sales, marketing;
  sales.slot_name = "sales_feed";
  marketing.slot_name = "marketing_feed";
  EXPECT_EQ(ClaimHistoryName(*fs, claims, sales, "users").value(), "lb_users_history");
  EXPECT_EQ(ClaimHistoryName(*fs, claims, marketing, "users").value(), "lb_users_history_1");
  EXPECT_EQ(ClaimHistoryName(*fs, claims, marketing, "Users").value(), "lb_users_history_1")
      << "a claim of the feed's own (kept out of its state by a crash) is taken again";
  marketing.tables.push_back(TableNamed("lb_users_history_1"));
  EXPECT_EQ(ClaimHistoryName(*fs, claims, marketing, "USERS").value(), "lb_users_history_2");
  EXPECT_EQ(ClaimHistoryName(*fs, claims, sales, "orders").value(), "lb_orders_history");
  EXPECT_EQ(ClaimHistoryName(*fs, claims, marketing, "orders").value(), "lb_orders_history_1");

  // A state holding names of its own (written before names were claimed) claims them at start,
  // and is refused when another feed holds one.
  sales.tables.push_back(TableNamed("lb_users_history"));
  sales.tables.push_back(TableNamed("lb_legacy_history"));
  EXPECT_TRUE(ClaimHistoryNames(*fs, claims, sales).ok());
  EXPECT_EQ(fs->ReadFile(claims + "/lb_legacy_history").value(), "sales_feed");
  FeedState other;
  other.slot_name = "other_feed";
  other.tables.push_back(TableNamed("lb_legacy_history"));
  Status taken = ClaimHistoryNames(*fs, claims, other);
  EXPECT_EQ(taken.error_class(), errors::kCdfHistoryNameTaken);
  EXPECT_NE(taken.message().find("sales_feed"), std::string::npos) << taken.ToString();
}

TEST(ChangeFeedStateTest, StatusListsEveryTableWithItsIdentityAndLag) {
  std::string status = StatusJson(SampleState(), FeedLag{1024, 1.5}, "STREAMING");
  EXPECT_NE(status.find("\"status\":\"STREAMING\""), std::string::npos) << status;
  EXPECT_NE(status.find("\"slot_lag_bytes\":1024,\"slot_lag_seconds\":1.500"), std::string::npos) << status;
  EXPECT_NE(status.find("\"confirmed_lsn\":\"16/B374D880\""), std::string::npos) << status;
  EXPECT_NE(status.find("\"source\":\"public.Orders \\\"EU\\\"\",\"target\":\"lb_orders_history\""),
            std::string::npos)
      << status;
  EXPECT_NE(status.find("\"replica_identity_full\":false"), std::string::npos) << status;
  EXPECT_NE(status.find("\"rows\":17"), std::string::npos) << status;
}

TEST(ChangeFeedStateTest, StatusListsFailedAndSkippedTablesWithWhy) {
  FeedState state = SampleState();
  state.tables[0].status = "FAILED";
  state.tables[0].error = "IO_ERROR: disk full";
  std::string status =
      StatusJson(state, FeedLag{0, 0}, "FAILED", "IO_ERROR: disk full",
                 {{"public", "later", "empty so far: its history table appears with its first row"}});
  EXPECT_EQ(status.rfind("{\"status\":\"FAILED\",\"error\":\"IO_ERROR: disk full\",", 0), 0u) << status;
  EXPECT_NE(status.find("\"target\":\"lb_orders_history\",\"status\":\"FAILED\",\"reason\":\"IO_ERROR: disk full\""),
            std::string::npos)
      << status;
  EXPECT_NE(status.find("{\"source\":\"public.later\",\"target\":\"\",\"status\":\"SKIPPED\",\"reason\":\"empty so "
                        "far: its history table appears with its first row\",\"replica_identity_full\":false,"
                        "\"committed_lsn\":\"0/0\",\"last_write_ms\":0,\"rows\":0}"),
            std::string::npos)
      << status;
}

TEST(ChangeFeedStateTest, ATableErrorSurvivesARestartAndOldFilesWithoutOneStillRead) {
  sluice::testing::TempDir dir;
  auto fs = LocalFileSystem();
  FeedState written = SampleState();
  written.tables[0].status = "FAILED";
  written.tables[0].error = "IO_ERROR: disk full";
  ASSERT_TRUE(WriteState(*fs, dir.Join("state.json"), written).ok());
  auto read = ReadState(*fs, dir.Join("state.json"));
  ASSERT_TRUE(read.ok() && read->has_value());
  EXPECT_EQ((*read)->tables[0].error, "IO_ERROR: disk full");

  ASSERT_TRUE(fs->AtomicWrite(dir.Join("state.json"),
                              "{\"slot_name\":\"s\",\"slot_dropped\":false,\"commit_lsn\":1,\"end_lsn\":1,"
                              "\"next_sort_by\":1,\"tables\":[{\"oid\":5,\"source_schema\":\"public\",\"source_name\":"
                              "\"t\",\"history_name\":\"lb_t_history\",\"replica_identity\":\"f\",\"status\":"
                              "\"STREAMING\",\"reason\":\"\",\"committed_lsn\":1,\"rows\":0,\"last_write_ms\":0,"
                              "\"columns\":[]}]}")
                  .ok());
  auto old = ReadState(*fs, dir.Join("state.json"));
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  ASSERT_EQ((*old)->tables.size(), 1u);
  EXPECT_EQ((*old)->tables[0].error, "");
}

}  // namespace
}  // namespace sluice::connectors::cdf
