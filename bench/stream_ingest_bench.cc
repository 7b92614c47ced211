// A stream ingesting Kafka records into a Delta table, end to end: 5 million ~130-byte events
// (JSON by default; the same events in Avro or Protobuf with --format) produced to librdkafka's
// mock cluster, then
//   kcat -C   consuming the topic to /dev/null (the reference: a plain Kafka read), and
//   sluice    running the stream (available_now) into a fresh ingestion table,
// each timed in the same run. Prints msgs/s of both, their ratio and the peak RSS of this process.
//
// The mock cluster and the producer live in a child process, so that the RSS printed is the
// ingestion's alone (the cluster keeps every record in memory).
//
//   stream_ingest_bench [--format json|avro|protobuf] [--messages N] [--partitions P]
//                       [--max-offsets-per-trigger N] [--kafka property=value ...] [--s3]
//
// --s3 runs the same stream again with its storage and warehouse in a bucket of the tests' S3
// server (moto on loopback, src/testing/s3_server.h) and prints its rate beside the local one.
//
// --kafka passes a librdkafka property to the stream's source (as `kafka.<property>`), to try
// fetch and queue settings; it may be given several times.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/connectors/embedded_kafka.h"
#include "sluice/connectors/register_formats.h"
#include "sluice/delta/snapshot.h"
#include "sluice/engine/registry.h"
#include "sluice/pipeline/pipeline_runner.h"
#include "sluice/storage/file_systems.h"
#include "testing/s3_server.h"

namespace sluice {
namespace {

struct Arguments {
  std::string format = "json";
  int64_t messages = 5'000'000;
  // librdkafka's mock cluster keeps about 5 MB (and at most 100,000 records) per partition and
  // drops older segments, so 5 million records need this many partitions to stay readable.
  int partitions = 200;
  int64_t max_offsets_per_trigger = 1'000'000;
  std::string kafka_options;  // ", kafka.<property>: \"<value>\"" for each --kafka
  bool s3 = false;            // --s3: the same stream into S3 too
};

constexpr const char* kKinds[] = {"click", "view", "purchase", "signup"};

constexpr const char* kJsonSchema =
    R"({"type":"object","properties":{"event_id":{"type":"string"},"user_id":{"type":"integer"},)"
    R"("kind":{"type":"string"},"amount":{"type":"number"},"ts":{"type":"string","format":"date-time"},)"
    R"("tags":{"type":"array","items":{"type":"string"}}}})";
constexpr const char* kAvroSchema =
    R"({"type":"record","name":"Event","fields":[{"name":"event_id","type":"string"},)"
    R"({"name":"user_id","type":"long"},{"name":"kind","type":"string"},{"name":"amount","type":"double"},)"
    R"({"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},)"
    R"({"name":"tags","type":{"type":"array","items":"string"}}]})";
constexpr const char* kProtoSchema =
    R"(syntax = "proto3"; package bench; import "google/protobuf/timestamp.proto"; )"
    R"(message Event { string event_id = 1; int64 user_id = 2; string kind = 3; double amount = 4; )"
    R"(google.protobuf.Timestamp ts = 5; repeated string tags = 6; })";

void Varint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}
void ZigZag(int64_t v, std::string* out) { Varint((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63), out); }
void AvroString(std::string_view s, std::string* out) {
  ZigZag(static_cast<int64_t>(s.size()), out);
  out->append(s);
}
void ProtoString(int field, std::string_view s, std::string* out) {
  Varint(static_cast<uint64_t>(field) << 3 | 2, out);
  Varint(s.size(), out);
  out->append(s);
}

// Event i in the chosen encoding.
std::string Event(const std::string& format, int64_t i) {
  char id[32];
  std::snprintf(id, sizeof(id), "e-%010lld", static_cast<long long>(i));
  const int64_t user = 10000 + i % 90000;
  const char* kind = kKinds[i % 4];
  const double amount = static_cast<double>(i % 10000) / 100.0;
  const int64_t ts_ms = 1'764'500'000'000LL + i;
  std::string out;
  if (format == "json") {
    char text[256];
    int64_t seconds = ts_ms / 1000;
    std::snprintf(text, sizeof(text),
                  R"({"event_id":"%s","user_id":%lld,"kind":"%s","amount":%.2f,"ts":"2025-11-30T%02lld:%02lld:%02lld.%03lldZ","tags":["web","eu"]})",
                  id, static_cast<long long>(user), kind, amount, static_cast<long long>(seconds / 3600 % 24),
                  static_cast<long long>(seconds / 60 % 60), static_cast<long long>(seconds % 60),
                  static_cast<long long>(ts_ms % 1000));
    return text;
  }
  if (format == "avro") {
    AvroString(id, &out);
    ZigZag(user, &out);
    AvroString(kind, &out);
    out.append(reinterpret_cast<const char*>(&amount), sizeof(amount));
    ZigZag(ts_ms, &out);
    ZigZag(2, &out);
    AvroString("web", &out);
    AvroString("eu", &out);
    ZigZag(0, &out);
    return out;
  }
  ProtoString(1, id, &out);
  Varint(2 << 3, &out);
  Varint(static_cast<uint64_t>(user), &out);
  ProtoString(3, kind, &out);
  Varint(4 << 3 | 1, &out);
  out.append(reinterpret_cast<const char*>(&amount), sizeof(amount));
  std::string ts;
  Varint(1 << 3, &ts);
  Varint(static_cast<uint64_t>(ts_ms / 1000), &ts);
  Varint(2 << 3, &ts);
  Varint(static_cast<uint64_t>(ts_ms % 1000 * 1'000'000), &ts);
  ProtoString(5, ts, &out);
  ProtoString(6, "web", &out);
  ProtoString(6, "eu", &out);
  return out;
}

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "stream_ingest_bench: %s\n", what.c_str());
  std::exit(1);
}

