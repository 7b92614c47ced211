#include "parquet/codec.h"

#include <gtest/gtest.h>

#include <string>

#include "sluice/core/error_classes.h"

namespace sluice::parquet {
namespace {

constexpr CompressionCodec kCodecs[] = {CompressionCodec::kUncompressed, CompressionCodec::kSnappy,
                                        CompressionCodec::kGzip, CompressionCodec::kZstd};

std::string SampleData() {
  std::string data;
  for (int i = 0; i < 10000; ++i) data += "value-" + std::to_string(i % 97) + ";";
  return data;
}

TEST(CodecTest, EverySupportedCodecRoundTrips) {
  std::string data = SampleData();
  for (CompressionCodec codec : kCodecs) {
    for (const std::string& input : {data, std::string()}) {
      CompressionBuffer scratch;
      std::string back;
      Result<std::string_view> compressed_view = CompressPage(codec, 3, input, &scratch);
      ASSERT_TRUE(compressed_view.ok()) << CodecName(codec);
      std::string compressed(*compressed_view);
      if (codec != CompressionCodec::kUncompressed && !input.empty()) {
        EXPECT_LT(compressed.size(), input.size() / 4);
      }
      Status s = DecompressPage(codec, compressed, static_cast<int64_t>(input.size()), &back);
      ASSERT_TRUE(s.ok()) << CodecName(codec) << ": " << s.ToString();
      EXPECT_EQ(back, input) << CodecName(codec);
    }
  }
}

TEST(CodecTest, ScratchIsReusedAcrossPagesOfDifferentSizes) {
  CompressionBuffer scratch;
  std::string big = SampleData(), small = "tiny page";
  for (const std::string& input : {big, small, big}) {
    Result<std::string_view> compressed = CompressPage(CompressionCodec::kSnappy, 0, input, &scratch);
    ASSERT_TRUE(compressed.ok());
    std::string back;
    ASSERT_TRUE(DecompressPage(CompressionCodec::kSnappy, *compressed, static_cast<int64_t>(input.size()), &back).ok());
    EXPECT_EQ(back, input);
  }
}

TEST(CodecTest, AWrongDeclaredSizeIsCorrupt) {
  std::string data = SampleData();
  for (CompressionCodec codec : kCodecs) {
    CompressionBuffer scratch;
    std::string back;
    Result<std::string_view> compressed_view = CompressPage(codec, 1, data, &scratch);
    ASSERT_TRUE(compressed_view.ok());
    std::string compressed(*compressed_view);
    for (int64_t size : {int64_t{0}, static_cast<int64_t>(data.size()) - 1, static_cast<int64_t>(data.size()) + 1}) {
      Status s = DecompressPage(codec, compressed, size, &back);
      EXPECT_EQ(s.error_class(), errors::kParquetCorruptFile) << CodecName(codec) << " size " << size;
    }
  }
}

TEST(CodecTest, GarbageAndTruncatedStreamsAreCorrupt) {
  std::string data = SampleData();
  for (CompressionCodec codec : {CompressionCodec::kSnappy, CompressionCodec::kGzip, CompressionCodec::kZstd}) {
    CompressionBuffer scratch;
    std::string back;
    Result<std::string_view> compressed_view = CompressPage(codec, 1, data, &scratch);
    ASSERT_TRUE(compressed_view.ok());
    std::string compressed(*compressed_view);
    std::string truncated = compressed.substr(0, compressed.size() / 2);
    EXPECT_EQ(DecompressPage(codec, truncated, static_cast<int64_t>(data.size()), &back).error_class(),
              errors::kParquetCorruptFile)
        << CodecName(codec);
    std::string garbage(200, '\xAB');
    EXPECT_EQ(DecompressPage(codec, garbage, 1000, &back).error_class(), errors::kParquetCorruptFile) << CodecName(codec);
  }
}

TEST(CodecTest, UnsupportedCodecsSayWhich) {
  std::string out;
  Status s = DecompressPage(CompressionCodec::kBrotli, "x", 1, &out);
  EXPECT_EQ(s.error_class(), errors::kParquetUnsupportedFeature);
  EXPECT_NE(s.message().find("BROTLI"), std::string_view::npos);
  CompressionBuffer scratch;
  EXPECT_EQ(CompressPage(CompressionCodec::kLzo, 0, "x", &scratch).status().error_class(),
            errors::kParquetUnsupportedFeature);
}

}  // namespace
}  // namespace sluice::parquet
