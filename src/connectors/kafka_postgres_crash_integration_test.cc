// Kafka -> PostgreSQL under fire: a query reading a Kafka topic (librdkafka's mock cluster, in
// this test process) into a PostgreSQL table runs in a child process that is killed with SIGKILL
// at 30 random moments while a producer keeps writing to the topic, in micro-batches and in real
// time. After a last run that drains the topic, the table must equal what Kafka holds, exactly.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <random>
#include <thread>

#include "sluice/connectors/kafka_source.h"
#include "sluice/connectors/postgres_sink.h"
#include "sluice/connectors/register_formats.h"
#include "sluice/connectors/testing/kafka_fixture.h"
#include "sluice/connectors/testing/postgres_fixture.h"
#include "sluice/engine/streaming_query.h"
#include "testing/child_process.h"
#include "testing/kafka_broker.h"
#include "testing/temp_dir.h"

namespace sluice::connectors {
namespace {

using testing::PostgresTestDatabase;
using testing::Rows;

// Where the query reads and writes; handed to a crash child through its environment.
struct Pipeline {
  std::string bootstrap_servers;
  std::string topic;
  std::string host;
  std::string port;
  std::string user;
  std::string database;
  std::string table;
  std::string checkpoint;
  std::string upsert_key;  // empty: a key-less table
  bool real_time = false;  // trigger real_time, else micro-batches back to back

  std::vector<std::string> Environment() const {
    return {"SLUICE_KPG_SERVERS=" + bootstrap_servers, "SLUICE_KPG_TOPIC=" + topic,    "SLUICE_KPG_HOST=" + host,
            "SLUICE_KPG_PORT=" + port,                 "SLUICE_KPG_USER=" + user,      "SLUICE_KPG_DATABASE=" + database,
            "SLUICE_KPG_TABLE=" + table,               "SLUICE_KPG_CHECKPOINT=" + checkpoint,
            "SLUICE_KPG_KEY=" + upsert_key,            real_time ? "SLUICE_KPG_REAL_TIME=1" : "SLUICE_KPG_REAL_TIME="};
  }
  static Pipeline FromEnvironment() {
    auto get = [](const char* name) {
      const char* value = std::getenv(name);
      return std::string(value ? value : "");
    };
    return {get("SLUICE_KPG_SERVERS"), get("SLUICE_KPG_TOPIC"),      get("SLUICE_KPG_HOST"),
            get("SLUICE_KPG_PORT"),    get("SLUICE_KPG_USER"),       get("SLUICE_KPG_DATABASE"),
            get("SLUICE_KPG_TABLE"),   get("SLUICE_KPG_CHECKPOINT"), get("SLUICE_KPG_KEY"),
            get("SLUICE_KPG_REAL_TIME") == "1"};
  }
};

// Runs the pipeline's query (every Kafka column into the table) with `trigger`.
Status RunKafkaIntoPostgres(const Pipeline& p, engine::Trigger trigger) {
  SLUICE_ASSIGN_OR_RETURN(auto source, AllFormatsRegistry().MakeSource(
                                           "kafka", {{"bootstrap_servers", p.bootstrap_servers},
                                                     {"subscribe", p.topic},
                                                     {"starting_offsets", "earliest"},
                                                     {"max_offsets_per_trigger", "400"}}));
  std::map<std::string, std::string> sink_options = {{"dbtable", p.table}, {"checkpointLocation", p.checkpoint},
                                                     {"host", p.host},     {"port", p.port},
                                                     {"user", p.user},     {"database", p.database},
                                                     {"batchsize", "150"}};
  if (!p.upsert_key.empty()) sink_options["upsertkey"] = p.upsert_key;
  SLUICE_ASSIGN_OR_RETURN(auto sink, AllFormatsRegistry().MakeSink("postgresql", sink_options));
  engine::QueryConfig config;
  config.name = "kafka_to_postgres";
  config.checkpoint_location = p.checkpoint;
  config.trigger = trigger;
  config.output_mode = engine::OutputMode::kUpdate;
  SLUICE_ASSIGN_OR_RETURN(auto query, engine::StreamingQuery::Start(std::move(source), std::move(sink), std::move(config)));
  return query->Run();
}

// When this binary is re-executed as a crash child, it runs the query until it is killed.
[[maybe_unused]] const bool kIsCrashChild = [] {
  if (std::getenv("SLUICE_KPG_SERVERS") == nullptr) return false;
  const Pipeline pipeline = Pipeline::FromEnvironment();
  Status s = RunKafkaIntoPostgres(pipeline, pipeline.real_time
                                                ? engine::Trigger::RealTime(std::chrono::milliseconds(500))
                                                : engine::Trigger::ProcessingTime(std::chrono::milliseconds(0)));
  std::fprintf(stderr, "crash child ended: %s\n", s.ToString().c_str());
  std::_Exit(3);
}();

// Writes keyed records to a topic on a thread of its own until stopped: record i has the key
// "k<i % keys>" (none when keys is 0) and the value "<i>", about 2,000 records a second.
class BackgroundProducer {
 public:
  BackgroundProducer(std::string servers, std::string topic, int keys)
      : servers_(std::move(servers)), topic_(std::move(topic)), keys_(keys) {
    thread_ = std::thread([this] { status_ = Produce(); });
  }
  // Stops producing, waits for every record to be acknowledged; the first failure, if any.
  Status Stop() {
    stop_.store(true);
    thread_.join();
    return status_;
  }
  int64_t produced() const { return produced_.load(); }

