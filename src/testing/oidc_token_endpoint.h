// An OAuth 2.0 token endpoint on loopback for tests of OAUTHBEARER authentication: it answers the
// client credentials grant (RFC 6749 section 4.4) with RS256-signed JSON Web Tokens (RFC 7519)
// and publishes the key that verifies them as a JSON Web Key Set file (RFC 7517), which a Kafka
// broker's OAuthBearerValidatorCallbackHandler reads. No OIDC provider installs from the
// machine's registries without a server of its own to run, so this small one follows the specs.
//
// The tokens carry iss = kIssuer, aud = kAudience, sub = the client id, iat, exp and the scope
// asked for. Clients authenticate with HTTP Basic (client_secret_basic) or with client_id and
// client_secret in the form body (client_secret_post); a wrong secret or unknown client gets 401
// invalid_client, another grant type 400 unsupported_grant_type.
//
// One thread serves the requests, one per connection. Thread-safe: requests() and the setters
// may be called while clients fetch tokens.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "sluice/core/status.h"

namespace sluice::testing {

// Base64url without padding (RFC 4648 section 5), as JWT segments and JWK members are written.
std::string Base64Url(std::string_view bytes);

class OidcTokenEndpoint {
 public:
  static constexpr const char* kIssuer = "sluice-test-issuer";
  static constexpr const char* kAudience = "kafka";

  // A token request as the endpoint received it (form fields after percent-decoding).
  struct Request {
    std::string grant_type;
    std::string client_id;  // from Basic authentication or the body
    std::string scope;
    bool authenticated = false;
  };

  // Listens on a free loopback port and writes the key set to `jwks_path`. IO_ERROR on failure.
  static Result<std::unique_ptr<OidcTokenEndpoint>> Start(const std::string& jwks_path);
  ~OidcTokenEndpoint();
  OidcTokenEndpoint(const OidcTokenEndpoint&) = delete;
  OidcTokenEndpoint& operator=(const OidcTokenEndpoint&) = delete;

  // Registers a client that may ask for tokens.
  void AddClient(const std::string& id, const std::string& secret);
  // How long new tokens live (default 1 hour): short lifetimes make clients refresh.
  void SetTokenLifetime(std::chrono::seconds lifetime) { lifetime_seconds_ = lifetime.count(); }
  // While set, every request is answered 503 (a provider that is down).
  void SetUnavailable(bool unavailable) { unavailable_ = unavailable; }

  // "http://127.0.0.1:<port>/token"
  std::string url() const;
  const std::string& jwks_path() const { return jwks_path_; }
  std::vector<Request> requests() const;

 private:
  struct Key;
  OidcTokenEndpoint(int listener, std::string jwks_path, std::unique_ptr<Key> key);
  void Serve();
  void Answer(int connection);
  std::string Token(const std::string& subject, const std::string& scope) const;

  int listener_;
  int port_ = 0;
  std::string jwks_path_;
  std::unique_ptr<Key> key_;
  std::atomic<int64_t> lifetime_seconds_{3600};
  std::atomic<bool> unavailable_{false};
  std::atomic<bool> stop_{false};
  mutable std::mutex mutex_;
  std::vector<std::pair<std::string, std::string>> clients_;
  std::vector<Request> requests_;
  std::thread thread_;
};

}  // namespace sluice::testing
