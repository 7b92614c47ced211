// Schema Registry client over libcurl. One easy handle, reused under the mutex so connections
// are kept alive between requests. Bodies are parsed with simdjson's DOM and checked field by
// field: a registry is outside input like any other.
#include "sluice/formats/schema_registry.h"

#include <algorithm>
#include <mutex>
#include <thread>

#include <curl/curl.h>
#include <fmt/format.h>
#include <simdjson.h>

#include "sluice/core/error_classes.h"

namespace sluice::formats {
namespace {

constexpr int kMaxReferenceDepth = 32;

size_t AppendBody(char* data, size_t size, size_t count, void* body) {
  static_cast<std::string*>(body)->append(data, size * count);
  return size * count;
}

Status RequestFailed(const std::string& path, std::string_view what) {
  return Status::Error(errors::kSchemaRegistryRequestFailed, fmt::format("GET {}: {}", path, what));
}

// The registry's own explanation in an error body: {"error_code": 40403, "message": "..."}.
std::string RegistryMessage(const std::string& body) {
  simdjson::dom::parser parser;
  std::string_view message;
  if (parser.parse(body).get_object()["message"].get_string().get(message) == simdjson::SUCCESS) {
    return std::string(message);
  }
  return body.substr(0, 200);
}

Result<RegisteredSchemaPtr> ParseSchemaBody(const std::string& path, const std::string& body) {
  simdjson::dom::parser parser;
  simdjson::dom::object object;
  if (parser.parse(body).get_object().get(object) != simdjson::SUCCESS) {
    return RequestFailed(path, "the answer is not a JSON object");
  }
  auto schema = std::make_shared<RegisteredSchema>();
  std::string_view text;
  if (object["schema"].get_string().get(text) != simdjson::SUCCESS) return RequestFailed(path, "the answer has no \"schema\" string");
  schema->schema = std::string(text);
  std::string_view type = "AVRO";
  if (auto field = object["schemaType"]; field.error() == simdjson::SUCCESS && field.get_string().get(type) != simdjson::SUCCESS) {
    return RequestFailed(path, "\"schemaType\" is not a string");
  }
  if (type == "AVRO") {
    schema->format = SchemaFormat::kAvro;
  } else if (type == "PROTOBUF") {
    schema->format = SchemaFormat::kProtobuf;
  } else if (type == "JSON") {
    schema->format = SchemaFormat::kJson;
  } else {
    return RequestFailed(path, fmt::format("unknown schemaType \"{}\"", type));
  }
  int64_t number;
  if (object["id"].get_int64().get(number) == simdjson::SUCCESS) schema->id = static_cast<int32_t>(number);
  if (object["version"].get_int64().get(number) == simdjson::SUCCESS) schema->version = static_cast<int32_t>(number);
  if (object["subject"].get_string().get(text) == simdjson::SUCCESS) schema->subject = std::string(text);
  simdjson::dom::array references;
  if (object["references"].get_array().get(references) == simdjson::SUCCESS) {
    for (simdjson::dom::element reference : references) {
      SchemaReference parsed;
      std::string_view name, subject;
      int64_t version;
      if (reference["name"].get_string().get(name) != simdjson::SUCCESS ||
          reference["subject"].get_string().get(subject) != simdjson::SUCCESS ||
          reference["version"].get_int64().get(version) != simdjson::SUCCESS) {
        return RequestFailed(path, "a reference lacks its name, subject or version");
      }
      schema->references.push_back({std::string(name), std::string(subject), static_cast<int32_t>(version)});
    }
  }
  return RegisteredSchemaPtr(std::move(schema));
}

constexpr std::string_view kFormats[] = {"avro", "protobuf", "json"};
constexpr std::string_view kStrategies[] = {"TopicNameStrategy", "RecordNameStrategy", "TopicRecordNameStrategy"};
constexpr OptionSpec kOptionSpecs[] = {
    {.name = "url", .required = true, .doc = "the registry's base URL, http:// or https://"},
    {.name = "api_key", .doc = "basic-auth user (Confluent Cloud API key)"},
    {.name = "api_secret", .type = OptionType::kSecret, .doc = "basic-auth password: a ${env:...} or ${file:...} reference"},
    {.name = "format", .type = OptionType::kEnum, .required = true, .doc = "the schemas' format: avro, protobuf or json",
     .allowed_values = kFormats},
    {.name = "subject_name_strategy", .type = OptionType::kEnum, .default_value = "TopicNameStrategy",
     .doc = "how a topic maps to its subject", .allowed_values = kStrategies},
    {.name = "record_name", .doc = "the record's full name, for RecordNameStrategy and TopicRecordNameStrategy"},
    {.name = "subject", .doc = "the subject to read, instead of the one subject_name_strategy names"},
    {.name = "version", .default_value = "latest", .doc = "the subject's version to read: latest or a number"},
    {.name = "schema_refresh_interval", .type = OptionType::kDuration, .default_value = "2 hours",
     .doc = "how often the subject's latest schema is looked up again"},
    {.name = "ssl_ca_location", .doc = "PEM file of the CA that signed an HTTPS registry's certificate"},
    {.name = "timeout", .type = OptionType::kDuration, .default_value = "10s", .doc = "the longest a request may take"},
};

}  // namespace

std::string SubjectName(SubjectNameStrategy strategy, std::string_view topic, std::string_view record_name, bool is_key) {
  switch (strategy) {
    case SubjectNameStrategy::kTopicName: return fmt::format("{}-{}", topic, is_key ? "key" : "value");
    case SubjectNameStrategy::kRecordName: return std::string(record_name);
    case SubjectNameStrategy::kTopicRecordName: return fmt::format("{}-{}", topic, record_name);
  }
  return std::string(topic);
}

std::span<const OptionSpec> SchemaRegistryOptionSpecs() { return kOptionSpecs; }

SchemaRegistryConfig SchemaRegistryConfigFromOptions(const ValidatedOptions& options) {
  SchemaRegistryConfig config;
  config.url = options.GetString("url");
  if (options.Has("api_key")) config.api_key = options.GetString("api_key");
  if (options.Has("api_secret")) config.api_secret = options.GetSecret("api_secret");
  if (options.Has("ssl_ca_location")) config.ca_file = options.GetString("ssl_ca_location");
  config.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(options.GetDuration("timeout"));
  return config;
}

Result<std::unique_ptr<SchemaRegistryClient>> SchemaRegistryClient::Make(SchemaRegistryConfig config) {
  if (!config.url.starts_with("http://") && !config.url.starts_with("https://")) {
    return Status::Error(errors::kInvalidArgument, "the schema registry url must start with http:// or https://");
  }
  while (config.url.ends_with('/')) config.url.pop_back();
  static std::once_flag curl_initialized;
  std::call_once(curl_initialized, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  std::unique_ptr<SchemaRegistryClient> client(new SchemaRegistryClient(std::move(config)));
  if (client->curl_ == nullptr) return Status::Error(errors::kInternalError, "libcurl could not make a handle");
  return client;
}

SchemaRegistryClient::SchemaRegistryClient(SchemaRegistryConfig config) : config_(std::move(config)), curl_(curl_easy_init()) {}

SchemaRegistryClient::~SchemaRegistryClient() {
  if (curl_ != nullptr) curl_easy_cleanup(static_cast<CURL*>(curl_));
}

int64_t SchemaRegistryClient::requests_sent() const {
  std::lock_guard lock(mutex_);
  return requests_sent_;
}

// Called with mutex_ held.
Result<std::string> SchemaRegistryClient::Get(const std::string& path) {
  CURL* curl = static_cast<CURL*>(curl_);
  std::chrono::milliseconds backoff(100);
  for (int attempt = 0;; ++attempt) {
    curl_easy_reset(curl);
    std::string body;
    std::string url = config_.url + path;
    curl_slist* headers = curl_slist_append(nullptr, "Accept: application/vnd.schemaregistry.v1+json, application/json");
    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, AppendBody);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(config_.timeout.count()));
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    if (!config_.api_key.empty()) {
      curl_easy_setopt(curl, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
      curl_easy_setopt(curl, CURLOPT_USERNAME, config_.api_key.c_str());
      curl_easy_setopt(curl, CURLOPT_PASSWORD, config_.api_secret.c_str());
    }
    if (!config_.ca_file.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, config_.ca_file.c_str());
    CURLcode code = curl_easy_perform(curl);
    curl_slist_free_all(headers);
    ++requests_sent_;
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    bool retriable = code != CURLE_OK || status >= 500;
    if (retriable && attempt < config_.retries) {
      std::this_thread::sleep_for(backoff);
      backoff *= 2;
      continue;
    }
    if (code != CURLE_OK) return RequestFailed(path, curl_easy_strerror(code));
    if (status == 401 || status == 403) {
      return Status::Error(errors::kSchemaRegistryUnauthorized,
                           fmt::format("GET {}: HTTP {}: {}", path, status, RegistryMessage(body)));
    }
    if (status == 404) {
      return Status::Error(errors::kSchemaRegistryNotFound, fmt::format("GET {}: {}", path, RegistryMessage(body)));
    }
    if (status != 200) return RequestFailed(path, fmt::format("HTTP {}: {}", status, RegistryMessage(body)));
    return body;
  }
}

Result<RegisteredSchemaPtr> SchemaRegistryClient::GetById(int32_t id) {
  std::lock_guard lock(mutex_);
  if (auto it = by_id_.find(id); it != by_id_.end()) return it->second;
  std::string path = fmt::format("/schemas/ids/{}", id);
  SLUICE_ASSIGN_OR_RETURN(std::string body, Get(path));
  SLUICE_ASSIGN_OR_RETURN(RegisteredSchemaPtr parsed, ParseSchemaBody(path, body));
  auto schema = std::make_shared<RegisteredSchema>(*parsed);
  schema->id = id;
  by_id_[id] = schema;
  return RegisteredSchemaPtr(schema);
}

Result<RegisteredSchemaPtr> SchemaRegistryClient::GetSubjectVersion(std::string_view subject, std::string_view version) {
  char* escaped = curl_easy_escape(static_cast<CURL*>(curl_), subject.data(), static_cast<int>(subject.size()));
  if (escaped == nullptr) return Status::Error(errors::kInternalError, "libcurl could not escape a subject");
  std::string path = fmt::format("/subjects/{}/versions/{}", escaped, version);
  curl_free(escaped);
  SLUICE_ASSIGN_OR_RETURN(std::string body, Get(path));
  return ParseSchemaBody(path, body);
}

Result<RegisteredSchemaPtr> SchemaRegistryClient::GetLatest(std::string_view subject) {
  std::lock_guard lock(mutex_);
  return GetSubjectVersion(subject, "latest");
}

Result<RegisteredSchemaPtr> SchemaRegistryClient::GetVersion(std::string_view subject, int32_t version) {
  std::lock_guard lock(mutex_);
  std::string key = fmt::format("{}\n{}", subject, version);
  if (auto it = by_subject_version_.find(key); it != by_subject_version_.end()) return it->second;
  SLUICE_ASSIGN_OR_RETURN(RegisteredSchemaPtr schema, GetSubjectVersion(subject, std::to_string(version)));
  by_subject_version_[key] = schema;
  return schema;
}

Status SchemaRegistryClient::Resolve(const RegisteredSchema& schema, int depth, std::vector<std::string>* visiting,
                                     std::vector<ResolvedReference>* out) {
  if (depth > kMaxReferenceDepth) {
    return Status::Error(errors::kSchemaRegistryRequestFailed,
                         fmt::format("schema references nest deeper than {} levels", kMaxReferenceDepth));
  }
  for (const SchemaReference& reference : schema.references) {
    std::string key = fmt::format("{}\n{}", reference.subject, reference.version);
    if (std::find(visiting->begin(), visiting->end(), key) != visiting->end()) {
      return Status::Error(errors::kSchemaRegistryRequestFailed,
                           fmt::format("schema reference cycle through subject {} version {}", reference.subject, reference.version));
    }
    bool seen = std::any_of(out->begin(), out->end(), [&](const ResolvedReference& r) {
      return r.schema->subject == reference.subject && r.schema->version == reference.version;
    });
    if (seen) continue;
    SLUICE_ASSIGN_OR_RETURN(RegisteredSchemaPtr referenced, GetVersion(reference.subject, reference.version));
    visiting->push_back(key);
    SLUICE_RETURN_IF_ERROR(Resolve(*referenced, depth + 1, visiting, out));
    visiting->pop_back();
    out->push_back({reference.name, referenced});
  }
  return Status::OK();
}

Result<std::vector<ResolvedReference>> SchemaRegistryClient::ResolveReferences(const RegisteredSchema& schema) {
  std::vector<std::string> visiting;
  std::vector<ResolvedReference> out;
  SLUICE_RETURN_IF_ERROR(Resolve(schema, 0, &visiting, &out));
  return out;
}

}  // namespace sluice::formats
