// Fuzzes the Confluent header and Protobuf message-index parsers: any input may be refused,
// none may crash, and an accepted one never reads or points past the input.
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "sluice/formats/confluent.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  int32_t id;
  std::string_view rest;
  if (!sluice::formats::ParseConfluentHeader(input, &id, &rest)) return 0;
  if (rest.data() != input.data() + 5 || rest.size() != size - 5) std::abort();
  std::vector<int32_t> indexes;
  std::string_view payload = rest;
  if (!sluice::formats::ParseProtobufMessageIndexes(&payload, &indexes)) return 0;
  if (payload.data() < rest.data() || payload.data() + payload.size() != rest.data() + rest.size()) std::abort();
  if (indexes.empty() || indexes.size() > sluice::formats::kMaxMessageIndexes) std::abort();
  return 0;
}
