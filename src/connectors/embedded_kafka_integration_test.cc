#include "sluice/connectors/embedded_kafka.h"

#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sluice/connectors/testing/kafka_fixture.h"
#include "sluice/core/error_classes.h"

namespace sluice::connectors {
namespace {

using KafkaHandle = std::unique_ptr<rd_kafka_t, decltype(&rd_kafka_destroy)>;

KafkaHandle NewClient(rd_kafka_type_t type, const std::map<std::string, std::string>& settings) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char errstr[512];
  for (const auto& [name, value] : settings) {
    EXPECT_EQ(rd_kafka_conf_set(conf, name.c_str(), value.c_str(), errstr, sizeof(errstr)), RD_KAFKA_CONF_OK) << errstr;
  }
  rd_kafka_t* handle = rd_kafka_new(type, conf, errstr, sizeof(errstr));
  EXPECT_NE(handle, nullptr) << errstr;
  return KafkaHandle(handle, &rd_kafka_destroy);
}

std::string ValueFor(int i) { return "{\"order\":" + std::to_string(i) + ",\"note\":\"caf\xc3\xa9\"}"; }

TEST(EmbeddedKafkaTest, MetadataListsEveryBroker) {
  auto kafka = EmbeddedKafka::Start(3);
  ASSERT_TRUE(kafka.ok()) << kafka.status().ToString();
  EXPECT_EQ((*kafka)->broker_count(), 3);
  const std::string& bootstrap = (*kafka)->bootstrap_servers();
  EXPECT_EQ(std::count(bootstrap.begin(), bootstrap.end(), ','), 2) << bootstrap;

  KafkaHandle client = NewClient(RD_KAFKA_PRODUCER, {{"bootstrap.servers", bootstrap}});
  const rd_kafka_metadata_t* metadata = nullptr;
  ASSERT_EQ(rd_kafka_metadata(client.get(), 1, nullptr, &metadata, 10000), RD_KAFKA_RESP_ERR_NO_ERROR);
  EXPECT_EQ(metadata->broker_cnt, 3);
  for (int i = 0; i < metadata->broker_cnt; ++i) EXPECT_STREQ(metadata->brokers[i].host, "127.0.0.1");
  rd_kafka_metadata_destroy(metadata);
}

TEST(EmbeddedKafkaTest, ProducedMessagesAreConsumedBackExactly) {
  auto kafka = EmbeddedKafka::Start(3);
  ASSERT_TRUE(kafka.ok()) << kafka.status().ToString();
  ASSERT_TRUE((*kafka)->CreateTopic("orders", 3).ok());
  const std::string& bootstrap = (*kafka)->bootstrap_servers();

  std::vector<KafkaTestMessage> sent;
  for (int i = 0; i < 100; ++i) {
    KafkaTestMessage m;
    m.key = "k" + std::to_string(i);
    m.value = ValueFor(i);
    m.headers = {{"source", "test"}, {"seq", std::to_string(i)}};
    m.partition = i % 3;
    m.timestamp_ms = 1700000000000 + i;
    sent.push_back(m);
  }
  Status produced = ProduceMessages(bootstrap, "orders", sent);
  ASSERT_TRUE(produced.ok()) << produced.ToString();

  // A plain librdkafka consumer, independent of the helpers under test.
  KafkaHandle consumer = NewClient(RD_KAFKA_CONSUMER, {{"bootstrap.servers", bootstrap},
                                                       {"group.id", "verifier"},
                                                       {"enable.auto.commit", "false"}});
  std::unique_ptr<rd_kafka_topic_partition_list_t, decltype(&rd_kafka_topic_partition_list_destroy)> assignment(
      rd_kafka_topic_partition_list_new(3), &rd_kafka_topic_partition_list_destroy);
  for (int p = 0; p < 3; ++p) {
    rd_kafka_topic_partition_list_add(assignment.get(), "orders", p)->offset = RD_KAFKA_OFFSET_BEGINNING;
  }
  ASSERT_EQ(rd_kafka_assign(consumer.get(), assignment.get()), RD_KAFKA_RESP_ERR_NO_ERROR);
  std::map<int, std::vector<std::string>> values_by_partition;
  std::map<int, std::string> key_by_value;
  int received = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (received < 100 && std::chrono::steady_clock::now() < deadline) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(consumer.get(), 100);
    if (m == nullptr) continue;
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      std::string value(static_cast<const char*>(m->payload), m->len);
      values_by_partition[m->partition].push_back(value);
      EXPECT_EQ(m->offset, static_cast<int64_t>(values_by_partition[m->partition].size()) - 1);
      ++received;
    }
    rd_kafka_message_destroy(m);
  }
  rd_kafka_consumer_close(consumer.get());
  ASSERT_EQ(received, 100);
  for (int p = 0; p < 3; ++p) {
    std::vector<std::string> expected;
    for (int i = p; i < 100; i += 3) expected.push_back(ValueFor(i));
    EXPECT_EQ(values_by_partition[p], expected) << "partition " << p;
  }

  // The read-back helper sees the same records, with keys, headers and timestamps.
  auto read = ReadAllMessages(bootstrap, "orders");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_EQ(read->size(), 100u);
  const KafkaTestMessage& first_of_partition_1 = (*read)[34];
  EXPECT_EQ(first_of_partition_1.partition, 1);
  EXPECT_EQ(first_of_partition_1.offset, 0);
  EXPECT_EQ(first_of_partition_1.key, "k1");
  EXPECT_EQ(first_of_partition_1.value, ValueFor(1));
  EXPECT_EQ(first_of_partition_1.timestamp_ms, 1700000000001);
  EXPECT_EQ(first_of_partition_1.headers, (std::vector<std::pair<std::string, std::string>>{{"source", "test"}, {"seq", "1"}}));
}

