#include "sluice/storage/aws_credentials.h"

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <simdjson.h>

#include "sluice/core/ascii.h"
#include "sluice/core/clock.h"
#include "sluice/core/error_classes.h"
#include "sluice/storage/xml_reply.h"
#include "environment.h"

namespace sluice::storage {
namespace {

constexpr int64_t kRefreshBeforeExpiryMs = 5 * 60 * 1000;

int64_t NowMs() { return SystemClock()->NowMicros() / 1000; }

std::string Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.remove_suffix(1);
  return std::string(text);
}

// key = value pairs of one [section] of an INI file.
std::map<std::string, std::string> IniSection(const std::string& path, const std::string& section) {
  std::map<std::string, std::string> values;
  std::ifstream in(path);
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    std::string text = Trim(line);
    if (text.empty() || text[0] == '#' || text[0] == ';') continue;
    if (text.front() == '[' && text.back() == ']') {
      inside = Trim(std::string_view(text).substr(1, text.size() - 2)) == section;
      continue;
    }
    const size_t equals = text.find('=');
    if (inside && equals != std::string::npos) {
      values[AsciiLower(Trim(std::string_view(text).substr(0, equals)))] = Trim(std::string_view(text).substr(equals + 1));
    }
  }
  return values;
}

std::optional<AwsCredentials> FromValues(const std::map<std::string, std::string>& values) {
  auto key = values.find("aws_access_key_id");
  auto secret = values.find("aws_secret_access_key");
  if (key == values.end() || secret == values.end() || key->second.empty() || secret->second.empty()) {
    return std::nullopt;
  }
  AwsCredentials credentials{key->second, secret->second};
  if (auto token = values.find("aws_session_token"); token != values.end()) credentials.session_token = token->second;
  return credentials;
}

std::string HomeFile(const char* variable, const char* under_home) {
  std::string path = Env(variable);
  if (!path.empty()) return path;
  std::string home = Env("HOME");
  return home.empty() ? std::string() : home + "/" + under_home;
}

Status Denied(std::string_view service, const HttpResponse& response) {
  ErrorReply reply = ParseErrorReply(response.body);
  return Status::Error(errors::kStorageAccessDenied,
                       fmt::format("{} refused to give credentials: HTTP {} {}", service, response.status, reply.code));
}

Result<AwsCredentials> FromWebIdentity(HttpClient* http, const std::string& region) {
  const std::string token_file = Env("AWS_WEB_IDENTITY_TOKEN_FILE");
  std::ifstream in(token_file);
  if (!in) {
    return Status::Error(errors::kStorageCredentialsNotFound,
                         fmt::format("the web identity token file {} cannot be read", token_file));
  }
  std::stringstream token;
  token << in.rdbuf();
  std::string endpoint = Env("AWS_ENDPOINT_URL_STS");
  if (endpoint.empty()) endpoint = fmt::format("https://sts.{}.amazonaws.com", region.empty() ? "us-east-1" : region);
  std::string session = Env("AWS_ROLE_SESSION_NAME");
  if (session.empty()) session = fmt::format("sluice-{}", NowMs());
  // The form body of STS's query API; the call itself is not signed (the token is the proof).
  const std::string form = CanonicalQuery({{"Action", "AssumeRoleWithWebIdentity"},
                                           {"Version", "2011-06-15"},
                                           {"RoleArn", Env("AWS_ROLE_ARN")},
                                           {"RoleSessionName", session},
                                           {"WebIdentityToken", Trim(token.str())}});
  SLUICE_ASSIGN_OR_RETURN(
      HttpResponse response,
      http->Send({"POST", endpoint + "/", {{"Content-Type", "application/x-www-form-urlencoded"}}, form}));
  if (response.status != 200) return Denied("STS AssumeRoleWithWebIdentity", response);
  AwsCredentials credentials;
  SLUICE_ASSIGN_OR_RETURN(std::optional<std::string> key, XmlElement(response.body, "AccessKeyId"));
  SLUICE_ASSIGN_OR_RETURN(std::optional<std::string> secret, XmlElement(response.body, "SecretAccessKey"));
  SLUICE_ASSIGN_OR_RETURN(std::optional<std::string> session_token, XmlElement(response.body, "SessionToken"));
  SLUICE_ASSIGN_OR_RETURN(std::optional<std::string> expiration, XmlElement(response.body, "Expiration"));
  if (!key || !secret || !session_token) {
    return Status::Error(errors::kIoError, "STS's AssumeRoleWithWebIdentity answer has no credentials");
  }
  credentials = {*key, *secret, *session_token, expiration ? ParseStoreTime(*expiration).value_or(0) : 0};
  return credentials;
}

