// One stream run by a workers group of 1, 2 and 4 processes (group_ingestion.h), against a real
// Apache Kafka broker (the tests' broker, src/testing/kafka_broker.h; install it with
// scripts/install-test-tools.sh): N JSON events of ~130 bytes in P partitions are produced once,
// then for each group size a fresh ingestion table is filled by that many member processes,
// timed from their start until the table's txns say every partition is written. In the same run:
//   kcat -C   consuming the topic to /dev/null (a plain Kafka read), and
//   the same stream in one process without a group (the engine's stream, available_now).
// Prints msgs/s of each, the ratio of each group size to one member, the scaling efficiency
// (per member, and per core: the machine's cores bound what more members can add), the commits
// and the batches the members dropped and read again (rebalances as members join).
//
//   workers_group_bench [--messages N] [--partitions P] [--members 1,2,4]
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "sluice/connectors/embedded_kafka.h"
#include "sluice/connectors/register_formats.h"
#include "sluice/delta/snapshot.h"
#include "sluice/pipeline/ingestion_sink.h"
#include "sluice/pipeline/pipeline_runner.h"
#include "sluice/storage/file_systems.h"
#include "testing/child_process.h"
#include "testing/kafka_broker.h"

namespace sluice {
namespace {

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "workers_group_bench: %s\n", message.c_str());
  std::exit(1);
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

constexpr const char* kSchema =
    R"({"type":"object","properties":{"event_id":{"type":"string"},"user_id":{"type":"integer"},)"
    R"("kind":{"type":"string"},"amount":{"type":"number"},"ts":{"type":"string","format":"date-time"}}})";

std::string PipelineYaml(const std::string& root, const std::string& bootstrap, const std::string& topic, bool group) {
  return "name: bench\nstorage: " + root + "/storage\nwarehouse: " + root +
         "/warehouse\nstreams:\n  - name: main.raw.events\n    source: {format: kafka, options: {bootstrap_servers: \"" +
         bootstrap + "\", subscribe: " + topic +
         ", starting_offsets: earliest, max_offsets_per_trigger: 500000}}\n    schema_config:\n      value: {format: "
         "json, schema: '" +
         kSchema + "'}\n    ingestion_config: {table: main.raw.events}\n" +
         (group ? "    scale: {group: true, group_id: " + topic + "-" + std::to_string(getpid()) + "-" +
                      std::to_string(std::hash<std::string>{}(root)) + "}\n"
                : "    trigger: available_now\n");
}

Status RunPipeline(const std::string& yaml) {
  SLUICE_ASSIGN_OR_RETURN(pipeline::PipelineSpec spec, pipeline::ParsePipelineSpec(yaml));
  pipeline::RunOptions options;
  options.registry = &connectors::AllFormatsRegistry();
  SLUICE_ASSIGN_OR_RETURN(auto run, pipeline::PipelineRun::Start(spec, options));
  return run->Wait();
}

// Whether the table records, for every partition, the last offset it holds.
bool AllWritten(const std::string& table, const std::string& topic, const std::vector<int64_t>& last_offsets) {
  auto snapshot = delta::Snapshot::Load(storage::DefaultFileSystem(), table);
  if (!snapshot.ok()) return false;
  for (size_t partition = 0; partition < last_offsets.size(); ++partition) {
    auto txn = (*snapshot)->TransactionVersion(
        pipeline::IngestionAppId("main.raw.events", topic, static_cast<int32_t>(partition)));
    if (!txn || *txn < last_offsets[partition]) return false;
  }
  return true;
}

int Main(int argc, char** argv) {
  if (const char* member = std::getenv("SLUICE_BENCH_MEMBER")) {
    std::ifstream in(member);
    Status status = RunPipeline(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()));
    Die("member ended: " + status.ToString());
  }
  int64_t messages = 1'000'000;
  int partitions = 12;
  std::vector<int> group_sizes = {1, 2, 4};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--messages") {
      messages = std::atoll(argv[i + 1]);
    } else if (flag == "--partitions") {
      partitions = std::atoi(argv[i + 1]);
    } else if (flag == "--members") {
      group_sizes.clear();
      for (const char* at = argv[i + 1]; *at != '\0';) {
        group_sizes.push_back(std::atoi(at));
        while (*at != '\0' && *at != ',') ++at;
        if (*at == ',') ++at;
      }
    } else {
      Die("unknown flag " + flag);
    }
  }

  auto broker = testing::SharedKafkaBroker();
  if (!broker.ok()) Die(broker.status().ToString());
  const std::string bootstrap = (*broker)->bootstrap_servers(testing::KafkaBroker::Listener::kPlaintext);
  auto topic = testing::CreateBrokerTopic(partitions);
  if (!topic.ok()) Die(topic.status().ToString());
  auto produce_start = std::chrono::steady_clock::now();
  std::vector<int64_t> last_offsets(static_cast<size_t>(partitions), -1);
  int64_t bytes = 0;
  for (int64_t from = 0; from < messages; from += 100'000) {
    std::vector<connectors::KafkaTestMessage> chunk;
    for (int64_t i = from; i < std::min(messages, from + 100'000); ++i) {
      connectors::KafkaTestMessage message;
      message.value = "{\"event_id\":\"e-" + std::to_string(i) + "\",\"user_id\":" + std::to_string(i % 100'000) +
                      ",\"kind\":\"purchase\",\"amount\":" + std::to_string(i % 1000) +
                      ".25,\"ts\":\"2026-12-05T10:00:00.000Z\"}";
      message.partition = static_cast<int32_t>(i % partitions);
      ++last_offsets[static_cast<size_t>(message.partition)];
      bytes += static_cast<int64_t>(message.value->size());
      chunk.push_back(std::move(message));
    }
    if (Status s = connectors::ProduceMessages(bootstrap, *topic, chunk); !s.ok()) Die(s.ToString());
  }
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  std::printf("%lld messages of %.0f bytes in %d partitions of a real broker (produced in %.1f s), %d cores\n",
              static_cast<long long>(messages), static_cast<double>(bytes) / static_cast<double>(messages), partitions,
              Seconds(produce_start), cores);

  if (std::system("command -v kcat > /dev/null 2>&1") == 0) {
    auto start = std::chrono::steady_clock::now();
    if (std::system(("kcat -C -b " + bootstrap + " -t " + *topic + " -o beginning -e -q > /dev/null").c_str()) != 0) {
      Die("kcat failed");
    }
    std::printf("kcat -C > /dev/null:            %10.0f msgs/s\n", static_cast<double>(messages) / Seconds(start));
  } else {
    std::printf("kcat: not installed (apt-get install kcat) - no plain-read reference in this run\n");
  }

  char directory[] = "/tmp/workers_group_bench.XXXXXX";
  if (mkdtemp(directory) == nullptr) Die("mkdtemp failed");
  const std::string dir = directory;
  {
    auto start = std::chrono::steady_clock::now();
    if (Status s = RunPipeline(PipelineYaml(dir + "/single", bootstrap, *topic, false)); !s.ok()) Die(s.ToString());
    if (!AllWritten(dir + "/single/warehouse/main/raw/events", *topic, last_offsets)) Die("the single stream missed records");
    std::printf("one stream, no group:           %10.0f msgs/s\n", static_cast<double>(messages) / Seconds(start));
  }

  double one_member = 0;
  for (int members : group_sizes) {
    const std::string root = dir + "/group" + std::to_string(members);
    const std::string yaml_path = dir + "/group" + std::to_string(members) + ".yaml";
    std::ofstream(yaml_path) << PipelineYaml(root, bootstrap, *topic, true);
    const std::string table = root + "/warehouse/main/raw/events";
    auto start = std::chrono::steady_clock::now();
    std::vector<pid_t> children;
    for (int m = 0; m < members; ++m) {
      pid_t child = testing::SpawnSelf({"SLUICE_BENCH_MEMBER=" + yaml_path},
                                       root + "-member" + std::to_string(m) + ".log");
      if (child <= 0) Die("cannot start a member");
      children.push_back(child);
    }
    while (!AllWritten(table, *topic, last_offsets)) {
      if (Seconds(start) > 600) Die("the group did not finish within 10 minutes");
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    const double seconds = Seconds(start);
    for (pid_t child : children) {
      kill(child, SIGKILL);
      waitpid(child, nullptr, 0);
    }
    int dropped = 0;
    for (int m = 0; m < members; ++m) {
      std::ifstream log(root + "-member" + std::to_string(m) + ".log");
      const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
      for (size_t at = text.find("dropped ("); at != std::string::npos; at = text.find("dropped (", at + 1)) ++dropped;
    }
    auto snapshot = delta::Snapshot::Load(storage::DefaultFileSystem(), table);
    if (!snapshot.ok()) Die(snapshot.status().ToString());
    const double rate = static_cast<double>(messages) / seconds;
    if (members == 1) one_member = rate;
    std::printf("workers group of %d:             %10.0f msgs/s (%.1f s, %lld commits, %d batches dropped)", members, rate,
                seconds, static_cast<long long>((*snapshot)->version() + 1), dropped);
    if (one_member > 0 && members > 1) {
      std::printf("; x%.2f of one member, efficiency %.2f per member, %.2f per core", rate / one_member,
                  rate / (one_member * members), rate / (one_member * std::min(members, cores)));
    }
    std::printf("\n");
  }
  std::system(("rm -rf " + dir).c_str());
  return 0;
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) { return sluice::Main(argc, argv); }