TEST(EmbeddedKafkaTest, NullKeysAndValuesStayNull) {
  auto kafka = EmbeddedKafka::Start(1);
  ASSERT_TRUE(kafka.ok());
  ASSERT_TRUE((*kafka)->CreateTopic("tombstones", 1).ok());
  KafkaTestMessage tombstone;
  tombstone.key = "gone";
  KafkaTestMessage empty;
  empty.key = "";
  empty.value = "";
  ASSERT_TRUE(ProduceMessages((*kafka)->bootstrap_servers(), "tombstones", {tombstone, empty}).ok());
  auto read = ReadAllMessages((*kafka)->bootstrap_servers(), "tombstones");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_EQ(read->size(), 2u);
  EXPECT_EQ((*read)[0].key, "gone");
  EXPECT_FALSE((*read)[0].value.has_value());
  EXPECT_EQ((*read)[1].key, "");
  EXPECT_EQ((*read)[1].value, "");
}

TEST(EmbeddedKafkaTest, ReadingAnEmptyTopicReturnsNothing) {
  auto kafka = EmbeddedKafka::Start(1);
  ASSERT_TRUE(kafka.ok());
  ASSERT_TRUE((*kafka)->CreateTopic("quiet", 4).ok());
  auto read = ReadAllMessages((*kafka)->bootstrap_servers(), "quiet");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_TRUE(read->empty());
}

TEST(EmbeddedKafkaTest, InvalidRequestsFailWithTheEmbeddedServiceClass) {
  EXPECT_EQ(EmbeddedKafka::Start(0).status().error_class(), errors::kEmbeddedServiceFailed);
  auto kafka = EmbeddedKafka::Start(1);
  ASSERT_TRUE(kafka.ok());
  EXPECT_EQ((*kafka)->CreateTopic("t", 0).error_class(), errors::kEmbeddedServiceFailed);
  EXPECT_EQ((*kafka)->CreateTopic("", 1).error_class(), errors::kEmbeddedServiceFailed);
}

TEST(EmbeddedKafkaTest, UnknownTopicsAreCreatedOnFirstUseLikeAnAutoCreatingBroker) {
  auto kafka = EmbeddedKafka::Start(1);
  ASSERT_TRUE(kafka.ok());
  auto read = ReadAllMessages((*kafka)->bootstrap_servers(), "never_created");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_TRUE(read->empty());
  EXPECT_EQ((*kafka)->CreateTopic("never_created", 1).error_class(), errors::kEmbeddedServiceFailed);
}

TEST(KafkaFixtureTest, TestsShareOneClusterWithTheirOwnTopics) {
  auto first = testing::CreateTestTopic(2);
  auto second = testing::CreateTestTopic(2);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_NE(*first, *second);
  auto kafka = testing::SharedKafka();
  ASSERT_TRUE(kafka.ok());
  EXPECT_EQ((*kafka)->broker_count(), 3);
  KafkaTestMessage m;
  m.value = "only in the first topic";
  ASSERT_TRUE(ProduceMessages((*kafka)->bootstrap_servers(), *first, {m}).ok());
  EXPECT_EQ(ReadAllMessages((*kafka)->bootstrap_servers(), *first)->size(), 1u);
  EXPECT_EQ(ReadAllMessages((*kafka)->bootstrap_servers(), *second)->size(), 0u);
}

}  // namespace
}  // namespace sluice::connectors