// The child: a mock cluster holding the topic, alive until the parent closes `hold`.
[[noreturn]] void ServeCluster(const Arguments& args, int ready, int hold) {
  auto kafka = connectors::EmbeddedKafka::Start(1);
  if (!kafka.ok()) Die(kafka.status().ToString());
  if (Status created = (*kafka)->CreateTopic("events", args.partitions); !created.ok()) Die(created.ToString());
  // The mock cluster finds a fetch's offset by walking the partition's message sets from the
  // first (a real broker keeps an offset index), so the bench produces the large per-partition
  // batches of a busy producer: with 5 ms of linger across 200 partitions, the sets held about 20
  // records each and the walk, not the fetch, took the mock's core.
  auto producer = connectors::KafkaTestProducer::Connect((*kafka)->bootstrap_servers(), {{"linger.ms", "100"}});
  if (!producer.ok()) Die(producer.status().ToString());
  int64_t bytes = 0;
  for (int64_t i = 0; i < args.messages; ++i) {
    connectors::KafkaTestMessage message;
    message.value = Event(args.format, i);
    message.partition = static_cast<int32_t>(i % args.partitions);
    bytes += static_cast<int64_t>(message.value->size());
    if (Status produced = (*producer)->Produce("events", message); !produced.ok()) Die(produced.ToString());
  }
  if (Status flushed = (*producer)->Flush(std::chrono::minutes(10)); !flushed.ok()) Die(flushed.ToString());
  std::string line = (*kafka)->bootstrap_servers() + " " + std::to_string(bytes) + "\n";
  if (write(ready, line.data(), line.size()) != static_cast<ssize_t>(line.size())) Die("cannot report readiness");
  char byte;
  while (read(hold, &byte, 1) > 0) {
  }
  std::_Exit(0);
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// User and system CPU time of this process (the ingestion; the cluster is the child's).
double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

int Main(int argc, char** argv) {
  Arguments args;
  std::vector<char*> given(argv, argv + argc);
  args.s3 = std::erase_if(given, [](const char* arg) { return std::string_view(arg) == "--s3"; }) > 0;
  argc = static_cast<int>(given.size());
  argv = given.data();
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--format") args.format = argv[i + 1];
    else if (flag == "--messages") args.messages = std::atoll(argv[i + 1]);
    else if (flag == "--partitions") args.partitions = std::atoi(argv[i + 1]);
    else if (flag == "--max-offsets-per-trigger") args.max_offsets_per_trigger = std::atoll(argv[i + 1]);
    else if (flag == "--kafka") {
      std::string setting = argv[i + 1];
      size_t equals = setting.find('=');
      if (equals == std::string::npos) Die("--kafka wants property=value");
      args.kafka_options += ", kafka." + setting.substr(0, equals) + ": \"" + setting.substr(equals + 1) + "\"";
    }
    else Die("unknown flag " + flag);
  }
  if (args.format != "json" && args.format != "avro" && args.format != "protobuf") Die("--format json|avro|protobuf");

  int ready[2], hold[2];
  // Close-on-exec, so that a server this process starts later (--s3) holds no end of them.
  if (pipe2(ready, O_CLOEXEC) != 0 || pipe2(hold, O_CLOEXEC) != 0) Die("pipe failed");
  auto produce_start = std::chrono::steady_clock::now();
  pid_t child = fork();
  if (child < 0) Die("fork failed");
  if (child == 0) {
    close(ready[0]);
    close(hold[1]);
    ServeCluster(args, ready[1], hold[0]);
  }
  close(ready[1]);
  close(hold[0]);
  std::string line;
  char c;
  while (read(ready[0], &c, 1) == 1 && c != '\n') line += c;
  if (line.empty()) Die("the cluster process failed");
  const std::string bootstrap = line.substr(0, line.find(' '));
  const int64_t bytes = std::atoll(line.c_str() + line.find(' ') + 1);
  std::printf("format %s: %lld messages of %.0f bytes on average in %d partitions (produced in %.1f s)\n",
              args.format.c_str(), static_cast<long long>(args.messages),
              static_cast<double>(bytes) / static_cast<double>(args.messages), args.partitions, Seconds(produce_start));

  double kcat_rate = 0;
  if (std::system("command -v kcat > /dev/null 2>&1") != 0) {
    std::printf("kcat: not installed (apt-get install kcat) - no reference in this run\n");
  } else {
    auto start = std::chrono::steady_clock::now();
    std::string command = "kcat -C -b " + bootstrap + " -t events -o beginning -e -q > /dev/null";
    if (std::system(command.c_str()) != 0) Die("kcat failed");
    kcat_rate = static_cast<double>(args.messages) / Seconds(start);
    std::printf("kcat -C > /dev/null:        %10.0f msgs/s\n", kcat_rate);
  }

  char directory[] = "/tmp/stream_ingest_bench.XXXXXX";
  if (mkdtemp(directory) == nullptr) Die("mkdtemp failed");
  const std::string dir = directory;
  std::string schema = args.format == "json" ? kJsonSchema : args.format == "avro" ? kAvroSchema : kProtoSchema;
  engine::Registry registry;
  if (Status s = connectors::RegisterAllFormats(&registry); !s.ok()) Die(s.ToString());
  // The stream run once, from the topic's start, with its storage and warehouse under `root` (a
  // local folder or an object store's URI); the table is checked to hold every message.
  struct Ingested {
    double seconds, cpu;
    int64_t rows, files;
  };
  auto ingest = [&](const std::string& root) {
    std::string yaml = "name: bench\nstorage: " + root + "/storage\nwarehouse: " + root +
                       "/warehouse\nstreams:\n  - name: main.raw.events\n    source: {format: kafka, options: "
                       "{bootstrap_servers: \"" + bootstrap + "\", subscribe: events, starting_offsets: earliest, "
                       "max_offsets_per_trigger: " + std::to_string(args.max_offsets_per_trigger) + args.kafka_options +
                       "}}\n    schema_config:\n      value: {format: " + args.format + ", schema: '" + schema + "'" +
                       (args.format == "protobuf" ? ", message_name: bench.Event" : "") +
                       "}\n    ingestion_config: {table: main.raw.events}\n    trigger: available_now\n";
    auto spec = pipeline::ParsePipelineSpec(yaml);
    if (!spec.ok()) Die(spec.status().ToString());
    pipeline::RunOptions options;
    options.registry = &registry;
    const double cpu_before = CpuSeconds();
    auto start = std::chrono::steady_clock::now();
    auto run = pipeline::PipelineRun::Start(*spec, options);
    if (!run.ok()) Die(run.status().ToString());
    if (Status done = (*run)->Wait(); !done.ok()) Die(done.ToString());
    Ingested result{Seconds(start), CpuSeconds() - cpu_before, 0, 0};
    auto snapshot = delta::Snapshot::Load(storage::DefaultFileSystem(), root + "/warehouse/main/raw/events");
    if (!snapshot.ok()) Die(snapshot.status().ToString());
    for (const auto& file : (*snapshot)->files()) {
      size_t at = file.stats ? file.stats->find("\"numRecords\":") : std::string::npos;
      if (at != std::string::npos) result.rows += std::atoll(file.stats->c_str() + at + 13);
    }
    result.files = static_cast<int64_t>((*snapshot)->files().size());
    if (result.rows != args.messages) Die("the table holds " + std::to_string(result.rows) + " rows");
    return result;
  };

  const Ingested local = ingest(dir);
  const double rate = static_cast<double>(args.messages) / local.seconds;
  const double cpu = local.cpu;
  const int64_t rows = local.rows;

  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf("sluice stream -> Delta:     %10.0f msgs/s (%.1f s, %lld rows, %lld files)\n", rate, local.seconds,
              static_cast<long long>(rows), static_cast<long long>(local.files));
  // On a shared machine the wall time depends on the neighbours; the CPU time much less.
  std::printf("CPU of the ingestion:       %10.2f s user+sys (%.2f us per message)\n", cpu,
              cpu * 1e6 / static_cast<double>(args.messages));
  if (kcat_rate > 0) std::printf("ratio sluice / kcat:        %10.2f\n", rate / kcat_rate);
  std::printf("peak RSS of the ingestion:  %10.0f MB\n", static_cast<double>(usage.ru_maxrss) / 1024.0);
  if (args.s3) {
    // The same stream with its checkpoint, event log and table in a bucket of the tests' S3 server
    // (moto on loopback: a floor for a real store).
    const Ingested on_s3 = ingest(testing::S3Server::Shared().NewBucketUri());
    const double s3_rate = static_cast<double>(args.messages) / on_s3.seconds;
    std::printf("sluice stream -> Delta on S3: %8.0f msgs/s (%.1f s, %lld files); ratio S3 / local disk %.2f\n",
                s3_rate, on_s3.seconds, static_cast<long long>(on_s3.files), s3_rate / rate);
  }

  close(hold[1]);
  waitpid(child, nullptr, 0);
  std::system(("rm -rf " + dir).c_str());
  return 0;
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) { return sluice::Main(argc, argv); }
