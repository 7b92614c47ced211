// Feeds arbitrary bytes to the Protobuf decoder as encoded values of a message that uses every
// mapped construct (scalars of each kind, packed and unpacked repeated fields, nested and repeated
// messages, maps, a oneof, wrappers, Timestamp, an enum). The input is split at each 0xff 0xfe
// pair into several rows of one batch, so that state carried between rows is exercised too. Any
// crash, over-read (ASan), undefined behaviour (UBSan), or a decoded column that breaks the
// column invariants is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string_view>

#include "sluice/core/builder.h"
#include "sluice/formats/protobuf_decoder.h"

namespace {

constexpr std::string_view kSchema = R"(
  syntax = "proto3";
  package fuzz;
  import "google/protobuf/timestamp.proto";
  import "google/protobuf/wrappers.proto";
  enum Kind { KIND_UNSPECIFIED = 0; A = 1; B = 2; }
  message Inner { string name = 1; repeated sint32 values = 2; Kind kind = 3; }
  message Event {
    double d = 1; float f = 2; int32 i32 = 3; int64 i64 = 4; uint32 u32 = 5; uint64 u64 = 6;
    sint32 s32 = 7; sint64 s64 = 8; sfixed32 sf32 = 9; sfixed64 sf64 = 10; bool b = 11;
    string s = 12; bytes by = 13; Kind kind = 14; optional int32 maybe = 15;
    Inner inner = 16; repeated Inner inners = 17; map<string, Inner> by_key = 18; map<string, int64> counts = 19;
    repeated int64 packed = 20; repeated double doubles = 21 [packed = false]; repeated string names = 22;
    oneof choice { string text = 23; Inner nested = 24; }
    google.protobuf.Timestamp at = 25; google.protobuf.Int32Value wrapped = 26;
    repeated google.protobuf.StringValue wrapped_list = 27; repeated Kind kinds = 28;
    string far = 100000;
  })";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static std::unique_ptr<sluice::formats::ProtobufDecoder> decoder = [] {
    auto made = sluice::formats::ProtobufDecoder::Make(kSchema, "fuzz.Event");
    if (!made.ok()) std::abort();
    return std::move(made).value();
  }();
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  sluice::BinaryBuilder rows(sluice::DataType::Binary());
  for (size_t start = 0;;) {
    size_t split = bytes.find("\xff\xfe", start);
    if (split == std::string_view::npos) {
      rows.Append(bytes.substr(start));
      break;
    }
    rows.Append(bytes.substr(start, split - start));
    start = split + 2;
  }
  sluice::DecodeStats stats;
  auto column = decoder->Decode(*rows.Finish(), &stats);
  if (!column.ok() || !(*column)->Validate().ok()) std::abort();
  return 0;
}
