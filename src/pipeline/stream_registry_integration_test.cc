// Streams whose schemas live in a Schema Registry (a loopback fixture answering its REST API):
// Confluent-framed Avro, Protobuf and JSON records from the Kafka mock cluster decoded into the
// ingestion table, each record with the writer schema its frame names.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <thread>

#include "formats/fake_registry.h"
#include "sluice/connectors/register_formats.h"
#include "sluice/connectors/testing/kafka_fixture.h"
#include "sluice/delta/scan.h"
#include "sluice/delta/snapshot.h"
#include "sluice/engine/registry.h"
#include "sluice/pipeline/event_log.h"
#include "sluice/pipeline/pipeline_runner.h"
#include "testing/temp_dir.h"

namespace sluice::pipeline {
namespace {

using formats::testing::FakeRegistry;
using formats::testing::Response;

constexpr const char* kUserV1 = R"({\"type\":\"record\",\"name\":\"User\",\"fields\":[{\"name\":\"id\",\"type\":\"int\"}]})";
constexpr const char* kUserV2 =
    R"({\"type\":\"record\",\"name\":\"User\",\"fields\":[{\"name\":\"id\",\"type\":\"long\"},)"
    R"({\"name\":\"email\",\"type\":[\"null\",\"string\"],\"default\":null}]})";

// Avro subjects `<topic>-value` (latest: version 2, id 2; id 1 an older writer), the Protobuf
// subject `shop.Order` (id 20) and the JSON subject `order-keys` (id 30). No schema has id 77.
Response Answer(const std::string& path, const std::string& authorization) {
  if (authorization != "Basic " + std::string("a2V5OnMzY3JldA==")) return {401, R"({"error_code": 40101, "message": "Unauthorized"})"};
  if (path == "/schemas/ids/1") return {200, std::string(R"({"schema": ")") + kUserV1 + "\"}"};
  if (path == "/schemas/ids/2" || (path.starts_with("/subjects/") && path.ends_with("-value/versions/latest"))) {
    return {200, std::string(R"({"subject": "t-value", "version": 2, "id": 2, "schema": ")") + kUserV2 + "\"}"};
  }
  if (path == "/subjects/shop.Order/versions/latest") {
    return {200, R"({"subject": "shop.Order", "version": 1, "id": 20, "schemaType": "PROTOBUF", "schema": "syntax = \"proto3\"; package shop; message Order { string id = 1; int64 cents = 2; }"})"};
  }
  if (path == "/subjects/order-keys/versions/latest") {
    return {200, R"({"subject": "order-keys", "version": 1, "id": 30, "schemaType": "JSON", "schema": "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"integer\"}}}"})"};
  }
  return {404, R"({"error_code": 40403, "message": "Schema not found"})"};
}

std::string Framed(int32_t id, const std::string& payload) {
  std::string framed(1, '\0');
  for (int shift = 24; shift >= 0; shift -= 8) framed.push_back(static_cast<char>((id >> shift) & 0xff));
  return framed + payload;
}

std::string Varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
  return out;
}

std::string ZigZag(int64_t value) { return Varint((static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63)); }

// The ingestion table's rows as "<key> <value>" texts by (partition, offset), values from the
// named leaf columns ("-" for null).
std::map<std::pair<int32_t, int64_t>, std::string> ReadTable(const std::string& table, const std::vector<std::string>& leaves) {
  std::map<std::pair<int32_t, int64_t>, std::string> rows;
  auto snapshot = delta::Snapshot::Load(LocalFileSystem(), table);
  EXPECT_TRUE(snapshot.ok()) << snapshot.status().ToString();
  if (!snapshot.ok()) return rows;
  auto scan = delta::TableScan::Open(*snapshot).value();
  while (true) {
    BatchPtr batch = scan->Next().value();
    if (batch == nullptr) break;
    for (int64_t row = 0; row < batch->num_rows(); ++row) {
      std::string text;
      for (const std::string& leaf : leaves) {
        ColumnPtr column = batch->ColumnAt(leaf).value();
        text += text.empty() ? "" : " ";
        if (column->IsNull(row)) {
          text += "-";
        } else if (column->type->is_binary_like()) {
          text += std::string(column->View(row));
        } else if (column->type->id() == TypeId::kInteger) {
          text += std::to_string(column->Value<int32_t>(row));
        } else {
          text += std::to_string(column->Value<int64_t>(row));
        }
      }
      int32_t partition = batch->ColumnAt("kafka_partition").value()->Value<int32_t>(row);
      int64_t offset = batch->ColumnAt("kafka_offset").value()->Value<int64_t>(row);
      EXPECT_TRUE(rows.emplace(std::make_pair(partition, offset), text).second);
    }
  }
  return rows;
}

class StreamRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("SLUICE_TEST_REGISTRY_SECRET", "s3cret", 1);
    auto kafka = connectors::testing::SharedKafka();
    ASSERT_TRUE(kafka.ok()) << kafka.status().ToString();
    bootstrap_ = (*kafka)->bootstrap_servers();
    topic_ = connectors::testing::CreateTestTopic(1).value();
  }

  Status Run(const std::string& schema_config) {
    std::string yaml = "name: ingest\nstorage: " + dir_.path() + "/storage\nwarehouse: " + dir_.path() +
                       "/warehouse\nstreams:\n  - name: main.raw.events\n    source: {format: kafka, options: "
                       "{bootstrap_servers: \"" + bootstrap_ + "\", subscribe: " + topic_ +
                       ", starting_offsets: earliest}}\n    schema_config:\n" + schema_config +
                       "    ingestion_config: {table: main.raw.events}\n    trigger: available_now\n";
    SLUICE_ASSIGN_OR_RETURN(PipelineSpec spec, ParsePipelineSpec(yaml));
    std::vector<Status> problems = ValidatePipeline(spec, connectors::AllFormatsRegistry());
    if (!problems.empty()) return problems[0];
    RunOptions options;
    options.registry = &connectors::AllFormatsRegistry();
    SLUICE_ASSIGN_OR_RETURN(auto run, PipelineRun::Start(spec, options));
    return run->Wait();
  }

  // A schema_registry block for `registry` with the test's credentials and `extra` options; its
  // format is avro unless `extra` gives one.
  std::string Block(const FakeRegistry& registry, const std::string& extra) const {
    std::string format = extra.find("format:") == std::string::npos ? ", format: avro" : "";
    return "{url: \"" + registry.url() + "\", api_key: key, api_secret: \"${env:SLUICE_TEST_REGISTRY_SECRET}\"" +
           format + extra + "}";
  }

  std::string Table() const { return dir_.path() + "/warehouse/main/raw/events"; }

  testing::TempDir dir_;
  std::string bootstrap_;
  std::string topic_;
};

TEST_F(StreamRegistryTest, AvroRecordsOfEveryWriterSchemaLandInTheSubjectsLatestSchema) {
  FakeRegistry registry(Answer);
  std::vector<connectors::KafkaTestMessage> messages(5);
  messages[0].value = Framed(2, ZigZag(10) + ZigZag(1) + ZigZag(3) + "a@b");  // latest writer, email set
  messages[1].value = Framed(1, ZigZag(-4));                                 // version 1: int id, no email
  messages[2].value = Framed(77, ZigZag(1));                                 // an id the registry does not know
  messages[3].value = Framed(2, ZigZag(11) + ZigZag(0));                     // latest writer, email null
  messages[4].value = "not framed";
  ASSERT_TRUE(connectors::ProduceMessages(bootstrap_, topic_, messages).ok());

  Status ran = Run("      value: {schema_registry: " + Block(registry, "") + "}\n");
  ASSERT_TRUE(ran.ok()) << ran.ToString();
  auto rows = ReadTable(Table(), {"value.id", "value.email"});
  EXPECT_EQ(rows, (std::map<std::pair<int32_t, int64_t>, std::string>{
                      {{0, 0}, "10 a@b"}, {{0, 1}, "-4 -"}, {{0, 2}, "- -"}, {{0, 3}, "11 -"}, {{0, 4}, "- -"}}));

  std::vector<std::string> paths = registry.paths();
  EXPECT_NE(std::find(paths.begin(), paths.end(), "/subjects/" + topic_ + "-value/versions/latest"), paths.end())
      << "TopicNameStrategy names the subject after the topic";
  auto lines = EventLog::ReadLines(EventLog::PathFor(dir_.path() + "/storage"));
  ASSERT_TRUE(lines.ok());
  std::string progress;
  for (const std::string& line : *lines) {
    if (line.find("\"malformed_values\"") != std::string::npos) progress += line;
  }
  EXPECT_NE(progress.find("\"malformed_values\":2"), std::string::npos) << progress;
  EXPECT_NE(progress.find(topic_ + "/0@2"), std::string::npos) << "the unknown id's record is sampled: " << progress;
}

