// The boundary between a history table's initial copy and its stream: which transactions the copy
// holds (and the stream must skip) and which the stream must write, in memory and after a restart.
#include <gtest/gtest.h>

#include "pg_change_feed_internal.h"
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

}  // namespace
}  // namespace sluice::connectors::cdf
