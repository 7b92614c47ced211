#include "sluice/connectors/postgres_sink.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <random>
#include <thread>

#include "sluice/connectors/register_formats.h"
#include "sluice/connectors/testing/postgres_fixture.h"
#include "sluice/engine/streaming_query.h"
#include "testing/child_process.h"
#include "testing/temp_dir.h"

namespace sluice::connectors {
namespace {

using testing::PostgresTestDatabase;
using testing::Rows;

// Sink options for `table` in the database of `conninfo` (the fixture's "key=value ..." form).
std::map<std::string, std::string> SinkOptions(const std::string& conninfo, const std::string& table,
                                               const std::string& checkpoint) {
  std::map<std::string, std::string> options = {{"dbtable", table}, {"checkpointLocation", checkpoint}};
  // The fixture's connection string is libpq keyword=value pairs; the sink takes them as options.
  size_t pos = 0;
  while (pos < conninfo.size()) {
    size_t eq = conninfo.find('=', pos);
    size_t end = conninfo.find(' ', eq);
    if (eq == std::string::npos) break;
    std::string key = conninfo.substr(pos, eq - pos);
    std::string value = conninfo.substr(eq + 1, end == std::string::npos ? std::string::npos : end - eq - 1);
    if (value.size() >= 2 && value.front() == '\'') value = value.substr(1, value.size() - 2);
    if (key == "dbname") key = "database";
    if (key == "host" || key == "port" || key == "user" || key == "database") options[key] = value;
    pos = end == std::string::npos ? conninfo.size() : end + 1;
  }
  return options;
}

// Runs rate -> postgresql until everything generated since `start_ms` is written.
Status RunRateIntoPostgres(const std::map<std::string, std::string>& sink_options, const std::string& checkpoint,
                           int64_t start_ms, engine::Trigger trigger) {
  SLUICE_ASSIGN_OR_RETURN(
      auto source, AllFormatsRegistry().MakeSource("rate", {{"rowsPerSecond", "2000"},
                                                      {"maxRowsPerBatch", "700"},
                                                      {"startTimestamp", std::to_string(start_ms)}}));
  SLUICE_ASSIGN_OR_RETURN(auto sink, AllFormatsRegistry().MakeSink("postgresql", sink_options));
  engine::QueryConfig config;
  config.name = "rate_to_postgres";
  config.checkpoint_location = checkpoint;
  config.trigger = trigger;
  config.output_mode = engine::OutputMode::kUpdate;
  SLUICE_ASSIGN_OR_RETURN(auto query, engine::StreamingQuery::Start(std::move(source), std::move(sink), std::move(config)));
  return query->Run();
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// When this binary is re-executed as a crash child, it runs the query until it is killed.
[[maybe_unused]] const bool kIsCrashChild = [] {
  const char* conninfo = std::getenv("SLUICE_PG_CRASH_CONNINFO");
  if (conninfo == nullptr) return false;
  auto options = SinkOptions(conninfo, std::getenv("SLUICE_PG_CRASH_TABLE"), std::getenv("SLUICE_PG_CRASH_CHECKPOINT"));
  if (const char* key = std::getenv("SLUICE_PG_CRASH_KEY")) options["upsertkey"] = key;
  Status s = RunRateIntoPostgres(options, options["checkpointLocation"], std::atoll(std::getenv("SLUICE_PG_CRASH_START")),
                                 engine::Trigger::ProcessingTime(std::chrono::milliseconds(0)));
  std::fprintf(stderr, "crash child ended: %s\n", s.ToString().c_str());
  std::_Exit(3);
}();

class PostgresSinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = PostgresTestDatabase::Create();
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(*db);
  }
  Rows Select(const std::string& sql) {
    auto rows = db_->Query(sql);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return rows.ok() ? *rows : Rows{};
  }
  std::map<std::string, std::string> Options(const std::string& table) {
    return SinkOptions(db_->connection_string(), table, dir_.Join("checkpoint"));
  }

