#include "testing/kafka_broker.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <librdkafka/rdkafka.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sluice/core/error_classes.h"
#include "testing/child_process.h"
#include "testing/temp_dir.h"
#include "testing/paths.h"

namespace sluice::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr auto kStartTimeout = std::chrono::seconds(120);
constexpr auto kStopGrace = std::chrono::seconds(30);

// Runs `args` to completion; EMBEDDED_SERVICE_FAILED with the end of the log unless it exits 0.
Status Run(const std::vector<std::string>& args, const std::string& log_path) {
  pid_t pid = Spawn(args, log_path);
  if (pid < 0) return Status::Error(errors::kEmbeddedServiceFailed, "cannot start " + args.front());
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return Status::OK();
  return Status::Error(errors::kEmbeddedServiceFailed,
                       fmt::format("`{}` failed:\n{}", fmt::join(args, " "), TailOf(log_path, 20)));
}

std::string ClusterId() {
  // 16 random bytes in URL-safe base64 without padding, as `kafka-storage random-uuid` prints;
  // like Kafka's Uuid.randomUuid, never one that starts with "-", which the storage tool's
  // argument parser would take for an option.
  std::random_device random;
  std::string id;
  do {
    std::string bytes(16, '\0');
    for (char& byte : bytes) byte = static_cast<char>(random());
    id = Base64Url(bytes);
  } while (id.front() == '-');
  return id;
}

std::string ListenerName(KafkaBroker::Listener listener) {
  switch (listener) {
    case KafkaBroker::Listener::kPlaintext: return "PLAINTEXT";
    case KafkaBroker::Listener::kSasl: return "SASL";
    case KafkaBroker::Listener::kSsl: return "MTLS";
    case KafkaBroker::Listener::kSaslSsl: return "SASLSSL";
  }
  return "";
}

constexpr KafkaBroker::Listener kListeners[] = {KafkaBroker::Listener::kPlaintext, KafkaBroker::Listener::kSasl,
                                                KafkaBroker::Listener::kSsl, KafkaBroker::Listener::kSaslSsl};

using ClientPtr = std::unique_ptr<rd_kafka_t, decltype(&rd_kafka_destroy)>;

Result<ClientPtr> AdminClient(const std::string& bootstrap) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char errstr[512];
  for (auto [name, value] : {std::pair{"bootstrap.servers", bootstrap.c_str()}, std::pair{"log_level", "3"}}) {
    if (rd_kafka_conf_set(conf, name, value, errstr, sizeof(errstr)) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      return Status::Error(errors::kEmbeddedServiceFailed, errstr);
    }
  }
  rd_kafka_t* client = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
  if (client == nullptr) {
    rd_kafka_conf_destroy(conf);
    return Status::Error(errors::kEmbeddedServiceFailed, errstr);
  }
  return ClientPtr(client, &rd_kafka_destroy);
}

}  // namespace

Result<std::unique_ptr<KafkaBroker>> KafkaBroker::Start(const std::string& directory, const std::string& version) {
  std::unique_ptr<KafkaBroker> broker(new KafkaBroker(directory));
  std::error_code ec;
  fs::remove_all(directory, ec);
  fs::create_directories(directory + "/data", ec);
  if (ec) return Status::Error(errors::kEmbeddedServiceFailed, "cannot make " + directory + ": " + ec.message());
  const char* java_home = std::getenv("JAVA_HOME");
  broker->java_ = java_home != nullptr && *java_home != '\0' ? std::string(java_home) + "/bin/java" : "java";
  const char* libs = std::getenv("SLUICE_KAFKA_LIBS");
  broker->libs_ = fmt::format("{}/{}", libs != nullptr && *libs != '\0' ? libs : sluice::testing::SourceDir() + "/tests/tools/kafka/libs",
                              version);
  if (!fs::is_directory(broker->libs_)) {
    return Status::Error(errors::kEmbeddedServiceFailed,
                         fmt::format("no Kafka broker in {}: run scripts/install-test-tools.sh", broker->libs_));
  }
  for (Listener listener : kListeners) broker->ports_[listener] = FreePort();
  broker->controller_port_ = FreePort();
  broker->users_ = {{"PLAIN", "alice", "alice-secret"},
                    {"SCRAM-SHA-256", "bob", "bob-secret"},
                    {"SCRAM-SHA-512", "carol", "carol-secret"}};
  broker->oauth_client_ = {"sluice-client", "oauth-client-secret"};
  SLUICE_ASSIGN_OR_RETURN(broker->token_endpoint_, OidcTokenEndpoint::Start(directory + "/jwks.json"));
  broker->token_endpoint_->AddClient(broker->oauth_client_.id, broker->oauth_client_.secret);
  SLUICE_RETURN_IF_ERROR(broker->MakeCertificates());
  SLUICE_RETURN_IF_ERROR(broker->WriteConfiguration());
  SLUICE_RETURN_IF_ERROR(broker->Format());
  SLUICE_RETURN_IF_ERROR(broker->Launch());
  SLUICE_RETURN_IF_ERROR(broker->CreateScramUsers());
  return broker;
}

