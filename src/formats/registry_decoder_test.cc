#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "formats/fake_registry.h"
#include "formats/decoder_test_util.h"
#include "sluice/core/builder.h"
#include "sluice/formats/registry_decoder.h"

namespace sluice::formats {
namespace {

using testing::FakeRegistry;
using testing::Response;

// Schema 1 is the writer's older version (id int, no email); schema 2 the subject's latest.
Response Registry(const std::string& path, const std::string&) {
  if (path == "/schemas/ids/1") {
    return {200, R"({"schema": "{\"type\":\"record\",\"name\":\"User\",\"fields\":[{\"name\":\"id\",\"type\":\"int\"}]}"})"};
  }
  if (path == "/schemas/ids/2" || path == "/subjects/users-value/versions/latest") {
    return {200, R"({"subject": "users-value", "version": 2, "id": 2, "schema": "{\"type\":\"record\",\"name\":\"User\",\"fields\":[{\"name\":\"id\",\"type\":\"long\"},{\"name\":\"email\",\"type\":[\"null\",\"string\"],\"default\":null}]}"})"};
  }
  if (path == "/schemas/ids/3") {
    return {200, R"({"schema": "{\"type\":\"record\",\"name\":\"User\",\"fields\":[{\"name\":\"name\",\"type\":\"string\"}]}"})"};
  }
  if (path == "/schemas/ids/4") return {200, R"({"schemaType": "PROTOBUF", "schema": "message User {}"})"};
  if (path == "/subjects/events-value/versions/latest") {
    return {200, R"({"subject": "events-value", "version": 1, "id": 9, "schemaType": "JSON", "schema": "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\"}}}"})"};
  }
  if (path == "/subjects/orders-value/versions/latest") {
    return {200, R"({"subject": "orders-value", "version": 1, "id": 20, "schemaType": "PROTOBUF", "schema": "syntax = \"proto3\"; package shop; import \"money.proto\"; message Order { string id = 1; Money total = 2; }", "references": [{"name": "money.proto", "subject": "money", "version": 1}]})"};
  }
  if (path == "/subjects/money/versions/1") {
    return {200, R"({"subject": "money", "version": 1, "id": 21, "schemaType": "PROTOBUF", "schema": "syntax = \"proto3\"; package shop; message Money { int64 cents = 1; }"})"};
  }
  if (path == "/schemas/ids/500") return {500, R"({"error_code": 50001, "message": "Error in the backend data store"})"};
  return {404, R"({"error_code": 40403, "message": "Schema not found"})"};
}

std::string Framed(int32_t id, std::string payload) {
  std::string framed(1, '\0');
  for (int shift = 24; shift >= 0; shift -= 8) framed.push_back(static_cast<char>((id >> shift) & 0xff));
  return framed + payload;
}

std::string ZigZag(int64_t value) {
  uint64_t z = (static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63);
  std::string out;
  while (z >= 0x80) {
    out.push_back(static_cast<char>((z & 0x7f) | 0x80));
    z >>= 7;
  }
  out.push_back(static_cast<char>(z));
  return out;
}

std::shared_ptr<SchemaRegistryClient> Client(const FakeRegistry& registry) {
  SchemaRegistryConfig config;
  config.url = registry.url();
  config.retries = 0;
  return std::shared_ptr<SchemaRegistryClient>(SchemaRegistryClient::Make(config).value());
}

TEST(RegistryDecoderTest, RowsOfEveryWriterSchemaLandInTheReaderSchemasColumns) {
  FakeRegistry registry(Registry);
  auto client = Client(registry);
  std::unique_ptr<Decoder> decoder = MakeRegistryDecoder(client, *client->GetLatest("users-value")).value();
  EXPECT_EQ(decoder->type()->ToString(), "struct<id:bigint,email:string>");
  DecodeStats stats;
  ColumnPtr column = *decoder->Decode(*testing::BinaryColumn({Framed(2, ZigZag(10) + ZigZag(1) + ZigZag(3) + "a@b"),
                                               Framed(1, ZigZag(-4)),
                                               std::nullopt,
                                               Framed(2, ZigZag(11) + ZigZag(0))}),
                                      &stats);
  ASSERT_TRUE(column->Validate().ok());
  ASSERT_EQ(column->length, 4);
  EXPECT_EQ(column->children[0]->Value<int64_t>(0), 10);
  EXPECT_EQ(column->children[1]->View(0), "a@b");
  EXPECT_EQ(column->children[0]->Value<int64_t>(1), -4) << "an int written with schema 1 read as the reader's long";
  EXPECT_TRUE(column->children[1]->IsNull(1)) << "the field schema 1 lacks takes its default";
  EXPECT_TRUE(column->IsNull(2));
  EXPECT_EQ(column->children[0]->Value<int64_t>(3), 11);
  EXPECT_EQ(stats.malformed, 0);
  EXPECT_EQ(stats.rows, 4);
}

