#include "oauth_token.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

#include "sluice/core/error_classes.h"
#include "testing/oidc_token_endpoint.h"
#include "testing/temp_dir.h"

namespace sluice::connectors {
namespace {

constexpr int64_t kNow = 1'800'000'000'000;  // ms

// A JWT whose claims segment is `claims` (base64url of it); header and signature are not read.
std::string Jwt(std::string_view claims) {
  return "eyJhbGciOiJSUzI1NiJ9." + sluice::testing::Base64Url(claims) + ".c2ln";
}

struct Case {
  std::string name;
  std::string body;
  std::string error;      // empty: parses
  int64_t expires_at_ms;  // when it parses
  std::string principal;
};

TEST(OAuthTokenTest, TokenResponsesParseOrFailNamingWhatIsWrong) {
  const std::string with_sub = Jwt(R"({"sub":"svc-ingest","exp":1800000600})");
  const std::vector<Case> cases = {
      {"expires_in", R"({"access_token":"opaque","token_type":"Bearer","expires_in":300})", "", kNow + 300'000, "client"},
      {"expires_in as a string", R"({"access_token":"opaque","expires_in":"300"})", "", kNow + 300'000, "client"},
      {"fractional expires_in", R"({"access_token":"opaque","expires_in":1.5})", "", kNow + 1'500, "client"},
      {"the JWT's sub is the principal", fmt::format(R"({{"access_token":"{}","expires_in":60}})", with_sub), "",
       kNow + 60'000, "svc-ingest"},
      {"the JWT's exp without expires_in", fmt::format(R"({{"access_token":"{}"}})", with_sub), "", 1'800'000'600'000,
       "svc-ingest"},
      {"a JWT whose claims are not JSON", fmt::format(R"({{"access_token":"{}","expires_in":5}})", Jwt("not json")), "",
       kNow + 5'000, "client"},
      {"a token with dots but not base64url", R"({"access_token":"a.b*c.d","expires_in":5})", "", kNow + 5'000, "client"},
      {"no lifetime at all", R"({"access_token":"opaque"})", "gives no lifetime", 0, ""},
      {"a JWT that has expired", fmt::format(R"({{"access_token":"{}"}})", Jwt(R"({"exp":1700000000})")), "has expired", 0,
       ""},
      {"zero expires_in", R"({"access_token":"opaque","expires_in":0})", "`expires_in`", 0, ""},
      {"negative expires_in", R"({"access_token":"opaque","expires_in":-5})", "`expires_in`", 0, ""},
      {"expires_in not a number", R"({"access_token":"opaque","expires_in":"soon"})", "`expires_in`", 0, ""},
      {"expires_in of a billion years", R"({"access_token":"opaque","expires_in":1e30})", "`expires_in`", 0, ""},
      {"no access_token", R"({"token_type":"Bearer","expires_in":300})", "no `access_token`", 0, ""},
      {"an empty access_token", R"({"access_token":"","expires_in":300})", "no `access_token`", 0, ""},
      {"access_token not a string", R"({"access_token":42,"expires_in":300})", "no `access_token`", 0, ""},
      {"an error answer", R"({"error":"invalid_client"})", "no `access_token`", 0, ""},
      {"not JSON", "<html>502 Bad Gateway</html>", "not a JSON object", 0, ""},
      {"a JSON array", R"([{"access_token":"x"}])", "not a JSON object", 0, ""},
      {"truncated", R"({"access_token":"opa)", "not a JSON object", 0, ""},
      {"empty", "", "not a JSON object", 0, ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Result<OAuthToken> token = ParseTokenResponse(c.body, kNow, "client");
    if (c.error.empty()) {
      ASSERT_TRUE(token.ok()) << token.status().ToString();
      EXPECT_EQ(token->expires_at_ms, c.expires_at_ms);
      EXPECT_EQ(token->principal, c.principal);
      EXPECT_FALSE(token->value.empty());
    } else {
      EXPECT_EQ(token.status().error_class(), errors::kKafkaAuthenticationFailed);
      EXPECT_NE(token.status().message().find(c.error), std::string_view::npos) << token.status().ToString();
    }
  }
}

class OAuthFetchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto started = sluice::testing::OidcTokenEndpoint::Start(dir_.Join("jwks.json"));
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    endpoint_ = std::move(*started);
  }
  OAuthClientCredentials Credentials(std::string id, std::string secret) const {
    return {.token_endpoint_url = endpoint_->url(), .client_id = std::move(id), .client_secret = std::move(secret),
            .scope = "kafka streams:read", .ca_location = ""};
  }

  sluice::testing::TempDir dir_;
  std::unique_ptr<sluice::testing::OidcTokenEndpoint> endpoint_;
};

// Ids and secrets with characters that HTTP Basic and form encoding must carry (RFC 6749 2.3.1).
TEST_F(OAuthFetchTest, ClientCredentialsReachTheEndpointIntactAndATokenComesBack) {
  for (auto [id, secret] : {std::pair{"sluice", "plain-secret"}, std::pair{"svc:ingest", "p@ss:w&rd=+/%20é"},
                            std::pair{"ünïcode id", " spaces and\ttabs "}}) {
    SCOPED_TRACE(id);
    endpoint_->AddClient(id, secret);
    const auto before = std::chrono::system_clock::now();
    Result<OAuthToken> token = FetchOAuthToken(Credentials(id, secret), std::chrono::seconds(10));
    ASSERT_TRUE(token.ok()) << token.status().ToString();
    EXPECT_EQ(token->principal, id);
    const int64_t expected =
        std::chrono::duration_cast<std::chrono::milliseconds>((before + std::chrono::hours(1)).time_since_epoch()).count();
    EXPECT_NEAR(static_cast<double>(token->expires_at_ms), static_cast<double>(expected), 5000.0);
    EXPECT_EQ(std::count(token->value.begin(), token->value.end(), '.'), 2);
    auto seen = endpoint_->requests().back();
    EXPECT_TRUE(seen.authenticated);
    EXPECT_EQ(seen.grant_type, "client_credentials");
    EXPECT_EQ(seen.scope, "kafka streams:read");
  }
}

TEST_F(OAuthFetchTest, FailuresNameTheEndpointsAnswerButNeverTheSecret) {
  endpoint_->AddClient("sluice", "right-secret-1b9");
  Result<OAuthToken> wrong = FetchOAuthToken(Credentials("sluice", "wrong-secret-77c"), std::chrono::seconds(10));
  EXPECT_EQ(wrong.status().error_class(), errors::kKafkaAuthenticationFailed);
  EXPECT_NE(wrong.status().message().find("HTTP 401"), std::string_view::npos) << wrong.status().ToString();
  EXPECT_NE(wrong.status().message().find("invalid_client"), std::string_view::npos) << wrong.status().ToString();
  EXPECT_EQ(wrong.status().message().find("secret-"), std::string_view::npos) << wrong.status().ToString();

  endpoint_->SetUnavailable(true);
  Result<OAuthToken> down = FetchOAuthToken(Credentials("sluice", "right-secret-1b9"), std::chrono::seconds(10));
  EXPECT_NE(down.status().message().find("HTTP 503"), std::string_view::npos) << down.status().ToString();

  // A port nobody listens on.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  close(fd);
  OAuthClientCredentials nowhere = Credentials("sluice", "right-secret-1b9");
  nowhere.token_endpoint_url = fmt::format("http://127.0.0.1:{}/token", ntohs(address.sin_port));
  Result<OAuthToken> unreachable = FetchOAuthToken(nowhere, std::chrono::seconds(5));
  EXPECT_EQ(unreachable.status().error_class(), errors::kKafkaAuthenticationFailed);
  EXPECT_NE(unreachable.status().message().find("cannot be reached"), std::string_view::npos)
      << unreachable.status().ToString();
}

}  // namespace
}  // namespace sluice::connectors
