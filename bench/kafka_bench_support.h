// What the Kafka benches against the tests' real broker (src/testing/kafka_broker.h) share: JSON
// events produced once into a topic, the pipeline file of one stream ingesting them into Delta,
// running it, knowing when its table holds every record, and the kcat reference.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "sluice/connectors/embedded_kafka.h"
#include "sluice/connectors/kafka_transactions.h"
#include "sluice/connectors/register_formats.h"
#include "sluice/delta/snapshot.h"
#include "sluice/pipeline/pipeline_runner.h"
#include "sluice/storage/file_systems.h"
#include "testing/kafka_broker.h"

namespace sluice::bench {

[[noreturn]] inline void Fail(const char* bench, const std::string& message) {
  std::fprintf(stderr, "%s: %s\n", bench, message.c_str());
  std::exit(1);
}

inline double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// The events' value schema (JSON Schema) and the same as Spark SQL DDL.
inline constexpr const char* kEventSchema =
    R"({"type":"object","properties":{"event_id":{"type":"string"},"user_id":{"type":"integer"},)"
    R"("kind":{"type":"string"},"amount":{"type":"number"},"ts":{"type":"string","format":"date-time"}}})";
inline constexpr const char* kEventSchemaDdl =
    "event_id STRING, user_id BIGINT, kind STRING, amount DOUBLE, ts TIMESTAMP";
// Records one batch reads at most, in sluice and in the peers.
inline constexpr int64_t kMaxOffsetsPerTrigger = 500'000;

// The topic's events: `messages` JSON events (~106 bytes) spread over its partitions.
struct ProducedEvents {
  std::vector<int64_t> last_offsets;  // per partition
  int64_t bytes = 0;
  double seconds = 0;
};

inline ProducedEvents ProduceEvents(const char* bench, const std::string& bootstrap, const std::string& topic,
                                    int64_t messages, int partitions) {
  auto start = std::chrono::steady_clock::now();
  ProducedEvents produced;
  produced.last_offsets.assign(static_cast<size_t>(partitions), -1);
  for (int64_t from = 0; from < messages; from += 100'000) {
    std::vector<connectors::KafkaTestMessage> chunk;
    for (int64_t i = from; i < std::min(messages, from + 100'000); ++i) {
      connectors::KafkaTestMessage message;
      message.value = "{\"event_id\":\"e-" + std::to_string(i) + "\",\"user_id\":" + std::to_string(i % 100'000) +
                      ",\"kind\":\"purchase\",\"amount\":" + std::to_string(i % 1000) +
                      ".25,\"ts\":\"2026-12-05T10:00:00.000Z\"}";
      message.partition = static_cast<int32_t>(i % partitions);
      ++produced.last_offsets[static_cast<size_t>(message.partition)];
      produced.bytes += static_cast<int64_t>(message.value->size());
      chunk.push_back(std::move(message));
    }
    if (Status s = connectors::ProduceMessages(bootstrap, topic, chunk); !s.ok()) Fail(bench, s.ToString());
  }
  produced.seconds = Seconds(start);
  return produced;
}

// A pipeline file with the stream main.raw.events of the topic, available_now, or as a workers
// group (`group_id` not empty).
inline std::string StreamPipelineYaml(const std::string& root, const std::string& bootstrap, const std::string& topic,
                                      const std::string& group_id = "") {
  return "name: bench\nstorage: " + root + "/storage\nwarehouse: " + root +
         "/warehouse\nstreams:\n  - name: main.raw.events\n    source: {format: kafka, options: {bootstrap_servers: \"" +
         bootstrap + "\", subscribe: " + topic + ", starting_offsets: earliest, max_offsets_per_trigger: " +
         std::to_string(kMaxOffsetsPerTrigger) + "}}\n    schema_config:\n      value: {format: json, schema: '" +
         kEventSchema + "'}\n    ingestion_config: {table: main.raw.events}\n" +
         (group_id.empty() ? "    trigger: available_now\n" : "    scale: {group: true, group_id: " + group_id + "}\n");
}

// The stream's table in a pipeline's root.
inline std::string StreamTable(const std::string& root) { return root + "/warehouse/main/raw/events"; }

inline Status RunPipeline(const std::string& yaml) {
  SLUICE_ASSIGN_OR_RETURN(pipeline::PipelineSpec spec, pipeline::ParsePipelineSpec(yaml));
  pipeline::RunOptions options;
  options.registry = &connectors::AllFormatsRegistry();
  SLUICE_ASSIGN_OR_RETURN(auto run, pipeline::PipelineRun::Start(spec, options));
  return run->Wait();
}

// Whether the stream's table records, for every partition, the last offset it holds.
inline bool AllWritten(const std::string& table, const std::string& topic, const std::vector<int64_t>& last_offsets) {
  auto snapshot = delta::Snapshot::Load(storage::DefaultFileSystem(), table);
  if (!snapshot.ok()) return false;
  for (size_t partition = 0; partition < last_offsets.size(); ++partition) {
    auto txn = (*snapshot)->TransactionVersion(
        connectors::PartitionAppId("main.raw.events", topic, static_cast<int32_t>(partition)));
    if (!txn || *txn < last_offsets[partition]) return false;
  }
  return true;
}

// msgs/s of `kcat -C` reading the topic to /dev/null, or 0 (and a line saying so) without kcat.
inline double KcatRate(const char* bench, const std::string& bootstrap, const std::string& topic, int64_t messages) {
  if (std::system("command -v kcat > /dev/null 2>&1") != 0) {
    std::printf("kcat: not installed (apt-get install kcat) - no plain-read reference in this run\n");
    return 0;
  }
  auto start = std::chrono::steady_clock::now();
  if (std::system(("kcat -C -b " + bootstrap + " -t " + topic + " -o beginning -e -q > /dev/null").c_str()) != 0) {
    Fail(bench, "kcat failed");
  }
  return static_cast<double>(messages) / Seconds(start);
}

}  // namespace sluice::bench
