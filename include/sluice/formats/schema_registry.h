// A client of Confluent Schema Registry's REST API (the subset a decoder needs):
//   GET /schemas/ids/{id}                               the schema a framed message names
//   GET /subjects/{subject}/versions/latest|{version}   a subject's reader schema, and references
// over HTTP or HTTPS (libcurl), with HTTP basic auth when `api_key` is given.
//
// Schemas fetched by id, and by subject at a numbered version, never change in a registry, so
// they are cached for the client's life; `latest` is asked afresh each time (the caller decides
// how often, see schema_refresh_interval). Errors:
//   SCHEMA_REGISTRY_NOT_FOUND      no such schema id, subject or version (HTTP 404)
//   SCHEMA_REGISTRY_UNAUTHORIZED   the credentials were refused (HTTP 401/403)
//   SCHEMA_REGISTRY_REQUEST_FAILED anything else: transport error, timeout, other status, or a
//                                  body that is not the documented JSON
// Messages name the request path and the registry's own message, never the credentials.
//
// Thread safety: all methods may be called from several threads; requests are serialized.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/options.h"
#include "sluice/core/status.h"
#include "sluice/formats/decoder.h"

namespace sluice::formats {

struct SchemaReference {
  std::string name;     // Avro: the referenced type's full name; Protobuf: the import path
  std::string subject;
  int32_t version = 0;
};

struct RegisteredSchema {
  int32_t id = 0;
  std::string subject;   // empty when fetched by id
  int32_t version = 0;   // 0 when fetched by id
  SchemaFormat format = SchemaFormat::kAvro;  // the registry's schemaType; absent means Avro
  std::string schema;    // the schema text
  std::vector<SchemaReference> references;
};
using RegisteredSchemaPtr = std::shared_ptr<const RegisteredSchema>;

// A schema a reference resolved to, with the name it was referenced by.
struct ResolvedReference {
  std::string name;
  RegisteredSchemaPtr schema;
};

struct SchemaRegistryConfig {
  std::string url;         // "http://host:8081" or "https://host/prefix"
  std::string api_key;     // basic-auth user; empty for no authentication
  std::string api_secret;  // basic-auth password, already resolved from its secret reference
  std::string ca_file;     // PEM bundle to verify an HTTPS registry; empty for the system's
  std::chrono::milliseconds timeout{10000};
  // Extra attempts after a transport error or a 5xx answer, 100 ms apart and doubling.
  int retries = 2;
};

// How a topic's messages map to a registry subject.
enum class SubjectNameStrategy { kTopicName, kRecordName, kTopicRecordName };

// "<topic>-key" / "<topic>-value", "<record>", or "<topic>-<record>".
std::string SubjectName(SubjectNameStrategy strategy, std::string_view topic, std::string_view record_name, bool is_key);

// The options of a stream's `schema_registry` block, for ValidateOptions():
//   url (required), api_key, api_secret (secret; pass a reference), format (avro | protobuf |
//   json), subject_name_strategy (TopicNameStrategy | RecordNameStrategy |
//   TopicRecordNameStrategy), record_name, subject (overrides the strategy), version (latest or a
//   number), schema_refresh_interval (default 2 hours), ssl_ca_location, timeout (10s).
std::span<const OptionSpec> SchemaRegistryOptionSpecs();
// The client configuration from options validated against SchemaRegistryOptionSpecs().
SchemaRegistryConfig SchemaRegistryConfigFromOptions(const ValidatedOptions& options);

class SchemaRegistryClient {
 public:
  // Fails with INVALID_ARGUMENT when the url is not http(s)://.
  static Result<std::unique_ptr<SchemaRegistryClient>> Make(SchemaRegistryConfig config);
  ~SchemaRegistryClient();
  SchemaRegistryClient(const SchemaRegistryClient&) = delete;
  SchemaRegistryClient& operator=(const SchemaRegistryClient&) = delete;

  Result<RegisteredSchemaPtr> GetById(int32_t id);
  Result<RegisteredSchemaPtr> GetLatest(std::string_view subject);
  Result<RegisteredSchemaPtr> GetVersion(std::string_view subject, int32_t version);
  // Every schema `schema` references, directly or not, each once, dependencies before the
  // schemas that use them. A reference cycle or a chain deeper than 32 fails (REQUEST_FAILED).
  Result<std::vector<ResolvedReference>> ResolveReferences(const RegisteredSchema& schema);

  // How many HTTP requests were sent (for tests of the cache).
  int64_t requests_sent() const;

 private:
  explicit SchemaRegistryClient(SchemaRegistryConfig config);
  Result<std::string> Get(const std::string& path);
  Result<RegisteredSchemaPtr> GetSubjectVersion(std::string_view subject, std::string_view version);
  Status Resolve(const RegisteredSchema& schema, int depth, std::vector<std::string>* visiting,
                 std::vector<ResolvedReference>* out);

  SchemaRegistryConfig config_;
  mutable std::mutex mutex_;
  void* curl_ = nullptr;  // CURL*, used under mutex_
  int64_t requests_sent_ = 0;
  std::map<int32_t, RegisteredSchemaPtr> by_id_;
  std::map<std::string, RegisteredSchemaPtr> by_subject_version_;  // "subject\n42"
};

}  // namespace sluice::formats
