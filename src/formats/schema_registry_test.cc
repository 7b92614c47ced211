// The client against a loopback HTTP server that answers as Confluent's REST API documents.
#include <atomic>
#include <string>

#include <gtest/gtest.h>

#include "formats/fake_registry.h"
#include "sluice/formats/schema_registry.h"
#include "sluice/core/error_classes.h"

namespace sluice::formats {
namespace {

using testing::FakeRegistry;
using testing::Response;

const std::string kOrderSchema = R"({\"type\":\"record\",\"name\":\"Order\",\"fields\":[{\"name\":\"id\",\"type\":\"long\"}]})";

Response Documented(const std::string& path, const std::string&) {
  if (path == "/schemas/ids/7") return {200, "{\"schema\": \"" + kOrderSchema + "\"}"};
  if (path == "/schemas/ids/8") return {200, R"({"schemaType": "PROTOBUF", "schema": "syntax = \"proto3\"; message E {}"})"};
  if (path == "/subjects/orders-value/versions/latest" || path == "/subjects/orders-value/versions/3") {
    return {200, R"({"subject": "orders-value", "version": 3, "id": 7, "schema": ")" + kOrderSchema + R"(",
                    "references": [{"name": "shop.Line", "subject": "line", "version": 1}]})"};
  }
  if (path == "/subjects/line/versions/1") {
    return {200, R"({"subject": "line", "version": 1, "id": 5, "schema": "\"string\"",
                    "references": [{"name": "shop.Sku", "subject": "sku", "version": 2}]})"};
  }
  if (path == "/subjects/sku/versions/2") return {200, R"({"subject": "sku", "version": 2, "id": 4, "schema": "\"long\""})"};
  if (path == "/subjects/a%2Fb%20c/versions/latest") return {200, R"({"subject": "a/b c", "version": 1, "id": 9, "schema": "\"int\""})"};
  if (path == "/subjects/loop/versions/1") {
    return {200, R"({"subject": "loop", "version": 1, "id": 10, "schema": "\"int\"",
                    "references": [{"name": "x", "subject": "loop", "version": 1}]})"};
  }
  if (path.starts_with("/schemas/ids/")) return {404, R"({"error_code": 40403, "message": "Schema not found"})"};
  return {404, R"({"error_code": 40401, "message": "Subject not found."})"};
}

std::unique_ptr<SchemaRegistryClient> ClientFor(const std::string& url, int retries = 0) {
  SchemaRegistryConfig config;
  config.url = url;
  config.retries = retries;
  config.timeout = std::chrono::milliseconds(2000);
  Result<std::unique_ptr<SchemaRegistryClient>> client = SchemaRegistryClient::Make(config);
  EXPECT_TRUE(client.ok()) << client.status().ToString();
  return std::move(client).value();
}

TEST(SchemaRegistryClientTest, FetchesASchemaByIdOnceAndCachesIt) {
  FakeRegistry registry(Documented);
  auto client = ClientFor(registry.url());
  Result<RegisteredSchemaPtr> first = client->GetById(7);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ((*first)->id, 7);
  EXPECT_EQ((*first)->format, SchemaFormat::kAvro) << "no schemaType means Avro";
  EXPECT_EQ((*first)->schema, R"({"type":"record","name":"Order","fields":[{"name":"id","type":"long"}]})");
  Result<RegisteredSchemaPtr> second = client->GetById(7);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->get(), first->get());
  EXPECT_EQ(client->requests_sent(), 1);
}

TEST(SchemaRegistryClientTest, ReadsTheSchemaType) {
  FakeRegistry registry(Documented);
  Result<RegisteredSchemaPtr> schema = ClientFor(registry.url())->GetById(8);
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  EXPECT_EQ((*schema)->format, SchemaFormat::kProtobuf);
  EXPECT_EQ((*schema)->schema, "syntax = \"proto3\"; message E {}");
}

TEST(SchemaRegistryClientTest, LatestIsAskedEachTimeAndSubjectsAreEscaped) {
  FakeRegistry registry(Documented);
  auto client = ClientFor(registry.url() + "/");
  Result<RegisteredSchemaPtr> latest = client->GetLatest("orders-value");
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  EXPECT_EQ((*latest)->subject, "orders-value");
  EXPECT_EQ((*latest)->version, 3);
  EXPECT_EQ((*latest)->id, 7);
  ASSERT_EQ((*latest)->references.size(), 1u);
  EXPECT_EQ((*latest)->references[0].name, "shop.Line");
  ASSERT_TRUE(client->GetLatest("orders-value").ok());
  ASSERT_TRUE(client->GetLatest("a/b c").ok());
  EXPECT_EQ(registry.paths(), (std::vector<std::string>{"/subjects/orders-value/versions/latest",
                                                        "/subjects/orders-value/versions/latest",
                                                        "/subjects/a%2Fb%20c/versions/latest"}));
}

