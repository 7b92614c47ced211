#include "sluice/connectors/kafka_source.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <thread>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "kafka_offsets.h"
#include "oauth_token.h"
#include "sluice/core/builder.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/file_system.h"
#include "sluice/core/logging.h"

namespace sluice::connectors {
namespace {

constexpr std::string_view kSaslMechanisms[] = {"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"};

constexpr OptionSpec kOptions[] = {
    {"bootstrap_servers", OptionType::kString, std::nullopt, true, "host:port list of Kafka brokers"},
    {"subscribe", OptionType::kString, std::nullopt, false, "comma-separated topics to read"},
    {"subscribe_pattern", OptionType::kString, std::nullopt, false, "regular expression over topic names"},
    {"assign", OptionType::kString, std::nullopt, false, R"(partitions to read, JSON {"topic":[0,1]})"},
    {"starting_offsets", OptionType::kString, "latest", false,
     R"(latest, earliest, or JSON {"topic":{"0":23,"1":-2}} (-2 earliest, -1 latest))"},
    {.name = "max_offsets_per_trigger", .type = OptionType::kLong, .doc = "most records in one batch", .minimum = 1},
    {"fail_on_data_loss", OptionType::kBool, "true", false, "fail when offsets to read have vanished"},
    {"sasl_mechanism", OptionType::kEnum, std::nullopt, false, "SASL mechanism", kSaslMechanisms},
    {"user", OptionType::kString, std::nullopt, false, "SASL user name"},
    {"password", OptionType::kSecret, std::nullopt, false, "SASL password"},
    {"sasl_oauthbearer_token_endpoint_url", OptionType::kString, std::nullopt, false,
     "OAuth 2.0 token endpoint of the OIDC provider (OAUTHBEARER)"},
    {"sasl_oauthbearer_client_id", OptionType::kString, std::nullopt, false, "OAuth client id (OAUTHBEARER)"},
    {"sasl_oauthbearer_client_secret", OptionType::kSecret, std::nullopt, false, "OAuth client secret (OAUTHBEARER)"},
    {"sasl_oauthbearer_scope", OptionType::kString, std::nullopt, false,
     "scopes asked of the token endpoint, space-separated (OAUTHBEARER)"},
    {"ssl_ca_location", OptionType::kString, std::nullopt, false, "PEM file of CA certificates"},
    {"ssl_certificate_location", OptionType::kString, std::nullopt, false, "PEM file of the client certificate"},
    {"ssl_key_location", OptionType::kString, std::nullopt, false, "PEM file of the client key"},
    {"ssl_key_password", OptionType::kSecret, std::nullopt, false, "password of the client key"},
    {"ssl_keystore_location", OptionType::kString, std::nullopt, false,
     "PKCS#12 file of the client certificate and key (instead of the two PEM files)"},
    {"ssl_keystore_password", OptionType::kSecret, std::nullopt, false, "password of the PKCS#12 keystore"},
    {"request_timeout", OptionType::kDuration, "30s", false, "longest wait for one answer of the cluster"},
    {"kafka.*", OptionType::kString, std::nullopt, false, "passed to librdkafka"},
};

// librdkafka properties the source sets itself: overriding them would break exactly once or the
// offset bookkeeping.
constexpr std::string_view kReservedProperties[] = {"bootstrap.servers", "group.id", "enable.auto.commit",
                                                    "auto.offset.reset", "enable.partition.eof",
                                                    "enable.auto.offset.store"};

// Most bytes of records held between batches (read beyond one batch's range, kept for the
// next): beyond it they are dropped and the next batch assigns its partitions afresh.
constexpr int64_t kMaxHeldBytes = 16 << 20;

// Records per piece of a read: the engine writes one piece while the next is read, so a batch
// holds a few pieces in memory rather than all its records.
constexpr int64_t kPieceRows = 65536;

constexpr int64_t kEarliest = -2;
constexpr int64_t kLatest = -1;

Status InvalidOptions(std::string message) {
  return Status::Error(errors::kInvalidOptions, "kafka source: " + std::move(message));
}
Status RequestFailed(std::string message) { return Status::Error(errors::kKafkaRequestFailed, std::move(message)); }

struct Setting {
  std::string name;
  std::string value;
  std::string option;  // the user's option it came from, for messages
  bool sensitive = false;
};

struct KafkaSourceConfig {
  std::vector<Setting> settings;
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
using ClientPtr = std::unique_ptr<rd_kafka_t, decltype(&rd_kafka_destroy)>;
using MessagePtr = std::unique_ptr<rd_kafka_message_t, decltype(&rd_kafka_message_destroy)>;
using PartitionListPtr =
    std::unique_ptr<rd_kafka_topic_partition_list_t, decltype(&rd_kafka_topic_partition_list_destroy)>;

// INVALID_OPTIONS unless the keystore file can be read and is not a Java KeyStore (JKS, which
// librdkafka cannot read: its files start with the bytes FE ED FE ED).
Status CheckPkcs12Keystore(const std::string& path) {
  Result<std::unique_ptr<RandomAccessFile>> file = LocalFileSystem()->OpenForRead(path);
  if (!file.ok()) {
    return InvalidOptions(fmt::format("`ssl_keystore_location` {} cannot be read: {}", path, file.status().message()));
  }
  std::string magic;
  if ((*file)->Size() >= 4) SLUICE_RETURN_IF_ERROR((*file)->ReadAt(0, 4, &magic));
  if (magic == std::string("\xFE\xED\xFE\xED", 4)) {
    return InvalidOptions(fmt::format(
        "`ssl_keystore_location` {} is a Java KeyStore (JKS); the Kafka client reads PKCS#12 keystores: convert it "
        "with `keytool -importkeystore -srckeystore {} -destkeystore client.p12 -deststoretype PKCS12`",
        path, path));
  }
  return Status::OK();
}

// A client configuration from the settings; INVALID_OPTIONS naming the option librdkafka refused.
Result<ConfPtr> BuildConf(const std::vector<Setting>& settings) {
  ConfPtr conf(rd_kafka_conf_new(), &rd_kafka_conf_destroy);
  char errstr[512];
  for (const Setting& setting : settings) {
    if (rd_kafka_conf_set(conf.get(), setting.name.c_str(), setting.value.c_str(), errstr, sizeof(errstr)) !=
        RD_KAFKA_CONF_OK) {
      // librdkafka's message may quote the value, so it is left out for sensitive ones.
      return InvalidOptions(setting.sensitive ? fmt::format("`{}` is not accepted by the Kafka client", setting.option)
                                              : fmt::format("`{}` is not accepted by the Kafka client: {}",
                                                            setting.option, errstr));
    }
  }
  return conf;
}

std::vector<std::string> SplitTopics(const std::string& list) {
  std::vector<std::string> topics;
  size_t begin = 0;
  while (begin <= list.size()) {
    size_t end = std::min(list.find(',', begin), list.size());
    std::string topic = list.substr(begin, end - begin);
    topic.erase(0, topic.find_first_not_of(" \t"));
    topic.erase(topic.find_last_not_of(" \t") + 1);
    if (!topic.empty()) topics.push_back(std::move(topic));
    begin = end + 1;
  }
  return topics;
}

Result<KafkaSourceConfig> MakeConfig(const ValidatedOptions& options) {
  KafkaSourceConfig config;
  std::vector<std::string> modes;
  for (std::string_view mode : {"subscribe", "subscribe_pattern", "assign"}) {
    if (options.Has(mode)) modes.emplace_back(mode);
  }
  if (modes.size() != 1) {
    return InvalidOptions(modes.empty() ? "give exactly one of `subscribe`, `subscribe_pattern`, `assign` (none given)"
                                        : fmt::format("give exactly one of `subscribe`, `subscribe_pattern`, `assign` "
                                                      "(given: `{}`)",
                                                      fmt::join(modes, "`, `")));
  }
  if (modes[0] == "subscribe") {
    config.topics = SplitTopics(options.GetString("subscribe"));
    if (config.topics.empty()) return InvalidOptions("`subscribe` names no topic");
    config.description = "subscribe=" + options.GetString("subscribe");
  } else if (modes[0] == "subscribe_pattern") {
    try {
      config.pattern.emplace(options.GetString("subscribe_pattern"), std::regex::ECMAScript);
    } catch (const std::regex_error& error) {
      return InvalidOptions(fmt::format("`subscribe_pattern` is not a regular expression: {}", error.what()));
    }
    config.description = "subscribe_pattern=" + options.GetString("subscribe_pattern");
  } else {
    SLUICE_ASSIGN_OR_RETURN(config.assigned, ParsePartitionList(options.GetString("assign"), errors::kInvalidOptions));
    config.description = "assign=" + options.GetString("assign");
  }

  config.starting_offsets = options.GetString("starting_offsets");
  if (config.starting_offsets != "latest" && config.starting_offsets != "earliest") {
    SLUICE_ASSIGN_OR_RETURN(config.starting_partition_offsets,
                            ParsePartitionOffsets(config.starting_offsets, "`starting_offsets`", kEarliest,
                                                  errors::kInvalidOptions));
    if (!config.assigned.empty()) {
      std::set<TopicPartition> assigned(config.assigned.begin(), config.assigned.end());
      for (const auto& [partition, offset] : config.starting_partition_offsets) {
        if (!assigned.count(partition)) {
          return InvalidOptions(fmt::format("`starting_offsets` names {}[{}], which `assign` does not",
                                            partition.topic, partition.partition));
        }
      }
    }
  }
  if (options.Has("max_offsets_per_trigger")) config.max_offsets_per_trigger = options.GetInt64("max_offsets_per_trigger");
  config.fail_on_data_loss = options.GetBool("fail_on_data_loss");
  config.timeout_ms = static_cast<int>(
      std::clamp<int64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(options.GetDuration("request_timeout"))
                              .count(),
                          1, 3'600'000));

