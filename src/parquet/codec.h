// Page compression codecs: UNCOMPRESSED, SNAPPY, GZIP and ZSTD, both ways.
//
// Each thread keeps its own compression contexts (created on first use), so these functions are
// thread-safe and allocate nothing per call beyond growing *out. Other codecs (LZO, BROTLI, LZ4,
// LZ4_RAW) are PARQUET_UNSUPPORTED_FEATURE.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "sluice/core/status.h"
#include "sluice/parquet/metadata.h"

namespace sluice::parquet {

// The memory a page is compressed into. Growing it leaves the new bytes uninitialized, so that
// compressing touches only the bytes the codec writes (a page's worst-case bound is often twice
// what it compresses to): nothing is cleared, and no fresh memory is faulted in for nothing.
class CompressionBuffer {
 public:
  // At least `size` writable bytes; what the buffer held is not kept when it grows.
  char* Reserve(size_t size) {
    if (capacity_ < size) {
      data_.reset(new char[size]);
      capacity_ = size;
    }
    return data_.get();
  }
  const char* data() const { return data_.get(); }

 private:
  std::unique_ptr<char[]> data_;
  size_t capacity_ = 0;
};

// Compresses `input` with `codec` and returns the compressed bytes: a view into *scratch (at its
// start), or `input` itself for UNCOMPRESSED. *scratch only ever grows, so a writer that keeps
// it between pages neither allocates nor clears memory per page. zstd_level is used by ZSTD only
// (1..22; 0 means zstd's default). GZIP output is a gzip member, as parquet-format's
// Compression.md asks.
Result<std::string_view> CompressPage(CompressionCodec codec, int zstd_level, std::string_view input,
                                      CompressionBuffer* scratch);

// Replaces *out with the decompressed `input`, which must decompress to exactly
// `uncompressed_size` bytes (the page header's size): anything else, or a malformed stream, is
// PARQUET_CORRUPT_FILE. Never allocates more than uncompressed_size bytes, so the caller bounds
// memory by checking that size first.
Status DecompressPage(CompressionCodec codec, std::string_view input, int64_t uncompressed_size, std::string* out);

// Whether this build can compress and decompress `codec`.
bool IsCodecSupported(CompressionCodec codec);

}  // namespace sluice::parquet