TEST(SchemaRegistryClientTest, ResolvesReferencesRecursivelyDependenciesFirst) {
  FakeRegistry registry(Documented);
  auto client = ClientFor(registry.url());
  RegisteredSchemaPtr root = *client->GetVersion("orders-value", 3);
  Result<std::vector<ResolvedReference>> references = client->ResolveReferences(*root);
  ASSERT_TRUE(references.ok()) << references.status().ToString();
  ASSERT_EQ(references->size(), 2u);
  EXPECT_EQ((*references)[0].name, "shop.Sku");
  EXPECT_EQ((*references)[0].schema->schema, "\"long\"");
  EXPECT_EQ((*references)[1].name, "shop.Line");
  EXPECT_EQ((*references)[1].schema->id, 5);
}

TEST(SchemaRegistryClientTest, RefusesAReferenceCycle) {
  FakeRegistry registry(Documented);
  auto client = ClientFor(registry.url());
  RegisteredSchemaPtr loop = *client->GetVersion("loop", 1);
  Result<std::vector<ResolvedReference>> references = client->ResolveReferences(*loop);
  ASSERT_FALSE(references.ok());
  EXPECT_EQ(references.status().ToString(),
            "SCHEMA_REGISTRY_REQUEST_FAILED: schema reference cycle through subject loop version 1");
}

TEST(SchemaRegistryClientTest, UnknownIdsAndSubjectsAreNotFound) {
  FakeRegistry registry(Documented);
  auto client = ClientFor(registry.url());
  Result<RegisteredSchemaPtr> id = client->GetById(99);
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.status().ToString(), "SCHEMA_REGISTRY_NOT_FOUND: GET /schemas/ids/99: Schema not found");
  Result<RegisteredSchemaPtr> subject = client->GetLatest("nope");
  ASSERT_FALSE(subject.ok());
  EXPECT_EQ(subject.status().ToString(), "SCHEMA_REGISTRY_NOT_FOUND: GET /subjects/nope/versions/latest: Subject not found.");
}

TEST(SchemaRegistryClientTest, SendsBasicAuthAndReportsRefusalWithoutTheSecret) {
  FakeRegistry registry([](const std::string& path, const std::string& authorization) -> Response {
    // base64("key:s3cret")
    if (authorization != "Basic a2V5OnMzY3JldA==") return {401, R"({"error_code": 401, "message": "Unauthorized"})"};
    return Documented(path, authorization);
  });
  SchemaRegistryConfig config;
  config.url = registry.url();
  config.api_key = "key";
  config.api_secret = "s3cret";
  auto client = std::move(SchemaRegistryClient::Make(config)).value();
  EXPECT_TRUE(client->GetById(7).ok());
  config.api_secret = "wrong-s3cret";
  auto refused = std::move(SchemaRegistryClient::Make(config)).value();
  Result<RegisteredSchemaPtr> schema = refused->GetById(7);
  ASSERT_FALSE(schema.ok());
  EXPECT_EQ(schema.status().ToString(), "SCHEMA_REGISTRY_UNAUTHORIZED: GET /schemas/ids/7: HTTP 401: Unauthorized");
}

TEST(SchemaRegistryClientTest, RetriesServerErrorsThenFails) {
  std::atomic<int> calls{0};
  FakeRegistry registry([&](const std::string&, const std::string&) -> Response {
    ++calls;
    return {503, R"({"error_code": 50003, "message": "Error while forwarding the request to the leader"})"};
  });
  Result<RegisteredSchemaPtr> schema = ClientFor(registry.url(), 1)->GetById(7);
  ASSERT_FALSE(schema.ok());
  EXPECT_EQ(schema.status().ToString(),
            "SCHEMA_REGISTRY_REQUEST_FAILED: GET /schemas/ids/7: HTTP 503: Error while forwarding the request to the leader");
  EXPECT_EQ(calls, 2);
}