  auto add = [&](std::string name, std::string value, std::string option, bool sensitive) {
    config.settings.push_back(Setting{std::move(name), std::move(value), std::move(option), sensitive});
  };
  add("bootstrap.servers", options.GetString("bootstrap_servers"), "bootstrap_servers",
      options.IsSensitive("bootstrap_servers"));
  const bool sasl = options.Has("sasl_mechanism");
  const bool ssl = options.Has("ssl_ca_location") || options.Has("ssl_certificate_location") ||
                   options.Has("ssl_key_location") || options.Has("ssl_keystore_location");
  constexpr std::string_view kOAuthOptions[] = {"sasl_oauthbearer_token_endpoint_url", "sasl_oauthbearer_client_id",
                                                "sasl_oauthbearer_client_secret", "sasl_oauthbearer_scope"};
  const bool oauth = sasl && options.GetString("sasl_mechanism") == "OAUTHBEARER";
  if (oauth) {
    for (std::string_view needed : {"sasl_oauthbearer_token_endpoint_url", "sasl_oauthbearer_client_id",
                                    "sasl_oauthbearer_client_secret"}) {
      if (!options.Has(needed)) return InvalidOptions(fmt::format("`sasl_mechanism` OAUTHBEARER needs `{}`", needed));
    }
    if (options.Has("user") || options.Has("password")) {
      return InvalidOptions("OAUTHBEARER authenticates with `sasl_oauthbearer_client_id` and "
                            "`sasl_oauthbearer_client_secret`, not `user` and `password`");
    }
    const std::string& url = options.GetString("sasl_oauthbearer_token_endpoint_url");
    if (!url.starts_with("https://") && !url.starts_with("http://")) {
      return InvalidOptions("`sasl_oauthbearer_token_endpoint_url` must be an http:// or https:// URL");
    }
    config.oauth = OAuthClientCredentials{
        .token_endpoint_url = url,
        .client_id = options.GetString("sasl_oauthbearer_client_id"),
        .client_secret = options.GetSecret("sasl_oauthbearer_client_secret"),
        .scope = options.Has("sasl_oauthbearer_scope") ? options.GetString("sasl_oauthbearer_scope") : "",
        .ca_location = options.Has("ssl_ca_location") ? options.GetString("ssl_ca_location") : "",
    };
    add("sasl.mechanism", "OAUTHBEARER", "sasl_mechanism", false);
  } else {
    for (std::string_view option : kOAuthOptions) {
      if (options.Has(option)) return InvalidOptions(fmt::format("`{}` needs `sasl_mechanism` OAUTHBEARER", option));
    }
  }
  if (sasl && !oauth) {
    if (!options.Has("user") || !options.Has("password")) {
      return InvalidOptions("`sasl_mechanism` needs `user` and `password`");
    }
    add("sasl.mechanism", options.GetString("sasl_mechanism"), "sasl_mechanism", false);
    add("sasl.username", options.GetString("user"), "user", options.IsSensitive("user"));
    add("sasl.password", options.GetSecret("password"), "password", true);
  } else if (!sasl && (options.Has("user") || options.Has("password"))) {
    return InvalidOptions("`user` and `password` need `sasl_mechanism`");
  }
  if (options.Has("ssl_certificate_location") != options.Has("ssl_key_location")) {
    return InvalidOptions("mutual TLS needs both `ssl_certificate_location` and `ssl_key_location`");
  }
  if (options.Has("ssl_key_password") && !options.Has("ssl_key_location")) {
    return InvalidOptions("`ssl_key_password` needs `ssl_key_location`");
  }
  for (auto [option, property] : {std::pair{"ssl_ca_location", "ssl.ca.location"},
                                  std::pair{"ssl_certificate_location", "ssl.certificate.location"},
                                  std::pair{"ssl_key_location", "ssl.key.location"}}) {
    if (options.Has(option)) add(property, options.GetString(option), option, options.IsSensitive(option));
  }
  if (options.Has("ssl_key_password")) add("ssl.key.password", options.GetSecret("ssl_key_password"), "ssl_key_password", true);
  if (options.Has("ssl_keystore_location")) {
    if (options.Has("ssl_certificate_location")) {
      return InvalidOptions("give the client certificate either as a PKCS#12 `ssl_keystore_location` or as "
                            "`ssl_certificate_location` and `ssl_key_location`, not both");
    }
    const std::string& keystore = options.GetString("ssl_keystore_location");
    SLUICE_RETURN_IF_ERROR(CheckPkcs12Keystore(keystore));
    add("ssl.keystore.location", keystore, "ssl_keystore_location", options.IsSensitive("ssl_keystore_location"));
    if (options.Has("ssl_keystore_password")) {
      add("ssl.keystore.password", options.GetSecret("ssl_keystore_password"), "ssl_keystore_password", true);
    }
  } else if (options.Has("ssl_keystore_password")) {
    return InvalidOptions("`ssl_keystore_password` needs `ssl_keystore_location`");
  }
  if (sasl || ssl) add("security.protocol", sasl ? (ssl ? "SASL_SSL" : "SASL_PLAINTEXT") : "SSL", "", false);

