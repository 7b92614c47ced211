#include "sluice/core/logging.h"

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "sluice/core/sensitive_values.h"

namespace sluice {
namespace {

class LoggingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SetLogSinkForTesting([this](LogLevel level, std::string_view message) {
      lines_.emplace_back(level, std::string(message));
    });
  }
  void TearDown() override {
    SetLogSinkForTesting(nullptr);
    SetLogLevel(LogLevel::kInfo);
  }

  std::vector<std::pair<LogLevel, std::string>> lines_;
};

TEST_F(LoggingTest, MessagesAreFormattedWithFmtSyntax) {
  LogInfo("stream {} committed batch {} ({} rows)", "orders", 7, 1500);
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_EQ(lines_[0].first, LogLevel::kInfo);
  EXPECT_EQ(lines_[0].second, "stream orders committed batch 7 (1500 rows)");
}

TEST_F(LoggingTest, MessagesBelowTheLevelAreDropped) {
  EXPECT_EQ(GetLogLevel(), LogLevel::kInfo);
  LogDebug("hidden {}", 1);
  SetLogLevel(LogLevel::kWarn);
  LogInfo("hidden too");
  LogWarn("shown {}", 2);
  LogError("shown {}", 3);
  SetLogLevel(LogLevel::kOff);
  LogError("hidden when off");
  ASSERT_EQ(lines_.size(), 2u);
  EXPECT_EQ(lines_[0], std::make_pair(LogLevel::kWarn, std::string("shown 2")));
  EXPECT_EQ(lines_[1], std::make_pair(LogLevel::kError, std::string("shown 3")));
  EXPECT_FALSE(LogEnabled(LogLevel::kError));
}

// A value that came from a secret reference is masked in every log line, wherever it stands (a
// library quoting a host or a password back in its own error text), at every level.
TEST_F(LoggingTest, RememberedSensitiveValuesAreMaskedInEveryLine) {
  RememberSensitiveValue("db.internal.example");
  RememberSensitiveValue("hunter2-secret");
  LogInfo("could not connect to db.internal.example:5432");
  LogError("password authentication failed: \"hunter2-secret\" (hunter2-secret)");
  LogWarn("{}", "nothing sensitive here");
  ASSERT_EQ(lines_.size(), 3u);
  EXPECT_EQ(lines_[0].second, "could not connect to *****:5432");
  EXPECT_EQ(lines_[1].second, "password authentication failed: \"*****\" (*****)");
  EXPECT_EQ(lines_[2].second, "nothing sensitive here");
}

TEST_F(LoggingTest, LevelsParseInAnyCase) {
  EXPECT_EQ(*ParseLogLevel("DEBUG"), LogLevel::kDebug);
  EXPECT_EQ(*ParseLogLevel("warning"), LogLevel::kWarn);
  EXPECT_EQ(*ParseLogLevel("Off"), LogLevel::kOff);
  Result<LogLevel> bad = ParseLogLevel("loud");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().ToString(),
            "INVALID_ARGUMENT: unknown log level 'loud'; use trace, debug, info, warn, error or off");
}

TEST(LoggingToStderrTest, WritesOneLineWithLevelAndMessage) {
  ::testing::internal::CaptureStderr();
  LogWarn("disk {} is {}% full", "/data", 93);
  std::string output = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(output.find("] [warning] disk /data is 93% full\n"), std::string::npos) << output;
}

}  // namespace
}  // namespace sluice