TEST(SchemaRegistryClientTest, RefusesABodyThatIsNotTheDocumentedJson) {
  FakeRegistry registry([](const std::string& path, const std::string&) -> Response {
    if (path == "/schemas/ids/1") return {200, "<html>proxy</html>"};
    if (path == "/schemas/ids/2") return {200, R"({"schema": 42})"};
    return {200, R"({"schema": "\"int\"", "schemaType": "XML"})"};
  });
  auto client = ClientFor(registry.url());
  EXPECT_EQ(client->GetById(1).status().ToString(), "SCHEMA_REGISTRY_REQUEST_FAILED: GET /schemas/ids/1: the answer is not a JSON object");
  EXPECT_EQ(client->GetById(2).status().ToString(), "SCHEMA_REGISTRY_REQUEST_FAILED: GET /schemas/ids/2: the answer has no \"schema\" string");
  EXPECT_EQ(client->GetById(3).status().ToString(), "SCHEMA_REGISTRY_REQUEST_FAILED: GET /schemas/ids/3: unknown schemaType \"XML\"");
}

TEST(SchemaRegistryClientTest, AnUnreachableRegistryFailsTheRequest) {
  int port;
  {
    FakeRegistry closed(Documented);
    port = std::stoi(closed.url().substr(17));
  }
  Result<RegisteredSchemaPtr> schema = ClientFor("http://127.0.0.1:" + std::to_string(port))->GetById(7);
  ASSERT_FALSE(schema.ok());
  EXPECT_EQ(schema.status().error_class(), "SCHEMA_REGISTRY_REQUEST_FAILED");
}

TEST(SchemaRegistryClientTest, RefusesAUrlThatIsNotHttp) {
  SchemaRegistryConfig config;
  config.url = "file:///etc/passwd";
  EXPECT_EQ(SchemaRegistryClient::Make(config).status().error_class(), "INVALID_ARGUMENT");
}

TEST(SubjectNameTest, FollowsConfluentsStrategies) {
  EXPECT_EQ(SubjectName(SubjectNameStrategy::kTopicName, "orders", "shop.Order", false), "orders-value");
  EXPECT_EQ(SubjectName(SubjectNameStrategy::kTopicName, "orders", "shop.Order", true), "orders-key");
  EXPECT_EQ(SubjectName(SubjectNameStrategy::kRecordName, "orders", "shop.Order", false), "shop.Order");
  EXPECT_EQ(SubjectName(SubjectNameStrategy::kTopicRecordName, "orders", "shop.Order", false), "orders-shop.Order");
}

TEST(SchemaRegistryOptionsTest, ValidatesAndConvertsTheDocumentedOptions) {
  setenv("SLUICE_TEST_REGISTRY_SECRET", "s3cret", 1);
  Result<ValidatedOptions> options = ValidateOptions(
      "schema registry", SchemaRegistryOptionSpecs(),
      {{"url", "https://registry:8081"}, {"api_key", "key"}, {"api_secret", "${env:SLUICE_TEST_REGISTRY_SECRET}"},
       {"format", "avro"}, {"timeout", "3s"}});
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  SchemaRegistryConfig config = SchemaRegistryConfigFromOptions(*options);
  EXPECT_EQ(config.url, "https://registry:8081");
  EXPECT_EQ(config.api_secret, "s3cret");
  EXPECT_EQ(config.timeout, std::chrono::milliseconds(3000));
  EXPECT_EQ(options->GetDuration("schema_refresh_interval"), std::chrono::hours(2));
  EXPECT_EQ(options->GetString("subject_name_strategy"), "TopicNameStrategy");
  Result<ValidatedOptions> unknown =
      ValidateOptions("schema registry", SchemaRegistryOptionSpecs(), {{"url", "http://r"}, {"format", "avro"}, {"apikey", "k"}});
  EXPECT_FALSE(unknown.ok());
  // `format` is required: the subject's schema type is not guessed.
  Result<ValidatedOptions> no_format =
      ValidateOptions("schema registry", SchemaRegistryOptionSpecs(), {{"url", "http://r"}, {"subject", "orders"}});
  ASSERT_FALSE(no_format.ok());
  EXPECT_EQ(no_format.status().error_class(), errors::kInvalidOptions);
  EXPECT_NE(no_format.status().message().find("format"), std::string::npos) << no_format.status().ToString();
}

}  // namespace
}  // namespace sluice::formats
