// The crash tests of pipelines: a pipeline file runs in a child process that is killed with
// SIGKILL at random moments, 30 times, then one clean run settles; the targets must hold every
// source row exactly once.
//   - flows: rate → expectations → Delta, and that Delta table → another Delta table;
//   - a stream ingesting a Kafka topic (librdkafka's mock cluster, in this process) while a
//     producer keeps writing; every fifth restart also finds its checkpoint deleted, so the stream
//     must resume from the ingestion table's txns alone.
// The first flows and the stream run with their storage (checkpoints, event log) and warehouse on
// the local disk and on S3 (moto on loopback).
//
// The child is this binary: when SLUICE_PIPELINE_CRASH_FILE names a pipeline file, a static
// initializer runs it before any test, until the child is killed. SLUICE_CRASH_SEED replays a run.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <thread>

#include "sluice/connectors/register_formats.h"
#include "sluice/connectors/testing/kafka_fixture.h"
#include "sluice/connectors/testing/postgres_fixture.h"
#include "sluice/delta/scan.h"
#include "sluice/delta/snapshot.h"
#include "sluice/pipeline/pipeline_runner.h"
#include "testing/child_process.h"
#include "testing/crash_seed.h"
#include "testing/kafka_broker.h"
#include "sluice/storage/file_systems.h"
#include "testing/store_root.h"
#include "testing/temp_dir.h"

namespace sluice::pipeline {
namespace {

constexpr int kKills = 30;

// The pipeline file at `path` with every TRIGGER in it replaced by `trigger`.
Result<PipelineSpec> PipelineFile(const std::string& path, const std::string& trigger) {
  std::ifstream in(path);
  std::string yaml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (size_t at = yaml.find("TRIGGER"); at != std::string::npos; at = yaml.find("TRIGGER", at)) {
    yaml.replace(at, 7, trigger);
  }
  return ParsePipelineSpec(yaml);
}

Status RunPipelineFile(const std::string& path, const std::string& trigger, std::vector<std::string> flows = {}) {
  SLUICE_ASSIGN_OR_RETURN(PipelineSpec spec, PipelineFile(path, trigger));
  RunOptions options;
  options.registry = &connectors::AllFormatsRegistry();
  options.flows = std::move(flows);
  SLUICE_ASSIGN_OR_RETURN(auto run, PipelineRun::Start(spec, options));
  return run->Wait();
}

[[maybe_unused]] const bool kIsCrashChild = [] {
  const char* pipeline = std::getenv("SLUICE_PIPELINE_CRASH_FILE");
  if (pipeline == nullptr) return false;
  Status status = RunPipelineFile(pipeline, "processing_time");
  std::fprintf(stderr, "the crash child ended before it was killed: %s\n", status.ToString().c_str());
  std::_Exit(3);
}();


// Runs the pipeline in a child and kills it kKills times; every `delete_checkpoints_every`-th
// restart (0: never) first deletes the checkpoints. Returns how many restarts had none.
int KillRepeatedly(const std::string& pipeline, const testing::TempDir& dir, std::mt19937_64& random,
                   int delete_checkpoints_every, std::string storage = "") {
  if (storage.empty()) storage = dir.Join("storage");
  int checkpoint_deletions = 0;
  for (int kill = 0; kill < kKills; ++kill) {
    if (delete_checkpoints_every > 0 && kill % delete_checkpoints_every == delete_checkpoints_every - 1) {
      EXPECT_TRUE(storage::DefaultFileSystem()->DeleteRecursively(storage + "/checkpoints").ok());
      ++checkpoint_deletions;
    }
    pid_t child = testing::SpawnSelf({"SLUICE_PIPELINE_CRASH_FILE=" + pipeline}, dir.Join("child.log"));
    EXPECT_GT(child, 0);
    if (child <= 0) return checkpoint_deletions;
    std::this_thread::sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<int>(50, 400)(random)));
    EXPECT_EQ(::kill(child, SIGKILL), 0);
    int status = 0;
    EXPECT_EQ(::waitpid(child, &status, 0), child);
    std::ifstream log(dir.Join("child.log"));
    std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    EXPECT_TRUE(WIFSIGNALED(status)) << "the child exited by itself; its log:\n" << text;
    if (!WIFSIGNALED(status)) return checkpoint_deletions;
  }
  return checkpoint_deletions;
}

