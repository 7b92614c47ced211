// What stream tests share: a fresh three-partition topic on the shared Kafka mock cluster, and a
// scan of an ingestion table.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "sluice/connectors/testing/kafka_fixture.h"
#include "sluice/core/file_system.h"
#include "sluice/delta/scan.h"
#include "sluice/delta/snapshot.h"

namespace sluice::pipeline::testing {

// Calls `visit` with each batch of the Delta table at `table`, failing the test on a read error.
inline void ForEachBatch(const std::string& table, const std::function<void(const RecordBatch&)>& visit) {
  auto snapshot = delta::Snapshot::Load(LocalFileSystem(), table);
  ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString();
  auto scan = delta::TableScan::Open(*snapshot);
  ASSERT_TRUE(scan.ok()) << scan.status().ToString();
  while (true) {
    Result<BatchPtr> batch = (*scan)->Next();
    ASSERT_TRUE(batch.ok()) << batch.status().ToString();
    if (*batch == nullptr) return;
    visit(**batch);
  }
}

// zig-zag varint of `n`, as Avro writes int and long.
inline std::string AvroLong(int64_t n) {
  uint64_t z = (static_cast<uint64_t>(n) << 1) ^ static_cast<uint64_t>(n >> 63);
  std::string out;
  do {
    uint8_t byte = z & 0x7f;
    z >>= 7;
    if (z != 0) byte |= 0x80;
    out.push_back(static_cast<char>(byte));
  } while (z != 0);
  return out;
}

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
