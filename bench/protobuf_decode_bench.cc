// Protobuf decoding throughput, one thread: 1 million encoded 10-field events (strings, integers,
// a double, a bool, an enum, a Timestamp and a repeated string; about 110 bytes each) decoded
// into one struct column by sluice's ProtobufDecoder. Beside it, the reference: libprotobuf's
// DynamicMessage parsing the same bytes (one reused message, cleared per value; it only parses,
// building no columns). The two run alternately, five times each; each figure is the best run,
// timed in CPU time of the thread.
//
//   cmake -S . -B build-rel -G Ninja -DCMAKE_BUILD_TYPE=Release -DSLUICE_BENCH=ON
//   cmake --build build-rel --target protobuf_decode_bench && build-rel/protobuf_decode_bench
#include <google/protobuf/compiler/parser.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/dynamic_message.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <ctime>
#include <cstdio>
#include <functional>
#include <memory>
#include <random>
#include <string>

#include "sluice/core/builder.h"
#include "sluice/formats/protobuf_decoder.h"

namespace {

namespace pb = google::protobuf;

constexpr int64_t kMessages = 1'000'000;
constexpr int kRuns = 5;

constexpr std::string_view kSchema = R"(
  syntax = "proto3";
  package bench;
  import "google/protobuf/timestamp.proto";
  enum Kind { KIND_UNSPECIFIED = 0; CLICK = 1; VIEW = 2; PURCHASE = 3; }
  message Event {
    string event_id = 1;
    int64 user_id = 2;
    string event_type = 3;
    google.protobuf.Timestamp occurred_at = 4;
    double amount = 5;
    string currency = 6;
    int32 quantity = 7;
    bool is_test = 8;
    Kind kind = 9;
    repeated string tags = 10;
  })";

struct Fixture {
  pb::DescriptorPool pool{pb::DescriptorPool::generated_pool()};
  pb::DynamicMessageFactory factory;
  const pb::Descriptor* event = nullptr;
  sluice::ColumnPtr encoded;
  int64_t bytes = 0;
};

