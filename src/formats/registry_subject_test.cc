#include <string>

#include <gtest/gtest.h>

#include "formats/fake_registry.h"
#include "sluice/formats/registry_decoder.h"

namespace sluice::formats {
namespace {

using testing::FakeRegistry;
using testing::Response;

// `format` (required) is avro unless the options give one.
DecoderSpec Spec(std::map<std::string, std::string> options, std::string message_name = {}) {
  DecoderSpec spec;
  options.emplace("format", "avro");
  spec.registry_options = std::move(options);
  spec.message_name = std::move(message_name);
  return spec;
}

TEST(RegistrySubjectTest, TopicNameStrategyNamesTheTopicsKeyOrValueSubject) {
  auto value = RegistrySubjectOf(Spec({{"url", "http://r:8081"}}), "orders", false);
  ASSERT_TRUE(value.ok()) << value.status().ToString();
  EXPECT_EQ(value->subject, "orders-value");
  EXPECT_EQ(value->version, 0) << "latest by default";
  EXPECT_EQ(value->format, SchemaFormat::kAvro);
  EXPECT_EQ(value->refresh_interval, std::chrono::hours(2));
  EXPECT_EQ(RegistrySubjectOf(Spec({{"url", "http://r"}}), "orders", true)->subject, "orders-key");
}

TEST(RegistrySubjectTest, RecordStrategiesAnExplicitSubjectAndAVersion) {
  auto record = RegistrySubjectOf(
      Spec({{"url", "http://r"}, {"subject_name_strategy", "RecordNameStrategy"}, {"record_name", "shop.Order"},
            {"format", "protobuf"}}),
      "", false);
  ASSERT_TRUE(record.ok()) << record.status().ToString();
  EXPECT_EQ(record->subject, "shop.Order");
  EXPECT_EQ(record->message_name, "shop.Order") << "the record is the message to decode";
  auto topic_record = RegistrySubjectOf(
      Spec({{"url", "http://r"}, {"subject_name_strategy", "TopicRecordNameStrategy"}, {"record_name", "shop.Order"}}),
      "orders", false);
  EXPECT_EQ(topic_record->subject, "orders-shop.Order");
  auto pinned = RegistrySubjectOf(Spec({{"url", "http://r"}, {"subject", "payments"}, {"version", "3"}}), "", false);
  ASSERT_TRUE(pinned.ok()) << pinned.status().ToString();
  EXPECT_EQ(pinned->subject, "payments");
  EXPECT_EQ(pinned->version, 3);
}

TEST(RegistrySubjectTest, OptionsThatCannotNameASubjectAreRefusedByName) {
  struct Case {
    std::map<std::string, std::string> options;
    std::string topic;
    std::string message_part;
  };
  const Case cases[] = {
      {{{"url", "http://r"}}, "", "give the subject with the subject option"},
      {{{"url", "http://r"}, {"subject_name_strategy", "RecordNameStrategy"}}, "t", "needs record_name"},
      {{{"url", "http://r"}, {"version", "0"}}, "t", "version '0'"},
      {{{"url", "http://r"}, {"version", "newest"}}, "t", "version 'newest'"},
      {{{"url", "ftp://r"}}, "t", "must start with http:// or https://"},
      {{{"url", "http://r"}, {"format", "thrift"}}, "t", "format"},
      {{{"url", "http://r"}, {"subjct", "x"}}, "t", "subjct"},
  };
  for (const Case& c : cases) {
    auto subject = RegistrySubjectOf(Spec(c.options), c.topic, false);
    ASSERT_FALSE(subject.ok()) << c.message_part;
    EXPECT_EQ(subject.status().error_class(), "INVALID_OPTIONS");
    EXPECT_NE(subject.status().message().find(c.message_part), std::string::npos) << subject.status().ToString();
  }
}

Response Registry(const std::string& path, const std::string&) {
  if (path == "/subjects/users-value/versions/latest" || path == "/subjects/users-value/versions/2") {
    return {200, R"({"subject": "users-value", "version": 2, "id": 2, "schema": "{\"type\":\"record\",\"name\":\"User\",\"fields\":[{\"name\":\"id\",\"type\":\"long\"}]}"})"};
  }
  return {404, R"({"error_code": 40401, "message": "Subject not found"})"};
}

TEST(RegistrySubjectTest, TheDecoderReadsIntoTheSubjectsSchemaOfTheDeclaredFormat) {
  FakeRegistry registry(Registry);
  SchemaRegistryConfig config;
  config.url = registry.url();
  std::shared_ptr<SchemaRegistryClient> client = SchemaRegistryClient::Make(config).value();

  auto subject = RegistrySubjectOf(Spec({{"url", registry.url()}, {"version", "2"}}), "users", false).value();
  auto made = MakeSubjectDecoder(client, subject);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_EQ(made->reader->id, 2);
  EXPECT_EQ(made->decoder->type()->ToString(), "struct<id:bigint>");

  subject.format = SchemaFormat::kProtobuf;
  auto mismatch = MakeSubjectDecoder(client, subject);
  ASSERT_FALSE(mismatch.ok());
  EXPECT_EQ(mismatch.status().error_class(), "INVALID_OPTIONS");
  EXPECT_NE(mismatch.status().message().find("holds a schema of format avro"), std::string::npos) << mismatch.status().ToString();

  subject.subject = "nobody-value";
  EXPECT_EQ(MakeSubjectDecoder(client, subject).status().error_class(), "SCHEMA_REGISTRY_NOT_FOUND");
}

}  // namespace
}  // namespace sluice::formats
