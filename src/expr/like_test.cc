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

// Repetition counts are bounded (1000, as RE2 bounds them): libstdc++ overflows on counts past a
// long's range (the fuzzer found {5555555555555555555}) and builds a state per repetition.
TEST(CompileRegexTest, RepetitionCountsOver1000AreRefused) {
  for (const char* pattern : {"a{5555555555555555555}", "a{1001}", "a{2,1001}", "a{1001,}", "(ab){99999999}x",
                              "a{0,99999999999999999999999}", "(a)\\4444444444444444488",
                              "\\01234567890123456789012"}) {
    SCOPED_TRACE(pattern);
    auto compiled = CompileRegex(pattern);
    ASSERT_FALSE(compiled.ok());
    EXPECT_EQ(compiled.status().error_class(), errors::kInvalidParameterValue);
    EXPECT_NE(compiled.status().message().find("over 1000"), std::string::npos) << compiled.status().ToString();
  }
  // Digits elsewhere are not counts: escaped braces, braces in a class, commas outside braces.
  for (const char* pattern : {"a{1000}", "a{2,1000}", "\\{99999\\}", "[{]99999", "x,99999", "a{3,}b", "(a)\\1"}) {
    SCOPED_TRACE(pattern);
    auto compiled = CompileRegex(pattern);
    EXPECT_TRUE(compiled.ok()) << compiled.status().ToString();
  }
}

}  // namespace
}  // namespace sluice::expr
