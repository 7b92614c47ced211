// The Protobuf wire-format decoder.
//
// Each value is read twice. The first pass checks that it is a well-formed encoding of the
// message (every tag, varint and length, recursively through known message fields), because
// builders cannot take back what was appended: a malformed value must be known before its row
// starts. The second pass, which may then trust the structure, fills each message's slots (last
// occurrence wins for singular fields; occurrences of a singular message field are merged, as
// Protobuf merges them; repeated elements go straight to their builders, map entries once the
// keys written twice are known) and emits the row.
#include "sluice/formats/protobuf_decoder.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>
#include <limits>

#include "formats/protobuf_schema.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/utf8.h"
#include "sluice/formats/confluent.h"

namespace sluice::formats {
namespace {

using protobuf::IsPackable;
using protobuf::ProtobufField;
using protobuf::ProtobufFieldSlot;
using protobuf::ProtobufMessage;
using protobuf::ValueKind;
using protobuf::WireType;
using protobuf::WireTypeOf;

static_assert(std::endian::native == std::endian::little, "fixed32/fixed64 values are read in place");

// google.protobuf.Timestamp's documented range: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z.
constexpr int64_t kMinTimestampSeconds = -62135596800;
constexpr int64_t kMaxTimestampSeconds = 253402300799;

// Reads a varint of at most 10 bytes; false if it is truncated or longer.
inline bool ReadVarint(const uint8_t*& p, const uint8_t* end, uint64_t* value) {
  if (p < end && *p < 0x80) {
    *value = *p++;
    return true;
  }
  uint64_t result = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (p == end) return false;
    uint8_t byte = *p++;
    result |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (byte < 0x80) {
      *value = result;
      return true;
    }
  }
  return false;
}

// Reads a tag; false unless it is a 32-bit varint with a field number other than 0.
inline bool ReadTag(const uint8_t*& p, const uint8_t* end, uint32_t* number, uint32_t* wire_type) {
  uint64_t tag;
  if (!ReadVarint(p, end, &tag) || tag > std::numeric_limits<uint32_t>::max() || (tag >> 3) == 0) return false;
  *number = static_cast<uint32_t>(tag >> 3);
  *wire_type = static_cast<uint32_t>(tag & 7);
  return true;
}

inline uint64_t ReadFixed64(const uint8_t* p) {
  uint64_t value;
  std::memcpy(&value, p, sizeof(value));
  return value;
}

inline uint32_t ReadFixed32(const uint8_t* p) {
  uint32_t value;
  std::memcpy(&value, p, sizeof(value));
  return value;
}

inline std::string_view ViewOf(const uint8_t* p, size_t size) {
  return std::string_view(reinterpret_cast<const char*>(p), size);
}

// ---- Pass 1: is the value a well-formed encoding of the message? ----

bool IsWellFormed(const ProtobufMessage& message, const uint8_t* p, const uint8_t* end);

bool IsWellFormedPacked(ValueKind kind, const uint8_t* p, const uint8_t* end) {
  switch (WireTypeOf(kind)) {
    case WireType::kFixed64:
      return (end - p) % 8 == 0;
    case WireType::kFixed32:
      return (end - p) % 4 == 0;
    default:
      while (p < end) {
        uint64_t value;
        if (!ReadVarint(p, end, &value)) return false;
      }
      return true;
  }
}

bool IsWellFormedLengthDelimited(const ProtobufField& field, const uint8_t* p, const uint8_t* end) {
  switch (field.kind) {
    case ValueKind::kMessage:
      return IsWellFormed(*field.message, p, end);
    case ValueKind::kString:
      return IsValidUtf8(ViewOf(p, static_cast<size_t>(end - p)));
    case ValueKind::kBytes:
      return true;
    default:
      // A packed run of a repeated scalar; for a singular scalar the field is skipped as unknown.
      return !field.repeated || IsWellFormedPacked(field.kind, p, end);
  }
}

bool IsWellFormed(const ProtobufMessage& message, const uint8_t* p, const uint8_t* end) {
  while (p < end) {
    uint32_t number;
    uint32_t wire_type;
    if (!ReadTag(p, end, &number, &wire_type)) return false;
    switch (wire_type) {
      case 0: {
        uint64_t value;
        if (!ReadVarint(p, end, &value)) return false;
        break;
      }
      case 1:
        if (end - p < 8) return false;
        p += 8;
        break;
      case 5:
        if (end - p < 4) return false;
        p += 4;
        break;
      case 2: {
        uint64_t size;
        if (!ReadVarint(p, end, &size) || size > static_cast<uint64_t>(end - p)) return false;
        const uint8_t* start = p;
        p += size;
        int index = message.FindField(number);
        if (index >= 0 && !IsWellFormedLengthDelimited(message.fields[index], start, p)) return false;
        break;
      }
      default:  // groups (3, 4) and the unassigned wire types 6 and 7
        return false;
    }
  }
  return true;
}

// ---- Pass 2: decode a well-formed value into the builders. ----

// What decoding one batch met besides malformed values.
struct DecodeCounts {
  int64_t nulled_fields = 0;  // Timestamps outside their range, set to null
};

void DecodeMessage(ProtobufMessage& message, const std::string_view* spans, size_t num_spans, DecodeCounts* counts);

// Appends one scalar of `field` (any kind but message) to its builder.
void AppendScalar(ProtobufField& field, uint64_t bits, std::string_view bytes) {
  ColumnBuilder* builder = field.builder;
  switch (field.kind) {
    case ValueKind::kDouble:
      static_cast<DoubleBuilder*>(builder)->Append(std::bit_cast<double>(bits));
      break;
    case ValueKind::kFloat:
      static_cast<FloatBuilder*>(builder)->Append(std::bit_cast<float>(static_cast<uint32_t>(bits)));
      break;
    case ValueKind::kInt32:
    case ValueKind::kSfixed32:
      static_cast<Int32Builder*>(builder)->Append(static_cast<int32_t>(static_cast<uint32_t>(bits)));
      break;
    case ValueKind::kSint32: {
      uint32_t zigzag = static_cast<uint32_t>(bits);
      static_cast<Int32Builder*>(builder)->Append(static_cast<int32_t>((zigzag >> 1) ^ (~(zigzag & 1) + 1)));
      break;
    }
    case ValueKind::kInt64:
    case ValueKind::kSfixed64:
      static_cast<Int64Builder*>(builder)->Append(static_cast<int64_t>(bits));
      break;
    case ValueKind::kSint64:
      static_cast<Int64Builder*>(builder)->Append(static_cast<int64_t>((bits >> 1) ^ (~(bits & 1) + 1)));
      break;
    case ValueKind::kUint32:
      static_cast<Int64Builder*>(builder)->Append(static_cast<int64_t>(static_cast<uint32_t>(bits)));
      break;
    case ValueKind::kUint64:
      static_cast<DecimalBuilder*>(builder)->Append(static_cast<int128_t>(bits));
      break;
    case ValueKind::kBool:
      static_cast<BooleanBuilder*>(builder)->Append(bits != 0 ? 1 : 0);
      break;
    case ValueKind::kEnum: {
      int32_t number = static_cast<int32_t>(static_cast<uint32_t>(bits));
      std::string_view name = field.enum_names->Find(number);
      char digits[16];
      if (name.empty()) {
        // A value this schema does not name (an open enum written by a newer schema): its number.
        char* end = std::to_chars(digits, digits + sizeof(digits), number).ptr;
        name = std::string_view(digits, static_cast<size_t>(end - digits));
      }
      static_cast<BinaryBuilder*>(builder)->Append(name);
      field.appended_bytes += static_cast<int64_t>(name.size());
      break;
    }
    case ValueKind::kString:
    case ValueKind::kBytes:
      static_cast<BinaryBuilder*>(builder)->Append(bytes);
      field.appended_bytes += static_cast<int64_t>(bytes.size());
      break;
    case ValueKind::kMessage:
      break;
  }
}

// Appends every element of a packed run.
void AppendPacked(ProtobufField& field, const uint8_t* p, const uint8_t* end) {
  switch (field.wire_type) {
    case WireType::kFixed64:
      for (; end - p >= 8; p += 8) AppendScalar(field, ReadFixed64(p), {});
      break;
    case WireType::kFixed32:
      for (; end - p >= 4; p += 4) AppendScalar(field, ReadFixed32(p), {});
      break;
    default:
      while (p < end) {
        uint64_t value;
        if (!ReadVarint(p, end, &value)) break;
        AppendScalar(field, value, {});
      }
      break;
  }
}

// Makes `index` the set member of its oneof: a member set earlier is unset.
void SetOneofMember(ProtobufMessage& message, int index) {
  int32_t& current = message.oneof_current[message.fields[index].oneof];
  if (current == index) return;
  if (current >= 0) {
    message.slots[current].seen = false;
    message.slots[current].spans.clear();
  }
  current = index;
}

// Fills `message`'s slots from one occurrence; repeated elements are appended as they come.
void ScanMessage(ProtobufMessage& message, const uint8_t* p, const uint8_t* end, DecodeCounts* counts) {
  while (p < end) {
    uint32_t number;
    uint32_t wire_type;
    if (!ReadTag(p, end, &number, &wire_type)) return;
    uint64_t bits = 0;
    std::string_view bytes;
    switch (wire_type) {
      case 0:
        if (!ReadVarint(p, end, &bits)) return;
        break;
      case 1:
        bits = ReadFixed64(p);
        p += 8;
        break;
      case 5:
        bits = ReadFixed32(p);
        p += 4;
        break;
      default: {  // 2: the first pass admitted no other wire type
        uint64_t size;
        if (!ReadVarint(p, end, &size)) return;
        bytes = ViewOf(p, size);
        p += size;
        break;
      }
    }
    int index = message.FindField(number);
    if (index < 0) continue;
    ProtobufField& field = message.fields[index];
    if (wire_type != static_cast<uint32_t>(field.wire_type)) {
      if (wire_type == static_cast<uint32_t>(WireType::kLengthDelimited) && field.repeated && IsPackable(field.kind)) {
        const uint8_t* run = reinterpret_cast<const uint8_t*>(bytes.data());
        AppendPacked(field, run, run + bytes.size());
      }
      continue;  // else a wire type the field cannot have: skipped like an unknown field
    }
    if (field.repeated) {
      if (field.is_map) {
        message.slots[index].spans.push_back(bytes);  // emitted once duplicate keys are known
      } else if (field.kind == ValueKind::kMessage) {
        DecodeMessage(*field.message, &bytes, 1, counts);
      } else {
        AppendScalar(field, bits, bytes);
      }
      continue;
    }
    if (field.oneof >= 0) SetOneofMember(message, index);
    ProtobufFieldSlot& slot = message.slots[index];
    slot.seen = true;
    if (field.kind == ValueKind::kMessage) {
      slot.spans.push_back(bytes);
    } else {
      slot.bits = bits;
      slot.bytes = bytes;
    }
  }
}

// The key of a well-formed map entry: its last field 1, or "" when it has none.
std::string_view MapKey(std::string_view entry) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(entry.data());
  const uint8_t* end = p + entry.size();
  std::string_view key;
  while (p < end) {
    uint32_t number;
    uint32_t wire_type;
    uint64_t value;
    if (!ReadTag(p, end, &number, &wire_type)) break;
    if (wire_type == 0) {
      if (!ReadVarint(p, end, &value)) break;
    } else if (wire_type == 1) {
      p += 8;
    } else if (wire_type == 5) {
      p += 4;
    } else {
      if (!ReadVarint(p, end, &value)) break;
      if (number == 1) key = ViewOf(p, value);
      p += value;
    }
  }
  return key;
}

