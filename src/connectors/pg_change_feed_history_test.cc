// The boundary between a history table's initial copy and its stream: which transactions the copy
// holds (and the stream must skip) and which the stream must write, in memory and after a restart.
#include <gtest/gtest.h>

#include "pg_change_feed_internal.h"
#include "sluice/delta/snapshot.h"
#include "testing/temp_dir.h"

namespace sluice::connectors::cdf {
namespace {

// A running-transactions record ends at 0/1922E20 and makes the slot consistent; the record before
// it is a Commit at 0/1922DB8 (both LSNs as a real slot reported them).
constexpr Lsn kConsistentPoint = 0x1922E20;
constexpr Lsn kCommitBeforeThePoint = 0x1922DB8;

TEST(ChangeFeedHistoryTest, ACopyHoldsWhatCommittedBeforeTheConsistentPointAndNothingAtIt) {
  EXPECT_EQ(LastCommitInSnapshot(kConsistentPoint), kConsistentPoint - 1);

  sluice::testing::TempDir dir;
  HistoryTable history(LocalFileSystem(), dir.Join("lb_accounts_history"), "slot/lb_accounts_history");
  history.SetColumns({{"id", 23, -1}});
  ASSERT_TRUE(history.Reset(0).ok());
  history.Append("insert", {{TupleValue::Kind::kText, "1"}}, nullptr, kConsistentPoint, std::nullopt, 0, 1);
  ASSERT_TRUE(history.FinishSnapshot(LastCommitInSnapshot(kConsistentPoint)).ok());

  // The next change numbers after the copy's rows: only the commit LSN decides.
  EXPECT_TRUE(history.AlreadyWritten(kCommitBeforeThePoint, 2)) << "committed before the point: in the copy";
  EXPECT_FALSE(history.AlreadyWritten(kConsistentPoint, 2)) << "committed right at the point: streamed";
  EXPECT_TRUE(history.AlreadyWritten(kConsistentPoint, 1)) << "a copied row is never written twice";

  HistoryTable reopened(LocalFileSystem(), dir.Join("lb_accounts_history"), "slot/lb_accounts_history");
  reopened.SetColumns({{"id", 23, -1}});
  ASSERT_TRUE(reopened.LoadVersions().ok());
  EXPECT_EQ(reopened.lsn_version(), kConsistentPoint - 1);
  EXPECT_TRUE(reopened.AlreadyWritten(kCommitBeforeThePoint, 2));
  EXPECT_FALSE(reopened.AlreadyWritten(kConsistentPoint, 2));
}

// A history table written while arrays were strings keeps its string column, so that the feed
// goes on appending to it; a new history table holds Delta arrays.
TEST(ChangeFeedHistoryTest, AnArrayColumnAnOlderHistoryTableHoldsAsAStringStaysAString) {
  constexpr uint32_t kTextArray = 1009;
  sluice::testing::TempDir dir;
  const std::string old_path = dir.Join("lb_old_history");
  {
    // The table as it was written before: the column a string.
    HistoryTable written(LocalFileSystem(), old_path, "slot/lb_old_history");
    written.SetColumns({{"id", 23, -1}, {"tags", pg_oid::kText, -1}});
    written.Append("insert", {{TupleValue::Kind::kText, "1"}, {TupleValue::Kind::kText, "{a,b}"}}, nullptr, 10,
                   std::nullopt, 0, 1);
    ASSERT_TRUE(written.Flush().ok());
  }
  for (bool existing : {true, false}) {
    SCOPED_TRACE(existing ? "existing table" : "new table");
    const std::string path = existing ? old_path : dir.Join("lb_new_history");
    HistoryTable history(LocalFileSystem(), path, "slot/x");
    history.SetColumns({{"id", 23, -1}, {"tags", kTextArray, -1}});
    ASSERT_TRUE(history.LoadVersions().ok());
    EXPECT_EQ(history.schema()->field(1).type->ToString(), existing ? "string" : "array<string>");
    history.Append("insert", {{TupleValue::Kind::kText, "2"}, {TupleValue::Kind::kText, "{\"c d\",NULL}"}}, nullptr,
                   20, std::nullopt, 0, 2);
    ASSERT_TRUE(history.Flush().ok());
    auto snapshot = delta::Snapshot::Load(LocalFileSystem(), path);
    ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString();
    EXPECT_EQ((*snapshot)->schema()->field(1).type->ToString(), existing ? "string" : "array<string>");
    EXPECT_EQ(history.malformed_values(), 0);
  }
}

}  // namespace
}  // namespace sluice::connectors::cdf