  std::unique_ptr<PostgresTestDatabase> db_;
  sluice::testing::TempDir dir_;
};

TEST_F(PostgresSinkTest, RejectsUnknownMissingAndHostileOptionsByName) {
  auto options = Options("events");
  options["batchsise"] = "10";
  Status unknown = AllFormatsRegistry().MakeSink("postgresql", options).status();
  EXPECT_EQ(unknown.error_class(), "JDBC_STREAMING_SINK_INVALID_OPTIONS");
  EXPECT_NE(unknown.message().find("batchsise"), std::string_view::npos) << unknown.ToString();
  EXPECT_NE(unknown.message().find("batchsize"), std::string_view::npos) << "no suggestion: " << unknown.ToString();

  options = Options("events");
  options.erase("dbtable");
  Status missing = AllFormatsRegistry().MakeSink("postgresql", options).status();
  EXPECT_EQ(missing.error_class(), "JDBC_STREAMING_SINK_INVALID_OPTIONS");
  EXPECT_NE(missing.message().find("dbtable"), std::string_view::npos) << missing.ToString();

  for (const char* hostile : {"events; DROP TABLE x", "a.b.c", "\"quoted\"", "public.", "sp ace"}) {
    options = Options(hostile);
    EXPECT_EQ(AllFormatsRegistry().MakeSink("postgresql", options).status().error_class(),
              "JDBC_STREAMING_SINK_INVALID_OPTIONS")
        << hostile;
  }
  options = Options("events");
  options["batchsize"] = "many";
  EXPECT_EQ(AllFormatsRegistry().MakeSink("postgresql", options).status().error_class(), "JDBC_STREAMING_SINK_INVALID_OPTIONS");
  options = Options("events");
  options["password"] = "${env:SLUICE_TEST_UNSET_VARIABLE}";
  EXPECT_EQ(AllFormatsRegistry().MakeSink("postgresql", options).status().error_class(), "UNRESOLVED_SECRET");
}

TEST_F(PostgresSinkTest, RefusesTheCompleteOutputMode) {
  auto source = AllFormatsRegistry().MakeSource("rate", {});
  auto sink = AllFormatsRegistry().MakeSink("postgresql", Options("events"));
  ASSERT_TRUE(source.ok() && sink.ok());
  engine::QueryConfig config;
  config.checkpoint_location = dir_.Join("checkpoint");
  config.output_mode = engine::OutputMode::kComplete;
  auto query = engine::StreamingQuery::Start(std::move(*source), std::move(*sink), std::move(config));
  EXPECT_EQ(query.status().error_class(), "UNSUPPORTED_OUTPUT_MODE");
}

TEST_F(PostgresSinkTest, WritesEveryRowOfAQueryOnceWithParallelTasks) {
  auto options = Options("events");
  options["upsertkey"] = "value";
  options["batchsize"] = "100";
  options["tasks_per_connection"] = "3";
  int64_t start = NowMs() - 1500;
  Status s = RunRateIntoPostgres(options, dir_.Join("checkpoint"), start, engine::Trigger::AvailableNow());
  ASSERT_TRUE(s.ok()) << s.ToString();
  Rows r = Select("SELECT count(*), count(DISTINCT value), min(value), max(value) + 1 FROM events");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_GE(std::stoll(r[0][0]), 2900);
  EXPECT_EQ(r[0][0], r[0][1]);
  EXPECT_EQ(r[0][2], "0");
  EXPECT_EQ(r[0][0], r[0][3]);
  // Row timestamps are exact: row i of a rate source is start + i / rowsPerSecond.
  EXPECT_EQ(Select("SELECT count(*) FROM events WHERE timestamp <> to_timestamp(" + std::to_string(start) +
                   " / 1000.0) + value * interval '500 microseconds'"),
            (Rows{{"0"}}));
  // A second run on the same checkpoint continues where the first stopped: nothing twice.
  s = RunRateIntoPostgres(options, dir_.Join("checkpoint"), start, engine::Trigger::AvailableNow());
  ASSERT_TRUE(s.ok()) << s.ToString();
  r = Select("SELECT count(*) = count(DISTINCT value) AND count(*) = max(value) + 1 FROM events");
  EXPECT_EQ(r, (Rows{{"t"}}));
}

// kill -9 of a running rate -> postgresql query at 30 random moments, each followed by a restart;
// afterwards the table holds every generated row exactly once.
void KillRepeatedly(PostgresTestDatabase& db, const std::string& directory, const std::string& table,
                    const char* key) {
  const int64_t start = NowMs();
  std::mt19937 random(12345);
  std::uniform_int_distribution<int> pause_ms(30, 400);
  std::string conninfo = db.connection_string();
  std::vector<std::string> environment = {"SLUICE_PG_CRASH_CONNINFO=" + conninfo, "SLUICE_PG_CRASH_TABLE=" + table,
                                          "SLUICE_PG_CRASH_CHECKPOINT=" + directory + "/checkpoint",
                                          "SLUICE_PG_CRASH_START=" + std::to_string(start)};
  if (key) environment.push_back(std::string("SLUICE_PG_CRASH_KEY=") + key);
  for (int kill_number = 0; kill_number < 30; ++kill_number) {
    pid_t child = sluice::testing::SpawnSelf(environment, directory + "/child.log");
    ASSERT_GT(child, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms(random)));
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the child ended by itself (status " << status << ") at kill " << kill_number;
  }
  std::map<std::string, std::string> options = SinkOptions(conninfo, table, directory + "/checkpoint");
  if (key) options["upsertkey"] = key;
  Status s = RunRateIntoPostgres(options, directory + "/checkpoint", start, engine::Trigger::AvailableNow());
  ASSERT_TRUE(s.ok()) << s.ToString();
}

TEST_F(PostgresSinkTest, KillNineThirtyTimesLosesAndDuplicatesNothingWithoutAKey) {
  ASSERT_TRUE(db_->Execute("CREATE TABLE events (timestamp timestamptz, value bigint)").ok());
  KillRepeatedly(*db_, dir_.path(), "events", nullptr);
  Rows r = Select("SELECT count(*), count(DISTINCT value), min(value), max(value) + 1 FROM events");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_GT(std::stoll(r[0][0]), 1000);
  EXPECT_EQ(r[0][0], r[0][1]) << "duplicates";
  EXPECT_EQ(r[0][2], "0");
  EXPECT_EQ(r[0][0], r[0][3]) << "gaps";
}

TEST_F(PostgresSinkTest, KillNineThirtyTimesKeepsAKeyedTableExact) {
  KillRepeatedly(*db_, dir_.path(), "events", "value");
  Rows r = Select("SELECT count(*), min(value), max(value) + 1 FROM events");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_GT(std::stoll(r[0][0]), 1000);
  EXPECT_EQ(r[0][1], "0");
  EXPECT_EQ(r[0][0], r[0][2]) << "gaps";
}

}  // namespace
}  // namespace sluice::connectors