std::mt19937_64 SeededRandom() { return std::mt19937_64(sluice::testing::CrashSeed()); }

// Every value of a Delta table's column, sorted.
std::vector<int64_t> SortedValues(const std::string& table, const std::string& column) {
  std::vector<int64_t> values;
  auto snapshot = delta::Snapshot::Load(storage::DefaultFileSystem(), table);
  EXPECT_TRUE(snapshot.ok()) << snapshot.status().ToString();
  if (!snapshot.ok()) return values;
  auto scan = delta::TableScan::Open(*snapshot);
  EXPECT_TRUE(scan.ok());
  while (true) {
    auto batch = (*scan)->Next();
    EXPECT_TRUE(batch.ok()) << batch.status().ToString();
    if (!batch.ok() || *batch == nullptr) break;
    ColumnPtr c = (*batch)->ColumnAt(column).value();
    for (int64_t row = 0; row < (*batch)->num_rows(); ++row) values.push_back(c->Value<int64_t>(row));
  }
  std::sort(values.begin(), values.end());
  return values;
}

// The lines of a pipeline file that place its storage and warehouse under `root`; on S3 with a
// short lease (the object_stores section).
std::string Places(const testing::StoreRoot& root, testing::Store store) {
  std::string text = "storage: " + root.Join("storage") + "\nwarehouse: " + root.Join("warehouse") + "\n";
  if (store == testing::Store::kS3) {
    text += "object_stores:\n  " + root.path().substr(0, root.path().find('/', 5)) + ": {lease_duration: 5s}\n";
  }
  return text;
}

class PipelineOnStoresCrashTest : public ::testing::TestWithParam<testing::Store> {};

TEST_P(PipelineOnStoresCrashTest, FlowsIntoDeltaHoldEveryRowExactlyOnceAfterThirtyKills) {
  std::mt19937_64 random = SeededRandom();
  testing::TempDir dir("sluice-pipeline-crash");
  testing::StoreRoot root(GetParam());
  const std::string pipeline = dir.Join("pipeline.yaml");
  {
    std::ofstream out(pipeline);
    out << "name: crash\n" << Places(root, GetParam()) << R"(
sinks:
  numbers: {format: delta, table: main.c.numbers}
  copy: {format: delta, table: main.c.copy}
flows:
  - name: generate
    source: {format: rate, options: {rowsPerSecond: RATE, maxRowsPerBatch: 250, startTimestamp: START}}
    select: [value, value * 2 AS doubled]
    expectations:
      - {name: doubled_even, expect_or_fail: doubled % 2 = 0}
    sink: numbers
    trigger: TRIGGER
  - name: copy
    source: {format: delta, table: main.c.numbers, options: {maxFilesPerTrigger: 2}}
    sink: copy
    trigger: TRIGGER
)";
  }
  // The rate stream started a second ago, so a first run of `generate` creates the table `copy` reads.
  {
    std::ifstream in(pipeline);
    std::string yaml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    int64_t start_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::system_clock::now().time_since_epoch()).count() - 1000;
    yaml.replace(yaml.find("START"), 5, std::to_string(start_ms));
    // moto, the tests' S3 server, answers far slower than a disk (or S3): a rate its commits keep up with.
    yaml.replace(yaml.find("RATE"), 4, GetParam() == testing::Store::kS3 ? "300" : "3000");
    std::ofstream(pipeline) << yaml;
  }
  ASSERT_TRUE(RunPipelineFile(pipeline, "available_now", {"generate"}).ok());
  KillRepeatedly(pipeline, dir, random, 0, root.Join("storage"));
  // Clean runs: the second lets `copy` read what `generate` wrote during the first.
  for (int run = 0; run < 3; ++run) {
    Status clean = RunPipelineFile(pipeline, "available_now");
    ASSERT_TRUE(clean.ok()) << clean.ToString();
  }

  std::vector<int64_t> numbers = SortedValues(root.Join("warehouse/main/c/numbers"), "value");
  ASSERT_FALSE(numbers.empty());
  for (size_t i = 0; i < numbers.size(); ++i) ASSERT_EQ(numbers[i], static_cast<int64_t>(i)) << "row lost or duplicated";
  std::vector<int64_t> copied = SortedValues(root.Join("warehouse/main/c/copy"), "value");
  std::cout << numbers.size() << " rows generated, " << copied.size() << " copied\n";
  // The last clean run of `generate` may have added rows after `copy` planned its last batch.
  ASSERT_LE(copied.size(), numbers.size());
  for (size_t i = 0; i < copied.size(); ++i) ASSERT_EQ(copied[i], static_cast<int64_t>(i)) << "row lost or duplicated";
  ASSERT_GT(copied.size(), 0u);
  // The event log (segments on an object store) tells of the runs.
  auto events = EventLog::ReadLines(EventLog::PathFor(root.Join("storage")));
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  EXPECT_GT(events->size(), 10u);
}

