#include "parquet/codec.h"

#include <snappy.h>
#include <zlib.h>
#include <zstd.h>

#include <string>

#include "sluice/core/error_classes.h"

namespace sluice::parquet {

namespace {

Status Corrupt(CompressionCodec codec, std::string what) {
  return Status::Error(errors::kParquetCorruptFile, CodecName(codec) + " page: " + std::move(what));
}

Status Unsupported(CompressionCodec codec) {
  return Status::Error(errors::kParquetUnsupportedFeature,
                       "compression codec " + CodecName(codec) +
                           " is not supported (sluice reads and writes UNCOMPRESSED, SNAPPY, GZIP and ZSTD)");
}

struct ZstdContexts {
  ZSTD_CCtx* compress = nullptr;
  ZSTD_DCtx* decompress = nullptr;
  ~ZstdContexts() {
    ZSTD_freeCCtx(compress);
    ZSTD_freeDCtx(decompress);
  }
};

ZstdContexts& ThreadZstd() {
  thread_local ZstdContexts contexts;
  return contexts;
}

Result<std::string_view> GzipCompress(std::string_view input, CompressionBuffer* scratch) {
  z_stream stream{};
  // windowBits 15 + 16: a gzip header and trailer around the deflate stream.
  if (deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return Status::Error(errors::kInternalError, "zlib deflateInit2 failed");
  }
  size_t bound = deflateBound(&stream, input.size()) + 32;
  char* out = scratch->Reserve(bound);
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input.data()));
  stream.avail_in = static_cast<uInt>(input.size());
  stream.next_out = reinterpret_cast<Bytef*>(out);
  stream.avail_out = static_cast<uInt>(bound);
  int rc = deflate(&stream, Z_FINISH);
  size_t produced = stream.total_out;
  deflateEnd(&stream);
  if (rc != Z_STREAM_END) return Status::Error(errors::kInternalError, "zlib deflate did not finish");
  return std::string_view(out, produced);
}

Status GzipDecompress(std::string_view input, std::string* out) {
  z_stream stream{};
  // windowBits 15 + 32: accept a gzip or a zlib header (writers have used both).
  if (inflateInit2(&stream, 15 + 32) != Z_OK) return Status::Error(errors::kInternalError, "zlib inflateInit2 failed");
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input.data()));
  stream.avail_in = static_cast<uInt>(input.size());
  stream.next_out = reinterpret_cast<Bytef*>(out->data());
  stream.avail_out = static_cast<uInt>(out->size());
  int rc = inflate(&stream, Z_FINISH);
  size_t produced = stream.total_out;
  inflateEnd(&stream);
  if (rc != Z_STREAM_END) {
    return Corrupt(CompressionCodec::kGzip, rc == Z_BUF_ERROR ? "decompresses to more bytes than the header declares"
                                                              : "malformed deflate stream");
  }
  if (produced != out->size()) {
    return Corrupt(CompressionCodec::kGzip, "decompressed to " + std::to_string(produced) + " bytes, header declares " +
                                                std::to_string(out->size()));
  }
  return Status::OK();
}

}  // namespace

bool IsCodecSupported(CompressionCodec codec) {
  return codec == CompressionCodec::kUncompressed || codec == CompressionCodec::kSnappy ||
         codec == CompressionCodec::kGzip || codec == CompressionCodec::kZstd;
}

Result<std::string_view> CompressPage(CompressionCodec codec, int zstd_level, std::string_view input,
                                      CompressionBuffer* scratch) {
  switch (codec) {
    case CompressionCodec::kUncompressed:
      return input;
    case CompressionCodec::kSnappy: {
      char* out = scratch->Reserve(snappy::MaxCompressedLength(input.size()));
      size_t length = 0;
      snappy::RawCompress(input.data(), input.size(), out, &length);
      return std::string_view(out, length);
    }
    case CompressionCodec::kGzip:
      return GzipCompress(input, scratch);
    case CompressionCodec::kZstd: {
      ZstdContexts& z = ThreadZstd();
      if (z.compress == nullptr) z.compress = ZSTD_createCCtx();
      size_t bound = ZSTD_compressBound(input.size());
      char* out = scratch->Reserve(bound);
      size_t n = ZSTD_compressCCtx(z.compress, out, bound, input.data(), input.size(), zstd_level);
      if (ZSTD_isError(n)) return Status::Error(errors::kInternalError, std::string("zstd: ") + ZSTD_getErrorName(n));
      return std::string_view(out, n);
    }
    default:
      return Unsupported(codec);
  }
}

Status DecompressPage(CompressionCodec codec, std::string_view input, int64_t uncompressed_size, std::string* out) {
  if (uncompressed_size < 0) return Corrupt(codec, "negative uncompressed size");
  if (!IsCodecSupported(codec)) return Unsupported(codec);
  auto expected = static_cast<size_t>(uncompressed_size);
  switch (codec) {
    case CompressionCodec::kUncompressed:
      if (input.size() != expected) {
        return Corrupt(codec, std::to_string(input.size()) + " bytes, header declares " + std::to_string(expected));
      }
      out->assign(input);
      return Status::OK();
    case CompressionCodec::kSnappy: {
      size_t length = 0;
      if (!snappy::GetUncompressedLength(input.data(), input.size(), &length)) {
        return Corrupt(codec, "malformed length prefix");
      }
      if (length != expected) {
        return Corrupt(codec, "decompresses to " + std::to_string(length) + " bytes, header declares " +
                                  std::to_string(expected));
      }
      out->resize(expected);
      if (!snappy::RawUncompress(input.data(), input.size(), out->data())) return Corrupt(codec, "malformed stream");
      return Status::OK();
    }
    case CompressionCodec::kGzip:
      out->resize(expected);
      return GzipDecompress(input, out);
    case CompressionCodec::kZstd: {
      ZstdContexts& z = ThreadZstd();
      if (z.decompress == nullptr) z.decompress = ZSTD_createDCtx();
      out->resize(expected);
      size_t n = ZSTD_decompressDCtx(z.decompress, out->data(), out->size(), input.data(), input.size());
      if (ZSTD_isError(n)) return Corrupt(codec, ZSTD_getErrorName(n));
      if (n != expected) {
        return Corrupt(codec, "decompressed to " + std::to_string(n) + " bytes, header declares " + std::to_string(expected));
      }
      return Status::OK();
    }
    default:
      return Unsupported(codec);
  }
}

}  // namespace sluice::parquet
