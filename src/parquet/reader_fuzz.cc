// libFuzzer target: arbitrary bytes as a whole Parquet file, read completely (footer, schema,
// statistics of every row group, every column of every row group in small batches). Any
// outcome but a crash, a sanitizer report or a runaway allocation is fine.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "sluice/parquet/reader.h"

namespace {

class MemoryFile final : public sluice::RandomAccessFile {
 public:
  explicit MemoryFile(std::string data) : data_(std::move(data)) {}
  int64_t Size() const override { return static_cast<int64_t>(data_.size()); }
  sluice::Status ReadAt(int64_t offset, int64_t length, std::string* out) const override {
    if (offset < 0 || length < 0 || offset + length > Size()) {
      return sluice::Status::Error("IO_ERROR", "read past the end");
    }
    out->assign(data_, static_cast<size_t>(offset), static_cast<size_t>(length));
    return sluice::Status::OK();
  }

 private:
  std::string data_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto reader = sluice::parquet::ParquetReader::Open(
      std::make_unique<MemoryFile>(std::string(reinterpret_cast<const char*>(data), size)));
  if (!reader.ok()) return 0;
  for (int g = 0; g < (*reader)->num_row_groups(); ++g) (void)(*reader)->RowGroupStatistics(g);
  sluice::parquet::ReadOptions options;
  options.batch_size = 100;
  auto batches = (*reader)->NewBatchReader(options);
  if (!batches.ok()) return 0;
  while (true) {
    auto batch = (*batches)->Next();
    if (!batch.ok() || !*batch) break;
  }
  return 0;
}
