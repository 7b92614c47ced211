#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "parquet/decoding.h"
#include "parquet/encoding.h"

namespace sluice::parquet {
namespace {

// An independent reading of the hybrid encoding for any width up to 64, straight from the
// specification, so that the encoder is checked beyond the 32 bits the reader supports.
std::vector<uint64_t> DecodeHybrid(const std::string& encoded, int bit_width, size_t count) {
  std::vector<uint64_t> out;
  size_t pos = 0;
  auto byte = [&](size_t i) { return static_cast<uint8_t>(encoded.at(i)); };
  while (out.size() < count) {
    uint64_t header = 0;
    for (int shift = 0;; shift += 7) {
      uint8_t b = byte(pos++);
      header |= static_cast<uint64_t>(b & 0x7F) << shift;
      if ((b & 0x80) == 0) break;
    }
    if (header & 1) {
      size_t values = (header >> 1) * 8;
      size_t bit = 0;
      for (size_t i = 0; i < values; ++i) {
        uint64_t v = 0;
        for (int b = 0; b < bit_width; ++b, ++bit) {
          if (byte(pos + bit / 8) & (1u << (bit % 8))) v |= uint64_t{1} << b;
        }
        if (out.size() < count) out.push_back(v);
      }
      pos += values * bit_width / 8;
    } else {
      uint64_t v = 0;
      for (int i = 0; i < (bit_width + 7) / 8; ++i) v |= static_cast<uint64_t>(byte(pos++)) << (8 * i);
      for (uint64_t i = 0; i < (header >> 1); ++i) out.push_back(v);
    }
  }
  EXPECT_EQ(pos, encoded.size()) << "trailing bytes after " << count << " values";
  return out;
}

std::vector<uint64_t> MixedValues(int bit_width, size_t count, uint32_t seed) {
  std::mt19937_64 rng(seed);
  uint64_t mask = bit_width == 64 ? ~uint64_t{0} : (uint64_t{1} << bit_width) - 1;
  std::vector<uint64_t> values;
  while (values.size() < count) {
    uint64_t v = rng() & mask;
    // Alternate literal stretches with runs of every length around the 8-value threshold.
    size_t run = (rng() % 3 == 0) ? 1 + rng() % 40 : 1;
    for (size_t i = 0; i < run && values.size() < count; ++i) values.push_back(v);
  }
  return values;
}

TEST(RleBitPackedEncoderTest, RoundTripsEveryBitWidthFrom0To64) {
  for (int width = 0; width <= 64; ++width) {
    for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{9}, size_t{100}, size_t{5000}}) {
      std::vector<uint64_t> values = MixedValues(width, count, static_cast<uint32_t>(width * 131 + count));
      RleBitPackedEncoder encoder(width);
      for (uint64_t v : values) encoder.Put(v);
      std::string encoded;
      encoder.Flush(&encoded);
      EXPECT_EQ(DecodeHybrid(encoded, width, count), values) << "width " << width << " count " << count;
    }
  }
}

TEST(RleBitPackedEncoderTest, TheReaderDecodesWhatTheEncoderWritesUpTo32Bits) {
  for (int width = 0; width <= 32; ++width) {
    std::vector<uint64_t> values = MixedValues(width, 3000, static_cast<uint32_t>(width));
    RleBitPackedEncoder encoder(width);
    for (uint64_t v : values) encoder.Put(v);
    std::string encoded;
    encoder.Flush(&encoded);
    RleBitPackedDecoder decoder(reinterpret_cast<const uint8_t*>(encoded.data()), static_cast<int64_t>(encoded.size()),
                                width);
    std::vector<uint32_t> decoded(values.size());
    Status s = decoder.Decode(static_cast<int64_t>(decoded.size()), decoded.data());
    ASSERT_TRUE(s.ok()) << "width " << width << ": " << s.ToString();
    for (size_t i = 0; i < values.size(); ++i) ASSERT_EQ(decoded[i], values[i]) << "width " << width << " at " << i;
  }
}

TEST(RleBitPackedEncoderTest, LongRunsBecomeOneRleRun) {
  RleBitPackedEncoder encoder(1);
  encoder.PutRepeated(1, 1000000);
  std::string encoded;
  encoder.Flush(&encoded);
  // header varint(1000000 << 1) takes 3 bytes, then one byte of value.
  EXPECT_EQ(encoded.size(), 4u);
  EXPECT_EQ(DecodeHybrid(encoded, 1, 1000000), std::vector<uint64_t>(1000000, 1));
}

TEST(RleBitPackedEncoderTest, PutRepeatedMatchesPutOneByOne) {
  std::mt19937 rng(7);
  RleBitPackedEncoder a(3), b(3);
  for (int i = 0; i < 2000; ++i) {
    uint64_t v = rng() % 8;
    int64_t n = rng() % 30;
    for (int64_t k = 0; k < n; ++k) a.Put(v);
    b.PutRepeated(v, n);
  }
  std::string ea, eb;
  a.Flush(&ea);
  b.Flush(&eb);
  EXPECT_EQ(ea, eb);
}

