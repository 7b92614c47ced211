#include "testing/oidc_token_endpoint.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>

#include <fmt/format.h>

#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"

namespace sluice::testing {
namespace {


// Standard base64 (HTTP Basic credentials); empty on malformed input.
std::string Base64Decode(std::string_view text) {
  std::string out;
  uint32_t buffer = 0;
  int bits = 0;
  for (char c : text) {
    int value;
    if (c >= 'A' && c <= 'Z') value = c - 'A';
    else if (c >= 'a' && c <= 'z') value = c - 'a' + 26;
    else if (c >= '0' && c <= '9') value = c - '0' + 52;
    else if (c == '+') value = 62;
    else if (c == '/') value = 63;
    else if (c == '=') break;
    else return "";
    buffer = (buffer << 6) | value;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buffer >> bits) & 0xFF);
    }
  }
  return out;
}

// application/x-www-form-urlencoded decoding of one field name or value.
std::string FormDecode(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] == '%' && i + 2 < text.size() && std::isxdigit(static_cast<unsigned char>(text[i + 1])) &&
               std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
      out += static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> ParseForm(std::string_view body) {
  std::vector<std::pair<std::string, std::string>> fields;
  while (!body.empty()) {
    std::string_view field = body.substr(0, body.find('&'));
    body.remove_prefix(std::min(body.size(), field.size() + 1));
    size_t equals = field.find('=');
    if (equals == std::string_view::npos) continue;
    fields.emplace_back(FormDecode(field.substr(0, equals)), FormDecode(field.substr(equals + 1)));
  }
  return fields;
}

std::string Header(std::string_view head, std::string_view name) {
  std::string lower_head(head), lower_name(name);
  for (auto* s : {&lower_head, &lower_name}) {
    for (char& c : *s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  size_t at = lower_head.find("\r\n" + lower_name + ":");
  if (at == std::string::npos) return "";
  size_t begin = at + 3 + name.size();
  size_t end = head.find("\r\n", begin);
  std::string value(head.substr(begin, end - begin));
  value.erase(0, value.find_first_not_of(' '));
  return value;
}

std::string BigEndianBytes(EVP_PKEY* key, const char* parameter) {
  BIGNUM* number = nullptr;
  if (EVP_PKEY_get_bn_param(key, parameter, &number) != 1) return "";
  std::string bytes(static_cast<size_t>(BN_num_bytes(number)), '\0');
  BN_bn2bin(number, reinterpret_cast<unsigned char*>(bytes.data()));
  BN_free(number);
  return bytes;
}

}  // namespace

std::string Base64Url(std::string_view bytes) {
  std::string out;
  AppendBase64(bytes, &out);
  while (!out.empty() && out.back() == '=') out.pop_back();
  for (char& c : out) c = c == '+' ? '-' : c == '/' ? '_' : c;
  return out;
}

struct OidcTokenEndpoint::Key {
  EVP_PKEY* pkey = nullptr;
  ~Key() { EVP_PKEY_free(pkey); }
};

Result<std::unique_ptr<OidcTokenEndpoint>> OidcTokenEndpoint::Start(const std::string& jwks_path) {
  auto key = std::make_unique<Key>();
  key->pkey = EVP_RSA_gen(2048);
  if (key->pkey == nullptr) return Status::Error(errors::kIoError, "cannot make an RSA key");
  std::ofstream jwks(jwks_path, std::ios::trunc);
  jwks << fmt::format(R"({{"keys":[{{"kty":"RSA","use":"sig","alg":"RS256","kid":"sluice-test","n":"{}","e":"{}"}}]}})",
                      Base64Url(BigEndianBytes(key->pkey, OSSL_PKEY_PARAM_RSA_N)),
                      Base64Url(BigEndianBytes(key->pkey, OSSL_PKEY_PARAM_RSA_E)));
  jwks.close();
  if (!jwks) return Status::Error(errors::kIoError, "cannot write " + jwks_path);

  int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (listener < 0 || bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      listen(listener, 16) != 0) {
    if (listener >= 0) close(listener);
    return Status::Error(errors::kIoError, "the token endpoint cannot listen");
  }
  std::unique_ptr<OidcTokenEndpoint> endpoint(new OidcTokenEndpoint(listener, jwks_path, std::move(key)));
  return endpoint;
}

OidcTokenEndpoint::OidcTokenEndpoint(int listener, std::string jwks_path, std::unique_ptr<Key> key)
    : listener_(listener), jwks_path_(std::move(jwks_path)), key_(std::move(key)) {
  sockaddr_in address{};
  socklen_t length = sizeof(address);
  getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length);
  port_ = ntohs(address.sin_port);
  thread_ = std::thread([this] { Serve(); });
}

OidcTokenEndpoint::~OidcTokenEndpoint() {
  stop_ = true;
  thread_.join();
  close(listener_);
}

