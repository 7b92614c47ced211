// The Kafka client the `kafka` source (kafka_source.h) and the consumer of a workers group
// (kafka_group_consumer.h) share: their options and how they become librdkafka settings, the rows
// records become, and a consumer handle that waits through a restarting cluster and names failed
// authentication. Internal to the connectors layer.
#pragma once

#include <fmt/core.h>
#include <librdkafka/rdkafka.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "sluice/connectors/kafka_offsets.h"
#include "oauth_token.h"
#include "sluice/core/builder.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/options.h"
#include "sluice/core/record_batch.h"
#include "sluice/core/status.h"

namespace sluice::connectors {

// In starting_offsets: a partition's earliest and latest offsets.
inline constexpr int64_t kEarliest = -2;
inline constexpr int64_t kLatest = -1;

struct KafkaSetting {
  std::string name;
  std::string value;
  std::string option;  // the user's option it came from, for messages
  bool sensitive = false;
};

struct KafkaSourceConfig {
  std::vector<KafkaSetting> settings;
  std::vector<std::string> topics;              // subscribe
  std::optional<std::regex> pattern;            // subscribe_pattern
  std::vector<TopicPartition> assigned;         // assign
  std::string starting_offsets;                 // "latest", "earliest" or JSON
  PartitionOffsets starting_partition_offsets;  // parsed JSON
  std::optional<int64_t> max_offsets_per_trigger;
  bool fail_on_data_loss = true;
  int timeout_ms = 30000;
  std::string description;
  // Set for OAUTHBEARER: the source fetches the tokens (oauth_token.h).
  std::optional<OAuthClientCredentials> oauth;
};

using ConfPtr = std::unique_ptr<rd_kafka_conf_t, decltype(&rd_kafka_conf_destroy)>;
using MessagePtr = std::unique_ptr<rd_kafka_message_t, decltype(&rd_kafka_message_destroy)>;
using PartitionListPtr =
    std::unique_ptr<rd_kafka_topic_partition_list_t, decltype(&rd_kafka_topic_partition_list_destroy)>;

// The options of the `kafka` source (docs/streams.md), a static table.
std::span<const OptionSpec> KafkaSourceOptions();
// A client configuration from the settings; INVALID_OPTIONS naming the option librdkafka refused.
Result<ConfPtr> BuildConf(const std::vector<KafkaSetting>& settings);
// The validated options as a configuration (INVALID_OPTIONS for combinations that do not hold).
Result<KafkaSourceConfig> MakeKafkaConfig(const ValidatedOptions& options);
// Where `starting_offsets` starts `partition`: its JSON entry, else earliest or latest; an offset,
// or kEarliest / kLatest for the caller to resolve against the partition's watermarks.
int64_t StartingOffset(const KafkaSourceConfig& config, const TopicPartition& partition);

// key (binary), value (binary), topic, partition, offset, timestamp, headers.
TypePtr KafkaRowSchema();

// One record of the consumer's stream as the batch builder reads it: a view into a client
// message or into a HeldRecord. An end-of-partition event has `eof` set and `offset` the next
// offset to be written.
struct KafkaRecord {
  std::string_view topic;
  int32_t partition = 0;
  int64_t offset = 0;
  bool eof = false;
  std::optional<std::string_view> key;
  std::optional<std::string_view> value;
  int64_t timestamp_ms = -1;  // negative: none
  const rd_kafka_headers_t* headers = nullptr;
};

// A view of `message`, valid while it lives.
KafkaRecord RecordOf(rd_kafka_message_t* message);

class KafkaRowBuilder {
 public:
  explicit KafkaRowBuilder(const TypePtr& schema)
      : schema_(schema),
        keys_(DataType::Binary()),
        values_(DataType::Binary()),
        topics_(DataType::String()),
        partitions_(DataType::Integer()),
        offsets_(DataType::Long()),
        timestamps_(DataType::Timestamp()),
        headers_(schema->fields()[6].type),
        header_struct_(static_cast<StructBuilder*>(headers_.element_builder())),
        header_keys_(static_cast<BinaryBuilder*>(header_struct_->field_builder(0))),
        header_values_(static_cast<BinaryBuilder*>(header_struct_->field_builder(1))) {}

