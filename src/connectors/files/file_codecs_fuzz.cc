// Fuzzes the csv and json-lines readers with arbitrary file contents. Any input may be refused,
// none may crash; and what a reader accepts must survive a round trip: written back by the
// matching writer and read again, every value prints the same.
//
// The first byte chooses the codec (bit 0: csv or json), for csv the options (bit 1: header,
// bit 2: `"` as escape, bit 3: null value "NULL") and the schema (bit 4: one column or a row of
// every type); the rest is the file.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "connectors/files/file_codecs.h"
#include "connectors/files/file_formats_testing.h"
#include "sluice/core/compute.h"

namespace {

using sluice::BatchPtr;
using sluice::TypePtr;

constexpr int64_t kBatchSize = 7;

// Every value of every batch, as text; "" when nothing was read.
std::vector<std::string> Cells(const std::vector<BatchPtr>& batches) {
  std::vector<std::string> cells;
  for (const BatchPtr& batch : batches) {
    if (batch->num_rows() > kBatchSize) std::abort();
    for (int64_t row = 0; row < batch->num_rows(); ++row) {
      for (int c = 0; c < batch->num_columns(); ++c) cells.push_back(sluice::FormatValue(*batch->column(c), row));
    }
  }
  return cells;
}

void CsvRoundTrip(std::string_view content, const sluice::connectors::CsvOptions& options, const TypePtr& schema) {
  std::vector<BatchPtr> batches;
  if (!sluice::connectors::ReadCsv(content, "fuzz.csv", options, schema, kBatchSize, &batches).ok()) return;
  std::string written;
  if (options.header) sluice::connectors::AppendCsvHeader(schema, options, &written);
  for (const BatchPtr& batch : batches) sluice::connectors::AppendCsvRows(*batch, 0, batch->num_rows(), options, &written);
  std::vector<BatchPtr> again;
  if (!sluice::connectors::ReadCsv(written, "fuzz.csv", options, schema, kBatchSize, &again).ok()) std::abort();
  if (Cells(again) != Cells(batches)) std::abort();
}

void JsonRoundTrip(std::string_view input, const TypePtr& schema) {
  std::string content(input);
  sluice::connectors::PadForJson(&content);
  std::vector<BatchPtr> batches;
  if (!sluice::connectors::ReadJsonLines({content.data(), input.size()}, "fuzz.json", schema, kBatchSize, &batches).ok()) {
    return;
  }
  std::string written;
  for (const BatchPtr& batch : batches) sluice::connectors::AppendJsonLines(*batch, 0, batch->num_rows(), &written);
  const size_t length = written.size();
  sluice::connectors::PadForJson(&written);
  std::vector<BatchPtr> again;
  if (!sluice::connectors::ReadJsonLines({written.data(), length}, "fuzz.json", schema, kBatchSize, &again).ok()) {
    std::abort();
  }
  if (Cells(again) != Cells(batches)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const TypePtr every_type = sluice::connectors::file_testing::EveryTypeBatch()->schema();
  static const TypePtr one_column = sluice::DataType::Struct({{"id", sluice::DataType::Long()}}).value();
  const uint8_t choice = data[0];
  std::string_view content(reinterpret_cast<const char*>(data) + 1, size - 1);
  const TypePtr& schema = choice & 16 ? one_column : every_type;
  if (choice & 1) {
    JsonRoundTrip(content, schema);
    return 0;
  }
  sluice::connectors::CsvOptions options;
  options.header = choice & 2;
  if (choice & 4) options.escape = '"';
  if (choice & 8) options.null_value = "NULL";
  CsvRoundTrip(content, options, schema);
  return 0;
}