void OidcTokenEndpoint::AddClient(const std::string& id, const std::string& secret) {
  std::lock_guard lock(mutex_);
  clients_.emplace_back(id, secret);
}

std::string OidcTokenEndpoint::url() const { return fmt::format("http://127.0.0.1:{}/token", port_); }

std::vector<OidcTokenEndpoint::Request> OidcTokenEndpoint::requests() const {
  std::lock_guard lock(mutex_);
  return requests_;
}

void OidcTokenEndpoint::Serve() {
  while (!stop_) {
    pollfd ready{listener_, POLLIN, 0};
    if (poll(&ready, 1, 20) <= 0) continue;
    int connection = accept(listener_, nullptr, nullptr);
    if (connection < 0) continue;
    Answer(connection);
    close(connection);
  }
}

void OidcTokenEndpoint::Answer(int connection) {
  std::string request;
  char buffer[4096];
  size_t head_end = std::string::npos;
  size_t wanted = 0;
  while (true) {
    if (head_end == std::string::npos && (head_end = request.find("\r\n\r\n")) != std::string::npos) {
      std::string length = Header(request.substr(0, head_end), "Content-Length");
      wanted = head_end + 4 + (length.empty() ? 0 : std::stoul(length));
    }
    if (head_end != std::string::npos && request.size() >= wanted) break;
    pollfd readable{connection, POLLIN, 0};
    if (poll(&readable, 1, 5000) <= 0) return;
    ssize_t n = read(connection, buffer, sizeof(buffer));
    if (n <= 0) return;
    request.append(buffer, static_cast<size_t>(n));
  }
  std::string head = request.substr(0, head_end);
  std::string body = request.substr(head_end + 4, wanted - head_end - 4);

  Request seen;
  std::string client_secret;
  bool has_secret = false;
  for (auto& [name, value] : ParseForm(body)) {
    if (name == "grant_type") seen.grant_type = value;
    if (name == "scope") seen.scope = value;
    if (name == "client_id") seen.client_id = value;
    if (name == "client_secret") client_secret = value, has_secret = true;
  }
  std::string authorization = Header(head, "Authorization");
  if (authorization.starts_with("Basic ")) {
    std::string credentials = Base64Decode(authorization.substr(6));
    size_t colon = credentials.find(':');
    if (colon != std::string::npos) {
      seen.client_id = FormDecode(credentials.substr(0, colon));
      client_secret = FormDecode(credentials.substr(colon + 1));
      has_secret = true;
    }
  }
  {
    std::lock_guard lock(mutex_);
    for (const auto& [id, secret] : clients_) {
      if (has_secret && id == seen.client_id && secret == client_secret) seen.authenticated = true;
    }
    requests_.push_back(seen);
  }

  int status = 200;
  std::string answer;
  if (unavailable_) {
    status = 503;
    answer = R"({"error":"temporarily_unavailable"})";
  } else if (!head.starts_with("POST ")) {
    status = 405;
    answer = R"({"error":"invalid_request"})";
  } else if (!seen.authenticated) {
    status = 401;
    answer = R"({"error":"invalid_client","error_description":"client authentication failed"})";
  } else if (seen.grant_type != "client_credentials") {
    status = 400;
    answer = R"({"error":"unsupported_grant_type"})";
  } else {
    answer = fmt::format(R"({{"access_token":"{}","token_type":"Bearer","expires_in":{}}})",
                         Token(seen.client_id, seen.scope), lifetime_seconds_.load());
  }
  std::string response = fmt::format(
      "HTTP/1.1 {} X\r\nContent-Type: application/json\r\nCache-Control: no-store\r\nContent-Length: {}\r\n"
      "Connection: close\r\n\r\n{}",
      status, answer.size(), answer);
  (void)!write(connection, response.data(), response.size());
}

std::string OidcTokenEndpoint::Token(const std::string& subject, const std::string& scope) const {
  const int64_t now =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::string header = Base64Url(R"({"alg":"RS256","typ":"JWT","kid":"sluice-test"})");
  std::string claims = Base64Url(fmt::format(
      R"({{"iss":"{}","aud":"{}","sub":"{}","iat":{},"exp":{},"scope":"{}"}})", kIssuer, kAudience, subject, now,
      now + lifetime_seconds_.load(), scope));
  std::string signing_input = header + "." + claims;
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  size_t length = 0;
  std::string signature;
  if (EVP_DigestSignInit(context.get(), nullptr, EVP_sha256(), nullptr, key_->pkey) == 1 &&
      EVP_DigestSign(context.get(), nullptr, &length,
                     reinterpret_cast<const unsigned char*>(signing_input.data()), signing_input.size()) == 1) {
    signature.resize(length);
    EVP_DigestSign(context.get(), reinterpret_cast<unsigned char*>(signature.data()), &length,
                   reinterpret_cast<const unsigned char*>(signing_input.data()), signing_input.size());
    signature.resize(length);
  }
  return signing_input + "." + Base64Url(signature);
}

}  // namespace sluice::testing
