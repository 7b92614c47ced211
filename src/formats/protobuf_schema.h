// The compiled form of a Protobuf message schema: what the wire decoder walks.
//
// CompileProtobufSchema() parses .proto text with libprotobuf, checks every field of the chosen
// message (recursively) against the mapping of docs/formats.md, and returns a tree of
// ProtobufMessage nodes, one per message *occurrence* in the schema (a message type used by two
// fields gets two nodes), so that every node has exactly one place in the output column tree.
// Recursive message types have no finite column type and are rejected.
//
// A node also holds the decoder's per-message scratch (ProtobufFieldSlot) and the column builders
// its values go to (bound by the decoder), so a compiled tree belongs to one decoder and is used
// by one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/builder.h"
#include "sluice/core/status.h"
#include "sluice/core/types.h"
#include "sluice/formats/protobuf_decoder.h"

namespace sluice::formats::protobuf {

// The wire types of the Protobuf encoding (groups, 3 and 4, are not accepted).
enum class WireType : uint8_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

// How one field's wire value becomes a column value.
enum class ValueKind : uint8_t {
  kDouble,    // fixed64 bits -> double
  kFloat,     // fixed32 bits -> float
  kInt32,     // varint, low 32 bits -> integer
  kSint32,    // zig-zag varint -> integer
  kSfixed32,  // fixed32 -> integer
  kInt64,     // varint -> long
  kSint64,    // zig-zag varint -> long
  kSfixed64,  // fixed64 -> long
  kUint32,    // varint, low 32 bits zero-extended -> long
  kUint64,    // varint -> decimal(20,0)
  kBool,      // varint != 0 -> boolean
  kEnum,      // varint, low 32 bits -> the value's name (string)
  kString,    // length-delimited UTF-8 -> string
  kBytes,     // length-delimited -> binary
  kMessage,   // length-delimited message -> see ProtobufMessage::shape
};

// The wire type a field of `kind` is written with when not packed.
WireType WireTypeOf(ValueKind kind);
// Whether repeated fields of `kind` may be packed (every scalar kind but string and bytes).
inline bool IsPackable(ValueKind kind) { return kind < ValueKind::kString; }

// Enum value names by number.
class EnumNames {
 public:
  void Add(int32_t number, std::string_view name);
  // Makes lookups dense when the numbers span a small range.
  void Seal();
  // The name of `number`, or empty when the enum has no such value (an open proto3 enum).
  std::string_view Find(int32_t number) const;

 private:
  struct Entry {
    int32_t number;
    std::string name;
  };
  std::vector<Entry> entries_;  // sorted by number, first name of aliases kept
  int32_t dense_min_ = 0;
  std::vector<int32_t> dense_;  // entry index by number - dense_min_, -1 for gaps; empty if sparse
};

// Decoding scratch for one field of one message occurrence; reset per message. Buffers keep
// their capacity, so decoding allocates nothing once they have grown.
struct ProtobufFieldSlot {
  bool seen = false;
  uint64_t bits = 0;                     // varint or fixed value (last occurrence wins)
  std::string_view bytes;                // string/bytes value (last occurrence wins)
  // Singular message: its occurrences, merged in order. Map: its entries, in order.
  std::vector<std::string_view> spans;
  // Map only: each entry's key; for large maps, entry numbers sorted by key and which to keep.
  std::vector<std::string_view> keys;
  std::vector<uint32_t> order;
  std::vector<uint8_t> keep;
};

struct ProtobufMessage;

struct ProtobufField {
  std::string name;
  uint32_t number = 0;
  ValueKind kind = ValueKind::kInt32;
  WireType wire_type = WireType::kVarint;  // WireTypeOf(kind), kept at hand for the scan loop
  bool repeated = false;  // array, or map when is_map
  bool is_map = false;    // `message` is then the entry: key (1) and value (2)
  // Singular fields only: absent means null. Otherwise an absent scalar takes its default.
  bool has_presence = false;
  int oneof = -1;  // index of the real oneof this field belongs to, or -1
  std::shared_ptr<const EnumNames> enum_names;  // kEnum
  std::unique_ptr<ProtobufMessage> message;     // kMessage

  // Bound by the decoder: where values go (the element builder of a repeated field).
  ColumnBuilder* builder = nullptr;
  ListBuilder* list = nullptr;  // repeated and map fields
  // String, bytes and enum fields: bytes appended in the current batch, and per input byte in
  // the previous one, from which the next batch's buffer is reserved (growth copies otherwise).
  int64_t appended_bytes = 0;
  double bytes_per_input_byte = 0;
};

struct ProtobufMessage {
  // What a decoded occurrence of the message becomes.
  enum class Shape : uint8_t {
    kStruct,     // a struct row of `fields`
    kTimestamp,  // google.protobuf.Timestamp: a timestamp value (seconds 1, nanos 2)
    kWrapper,    // google.protobuf.*Value: its `value` field (1) as a nullable scalar
    kMapEntry,   // a map entry: key (1) and value (2) appended to the map's children
  };

  std::string full_name;
  Shape shape = Shape::kStruct;
  std::vector<ProtobufField> fields;  // declaration order, which is the struct's field order
  int num_oneofs = 0;
  // The column type a field of this message has: struct, timestamp, the wrapped scalar's type,
  // or (map entry) the map type.
  TypePtr type;

  // Index into `fields` of field `number`, or -1.
  int FindField(uint32_t number) const {
    if (number < by_number.size()) return by_number[number];
    if (dense) return -1;
    for (const auto& [n, index] : sparse_numbers) {
      if (n == number) return index;
    }
    return -1;
  }

  // Field lookup by number: dense when the numbers are small, else a list.
  bool dense = true;
  std::vector<int32_t> by_number;
  std::vector<std::pair<uint32_t, int32_t>> sparse_numbers;

  // Decoding scratch and output, owned by the decoder that compiled the tree.
  std::vector<ProtobufFieldSlot> slots;  // one per field
  std::vector<int32_t> oneof_current;    // per oneof: the field index set last, or -1
  ColumnBuilder* output = nullptr;       // kStruct: a StructBuilder; kTimestamp: timestamp
};

struct CompiledProtobufSchema {
  std::unique_ptr<ProtobufMessage> root;
  // Confluent's message-index path of the message within the main file (top-level index, then
  // nested indexes); empty when the message is declared in an imported file.
  std::vector<int32_t> message_indexes;
};

// Parses `proto_text` (proto2 or proto3), resolving imports among `imports` and the well-known
// types compiled into libprotobuf (google/protobuf/timestamp.proto, wrappers.proto, ...), and
// compiles the message `message_name` (fully qualified, a leading dot allowed).
// Errors: PROTOBUF_SCHEMA_INVALID (text does not parse or build; the message has line:column),
// PROTOBUF_MESSAGE_NOT_FOUND (no such message; the message lists those that exist),
// PROTOBUF_UNSUPPORTED_FIELD (a field that cannot be mapped; the message names its path).
Result<CompiledProtobufSchema> CompileProtobufSchema(std::string_view proto_text, std::string_view message_name,
                                                     const std::vector<ProtobufSourceFile>& imports);

// The full name of the message at Confluent's message-index path in the main file.
// Errors: PROTOBUF_SCHEMA_INVALID, PROTOBUF_MESSAGE_NOT_FOUND (the path leads to no message).
Result<std::string> FindProtobufMessageName(std::string_view proto_text, std::span<const int32_t> message_indexes,
                                            const std::vector<ProtobufSourceFile>& imports);

}  // namespace sluice::formats::protobuf
