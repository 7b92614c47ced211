#include "oauth_token.h"

#include <curl/curl.h>

#include <memory>

#include <fmt/format.h>
#include <simdjson.h>

#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"

namespace sluice::connectors {
namespace {

Status AuthenticationFailed(std::string message) {
  return Status::Error(errors::kKafkaAuthenticationFailed, std::move(message));
}

// Base64url without padding (RFC 4648 section 5), as JWT segments are written; nullopt when
// `text` has other characters.
std::optional<std::string> Base64UrlDecode(std::string_view text) {
  std::string out;
  uint32_t buffer = 0;
  int bits = 0;
  for (char c : text) {
    int value;
    if (c >= 'A' && c <= 'Z') {
      value = c - 'A';
    } else if (c >= 'a' && c <= 'z') {
      value = c - 'a' + 26;
    } else if (c >= '0' && c <= '9') {
      value = c - '0' + 52;
    } else if (c == '-') {
      value = 62;
    } else if (c == '_') {
      value = 63;
    } else if (c == '=') {
      break;
    } else {
      return std::nullopt;
    }
    buffer = (buffer << 6) | static_cast<uint32_t>(value);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buffer >> bits) & 0xFF);
    }
  }
  return out;
}

// The `sub` and `exp` claims of a JWT (header.claims.signature); both empty or zero when the
// token is not one. The signature is not checked: the broker does that.
struct Claims {
  std::string subject;
  int64_t expires_at_s = 0;
};
Claims ClaimsOf(std::string_view token) {
  Claims claims;
  size_t first = token.find('.');
  size_t second = first == std::string_view::npos ? first : token.find('.', first + 1);
  if (second == std::string_view::npos) return claims;
  std::optional<std::string> json = Base64UrlDecode(token.substr(first + 1, second - first - 1));
  if (!json) return claims;
  simdjson::dom::parser parser;
  simdjson::dom::object object;
  if (parser.parse(*json).get(object) != simdjson::SUCCESS) return claims;
  std::string_view subject;
  if (object["sub"].get(subject) == simdjson::SUCCESS) claims.subject = subject;
  double exp = 0;
  if (object["exp"].get(exp) == simdjson::SUCCESS && exp > 0 && exp < 1e12) claims.expires_at_s = static_cast<int64_t>(exp);
  return claims;
}

size_t AppendBody(char* data, size_t size, size_t count, void* out) {
  auto* body = static_cast<std::string*>(out);
  // An answer larger than any token response is cut: the parse then fails.
  if (body->size() < (1 << 20)) body->append(data, size * count);
  return size * count;
}

// The first 200 bytes of an error answer, for the message (RFC 6749 section 5.2 answers carry
// `error` and `error_description`, which never hold the client's secret).
std::string Excerpt(std::string_view body) {
  std::string text(body.substr(0, 200));
  for (char& c : text) {
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  }
  return text;
}

}  // namespace

Result<OAuthToken> ParseTokenResponse(std::string_view body, int64_t now_ms, std::string_view client_id) {
  simdjson::dom::parser parser;
  simdjson::dom::object object;
  if (parser.parse(body.data(), body.size()).get(object) != simdjson::SUCCESS) {
    return AuthenticationFailed("the token endpoint's answer is not a JSON object");
  }
  std::string_view token;
  if (object["access_token"].get(token) != simdjson::SUCCESS || token.empty()) {
    return AuthenticationFailed("the token endpoint's answer has no `access_token`");
  }
  OAuthToken result;
  result.value = std::string(token);
  Claims claims = ClaimsOf(token);
  result.principal = claims.subject.empty() ? std::string(client_id) : claims.subject;
  double expires_in = 0;
  simdjson::dom::element lifetime;
  if (object["expires_in"].get(lifetime) == simdjson::SUCCESS) {
    // Some providers write the number as a string.
    std::string_view text;
    if (lifetime.get(expires_in) != simdjson::SUCCESS && lifetime.get(text) == simdjson::SUCCESS) {
      try {
        expires_in = std::stod(std::string(text));
      } catch (const std::exception&) {
        expires_in = 0;
      }
    }
    if (!(expires_in > 0 && expires_in < 1e9)) {
      return AuthenticationFailed("the token endpoint's `expires_in` is not a positive number of seconds");
    }
    result.expires_at_ms = now_ms + static_cast<int64_t>(expires_in * 1000);
  } else if (claims.expires_at_s > 0) {
    result.expires_at_ms = claims.expires_at_s * 1000;
  } else {
    return AuthenticationFailed("the token endpoint's answer gives no lifetime (`expires_in`, or `exp` of a JWT)");
  }
  if (result.expires_at_ms <= now_ms) return AuthenticationFailed("the token endpoint gave a token that has expired");
  return result;
}

Result<OAuthToken> FetchOAuthToken(const OAuthClientCredentials& credentials, std::chrono::milliseconds timeout) {
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), &curl_easy_cleanup);
  if (!curl) return AuthenticationFailed("cannot start an HTTP client");
  auto escape = [&](const std::string& text) {
    std::unique_ptr<char, decltype(&curl_free)> escaped(
        curl_easy_escape(curl.get(), text.data(), static_cast<int>(text.size())), &curl_free);
    return escaped ? std::string(escaped.get()) : std::string();
  };
  std::string form = "grant_type=client_credentials";
  if (!credentials.scope.empty()) form += "&scope=" + escape(credentials.scope);
  std::string basic;
  AppendBase64(escape(credentials.client_id) + ":" + escape(credentials.client_secret), &basic);
  std::string authorization = "Authorization: Basic " + basic;
  curl_slist* headers = curl_slist_append(nullptr, authorization.c_str());
  headers = curl_slist_append(headers, "Accept: application/json");
  headers = curl_slist_append(headers, "Content-Type: application/x-www-form-urlencoded");
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> owned_headers(headers, &curl_slist_free_all);
  std::string body;
  curl_easy_setopt(curl.get(), CURLOPT_URL, credentials.token_endpoint_url.c_str());
  curl_easy_setopt(curl.get(), CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl.get(), CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl.get(), CURLOPT_POSTFIELDS, form.c_str());
  curl_easy_setopt(curl.get(), CURLOPT_POSTFIELDSIZE, static_cast<long>(form.size()));
  curl_easy_setopt(curl.get(), CURLOPT_WRITEFUNCTION, AppendBody);
  curl_easy_setopt(curl.get(), CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(curl.get(), CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl.get(), CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
  if (!credentials.ca_location.empty()) curl_easy_setopt(curl.get(), CURLOPT_CAINFO, credentials.ca_location.c_str());
  CURLcode code = curl_easy_perform(curl.get());
  if (code != CURLE_OK) {
    return AuthenticationFailed(
        fmt::format("the token endpoint {} cannot be reached: {}", credentials.token_endpoint_url, curl_easy_strerror(code)));
  }
  long status = 0;
  curl_easy_getinfo(curl.get(), CURLINFO_RESPONSE_CODE, &status);
  if (status != 200) {
    return AuthenticationFailed(fmt::format("the token endpoint {} answered HTTP {}: {}",
                                            credentials.token_endpoint_url, status, Excerpt(body)));
  }
  const int64_t now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  return ParseTokenResponse(body, now_ms, credentials.client_id);
}

}  // namespace sluice::connectors
