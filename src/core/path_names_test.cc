#include "sluice/core/path_names.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(PathNamesTest, APathNameIsOneSegmentOfTheDocumentedAlphabet) {
  for (std::string_view name : {"orders", "main", "a-b_C9", "x"}) EXPECT_EQ(PathNameProblem(name), "") << name;
  for (std::string_view name : {"", "..", ".", "a/b", "-rf", "a b", "é", "a\\b", "a.b"}) {
    EXPECT_NE(PathNameProblem(name), "") << name;
  }
  EXPECT_NE(PathNameProblem(std::string(256, 'a')), "");
  EXPECT_NE(PathNameProblem(std::string_view("a\0b", 3)), "");
}

TEST(PathNamesTest, StaysUnderResolvesDotsBeforeComparing) {
  EXPECT_TRUE(StaysUnder("/w", "/w"));
  EXPECT_TRUE(StaysUnder("/w", "/w/main/raw/t"));
  EXPECT_TRUE(StaysUnder("/w/", "/w//main/./raw/t/"));
  EXPECT_TRUE(StaysUnder("/w", "/w/a/../b"));
  EXPECT_FALSE(StaysUnder("/w", "/w/../victim"));
  EXPECT_FALSE(StaysUnder("/w", "/w/a/../../victim"));
  EXPECT_FALSE(StaysUnder("/w", "/wx/t")) << "a sibling sharing the root's prefix";
  EXPECT_FALSE(StaysUnder("/w", "/"));
  EXPECT_FALSE(StaysUnder("/w/a", "/w"));
  EXPECT_FALSE(StaysUnder("", "/w"));
  EXPECT_TRUE(StaysUnder("/", "/anything"));
}

}  // namespace
}  // namespace sluice
