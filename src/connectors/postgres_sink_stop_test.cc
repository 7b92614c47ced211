// A stop asked for while the PostgreSQL sink waits to retry ends the query at once, as a stop:
// no server is needed, since nothing ever answers on the sink's port.
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "sluice/connectors/register_formats.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/file_system.h"
#include "sluice/engine/streaming_query.h"
#include "testing/temp_dir.h"

namespace sluice::connectors {
namespace {

TEST(PostgresSinkStopTest, AStopDuringTheRetryBackOffEndsTheQueryAsStopped) {
  for (engine::Trigger trigger : {engine::Trigger::ProcessingTime(std::chrono::milliseconds(10)), engine::Trigger::Once(),
                                  engine::Trigger::RealTime(std::chrono::seconds(1))}) {
    sluice::testing::TempDir dir("pg-sink-stop");
    int64_t ten_seconds_ago = std::chrono::duration_cast<std::chrono::milliseconds>(
                                  std::chrono::system_clock::now().time_since_epoch()).count() - 10'000;
    auto source = AllFormatsRegistry().MakeSource(
        "rate", {{"rowsPerSecond", "100"}, {"startTimestamp", std::to_string(ten_seconds_ago)}});
    ASSERT_TRUE(source.ok()) << source.status().ToString();
    // Port 1 refuses every connection: the sink retries 8 times, about 23 s of back-off in all.
    auto sink = AllFormatsRegistry().MakeSink(
        "postgresql", {{"host", "127.0.0.1"}, {"port", "1"}, {"dbtable", "t"}, {"checkpointLocation", dir.Join("c")}});
    ASSERT_TRUE(sink.ok()) << sink.status().ToString();
    engine::QueryConfig config;
    config.name = "stop_test";
    config.checkpoint_location = dir.Join("c");
    config.trigger = trigger;
    config.output_mode = engine::OutputMode::kUpdate;
    auto query = engine::StreamingQuery::Start(std::move(source).value(), std::move(sink).value(), std::move(config));
    ASSERT_TRUE(query.ok()) << query.status().ToString();
    std::thread stopper([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));
      (*query)->Stop();
    });
    auto started = std::chrono::steady_clock::now();
    Status status = (*query)->Run();
    auto took = std::chrono::steady_clock::now() - started;
    stopper.join();
    EXPECT_TRUE(status.ok()) << status.ToString();
    EXPECT_LT(took, std::chrono::seconds(5));
    EXPECT_GE(took, std::chrono::milliseconds(1400));
    // Nothing was committed: the batch runs again when the query restarts.
    EXPECT_FALSE(LocalFileSystem()->Exists(dir.Join("c/commits/0")).value());
  }
}

// When the retries of `maxretries` run out, the query fails with the last error; 0 retries fails
// at the first refusal, each retry waits its back-off first (100 ms, then doubling).
TEST(PostgresSinkStopTest, RunningOutOfRetriesFailsTheQueryWithTheLastError) {
  for (int retries : {0, 2}) {
    SCOPED_TRACE(retries);
    sluice::testing::TempDir dir("pg-sink-retries");
    int64_t ten_seconds_ago = std::chrono::duration_cast<std::chrono::milliseconds>(
                                  std::chrono::system_clock::now().time_since_epoch()).count() - 10'000;
    auto source = AllFormatsRegistry().MakeSource(
        "rate", {{"rowsPerSecond", "100"}, {"startTimestamp", std::to_string(ten_seconds_ago)}});
    ASSERT_TRUE(source.ok()) << source.status().ToString();
    auto sink = AllFormatsRegistry().MakeSink("postgresql", {{"host", "127.0.0.1"},
                                                             {"port", "1"},
                                                             {"dbtable", "t"},
                                                             {"maxretries", std::to_string(retries)},
                                                             {"checkpointLocation", dir.Join("c")}});
    ASSERT_TRUE(sink.ok()) << sink.status().ToString();
    engine::QueryConfig config;
    config.name = "retries_test";
    config.checkpoint_location = dir.Join("c");
    config.trigger = engine::Trigger::Once();
    config.output_mode = engine::OutputMode::kUpdate;
    auto query = engine::StreamingQuery::Start(std::move(source).value(), std::move(sink).value(), std::move(config));
    ASSERT_TRUE(query.ok()) << query.status().ToString();
    auto started = std::chrono::steady_clock::now();
    Status status = (*query)->Run();
    auto took = std::chrono::steady_clock::now() - started;
    ASSERT_FALSE(status.ok());
    EXPECT_NE(status.error_class(), errors::kQueryStopped);
    EXPECT_NE(status.ToString().find("127.0.0.1"), std::string::npos) << status.ToString();
    if (retries == 0) {
      EXPECT_LT(took, std::chrono::milliseconds(100));
    } else {
      EXPECT_GE(took, std::chrono::milliseconds(300)) << "two back-offs: 100 ms and 200 ms";
      EXPECT_LT(took, std::chrono::seconds(5));
    }
    EXPECT_FALSE(LocalFileSystem()->Exists(dir.Join("c/commits/0")).value());
  }
}

}  // namespace
}  // namespace sluice::connectors
