// EmbeddedKafka: librdkafka's in-process mock cluster, for demos and tests.
//
// The mock cluster speaks the Kafka protocol on loopback TCP ports, so any Kafka client in this
// process or another one (librdkafka, kcat) can use bootstrap_servers(). It lives only in memory and
// only as long as this object: nothing is persisted. It is not a full broker (no transactions
// across restarts, no ACLs), but produce, fetch, metadata, offsets and consumer groups work. Like
// a broker with auto.create.topics.enable, it creates an unknown topic when a client asks for its
// metadata.
//
// Also here: KafkaTestProducer and ReadAllMessages, small synchronous helpers for tests and demos.
//
// Failures are reported as EMBEDDED_SERVICE_FAILED. EmbeddedKafka is thread-safe after Start():
// CreateTopic may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sluice/core/status.h"

typedef struct rd_kafka_s rd_kafka_t;
typedef struct rd_kafka_mock_cluster_s rd_kafka_mock_cluster_t;

namespace sluice::connectors {

class EmbeddedKafka {
 public:
  // Starts a mock cluster of `brokers` brokers (1 or more) on free loopback ports.
  static Result<std::unique_ptr<EmbeddedKafka>> Start(int brokers);
  EmbeddedKafka(const EmbeddedKafka&) = delete;
  EmbeddedKafka& operator=(const EmbeddedKafka&) = delete;
  // Stops the cluster; clients still connected see their connections drop.
  ~EmbeddedKafka();

  // "127.0.0.1:port,127.0.0.1:port,..."
  const std::string& bootstrap_servers() const { return bootstrap_servers_; }
  int broker_count() const { return brokers_; }

  // Creates `name` with `partitions` partitions, replicated on min(brokers, 3) brokers.
  // Fails if the topic exists.
  Status CreateTopic(std::string_view name, int partitions);

 private:
  EmbeddedKafka(rd_kafka_t* handle, rd_kafka_mock_cluster_t* cluster, int brokers);

  rd_kafka_t* handle_;
  rd_kafka_mock_cluster_t* cluster_;
  int brokers_;
  std::string bootstrap_servers_;
};

// One record to produce, or one record read back.
struct KafkaTestMessage {
  std::optional<std::string> key;
  std::optional<std::string> value;
  std::vector<std::pair<std::string, std::string>> headers;
  // -1 lets the partitioner choose (by key hash, or sticky-random without a key).
  int32_t partition = -1;
  // Set on messages read back.
  int64_t offset = -1;
  int64_t timestamp_ms = 0;
};

// A synchronous producer: Produce() queues, Flush() waits and reports the first delivery failure.
// Not thread-safe.
class KafkaTestProducer {
 public:
  // `properties` are librdkafka producer properties applied after the defaults (acks=all,
  // linger.ms=5); a property librdkafka refuses fails with EMBEDDED_SERVICE_FAILED.
  static Result<std::unique_ptr<KafkaTestProducer>> Connect(
      const std::string& bootstrap_servers, const std::vector<std::pair<std::string, std::string>>& properties = {});
  KafkaTestProducer(const KafkaTestProducer&) = delete;
  KafkaTestProducer& operator=(const KafkaTestProducer&) = delete;
  ~KafkaTestProducer();

  Status Produce(std::string_view topic, const KafkaTestMessage& message);
  // Waits until every queued message is acknowledged by the cluster (acks=all).
  Status Flush(std::chrono::milliseconds timeout = std::chrono::seconds(30));

 private:
  explicit KafkaTestProducer(rd_kafka_t* handle);
  rd_kafka_t* handle_;
  // Written by librdkafka's delivery report callback, which runs inside Flush() on this thread.
  std::string first_delivery_error_;
  int64_t delivered_ = 0;
  friend struct KafkaTestProducerCallbacks;
};

// Produces `messages` to `topic` and flushes.
Status ProduceMessages(const std::string& bootstrap_servers, std::string_view topic,
                       const std::vector<KafkaTestMessage>& messages);

// Reads every message of every partition of `topic`, from the beginning up to the high watermark
// seen at the call, without a consumer group. Ordered by partition, then offset.
Result<std::vector<KafkaTestMessage>> ReadAllMessages(const std::string& bootstrap_servers, std::string_view topic,
                                                      std::chrono::milliseconds timeout = std::chrono::seconds(30));

}  // namespace sluice::connectors