 private:
  Status Produce() {
    SLUICE_ASSIGN_OR_RETURN(auto producer, KafkaTestProducer::Connect(servers_));
    for (int64_t i = 0; !stop_.load(); ++i) {
      KafkaTestMessage message;
      if (keys_ > 0) message.key = "k" + std::to_string(i % keys_);
      message.value = std::to_string(i);
      SLUICE_RETURN_IF_ERROR(producer->Produce(topic_, message));
      produced_.store(i + 1);
      if (i % 40 == 39) {
        SLUICE_RETURN_IF_ERROR(producer->Flush());
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
    return producer->Flush();
  }

  std::string servers_;
  std::string topic_;
  int keys_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> produced_{0};
  std::thread thread_;
  Status status_;
};

class KafkaPostgresCrashTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = PostgresTestDatabase::Create();
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(*db);
    auto kafka = testing::SharedKafka();
    ASSERT_TRUE(kafka.ok()) << kafka.status().ToString();
    auto topic = testing::CreateTestTopic(3);
    ASSERT_TRUE(topic.ok()) << topic.status().ToString();
    EmbeddedPostgres& server = db_->server();
    pipeline_ = {(*kafka)->bootstrap_servers(), *topic, server.host(), std::to_string(server.port()),
                 server.superuser(), db_->name(), "events", dir_.Join("checkpoint"), "", false};
  }

  // Kills the query 30 times at random moments while `keys` keys are being produced (0: records
  // without a key), then stops the producer and drains the topic with one last run. Returns what
  // Kafka holds.
  std::vector<KafkaTestMessage> KillRepeatedlyWhileProducing(int keys) {
    BackgroundProducer producer(pipeline_.bootstrap_servers, pipeline_.topic, keys);
    std::mt19937 random(2024);
    std::uniform_int_distribution<int> pause_ms(50, 350);
    int kills = 0;
    for (; kills < 30; ++kills) {
      pid_t child = sluice::testing::SpawnSelf(pipeline_.Environment(), dir_.Join("child.log"));
      EXPECT_GT(child, 0);
      if (child <= 0) break;
      if (kills == 0) {
        // However slow the machine, the first child is killed only after it wrote: the kills that
        // follow then interrupt a query with committed batches behind it.
        EXPECT_TRUE(WaitForFirstRow()) << "the first child wrote nothing within 60 s; see " << dir_.Join("child.log");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms(random)));
      ::kill(child, SIGKILL);
      int status = 0;
      ::waitpid(child, &status, 0);
      EXPECT_TRUE(WIFSIGNALED(status)) << "the child ended by itself (status " << status << ") at kill " << kills
                                       << "; see " << dir_.Join("child.log");
      if (!WIFSIGNALED(status)) break;
    }
    Status produced = producer.Stop();
    EXPECT_TRUE(produced.ok()) << produced.ToString();
    EXPECT_EQ(kills, 30);
    EXPECT_GT(producer.produced(), 2000) << "the producer hardly ran";
    Status drained = RunKafkaIntoPostgres(pipeline_, engine::Trigger::AvailableNow());
    EXPECT_TRUE(drained.ok()) << drained.ToString();
    auto messages = ReadAllMessages(pipeline_.bootstrap_servers, pipeline_.topic);
    EXPECT_TRUE(messages.ok()) << messages.status().ToString();
    EXPECT_EQ(messages.ok() ? static_cast<int64_t>(messages->size()) : 0, producer.produced());
    return messages.ok() ? *messages : std::vector<KafkaTestMessage>{};
  }