// Appends a map's entries in the order they were written, except that an entry whose key comes
// again later is left out: as in libprotobuf, the last value of a key wins, and a map column
// never holds a key twice.
void EmitMapEntries(ProtobufField& field, ProtobufFieldSlot& slot, DecodeCounts* counts) {
  constexpr size_t kPairwiseLimit = 32;  // beyond this, duplicates are found by sorting
  size_t count = slot.spans.size();
  slot.keys.resize(count);
  for (size_t i = 0; i < count; ++i) slot.keys[i] = MapKey(slot.spans[i]);
  if (count <= kPairwiseLimit) {
    for (size_t i = 0; i < count; ++i) {
      bool repeated_later = false;
      for (size_t j = i + 1; j < count && !repeated_later; ++j) repeated_later = slot.keys[j] == slot.keys[i];
      if (!repeated_later) DecodeMessage(*field.message, &slot.spans[i], 1, counts);
    }
    return;
  }
  slot.order.resize(count);
  for (size_t i = 0; i < count; ++i) slot.order[i] = static_cast<uint32_t>(i);
  std::sort(slot.order.begin(), slot.order.end(), [&slot](uint32_t a, uint32_t b) {
    return slot.keys[a] != slot.keys[b] ? slot.keys[a] < slot.keys[b] : a < b;
  });
  slot.keep.assign(count, 1);
  for (size_t i = 0; i + 1 < count; ++i) {
    if (slot.keys[slot.order[i]] == slot.keys[slot.order[i + 1]]) slot.keep[slot.order[i]] = 0;
  }
  for (size_t i = 0; i < count; ++i) {
    if (slot.keep[i]) DecodeMessage(*field.message, &slot.spans[i], 1, counts);
  }
}

