// The Kafka source against a real Apache Kafka broker (testing/kafka_broker.h): every
// authentication mechanism and security protocol users configure, wrong credentials, transactions
// (aborted records, control records, offsets with gaps), records deleted before they were read,
// and a broker restart in the middle of a stream.
#include <librdkafka/rdkafka.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "sluice/connectors/embedded_kafka.h"
#include "sluice/connectors/register_formats.h"
#include "sluice/core/clock.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/file_system.h"
#include "sluice/engine/source.h"
#include "testing/kafka_broker.h"
#include "testing/temp_dir.h"

namespace sluice::connectors {
namespace {

using sluice::testing::KafkaBroker;
using Listener = KafkaBroker::Listener;
using Options = std::map<std::string, std::string>;

KafkaBroker& Broker(const std::string& version = KafkaBroker::kVersion4) {
  auto broker = sluice::testing::SharedKafkaBroker(version);
  if (!broker.ok()) {
    ADD_FAILURE() << broker.status().ToString();
    std::abort();
  }
  return **broker;
}

std::string NewTopic(int partitions = 1, const std::string& version = KafkaBroker::kVersion4) {
  auto topic = sluice::testing::CreateBrokerTopic(partitions, {}, version);
  EXPECT_TRUE(topic.ok()) << topic.status().ToString();
  return topic.value_or("");
}

std::vector<std::string> Values(const std::string& prefix, int from, int to) {
  std::vector<std::string> values;
  for (int i = from; i < to; ++i) values.push_back(fmt::format("{}-{}", prefix, i));
  return values;
}

void Produce(const std::string& topic, const std::vector<std::string>& values, int32_t partition = 0,
             const std::string& version = KafkaBroker::kVersion4) {
  std::vector<KafkaTestMessage> messages;
  for (const std::string& value : values) {
    KafkaTestMessage message;
    message.value = value;
    message.partition = partition;
    messages.push_back(std::move(message));
  }
  Status produced = ProduceMessages(Broker(version).bootstrap_servers(Listener::kPlaintext), topic, messages);
  ASSERT_TRUE(produced.ok()) << produced.ToString();
}

// Secrets reach the source only as references: each value goes into a variable of its own.
std::string SecretReference(const std::string& name, const std::string& value) {
  static int next = 0;
  const std::string variable = fmt::format("{}_{}", name, next++);
  ::setenv(variable.c_str(), value.c_str(), 1);
  return "${env:" + variable + "}";
}

// A source opened as a query opens it, reading from the earliest offsets.
class OpenSource {
 public:
  static Result<std::unique_ptr<OpenSource>> Make(Options options) {
    options.emplace("starting_offsets", "earliest");
    std::unique_ptr<OpenSource> open(new OpenSource);
    SLUICE_ASSIGN_OR_RETURN(open->source_, AllFormatsRegistry().MakeSource("kafka", options));
    engine::SourceContext context{"kafka-broker-test", LocalFileSystem(), open->dir_.path(), SystemClock()};
    SLUICE_RETURN_IF_ERROR(open->source_->Open(context));
    SLUICE_ASSIGN_OR_RETURN(open->position_, open->source_->InitialOffset());
    return open;
  }

  // Plans and reads batches until nothing new is available: the values read, in order.
  Result<std::vector<std::string>> ReadAll(engine::ReadLimit limit = {}) {
    std::vector<std::string> values;
    while (true) {
      SLUICE_ASSIGN_OR_RETURN(std::string end, source_->LatestOffset(position_, limit));
      if (end == position_) return values;
      SLUICE_ASSIGN_OR_RETURN(std::vector<BatchPtr> batches, source_->Read(position_, end));
      for (const BatchPtr& batch : batches) {
        for (int64_t row = 0; row < batch->num_rows(); ++row) {
          values.emplace_back(batch->column(1)->IsValid(row) ? batch->column(1)->View(row) : "<null>");
        }
      }
      position_ = end;
      ++batches_;
    }
  }
  const std::string& position() const { return position_; }
  int batches() const { return batches_; }

