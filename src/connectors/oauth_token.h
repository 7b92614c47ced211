// Access tokens for Kafka's SASL OAUTHBEARER mechanism, from an OAuth 2.0 token endpoint by the
// client credentials grant (RFC 6749 section 4.4), as an OIDC provider (Keycloak, Okta, Entra ID,
// ...) issues them to services. librdkafka's own OIDC support is not in every build (Debian's has
// none), so the Kafka source fetches tokens itself and hands them to the client from its token
// refresh callback.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "sluice/core/status.h"

namespace sluice::connectors {

struct OAuthClientCredentials {
  std::string token_endpoint_url;  // http:// or https://
  std::string client_id;
  std::string client_secret;  // resolved from its reference; never printed
  std::string scope;          // space-separated; empty: none asked for
  std::string ca_location;    // PEM CA file for an https endpoint; empty: the system's
};

struct OAuthToken {
  std::string value;
  int64_t expires_at_ms = 0;  // Unix time
  std::string principal;      // the JWT's `sub`, else the client id
};

// The token of a token endpoint's successful answer (RFC 6749 section 5.1): `access_token`, and its
// lifetime from `expires_in` or, without it, from the `exp` claim when the token is a JWT.
// KAFKA_AUTHENTICATION_FAILED when the answer is not such a JSON object, or names no lifetime.
Result<OAuthToken> ParseTokenResponse(std::string_view body, int64_t now_ms, std::string_view client_id);

// Asks the endpoint for a token: POST grant_type=client_credentials (and the scope), the client
// authenticated with HTTP Basic (client_secret_basic, id and secret form-encoded first).
// KAFKA_AUTHENTICATION_FAILED when the endpoint cannot be reached within `timeout` or answers
// with an error; the message carries the status and the answer's `error` field, never the secret.
// Thread-safe.
Result<OAuthToken> FetchOAuthToken(const OAuthClientCredentials& credentials, std::chrono::milliseconds timeout);

}  // namespace sluice::connectors