INSTANTIATE_TEST_SUITE_P(Stores, PipelineOnStoresCrashTest, ::testing::ValuesIn(testing::kAllStores),
                         testing::StoreName);

// A streaming aggregation over a table another flow keeps writing, as a SQL flow in complete mode
// into Delta and in update mode MERGEd into Delta, killed 30 times at random moments (between its
// state write and its commit, in the middle of a state file or of a MERGE, ...): after clean runs
// both tables hold exactly the groups of the rows the source table holds. With either state store.
class AggregationCrashTest : public ::testing::TestWithParam<std::string> {};

TEST_P(AggregationCrashTest, AnAggregationsGroupsAreExactAfterThirtyKills) {
  std::mt19937_64 random = SeededRandom();
  testing::TempDir dir("sluice-aggregation-crash");
  const std::string pipeline = dir.Join("pipeline.yaml");
  int64_t start_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch()).count() - 1000;
  {
    std::ofstream out(pipeline);
    out << "name: crash\nstorage: " << dir.Join("storage") << "\nwarehouse: " << dir.Join("warehouse")
        << "\nstate: {store: " << GetParam() << "}" << R"(
sinks:
  numbers: {format: delta, table: main.c.numbers}
  groups: {format: delta, table: main.c.groups}
  merged:
    format: delta
    table: main.c.merged
    merge: {on: t.k = s.k, when_matched: UPDATE SET *, when_not_matched: INSERT *}
flows:
  - name: generate
    source: {format: rate, options: {rowsPerSecond: 3000, maxRowsPerBatch: 250, startTimestamp: )"
        << start_ms << R"(}}
    sink: numbers
    trigger: TRIGGER
  - name: groups
    sql: SELECT value % 7 AS k, count(*) AS n, sum(value) AS total, min(value) AS low, max(value) AS high
         FROM STREAM(main.c.numbers) GROUP BY value % 7
    sink: groups
    output_mode: complete
    trigger: TRIGGER
  - name: merged_groups
    sql: SELECT value % 7 AS k, count(*) AS n, sum(value) AS total, min(value) AS low, max(value) AS high
         FROM STREAM(main.c.numbers) GROUP BY value % 7
    sink: merged
    output_mode: update
    trigger: TRIGGER
)";
  }
  ASSERT_TRUE(RunPipelineFile(pipeline, "available_now", {"generate"}).ok());
  KillRepeatedly(pipeline, dir, random, 0);
  // Clean runs: the source table settles first, then the aggregation reads all of it.
  ASSERT_TRUE(RunPipelineFile(pipeline, "available_now", {"generate"}).ok());
  ASSERT_TRUE(RunPipelineFile(pipeline, "available_now", {"groups", "merged_groups"}).ok());

  std::vector<int64_t> numbers = SortedValues(dir.Join("warehouse/main/c/numbers"), "value");
  ASSERT_FALSE(numbers.empty());
  std::map<int64_t, std::array<int64_t, 4>> expected;  // k -> n, total, low, high
  for (int64_t v : numbers) {
    auto [it, fresh] = expected.try_emplace(v % 7, std::array<int64_t, 4>{0, 0, v, v});
    it->second[0] += 1;
    it->second[1] += v;
    it->second[2] = std::min(it->second[2], v);
    it->second[3] = std::max(it->second[3], v);
  }
  for (const char* table : {"groups", "merged"}) {
    SCOPED_TRACE(table);
    std::map<int64_t, std::array<int64_t, 4>> groups;
    auto snapshot = delta::Snapshot::Load(storage::DefaultFileSystem(), dir.Join("warehouse/main/c/") + table);
    ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString();
    auto scan = delta::TableScan::Open(*snapshot);
    ASSERT_TRUE(scan.ok());
    while (true) {
      auto batch = (*scan)->Next();
      ASSERT_TRUE(batch.ok()) << batch.status().ToString();
      if (*batch == nullptr) break;
      for (int64_t row = 0; row < (*batch)->num_rows(); ++row) {
        auto value = [&](const char* column) { return (*batch)->ColumnAt(column).value()->Value<int64_t>(row); };
        ASSERT_TRUE(groups.emplace(value("k"), std::array<int64_t, 4>{value("n"), value("total"), value("low"),
                                                                         value("high")})
                        .second)
            << "group " << value("k") << " twice";
      }
    }
    std::cout << numbers.size() << " rows in " << groups.size() << " groups of " << table << "\n";
    EXPECT_EQ(groups, expected);
  }
  // The state is the store's own.
  EXPECT_EQ(std::filesystem::exists(dir.Join("storage/checkpoints/groups/state/0/sst")), GetParam() == "rocksdb");
}

