// Streams run by workers groups (group_ingestion.h) against a real Kafka broker: members share a
// topic's partitions, take them over from members that leave, die or stall, and the ingestion
// table holds every record exactly once throughout.
//
// The members of the churn test are this binary in child processes: when SLUICE_GROUP_MEMBER_FILE
// names a pipeline file, a static initializer runs it as member SLUICE_GROUP_INSTANCE until
// SIGTERM. SLUICE_CRASH_SEED replays a run.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "sluice/connectors/embedded_kafka.h"
#include "sluice/connectors/register_formats.h"
#include "sluice/core/builder.h"
#include "sluice/core/error_classes.h"
#include "sluice/delta/scan.h"
#include "sluice/delta/snapshot.h"
#include "sluice/delta/writer.h"
#include "sluice/pipeline/group_ingestion.h"
#include "sluice/pipeline/pipeline_runner.h"
#include "sluice/storage/file_systems.h"
#include "testing/child_process.h"
#include "testing/crash_seed.h"
#include "testing/kafka_broker.h"
#include "testing/store_root.h"
#include "testing/temp_dir.h"

namespace sluice::pipeline {
namespace {

[[maybe_unused]] const bool kIsGroupMember = [] {
  const char* file = std::getenv("SLUICE_GROUP_MEMBER_FILE");
  if (file == nullptr) return false;
  // SIGTERM stops the run, as `sluice run` does; blocked before any thread starts so that only
  // the waiting thread takes it.
  sigset_t terminate;
  sigemptyset(&terminate);
  sigaddset(&terminate, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &terminate, nullptr);
  Status status = [&]() -> Status {
    std::ifstream in(file);
    std::string yaml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    SLUICE_ASSIGN_OR_RETURN(PipelineSpec spec, ParsePipelineSpec(yaml));
    RunOptions options;
    options.registry = &connectors::AllFormatsRegistry();
    options.instance_id = std::getenv("SLUICE_GROUP_INSTANCE");
    SLUICE_ASSIGN_OR_RETURN(auto run, PipelineRun::Start(spec, options));
    std::thread stopper([&] {
      int signal = 0;
      sigwait(&terminate, &signal);
      run->Stop();
    });
    stopper.detach();
    return run->Wait();
  }();
  if (!status.ok()) std::fprintf(stderr, "member failed: %s\n", status.ToString().c_str());
  std::_Exit(status.ok() ? 0 : 3);
}();

// value.n, kafka_partition and kafka_offset of every row of the ingestion table.
struct Ingested {
  std::vector<int64_t> values;  // sorted
  std::set<std::pair<int32_t, int64_t>> places;
  int64_t rows = 0;
  int64_t version = -1;
};

Ingested ReadIngested(const std::string& table) {
  Ingested ingested;
  auto snapshot = delta::Snapshot::Load(storage::DefaultFileSystem(), table);
  if (!snapshot.ok()) return ingested;
  ingested.version = (*snapshot)->version();
  auto scan = delta::TableScan::Open(*snapshot, {.columns = {"value", "kafka_partition", "kafka_offset"}});
  EXPECT_TRUE(scan.ok()) << scan.status().ToString();
  while (scan.ok()) {
    auto batch = (*scan)->Next();
    EXPECT_TRUE(batch.ok()) << batch.status().ToString();
    if (!batch.ok() || *batch == nullptr) break;
    ColumnPtr n = (*batch)->ColumnAt("value.n").value();
    for (int64_t row = 0; row < (*batch)->num_rows(); ++row) {
      ingested.values.push_back(n->Value<int64_t>(row));
      ingested.places.insert({(*batch)->column(1)->Value<int32_t>(row), (*batch)->column(2)->Value<int64_t>(row)});
      ++ingested.rows;
    }
  }
  std::sort(ingested.values.begin(), ingested.values.end());
  return ingested;
}

// Writes records {"n": k} for k = produced, produced + 1, ... into partition k % partitions.
class Producer {
 public:
  Producer(std::string bootstrap, std::string topic, int partitions)
      : bootstrap_(std::move(bootstrap)), topic_(std::move(topic)), partitions_(partitions) {}
  ~Producer() { StopContinuous(); }