KafkaBroker::~KafkaBroker() { Stop(); }

std::string KafkaBroker::bootstrap_servers(Listener listener) const {
  return fmt::format("127.0.0.1:{}", ports_.at(listener));
}

const KafkaBroker::User& KafkaBroker::user(const std::string& mechanism) const {
  for (const User& user : users_) {
    if (user.mechanism == mechanism) return user;
  }
  return users_.front();
}

Status KafkaBroker::MakeCertificates() {
  const std::string d = directory_ + "/tls";
  fs::create_directories(d);
  const std::string log = directory_ + "/openssl.log";
  auto run = [&](const std::string& command) {
    std::vector<std::string> args = {"openssl"};
    for (size_t begin = 0; begin < command.size();) {
      size_t end = command.find(' ', begin);
      if (end == std::string::npos) end = command.size();
      args.push_back(command.substr(begin, end - begin));
      begin = end + 1;
    }
    return Run(args, log);
  };
  {
    std::ofstream ext(d + "/server.ext");
    ext << "subjectAltName=IP:127.0.0.1,DNS:localhost\n";
  }
  // Two days: long enough for any run, short enough that a copied folder is worthless.
  for (const std::string& ca : {std::string("ca"), std::string("other-ca")}) {
    SLUICE_RETURN_IF_ERROR(run(fmt::format("req -x509 -newkey rsa:2048 -nodes -keyout {0}/{1}.key -out {0}/{1}.pem "
                                           "-days 2 -subj /CN=sluice-test-{1}",
                                           d, ca)));
  }
  auto sign = [&](const std::string& name, const std::string& ca, const std::string& extra) -> Status {
    SLUICE_RETURN_IF_ERROR(run(fmt::format("req -newkey rsa:2048 -nodes -keyout {0}/{1}.key -out {0}/{1}.csr "
                                           "-subj /CN={1}",
                                           d, name)));
    return run(fmt::format("x509 -req -in {0}/{1}.csr -CA {0}/{2}.pem -CAkey {0}/{2}.key -CAcreateserial -out "
                           "{0}/{1}.pem -days 2{3}",
                           d, name, ca, extra));
  };
  SLUICE_RETURN_IF_ERROR(sign("broker", "ca", " -extfile " + d + "/server.ext"));
  SLUICE_RETURN_IF_ERROR(sign("client", "ca", ""));
  SLUICE_RETURN_IF_ERROR(sign("stranger", "other-ca", ""));
  tls_.ca = d + "/ca.pem";
  tls_.certificate = d + "/client.pem";
  tls_.key = d + "/client.key";
  tls_.key_password = "client-key-secret";
  tls_.encrypted_key = d + "/client-encrypted.key";
  SLUICE_RETURN_IF_ERROR(run(fmt::format("pkcs8 -topk8 -in {} -out {} -passout pass:{}", tls_.key,
                                         tls_.encrypted_key, tls_.key_password)));
  tls_.pkcs12 = d + "/client.p12";
  tls_.pkcs12_password = "keystore-secret";
  SLUICE_RETURN_IF_ERROR(run(fmt::format("pkcs12 -export -in {} -inkey {} -out {} -passout pass:{}",
                                         tls_.certificate, tls_.key, tls_.pkcs12, tls_.pkcs12_password)));
  tls_.untrusted_certificate = d + "/stranger.pem";
  tls_.untrusted_key = d + "/stranger.key";
  // The broker's PEM keystore: its key (PKCS#8, as `openssl req` writes it) and its certificate.
  std::ofstream keystore(d + "/broker-keystore.pem");
  keystore << std::ifstream(d + "/broker.key").rdbuf() << std::ifstream(d + "/broker.pem").rdbuf();
  return keystore ? Status::OK() : Failure("cannot write the broker's keystore");
}