  // The client fetches only while a batch is read or a backlog remains (a caught-up source
  // unassigns its partitions), so a short broker wait costs nothing when idle and keeps a batch
  // from waiting 500 ms (the librdkafka default) on a partition already read to its end.
  // `kafka.fetch.wait.max.ms` wins.
  add("fetch.wait.max.ms", "10", "", false);
  // librdkafka stops fetching a partition while the consumer queue (shared by every partition the
  // source reads) holds `queued.min.messages`, and looks again only when its fetch thread next
  // wakes, up to a second later. The default of 100,000 is reached within every large batch of small
  // records: reads stalled for about a second several times per million records. Each queued
  // record costs a few hundred bytes beyond its own, so the count also bounds memory: 500,000 took
  // the stream bench's peak RSS past 500 MB, 250,000 keeps it near 400 MB without stalls
  // (docs/streams.md). `kafka.queued.min.messages` wins.
  add("queued.min.messages", "250000", "", false);
  for (const auto& [property, value] : options.WithPrefix("kafka.")) {
    std::string lower = property;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    for (std::string_view reserved : kReservedProperties) {
      if (lower == reserved) {
        return InvalidOptions(fmt::format("`kafka.{}` cannot be set: the source manages it", property));
      }
    }
    add(property, value, "kafka." + property, options.IsSensitive("kafka." + property));
  }
  add("enable.auto.commit", "false", "", false);
  add("enable.auto.offset.store", "false", "", false);
  add("enable.partition.eof", "true", "", false);
  add("auto.offset.reset", "error", "", false);
  SLUICE_RETURN_IF_ERROR(BuildConf(config.settings).status());
  return config;
}

TypePtr RowSchema() {
  TypePtr header = DataType::Struct({Field{"key", DataType::String(), false}, Field{"value", DataType::Binary(), true}})
                       .value();
  return DataType::Struct({Field{"key", DataType::Binary(), true}, Field{"value", DataType::Binary(), true},
                           Field{"topic", DataType::String(), false}, Field{"partition", DataType::Integer(), false},
                           Field{"offset", DataType::Long(), false}, Field{"timestamp", DataType::Timestamp(), true},
                           Field{"headers", DataType::Array(header, false), false}})
      .value();
}

// One record of the consumer's stream as the batch builder reads it: a view into a client
// message or into a HeldRecord. An end-of-partition event has `eof` set and `offset` the next
// offset to be written.
struct Record {
  std::string_view topic;
  int32_t partition = 0;
  int64_t offset = 0;
  bool eof = false;
  std::optional<std::string_view> key;
  std::optional<std::string_view> value;
  int64_t timestamp_ms = -1;  // negative: none
  const rd_kafka_headers_t* headers = nullptr;
};

std::optional<std::string_view> Bytes(const void* data, size_t size) {
  if (data == nullptr) return std::nullopt;
  return std::string_view(static_cast<const char*>(data), size);
}

// A view of `message`, valid while it lives.
Record RecordOf(rd_kafka_message_t* message) {
  Record record;
  record.topic = rd_kafka_topic_name(message->rkt);
  record.partition = message->partition;
  record.offset = message->offset;
  record.eof = message->err == RD_KAFKA_RESP_ERR__PARTITION_EOF;
  if (record.eof) return record;
  record.key = Bytes(message->key, message->key_len);
  record.value = Bytes(message->payload, message->len);
  rd_kafka_timestamp_type_t type;
  record.timestamp_ms = rd_kafka_message_timestamp(message, &type);
  rd_kafka_headers_t* headers = nullptr;
  // The message keeps ownership of its parsed headers.
  if (rd_kafka_message_headers(message, &headers) == RD_KAFKA_RESP_ERR_NO_ERROR) record.headers = headers;
  return record;
}

// A record kept from one batch for the next, copied out of the client's message: a message pins
// the whole fetch response it came in (megabytes), so holding messages would hold those.
class HeldRecord {
 public:
  explicit HeldRecord(const Record& record)
      : topic_(record.topic),
        key_(record.key.value_or("")),
        value_(record.value.value_or("")),
        has_key_(record.key.has_value()),
        has_value_(record.value.has_value()),
        partition_(record.partition),
        offset_(record.offset),
        eof_(record.eof),
        timestamp_ms_(record.timestamp_ms),
        headers_(record.headers == nullptr ? nullptr : rd_kafka_headers_copy(record.headers), &rd_kafka_headers_destroy) {}