TEST(RegistryDecoderTest, UnframedUnknownUnresolvableOrBrokenValuesAreMalformed) {
  FakeRegistry registry(Registry);
  auto client = Client(registry);
  std::unique_ptr<Decoder> decoder = MakeRegistryDecoder(client, *client->GetLatest("users-value")).value();
  DecodeStats stats;
  ColumnPtr column = *decoder->Decode(*testing::BinaryColumn({Framed(2, ZigZag(1) + ZigZag(0)),
                                               "plain text",                    // no header
                                               Framed(77, ZigZag(1)),          // the registry has no schema 77
                                               Framed(3, ZigZag(1) + "x"),     // no field in common with the reader
                                               Framed(4, ""),                  // a Protobuf writer
                                               Framed(2, ZigZag(1))}),         // truncated datum
                                      &stats);
  ASSERT_TRUE(column->Validate().ok());
  EXPECT_TRUE(column->IsValid(0));
  for (int row = 1; row < 6; ++row) EXPECT_TRUE(column->IsNull(row)) << row;
  EXPECT_EQ(stats.malformed, 5);
  EXPECT_EQ(stats.malformed_rows, (std::vector<int64_t>{1, 2, 3, 4, 5}));
}

TEST(RegistryDecoderTest, EachWriterSchemaIsFetchedOnce) {
  FakeRegistry registry(Registry);
  auto client = Client(registry);
  std::unique_ptr<Decoder> decoder = MakeRegistryDecoder(client, *client->GetLatest("users-value")).value();
  for (int batch = 0; batch < 3; ++batch) {
    ASSERT_TRUE(decoder->Decode(*testing::BinaryColumn({Framed(1, ZigZag(1)), Framed(77, "")}), nullptr).ok());
  }
  std::vector<std::string> paths = registry.paths();
  EXPECT_EQ(std::count(paths.begin(), paths.end(), "/schemas/ids/1"), 1);
  EXPECT_EQ(std::count(paths.begin(), paths.end(), "/schemas/ids/77"), 1) << "an unknown id is remembered too";
}

TEST(RegistryDecoderTest, ARegistryThatCannotAnswerFailsTheBatchForARetry) {
  FakeRegistry registry(Registry);
  auto client = Client(registry);
  std::unique_ptr<Decoder> decoder = MakeRegistryDecoder(client, *client->GetLatest("users-value")).value();
  Result<ColumnPtr> column = decoder->Decode(*testing::BinaryColumn({Framed(500, "")}), nullptr);
  ASSERT_FALSE(column.ok());
  EXPECT_EQ(column.status().error_class(), "SCHEMA_REGISTRY_REQUEST_FAILED");
}

TEST(RegistryDecoderTest, JsonValuesDecodeWithTheReadersJsonSchema) {
  FakeRegistry registry(Registry);
  auto client = Client(registry);
  std::unique_ptr<Decoder> decoder = MakeRegistryDecoder(client, *client->GetLatest("events-value")).value();
  DecodeStats stats;
  ColumnPtr column = *decoder->Decode(*testing::BinaryColumn({Framed(9, R"({"n": 5})"), Framed(12, R"({"n": 6})"), Framed(9, "{")}), &stats);
  EXPECT_EQ(column->children[0]->Value<int64_t>(0), 5);
  EXPECT_EQ(column->children[0]->Value<int64_t>(1), 6);
  EXPECT_TRUE(column->IsNull(2));
  EXPECT_EQ(stats.malformed, 1);
}

TEST(RegistryDecoderTest, ProtobufValuesDecodeWithTheReadersMessageAndImports) {
  FakeRegistry registry(Registry);
  auto client = Client(registry);
  Result<std::unique_ptr<Decoder>> decoder = MakeRegistryDecoder(client, *client->GetLatest("orders-value"));
  ASSERT_TRUE(decoder.ok()) << decoder.status().ToString();
  EXPECT_EQ((*decoder)->type()->ToString(), "struct<id:string,total:struct<cents:bigint>>");
  // field 1 "o-1"; field 2 { field 1: 250 }, after the frame and the short message-index path.
  std::string message = std::string("\x0a\x03o-1\x12\x03\x08\xfa\x01", 10);
  DecodeStats stats;
  ColumnPtr column = *(*decoder)->Decode(*testing::BinaryColumn({Framed(20, std::string(1, '\0') + message), message}), &stats);
  EXPECT_EQ(column->children[0]->View(0), "o-1");
  EXPECT_EQ(column->children[1]->children[0]->Value<int64_t>(0), 250);
  EXPECT_TRUE(column->IsNull(1)) << "a value without the frame";
  EXPECT_EQ(stats.malformed, 1);
}

}  // namespace
}  // namespace sluice::formats