Status KafkaBroker::WriteConfiguration() {
  std::vector<std::string> listeners;
  std::vector<std::string> protocols;
  for (Listener listener : kListeners) {
    listeners.push_back(fmt::format("{}://127.0.0.1:{}", ListenerName(listener), ports_[listener]));
  }
  listeners.push_back(fmt::format("CONTROLLER://127.0.0.1:{}", controller_port_));
  const std::string tls = directory_ + "/tls";
  std::string plain_users;
  for (const User& user : users_) {
    if (user.mechanism == "PLAIN") plain_users += fmt::format(" user_{}=\"{}\"", user.name, user.password);
  }
  std::ofstream out(directory_ + "/server.properties");
  out << fmt::format(R"(process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:{controller}
controller.listener.names=CONTROLLER
listeners={listeners}
advertised.listeners={advertised}
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL:SASL_PLAINTEXT,MTLS:SSL,SASLSSL:SASL_SSL,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
log.dirs={dir}/data
num.partitions=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=4
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=false
log.retention.check.interval.ms=1000
log.segment.delete.delay.ms=0
log.cleaner.backoff.ms=1000
ssl.keystore.type=PEM
ssl.keystore.location={tls}/broker-keystore.pem
ssl.truststore.type=PEM
ssl.truststore.location={tls}/ca.pem
listener.name.mtls.ssl.client.auth=required
sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512
listener.name.sasl.sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER
listener.name.saslssl.sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512
)",
                     fmt::arg("controller", controller_port_), fmt::arg("listeners", fmt::join(listeners, ",")),
                     fmt::arg("advertised", fmt::join(std::vector<std::string>(listeners.begin(), listeners.end() - 1), ",")),
                     fmt::arg("dir", directory_), fmt::arg("tls", tls));
  for (const char* listener : {"sasl", "saslssl"}) {
    out << fmt::format("listener.name.{}.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule "
                       "required{};\n",
                       listener, plain_users);
    for (const char* scram : {"scram-sha-256", "scram-sha-512"}) {
      out << fmt::format("listener.name.{}.{}.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule "
                         "required;\n",
                         listener, scram);
    }
  }
  out << fmt::format(R"(listener.name.sasl.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;
listener.name.sasl.oauthbearer.sasl.server.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler
sasl.oauthbearer.jwks.endpoint.url=file://{jwks}
sasl.oauthbearer.expected.audience={audience}
sasl.oauthbearer.expected.issuer={issuer}
)",
                     fmt::arg("jwks", token_endpoint_->jwks_path()), fmt::arg("audience", OidcTokenEndpoint::kAudience),
                     fmt::arg("issuer", OidcTokenEndpoint::kIssuer));
  std::ofstream logging(directory_ + "/log4j2.properties");
  logging << fmt::format(R"(status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = {}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = info
rootLogger.appenderRef.file.ref = file
logger.state.name = state.change.logger
logger.state.level = warn
)",
                         log_path());
  return out && logging ? Status::OK() : Failure("cannot write the broker's configuration");
}

