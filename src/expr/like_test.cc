#include "expr/like.h"

#include <vector>

#include <gtest/gtest.h>

#include "sluice/core/error_classes.h"

namespace sluice::expr {
namespace {

// Patterns come from column bytes, views with nothing after their last byte: malformed ones are
// refused without reading past it (ASan would report the read; the fuzzer found this pattern).
TEST(CompileRegexTest, MalformedPatternsInExactBuffersAreRefused) {
  for (std::string pattern : {std::string("x(q(2(f("), std::string("("), std::string("ab\\"), std::string("[a"),
                              std::string("a{2"), std::string("(?"),
                              std::string("ffff") + '\xf7' + "fffQ" + std::string(3, '\0') + "(Oq(o(O(Offfq(2(f("}) {
    SCOPED_TRACE(pattern);
    std::vector<char> exact(pattern.begin(), pattern.end());  // no terminator after the last byte
    auto compiled = CompileRegex(std::string_view(exact.data(), exact.size()));
    ASSERT_FALSE(compiled.ok());
    EXPECT_EQ(compiled.status().error_class(), errors::kInvalidParameterValue);
  }
  auto fine = CompileRegex("^a(b|c)+$");
  ASSERT_TRUE(fine.ok()) << fine.status().ToString();
  EXPECT_EQ((*fine)->groups, 1);
}

}  // namespace
}  // namespace sluice::expr