  Record view() const {
    Record record;
    record.topic = topic_;
    record.partition = partition_;
    record.offset = offset_;
    record.eof = eof_;
    if (has_key_) record.key = key_;
    if (has_value_) record.value = value_;
    record.timestamp_ms = timestamp_ms_;
    record.headers = headers_.get();
    return record;
  }
  int64_t bytes() const { return static_cast<int64_t>(key_.size() + value_.size()); }

 private:
  std::string topic_;
  std::string key_;
  std::string value_;
  bool has_key_;
  bool has_value_;
  int32_t partition_;
  int64_t offset_;
  bool eof_;
  int64_t timestamp_ms_;
  std::unique_ptr<rd_kafka_headers_t, decltype(&rd_kafka_headers_destroy)> headers_;
};

// The columns of one batch, appended record by record.
class RowBuilder {
 public:
  explicit RowBuilder(const TypePtr& schema)
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

  void Append(const Record& record) {
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

  // Installs the callbacks on `conf`; this object must outlive the client made from it.
  void Install(rd_kafka_conf_t* conf) {
    rd_kafka_conf_set_opaque(conf, this);
    rd_kafka_conf_set_error_cb(conf, &ClientEvents::OnError);
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
    return RequestFailed("cannot start the OAUTHBEARER token refresh: " + message);
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
  void Record(std::string failure) {
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
    static_cast<ClientEvents*>(opaque)->Record(std::move(failure));
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
    if (now_ms >= self->token_expires_at_ms_) self->Record("no OAUTHBEARER token: " + failure);
  }

  const std::optional<OAuthClientCredentials> oauth_;
  const int timeout_ms_;
  std::atomic<int64_t> token_expires_at_ms_{0};
  std::mutex mutex_;
  std::optional<std::string> failure_;
};

class KafkaSource final : public engine::Source {
 public:
  explicit KafkaSource(KafkaSourceConfig config)
      : config_(std::move(config)), schema_(RowSchema()), client_(nullptr, &rd_kafka_destroy) {}

  ~KafkaSource() override {
    if (client_) rd_kafka_consumer_close(client_.get());
  }

  std::string description() const override { return "KafkaSource[" + config_.description + "]"; }
  TypePtr schema() const override { return schema_; }

  Status Open(const engine::SourceContext& context) override {
    std::vector<Setting> settings = config_.settings;
    // A group id is required by the consumer API, but the source only ever assigns partitions:
    // it never joins the group and never commits offsets to it.
    settings.push_back(Setting{"group.id", "sluice-" + context.query_id, "", false});
    SLUICE_ASSIGN_OR_RETURN(ConfPtr conf, BuildConf(settings));
    events_ = std::make_unique<ClientEvents>(config_.oauth, config_.timeout_ms);
    events_->Install(conf.get());
    char errstr[512];
    rd_kafka_t* client = rd_kafka_new(RD_KAFKA_CONSUMER, conf.get(), errstr, sizeof(errstr));
    if (client == nullptr) return RequestFailed(fmt::format("cannot create a Kafka client: {}", errstr));
    conf.release();  // rd_kafka_new took it
    client_.reset(client);
    SLUICE_RETURN_IF_ERROR(events_->Started(client));
    file_system_ = context.file_system;
    initial_offset_path_ = context.state_directory + "/initial-offsets";
    return Status::OK();
  }

  // Resolved once, on the first run, and kept: `latest` must not move on a restart.
  Result<std::string> InitialOffset() override {
    Result<std::string> kept = file_system_->ReadFile(initial_offset_path_);
    if (kept.ok()) {
      SLUICE_RETURN_IF_ERROR(
          ParsePartitionOffsets(*kept, initial_offset_path_, 0, errors::kCheckpointCorrupt).status());
      return *kept;
    }
    if (kept.status().error_class() != errors::kFileNotFound) return kept.status();
    SLUICE_ASSIGN_OR_RETURN(std::vector<TopicPartition> partitions, DiscoverPartitions());
    PartitionOffsets offsets;
    std::vector<std::pair<TopicPartition, int64_t>> to_resolve;  // (partition, kEarliest or kLatest)
    for (const TopicPartition& partition : partitions) {
      int64_t wanted = config_.starting_offsets == "earliest" ? kEarliest : kLatest;
      auto given = config_.starting_partition_offsets.find(partition);
      if (given != config_.starting_partition_offsets.end()) wanted = given->second;
      if (wanted >= 0) {
        offsets[partition] = wanted;
      } else {
        to_resolve.emplace_back(partition, wanted);
      }
    }
    std::vector<TopicPartition> queried;
    for (const auto& [partition, wanted] : to_resolve) queried.push_back(partition);
    SLUICE_ASSIGN_OR_RETURN(WatermarkMap marks, QueryWatermarks(queried));
    for (const auto& [partition, wanted] : to_resolve) {
      const Watermarks& mark = marks.at(partition);
      offsets[partition] = wanted == kEarliest ? mark.low : mark.high;
    }
    std::string text = FormatPartitionOffsets(offsets);
    Status written = file_system_->PutIfAbsent(initial_offset_path_, text);
    if (!written.ok()) return written;
    return text;
  }

  Result<std::string> LatestOffset(const std::string& start_text, const engine::ReadLimit& limit) override {
    SLUICE_ASSIGN_OR_RETURN(PartitionOffsets start, ParseOffset(start_text));
    SLUICE_ASSIGN_OR_RETURN(std::vector<TopicPartition> partitions, DiscoverPartitions());
    std::optional<PartitionOffsets> bound;
    if (limit.not_beyond) {
      SLUICE_ASSIGN_OR_RETURN(bound, ParseOffset(*limit.not_beyond));
    }
    // Partitions that vanished from the cluster keep their position.
    PartitionOffsets end = start;
    std::vector<std::pair<TopicPartition, int64_t>> available;  // (partition, records to read)
    SLUICE_ASSIGN_OR_RETURN(WatermarkMap all_marks, QueryWatermarks(partitions));
    for (const TopicPartition& partition : partitions) {
      auto known = start.find(partition);
      const bool is_new = known == start.end();
      const Watermarks& marks = all_marks.at(partition);
      // A new partition starts at its earliest offset; it enters the offsets once it has records.
      int64_t from = is_new ? 0 : known->second;
      if (is_new && marks.high <= marks.low) continue;
      int64_t until = marks.high;
      if (until < from) {
        SLUICE_RETURN_IF_ERROR(
            DataLoss(partition, until, from, "the partition now ends before the position already read"));
        from = until;
      }
      if (bound) {
        auto limit_offset = bound->find(partition);
        until = limit_offset == bound->end() ? from : std::min(until, std::max(limit_offset->second, from));
      }
      if (until <= from) {
        if (!is_new) end[partition] = from;
        continue;
      }
      end[partition] = from;
      available.emplace_back(partition, until - from);
    }
    int64_t total = 0;
    for (const auto& [partition, count] : available) total += count;
    if (!limit.all_available && config_.max_offsets_per_trigger && total > *config_.max_offsets_per_trigger) {
      SpreadLimit(*config_.max_offsets_per_trigger, total, &available);
    }
    for (const auto& [partition, count] : available) end[partition] += count;
    return FormatPartitionOffsets(end);
  }

  Result<std::vector<BatchPtr>> Read(const std::string& start_text, const std::string& end_text) override {
    return engine::CollectPieces(
        [&](const engine::PieceConsumer& consume) { return ReadPieces(start_text, end_text, consume); });
  }

  Status ReadPieces(const std::string& start_text, const std::string& end_text,
                    const engine::PieceConsumer& consume) override {
    SLUICE_ASSIGN_OR_RETURN(PartitionOffsets start, ParseOffset(start_text));
    SLUICE_ASSIGN_OR_RETURN(PartitionOffsets end, ParseOffset(end_text));
    // The range to read per partition, after data-loss checks.
    std::map<TopicPartition, std::pair<int64_t, int64_t>> ranges;
    int64_t rows = 0;
    bool caught_up = true;
    std::vector<TopicPartition> to_read;
    for (const auto& [partition, until] : end) {
      auto known = start.find(partition);
      if (until > (known == start.end() ? 0 : known->second)) to_read.push_back(partition);
    }
    SLUICE_ASSIGN_OR_RETURN(WatermarkMap all_marks, QueryWatermarks(to_read));
    for (const TopicPartition& partition : to_read) {
      const int64_t until = end.at(partition);
      auto known = start.find(partition);
      int64_t from = known == start.end() ? 0 : known->second;
      const Watermarks& marks = all_marks.at(partition);
      if (from < marks.low) {
        SLUICE_RETURN_IF_ERROR(DataLoss(partition, from, std::min(marks.low, until), "retention or deletion removed them"));
        from = marks.low;
      }
      int64_t readable = std::min(until, marks.high);
      if (readable < until) {
        SLUICE_RETURN_IF_ERROR(
            DataLoss(partition, std::max(readable, from), until, "the partition now ends before them"));
      }
      if (readable <= from) continue;
      if (readable < marks.high) caught_up = false;
      ranges[partition] = {from, readable};
      rows += readable - from;
    }
    if (ranges.empty()) return Status::OK();
    return Consume(ranges, rows, caught_up, consume);
  }

  Status Commit(const std::string&) override { return Status::OK(); }

 private:
  Result<PartitionOffsets> ParseOffset(const std::string& text) const {
    return ParsePartitionOffsets(text, "kafka source offset", 0, errors::kSourceOffsetInvalid);
  }

  // The partitions of the subscription as the cluster knows them now.
  Result<std::vector<TopicPartition>> DiscoverPartitions() {
    if (!config_.assigned.empty()) return config_.assigned;
    const rd_kafka_metadata_t* metadata = nullptr;
    rd_kafka_resp_err_t err =
        WithinTimeout([&](int wait_ms) { return rd_kafka_metadata(client_.get(), 1, nullptr, &metadata, wait_ms); });
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return RequestFailure(fmt::format("cannot read the topic list from {}: {}", BootstrapServers(),
                                        rd_kafka_err2str(err)));
    }
    std::unique_ptr<const rd_kafka_metadata_t, decltype(&rd_kafka_metadata_destroy)> owned(metadata,
                                                                                          &rd_kafka_metadata_destroy);
    std::vector<TopicPartition> partitions;
    for (int t = 0; t < metadata->topic_cnt; ++t) {
      const rd_kafka_metadata_topic_t& topic = metadata->topics[t];
      if (topic.err != RD_KAFKA_RESP_ERR_NO_ERROR || !Subscribed(topic.topic)) continue;
      for (int p = 0; p < topic.partition_cnt; ++p) {
        partitions.push_back(TopicPartition{topic.topic, topic.partitions[p].id});
      }
    }
    std::sort(partitions.begin(), partitions.end());
    return partitions;
  }

  bool Subscribed(std::string_view topic) const {
    if (config_.pattern) {
      return !topic.starts_with("__") && std::regex_match(topic.begin(), topic.end(), *config_.pattern);
    }
    return std::find(config_.topics.begin(), config_.topics.end(), topic) != config_.topics.end();
  }

  Result<Watermarks> QueryWatermarks(const TopicPartition& partition) {
    Watermarks marks;
    rd_kafka_resp_err_t err = WithinTimeout([&](int wait_ms) {
      return rd_kafka_query_watermark_offsets(client_.get(), partition.topic.c_str(), partition.partition, &marks.low,
                                              &marks.high, wait_ms);
    });
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return RequestFailure(fmt::format("cannot read the offsets of {}[{}]: {}", partition.topic, partition.partition,
                                        rd_kafka_err2str(err)));
    }
    return marks;
  }

