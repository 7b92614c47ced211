#include "sluice/core/edit_distance.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(EditDistanceTest, CountsInsertionsDeletionsAndSubstitutions) {
  EXPECT_EQ(EditDistance("", ""), 0u);
  EXPECT_EQ(EditDistance("abc", ""), 3u);
  EXPECT_EQ(EditDistance("", "abc"), 3u);
  EXPECT_EQ(EditDistance("rowsPerSecond", "rowsPerSecond"), 0u);
  EXPECT_EQ(EditDistance("rowsPerSecnd", "rowsPerSecond"), 1u);     // one insertion
  EXPECT_EQ(EditDistance("batchsize", "batchsiz"), 1u);             // one deletion
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);                 // two substitutions, one insertion
  EXPECT_EQ(EditDistance("flaw", "lawn"), 2u);
  EXPECT_EQ(EditDistance("upsertkey", "upsertKey"), 1u);            // bytes, not case-folded
}

}  // namespace
}  // namespace sluice