 private:
  OpenSource() = default;
  sluice::testing::TempDir dir_{"kafka-broker-source"};
  std::unique_ptr<engine::Source> source_;
  std::string position_;
  int batches_ = 0;
};

// One way users connect: the broker version, the listener and the source options beyond
// `bootstrap_servers`.
struct Connection {
  std::string name;
  std::string version;
  Listener listener;
  std::function<Options(KafkaBroker&)> options;
};

Options Sasl(KafkaBroker& broker, const std::string& mechanism) {
  const KafkaBroker::User& user = broker.user(mechanism);
  return {{"sasl_mechanism", mechanism},
          {"user", user.name},
          {"password", SecretReference("SLUICE_TEST_SASL_PASSWORD", user.password)}};
}

Options OAuth(KafkaBroker& broker, const std::string& secret) {
  return {{"sasl_mechanism", "OAUTHBEARER"},
          {"sasl_oauthbearer_token_endpoint_url", broker.token_endpoint().url()},
          {"sasl_oauthbearer_client_id", broker.oauth_client().id},
          {"sasl_oauthbearer_client_secret", SecretReference("SLUICE_TEST_OAUTH_SECRET", secret)},
          {"sasl_oauthbearer_scope", "kafka.read streams"}};
}

Options WithTls(Options options, const KafkaBroker& broker) {
  options["ssl_ca_location"] = broker.client_tls().ca;
  return options;
}

const std::vector<Connection>& Connections() {
  constexpr const char* k4 = KafkaBroker::kVersion4;
  // librdkafka before 2.6.1 (Debian 12 has 2.0.2) cannot do SCRAM with Kafka 4.x brokers (see
  // ScramWithKafka4NeedsANewerClientLibrary): the SCRAM cases run on the 3.x broker.
  constexpr const char* k3 = KafkaBroker::kVersion3;
  static const std::vector<Connection> connections = {
      {"SaslPlain", k4, Listener::kSasl, [](KafkaBroker& b) { return Sasl(b, "PLAIN"); }},
      {"OAuthBearer", k4, Listener::kSasl, [](KafkaBroker& b) { return OAuth(b, b.oauth_client().secret); }},
      {"SaslSslPlain", k4, Listener::kSaslSsl, [](KafkaBroker& b) { return WithTls(Sasl(b, "PLAIN"), b); }},
      {"MutualTlsPem", k4, Listener::kSsl,
       [](KafkaBroker& b) {
         return WithTls({{"ssl_certificate_location", b.client_tls().certificate},
                         {"ssl_key_location", b.client_tls().key}},
                        b);
       }},
      {"MutualTlsEncryptedKey", k4, Listener::kSsl,
       [](KafkaBroker& b) {
         return WithTls({{"ssl_certificate_location", b.client_tls().certificate},
                         {"ssl_key_location", b.client_tls().encrypted_key},
                         {"ssl_key_password", SecretReference("SLUICE_TEST_KEY_PASSWORD", b.client_tls().key_password)}},
                        b);
       }},
      {"MutualTlsPkcs12", k4, Listener::kSsl,
       [](KafkaBroker& b) {
         return WithTls({{"ssl_keystore_location", b.client_tls().pkcs12},
                         {"ssl_keystore_password",
                          SecretReference("SLUICE_TEST_KEYSTORE_PASSWORD", b.client_tls().pkcs12_password)}},
                        b);
       }},
      {"Kafka3SaslScramSha256", k3, Listener::kSasl, [](KafkaBroker& b) { return Sasl(b, "SCRAM-SHA-256"); }},
      {"Kafka3SaslScramSha512", k3, Listener::kSasl, [](KafkaBroker& b) { return Sasl(b, "SCRAM-SHA-512"); }},
      {"Kafka3SaslSslScramSha256", k3, Listener::kSaslSsl,
       [](KafkaBroker& b) { return WithTls(Sasl(b, "SCRAM-SHA-256"), b); }},
      {"Kafka3SaslSslScramSha512", k3, Listener::kSaslSsl,
       [](KafkaBroker& b) { return WithTls(Sasl(b, "SCRAM-SHA-512"), b); }},
      {"Kafka3OAuthBearer", k3, Listener::kSasl, [](KafkaBroker& b) { return OAuth(b, b.oauth_client().secret); }},
      {"Kafka3MutualTlsPem", k3, Listener::kSsl,
       [](KafkaBroker& b) {
         return WithTls({{"ssl_certificate_location", b.client_tls().certificate},
                         {"ssl_key_location", b.client_tls().key}},
                        b);
       }},
  };
  return connections;
}

class KafkaBrokerAuthenticationTest : public ::testing::TestWithParam<Connection> {};

TEST_P(KafkaBrokerAuthenticationTest, ReadsEveryRecord) {
  const std::string& version = GetParam().version;
  KafkaBroker& broker = Broker(version);
  const std::string topic = NewTopic(2, version);
  Produce(topic, Values("p0", 0, 30), 0, version);
  Produce(topic, Values("p1", 0, 20), 1, version);
  Options options = GetParam().options(broker);
  options["bootstrap_servers"] = broker.bootstrap_servers(GetParam().listener);
  options["subscribe"] = topic;
  auto source = OpenSource::Make(options);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  auto values = (*source)->ReadAll();
  ASSERT_TRUE(values.ok()) << values.status().ToString();
  std::vector<std::string> sorted = *values;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::string> expected = Values("p0", 0, 30);
  for (const std::string& value : Values("p1", 0, 20)) expected.push_back(value);
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(sorted, expected);
  EXPECT_EQ((*source)->position(), fmt::format(R"({{"{}":{{"0":30,"1":20}}}})", topic));
}

INSTANTIATE_TEST_SUITE_P(EveryMechanismAndProtocol, KafkaBrokerAuthenticationTest, ::testing::ValuesIn(Connections()),
                         [](const ::testing::TestParamInfo<Connection>& info) { return info.param.name; });

// librdkafka before 2.6.1 sends a SCRAM proof that Kafka 4.x brokers, which check the nonce as RFC
// 5802 says, refuse as invalid credentials (librdkafka issue 4895): the error says so, so that
// nobody hunts for a wrong password. With a newer librdkafka, SCRAM with Kafka 4.x works.
TEST(KafkaBrokerTest, ScramWithKafka4NeedsANewerClientLibrary) {
  KafkaBroker& broker = Broker();
  const std::string topic = NewTopic();
  Produce(topic, Values("v", 0, 5));
  for (const char* mechanism : {"SCRAM-SHA-256", "SCRAM-SHA-512"}) {
    SCOPED_TRACE(mechanism);
    Options options = Sasl(broker, mechanism);
    options["bootstrap_servers"] = broker.bootstrap_servers(Listener::kSasl);
    options["subscribe"] = topic;
    auto source = OpenSource::Make(options);
    Result<std::vector<std::string>> values = source.ok() ? (*source)->ReadAll() : source.status();
    if (rd_kafka_version() < 0x020601ff) {
      EXPECT_EQ(values.status().error_class(), errors::kKafkaAuthenticationFailed) << values.status().ToString();
      EXPECT_NE(values.status().message().find("librdkafka 2.6.1"), std::string_view::npos)
          << values.status().ToString();
    } else {
      ASSERT_TRUE(values.ok()) << values.status().ToString();
      EXPECT_EQ(*values, Values("v", 0, 5));
    }
  }
}

// Wrong credentials of every kind end the read with KAFKA_AUTHENTICATION_FAILED and the broker's
// or the provider's reason, well before the request timeout, and the message holds no secret.
TEST(KafkaBrokerTest, WrongCredentialsFailFastWithAnAuthenticationError) {
  KafkaBroker& broker = Broker();
  KafkaBroker& broker3 = Broker(KafkaBroker::kVersion3);
  const std::string wrong = "not-the-password-7f3a";
  struct Case {
    std::string name;
    Listener listener;
    Options options;
    std::string reason;  // a part of the expected message
    std::string version = KafkaBroker::kVersion4;
  };
  const auto& tls = broker.client_tls();
  std::vector<Case> cases = {
      {"wrong PLAIN password", Listener::kSasl,
       {{"sasl_mechanism", "PLAIN"}, {"user", "alice"}, {"password", SecretReference("SLUICE_TEST_WRONG", wrong)}},
       "Authentication failed"},
      {"wrong SCRAM-SHA-256 password", Listener::kSasl,
       {{"sasl_mechanism", "SCRAM-SHA-256"}, {"user", "bob"}, {"password", SecretReference("SLUICE_TEST_WRONG", wrong)}},
       "Authentication failed", KafkaBroker::kVersion3},
      {"unknown SCRAM-SHA-512 user", Listener::kSasl,
       {{"sasl_mechanism", "SCRAM-SHA-512"}, {"user", "mallory"}, {"password", SecretReference("SLUICE_TEST_WRONG", wrong)}},
       "Authentication failed", KafkaBroker::kVersion3},
      {"a mechanism the listener lacks", Listener::kSaslSsl,
       WithTls(OAuth(broker, broker.oauth_client().secret), broker), "Unsupported SASL mechanism"},
      {"wrong OAuth client secret", Listener::kSasl, OAuth(broker, wrong), "HTTP 401"},
      {"no client certificate", Listener::kSsl, WithTls({}, broker), "SSL"},
      {"a client certificate of another CA", Listener::kSsl,
       WithTls({{"ssl_certificate_location", tls.untrusted_certificate}, {"ssl_key_location", tls.untrusted_key}},
               broker),
       "SSL"},
      {"a broker certificate the client does not trust", Listener::kSaslSsl,
       Options{{"ssl_ca_location", tls.untrusted_certificate}, {"sasl_mechanism", "PLAIN"}, {"user", "alice"},
               {"password", SecretReference("SLUICE_TEST_SASL_PASSWORD", "alice-secret")}},
       "certificate verify failed"},
  };
  const std::map<std::string, std::string> topics = {{KafkaBroker::kVersion4, NewTopic()},
                                                     {KafkaBroker::kVersion3, NewTopic(1, KafkaBroker::kVersion3)}};
  for (Case& c : cases) {
    SCOPED_TRACE(c.name);
    c.options["bootstrap_servers"] =
        (c.version == KafkaBroker::kVersion3 ? broker3 : broker).bootstrap_servers(c.listener);
    c.options["subscribe"] = topics.at(c.version);
    c.options["request_timeout"] = "60s";
    const auto started = std::chrono::steady_clock::now();
    auto source = OpenSource::Make(c.options);
    Status failure = source.ok() ? (*source)->ReadAll().status() : source.status();
    const auto waited = std::chrono::steady_clock::now() - started;
    EXPECT_EQ(failure.error_class(), errors::kKafkaAuthenticationFailed) << failure.ToString();
    EXPECT_NE(failure.message().find(c.reason), std::string_view::npos) << failure.ToString();
    EXPECT_EQ(failure.message().find(wrong), std::string_view::npos) << failure.ToString();
    EXPECT_EQ(failure.message().find(broker.oauth_client().secret), std::string_view::npos) << failure.ToString();
    EXPECT_LT(waited, std::chrono::seconds(30)) << failure.ToString();
  }
}

// The source asks the token endpoint with the client credentials grant and the configured scope,
// and asks again before a token expires: records produced after the first token's lifetime are
// read over the same client.
TEST(KafkaBrokerTest, OAuthTokensComeFromTheEndpointAndAreRefreshedBeforeTheyExpire) {
  KafkaBroker& broker = Broker();
  auto& endpoint = broker.token_endpoint();
  endpoint.SetTokenLifetime(std::chrono::seconds(4));
  const size_t asked_before = endpoint.requests().size();
  const std::string topic = NewTopic();
  Produce(topic, Values("early", 0, 10));
  Options options = OAuth(broker, broker.oauth_client().secret);
  options["bootstrap_servers"] = broker.bootstrap_servers(Listener::kSasl);
  options["subscribe"] = topic;
  auto source = OpenSource::Make(options);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  auto early = (*source)->ReadAll();
  ASSERT_TRUE(early.ok()) << early.status().ToString();
  EXPECT_EQ(*early, Values("early", 0, 10));
  std::this_thread::sleep_for(std::chrono::seconds(9));
  Produce(topic, Values("late", 0, 10));
  auto late = (*source)->ReadAll();
  endpoint.SetTokenLifetime(std::chrono::hours(1));
  ASSERT_TRUE(late.ok()) << late.status().ToString();
  EXPECT_EQ(*late, Values("late", 0, 10));

  std::vector<sluice::testing::OidcTokenEndpoint::Request> asked = endpoint.requests();
  asked.erase(asked.begin(), asked.begin() + static_cast<std::ptrdiff_t>(asked_before));
  // One token at the start, then one at about 80% of each 4 s lifetime.
  EXPECT_GE(asked.size(), 3u);
  for (const auto& request : asked) {
    EXPECT_EQ(request.grant_type, "client_credentials");
    EXPECT_EQ(request.client_id, broker.oauth_client().id);
    EXPECT_EQ(request.scope, "kafka.read streams");
    EXPECT_TRUE(request.authenticated);
  }
}

// A provider that is down when the first token is needed: an authentication error naming it.
TEST(KafkaBrokerTest, ATokenEndpointThatIsDownFailsTheReadWithItsAnswer) {
  KafkaBroker& broker = Broker();
  const std::string topic = NewTopic();
  Produce(topic, {"unread"});
  broker.token_endpoint().SetUnavailable(true);
  Options options = OAuth(broker, broker.oauth_client().secret);
  options["bootstrap_servers"] = broker.bootstrap_servers(Listener::kSasl);
  options["subscribe"] = topic;
  auto source = OpenSource::Make(options);
  Status failure = source.ok() ? (*source)->ReadAll().status() : source.status();
  broker.token_endpoint().SetUnavailable(false);
  EXPECT_EQ(failure.error_class(), errors::kKafkaAuthenticationFailed) << failure.ToString();
  EXPECT_NE(failure.message().find("HTTP 503"), std::string_view::npos) << failure.ToString();
}

// A transactional producer on the real broker: three transactions, the middle one aborted.
void ProduceTransactions(const std::string& topic, const std::vector<std::pair<std::vector<std::string>, bool>>& txns) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char errstr[512];
  const std::string servers = Broker().bootstrap_servers(Listener::kPlaintext);
  const std::string id = "sluice-test-txn-" + topic;
  ASSERT_EQ(rd_kafka_conf_set(conf, "bootstrap.servers", servers.c_str(), errstr, sizeof(errstr)), RD_KAFKA_CONF_OK);
  ASSERT_EQ(rd_kafka_conf_set(conf, "transactional.id", id.c_str(), errstr, sizeof(errstr)), RD_KAFKA_CONF_OK);
  rd_kafka_t* producer = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
  ASSERT_NE(producer, nullptr) << errstr;
  std::unique_ptr<rd_kafka_t, decltype(&rd_kafka_destroy)> owned(producer, &rd_kafka_destroy);
  auto check = [](rd_kafka_error_t* error) {
    std::string message = error == nullptr ? "" : rd_kafka_error_string(error);
    if (error != nullptr) rd_kafka_error_destroy(error);
    return message;
  };
  ASSERT_EQ(check(rd_kafka_init_transactions(producer, 60000)), "");
  for (const auto& [values, commit] : txns) {
    ASSERT_EQ(check(rd_kafka_begin_transaction(producer)), "");
    for (const std::string& value : values) {
      ASSERT_EQ(rd_kafka_producev(producer, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(0),
                                  RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
                                  RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END),
                RD_KAFKA_RESP_ERR_NO_ERROR);
    }
    // Delivered before the abort, so that the aborted records are in the log (an abort purges
    // records not yet sent).
    ASSERT_EQ(rd_kafka_flush(producer, 60000), RD_KAFKA_RESP_ERR_NO_ERROR);
    ASSERT_EQ(check(commit ? rd_kafka_commit_transaction(producer, 60000) : rd_kafka_abort_transaction(producer, 60000)),
              "");
  }
}

// Records of aborted transactions never reach the source (read_committed), control records
// leave gaps in the offsets, and batches whose limits end inside those gaps still complete.
TEST(KafkaBrokerTest, AbortedTransactionsAreNeverReadAndTheirOffsetsAreSkipped) {
  const std::string topic = NewTopic();
  ProduceTransactions(topic, {{Values("committed", 0, 10), true},
                              {Values("aborted", 0, 10), false},
                              {Values("committed", 10, 20), true}});
  std::vector<std::string> committed = Values("committed", 0, 20);
  // 10 records, a commit marker, 10 aborted records, an abort marker, 10 records, a commit marker.
  const std::string end = fmt::format(R"({{"{}":{{"0":33}}}})", topic);
  for (int64_t limit : {0, 1, 4, 7, 11}) {
    SCOPED_TRACE(limit);
    Options options = {{"bootstrap_servers", Broker().bootstrap_servers(Listener::kPlaintext)}, {"subscribe", topic}};
    if (limit > 0) options["max_offsets_per_trigger"] = std::to_string(limit);
    auto source = OpenSource::Make(options);
    ASSERT_TRUE(source.ok()) << source.status().ToString();
    auto values = (*source)->ReadAll();
    ASSERT_TRUE(values.ok()) << values.status().ToString();
    EXPECT_EQ(*values, committed);
    EXPECT_EQ((*source)->position(), end);
    if (limit > 0) {
      EXPECT_GE((*source)->batches(), (33 + limit - 1) / limit - 2);
    }
  }
  // Read uncommitted, the aborted records are there too.
  auto uncommitted = OpenSource::Make({{"bootstrap_servers", Broker().bootstrap_servers(Listener::kPlaintext)},
                                       {"subscribe", topic},
                                       {"kafka.isolation.level", "read_uncommitted"}});
  ASSERT_TRUE(uncommitted.ok()) << uncommitted.status().ToString();
  auto all = (*uncommitted)->ReadAll();
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  std::vector<std::string> expected = Values("committed", 0, 10);
  for (const auto& value : Values("aborted", 0, 10)) expected.push_back(value);
  for (const auto& value : Values("committed", 10, 20)) expected.push_back(value);
  EXPECT_EQ(*all, expected);
}

// Deletes the records of `topic` partition 0 before `offset` (DeleteRecords, what retention does).
// Sends one admin request through a client of the test broker (`send` issues it on the queue
// given) and hands its result event, checked for an error, to `check`.
void AdminRequest(const std::function<void(rd_kafka_t*, rd_kafka_queue_t*)>& send,
                  const std::function<void(rd_kafka_event_t*)>& check) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char errstr[512];
  const std::string servers = Broker().bootstrap_servers(Listener::kPlaintext);
  ASSERT_EQ(rd_kafka_conf_set(conf, "bootstrap.servers", servers.c_str(), errstr, sizeof(errstr)), RD_KAFKA_CONF_OK);
  std::unique_ptr<rd_kafka_t, decltype(&rd_kafka_destroy)> admin(
      rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr)), &rd_kafka_destroy);
  ASSERT_NE(admin, nullptr) << errstr;
  rd_kafka_queue_t* queue = rd_kafka_queue_new(admin.get());
  send(admin.get(), queue);
  rd_kafka_event_t* event = rd_kafka_queue_poll(queue, 60000);
  EXPECT_NE(event, nullptr);
  if (event != nullptr) {
    EXPECT_EQ(rd_kafka_event_error(event), RD_KAFKA_RESP_ERR_NO_ERROR) << rd_kafka_event_error_string(event);
    check(event);
    rd_kafka_event_destroy(event);
  }
  rd_kafka_queue_destroy(queue);
}

