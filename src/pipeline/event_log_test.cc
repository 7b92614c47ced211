#include "sluice/pipeline/event_log.h"

#include <sys/wait.h>
#include <unistd.h>

#include <set>

#include <gtest/gtest.h>
#include <simdjson.h>

#include "sluice/core/clock.h"
#include "sluice/core/sensitive_values.h"
#include "testing/temp_dir.h"

namespace sluice::pipeline {
namespace {

Event Make(std::string type, std::string message = "", std::string details = "{}") {
  Event event;
  event.event_type = std::move(type);
  event.message = std::move(message);
  event.details = std::move(details);
  return event;
}

std::vector<int64_t> Sequences(const std::string& path) {
  std::vector<int64_t> sequences;
  simdjson::dom::parser parser;
  std::vector<std::string> lines = EventLog::ReadLines(path).value();
  for (const std::string& line : lines) sequences.push_back(parser.parse(line)["sequence"].get_int64().value());
  return sequences;
}

// Two logs open on one file (a running pipeline, and a second run refused with CONCURRENT_QUERY
// that still logs why) number their events one after another, never twice the same.
TEST(EventLogTest, AppendsFromSeveralWritersNeverRepeatASequence) {
  sluice::testing::TempDir dir("event-log");
  const std::string path = EventLog::PathFor(dir.path());
  auto first = EventLog::Open(path, SystemClock());
  auto second = EventLog::Open(path, SystemClock());
  ASSERT_TRUE(first.ok() && second.ok());
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(((i % 3 == 0) ? *second : *first)->Append(Make("test", std::to_string(i))).ok());
  }
  // And from another process at the same time.
  pid_t child = ::fork();
  if (child == 0) {
    auto log = EventLog::Open(path, SystemClock());
    for (int i = 0; log.ok() && i < 200; ++i) (void)(*log)->Append(Make("child"));
    ::_exit(0);
  }
  for (int i = 0; i < 200; ++i) ASSERT_TRUE((*first)->Append(Make("parent")).ok());
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  std::vector<int64_t> sequences = Sequences(path);
  ASSERT_EQ(sequences.size(), 410u);
  for (size_t i = 0; i < sequences.size(); ++i) EXPECT_EQ(sequences[i], static_cast<int64_t>(i));
}

// Masking a sensitive value never leaves an event line that does not parse.
TEST(EventLogTest, MaskedValuesLeaveEveryLineValidJson) {
  sluice::testing::TempDir dir("event-log-mask");
  const std::string path = EventLog::PathFor(dir.path());
  RememberSensitiveValue("\":{\"x");
  RememberSensitiveValue("masked-host.example");
  auto log = EventLog::Open(path, SystemClock());
  ASSERT_TRUE(log.ok());
  ASSERT_TRUE((*log)->Append(Make("error", "cannot reach masked-host.example", R"({"error":{"a":{"x":1}}})")).ok());
  auto lines = EventLog::ReadLines(path).value();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].find("masked-host.example"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("cannot reach *****"), std::string::npos) << lines[0];
}

}  // namespace
}  // namespace sluice::pipeline
