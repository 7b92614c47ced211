// Confluent's wire format, as Confluent's serializers frame Kafka keys and values:
//   byte 0      magic byte 0
//   bytes 1-4   the schema id in the registry, big-endian
//   Protobuf only: the path of the message within its .proto file, as zig-zag varints: a count,
//               then that many indexes; the single byte 0 is the short form of the path [0]
//   the rest    the payload in the schema's own encoding
// These are pure functions over outside bytes: every length is checked; false means malformed.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace sluice::formats {

inline constexpr size_t kConfluentHeaderSize = 5;

// Splits a framed value into its schema id and the rest (for Protobuf, the message indexes and
// the payload). False when the value is shorter than the header or its magic byte is not 0.
bool ParseConfluentHeader(std::string_view framed, int32_t* schema_id, std::string_view* rest);

// The deepest message path accepted: nesting beyond this is not a real schema.
inline constexpr int64_t kMaxMessageIndexes = 64;

// Reads the Protobuf message-index path at the front of `*rest` into `*indexes` (cleared first;
// its capacity is reused, so a caller keeping one vector allocates nothing per row) and advances
// `*rest` to the payload. False when the varints are truncated, overlong, negative, or more than
// kMaxMessageIndexes.
bool ParseProtobufMessageIndexes(std::string_view* rest, std::vector<int32_t>* indexes);

}  // namespace sluice::formats
