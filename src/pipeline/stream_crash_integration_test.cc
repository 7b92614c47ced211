// The crash test of streams: a pipeline ingesting a Kafka topic (librdkafka's mock cluster, in
// this process) runs in a child process that is killed with SIGKILL at random moments, 30 times,
// while a producer keeps writing; every fifth restart also finds its checkpoint deleted, so the
// stream must resume from the ingestion table's txns alone. At the end the table must hold every
// record of the topic exactly once.
//
// The child is this binary: when SLUICE_STREAM_CRASH_PIPELINE names a pipeline file, a static
// initializer runs it before any test, until the child is killed. SLUICE_CRASH_SEED replays a run.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <thread>

#include "sluice/connectors/register_formats.h"
#include "sluice/connectors/testing/kafka_fixture.h"
#include "sluice/delta/scan.h"
#include "sluice/delta/snapshot.h"
#include "sluice/pipeline/pipeline_runner.h"
#include "testing/child_process.h"
#include "testing/temp_dir.h"

namespace sluice::pipeline {
namespace {

constexpr int kKills = 30;

Status RunPipelineFile(const std::string& path, const std::string& trigger) {
  std::ifstream in(path);
  std::string yaml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t at = yaml.find("TRIGGER");
  if (at != std::string::npos) yaml.replace(at, 7, trigger);
  SLUICE_ASSIGN_OR_RETURN(PipelineSpec spec, ParsePipelineSpec(yaml));
  static engine::Registry* registry = [] {
    auto* made = new engine::Registry();
    (void)engine::RegisterBuiltinFormats(made);
    (void)connectors::RegisterConnectorFormats(made);
    return made;
  }();
  RunOptions options;
  options.registry = registry;
  SLUICE_ASSIGN_OR_RETURN(auto run, PipelineRun::Start(spec, options));
  return run->Wait();
}

[[maybe_unused]] const bool kIsCrashChild = [] {
  const char* pipeline = std::getenv("SLUICE_STREAM_CRASH_PIPELINE");
  if (pipeline == nullptr) return false;
  Status status = RunPipelineFile(pipeline, "processing_time");
  std::fprintf(stderr, "the crash child ended before it was killed: %s\n", status.ToString().c_str());
  std::_Exit(3);
}();


TEST(StreamCrashTest, IngestionTableHoldsTheTopicExactlyOnceAfterThirtyKills) {
  uint64_t seed = std::random_device{}();
  if (const char* given = std::getenv("SLUICE_CRASH_SEED")) seed = std::strtoull(given, nullptr, 10);
  std::cout << "crash test seed " << seed << " (SLUICE_CRASH_SEED replays it)\n";
  std::mt19937_64 random(seed);

  auto kafka = connectors::testing::SharedKafka();
  ASSERT_TRUE(kafka.ok()) << kafka.status().ToString();
  const std::string bootstrap = (*kafka)->bootstrap_servers();
  auto topic = connectors::testing::CreateTestTopic(3);
  ASSERT_TRUE(topic.ok());
  testing::TempDir dir("sluice-stream-crash");
  const std::string pipeline = dir.Join("pipeline.yaml");
  {
    std::ofstream out(pipeline);
    out << "name: crash\nstorage: " << dir.Join("storage") << "\nwarehouse: " << dir.Join("warehouse")
        << "\nstreams:\n  - name: main.raw.crash\n    source: {format: kafka, options: {bootstrap_servers: \""
        << bootstrap << "\", subscribe: " << *topic
        << ", starting_offsets: earliest, max_offsets_per_trigger: 40}}\n"
           "    schema_config:\n      value: {format: json, schema: '{\"type\":\"object\",\"properties\":"
           "{\"n\":{\"type\":\"integer\"}}}'}\n"
           "    ingestion_config: {table: main.raw.crash}\n    trigger: TRIGGER\n";
  }

  // A producer writes 15 records every 20 ms until the kills are over: values 0, 1, 2, ...
  std::atomic<int64_t> produced{0};
  std::atomic<bool> producing{true};
  auto produce = [&](int count) {
    std::vector<connectors::KafkaTestMessage> batch;
    for (int i = 0; i < count; ++i) {
      connectors::KafkaTestMessage m;
      int64_t n = produced + i;
      m.value = "{\"n\":" + std::to_string(n) + "}";
      m.partition = static_cast<int32_t>(n % 3);
      batch.push_back(std::move(m));
    }
    ASSERT_TRUE(connectors::ProduceMessages(bootstrap, *topic, batch).ok());
    produced += count;
  };
  produce(300);
  std::thread producer([&] {
    while (producing) {
      produce(15);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });

  int checkpoint_deletions = 0;
  for (int kill = 0; kill < kKills; ++kill) {
    if (kill % 5 == 4) {
      std::filesystem::remove_all(dir.Join("storage/checkpoints"));
      ++checkpoint_deletions;
    }
    pid_t child = testing::SpawnSelf({"SLUICE_STREAM_CRASH_PIPELINE=" + pipeline}, dir.Join("child.log"));
    ASSERT_GT(child, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<int>(50, 400)(random)));
    ASSERT_EQ(::kill(child, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    std::ifstream log(dir.Join("child.log"));
    std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    ASSERT_TRUE(WIFSIGNALED(status)) << "the child exited by itself; its log:\n" << text;
  }
  producing = false;
  producer.join();

  // One clean run takes everything produced.
  ASSERT_TRUE(RunPipelineFile(pipeline, "available_now").ok());
  auto snapshot = delta::Snapshot::Load(LocalFileSystem(), dir.Join("warehouse/main/raw/crash"));
  ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString();
  auto scan = delta::TableScan::Open(*snapshot, {.columns = {"value", "kafka_partition", "kafka_offset"}});
  ASSERT_TRUE(scan.ok());
  std::vector<int64_t> values;
  std::set<std::pair<int32_t, int64_t>> places;
  while (true) {
    auto batch = (*scan)->Next();
    ASSERT_TRUE(batch.ok()) << batch.status().ToString();
    if (*batch == nullptr) break;
    ColumnPtr n = (*batch)->ColumnAt("value.n").value();
    for (int64_t row = 0; row < (*batch)->num_rows(); ++row) {
      values.push_back(n->Value<int64_t>(row));
      places.insert({(*batch)->column(1)->Value<int32_t>(row), (*batch)->column(2)->Value<int64_t>(row)});
    }
  }
  std::sort(values.begin(), values.end());
  std::cout << produced << " records produced, " << values.size() << " ingested, " << (*snapshot)->version() + 1
            << " commits, " << checkpoint_deletions << " restarts without a checkpoint\n";
  ASSERT_EQ(static_cast<int64_t>(values.size()), produced.load()) << "records lost or duplicated";
  EXPECT_EQ(places.size(), values.size()) << "a Kafka offset ingested twice";
  for (int64_t i = 0; i < produced; ++i) ASSERT_EQ(values[static_cast<size_t>(i)], i) << "record " << i;
}

}  // namespace
}  // namespace sluice::pipeline