  // The watermarks of all `partitions`: the earliest and the latest offsets of every partition are
  // each asked in one request per leader broker (ListOffsets with the special timestamps), not in
  // two per partition. A partition the batched request could not answer is asked on its own, so
  // its error reads as before.
  Result<WatermarkMap> QueryWatermarks(const std::vector<TopicPartition>& partitions) {
    WatermarkMap marks;
    if (partitions.empty()) return marks;
    auto query = [&](int64_t special) {
      PartitionListPtr list(rd_kafka_topic_partition_list_new(static_cast<int>(partitions.size())),
                            &rd_kafka_topic_partition_list_destroy);
      for (const TopicPartition& partition : partitions) {
        rd_kafka_topic_partition_list_add(list.get(), partition.topic.c_str(), partition.partition)->offset = special;
      }
      rd_kafka_resp_err_t err =
          WithinTimeout([&](int wait_ms) { return rd_kafka_offsets_for_times(client_.get(), list.get(), wait_ms); });
      return std::pair{err, std::move(list)};
    };
    auto [high_err, highs] = query(RD_KAFKA_OFFSET_END);
    if (Passing(high_err)) {
      // The whole request_timeout passed without an answer: asking again, partition by
      // partition, would only wait as long once more for each.
      return RequestFailure(fmt::format("cannot read the offsets of {}[{}]: {}", partitions.front().topic,
                                        partitions.front().partition, rd_kafka_err2str(high_err)));
    }
    auto [low_err, lows] = high_err == RD_KAFKA_RESP_ERR_NO_ERROR
                               ? query(RD_KAFKA_OFFSET_BEGINNING)
                               : std::pair{high_err, PartitionListPtr(nullptr, &rd_kafka_topic_partition_list_destroy)};
    std::map<TopicPartition, int64_t> high_of;
    if (high_err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      for (int i = 0; i < highs->cnt; ++i) {
        const rd_kafka_topic_partition_t& part = highs->elems[i];
        if (part.err == RD_KAFKA_RESP_ERR_NO_ERROR && part.offset >= 0) {
          high_of[TopicPartition{part.topic, part.partition}] = part.offset;
        }
      }
    }
    if (low_err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      for (int i = 0; i < lows->cnt; ++i) {
        const rd_kafka_topic_partition_t& part = lows->elems[i];
        if (part.err != RD_KAFKA_RESP_ERR_NO_ERROR || part.offset < 0) continue;
        TopicPartition partition{part.topic, part.partition};
        auto high = high_of.find(partition);
        if (high != high_of.end()) marks[partition] = Watermarks{part.offset, high->second};
      }
    }
    for (const TopicPartition& partition : partitions) {
      if (marks.count(partition)) continue;
      SLUICE_ASSIGN_OR_RETURN(marks[partition], QueryWatermarks(partition));
    }
    return marks;
  }