TEST(RleBitPackedEncoderTest, LiteralRunsLongerThan63GroupsAreSplit) {
  std::vector<uint64_t> values;
  for (int i = 0; i < 8 * 200; ++i) values.push_back(i % 2);
  RleBitPackedEncoder encoder(1);
  for (uint64_t v : values) encoder.Put(v);
  std::string encoded;
  encoder.Flush(&encoded);
  EXPECT_EQ(static_cast<uint8_t>(encoded[0]), (63 << 1) | 1);
  EXPECT_EQ(DecodeHybrid(encoded, 1, values.size()), values);
}

TEST(PlainEncodingTest, BooleansAreBitPackedLeastSignificantBitFirst) {
  std::vector<uint8_t> values = {1, 0, 1, 1, 0, 0, 0, 0, 1};
  std::string out;
  PlainAppendBooleans(values.data(), static_cast<int64_t>(values.size()), &out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(static_cast<uint8_t>(out[0]), 0b00001101);
  EXPECT_EQ(static_cast<uint8_t>(out[1]), 0b00000001);
}

TEST(PlainEncodingTest, ByteArraysHaveLittleEndianLengthPrefixes) {
  std::string out;
  PlainAppendByteArray("abc", &out);
  PlainAppendByteArray("", &out);
  EXPECT_EQ(out, std::string("\x03\0\0\0abc\0\0\0\0", 11));
}

TEST(DictionaryTest, AssignsIndicesInFirstSeenOrderAndWritesPlain) {
  Dictionary dict(0);
  EXPECT_EQ(dict.IndexOf("b"), 0u);
  EXPECT_EQ(dict.IndexOf("a"), 1u);
  EXPECT_EQ(dict.IndexOf("b"), 0u);
  EXPECT_EQ(dict.IndexOf(""), 2u);
  EXPECT_EQ(dict.size(), 3);
  std::string plain;
  dict.WritePlain(&plain);
  EXPECT_EQ(plain, std::string("\x01\0\0\0b\x01\0\0\0a\0\0\0\0", 14));
  EXPECT_EQ(dict.plain_size(), 14);
}

TEST(DictionaryTest, ByteArraysOfEveryShortLengthDifferingInAnyOneByteAreDistinct) {
  Dictionary dict(0);
  std::vector<std::string> values;
  for (size_t size = 0; size <= 24; ++size) {
    std::string base(size, 'a');
    values.push_back(base);
    for (size_t at = 0; at < size; ++at) {
      std::string changed = base;
      changed[at] = 'b';
      values.push_back(changed);
    }
  }
  for (size_t i = 0; i < values.size(); ++i) ASSERT_EQ(dict.IndexOf(values[i]), i) << values[i];
  for (size_t i = 0; i < values.size(); ++i) {
    std::string copy = values[i];  // equal bytes at another address
    ASSERT_EQ(dict.IndexOf(copy), i) << values[i];
  }
  EXPECT_EQ(dict.size(), static_cast<int32_t>(values.size()));
}

TEST(DictionaryTest, ManyDistinctFixedWidthValuesSurviveGrowth) {
  Dictionary dict(8);
  for (int64_t i = 0; i < 100000; ++i) {
    std::string_view bytes(reinterpret_cast<const char*>(&i), 8);
    ASSERT_EQ(dict.IndexOf(bytes), static_cast<uint32_t>(i));
  }
  for (int64_t i = 0; i < 100000; i += 997) {
    std::string_view bytes(reinterpret_cast<const char*>(&i), 8);
    ASSERT_EQ(dict.IndexOf(bytes), static_cast<uint32_t>(i));
  }
  EXPECT_EQ(dict.plain_size(), 800000);
  dict.Clear();
  EXPECT_EQ(dict.size(), 0);
  int64_t seven = 7;
  EXPECT_EQ(dict.IndexOf(std::string_view(reinterpret_cast<const char*>(&seven), 8)), 0u);
}

TEST(DictionaryTest, FloatsAreComparedByTheirBytes) {
  Dictionary dict(8);
  double zero = 0.0, negative_zero = -0.0;
  EXPECT_NE(dict.IndexOf(std::string_view(reinterpret_cast<const char*>(&zero), 8)),
            dict.IndexOf(std::string_view(reinterpret_cast<const char*>(&negative_zero), 8)));
}

TEST(BitWidthTest, CoversTheMaximum) {
  EXPECT_EQ(BitWidthFor(0), 0);
  EXPECT_EQ(BitWidthFor(1), 1);
  EXPECT_EQ(BitWidthFor(2), 2);
  EXPECT_EQ(BitWidthFor(255), 8);
  EXPECT_EQ(BitWidthFor(256), 9);
  EXPECT_EQ(BitWidthFor(~uint64_t{0}), 64);
}

}  // namespace
}  // namespace sluice::parquet
