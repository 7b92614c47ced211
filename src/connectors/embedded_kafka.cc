#include "sluice/connectors/embedded_kafka.h"

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "sluice/core/error_classes.h"

namespace sluice::connectors {
namespace {

using Clock = std::chrono::steady_clock;

Status KafkaFailure(std::string message) {
  return Status::Error(errors::kEmbeddedServiceFailed, std::move(message));
}

// Applies `settings` to a fresh configuration; reports the first rejected setting.
Result<rd_kafka_conf_t*> MakeConf(const std::vector<std::pair<std::string, std::string>>& settings) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char errstr[512];
  for (const auto& [name, value] : settings) {
    if (rd_kafka_conf_set(conf, name.c_str(), value.c_str(), errstr, sizeof(errstr)) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      return KafkaFailure(fmt::format("Kafka client setting {}={} rejected: {}", name, value, errstr));
    }
  }
  return conf;
}

Result<rd_kafka_t*> NewClient(rd_kafka_type_t type, rd_kafka_conf_t* conf) {
  char errstr[512];
  rd_kafka_t* handle = rd_kafka_new(type, conf, errstr, sizeof(errstr));
  if (handle == nullptr) {
    rd_kafka_conf_destroy(conf);
    return KafkaFailure(fmt::format("cannot create Kafka client: {}", errstr));
  }
  return handle;
}

KafkaTestMessage CopyMessage(const rd_kafka_message_t& m) {
  KafkaTestMessage out;
  if (m.key != nullptr) out.key.emplace(static_cast<const char*>(m.key), m.key_len);
  if (m.payload != nullptr) out.value.emplace(static_cast<const char*>(m.payload), m.len);
  out.partition = m.partition;
  out.offset = m.offset;
  rd_kafka_timestamp_type_t type;
  out.timestamp_ms = rd_kafka_message_timestamp(&m, &type);
  rd_kafka_headers_t* headers = nullptr;
  if (rd_kafka_message_headers(&m, &headers) == RD_KAFKA_RESP_ERR_NO_ERROR) {
    const char* name;
    const void* value;
    size_t size;
    for (size_t i = 0; rd_kafka_header_get_all(headers, i, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR; ++i) {
      out.headers.emplace_back(name, value != nullptr ? std::string(static_cast<const char*>(value), size) : "");
    }
  }
  return out;
}

}  // namespace

struct KafkaTestProducerCallbacks {
  static void OnDelivery(rd_kafka_t*, const rd_kafka_message_t* message, void* opaque) {
    auto* producer = static_cast<KafkaTestProducer*>(opaque);
    if (message->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      ++producer->delivered_;
    } else if (producer->first_delivery_error_.empty()) {
      producer->first_delivery_error_ = rd_kafka_err2str(message->err);
    }
  }
};

EmbeddedKafka::EmbeddedKafka(rd_kafka_t* handle, rd_kafka_mock_cluster_t* cluster, int brokers)
    : handle_(handle), cluster_(cluster), brokers_(brokers), bootstrap_servers_(rd_kafka_mock_cluster_bootstraps(cluster)) {}

EmbeddedKafka::~EmbeddedKafka() {
  rd_kafka_mock_cluster_destroy(cluster_);
  rd_kafka_destroy(handle_);
}

Result<std::unique_ptr<EmbeddedKafka>> EmbeddedKafka::Start(int brokers) {
  if (brokers < 1) {
    return KafkaFailure(fmt::format("an embedded Kafka cluster needs at least 1 broker, got {}", brokers));
  }
  // The handle only hosts the mock cluster's thread; it never connects anywhere, so its
  // "no bootstrap.servers" warning is noise.
  SLUICE_ASSIGN_OR_RETURN(rd_kafka_conf_t * conf, MakeConf({{"log_level", "3"}}));
  SLUICE_ASSIGN_OR_RETURN(rd_kafka_t * handle, NewClient(RD_KAFKA_PRODUCER, conf));
  rd_kafka_mock_cluster_t* cluster = rd_kafka_mock_cluster_new(handle, brokers);
  if (cluster == nullptr) {
    rd_kafka_destroy(handle);
    return KafkaFailure(fmt::format("cannot start a mock Kafka cluster of {} brokers (see the log above)", brokers));
  }
  return std::unique_ptr<EmbeddedKafka>(new EmbeddedKafka(handle, cluster, brokers));
}

Status EmbeddedKafka::CreateTopic(std::string_view name, int partitions) {
  if (name.empty() || partitions < 1) {
    return KafkaFailure(fmt::format("cannot create topic '{}' with {} partitions: a topic needs a name and at "
                                    "least 1 partition",
                                    name, partitions));
  }
  std::string topic(name);
  rd_kafka_resp_err_t err = rd_kafka_mock_topic_create(cluster_, topic.c_str(), partitions, std::min(brokers_, 3));
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return KafkaFailure(fmt::format("cannot create topic {}: {}", topic, rd_kafka_err2str(err)));
  }
  return Status::OK();
}