  // Offsets [from, until) of `partition` cannot be read.
  Status DataLoss(const TopicPartition& partition, int64_t from, int64_t until, std::string_view why) {
    std::string message = fmt::format("offsets [{}, {}) of topic {} partition {} are no longer available ({})", from,
                                      until, partition.topic, partition.partition, why);
    if (config_.fail_on_data_loss) {
      return Status::Error(errors::kKafkaDataLoss,
                           message + "; set fail_on_data_loss to false to skip them, or start a new checkpoint");
    }
    LogWarn("kafka source: {}; skipping them (fail_on_data_loss is false)", message);
    return Status::OK();
  }

  // Cuts `available` to `limit` records in all, in proportion to what each partition has; the
  // remainder of the rounding goes to the first partitions, so exactly `limit` are planned.
  static void SpreadLimit(int64_t limit, int64_t total, std::vector<std::pair<TopicPartition, int64_t>>* available) {
    int64_t planned = 0;
    std::vector<int64_t> wanted;
    for (auto& [partition, count] : *available) {
      int64_t share = static_cast<int64_t>(static_cast<int128_t>(limit) * count / total);
      wanted.push_back(count);
      count = share;
      planned += share;
    }
    for (size_t i = 0; planned < limit && i < available->size(); ++i) {
      int64_t extra = std::min(limit - planned, wanted[i] - (*available)[i].second);
      (*available)[i].second += extra;
      planned += extra;
    }
  }

