// Test helpers for the Protobuf decoder: fixtures encoded by libprotobuf itself (DynamicMessage
// filled from text format), so that the decoder is checked against the reference encoder.
#pragma once

#include <google/protobuf/compiler/parser.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/dynamic_message.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/decoder_test_util.h"
#include "sluice/core/builder.h"
#include "sluice/core/compute.h"
#include "sluice/formats/protobuf_decoder.h"

namespace sluice::formats::testing {

// Encodes messages of one .proto text with libprotobuf.
class ReferenceEncoder {
 public:
  explicit ReferenceEncoder(std::string_view proto_text) : pool_(google::protobuf::DescriptorPool::generated_pool()) {
    google::protobuf::io::ArrayInputStream input(proto_text.data(), static_cast<int>(proto_text.size()));
    google::protobuf::io::Tokenizer tokenizer(&input, nullptr);
    google::protobuf::compiler::Parser parser;
    google::protobuf::FileDescriptorProto file;
    EXPECT_TRUE(parser.Parse(&tokenizer, &file)) << "the fixture schema does not parse";
    file.set_name("fixture.proto");
    EXPECT_NE(pool_.BuildFile(file), nullptr) << "the fixture schema does not build";
  }

  const google::protobuf::Descriptor* Find(std::string_view message_name) const {
    const google::protobuf::Descriptor* descriptor = pool_.FindMessageTypeByName(std::string(message_name));
    EXPECT_NE(descriptor, nullptr) << message_name;
    return descriptor;
  }

  // A new empty message of `message_name`, owned by the caller.
  std::unique_ptr<google::protobuf::Message> New(std::string_view message_name) {
    return std::unique_ptr<google::protobuf::Message>(factory_.GetPrototype(Find(message_name))->New());
  }

  // The wire bytes of the message written `text` in text format.
  std::string Encode(std::string_view message_name, std::string_view text) {
    std::unique_ptr<google::protobuf::Message> message = New(message_name);
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(std::string(text), message.get())) << text;
    return message->SerializeAsString();
  }

  // Whether libprotobuf parses `bytes` as a message of `message_name`.
  bool Parses(std::string_view message_name, std::string_view bytes) {
    google::protobuf::LogSilencer quiet;  // libprotobuf logs the invalid UTF-8 it refuses
    std::unique_ptr<google::protobuf::Message> message = New(message_name);
    return message->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
  }

 private:
  google::protobuf::DescriptorPool pool_;
  google::protobuf::DynamicMessageFactory factory_;
};

// Each decoded row as FormatValue prints it ("null" for a null row).
inline std::vector<std::string> DecodeRows(Decoder& decoder, const std::vector<std::optional<std::string>>& values,
                                           DecodeStats* stats = nullptr) {
  Result<ColumnPtr> column = decoder.Decode(*BinaryColumn(values), stats);
  EXPECT_TRUE(column.ok()) << column.status().ToString();
  if (!column.ok()) return {};
  EXPECT_TRUE((*column)->Validate().ok()) << (*column)->Validate().ToString();
  std::vector<std::string> rows;
  for (int64_t row = 0; row < (*column)->length; ++row) rows.push_back(FormatValue(**column, row));
  return rows;
}

inline std::unique_ptr<ProtobufDecoder> MakeTestDecoder(std::string_view proto_text, std::string_view message_name) {
  Result<std::unique_ptr<ProtobufDecoder>> decoder = ProtobufDecoder::Make(proto_text, message_name);
  EXPECT_TRUE(decoder.ok()) << decoder.status().ToString();
  return decoder.ok() ? std::move(decoder).value() : nullptr;
}

}  // namespace sluice::formats::testing