  void Reserve(int64_t rows) {
    for (ColumnBuilder* builder : std::initializer_list<ColumnBuilder*>{&keys_, &values_, &topics_, &partitions_,
                                                                        &offsets_, &timestamps_, &headers_}) {
      builder->Reserve(rows);
    }
  }

  // Reserves the bytes of `more_rows` further keys, values and topic names, estimated from the
  // rows appended so far plus a quarter for variation. Without it the byte buffers of a batch of
  // a million records are copied at every doubling, which was most of the read's CPU time. Pages
  // reserved but never written are never touched: they cost address space, not memory.
  void ReserveBytesLikeSoFar(int64_t more_rows) {
    if (rows_ == 0) return;
    auto estimate = [&](int64_t bytes_so_far) { return bytes_so_far / rows_ * more_rows * 5 / 4; };
    keys_.ReserveBytes(estimate(key_bytes_));
    values_.ReserveBytes(estimate(value_bytes_));
    topics_.ReserveBytes(estimate(topic_bytes_));
  }

  void Append(const KafkaRecord& record) {
    if (record.key) {
      keys_.Append(*record.key);
      key_bytes_ += static_cast<int64_t>(record.key->size());
    } else {
      keys_.AppendNull();
    }
    if (record.value) {
      values_.Append(*record.value);
      value_bytes_ += static_cast<int64_t>(record.value->size());
    } else {
      values_.AppendNull();
    }
    topics_.Append(record.topic);
    topic_bytes_ += static_cast<int64_t>(record.topic.size());
    partitions_.Append(record.partition);
    offsets_.Append(record.offset);
    if (record.timestamp_ms < 0) {
      timestamps_.AppendNull();
    } else {
      timestamps_.Append(record.timestamp_ms * 1000);
    }
    if (record.headers != nullptr) {
      const char* name = nullptr;
      const void* value = nullptr;
      size_t size = 0;
      for (size_t i = 0; rd_kafka_header_get_all(record.headers, i, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR;
           ++i) {
        header_keys_->Append(name);
        if (value == nullptr) {
          header_values_->AppendNull();
        } else {
          header_values_->Append(std::string_view(static_cast<const char*>(value), size));
        }
        header_struct_->Append();
      }
    }
    headers_.Append();
    ++rows_;
  }

  int64_t rows() const { return rows_; }

  Result<BatchPtr> Finish() {
    return RecordBatch::Make(schema_,
                             {keys_.Finish(), values_.Finish(), topics_.Finish(), partitions_.Finish(),
                              offsets_.Finish(), timestamps_.Finish(), headers_.Finish()},
                             rows_);
  }

 private:
  TypePtr schema_;
  BinaryBuilder keys_;
  BinaryBuilder values_;
  BinaryBuilder topics_;
  Int32Builder partitions_;
  Int64Builder offsets_;
  Int64Builder timestamps_;
  ListBuilder headers_;
  StructBuilder* header_struct_;
  BinaryBuilder* header_keys_;
  BinaryBuilder* header_values_;
  int64_t rows_ = 0;
  int64_t key_bytes_ = 0;
  int64_t value_bytes_ = 0;
  int64_t topic_bytes_ = 0;
};

struct Watermarks {
  int64_t low = 0;
  int64_t high = 0;
};
using WatermarkMap = std::map<TopicPartition, Watermarks>;

// What the client reports on librdkafka's threads, for the source's thread to read: the last
// failed authentication (SASL or TLS) that no later success has cleared, and, for OAUTHBEARER, the
// token refresh, which librdkafka's background thread runs (rd_kafka_sasl_background_callbacks_enable)
// so that tokens come even while the source waits in a blocking call.
class ClientEvents {
 public:
  ClientEvents(std::optional<OAuthClientCredentials> oauth, int timeout_ms)
      : oauth_(std::move(oauth)), timeout_ms_(timeout_ms) {}

  // What the group's rebalances call (a consumer of a group only), on the thread that polls.
  using Rebalance = std::function<void(rd_kafka_t*, rd_kafka_resp_err_t, rd_kafka_topic_partition_list_t*)>;