// A running stream asks for the subject's latest schema again every schema_refresh_interval:
// records written after a new version was registered land with its new field, the earlier ones
// keep theirs, and none is lost or written twice.
TEST_F(StreamRegistryTest, ARunningStreamTakesUpANewLatestSchemaAtItsRefreshInterval) {
  // Version 1 (id 1) until the test registers version 3 (id 3): kUserV1 with an optional email.
  constexpr const char* kUserV3 =
      R"({\"type\":\"record\",\"name\":\"User\",\"fields\":[{\"name\":\"id\",\"type\":\"int\"},)"
      R"({\"name\":\"email\",\"type\":[\"null\",\"string\"],\"default\":null}]})";
  std::atomic<int> latest_version{1};
  FakeRegistry registry([&](const std::string& path, const std::string& authorization) -> Response {
    const bool latest = path.starts_with("/subjects/") && path.ends_with("-value/versions/latest");
    if (latest && latest_version.load() == 1) {
      return {200, std::string(R"({"subject": "t-value", "version": 1, "id": 1, "schema": ")") + kUserV1 + "\"}"};
    }
    if ((latest && latest_version.load() == 3) || path == "/schemas/ids/3") {
      return {200, std::string(R"({"subject": "t-value", "version": 3, "id": 3, "schema": ")") + kUserV3 + "\"}"};
    }
    return Answer(path, authorization);
  });
  std::string yaml = "name: ingest\nstorage: " + dir_.path() + "/storage\nwarehouse: " + dir_.path() +
                     "/warehouse\nstreams:\n  - name: main.raw.events\n    source: {format: kafka, options: "
                     "{bootstrap_servers: \"" + bootstrap_ + "\", subscribe: " + topic_ +
                     ", starting_offsets: earliest}}\n    schema_config:\n      value: {schema_registry: " +
                     Block(registry, ", schema_refresh_interval: 1 second") +
                     "}\n    ingestion_config: {table: main.raw.events}\n"
                     "    trigger: {kind: processing_time, interval: 100 milliseconds}\n";
  auto spec = ParsePipelineSpec(yaml);
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  RunOptions options;
  options.registry = &connectors::AllFormatsRegistry();
  auto run = PipelineRun::Start(*spec, options);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  std::thread waiter;
  Status ended;
  waiter = std::thread([&] { ended = (*run)->Wait(); });
  auto wait_for_rows = [&](size_t count, const std::vector<std::string>& leaves) {
    std::map<std::pair<int32_t, int64_t>, std::string> rows;
    for (int i = 0; i < 300 && rows.size() < count; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      if (std::filesystem::exists(Table() + "/_delta_log/00000000000000000000.json")) rows = ReadTable(Table(), leaves);
    }
    return rows;
  };

  std::vector<connectors::KafkaTestMessage> first(1);
  first[0].value = Framed(1, ZigZag(5));
  ASSERT_TRUE(connectors::ProduceMessages(bootstrap_, topic_, first).ok());
  EXPECT_EQ(wait_for_rows(1, {"value.id"}).size(), 1u);

  latest_version = 3;
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // past the refresh interval
  std::vector<connectors::KafkaTestMessage> second(1);
  second[0].value = Framed(3, ZigZag(6) + ZigZag(1) + ZigZag(3) + "x@y");
  ASSERT_TRUE(connectors::ProduceMessages(bootstrap_, topic_, second).ok());
  EXPECT_EQ(wait_for_rows(2, {"value.id"}).size(), 2u);
  (*run)->Stop();
  waiter.join();
  EXPECT_TRUE(ended.ok()) << ended.ToString();
  auto snapshot = delta::Snapshot::Load(LocalFileSystem(), Table());
  ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString();
  ASSERT_NE((*snapshot)->schema()->ToString().find("email"), std::string::npos)
      << "the new field is not in the table: " << (*snapshot)->schema()->ToString();
  EXPECT_EQ(ReadTable(Table(), {"value.id", "value.email"}),
            (std::map<std::pair<int32_t, int64_t>, std::string>{{{0, 0}, "5 -"}, {{0, 1}, "6 x@y"}}));
  std::vector<std::string> paths = registry.paths();
  EXPECT_GE(std::count(paths.begin(), paths.end(), "/subjects/" + topic_ + "-value/versions/latest"), 2)
      << "the latest schema is asked for at start and again after the interval";
}

