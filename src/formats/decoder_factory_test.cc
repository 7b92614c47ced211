#include <gtest/gtest.h>

#include "sluice/core/builder.h"
#include "sluice/formats/decoder.h"

namespace sluice::formats {
namespace {

ColumnPtr OneValue(std::string_view bytes) {
  BinaryBuilder builder(DataType::Binary());
  builder.Append(bytes);
  return builder.Finish();
}

TEST(MakeDecoderTest, BuildsADecoderForEachFormat) {
  DecoderSpec json{SchemaFormat::kJson, R"({"type": "object", "properties": {"n": {"type": "integer"}}})", ""};
  DecoderSpec avro{SchemaFormat::kAvro, R"({"type": "record", "name": "R", "fields": [{"name": "n", "type": "long"}]})", ""};
  DecoderSpec protobuf{SchemaFormat::kProtobuf, "syntax = \"proto3\"; package t; message R { int64 n = 1; }", "t.R"};
  std::pair<DecoderSpec, std::string> cases[] = {{json, R"({"n": 3})"}, {avro, "\x06"}, {protobuf, "\x08\x03"}};
  for (const auto& [spec, value] : cases) {
    Result<std::unique_ptr<Decoder>> decoder = MakeDecoder(spec);
    ASSERT_TRUE(decoder.ok()) << decoder.status().ToString();
    EXPECT_EQ((*decoder)->type()->ToString(), "struct<n:bigint>");
    ColumnPtr column = *(*decoder)->Decode(*OneValue(value), nullptr);
    EXPECT_EQ(column->children[0]->Value<int64_t>(0), 3);
  }
}

TEST(MakeDecoderTest, SchemaErrorsCarryTheirFormatsClass) {
  EXPECT_EQ(MakeDecoder({SchemaFormat::kJson, "{", ""}).status().error_class(), "JSON_SCHEMA_INVALID");
  EXPECT_EQ(MakeDecoder({SchemaFormat::kAvro, R"("nothing")", ""}).status().error_class(), "AVRO_SCHEMA_INVALID");
  EXPECT_EQ(MakeDecoder({SchemaFormat::kProtobuf, "syntax = \"proto3\"; message R {}", "t.Missing"}).status().error_class(),
            "PROTOBUF_MESSAGE_NOT_FOUND");
}

}  // namespace
}  // namespace sluice::formats