  // Installs the callbacks on `conf`; this object must outlive the client made from it.
  void Install(rd_kafka_conf_t* conf, Rebalance rebalance) {
    rd_kafka_conf_set_opaque(conf, this);
    rd_kafka_conf_set_error_cb(conf, &ClientEvents::OnError);
    if (rebalance) {
      rebalance_ = std::move(rebalance);
      rd_kafka_conf_set_rebalance_cb(conf, &ClientEvents::OnRebalance);
    }
    if (oauth_) {
      rd_kafka_conf_set_oauthbearer_token_refresh_cb(conf, &ClientEvents::OnTokenRefresh);
      rd_kafka_conf_enable_sasl_queue(conf, 1);
    }
  }
  Status Started(rd_kafka_t* client) {
    if (!oauth_) return Status::OK();
    rd_kafka_error_t* error = rd_kafka_sasl_background_callbacks_enable(client);
    if (error == nullptr) return Status::OK();
    std::string message = rd_kafka_error_string(error);
    rd_kafka_error_destroy(error);
    return Status::Error(errors::kKafkaRequestFailed, "cannot start the OAUTHBEARER token refresh: " + message);
  }

  std::optional<std::string> AuthenticationFailure() {
    std::lock_guard lock(mutex_);
    return failure_;
  }
  void ClearAuthenticationFailure() {
    std::lock_guard lock(mutex_);
    failure_.reset();
  }

 private:
  void Report(std::string failure) {
    std::lock_guard lock(mutex_);
    failure_ = std::move(failure);
  }

  static void OnError(rd_kafka_t*, int err, const char* reason, void* opaque) {
    const std::string_view text = reason;
    // A broker that refuses the client's certificate answers the handshake with a TLS alert,
    // which the client sees as a failed receive (a transport error) rather than as a TLS one.
    const bool refused_by_tls_alert =
        err == RD_KAFKA_RESP_ERR__TRANSPORT && text.find("SSL alert number") != std::string_view::npos;
    if (err != RD_KAFKA_RESP_ERR__AUTHENTICATION && err != RD_KAFKA_RESP_ERR__SSL && !refused_by_tls_alert) return;
    // A failed token refresh is reported by OnTokenRefresh, which knows whether the last token
    // still holds.
    if (text.find("OAUTHBEARER token") != std::string_view::npos) return;
    std::string failure(text);
    // librdkafka before 2.6.1 repeats the client nonce in its SCRAM proof, which Kafka 4.x brokers
    // refuse as invalid credentials however right the password is (librdkafka issue 4895).
    if (rd_kafka_version() < 0x020601ff && text.find("invalid credentials with SASL mechanism SCRAM") != std::string_view::npos) {
      failure += fmt::format(
          ". If the password is right and the brokers run Apache Kafka 4.x: this Kafka client library (librdkafka {}) "
          "cannot authenticate with SCRAM to them; librdkafka 2.6.1 and later can. Use PLAIN over TLS, OAUTHBEARER or "
          "mutual TLS with such brokers, or build sluice with a newer librdkafka",
          rd_kafka_version_str());
    }
    static_cast<ClientEvents*>(opaque)->Report(std::move(failure));
  }

  static void OnRebalance(rd_kafka_t* client, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* partitions,
                          void* opaque) {
    static_cast<ClientEvents*>(opaque)->rebalance_(client, err, partitions);
  }

  static void OnTokenRefresh(rd_kafka_t* client, const char*, void* opaque) {
    auto* self = static_cast<ClientEvents*>(opaque);
    Result<OAuthToken> token = FetchOAuthToken(*self->oauth_, std::chrono::milliseconds(self->timeout_ms_));
    std::string failure;
    if (token.ok()) {
      char errstr[512];
      if (rd_kafka_oauthbearer_set_token(client, token->value.c_str(), token->expires_at_ms, token->principal.c_str(),
                                         nullptr, 0, errstr, sizeof(errstr)) == RD_KAFKA_RESP_ERR_NO_ERROR) {
        self->token_expires_at_ms_ = token->expires_at_ms;
        return;
      }
      failure = errstr;
    } else {
      failure = token.status().message();
    }
    // librdkafka asks again in 10 s. A token that still holds keeps the connections working
    // meanwhile, so only a failure without one is the source's.
    rd_kafka_oauthbearer_set_token_failure(client, failure.c_str());
    const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
    if (now_ms >= self->token_expires_at_ms_) self->Report("no OAUTHBEARER token: " + failure);
  }