// Its own client with short timeouts: off EC2 nothing answers at the link-local address, and the
// chain must fail fast there.
Result<AwsCredentials> FromInstanceMetadata() {
  HttpClient client({std::chrono::milliseconds(1000), std::chrono::milliseconds(5000), ""});
  HttpClient* http = &client;
  std::string endpoint = Env("AWS_EC2_METADATA_SERVICE_ENDPOINT");
  if (endpoint.empty()) endpoint = "http://169.254.169.254";
  while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
  SLUICE_ASSIGN_OR_RETURN(HttpResponse session,
                          http->Send({"PUT", endpoint + "/latest/api/token",
                                      {{"X-aws-ec2-metadata-token-ttl-seconds", "21600"}}, {}}));
  if (session.status != 200) return Denied("the instance metadata service", session);
  const HttpHeaders token{{"X-aws-ec2-metadata-token", session.body}};
  const std::string base = endpoint + "/latest/meta-data/iam/security-credentials/";
  SLUICE_ASSIGN_OR_RETURN(HttpResponse role, http->Send({"GET", base, token, {}}));
  if (role.status != 200) return Denied("the instance metadata service", role);
  const std::string role_name = Trim(role.body.substr(0, role.body.find('\n')));
  SLUICE_ASSIGN_OR_RETURN(HttpResponse answer, http->Send({"GET", base + role_name, token, {}}));
  if (answer.status != 200) return Denied("the instance metadata service", answer);
  simdjson::dom::parser parser;
  simdjson::dom::element document;
  std::string_view key, secret, session_token, expiration;
  if (parser.parse(answer.body).get(document) != simdjson::SUCCESS ||
      document["AccessKeyId"].get(key) != simdjson::SUCCESS ||
      document["SecretAccessKey"].get(secret) != simdjson::SUCCESS) {
    return Status::Error(errors::kIoError, "the instance metadata service's credentials are not the expected JSON");
  }
  if (document["Token"].get(session_token) != simdjson::SUCCESS) session_token = {};
  if (document["Expiration"].get(expiration) != simdjson::SUCCESS) expiration = {};
  return AwsCredentials{std::string(key), std::string(secret), std::string(session_token),
                        ParseStoreTime(expiration).value_or(0)};
}

}  // namespace

std::optional<AwsCredentials> CredentialsFromSharedFiles(const std::string& credentials_file,
                                                         const std::string& config_file, const std::string& profile) {
  if (!credentials_file.empty()) {
    if (auto found = FromValues(IniSection(credentials_file, profile))) return found;
  }
  if (!config_file.empty()) {
    return FromValues(IniSection(config_file, profile == "default" ? profile : "profile " + profile));
  }
  return std::nullopt;
}

AwsCredentialProvider::AwsCredentialProvider(AwsCredentialSettings settings, HttpClient* http)
    : settings_(std::move(settings)), http_(http) {}

Result<AwsCredentials> AwsCredentialProvider::Get() {
  std::lock_guard lock(mutex_);
  if (cached_ && (cached_->expires_at_ms == 0 || cached_->expires_at_ms - NowMs() > kRefreshBeforeExpiryMs)) {
    return *cached_;
  }
  SLUICE_ASSIGN_OR_RETURN(AwsCredentials credentials, Resolve());
  cached_ = credentials;
  return credentials;
}

Result<AwsCredentials> AwsCredentialProvider::Resolve() {
  if (settings_.given) return *settings_.given;
  const std::string key = Env("AWS_ACCESS_KEY_ID"), secret = Env("AWS_SECRET_ACCESS_KEY");
  if (!key.empty() && !secret.empty()) return AwsCredentials{key, secret, Env("AWS_SESSION_TOKEN")};
  std::string profile = settings_.profile.empty() ? Env("AWS_PROFILE") : settings_.profile;
  if (profile.empty()) profile = "default";
  if (auto shared = CredentialsFromSharedFiles(HomeFile("AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials"),
                                               HomeFile("AWS_CONFIG_FILE", ".aws/config"), profile)) {
    return *shared;
  }
  if (!Env("AWS_WEB_IDENTITY_TOKEN_FILE").empty() && !Env("AWS_ROLE_ARN").empty()) {
    return FromWebIdentity(http_, settings_.region);
  }
  if (AsciiLower(Env("AWS_EC2_METADATA_DISABLED")) != "true") {
    Result<AwsCredentials> metadata = FromInstanceMetadata();
    if (metadata.ok() || metadata.status().error_class() == errors::kStorageAccessDenied) return metadata;
  }
  return Status::Error(
      errors::kStorageCredentialsNotFound,
      fmt::format("no S3 credentials: not in the store's options, nor AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, nor "
                  "profile `{}` of the shared credentials and config files, nor a web identity "
                  "(AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN), nor the instance metadata service",
                  profile));
}

}  // namespace sluice::storage
