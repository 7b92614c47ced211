#include "sluice/formats/confluent.h"

#include <limits>

namespace sluice::formats {
namespace {

// One zig-zag varint of at most 10 bytes.
bool ReadZigZag(std::string_view* bytes, int64_t* value) {
  uint64_t raw = 0;
  for (int shift = 0, i = 0; shift < 64; shift += 7, ++i) {
    if (static_cast<size_t>(i) >= bytes->size()) return false;
    uint8_t byte = static_cast<uint8_t>((*bytes)[i]);
    raw |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      bytes->remove_prefix(i + 1);
      *value = static_cast<int64_t>(raw >> 1) ^ -static_cast<int64_t>(raw & 1);
      return true;
    }
  }
  return false;
}

}  // namespace

bool ParseConfluentHeader(std::string_view framed, int32_t* schema_id, std::string_view* rest) {
  if (framed.size() < kConfluentHeaderSize || framed[0] != 0) return false;
  uint32_t id = 0;
  for (int i = 1; i < 5; ++i) id = (id << 8) | static_cast<uint8_t>(framed[i]);
  *schema_id = static_cast<int32_t>(id);
  *rest = framed.substr(kConfluentHeaderSize);
  return true;
}

bool ParseProtobufMessageIndexes(std::string_view* rest, std::vector<int32_t>* indexes) {
  indexes->clear();
  std::string_view bytes = *rest;
  int64_t count;
  if (!ReadZigZag(&bytes, &count) || count < 0 || count > kMaxMessageIndexes) return false;
  if (count == 0) {
    indexes->push_back(0);  // the short form of the first message
  }
  for (int64_t i = 0; i < count; ++i) {
    int64_t index;
    if (!ReadZigZag(&bytes, &index) || index < 0 || index > std::numeric_limits<int32_t>::max()) return false;
    indexes->push_back(static_cast<int32_t>(index));
  }
  *rest = bytes;
  return true;
}

}  // namespace sluice::formats