INSTANTIATE_TEST_SUITE_P(StateStores, AggregationCrashTest, ::testing::Values("memory", "rocksdb"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// The change feed's inventory example end to end, killed 30 times at random moments while orders
// are placed, edited and cancelled: a change feed of PostgreSQL into a Delta history table, the
// per-item sum of its changes as SQL upserted into PostgreSQL (update mode) and kept as a
// materialized view in Delta (complete mode). After a clean run catches up, both equal
// PostgreSQL's own GROUP BY over the orders table.
TEST(PipelineCrashTest, TheInventoryAggregationOverAChangeFeedIsExactAfterThirtyKills) {
  std::mt19937_64 random = SeededRandom();
  testing::TempDir dir("sluice-inventory-crash");
  auto db = connectors::testing::PostgresTestDatabase::Create();
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  ASSERT_TRUE((*db)->Execute("CREATE TABLE orders (order_id bigint PRIMARY KEY, item_id bigint NOT NULL, "
                             "quantity bigint NOT NULL); ALTER TABLE orders REPLICA IDENTITY FULL; "
                             "INSERT INTO orders VALUES (0, 0, 1)")
                  .ok());
  const connectors::EmbeddedPostgres& server = (*db)->server();
  const std::string sql =
      "SELECT item_id, sum(CASE WHEN _pg_change_type IN ('insert', 'update_postimage') THEN quantity "
      "WHEN _pg_change_type IN ('delete', 'update_preimage') THEN -quantity ELSE 0 END) AS ordered "
      "FROM STREAM(main.cdc.lb_orders_history) GROUP BY item_id";
  const std::string pipeline = dir.Join("pipeline.yaml");
  std::ofstream(pipeline) << "name: crash\nstorage: " << dir.Join("storage") << "\nwarehouse: " << dir.Join("warehouse")
                          << "\nconnections:\n  shop_db: {type: postgresql, host: \"" << server.host()
                          << "\", port: " << server.port() << ", user: " << server.superuser()
                          << ", database: " << (*db)->name() << R"(}
change_feeds:
  - {name: shop, connection: shop_db, schema: public, target: main.cdc, slot_name: crash_)"
                          << (*db)->name() << R"(, flush_interval: 100 milliseconds}
sinks:
  levels_db: {format: postgresql, options: {connection: shop_db, dbtable: public.levels}}
flows:
  - name: levels_in_postgres
    sql: ")" << sql << R"("
    sink: levels_db
    output_mode: update
    trigger: TRIGGER
materialized_views:
  - name: main.ops.levels
    sql: ")" << sql << R"("
    trigger: TRIGGER
)";

  // Orders placed, edited and cancelled until the kills are over.
  std::atomic<bool> writing{true};
  std::thread writer([&, seed = random()] {
    std::mt19937_64 rng(seed);
    int64_t next = 1;
    while (writing) {
      const int64_t order = std::uniform_int_distribution<int64_t>(1, std::max<int64_t>(1, next))(rng);
      std::string statement;
      switch (std::uniform_int_distribution<int>(0, 3)(rng)) {
        case 0:
        case 1:
          statement = fmt::format("INSERT INTO orders VALUES ({}, {}, {})", next++,
                                  std::uniform_int_distribution<int>(1, 9)(rng),
                                  std::uniform_int_distribution<int>(1, 5)(rng));
          break;
        case 2:
          statement = fmt::format("UPDATE orders SET quantity = quantity + 1, item_id = {} WHERE order_id = {}",
                                  std::uniform_int_distribution<int>(1, 9)(rng), order);
          break;
        default: statement = fmt::format("DELETE FROM orders WHERE order_id = {}", order);
      }
      EXPECT_TRUE((*db)->Execute(statement).ok()) << statement;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  KillRepeatedly(pipeline, dir, random, 0);
  writing = false;
  writer.join();
  // The kills came while the aggregations were running, not before they started.
  auto committed = [&](const std::string& flow) {
    std::error_code ec;
    auto entries = std::filesystem::directory_iterator(dir.Join("storage/checkpoints/" + flow + "/commits"), ec);
    return ec ? 0 : std::distance(entries, std::filesystem::directory_iterator());
  };
  std::cout << committed("levels_in_postgres") << " and " << committed("main.ops.levels")
            << " batches committed by the killed runs\n";
  EXPECT_GT(committed("levels_in_postgres") + committed("main.ops.levels"), 10);

  // A clean run until both targets hold PostgreSQL's own answer (groups whose orders are all gone
  // stay, at 0).
  auto spec = PipelineFile(pipeline, "{kind: processing_time, interval: 100 milliseconds}");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  RunOptions options;
  options.registry = &connectors::AllFormatsRegistry();
  auto run = PipelineRun::Start(*spec, options);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  const connectors::testing::Rows expected =
      (*db)->Query("SELECT item_id, sum(quantity) FROM orders GROUP BY 1 ORDER BY 1").value();
  auto lake = [&] {
    connectors::testing::Rows rows;
    auto snapshot = delta::Snapshot::Load(storage::DefaultFileSystem(), dir.Join("warehouse/main/ops/levels"));
    if (!snapshot.ok()) return rows;
    auto scan = delta::TableScan::Open(*snapshot);
    while (scan.ok()) {
      auto batch = (*scan)->Next();
      if (!batch.ok() || *batch == nullptr) break;
      for (int64_t row = 0; row < (*batch)->num_rows(); ++row) {
        const int64_t ordered = (*batch)->ColumnAt("ordered").value()->Value<int64_t>(row);
        if (ordered == 0) continue;
        rows.push_back({std::to_string((*batch)->ColumnAt("item_id").value()->Value<int64_t>(row)),
                        std::to_string(ordered)});
      }
    }
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return std::stoll(a[0]) < std::stoll(b[0]); });
    return rows;
  };
  connectors::testing::Rows in_postgres, in_delta;
  for (auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
       std::chrono::steady_clock::now() < deadline;) {
    in_postgres = (*db)->Query("SELECT item_id, ordered FROM levels WHERE ordered <> 0 ORDER BY 1").value_or(
        connectors::testing::Rows{});
    in_delta = lake();
    if (in_postgres == expected && in_delta == expected) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  (*run)->Stop();
  EXPECT_TRUE((*run)->Wait().ok());
  std::cout << expected.size() << " items, "
            << (*db)->QueryValue("SELECT count(*) FROM orders").value_or("?") << " orders\n";
  EXPECT_EQ(in_postgres, expected);
  EXPECT_EQ(in_delta, expected);
}

// Kills a stream of the 3-partition `topic` 30 times while records arrive, then checks that its
// ingestion table holds every record exactly once.
void IngestExactlyOnceThroughThirtyKills(const std::string& bootstrap, const std::optional<std::string>& topic,
                                        testing::Store store = testing::Store::kLocal) {
  ASSERT_TRUE(topic.has_value());
  std::mt19937_64 random = SeededRandom();
  testing::TempDir dir("sluice-stream-crash");
  testing::StoreRoot root(store);
  const std::string pipeline = dir.Join("pipeline.yaml");
  {
    std::ofstream out(pipeline);
    out << "name: crash\n" << Places(root, store)
        << "streams:\n  - name: main.raw.crash\n    source: {format: kafka, options: {bootstrap_servers: \""
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

  int checkpoint_deletions =
      KillRepeatedly(pipeline, dir, random, /*delete_checkpoints_every=*/5, root.Join("storage"));
  producing = false;
  producer.join();

  // One clean run takes everything produced.
  ASSERT_TRUE(RunPipelineFile(pipeline, "available_now").ok());
  auto snapshot = delta::Snapshot::Load(storage::DefaultFileSystem(), root.Join("warehouse/main/raw/crash"));
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

class StreamOnStoresCrashTest : public ::testing::TestWithParam<testing::Store> {};

TEST_P(StreamOnStoresCrashTest, IngestionTableHoldsTheTopicExactlyOnceAfterThirtyKills) {
  auto kafka = connectors::testing::SharedKafka();
  ASSERT_TRUE(kafka.ok()) << kafka.status().ToString();
  auto topic = connectors::testing::CreateTestTopic(3);
  ASSERT_TRUE(topic.ok()) << topic.status().ToString();
  IngestExactlyOnceThroughThirtyKills((*kafka)->bootstrap_servers(), *topic, GetParam());
}

INSTANTIATE_TEST_SUITE_P(Stores, StreamOnStoresCrashTest, ::testing::ValuesIn(testing::kAllStores),
                         testing::StoreName);

// The same against a real Apache Kafka broker (testing/kafka_broker.h).
TEST(StreamCrashTest, AgainstARealBrokerTheIngestionTableHoldsTheTopicExactlyOnceAfterThirtyKills) {
  auto broker = sluice::testing::SharedKafkaBroker();
  ASSERT_TRUE(broker.ok()) << broker.status().ToString();
  auto topic = sluice::testing::CreateBrokerTopic(3);
  ASSERT_TRUE(topic.ok()) << topic.status().ToString();
  IngestExactlyOnceThroughThirtyKills((*broker)->bootstrap_servers(sluice::testing::KafkaBroker::Listener::kPlaintext),
                                      *topic);
}

}  // namespace
}  // namespace sluice::pipeline
