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

#include "kafka_bench_support.h"
#include "testing/child_process.h"

namespace sluice {
namespace {

constexpr const char* kBench = "workers_group_bench";

[[noreturn]] void Die(const std::string& message) { bench::Fail(kBench, message); }

using bench::Seconds;

int Main(int argc, char** argv) {
  if (const char* member = std::getenv("SLUICE_BENCH_MEMBER")) {
    std::ifstream in(member);
    Status status = bench::RunPipeline(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()));
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
  const bench::ProducedEvents produced = bench::ProduceEvents(kBench, bootstrap, *topic, messages, partitions);
  const std::vector<int64_t>& last_offsets = produced.last_offsets;
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  std::printf("%lld messages of %.0f bytes in %d partitions of a real broker (produced in %.1f s), %d cores\n",
              static_cast<long long>(messages), static_cast<double>(produced.bytes) / static_cast<double>(messages),
              partitions, produced.seconds, cores);
  if (double kcat = bench::KcatRate(kBench, bootstrap, *topic, messages); kcat > 0) {
    std::printf("kcat -C > /dev/null:            %10.0f msgs/s\n", kcat);
  }

  char directory[] = "/tmp/workers_group_bench.XXXXXX";
  if (mkdtemp(directory) == nullptr) Die("mkdtemp failed");
  const std::string dir = directory;
  {
    auto start = std::chrono::steady_clock::now();
    if (Status s = bench::RunPipeline(bench::StreamPipelineYaml(dir + "/single", bootstrap, *topic)); !s.ok()) {
      Die(s.ToString());
    }
    if (!bench::AllWritten(bench::StreamTable(dir + "/single"), *topic, last_offsets)) {
      Die("the single stream missed records");
    }
    std::printf("one stream, no group:           %10.0f msgs/s\n", static_cast<double>(messages) / Seconds(start));
  }

  double one_member = 0;
  for (int members : group_sizes) {
    const std::string root = dir + "/group" + std::to_string(members);
    const std::string yaml_path = dir + "/group" + std::to_string(members) + ".yaml";
    std::ofstream(yaml_path) << bench::StreamPipelineYaml(
        root, bootstrap, *topic, *topic + "-" + std::to_string(getpid()) + "-" + std::to_string(std::hash<std::string>{}(root)));
    const std::string table = bench::StreamTable(root);
    auto start = std::chrono::steady_clock::now();
    std::vector<pid_t> children;
    for (int m = 0; m < members; ++m) {
      pid_t child = testing::SpawnSelf({"SLUICE_BENCH_MEMBER=" + yaml_path},
                                       root + "-member" + std::to_string(m) + ".log");
      if (child <= 0) Die("cannot start a member");
      children.push_back(child);
    }
    while (!bench::AllWritten(table, *topic, last_offsets)) {
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