KafkaTestProducer::KafkaTestProducer(rd_kafka_t* handle) : handle_(handle) {}

KafkaTestProducer::~KafkaTestProducer() {
  if (handle_ != nullptr) rd_kafka_destroy(handle_);
}

Result<std::unique_ptr<KafkaTestProducer>> KafkaTestProducer::Connect(
    const std::string& bootstrap_servers, const std::vector<std::pair<std::string, std::string>>& properties) {
  std::unique_ptr<KafkaTestProducer> producer(new KafkaTestProducer(nullptr));
  std::vector<std::pair<std::string, std::string>> settings = {
      {"bootstrap.servers", bootstrap_servers}, {"acks", "all"}, {"linger.ms", "5"}};
  settings.insert(settings.end(), properties.begin(), properties.end());
  SLUICE_ASSIGN_OR_RETURN(rd_kafka_conf_t * conf, MakeConf(settings));
  rd_kafka_conf_set_dr_msg_cb(conf, &KafkaTestProducerCallbacks::OnDelivery);
  rd_kafka_conf_set_opaque(conf, producer.get());
  SLUICE_ASSIGN_OR_RETURN(producer->handle_, NewClient(RD_KAFKA_PRODUCER, conf));
  return producer;
}

Status KafkaTestProducer::Produce(std::string_view topic, const KafkaTestMessage& message) {
  std::string topic_name(topic);
  for (;;) {
    rd_kafka_headers_t* headers = nullptr;
    if (!message.headers.empty()) {
      headers = rd_kafka_headers_new(message.headers.size());
      for (const auto& [name, value] : message.headers) {
        rd_kafka_header_add(headers, name.data(), static_cast<ssize_t>(name.size()), value.data(),
                            static_cast<ssize_t>(value.size()));
      }
    }
    // Null pointers with length 0 produce a null key or value, which differs from an empty one.
    const void* key = message.key ? message.key->data() : nullptr;
    size_t key_size = message.key ? message.key->size() : 0;
    void* value = message.value ? const_cast<char*>(message.value->data()) : nullptr;
    size_t value_size = message.value ? message.value->size() : 0;
    rd_kafka_resp_err_t err = rd_kafka_producev(
        handle_, RD_KAFKA_V_TOPIC(topic_name.c_str()), RD_KAFKA_V_PARTITION(message.partition),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_KEY(key, key_size), RD_KAFKA_V_VALUE(value, value_size),
        RD_KAFKA_V_HEADERS(headers), RD_KAFKA_V_TIMESTAMP(message.timestamp_ms), RD_KAFKA_V_END);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return Status::OK();  // librdkafka now owns `headers`
    if (headers != nullptr) rd_kafka_headers_destroy(headers);
    if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      return KafkaFailure(fmt::format("cannot produce to topic {}: {}", topic_name, rd_kafka_err2str(err)));
    }
    rd_kafka_poll(handle_, 100);
  }
}

Status KafkaTestProducer::Flush(std::chrono::milliseconds timeout) {
  rd_kafka_resp_err_t err = rd_kafka_flush(handle_, static_cast<int>(timeout.count()));
  if (!first_delivery_error_.empty()) {
    return KafkaFailure(fmt::format("a message was not delivered: {}", first_delivery_error_));
  }
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return KafkaFailure(fmt::format("flush did not complete within {} ms: {} messages still queued", timeout.count(),
                                    rd_kafka_outq_len(handle_)));
  }
  return Status::OK();
}

Status ProduceMessages(const std::string& bootstrap_servers, std::string_view topic,
                       const std::vector<KafkaTestMessage>& messages) {
  SLUICE_ASSIGN_OR_RETURN(auto producer, KafkaTestProducer::Connect(bootstrap_servers));
  for (const KafkaTestMessage& message : messages) SLUICE_RETURN_IF_ERROR(producer->Produce(topic, message));
  return producer->Flush();
}