void DeleteRecordsBefore(const std::string& topic, int64_t offset) {
  AdminRequest(
      [&](rd_kafka_t* admin, rd_kafka_queue_t* queue) {
        rd_kafka_topic_partition_list_t* offsets = rd_kafka_topic_partition_list_new(1);
        rd_kafka_topic_partition_list_add(offsets, topic.c_str(), 0)->offset = offset;
        rd_kafka_DeleteRecords_t* request = rd_kafka_DeleteRecords_new(offsets);
        rd_kafka_topic_partition_list_destroy(offsets);
        rd_kafka_DeleteRecords(admin, &request, 1, nullptr, queue);
        rd_kafka_DeleteRecords_destroy(request);
      },
      [](rd_kafka_event_t* event) {
        const rd_kafka_topic_partition_list_t* result =
            rd_kafka_DeleteRecords_result_offsets(rd_kafka_event_DeleteRecords_result(event));
        ASSERT_EQ(result->cnt, 1);
        EXPECT_EQ(result->elems[0].err, RD_KAFKA_RESP_ERR_NO_ERROR) << rd_kafka_err2str(result->elems[0].err);
      });
}

void DeleteTopic(const std::string& topic) {
  AdminRequest(
      [&](rd_kafka_t* admin, rd_kafka_queue_t* queue) {
        rd_kafka_DeleteTopic_t* request = rd_kafka_DeleteTopic_new(topic.c_str());
        rd_kafka_DeleteTopics(admin, &request, 1, nullptr, queue);
        rd_kafka_DeleteTopic_destroy(request);
      },
      [](rd_kafka_event_t* event) {
        size_t count = 0;
        const rd_kafka_topic_result_t** results =
            rd_kafka_DeleteTopics_result_topics(rd_kafka_event_DeleteTopics_result(event), &count);
        ASSERT_EQ(count, 1u);
        EXPECT_EQ(rd_kafka_topic_result_error(results[0]), RD_KAFKA_RESP_ERR_NO_ERROR);
      });
}