  const std::optional<OAuthClientCredentials> oauth_;
  const int timeout_ms_;
  std::atomic<int64_t> token_expires_at_ms_{0};
  std::mutex mutex_;
  std::optional<std::string> failure_;
  Rebalance rebalance_;
};

// A consumer client of the cluster that `config` names. Not thread-safe.
class KafkaClient {
 public:
  // `more` settings beside the configuration's (group.id, ...); `rebalance`, when given, handles
  // the group's rebalances. KAFKA_REQUEST_FAILED when librdkafka cannot make the client.
  static Result<std::unique_ptr<KafkaClient>> MakeConsumer(const KafkaSourceConfig& config,
                                                           std::vector<KafkaSetting> more,
                                                           ClientEvents::Rebalance rebalance = nullptr);
  // Closes the consumer (leaving its group, if it joined one).
  ~KafkaClient();
  KafkaClient(const KafkaClient&) = delete;
  KafkaClient& operator=(const KafkaClient&) = delete;

  rd_kafka_t* get() const { return client_; }
  ClientEvents& events() { return *events_; }
  const KafkaSourceConfig& config() const { return config_; }
  std::string BootstrapServers() const { return config_.settings.front().value; }

  // Runs `request` (given how long it may wait, in ms) until it answers with something else than
  // a passing condition or `request_timeout` passes. Passing: a timeout, a connection that failed
  // (the client reconnects), and a partition or leader the cluster does not know yet (a broker
  // that just restarted loads its metadata). Waits double from 250 ms; a quick refusal is asked
  // again after a pause that doubles from 100 ms. Between tries the client's events are served,
  // and a failed authentication ends the wait early (the request would only time out).
  template <typename Request>
  rd_kafka_resp_err_t WithinTimeout(Request&& request) {
    using Clock = std::chrono::steady_clock;
    const auto deadline = Clock::now() + std::chrono::milliseconds(config_.timeout_ms);
    int64_t wait_ms = 250;
    int64_t pause_ms = 100;
    auto left_ms = [&] {
      return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    };
    while (true) {
      rd_kafka_resp_err_t err = request(static_cast<int>(std::max<int64_t>(1, std::min(wait_ms, left_ms()))));
      rd_kafka_poll(client_, 0);
      if (!Passing(err)) {
        if (err == RD_KAFKA_RESP_ERR_NO_ERROR) events_->ClearAuthenticationFailure();
        return err;
      }
      if (events_->AuthenticationFailure() || left_ms() <= 0) return err;
      if (err == RD_KAFKA_RESP_ERR__TIMED_OUT) {
        wait_ms *= 2;
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(std::max<int64_t>(1, std::min(pause_ms, left_ms()))));
        pause_ms = std::min<int64_t>(pause_ms * 2, 2000);
      }
    }
  }
  static bool Passing(rd_kafka_resp_err_t err);
  // KAFKA_AUTHENTICATION_FAILED with librdkafka's reason when the client failed to authenticate
  // (the cause of most timeouts then), else KAFKA_REQUEST_FAILED with `message`.
  Status RequestFailure(std::string message);

  Result<Watermarks> QueryWatermarks(const TopicPartition& partition);
  // The watermarks of all `partitions`: the earliest and the latest offsets of every partition are
  // each asked in one request per leader broker (ListOffsets with the special timestamps), not in
  // two per partition. A partition the batched request could not answer is asked on its own, so
  // its error reads as before.
  Result<WatermarkMap> QueryWatermarks(const std::vector<TopicPartition>& partitions);
  // Offsets [from, until) of `partition` cannot be read: KAFKA_DATA_LOSS when fail_on_data_loss,
  // else a warning in the log and OK.
  Status DataLoss(const TopicPartition& partition, int64_t from, int64_t until, std::string_view why);
  // `partition`, read up to `position`, is gone with its deleted topic: the records it had beyond
  // that are lost. KAFKA_DATA_LOSS when fail_on_data_loss, else a warning in the log and OK.
  Status PartitionGone(const TopicPartition& partition, int64_t position);

 private:
  explicit KafkaClient(KafkaSourceConfig config) : config_(std::move(config)) {}

  const KafkaSourceConfig config_;
  // Made before the client, which calls into it until destroyed.
  std::unique_ptr<ClientEvents> events_;
  rd_kafka_t* client_ = nullptr;
};

}  // namespace sluice::connectors