// Appends the value of one field of a scanned message.
void EmitField(ProtobufField& field, ProtobufFieldSlot& slot, DecodeCounts* counts) {
  if (field.repeated) {
    if (field.is_map) EmitMapEntries(field, slot, counts);
    field.list->Append();
  } else if (!slot.seen) {
    if (field.has_presence) {
      field.builder->AppendNull();
    } else {
      AppendScalar(field, 0, {});
    }
  } else if (field.kind == ValueKind::kMessage) {
    DecodeMessage(*field.message, slot.spans.data(), slot.spans.size(), counts);
  } else {
    AppendScalar(field, slot.bits, slot.bytes);
  }
}

void EmitTimestamp(ProtobufMessage& message, DecodeCounts* counts) {
  int64_t seconds = 0;
  int64_t nanos = 0;
  int seconds_index = message.FindField(1);
  int nanos_index = message.FindField(2);
  if (seconds_index >= 0 && message.slots[seconds_index].seen) {
    seconds = static_cast<int64_t>(message.slots[seconds_index].bits);
  }
  if (nanos_index >= 0 && message.slots[nanos_index].seen) {
    nanos = static_cast<int32_t>(static_cast<uint32_t>(message.slots[nanos_index].bits));
  }
  auto* builder = static_cast<Int64Builder*>(message.output);
  if (seconds < kMinTimestampSeconds || seconds > kMaxTimestampSeconds || nanos < 0 || nanos > 999'999'999) {
    builder->AppendNull();
    ++counts->nulled_fields;
    return;
  }
  builder->Append(seconds * 1'000'000 + nanos / 1000);
}