// A source of a new topic of `count` records, which it has read, reporting data loss or not.
std::unique_ptr<OpenSource> SourceOfReadTopic(int count, bool fail_on_data_loss, std::string* topic) {
  *topic = NewTopic();
  Produce(*topic, Values("v", 0, count));
  auto source = OpenSource::Make({{"bootstrap_servers", Broker().bootstrap_servers(Listener::kPlaintext)},
                                  {"subscribe", *topic},
                                  {"fail_on_data_loss", fail_on_data_loss ? "true" : "false"}});
  EXPECT_TRUE(source.ok()) << source.status().ToString();
  if (!source.ok()) return nullptr;
  auto first = (*source)->ReadAll();
  EXPECT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first.value_or(std::vector<std::string>{}), Values("v", 0, count));
  return std::move(source).value();
}

// A topic deleted while a stream reads it (Spark: "partitions are gone"): KAFKA_DATA_LOSS naming
// it by default; with `fail_on_data_loss` false the source goes on without it, and a topic made
// again under that name is new to it, read from its start.
TEST(KafkaBrokerTest, ATopicDeletedUnderTheSourceIsDataLossOrForgotten) {
  for (bool fail : {true, false}) {
    SCOPED_TRACE(fail);
    std::string topic;
    std::unique_ptr<OpenSource> source = SourceOfReadTopic(5, fail, &topic);
    ASSERT_NE(source, nullptr);
    DeleteTopic(topic);
    // The deletion reaches the cluster's metadata shortly after the request returns.
    Result<std::vector<std::string>> after = std::vector<std::string>{};
    for (int attempt = 0; attempt < 100; ++attempt) {
      after = source->ReadAll();
      if (!after.ok() || source->position() == "{}") break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (fail) {
      EXPECT_EQ(after.status().error_class(), errors::kKafkaDataLoss) << after.status().ToString();
      EXPECT_NE(after.status().message().find("topic " + topic + " partition 0 is gone"), std::string::npos)
          << after.status().ToString();
      continue;
    }
    ASSERT_TRUE(after.ok()) << after.status().ToString();
    EXPECT_TRUE(after->empty());
    EXPECT_EQ(source->position(), "{}");
    ASSERT_TRUE(Broker().CreateTopic(topic, 1).ok());
    Produce(topic, Values("w", 0, 3));
    std::vector<std::string> again;
    for (int attempt = 0; attempt < 100 && again.size() < 3; ++attempt) {
      auto read = source->ReadAll();
      ASSERT_TRUE(read.ok()) << read.status().ToString();
      again.insert(again.end(), read->begin(), read->end());
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_EQ(again, Values("w", 0, 3));
  }
}

// Partitions added to a topic while the source reads it: a new partition enters the position once
// it has records and is read from its earliest offset, as Spark reads new partitions.
TEST(KafkaBrokerTest, PartitionsAddedWhileTheSourceReadsAreReadFromTheirStart) {
  const std::string topic = NewTopic(1);
  Produce(topic, Values("p0", 0, 3), 0);
  auto source = OpenSource::Make({{"bootstrap_servers", Broker().bootstrap_servers(Listener::kPlaintext)},
                                  {"subscribe", topic}});
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  auto first = (*source)->ReadAll();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(*first, Values("p0", 0, 3));
  ASSERT_TRUE(Broker().AddPartitions(topic, 3).ok());
  Produce(topic, Values("p2", 0, 2), 2);
  Produce(topic, Values("p0", 3, 4), 0);
  std::vector<std::string> read;
  for (int attempt = 0; attempt < 100 && read.size() < 3; ++attempt) {
    auto more = (*source)->ReadAll();
    ASSERT_TRUE(more.ok()) << more.status().ToString();
    read.insert(read.end(), more->begin(), more->end());
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::sort(read.begin(), read.end());
  EXPECT_EQ(read, (std::vector<std::string>{"p0-3", "p2-0", "p2-1"}));
  // Partition 1 has no record yet, so it is not in the position.
  EXPECT_EQ((*source)->position(), fmt::format(R"({{"{}":{{"0":4,"2":2}}}})", topic));
}

// Records deleted before the source read them: KAFKA_DATA_LOSS by default; with
// `fail_on_data_loss` false the source skips to the earliest record left and reads the rest.
TEST(KafkaBrokerTest, RecordsDeletedBeforeTheyWereReadAreDataLossOrSkipped) {
  for (bool fail : {true, false}) {
    SCOPED_TRACE(fail);
    std::string topic;
    std::unique_ptr<OpenSource> source = SourceOfReadTopic(10, fail, &topic);
    ASSERT_NE(source, nullptr);
    Produce(topic, Values("v", 10, 30));
    DeleteRecordsBefore(topic, 25);
    auto rest = source->ReadAll();
    if (fail) {
      EXPECT_EQ(rest.status().error_class(), errors::kKafkaDataLoss) << rest.status().ToString();
      EXPECT_NE(rest.status().message().find("[10, 25)"), std::string_view::npos) << rest.status().ToString();
    } else {
      ASSERT_TRUE(rest.ok()) << rest.status().ToString();
      EXPECT_EQ(*rest, Values("v", 25, 30));
    }
  }
}

// A compacted topic: the log cleaner leaves the last record of each key, so offsets have gaps. A
// source reading from the start reads the survivors in order, and one that starts inside a gap
// (as a stream whose next offset was compacted away resumes) reads on from the next survivor;
// neither takes a gap for data loss.
TEST(KafkaBrokerTest, ACompactedTopicIsReadWithItsGapsAndNoDataLoss) {
  auto topic = sluice::testing::CreateBrokerTopic(1, {{"cleanup.policy", "compact"},
                                                      {"segment.ms", "100"},
                                                      {"min.cleanable.dirty.ratio", "0.01"},
                                                      {"min.compaction.lag.ms", "0"},
                                                      {"delete.retention.ms", "100"}});
  ASSERT_TRUE(topic.ok()) << topic.status().ToString();
  // Five keys, four values each: k<i> v<j> at offset j * 5 + i.
  std::vector<KafkaTestMessage> messages;
  for (int j = 0; j < 4; ++j) {
    for (int i = 0; i < 5; ++i) {
      KafkaTestMessage message;
      message.key = fmt::format("k{}", i);
      message.value = fmt::format("k{}-v{}", i, j);
      message.partition = 0;
      messages.push_back(std::move(message));
    }
  }
  const std::string servers = Broker().bootstrap_servers(Listener::kPlaintext);
  ASSERT_TRUE(ProduceMessages(servers, *topic, messages).ok());
  Options options = {{"bootstrap_servers", servers}, {"subscribe", *topic}, {"fail_on_data_loss", "true"}};

  // A record after segment.ms rolls the segment; the cleaner then compacts the first one.
  std::vector<std::string> expected = {"k0-v3", "k1-v3", "k2-v3", "k3-v3", "k4-v3", "tail"};
  bool compacted = false;
  for (int attempt = 0; attempt < 60 && !compacted; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    KafkaTestMessage tail;
    tail.key = "tail";
    tail.value = "tail";
    tail.partition = 0;
    ASSERT_TRUE(ProduceMessages(servers, *topic, {tail}).ok());
    auto fresh = OpenSource::Make(options);
    ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
    auto read = (*fresh)->ReadAll({.all_available = true});
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    std::vector<std::string> survivors(read->begin(), read->end());
    // Later tails replace the earlier ones once they are cleaned too; the keys' values stay.
    std::erase(survivors, "tail");
    compacted = survivors == std::vector<std::string>(expected.begin(), expected.end() - 1);
    if (compacted) {
      EXPECT_EQ(read->back(), "tail");
      EXPECT_LT(read->size(), 21u);
    }
  }
  ASSERT_TRUE(compacted) << "the log cleaner did not compact the topic in 30 s";
  // From offset 2, now in a gap: the survivors after it, no data loss.
  Options in_gap = options;
  in_gap["starting_offsets"] = fmt::format(R"({{"{}":{{"0":2}}}})", *topic);
  auto resumed = OpenSource::Make(in_gap);
  ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
  auto rest = (*resumed)->ReadAll();
  ASSERT_TRUE(rest.ok()) << rest.status().ToString();
  std::vector<std::string> rest_values(rest->begin(), rest->end());
  std::erase(rest_values, "tail");
  EXPECT_EQ(rest_values, std::vector<std::string>(expected.begin(), expected.end() - 1));
  EXPECT_GE(std::count(rest->begin(), rest->end(), "tail"), 1);
}

// The broker stops and comes back while the source reads: every record is read once, in order,
// the records produced while it was down included.
TEST(KafkaBrokerTest, ABrokerRestartBetweenBatchesLosesAndRepeatsNothing) {
  KafkaBroker& broker = Broker();
  const std::string topic = NewTopic();
  Produce(topic, Values("before", 0, 100));
  Options options = {{"bootstrap_servers", broker.bootstrap_servers(Listener::kSasl)},
                     {"subscribe", topic},
                     {"max_offsets_per_trigger", "40"},
                     {"request_timeout", "120s"}};
  for (auto& [key, value] : Sasl(broker, "PLAIN")) options[key] = value;
  auto source = OpenSource::Make(options);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  auto before = (*source)->ReadAll();
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  ASSERT_EQ(*before, Values("before", 0, 100));

  // The reader polls throughout: its requests meet the broker stopping, stopped, and starting.
  std::vector<std::string> after;
  Status read_status = Status::OK();
  std::thread reader([&] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(3);
    while (after.size() < 100 && std::chrono::steady_clock::now() < deadline) {
      auto read = (*source)->ReadAll();
      if (!read.ok()) {
        read_status = read.status();
        return;
      }
      after.insert(after.end(), read->begin(), read->end());
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // On this thread: the broker lives as long as the thread that started it.
  Status restarted = broker.Restart(std::chrono::seconds(2));
  EXPECT_TRUE(restarted.ok()) << restarted.ToString();
  Produce(topic, Values("after", 0, 100));
  reader.join();
  ASSERT_TRUE(read_status.ok()) << read_status.ToString();
  EXPECT_EQ(after, Values("after", 0, 100));
  EXPECT_EQ((*source)->position(), fmt::format(R"({{"{}":{{"0":200}}}})", topic));
}

}  // namespace
}  // namespace sluice::connectors