bool Build(Fixture* fixture) {
  pb::io::ArrayInputStream input(kSchema.data(), static_cast<int>(kSchema.size()));
  pb::io::Tokenizer tokenizer(&input, nullptr);
  pb::compiler::Parser parser;
  pb::FileDescriptorProto file;
  if (!parser.Parse(&tokenizer, &file)) return false;
  file.set_name("bench.proto");
  if (fixture->pool.BuildFile(file) == nullptr) return false;
  fixture->event = fixture->pool.FindMessageTypeByName("bench.Event");

  std::unique_ptr<pb::Message> message(fixture->factory.GetPrototype(fixture->event)->New());
  const pb::Reflection* reflection = message->GetReflection();
  auto field = [&](const char* name) { return fixture->event->FindFieldByName(name); };
  const pb::Descriptor* timestamp = field("occurred_at")->message_type();
  const char* kTypes[] = {"page_view", "add_to_cart", "checkout", "search"};
  const char* kCurrencies[] = {"EUR", "USD", "GBP"};
  const char* kTags[] = {"mobile", "web", "promo", "returning", "eu", "us"};
  std::mt19937_64 rng(7);
  sluice::BinaryBuilder builder(sluice::DataType::Binary());
  builder.Reserve(kMessages);
  std::string wire;
  char id[40];
  for (int64_t i = 0; i < kMessages; ++i) {
    message->Clear();
    std::snprintf(id, sizeof(id), "evt-%016llx-%08x", static_cast<unsigned long long>(rng()),
                  static_cast<unsigned>(i));
    reflection->SetString(message.get(), field("event_id"), id);
    reflection->SetInt64(message.get(), field("user_id"), static_cast<int64_t>(rng() % 50'000'000));
    reflection->SetString(message.get(), field("event_type"), kTypes[rng() % 4]);
    pb::Message* at = reflection->MutableMessage(message.get(), field("occurred_at"));
    at->GetReflection()->SetInt64(at, timestamp->FindFieldByName("seconds"), 1'767'225'600 + static_cast<int64_t>(i));
    at->GetReflection()->SetInt32(at, timestamp->FindFieldByName("nanos"), static_cast<int32_t>(rng() % 1'000'000'000));
    reflection->SetDouble(message.get(), field("amount"), static_cast<double>(rng() % 100'000) / 100);
    reflection->SetString(message.get(), field("currency"), kCurrencies[rng() % 3]);
    reflection->SetInt32(message.get(), field("quantity"), static_cast<int32_t>(rng() % 20 + 1));
    reflection->SetBool(message.get(), field("is_test"), rng() % 100 == 0);
    reflection->SetEnumValue(message.get(), field("kind"), static_cast<int>(rng() % 4));
    reflection->AddString(message.get(), field("tags"), kTags[rng() % 6]);
    reflection->AddString(message.get(), field("tags"), kTags[rng() % 6]);
    wire.clear();
    message->SerializeToString(&wire);
    builder.Append(wire);
    fixture->bytes += static_cast<int64_t>(wire.size());
  }
  fixture->encoded = builder.Finish();
  return true;
}

// The CPU time of this thread: on a machine shared with other work, wall time would count the
// time the thread waited for a core.
double ThreadSeconds() {
  timespec now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
}

// Runs the two contenders alternately, kRuns times each, and keeps each one's best time.
void BestOfAlternating(const std::function<void()>& first, const std::function<void()>& second, double* first_best,
                       double* second_best) {
  *first_best = *second_best = 1e30;
  for (int i = 0; i < kRuns; ++i) {
    double start = ThreadSeconds();
    first();
    *first_best = std::min(*first_best, ThreadSeconds() - start);
    start = ThreadSeconds();
    second();
    *second_best = std::min(*second_best, ThreadSeconds() - start);
  }
}

}  // namespace

int main() {
  Fixture fixture;
  if (!Build(&fixture)) {
    std::fprintf(stderr, "the benchmark schema does not build\n");
    return 1;
  }
  auto decoder = sluice::formats::ProtobufDecoder::Make(kSchema, "bench.Event");
  if (!decoder.ok()) {
    std::fprintf(stderr, "%s\n", decoder.status().ToString().c_str());
    return 1;
  }

  int64_t malformed = 0;
  auto decode = [&] {
    sluice::DecodeStats stats;
    auto column = (*decoder)->Decode(*fixture.encoded, &stats);
    malformed += column.ok() ? stats.malformed : 1;
  };
  std::unique_ptr<pb::Message> message(fixture.factory.GetPrototype(fixture.event)->New());
  int64_t parse_failures = 0;
  auto parse = [&] {
    for (int64_t row = 0; row < fixture.encoded->length; ++row) {
      std::string_view value = fixture.encoded->View(row);
      message->Clear();
      if (!message->ParseFromArray(value.data(), static_cast<int>(value.size()))) ++parse_failures;
    }
  };
  double sluice_seconds;
  double reference_seconds;
  BestOfAlternating(decode, parse, &sluice_seconds, &reference_seconds);
  if (malformed != 0 || parse_failures != 0) {
    std::fprintf(stderr, "%lld values not decoded, %lld refused by libprotobuf\n", static_cast<long long>(malformed),
                 static_cast<long long>(parse_failures));
    return 1;
  }

  double megabytes = static_cast<double>(fixture.bytes) / 1e6;
  std::printf("%lld messages, %.1f MB, %.1f bytes each\n", static_cast<long long>(kMessages), megabytes,
              static_cast<double>(fixture.bytes) / kMessages);
  std::printf("%-36s %14s %10s\n", "", "messages/s", "MB/s");
  std::printf("%-36s %14.0f %10.1f\n", "sluice ProtobufDecoder -> columns", kMessages / sluice_seconds,
              megabytes / sluice_seconds);
  std::printf("%-36s %14.0f %10.1f\n", "libprotobuf DynamicMessage parse", kMessages / reference_seconds,
              megabytes / reference_seconds);
  std::printf("ratio (sluice / DynamicMessage): %.2fx\n", reference_seconds / sluice_seconds);
  return 0;
}