TEST_F(StreamRegistryTest, ProtobufValuesAndJsonKeysByRecordNameAndExplicitSubjects) {
  FakeRegistry registry(Answer);
  std::vector<connectors::KafkaTestMessage> messages(2);
  messages[0].key = Framed(30, R"({"id": 7})");
  messages[0].value = Framed(20, std::string(1, '\0') + "\x0a\x03o-1" + "\x10" + Varint(250));
  messages[1].key = Framed(30, "{");
  messages[1].value = Framed(20, std::string(1, '\0') + "\x0a\x03o-2");
  ASSERT_TRUE(connectors::ProduceMessages(bootstrap_, topic_, messages).ok());

  Status ran = Run("      key: {schema_registry: " + Block(registry, ", format: json, subject: order-keys") + "}\n" +
                   "      value: {schema_registry: " +
                   Block(registry, ", format: protobuf, subject_name_strategy: RecordNameStrategy, record_name: shop.Order") +
                   "}\n");
  ASSERT_TRUE(ran.ok()) << ran.ToString();
  EXPECT_EQ(ReadTable(Table(), {"key.id", "value.id", "value.cents"}),
            (std::map<std::pair<int32_t, int64_t>, std::string>{{{0, 0}, "7 o-1 250"}, {{0, 1}, "- o-2 0"}}));
}

TEST_F(StreamRegistryTest, RefusedCredentialsAndAFormatMismatchFailBeforeAnyRecordIsWritten) {
  FakeRegistry registry(Answer);
  connectors::KafkaTestMessage message;
  message.value = "x";
  ASSERT_TRUE(connectors::ProduceMessages(bootstrap_, topic_, {message}).ok());
  setenv("SLUICE_TEST_REGISTRY_SECRET", "wrong", 1);
  Status refused = Run("      value: {schema_registry: " + Block(registry, "") + "}\n");
  EXPECT_EQ(refused.error_class(), "SCHEMA_REGISTRY_UNAUTHORIZED") << refused.ToString();
  EXPECT_EQ(refused.message().find("wrong"), std::string::npos) << "the secret is never shown";

  setenv("SLUICE_TEST_REGISTRY_SECRET", "s3cret", 1);
  Status mismatch = Run("      value: {schema_registry: " + Block(registry, ", format: protobuf") + "}\n");
  EXPECT_EQ(mismatch.error_class(), "INVALID_OPTIONS") << mismatch.ToString();
  EXPECT_FALSE(std::filesystem::exists(Table() + "/_delta_log"));

  Status unknown = Run("      value: {schema_registry: " + Block(registry, ", subjekt: x") + "}\n");
  EXPECT_EQ(unknown.error_class(), "INVALID_OPTIONS") << unknown.ToString();
  EXPECT_NE(unknown.message().find("subjekt"), std::string::npos) << unknown.ToString();
}

}  // namespace
}  // namespace sluice::pipeline
