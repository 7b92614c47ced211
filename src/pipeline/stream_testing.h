// A fixture for stream tests: a fresh three-partition topic on the shared Kafka mock cluster.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "sluice/connectors/testing/kafka_fixture.h"

namespace sluice::pipeline::testing {

class KafkaTopicTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto kafka = connectors::testing::SharedKafka();
    ASSERT_TRUE(kafka.ok()) << kafka.status().ToString();
    bootstrap_ = (*kafka)->bootstrap_servers();
    auto topic = connectors::testing::CreateTestTopic(3);
    ASSERT_TRUE(topic.ok()) << topic.status().ToString();
    topic_ = *topic;
  }

  std::string bootstrap_;
  std::string topic_;
};

}  // namespace sluice::pipeline::testing
