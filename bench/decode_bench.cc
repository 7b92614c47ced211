// Decode throughput of the JSON and Avro decoders, one thread: 1 million Kafka-like values
// (~130 bytes of JSON; the same records in Avro binary, ~60 bytes) decoded in batches of 65536
// rows, as a stream's micro-batches hand them over. Beside the JSON figure: simdjson parsing the
// same documents without building any column (the parse alone, the floor under the decoder);
// items/s is records/s, bytes/s the encoded input consumed.
//
//   cmake -S . -B build-rel -G Ninja -DCMAKE_BUILD_TYPE=Release -DSLUICE_BENCH=ON
//   cmake --build build-rel --target decode_bench && build-rel/decode_bench
#include <benchmark/benchmark.h>

#include <fmt/format.h>
#include <simdjson.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "sluice/core/builder.h"
#include "sluice/formats/avro.h"
#include "sluice/formats/json.h"

namespace {

constexpr int64_t kRecords = 1'000'000;
constexpr int64_t kBatchRows = 65536;

constexpr std::string_view kJsonSchema = R"({"type": "object", "required": ["id"], "properties": {
  "id": {"type": "integer"}, "user": {"type": "string"}, "event": {"type": "string"},
  "amount": {"type": "number"}, "at": {"type": "string", "format": "date-time"},
  "tags": {"type": "array", "items": {"type": "string"}}, "ok": {"type": "boolean"}}})";

constexpr std::string_view kAvroSchema = R"({"type": "record", "name": "Event", "fields": [
  {"name": "id", "type": "long"}, {"name": "user", "type": "string"}, {"name": "event", "type": "string"},
  {"name": "amount", "type": "double"}, {"name": "at", "type": {"type": "long", "logicalType": "timestamp-micros"}},
  {"name": "tags", "type": {"type": "array", "items": "string"}}, {"name": "ok", "type": "boolean"}]})";

void ZigZag(int64_t value, std::string* out) {
  uint64_t z = (static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63);
  while (z >= 0x80) {
    out->push_back(static_cast<char>((z & 0x7f) | 0x80));
    z >>= 7;
  }
  out->push_back(static_cast<char>(z));
}

void AvroString(std::string_view text, std::string* out) {
  ZigZag(static_cast<int64_t>(text.size()), out);
  out->append(text);
}

struct Batches {
  std::vector<sluice::ColumnPtr> columns;
  int64_t bytes = 0;
};

// The same 1 million records, JSON or Avro, cut into batches.
const Batches& Records(bool avro) {
  static Batches batches[2] = {};
  Batches& result = batches[avro ? 1 : 0];
  if (!result.columns.empty()) return result;
  std::mt19937_64 rng(7);
  const char* kEvents[] = {"purchase", "refund", "view", "signup"};
  sluice::BinaryBuilder builder(sluice::DataType::Binary());
  std::string value;
  for (int64_t i = 0; i < kRecords; ++i) {
    int64_t micros = 1700000000000000 + static_cast<int64_t>(rng() % 1000000000000);
    std::string user = "user-" + std::to_string(rng() % 100000);
    const char* event = kEvents[rng() % 4];
    double amount = static_cast<double>(rng() % 100000) / 100;
    bool ok = rng() % 2 == 0;
    value.clear();
    if (avro) {
      ZigZag(i, &value);
      AvroString(user, &value);
      AvroString(event, &value);
      value.append(reinterpret_cast<const char*>(&amount), 8);
      ZigZag(micros, &value);
      ZigZag(2, &value);
      AvroString("web", &value);
      AvroString("eu", &value);
      ZigZag(0, &value);
      value.push_back(ok ? 1 : 0);
    } else {
      value = fmt::format(R"({{"id":{},"user":"{}","event":"{}","amount":{},"at":"2024-03-{:02}T{:02}:{:02}:{:02}.{:06}Z","tags":["web","eu"],"ok":{}}})",
                          i, user, event, amount, 1 + micros % 28, micros % 24, micros % 60, (micros / 60) % 60,
                          micros % 1000000, ok ? "true" : "false");
    }
    builder.Append(value);
    result.bytes += static_cast<int64_t>(value.size());
    if (builder.length() == kBatchRows || i + 1 == kRecords) result.columns.push_back(builder.Finish());
  }
  return result;
}

void Decode(benchmark::State& state, sluice::formats::Decoder& decoder, const Batches& batches) {
  sluice::DecodeStats stats;
  for (auto _ : state) {
    for (const sluice::ColumnPtr& batch : batches.columns) {
      sluice::Result<sluice::ColumnPtr> decoded = decoder.Decode(*batch, &stats);
      benchmark::DoNotOptimize((*decoded)->length);
    }
  }
  if (stats.malformed != 0) state.SkipWithError("malformed records in the benchmark data");
  state.SetItemsProcessed(state.iterations() * kRecords);
  state.SetBytesProcessed(state.iterations() * batches.bytes);
  state.counters["bytes/record"] = static_cast<double>(batches.bytes) / kRecords;
}

void BM_JsonDecode(benchmark::State& state) {
  std::unique_ptr<sluice::formats::Decoder> decoder =
      sluice::formats::MakeJsonDecoder(*sluice::formats::JsonSchemaToType(kJsonSchema)).value();
  Decode(state, *decoder, Records(false));
}
BENCHMARK(BM_JsonDecode)->Unit(benchmark::kMillisecond);

// The reference: simdjson's DOM parse of every document, building nothing.
void BM_JsonParseOnlyReference(benchmark::State& state) {
  const Batches& batches = Records(false);
  simdjson::dom::parser parser;
  std::vector<char> padded;
  for (auto _ : state) {
    for (const sluice::ColumnPtr& batch : batches.columns) {
      for (int64_t row = 0; row < batch->length; ++row) {
        std::string_view bytes = batch->View(row);
        padded.resize(bytes.size() + simdjson::SIMDJSON_PADDING);
        std::memcpy(padded.data(), bytes.data(), bytes.size());
        simdjson::dom::element document;
        benchmark::DoNotOptimize(parser.parse(padded.data(), bytes.size(), false).get(document));
      }
    }
  }
  state.SetItemsProcessed(state.iterations() * kRecords);
  state.SetBytesProcessed(state.iterations() * batches.bytes);
}
BENCHMARK(BM_JsonParseOnlyReference)->Unit(benchmark::kMillisecond);

void BM_AvroDecode(benchmark::State& state) {
  std::unique_ptr<sluice::formats::Decoder> decoder =
      sluice::formats::MakeAvroDecoder(*sluice::formats::ParseAvroSchema(kAvroSchema)).value();
  Decode(state, *decoder, Records(true));
}
BENCHMARK(BM_AvroDecode)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
