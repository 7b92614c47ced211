// Kafka into Delta, sluice beside the peer users would run instead: Spark Structured Streaming with
// Delta Lake (tests/tools/delta-spark: pyspark 4.2 and Delta 4.4 from scripts/install-test-tools.sh;
// Spark's Kafka source from bench/spark/pom.xml, resolved here on first use). N JSON events of ~106
// bytes in P partitions of a real broker (the tests' Kafka 4.1, src/testing/kafka_broker.h) are
// produced once; then, each into a fresh table:
//   kcat -C             the topic read to /dev/null (the bare tool),
//   sluice              the stream (available_now) into its ingestion table,
//   Spark               readStream kafka -> from_json -> the same columns -> writeStream delta,
//                       trigger availableNow, the same maxOffsetsPerTrigger (bench/spark_kafka_to_delta.py).
// Prints msgs/s of each and sluice's ratio to each peer. Spark's figure is its query alone (from
// start() to the end of its last batch); its session start is printed beside it, and so is the
// ratio with it counted, which is what a scheduled job pays each run.
//
//   kafka_delta_peers_bench [--messages N] [--partitions P]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <simdjson.h>

#include "bench_support.h"
#include "kafka_bench_support.h"
#include "testing/paths.h"

namespace sluice {
namespace {

constexpr const char* kBench = "kafka_delta_peers_bench";

[[noreturn]] void Die(const std::string& message) { bench::Fail(kBench, message); }

std::string ShellQuote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

int Main(int argc, char** argv) {
  int64_t messages = 1'000'000;
  int partitions = 12;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--messages") {
      messages = std::atoll(argv[i + 1]);
    } else if (flag == "--partitions") {
      partitions = std::atoi(argv[i + 1]);
    } else {
      Die("unknown flag " + flag);
    }
  }
  const std::string source = testing::SourceDir();
  const std::string python = source + "/tests/tools/delta-spark/venv/bin/python";
  if (!std::ifstream(python).good()) Die("Spark with Delta is not installed: run scripts/install-test-tools.sh");
  if (std::system(("ls " + ShellQuote(source + "/bench/spark/jars") + "/spark-sql-kafka-*.jar > /dev/null 2>&1").c_str()) != 0) {
    std::printf("resolving Spark's Kafka source (bench/spark/pom.xml) from the Maven registry\n");
    if (std::system(("cd " + ShellQuote(source + "/bench/spark") +
                     " && mvn -q -B dependency:copy-dependencies -DoutputDirectory=jars -DexcludeTransitive=true")
                        .c_str()) != 0) {
      Die("mvn failed");
    }
  }

  auto broker = testing::SharedKafkaBroker();
  if (!broker.ok()) Die(broker.status().ToString());
  const std::string bootstrap = (*broker)->bootstrap_servers(testing::KafkaBroker::Listener::kPlaintext);
  auto topic = testing::CreateBrokerTopic(partitions);
  if (!topic.ok()) Die(topic.status().ToString());
  const bench::ProducedEvents produced = bench::ProduceEvents(kBench, bootstrap, *topic, messages, partitions);
  std::printf("%lld messages of %.0f bytes in %d partitions of a real broker (produced in %.1f s)\n",
              static_cast<long long>(messages), static_cast<double>(produced.bytes) / static_cast<double>(messages),
              partitions, produced.seconds);
  const double kcat = bench::KcatRate(kBench, bootstrap, *topic, messages);
  if (kcat > 0) std::printf("kcat -C > /dev/null:                 %10.0f msgs/s\n", kcat);

  const std::string dir = bench::FreshDirectory("kafka_delta_peers_bench");
  auto start = std::chrono::steady_clock::now();
  if (Status s = bench::RunPipeline(bench::StreamPipelineYaml(dir + "/sluice", bootstrap, *topic)); !s.ok()) {
    Die(s.ToString());
  }
  const double sluice_seconds = bench::Seconds(start);
  if (!bench::AllWritten(bench::StreamTable(dir + "/sluice"), *topic, produced.last_offsets)) {
    Die("the sluice stream missed records");
  }
  const double sluice = static_cast<double>(messages) / sluice_seconds;
  std::printf("sluice stream -> Delta:              %10.0f msgs/s (%.1f s, start-up included)\n", sluice, sluice_seconds);

  const std::string command = ShellQuote(python) + " " + ShellQuote(source + "/bench/spark_kafka_to_delta.py") + " " +
                              ShellQuote(bootstrap) + " " + ShellQuote(*topic) + " " +
                              ShellQuote(bench::kEventSchemaDdl) + " " +
                              std::to_string(bench::kMaxOffsetsPerTrigger) + " " + ShellQuote(dir + "/spark/table") +
                              " " + ShellQuote(dir + "/spark/checkpoint") + " 2> " + ShellQuote(dir + "/spark.log");
  start = std::chrono::steady_clock::now();
  FILE* pipe = popen(command.c_str(), "r");
  std::string out;
  char buffer[4096];
  for (size_t n; pipe != nullptr && (n = fread(buffer, 1, sizeof(buffer), pipe)) > 0;) out.append(buffer, n);
  if (pipe == nullptr || pclose(pipe) != 0) Die("Spark failed (its log: " + dir + "/spark.log)");
  const double spark_wall = bench::Seconds(start);
  simdjson::dom::parser parser;
  simdjson::dom::element report;
  double query_seconds = 0, startup_seconds = 0;
  int64_t rows = 0, batches = 0;
  if (parser.parse(simdjson::padded_string(out)).get(report) != simdjson::SUCCESS ||
      report["query_seconds"].get_double().get(query_seconds) != simdjson::SUCCESS ||
      report["startup_seconds"].get_double().get(startup_seconds) != simdjson::SUCCESS ||
      report["rows"].get_int64().get(rows) != simdjson::SUCCESS ||
      report["batches"].get_int64().get(batches) != simdjson::SUCCESS) {
    Die("unexpected Spark report: " + out);
  }
  if (rows != messages) Die("Spark's table holds " + std::to_string(rows) + " rows");
  const double spark = static_cast<double>(messages) / query_seconds;
  std::printf("Spark Structured Streaming -> Delta: %10.0f msgs/s (%.1f s in %lld batches; session start %.1f s, "
              "process %.1f s)\n",
              spark, query_seconds, static_cast<long long>(batches), startup_seconds, spark_wall);
  std::printf("sluice / Spark: x%.2f (x%.2f counting Spark's whole process)", sluice / spark,
              sluice / (static_cast<double>(messages) / spark_wall));
  if (kcat > 0) std::printf("; sluice / kcat: %.2f", sluice / kcat);
  std::printf("\n");
  std::system(("rm -rf " + ShellQuote(dir)).c_str());
  return 0;
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) { return sluice::Main(argc, argv); }
