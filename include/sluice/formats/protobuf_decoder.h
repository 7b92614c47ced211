// The Protobuf decoder: Protobuf wire-format values -> one struct column.
//
// The schema is .proto text (proto2 or proto3) and the fully qualified name of one of its
// messages. libprotobuf parses the text once, at construction; the well-known types
// (google/protobuf/timestamp.proto, wrappers.proto) resolve without files on disk. Decoding does
// not use libprotobuf: a table compiled from the schema drives a wire-format reader that appends
// straight into column builders. The type mapping and presence rules are in docs/formats.md.
//
// Decoding is permissive (see decoder.h): a value that is not a well-formed encoding of the
// message (a truncated or overlong varint, a length past the end, a group, field number 0, a
// packed run that does not divide into elements, a string that is not UTF-8) becomes a null row
// and is counted. Unknown fields, and known fields sent with another wire type, are skipped, as
// libprotobuf skips them.
//
// Thread safety: as every Decoder, one instance serves one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/formats/decoder.h"

namespace sluice {
class ColumnBuilder;
}  // namespace sluice

namespace sluice::formats {

namespace protobuf {
struct ProtobufField;
struct ProtobufMessage;
}  // namespace protobuf

// A .proto file that the schema imports, under the name its `import` statement uses (a Schema
// Registry reference's name).
struct ProtobufSourceFile {
  std::string name;
  std::string text;
};

// How each encoded value is framed.
enum class ProtobufFraming {
  kNone,       // the value is the message's encoding and nothing else
  // Confluent's wire format (confluent.h): magic byte 0, schema id, message-index path, then the
  // encoding. A value without that frame, or whose path names another message than the
  // decoder's, is malformed. The schema id is not checked: the caller routes values by id.
  kConfluent,
};

class ProtobufDecoder final : public Decoder {
 public:
  // Parses `proto_text` and compiles the message `message_name` ("com.example.Event"; a leading
  // dot is accepted). `imports` holds the files the text imports other than the well-known types.
  // Errors: PROTOBUF_SCHEMA_INVALID (the text does not parse or an import does not resolve; the
  // message carries file:line:column), PROTOBUF_MESSAGE_NOT_FOUND, PROTOBUF_UNSUPPORTED_FIELD
  // (Duration, Struct, Any, fixed32/fixed64, a map with non-string keys, a group, a recursive
  // message; the message names the field's dot path).
  static Result<std::unique_ptr<ProtobufDecoder>> Make(std::string_view proto_text, std::string_view message_name,
                                                       const std::vector<ProtobufSourceFile>& imports = {},
                                                       ProtobufFraming framing = ProtobufFraming::kNone);
  ~ProtobufDecoder() override;

  const TypePtr& type() const override;
  Result<ColumnPtr> Decode(const Column& encoded, DecodeStats* stats) override;

  // Confluent's message-index path of the decoder's message in the schema text ([0] for the
  // first top-level message, [1, 0] for the first message nested in the second); empty when the
  // message is declared in an imported file.
  const std::vector<int32_t>& message_indexes() const { return message_indexes_; }

 private:
  ProtobufDecoder(std::unique_ptr<protobuf::ProtobufMessage> root, std::vector<int32_t> message_indexes,
                  ProtobufFraming framing);
  // Strips the Confluent frame off `*value`; false if it has none or names another message.
  bool Unframe(std::string_view* value);

  std::unique_ptr<protobuf::ProtobufMessage> root_;
  std::unique_ptr<ColumnBuilder> builder_;
  std::vector<int32_t> message_indexes_;
  ProtobufFraming framing_;
  std::vector<int32_t> framed_indexes_;  // scratch for Unframe
  // The string, bytes and enum fields of the tree, whose buffers are reserved per batch.
  std::vector<protobuf::ProtobufField*> byte_fields_;
};

// The fully qualified name of the message at Confluent's message-index path in `proto_text`:
// what a framed value's path names, so that a decoder for it can be made.
// Errors: PROTOBUF_SCHEMA_INVALID, PROTOBUF_MESSAGE_NOT_FOUND (the path leads to no message).
Result<std::string> ProtobufMessageNameAt(std::string_view proto_text, std::span<const int32_t> message_indexes,
                                          const std::vector<ProtobufSourceFile>& imports = {});

// For an update of an inline Protobuf schema: the first field (its dot path and number) that both
// messages declare under one number but encode differently on the wire (int32 -> sint64, sfixed32
// -> sfixed64, ...), so that values written before would not read as the new type; nullopt when
// every shared field keeps its encoding. Errors as ProtobufDecoder::Make's.
Result<std::optional<std::string>> ProtobufEncodingChange(const DecoderSpec& before, const DecoderSpec& after);

}  // namespace sluice::formats