Result<std::vector<KafkaTestMessage>> ReadAllMessages(const std::string& bootstrap_servers, std::string_view topic,
                                                      std::chrono::milliseconds timeout) {
  std::string topic_name(topic);
  SLUICE_ASSIGN_OR_RETURN(rd_kafka_conf_t * conf, MakeConf({{"bootstrap.servers", bootstrap_servers},
                                                            {"group.id", "sluice-read-all"},
                                                            {"enable.auto.commit", "false"},
                                                            {"enable.auto.offset.store", "false"}}));
  SLUICE_ASSIGN_OR_RETURN(rd_kafka_t * raw, NewClient(RD_KAFKA_CONSUMER, conf));
  std::unique_ptr<rd_kafka_t, decltype(&rd_kafka_destroy)> consumer(raw, &rd_kafka_destroy);
  int timeout_ms = static_cast<int>(timeout.count());

  std::unique_ptr<rd_kafka_topic_t, decltype(&rd_kafka_topic_destroy)> topic_handle(
      rd_kafka_topic_new(consumer.get(), topic_name.c_str(), nullptr), &rd_kafka_topic_destroy);
  const rd_kafka_metadata_t* metadata = nullptr;
  rd_kafka_resp_err_t err = rd_kafka_metadata(consumer.get(), 0, topic_handle.get(), &metadata, timeout_ms);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return KafkaFailure(fmt::format("cannot read metadata of topic {}: {}", topic_name, rd_kafka_err2str(err)));
  }
  if (metadata->topic_cnt != 1 || metadata->topics[0].err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    std::string reason = metadata->topic_cnt == 1 ? rd_kafka_err2str(metadata->topics[0].err) : "not in metadata";
    rd_kafka_metadata_destroy(metadata);
    return KafkaFailure(fmt::format("cannot read topic {}: {}", topic_name, reason));
  }
  std::vector<int32_t> partitions;
  for (int i = 0; i < metadata->topics[0].partition_cnt; ++i) partitions.push_back(metadata->topics[0].partitions[i].id);
  rd_kafka_metadata_destroy(metadata);
  topic_handle.reset();

  // The end of each partition as of now; messages produced later are not waited for.
  std::map<int32_t, int64_t> end_offsets;
  std::unique_ptr<rd_kafka_topic_partition_list_t, decltype(&rd_kafka_topic_partition_list_destroy)> assignment(
      rd_kafka_topic_partition_list_new(static_cast<int>(partitions.size())), &rd_kafka_topic_partition_list_destroy);
  for (int32_t partition : partitions) {
    int64_t low = 0;
    int64_t high = 0;
    err = rd_kafka_query_watermark_offsets(consumer.get(), topic_name.c_str(), partition, &low, &high, timeout_ms);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return KafkaFailure(
          fmt::format("cannot read offsets of {}[{}]: {}", topic_name, partition, rd_kafka_err2str(err)));
    }
    if (high > low) {
      end_offsets[partition] = high;
      rd_kafka_topic_partition_list_add(assignment.get(), topic_name.c_str(), partition)->offset = low;
    }
  }
  std::vector<KafkaTestMessage> messages;
  if (end_offsets.empty()) return messages;
  err = rd_kafka_assign(consumer.get(), assignment.get());
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return KafkaFailure(fmt::format("cannot assign partitions of {}: {}", topic_name, rd_kafka_err2str(err)));
  }
  auto deadline = Clock::now() + timeout;
  while (!end_offsets.empty()) {
    if (Clock::now() >= deadline) {
      return KafkaFailure(fmt::format("reading topic {} did not reach the end of {} partitions within {} ms",
                                      topic_name, end_offsets.size(), timeout.count()));
    }
    rd_kafka_message_t* message = rd_kafka_consumer_poll(consumer.get(), 100);
    if (message == nullptr) continue;
    std::unique_ptr<rd_kafka_message_t, decltype(&rd_kafka_message_destroy)> owned(message, &rd_kafka_message_destroy);
    if (message->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) continue;
    if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return KafkaFailure(fmt::format("reading topic {} failed: {}", topic_name, rd_kafka_message_errstr(message)));
    }
    auto end = end_offsets.find(message->partition);
    if (end == end_offsets.end() || message->offset >= end->second) continue;
    messages.push_back(CopyMessage(*message));
    if (message->offset + 1 >= end->second) end_offsets.erase(end);
  }
  rd_kafka_consumer_close(consumer.get());
  std::sort(messages.begin(), messages.end(), [](const KafkaTestMessage& a, const KafkaTestMessage& b) {
    return std::tie(a.partition, a.offset) < std::tie(b.partition, b.offset);
  });
  return messages;
}

}  // namespace sluice::connectors