  // The key-less table holds every record of the topic once: (partition, offset, value) rows equal.
  void ExpectEveryRecordOnce(const std::vector<KafkaTestMessage>& messages) {
    // The table is created by the sink from the Kafka columns, without a primary key.
    Rows expected;
    for (const KafkaTestMessage& m : messages) {
      expected.push_back({std::to_string(m.partition), std::to_string(m.offset), *m.value});
    }
    std::sort(expected.begin(), expected.end(), [](const auto& a, const auto& b) {
      return std::make_pair(std::stoi(a[0]), std::stoll(a[1])) < std::make_pair(std::stoi(b[0]), std::stoll(b[1]));
    });
    Rows table = Select("SELECT \"partition\", \"offset\", convert_from(value, 'UTF8') FROM events ORDER BY 1, 2");
    EXPECT_EQ(table.size(), expected.size());
    auto differ = std::mismatch(table.begin(), table.end(), expected.begin(), expected.end());
    EXPECT_TRUE(differ.first == table.end())
        << "the table differs from the topic at row " << differ.first - table.begin() << ": "
        << ::testing::PrintToString(*differ.first) << " instead of " << ::testing::PrintToString(*differ.second);
  }

  bool WaitForFirstRow() {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      // Fails while the sink has not created the table yet.
      auto rows = db_->Query("SELECT EXISTS (SELECT FROM events)");
      if (rows.ok() && !rows->empty() && (*rows)[0][0] == "t") return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

  Rows Select(const std::string& sql) {
    auto rows = db_->Query(sql);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return rows.ok() ? *rows : Rows{};
  }

  std::unique_ptr<PostgresTestDatabase> db_;
  sluice::testing::TempDir dir_;
  Pipeline pipeline_;
};

TEST_F(KafkaPostgresCrashTest, KillNineThirtyTimesWritesEveryRecordExactlyOnceWithoutAKey) {
  ExpectEveryRecordOnce(KillRepeatedlyWhileProducing(0));
}

// Under real_time a crash replays the epoch in flight in the reads it was first delivered in,
// though a read of several partitions interleaves them differently each time.
TEST_F(KafkaPostgresCrashTest, KillNineThirtyTimesInRealTimeWritesEveryRecordExactlyOnceWithoutAKey) {
  pipeline_.real_time = true;
  ExpectEveryRecordOnce(KillRepeatedlyWhileProducing(0));
}

// The same against a real Apache Kafka broker (testing/kafka_broker.h), which fetches, batches and
// acknowledges as production brokers do.
TEST_F(KafkaPostgresCrashTest, KillNineThirtyTimesAgainstARealBrokerWritesEveryRecordExactlyOnce) {
  auto broker = sluice::testing::SharedKafkaBroker();
  ASSERT_TRUE(broker.ok()) << broker.status().ToString();
  auto topic = sluice::testing::CreateBrokerTopic(3);
  ASSERT_TRUE(topic.ok()) << topic.status().ToString();
  pipeline_.bootstrap_servers = (*broker)->bootstrap_servers(sluice::testing::KafkaBroker::Listener::kPlaintext);
  pipeline_.topic = *topic;
  ExpectEveryRecordOnce(KillRepeatedlyWhileProducing(0));
}

class KafkaPostgresKeyedCrashTest : public KafkaPostgresCrashTest, public ::testing::WithParamInterface<bool> {};

INSTANTIATE_TEST_SUITE_P(Triggers, KafkaPostgresKeyedCrashTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "RealTime" : "MicroBatches"; });

TEST_P(KafkaPostgresKeyedCrashTest, KillNineThirtyTimesLeavesTheLastValueOfEveryKey) {
  pipeline_.upsert_key = "key";
  pipeline_.real_time = GetParam();
  std::vector<KafkaTestMessage> messages = KillRepeatedlyWhileProducing(97);
  // Records of one key share a partition, so the last by offset is the latest.
  std::map<std::string, std::pair<int64_t, std::string>> last;
  for (const KafkaTestMessage& m : messages) {
    auto [it, inserted] = last.try_emplace(*m.key, m.offset, *m.value);
    if (!inserted && m.offset > it->second.first) it->second = {m.offset, *m.value};
  }
  Rows expected;
  for (const auto& [key, latest] : last) expected.push_back({key, latest.second});
  Rows table = Select("SELECT convert_from(key, 'UTF8'), convert_from(value, 'UTF8') FROM events ORDER BY key");
  EXPECT_EQ(table.size(), 97u);
  EXPECT_TRUE(table == expected) << "the table differs from the last value of every key";
}

}  // namespace
}  // namespace sluice::connectors
