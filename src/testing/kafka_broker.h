// KafkaBroker: a real Apache Kafka broker for integration tests, where the behaviour of a broker
// matters (authentication, TLS, transactions, restarts) and librdkafka's mock cluster
// (embedded_kafka.h) does not have it.
//
// One process in KRaft mode, broker and controller at once, from the jars that
// scripts/install-test-tools.sh resolves from the Maven registry into
// tests/tools/kafka/libs/<version> (another folder than libs with SLUICE_KAFKA_LIBS), run by `java`
// ($JAVA_HOME/bin/java when set). Two versions are installed (tests/tools/kafka/versions): the
// current 4.x line, which most tests use, and the last 3.x line, which users still run and which
// some clients need (SCRAM, see docs/streams.md). It listens
// on free loopback ports, one listener per security protocol:
//   kPlaintext  PLAINTEXT, for the tests' own producers and topic administration;
//   kSasl       SASL_PLAINTEXT with PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER;
//   kSsl        SSL with client certificates required (mutual TLS);
//   kSaslSsl    SASL_SSL with PLAIN and the SCRAM mechanisms.
// The SCRAM users are created with the broker's own tool (kafka-configs) once it runs; the PLAIN
// users are in the listener's JAAS configuration; OAUTHBEARER tokens are
// verified against the key set of an OidcTokenEndpoint (oidc_token_endpoint.h) the broker starts
// with. The certificates (a CA, the broker's, a client's as PEM files, an encrypted PEM key and a
// PKCS#12 keystore) are made by `openssl` in the broker's folder.
//
// Failures are EMBEDDED_SERVICE_FAILED with the last lines of the broker's log. The broker is
// stopped when this object goes away, and is killed with the thread that started it (so a test
// process killed with -9 leaves no broker behind). Not thread-safe, but for CreateTopic, which any
// thread may call.
#pragma once

#include <librdkafka/rdkafka.h>
#include <sys/types.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sluice/core/status.h"
#include "testing/oidc_token_endpoint.h"

namespace sluice::testing {

class KafkaBroker {
 public:
  enum class Listener { kPlaintext, kSasl, kSsl, kSaslSsl };

  struct User {
    std::string mechanism;  // PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512
    std::string name;
    std::string password;
  };
  // An OAuth client the token endpoint knows, for OAUTHBEARER.
  struct OAuthClient {
    std::string id;
    std::string secret;
  };
  // PEM files unless named otherwise.
  struct ClientTls {
    std::string ca;                  // the CA that signed the broker's and the client's certificates
    std::string certificate;         // the client's certificate
    std::string key;                 // its key, unencrypted
    std::string encrypted_key;       // the same key encrypted with key_password
    std::string key_password;
    std::string pkcs12;              // certificate and key as a PKCS#12 keystore
    std::string pkcs12_password;
    std::string untrusted_certificate;  // a client certificate from a CA the broker does not trust
    std::string untrusted_key;
  };

  static constexpr const char* kVersion4 = "4.1.1";
  static constexpr const char* kVersion3 = "3.9.1";

  // Makes `directory` (removed first) and starts broker `version` there; waits until it answers.
  static Result<std::unique_ptr<KafkaBroker>> Start(const std::string& directory, const std::string& version);
  ~KafkaBroker();
  KafkaBroker(const KafkaBroker&) = delete;
  KafkaBroker& operator=(const KafkaBroker&) = delete;

  // "127.0.0.1:<port>" of one listener.
  std::string bootstrap_servers(Listener listener) const;
  // One user per SASL mechanism but OAUTHBEARER.
  const std::vector<User>& users() const { return users_; }
  const User& user(const std::string& mechanism) const;
  const OAuthClient& oauth_client() const { return oauth_client_; }
  OidcTokenEndpoint& token_endpoint() { return *token_endpoint_; }
  const ClientTls& client_tls() const { return tls_; }
  std::string log_path() const { return directory_ + "/broker.log"; }

  // Creates a topic with replication factor 1 and the given topic configurations
  // ("cleanup.policy" = "compact", ...).
  Status CreateTopic(const std::string& name, int partitions, const std::map<std::string, std::string>& configs = {});
  // Grows topic `name` to `total` partitions.
  Status AddPartitions(const std::string& name, int total);
  // Stops the broker (SIGTERM, then SIGKILL after 30 s) and starts it again on the same ports
  // with the same data; waits until it answers. `down_for` is the time it stays stopped. Call it on
  // a thread that lives as long as the broker should (the new process dies with it).
  Status Restart(std::chrono::milliseconds down_for = std::chrono::milliseconds(0));

 private:
  explicit KafkaBroker(std::string directory) : directory_(std::move(directory)) {}
  Status MakeCertificates();
  Status WriteConfiguration();
  Status Format();
  Status CreateScramUsers();
  Status Launch();
  Status WaitUntilAnswering();
  void Stop();
  Status Failure(const std::string& what) const;
  using TopicResults = const rd_kafka_topic_result_t**;
  // Waits for the answer of an admin request on `queue` (destroyed after) and checks every
  // topic's result, which `results_of` takes out of the event.
  Status AwaitTopicsResult(rd_kafka_queue_t* queue, const std::string& what,
                           TopicResults (*results_of)(const rd_kafka_event_t*, size_t*)) const;
  std::vector<std::string> JavaCommand(const std::string& main_class) const;

  std::string directory_;
  std::string java_;
  std::string libs_;
  std::map<Listener, int> ports_;
  int controller_port_ = 0;
  std::vector<User> users_;
  OAuthClient oauth_client_;
  std::unique_ptr<OidcTokenEndpoint> token_endpoint_;
  ClientTls tls_;
  pid_t pid_ = -1;
};

// The broker of `version` shared by the tests of one binary, started on first use (in $TMPDIR,
// removed at exit unless SLUICE_KEEP_TEST_DIRS is set). First use must happen on the thread that
// lives as long as the tests (GoogleTest's main thread). A failed start is remembered and returned
// again.
Result<KafkaBroker*> SharedKafkaBroker(const std::string& version = KafkaBroker::kVersion4);

// A new topic name on the shared broker of `version`, created with `partitions` partitions and
// `configs`.
Result<std::string> CreateBrokerTopic(int partitions, const std::map<std::string, std::string>& configs = {},
                                      const std::string& version = KafkaBroker::kVersion4);

}  // namespace sluice::testing