void DecodeMessage(ProtobufMessage& message, const std::string_view* spans, size_t num_spans, DecodeCounts* counts) {
  for (ProtobufFieldSlot& slot : message.slots) {
    slot.seen = false;
    slot.spans.clear();
  }
  std::fill(message.oneof_current.begin(), message.oneof_current.end(), -1);
  for (size_t i = 0; i < num_spans; ++i) {
    const uint8_t* p = reinterpret_cast<const uint8_t*>(spans[i].data());
    ScanMessage(message, p, p + spans[i].size(), counts);
  }
  switch (message.shape) {
    case ProtobufMessage::Shape::kStruct:
      for (size_t i = 0; i < message.fields.size(); ++i) EmitField(message.fields[i], message.slots[i], counts);
      static_cast<StructBuilder*>(message.output)->Append();
      break;
    case ProtobufMessage::Shape::kMapEntry:
    case ProtobufMessage::Shape::kWrapper:
      for (size_t i = 0; i < message.fields.size(); ++i) EmitField(message.fields[i], message.slots[i], counts);
      break;
    case ProtobufMessage::Shape::kTimestamp:
      EmitTimestamp(message, counts);
      break;
  }
}

void BindMessage(ProtobufMessage& message, ColumnBuilder* output, std::vector<ProtobufField*>* byte_fields);

void BindField(ProtobufField& field, ColumnBuilder* builder, std::vector<ProtobufField*>* byte_fields) {
  field.builder = builder;
  if (field.kind == ValueKind::kString || field.kind == ValueKind::kBytes || field.kind == ValueKind::kEnum) {
    byte_fields->push_back(&field);
  }
  if (field.repeated) {
    field.list = static_cast<ListBuilder*>(builder);
    // A map's entries append to the map's key and value builders; an array's to its elements.
    if (!field.is_map) field.builder = field.list->element_builder();
  }
  if (field.message != nullptr) BindMessage(*field.message, field.builder, byte_fields);
}

// Points every field of the tree at the builder its values go to; lists the fields whose values
// are bytes in `byte_fields`.
void BindMessage(ProtobufMessage& message, ColumnBuilder* output, std::vector<ProtobufField*>* byte_fields) {
  message.output = output;
  switch (message.shape) {
    case ProtobufMessage::Shape::kStruct: {
      auto* struct_builder = static_cast<StructBuilder*>(output);
      for (size_t i = 0; i < message.fields.size(); ++i) {
        BindField(message.fields[i], struct_builder->field_builder(static_cast<int>(i)), byte_fields);
      }
      break;
    }
    case ProtobufMessage::Shape::kMapEntry: {
      auto* map_builder = static_cast<ListBuilder*>(output);
      BindField(message.fields[0], map_builder->key_builder(), byte_fields);
      BindField(message.fields[1], map_builder->value_builder(), byte_fields);
      break;
    }
    case ProtobufMessage::Shape::kWrapper:
      BindField(message.fields[0], output, byte_fields);
      break;
    case ProtobufMessage::Shape::kTimestamp:
      break;  // seconds and nanos are read from the slots, never appended
  }
}

}  // namespace