  void Produce(int count) {
    std::vector<connectors::KafkaTestMessage> batch;
    for (int i = 0; i < count; ++i) {
      connectors::KafkaTestMessage message;
      const int64_t n = produced_ + i;
      message.value = "{\"n\":" + std::to_string(n) + "}";
      message.partition = static_cast<int32_t>(n % partitions_.load());
      batch.push_back(std::move(message));
    }
    Status status = connectors::ProduceMessages(bootstrap_, topic_, batch);
    ASSERT_TRUE(status.ok()) << status.ToString();
    produced_ += count;
  }
  // `count` records every 25 ms until StopContinuous.
  void StartContinuous(int count) {
    running_ = true;
    thread_ = std::thread([this, count] {
      while (running_) {
        Produce(count);
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
      }
    });
  }
  void StopContinuous() {
    running_ = false;
    if (thread_.joinable()) thread_.join();
  }
  int64_t produced() const { return produced_; }
  // After partitions were added to the topic.
  void set_partitions(int partitions) { partitions_ = partitions; }

 private:
  std::string bootstrap_, topic_;
  std::atomic<int> partitions_;
  std::atomic<int64_t> produced_{0};
  std::atomic<bool> running_{false};
  std::thread thread_;
};

std::string PipelineYaml(const testing::StoreRoot& root, const std::string& bootstrap, const std::string& topic,
                         const std::string& extra_source_options = "") {
  std::string places = "storage: " + root.Join("storage") + "\nwarehouse: " + root.Join("warehouse") + "\n";
  if (root.path().starts_with("s3://")) {
    places += "object_stores:\n  " + root.path().substr(0, root.path().find('/', 5)) + ": {lease_duration: 5s}\n";
  }
  return "name: group\n" + places +
         "streams:\n  - name: main.raw.events\n    source: {format: kafka, options: {bootstrap_servers: \"" + bootstrap +
         "\", subscribe: " + topic +
         ", starting_offsets: earliest, max_offsets_per_trigger: 300, kafka.session.timeout.ms: 6000, "
         "kafka.heartbeat.interval.ms: 1000" +
         extra_source_options +
         "}}\n"
         "    schema_config:\n      value: {format: json, schema: '{\"type\":\"object\",\"properties\":"
         "{\"n\":{\"type\":\"integer\"}}}'}\n"
         "    ingestion_config: {table: main.raw.events}\n    scale: {group: true}\n";
}

// Every record produced is in the table exactly once, at its own Kafka place.
void ExpectExactlyOnce(const Ingested& ingested, int64_t produced) {
  ASSERT_EQ(ingested.rows, produced) << "records lost or duplicated";
  EXPECT_EQ(static_cast<int64_t>(ingested.places.size()), ingested.rows) << "a Kafka offset ingested twice";
  for (int64_t i = 0; i < produced; ++i) ASSERT_EQ(ingested.values[static_cast<size_t>(i)], i) << "record " << i;
}

class GroupIngestionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto broker = sluice::testing::SharedKafkaBroker();
    ASSERT_TRUE(broker.ok()) << broker.status().ToString();
    bootstrap_ = (*broker)->bootstrap_servers(sluice::testing::KafkaBroker::Listener::kPlaintext);
  }

  // A member of the stream's group in this process, running on its own thread.
  struct LocalMember {
    std::unique_ptr<GroupIngestion> ingestion;
    std::thread thread;
    Status status;                   // Run()'s, once `done`
    std::atomic<bool> done{false};
    ~LocalMember() { Stop(); }
    void Stop() {
      if (!thread.joinable()) return;
      ingestion->Stop();
      thread.join();
    }
  };