  // Reads `ranges` (partition -> [from, until)). The partitions stay assigned after the batch
  // when it left records behind (`caught_up` false): the next batch normally starts where this one
  // ended, and then finds them prefetched instead of fetching them again after a new assignment.
  // A caught-up source unassigns, so that an idle query does not poll the brokers.
  Status Consume(const std::map<TopicPartition, std::pair<int64_t, int64_t>>& ranges, int64_t rows, bool caught_up,
                 const engine::PieceConsumer& consume) {
    std::map<TopicPartition, int64_t> starts;
    for (const auto& [partition, range] : ranges) starts[partition] = range.first;
    if (starts != kept_) {
      Unassign();
      PartitionListPtr assignment(rd_kafka_topic_partition_list_new(static_cast<int>(ranges.size())),
                                  &rd_kafka_topic_partition_list_destroy);
      for (const auto& [partition, from] : starts) {
        rd_kafka_topic_partition_list_add(assignment.get(), partition.topic.c_str(), partition.partition)->offset =
            from;
      }
      rd_kafka_resp_err_t err = rd_kafka_assign(client_.get(), assignment.get());
      if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        return RequestFailed(fmt::format("cannot assign partitions: {}", rd_kafka_err2str(err)));
      }
    }
    kept_.clear();
    Status read = ConsumeAssigned(ranges, rows, consume);
    if (!read.ok() || caught_up || held_bytes_ > kMaxHeldBytes) {
      Unassign();
      return read;
    }
    for (const auto& [partition, range] : ranges) kept_[partition] = range.second;
    return Status::OK();
  }

  void Unassign() {
    held_.clear();
    held_bytes_ = 0;
    kept_.clear();
    rd_kafka_assign(client_.get(), nullptr);
  }