Result<std::unique_ptr<ProtobufDecoder>> ProtobufDecoder::Make(std::string_view proto_text,
                                                               std::string_view message_name,
                                                               const std::vector<ProtobufSourceFile>& imports,
                                                               ProtobufFraming framing) {
  SLUICE_ASSIGN_OR_RETURN(protobuf::CompiledProtobufSchema compiled,
                          protobuf::CompileProtobufSchema(proto_text, message_name, imports));
  if (framing == ProtobufFraming::kConfluent && compiled.message_indexes.empty()) {
    return Status::Error(errors::kProtobufMessageNotFound,
                         "message_name `" + std::string(message_name) +
                             "` is declared in an imported file; a Confluent-framed value can only name a message "
                             "of the schema text itself");
  }
  return std::unique_ptr<ProtobufDecoder>(
      new ProtobufDecoder(std::move(compiled.root), std::move(compiled.message_indexes), framing));
}

ProtobufDecoder::ProtobufDecoder(std::unique_ptr<ProtobufMessage> root, std::vector<int32_t> message_indexes,
                                 ProtobufFraming framing)
    : root_(std::move(root)),
      builder_(ColumnBuilder::Make(root_->type)),
      message_indexes_(std::move(message_indexes)),
      framing_(framing) {
  BindMessage(*root_, builder_.get(), &byte_fields_);
}

ProtobufDecoder::~ProtobufDecoder() = default;

bool ProtobufDecoder::Unframe(std::string_view* value) {
  int32_t schema_id;
  std::string_view rest;
  if (!ParseConfluentHeader(*value, &schema_id, &rest) || !ParseProtobufMessageIndexes(&rest, &framed_indexes_) ||
      framed_indexes_ != message_indexes_) {
    return false;
  }
  *value = rest;
  return true;
}

const TypePtr& ProtobufDecoder::type() const { return root_->type; }

Result<ColumnPtr> ProtobufDecoder::Decode(const Column& encoded, DecodeStats* stats) {
  if (!encoded.type->is_binary_like()) {
    return Status::Error(errors::kInvalidArgument,
                         "the Protobuf decoder reads binary or string columns, not " + encoded.type->ToString());
  }
  builder_->Reserve(encoded.length);
  int64_t input_bytes = static_cast<int64_t>(encoded.data.size());
  for (ProtobufField* field : byte_fields_) {
    static_cast<BinaryBuilder*>(field->builder)->ReserveBytes(
        static_cast<int64_t>(field->bytes_per_input_byte * static_cast<double>(input_bytes) * 1.1));
    field->appended_bytes = 0;
  }
  DecodeCounts counts;
  for (int64_t row = 0; row < encoded.length; ++row) {
    if (encoded.IsNull(row)) {
      builder_->AppendNull();
      continue;
    }
    std::string_view value = encoded.View(row);
    bool unframed = framing_ == ProtobufFraming::kNone || Unframe(&value);
    const uint8_t* p = reinterpret_cast<const uint8_t*>(value.data());
    if (!unframed || !IsWellFormed(*root_, p, p + value.size())) {
      builder_->AppendNull();
      if (stats != nullptr) stats->RecordMalformed(row);
      continue;
    }
    DecodeMessage(*root_, &value, 1, &counts);
  }
  if (input_bytes > 0) {
    for (ProtobufField* field : byte_fields_) {
      field->bytes_per_input_byte = static_cast<double>(field->appended_bytes) / static_cast<double>(input_bytes);
    }
  }
  if (stats != nullptr) {
    stats->rows += encoded.length;
    stats->mismatched_fields += counts.nulled_fields;
  }
  return builder_->Finish();
}

Result<std::unique_ptr<Decoder>> MakeProtobufDecoder(const DecoderSpec& spec) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<ProtobufDecoder> decoder, ProtobufDecoder::Make(spec.schema, spec.message_name));
  return std::unique_ptr<Decoder>(std::move(decoder));
}

Result<std::string> ProtobufMessageNameAt(std::string_view proto_text, std::span<const int32_t> message_indexes,
                                          const std::vector<ProtobufSourceFile>& imports) {
  return protobuf::FindProtobufMessageName(proto_text, message_indexes, imports);
}

}  // namespace sluice::formats