  std::unique_ptr<LocalMember> StartMember(const PipelineSpec& spec, const std::string& instance) {
    auto member = std::make_unique<LocalMember>();
    const StreamSpec& stream = spec.streams.at(0);
    IngestionSpec ingestion = IngestionSpecOf(spec, stream).value();
    auto sink = std::make_unique<IngestionSink>(ingestion, storage::DefaultFileSystem());
    GroupIngestionConfig config{.group_id = "sluice-" + stream.name + "-" + spec.warehouse, .instance_id = instance};
    member->ingestion = GroupIngestion::Make(ingestion, spec.ResolvedOptions(stream.source).value(), std::move(sink),
                                             storage::DefaultFileSystem(), config)
                            .value();
    LocalMember* raw = member.get();
    member->thread = std::thread([raw] {
      raw->status = raw->ingestion->Run();
      raw->done = true;
    });
    return member;
  }

  // Waits until the table holds `rows` rows (or a minute passed) and returns what it holds.
  static Ingested AwaitRows(const std::string& table, int64_t rows) {
    Ingested ingested;
    for (auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
         std::chrono::steady_clock::now() < deadline;) {
      ingested = ReadIngested(table);
      if (ingested.rows >= rows) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    return ingested;
  }

  std::string bootstrap_;
};

TEST_F(GroupIngestionTest, TwoMembersShareThePartitionsAndOneTakesAllOverWhenTheOtherLeaves) {
  auto topic = sluice::testing::CreateBrokerTopic(12);
  ASSERT_TRUE(topic.ok()) << topic.status().ToString();
  testing::StoreRoot root(testing::Store::kLocal);
  PipelineSpec spec = ParsePipelineSpec(PipelineYaml(root, bootstrap_, *topic)).value();
  const std::string table = root.Join("warehouse/main/raw/events");
  Producer producer(bootstrap_, *topic, 12);
  producer.Produce(2400);

  auto a = StartMember(spec, "a");
  auto b = StartMember(spec, "b");
  Ingested first = AwaitRows(table, 2400);
  ExpectExactlyOnce(first, 2400);
  EXPECT_GT(a->ingestion->batches_committed(), 0) << "member a wrote nothing";
  EXPECT_GT(b->ingestion->batches_committed(), 0) << "member b wrote nothing";
  // Every partition's progress is in the table, each as a txn of its own.
  auto snapshot = delta::Snapshot::Load(storage::DefaultFileSystem(), table).value();
  for (int partition = 0; partition < 12; ++partition) {
    EXPECT_EQ(snapshot->TransactionVersion(connectors::PartitionAppId("main.raw.events", *topic, partition)), 199)
        << "partition " << partition;
  }

  // a leaves; b reads every partition from where the table says, including a's.
  a->Stop();
  EXPECT_TRUE(a->status.ok()) << a->status.ToString();
  const int64_t b_batches = b->ingestion->batches_committed();
  producer.Produce(1200);
  Ingested second = AwaitRows(table, 3600);
  ExpectExactlyOnce(second, 3600);
  EXPECT_GT(b->ingestion->batches_committed(), b_batches);
  b->Stop();
  EXPECT_TRUE(b->status.ok()) << b->status.ToString();

  // A member that starts later resumes from the table's txns alone.
  producer.Produce(600);
  auto c = StartMember(spec, "");
  ExpectExactlyOnce(AwaitRows(table, 4200), 4200);
  c->Stop();
  EXPECT_TRUE(c->status.ok()) << c->status.ToString();
}

TEST_F(GroupIngestionTest, ATableThatMayExpireItsTransactionsIsRefused) {
  auto topic = sluice::testing::CreateBrokerTopic(2);
  ASSERT_TRUE(topic.ok()) << topic.status().ToString();
  testing::StoreRoot root(testing::Store::kLocal);
  PipelineSpec spec = ParsePipelineSpec(PipelineYaml(root, bootstrap_, *topic)).value();
  const std::string table = root.Join("warehouse/main/raw/events");
  delta::WriteOptions options;
  options.table_properties = {{"delta.setTransactionRetentionDuration", "interval 1 days"}};
  TypePtr schema = DataType::Struct({Field{"n", DataType::Long(), true}}).value();
  BatchPtr empty = RecordBatch::Make(schema, {MakeNullColumn(DataType::Long(), 0)}, 0).value();
  ASSERT_TRUE(delta::WriteTable(root.file_system(), table, {empty}, options).ok());
  Producer(bootstrap_, *topic, 2).Produce(10);

  auto member = StartMember(spec, "");
  for (auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
       !member->done && std::chrono::steady_clock::now() < deadline;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  member->Stop();
  EXPECT_EQ(member->status.error_class(), errors::kInvalidPipeline) << member->status.ToString();
  EXPECT_NE(member->status.message().find("setTransactionRetentionDuration"), std::string::npos);
  EXPECT_EQ(member->ingestion->batches_committed(), 0);
}

TEST_F(GroupIngestionTest, MembersRideOutABrokerRestartAndReadPartitionsAddedToTheirTopic) {
  auto broker = sluice::testing::SharedKafkaBroker();
  ASSERT_TRUE(broker.ok()) << broker.status().ToString();
  auto topic = sluice::testing::CreateBrokerTopic(4);
  ASSERT_TRUE(topic.ok()) << topic.status().ToString();
  testing::StoreRoot root(testing::Store::kLocal);
  // Members learn of new partitions when they refresh the topic's metadata (every 5 minutes by
  // default).
  PipelineSpec spec =
      ParsePipelineSpec(PipelineYaml(root, bootstrap_, *topic, ", kafka.topic.metadata.refresh.interval.ms: 1000"))
          .value();
  const std::string table = root.Join("warehouse/main/raw/events");
  Producer producer(bootstrap_, *topic, 4);
  producer.Produce(800);
  auto a = StartMember(spec, "");
  auto b = StartMember(spec, "");
  ExpectExactlyOnce(AwaitRows(table, 800), 800);

  Status restarted = (*broker)->Restart(std::chrono::seconds(2));
  ASSERT_TRUE(restarted.ok()) << restarted.ToString();
  producer.Produce(800);
  ExpectExactlyOnce(AwaitRows(table, 1600), 1600);

  Status grown = (*broker)->AddPartitions(*topic, 8);
  ASSERT_TRUE(grown.ok()) << grown.ToString();
  producer.set_partitions(8);
  producer.Produce(800);
  ExpectExactlyOnce(AwaitRows(table, 2400), 2400);
  auto snapshot = delta::Snapshot::Load(storage::DefaultFileSystem(), table).value();
  for (int partition = 4; partition < 8; ++partition) {
    EXPECT_EQ(snapshot->TransactionVersion(connectors::PartitionAppId("main.raw.events", *topic, partition)), 99)
        << "added partition " << partition;
  }
  a->Stop();
  b->Stop();
  EXPECT_TRUE(a->status.ok()) << a->status.ToString();
  EXPECT_TRUE(b->status.ok()) << b->status.ToString();
}

// Members in child processes on one 12-partition topic with their table and checkpoints on S3,
// while records arrive: 30 events at random — a member killed with -9, a member started (a new
// one, or a killed one again under its instance id), a member stopped with SIGTERM — and once a
// member paused with SIGSTOP past its session timeout, then resumed (a zombie that must not
// write the partitions it lost twice). Then two members take what is left.
TEST_F(GroupIngestionTest, ChurningMembersLeaveEveryRecordInTheTableExactlyOnce) {
  auto topic = sluice::testing::CreateBrokerTopic(12);
  ASSERT_TRUE(topic.ok()) << topic.status().ToString();
  std::mt19937_64 random(sluice::testing::CrashSeed());
  testing::TempDir dir("sluice-group-churn");
  testing::StoreRoot root(testing::Store::kS3);
  const std::string pipeline = dir.Join("pipeline.yaml");
  std::ofstream(pipeline) << PipelineYaml(root, bootstrap_, *topic);
  const std::string table = root.Join("warehouse/main/raw/events");

  struct Member {
    pid_t pid;
    std::string id;
  };
  std::vector<Member> running;
  std::vector<std::string> killed_ids;
  int next_id = 0;
  auto log_of = [&](const std::string& id) { return dir.Join("member-" + id + ".log"); };
  auto log_text = [&](const std::string& id) {
    std::ifstream in(log_of(id));
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  auto start = [&](std::string id) {
    pid_t pid = sluice::testing::SpawnSelf({"SLUICE_GROUP_MEMBER_FILE=" + pipeline, "SLUICE_GROUP_INSTANCE=" + id},
                                           log_of(id));
    ASSERT_GT(pid, 0);
    running.push_back(Member{pid, std::move(id)});
  };
  auto stop = [&](size_t index) {
    Member member = running[index];
    running.erase(running.begin() + static_cast<std::ptrdiff_t>(index));
    ASSERT_EQ(::kill(member.pid, SIGTERM), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(member.pid, &status, 0), member.pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "member " << member.id << " did not stop cleanly; its log:\n" << log_text(member.id);
  };

  Producer producer(bootstrap_, *topic, 12);
  producer.Produce(1200);
  producer.StartContinuous(12);
  start("m" + std::to_string(next_id++));
  start("m" + std::to_string(next_id++));
  int kills = 0, starts = 2, stops = 0;
  for (int event = 0; event < 30; ++event) {
    std::this_thread::sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<int>(300, 1500)(random)));
    if (event == 12 && !running.empty()) {
      // The zombie: paused past its 6 s session, its partitions go to the others meanwhile.
      const Member& member = running.front();
      ASSERT_EQ(::kill(member.pid, SIGSTOP), 0);
      std::this_thread::sleep_for(std::chrono::seconds(9));
      ASSERT_EQ(::kill(member.pid, SIGCONT), 0);
      continue;
    }
    const int choice = std::uniform_int_distribution<int>(0, 2)(random);
    if (running.size() <= 1 || (choice == 0 && running.size() < 4)) {
      // A killed member comes back under its id half of the time (static membership).
      if (!killed_ids.empty() && random() % 2 == 0) {
        std::string id = killed_ids.back();
        killed_ids.pop_back();
        start(id);
      } else {
        start("m" + std::to_string(next_id++));
      }
      ++starts;
    } else if (choice == 1) {
      const size_t index = random() % running.size();
      ASSERT_EQ(::kill(running[index].pid, SIGKILL), 0);
      ASSERT_EQ(::waitpid(running[index].pid, nullptr, 0), running[index].pid);
      killed_ids.push_back(running[index].id);
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(index));
      ++kills;
    } else {
      stop(random() % running.size());
      ++stops;
    }
  }
  producer.StopContinuous();
  const Ingested during = ReadIngested(table);
  while (!running.empty()) stop(0);

  // Two members take what is left, partitions of members killed last included.
  start("final-a");
  start("final-b");
  Ingested ingested = AwaitRows(table, producer.produced());
  while (!running.empty()) stop(0);
  ingested = ReadIngested(table);
  // Batches the members dropped on a revocation or a takeover, as their logs say.
  int dropped = 0;
  for (int id = 0; id < next_id; ++id) {
    const std::string text = log_text("m" + std::to_string(id));
    for (size_t at = text.find("dropped ("); at != std::string::npos; at = text.find("dropped (", at + 1)) ++dropped;
  }
  std::cout << producer.produced() << " records, " << during.rows << " ingested during the events, " << kills
            << " kills, " << starts << " starts, " << stops << " stops, " << ingested.version + 1 << " commits, "
            << dropped << " batches dropped\n";
  EXPECT_GT(during.rows, 1200) << "the members wrote nothing while the events went on";
  ExpectExactlyOnce(ingested, producer.produced());
}

}  // namespace
}  // namespace sluice::pipeline