  // Hands the records of `ranges` (`rows` of them at most) to `consume` in pieces of at most
  // kPieceRows.
  Status ConsumeAssigned(const std::map<TopicPartition, std::pair<int64_t, int64_t>>& ranges, int64_t rows,
                         const engine::PieceConsumer& consume) {
    // Partitions not yet read to their end, with the topic name as it goes into the rows.
    std::map<std::pair<std::string_view, int32_t>, int64_t> pending;
    for (const auto& [partition, range] : ranges) pending[{partition.topic, partition.partition}] = range.second;
    std::optional<RowBuilder> builder;
    int64_t handed_rows = 0;  // in the pieces already handed over
    bool bytes_reserved = false;
    auto start_piece = [&] {
      builder.emplace(schema_);
      builder->Reserve(std::min(rows - handed_rows, kPieceRows));
      bytes_reserved = false;
    };
    auto hand_over = [&]() -> Status {
      handed_rows += builder->rows();
      SLUICE_ASSIGN_OR_RETURN(BatchPtr piece, builder->Finish());
      return consume(std::move(piece));
    };
    start_piece();
    // Messages arrive in runs of one partition: the last lookup is reused while it lasts.
    auto last = pending.end();
    // Takes the next record of the consumer's stream. One beyond its partition's range is held
    // for the next batch, in stream order, unless too much is held already.
    auto take = [&](const Record& record) {
      if (last == pending.end() || last->first.second != record.partition || last->first.first != record.topic) {
        last = pending.find({record.topic, record.partition});
      }
      if (last != pending.end()) {
        // At the end of the partition, the record's offset is the next one to be written:
        // offsets up to it that were not seen are gaps (compaction, transaction markers).
        if (record.offset < last->second) {
          if (record.eof) return;
          builder->Append(record);
          if (record.offset + 1 >= last->second) {
            pending.erase(last);
            last = pending.end();
          }
          return;
        }
        pending.erase(last);
        last = pending.end();
      }
      if (held_bytes_ > kMaxHeldBytes) return;
      held_.emplace_back(record);
      held_bytes_ += held_.back().bytes();
    };
    std::vector<HeldRecord> replay = std::move(held_);
    held_.clear();
    held_bytes_ = 0;
    for (const HeldRecord& record : replay) take(record.view());
    replay.clear();

    using Clock = std::chrono::steady_clock;
    // The deadline moves with progress: a slow but steady read never times out.
    auto deadline = Clock::now() + std::chrono::milliseconds(config_.timeout_ms);
    // Messages are taken from the consumer queue many at a time: one lock and wake-up per call
    // instead of per message, and one clock read per call.
    std::unique_ptr<rd_kafka_queue_t, decltype(&rd_kafka_queue_destroy)> queue(
        rd_kafka_queue_get_consumer(client_.get()), &rd_kafka_queue_destroy);
    constexpr size_t kMessagesPerCall = 4096;
    std::vector<rd_kafka_message_t*> messages(kMessagesPerCall);
    while (!pending.empty()) {
      if (Clock::now() >= deadline) {
        return RequestFailure(fmt::format("reading {} partitions from {} made no progress within {} ms",
                                          pending.size(), BootstrapServers(), config_.timeout_ms));
      }
      // The call waits until it has as many messages as asked for (or the timeout): asking for no
      // more than the range still holds returns as soon as the range is read, instead of idling a
      // whole timeout at the end of every batch (the real_time trigger reads small ranges often).
      const int64_t taken = handed_rows + builder->rows();
      const size_t wanted = static_cast<size_t>(std::clamp<int64_t>(rows - taken, 1, static_cast<int64_t>(kMessagesPerCall)));
      ssize_t count = rd_kafka_consume_batch_queue(queue.get(), 10, messages.data(), wanted);
      if (count < 0) return RequestFailure(fmt::format("reading from {} failed", BootstrapServers()));
      if (count == 0) {
        rd_kafka_poll(client_.get(), 0);
        if (events_->AuthenticationFailure()) return RequestFailure("");
      } else {
        events_->ClearAuthenticationFailure();
      }
      Status failure = Status::OK();
      const size_t pending_before = pending.size();
      for (ssize_t i = 0; i < count; ++i) {
        MessagePtr message(messages[i], &rd_kafka_message_destroy);
        // After a failure the rest of the call's messages are only released.
        if (!failure.ok()) continue;
        if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR && message->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
          failure = RequestFailed(
              fmt::format("reading from {} failed: {}", BootstrapServers(), rd_kafka_message_errstr(message.get())));
          continue;
        }
        if (message->rkt != nullptr) take(RecordOf(message.get()));
      }
      SLUICE_RETURN_IF_ERROR(failure);
      if (!bytes_reserved && builder->rows() > 0) {
        builder->ReserveBytesLikeSoFar(std::max<int64_t>(0, std::min(rows - handed_rows, kPieceRows) - builder->rows()));
        bytes_reserved = true;
      }
      if (handed_rows + builder->rows() > taken || pending.size() < pending_before) {
        deadline = Clock::now() + std::chrono::milliseconds(config_.timeout_ms);
      }
      // A piece may overshoot kPieceRows by the rest of one call's messages.
      if (builder->rows() >= kPieceRows && !pending.empty()) {
        SLUICE_RETURN_IF_ERROR(hand_over());
        start_piece();
      }
    }
    if (builder->rows() > 0) return hand_over();
    return Status::OK();
  }

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
      rd_kafka_poll(client_.get(), 0);
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

  static bool Passing(rd_kafka_resp_err_t err) {
    switch (err) {
      case RD_KAFKA_RESP_ERR__TIMED_OUT:
      case RD_KAFKA_RESP_ERR__TRANSPORT:
      case RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN:
      case RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION:
      case RD_KAFKA_RESP_ERR__WAIT_COORD:
      case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
      case RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE:
      case RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION:
      case RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT:
      case RD_KAFKA_RESP_ERR_BROKER_NOT_AVAILABLE:
      case RD_KAFKA_RESP_ERR_OFFSET_NOT_AVAILABLE:
        return true;
      default:
        return false;
    }
  }

  // KAFKA_AUTHENTICATION_FAILED with librdkafka's reason when the client failed to authenticate
  // (the cause of most timeouts then), else KAFKA_REQUEST_FAILED with `message`.
  Status RequestFailure(std::string message) {
    rd_kafka_poll(client_.get(), 0);
    if (std::optional<std::string> failure = events_->AuthenticationFailure()) {
      return Status::Error(errors::kKafkaAuthenticationFailed,
                           fmt::format("authentication with {} failed: {}", BootstrapServers(), *failure));
    }
    return RequestFailed(std::move(message));
  }

  KafkaSourceConfig config_;
  TypePtr schema_;
  // Declared before the client, which calls into it until destroyed.
  std::unique_ptr<ClientEvents> events_;
  ClientPtr client_;
  std::shared_ptr<FileSystem> file_system_;
  std::string initial_offset_path_;
  // Where each kept partition's next batch must start for the assignment to be reused; empty
  // when nothing is kept.
  std::map<TopicPartition, int64_t> kept_;
  // Records taken from the consumer beyond their partition's range, in stream order.
  std::vector<HeldRecord> held_;
  int64_t held_bytes_ = 0;
};

}  // namespace

Status RegisterKafkaSource(engine::Registry* registry) {
  return registry->RegisterSource(engine::SourceFormat{
      .name = "kafka",
      .options = kOptions,
      .error_class = errors::kInvalidOptions,
      .make = [](const ValidatedOptions& options) -> Result<std::unique_ptr<engine::Source>> {
        SLUICE_ASSIGN_OR_RETURN(KafkaSourceConfig config, MakeConfig(options));
        return std::unique_ptr<engine::Source>(new KafkaSource(std::move(config)));
      },
  });
}

}  // namespace sluice::connectors