std::vector<std::string> KafkaBroker::JavaCommand(const std::string& main_class) const {
  return {java_,
          "-Xms128m",
          "-Xmx512m",
          "-XX:+UseSerialGC",
          "-XX:TieredStopAtLevel=1",
          "-Djava.awt.headless=true",
          "-Dlog4j2.configurationFile=" + directory_ + "/log4j2.properties",
          "-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls=file://" + token_endpoint_->jwks_path(),
          "-cp",
          libs_ + "/*",
          main_class};
}

Status KafkaBroker::Format() {
  std::vector<std::string> args = JavaCommand("kafka.tools.StorageTool");
  for (const char* arg : {"format", "--cluster-id"}) args.push_back(arg);
  args.push_back(ClusterId());
  args.push_back("--config");
  args.push_back(directory_ + "/server.properties");
  return Run(args, directory_ + "/format.log");
}

Status KafkaBroker::CreateScramUsers() {
  for (const User& user : users_) {
    if (!user.mechanism.starts_with("SCRAM")) continue;
    std::vector<std::string> args = JavaCommand("kafka.admin.ConfigCommand");
    for (std::string arg : {std::string("--bootstrap-server"), bootstrap_servers(Listener::kPlaintext),
                            std::string("--alter"), std::string("--entity-type"), std::string("users"),
                            std::string("--entity-name"), user.name, std::string("--add-config"),
                            fmt::format("{}=[password={}]", user.mechanism, user.password)}) {
      args.push_back(std::move(arg));
    }
    SLUICE_RETURN_IF_ERROR(Run(args, directory_ + "/users.log"));
  }
  return Status::OK();
}

Status KafkaBroker::Launch() {
  std::vector<std::string> args = JavaCommand("kafka.Kafka");
  args.push_back(directory_ + "/server.properties");
  pid_ = Spawn(args, directory_ + "/stdout.log");
  if (pid_ < 0) return Failure("cannot start " + java_);
  return WaitUntilAnswering();
}

