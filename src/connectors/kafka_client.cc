#include "kafka_client.h"

#include <algorithm>
#include <set>

#include <fmt/core.h>
#include <fmt/ranges.h>

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


Status InvalidOptions(std::string message) {
  return Status::Error(errors::kInvalidOptions, "kafka source: " + std::move(message));
}
Status RequestFailed(std::string message) { return Status::Error(errors::kKafkaRequestFailed, std::move(message)); }

std::optional<std::string_view> Bytes(const void* data, size_t size) {
  if (data == nullptr) return std::nullopt;
  return std::string_view(static_cast<const char*>(data), size);
}

}  // namespace

std::span<const OptionSpec> KafkaSourceOptions() { return kOptions; }

namespace {

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

}  // namespace

Result<ConfPtr> BuildConf(const std::vector<KafkaSetting>& settings) {
  ConfPtr conf(rd_kafka_conf_new(), &rd_kafka_conf_destroy);
  char errstr[512];
  for (const KafkaSetting& setting : settings) {
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

namespace {

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

}  // namespace

Result<KafkaSourceConfig> MakeKafkaConfig(const ValidatedOptions& options) {
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
    config.settings.push_back(KafkaSetting{std::move(name), std::move(value), std::move(option), sensitive});
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

int64_t StartingOffset(const KafkaSourceConfig& config, const TopicPartition& partition) {
  auto given = config.starting_partition_offsets.find(partition);
  if (given != config.starting_partition_offsets.end()) return given->second;
  return config.starting_offsets == "earliest" ? kEarliest : kLatest;
}

TypePtr KafkaRowSchema() {
  TypePtr header = DataType::Struct({Field{"key", DataType::String(), false}, Field{"value", DataType::Binary(), true}})
                       .value();
  return DataType::Struct({Field{"key", DataType::Binary(), true}, Field{"value", DataType::Binary(), true},
                           Field{"topic", DataType::String(), false}, Field{"partition", DataType::Integer(), false},
                           Field{"offset", DataType::Long(), false}, Field{"timestamp", DataType::Timestamp(), true},
                           Field{"headers", DataType::Array(header, false), false}})
      .value();
}

KafkaRecord RecordOf(rd_kafka_message_t* message) {
  KafkaRecord record;
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


Result<std::unique_ptr<KafkaClient>> KafkaClient::MakeConsumer(const KafkaSourceConfig& config,
                                                               std::vector<KafkaSetting> more,
                                                               ClientEvents::Rebalance rebalance) {
  std::vector<KafkaSetting> settings = config.settings;
  settings.insert(settings.end(), more.begin(), more.end());
  SLUICE_ASSIGN_OR_RETURN(ConfPtr conf, BuildConf(settings));
  std::unique_ptr<KafkaClient> client(new KafkaClient(config));
  client->events_ = std::make_unique<ClientEvents>(config.oauth, config.timeout_ms);
  client->events_->Install(conf.get(), std::move(rebalance));
  char errstr[512];
  client->client_ = rd_kafka_new(RD_KAFKA_CONSUMER, conf.get(), errstr, sizeof(errstr));
  if (client->client_ == nullptr) return RequestFailed(fmt::format("cannot create a Kafka client: {}", errstr));
  conf.release();  // rd_kafka_new took it
  SLUICE_RETURN_IF_ERROR(client->events_->Started(client->client_));
  return client;
}

KafkaClient::~KafkaClient() {
  if (client_ == nullptr) return;
  rd_kafka_consumer_close(client_);
  rd_kafka_destroy(client_);
}

bool KafkaClient::Passing(rd_kafka_resp_err_t err) {
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

Status KafkaClient::RequestFailure(std::string message) {
  rd_kafka_poll(client_, 0);
  if (std::optional<std::string> failure = events_->AuthenticationFailure()) {
    return Status::Error(errors::kKafkaAuthenticationFailed,
                         fmt::format("authentication with {} failed: {}", BootstrapServers(), *failure));
  }
  return RequestFailed(std::move(message));
}

Result<Watermarks> KafkaClient::QueryWatermarks(const TopicPartition& partition) {
  Watermarks marks;
  rd_kafka_resp_err_t err = WithinTimeout([&](int wait_ms) {
    return rd_kafka_query_watermark_offsets(client_, partition.topic.c_str(), partition.partition, &marks.low,
                                            &marks.high, wait_ms);
  });
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return RequestFailure(fmt::format("cannot read the offsets of {}[{}]: {}", partition.topic, partition.partition,
                                      rd_kafka_err2str(err)));
  }
  return marks;
}

Result<WatermarkMap> KafkaClient::QueryWatermarks(const std::vector<TopicPartition>& partitions) {
  WatermarkMap marks;
  if (partitions.empty()) return marks;
  auto query = [&](int64_t special) {
    PartitionListPtr list(rd_kafka_topic_partition_list_new(static_cast<int>(partitions.size())),
                          &rd_kafka_topic_partition_list_destroy);
    for (const TopicPartition& partition : partitions) {
      rd_kafka_topic_partition_list_add(list.get(), partition.topic.c_str(), partition.partition)->offset = special;
    }
    rd_kafka_resp_err_t err =
        WithinTimeout([&](int wait_ms) { return rd_kafka_offsets_for_times(client_, list.get(), wait_ms); });
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

Status KafkaClient::DataLoss(const TopicPartition& partition, int64_t from, int64_t until, std::string_view why) {
  std::string message = fmt::format("offsets [{}, {}) of topic {} partition {} are no longer available ({})", from,
                                    until, partition.topic, partition.partition, why);
  if (config_.fail_on_data_loss) {
    return Status::Error(errors::kKafkaDataLoss,
                         message + "; set fail_on_data_loss to false to skip them, or start a new checkpoint");
  }
  LogWarn("kafka source: {}; skipping them (fail_on_data_loss is false)", message);
  return Status::OK();
}

Status KafkaClient::PartitionGone(const TopicPartition& partition, int64_t position) {
  std::string message = fmt::format(
      "topic {} partition {} is gone (the topic was deleted): records after offset {} not read before may be lost",
      partition.topic, partition.partition, position);
  if (config_.fail_on_data_loss) {
    return Status::Error(errors::kKafkaDataLoss,
                         message + "; set fail_on_data_loss to false to go on (a topic made again under that "
                                   "name is then read from its start), or start a new checkpoint");
  }
  LogWarn("kafka source: {}; going on without it (fail_on_data_loss is false)", message);
  return Status::OK();
}

}  // namespace sluice::connectors