Status KafkaBroker::WaitUntilAnswering() {
  SLUICE_ASSIGN_OR_RETURN(ClientPtr client, AdminClient(bootstrap_servers(Listener::kPlaintext)));
  const auto deadline = Clock::now() + kStartTimeout;
  while (Clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return Failure(fmt::format("the broker exited ({})", TailOf(directory_ + "/stdout.log", 10)));
    }
    const rd_kafka_metadata_t* metadata = nullptr;
    if (rd_kafka_metadata(client.get(), 1, nullptr, &metadata, 1000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
      const bool ready = metadata->broker_cnt > 0;
      rd_kafka_metadata_destroy(metadata);
      if (ready) return Status::OK();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return Failure("the broker did not answer within 120 s");
}

void KafkaBroker::Stop() {
  if (pid_ <= 0) return;
  kill(-pid_, SIGTERM);
  const auto deadline = Clock::now() + kStopGrace;
  int status = 0;
  while (waitpid(pid_, &status, WNOHANG) == 0) {
    if (Clock::now() >= deadline) {
      kill(-pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  pid_ = -1;
}

Status KafkaBroker::Restart(std::chrono::milliseconds down_for) {
  Stop();
  std::this_thread::sleep_for(down_for);
  return Launch();
}

Status KafkaBroker::AwaitTopicsResult(rd_kafka_queue_t* queue, const std::string& what,
                                      TopicResults (*results_of)(const rd_kafka_event_t*, size_t*)) const {
  rd_kafka_event_t* event = rd_kafka_queue_poll(queue, 60000);
  Status result = Status::OK();
  if (event == nullptr) {
    result = Failure(what + " timed out");
  } else if (rd_kafka_event_error(event) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    result = Failure(fmt::format("{}: {}", what, rd_kafka_event_error_string(event)));
  } else {
    size_t count = 0;
    TopicResults results = results_of(event, &count);
    for (size_t i = 0; i < count; ++i) {
      if (rd_kafka_topic_result_error(results[i]) != RD_KAFKA_RESP_ERR_NO_ERROR) {
        result = Failure(fmt::format("{}: {}", what, rd_kafka_topic_result_error_string(results[i])));
      }
    }
  }
  if (event != nullptr) rd_kafka_event_destroy(event);
  rd_kafka_queue_destroy(queue);
  return result;
}

Status KafkaBroker::CreateTopic(const std::string& name, int partitions,
                                const std::map<std::string, std::string>& configs) {
  SLUICE_ASSIGN_OR_RETURN(ClientPtr client, AdminClient(bootstrap_servers(Listener::kPlaintext)));
  char errstr[512];
  rd_kafka_NewTopic_t* topic = rd_kafka_NewTopic_new(name.c_str(), partitions, 1, errstr, sizeof(errstr));
  if (topic == nullptr) return Failure(errstr);
  for (const auto& [key, value] : configs) rd_kafka_NewTopic_set_config(topic, key.c_str(), value.c_str());
  rd_kafka_queue_t* queue = rd_kafka_queue_new(client.get());
  rd_kafka_CreateTopics(client.get(), &topic, 1, nullptr, queue);
  rd_kafka_NewTopic_destroy(topic);
  return AwaitTopicsResult(queue, "creating topic " + name, [](const rd_kafka_event_t* event, size_t* count) {
    return rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(const_cast<rd_kafka_event_t*>(event)),
                                               count);
  });
}

Status KafkaBroker::AddPartitions(const std::string& name, int total) {
  SLUICE_ASSIGN_OR_RETURN(ClientPtr client, AdminClient(bootstrap_servers(Listener::kPlaintext)));
  char errstr[512];
  rd_kafka_NewPartitions_t* partitions = rd_kafka_NewPartitions_new(name.c_str(), total, errstr, sizeof(errstr));
  if (partitions == nullptr) return Failure(errstr);
  rd_kafka_queue_t* queue = rd_kafka_queue_new(client.get());
  rd_kafka_CreatePartitions(client.get(), &partitions, 1, nullptr, queue);
  rd_kafka_NewPartitions_destroy(partitions);
  return AwaitTopicsResult(queue, "adding partitions to " + name, [](const rd_kafka_event_t* event, size_t* count) {
    return rd_kafka_CreatePartitions_result_topics(
        rd_kafka_event_CreatePartitions_result(const_cast<rd_kafka_event_t*>(event)), count);
  });
}

Status KafkaBroker::Failure(const std::string& what) const {
  return Status::Error(errors::kEmbeddedServiceFailed,
                       fmt::format("Kafka broker in {}: {}. Last lines of {}:\n{}", directory_, what, log_path(),
                                   TailOf(log_path(), 25)));
}

namespace {

class SharedBroker {
 public:
  explicit SharedBroker(std::string version) : version_(std::move(version)) {}

  Result<KafkaBroker*> Get() {
    std::lock_guard<std::mutex> lock(mu_);
    if (!start_status_) {
      directory_.emplace("sluice-kafka-broker");
      auto started = KafkaBroker::Start(directory_->Join("broker"), version_);
      start_status_ = started.status();
      if (started.ok()) broker_ = std::move(started).value();
    }
    if (!start_status_->ok()) return *start_status_;
    return broker_.get();
  }

 private:
  const std::string version_;
  std::mutex mu_;
  // Destroyed in reverse: the broker stops before its folder goes.
  std::optional<TempDir> directory_;
  std::unique_ptr<KafkaBroker> broker_;
  std::optional<Status> start_status_;
};

std::atomic<int> next_topic{0};

}  // namespace

Result<KafkaBroker*> SharedKafkaBroker(const std::string& version) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<SharedBroker>> brokers;
  SharedBroker* broker;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto& slot = brokers[version];
    if (!slot) slot = std::make_unique<SharedBroker>(version);
    broker = slot.get();
  }
  return broker->Get();
}

Result<std::string> CreateBrokerTopic(int partitions, const std::map<std::string, std::string>& configs,
                                      const std::string& version) {
  SLUICE_ASSIGN_OR_RETURN(KafkaBroker * broker, SharedKafkaBroker(version));
  std::string name = fmt::format("broker_topic_{}", next_topic++);
  SLUICE_RETURN_IF_ERROR(broker->CreateTopic(name, partitions, configs));
  return name;
}

}  // namespace sluice::testing
