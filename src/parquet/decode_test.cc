// The page encodings, decoded from byte sequences built by hand after the examples of the
// Parquet specification (Encodings.md), and from a reference encoder for round trips.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "parquet/decoding.h"

namespace sluice::parquet {
namespace {

using Bytes = std::vector<uint8_t>;

// Packs values least significant bit first, as the hybrid and delta encodings do.
Bytes PackBits(const std::vector<uint64_t>& values, int width) {
  Bytes out((values.size() * width + 7) / 8, 0);
  for (size_t i = 0; i < values.size(); ++i) {
    for (int b = 0; b < width; ++b) {
      if ((values[i] >> b) & 1) out[(i * width + b) / 8] |= static_cast<uint8_t>(1u << ((i * width + b) % 8));
    }
  }
  return out;
}

void AppendVarint(Bytes* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<uint8_t>(v));
}

uint64_t ZigZag(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }

// A reference DELTA_BINARY_PACKED encoder following the specification word by word.
Bytes EncodeDeltaBinaryPacked(const std::vector<int64_t>& values, int block_size = 128, int miniblocks = 4) {
  Bytes out;
  AppendVarint(&out, block_size);
  AppendVarint(&out, miniblocks);
  AppendVarint(&out, values.size());
  AppendVarint(&out, ZigZag(values.empty() ? 0 : values[0]));
  const size_t per_miniblock = block_size / miniblocks;
  for (size_t start = 1; start < values.size(); start += block_size) {
    std::vector<int64_t> deltas;
    for (size_t i = start; i < values.size() && i < start + block_size; ++i) {
      deltas.push_back(static_cast<int64_t>(static_cast<uint64_t>(values[i]) - static_cast<uint64_t>(values[i - 1])));
    }
    int64_t min_delta = *std::min_element(deltas.begin(), deltas.end());
    AppendVarint(&out, ZigZag(min_delta));
    std::vector<std::vector<uint64_t>> relative(miniblocks);
    std::vector<int> widths(miniblocks, 0);
    for (size_t i = 0; i < deltas.size(); ++i) {
      uint64_t r = static_cast<uint64_t>(deltas[i]) - static_cast<uint64_t>(min_delta);
      relative[i / per_miniblock].push_back(r);
      widths[i / per_miniblock] = std::max(widths[i / per_miniblock], 64 - __builtin_clzll(r | 1) - (r == 0 ? 1 : 0));
    }
    for (int w : widths) out.push_back(static_cast<uint8_t>(w));
    for (int m = 0; m < miniblocks; ++m) {
      if (relative[m].empty()) break;
      relative[m].resize(per_miniblock, 0);
      Bytes packed = PackBits(relative[m], widths[m]);
      out.insert(out.end(), packed.begin(), packed.end());
    }
  }
  return out;
}

Bytes EncodeDeltaLength(const std::vector<std::string>& values) {
  std::vector<int64_t> lengths;
  for (const auto& v : values) lengths.push_back(static_cast<int64_t>(v.size()));
  Bytes out = EncodeDeltaBinaryPacked(lengths);
  for (const auto& v : values) out.insert(out.end(), v.begin(), v.end());
  return out;
}

std::vector<std::string> Strings(const std::vector<uint8_t>& bytes, const std::vector<int64_t>& offsets) {
  std::vector<std::string> out;
  for (size_t i = 0; i + 1 < offsets.size(); ++i) {
    out.emplace_back(reinterpret_cast<const char*>(bytes.data()) + offsets[i], offsets[i + 1] - offsets[i]);
  }
  return out;
}

TEST(BitUnpacking, EveryWidthFrom0To64RoundTrips) {
  std::mt19937_64 rng(42);
  for (int width = 0; width <= 64; ++width) {
    for (int64_t count : {0, 1, 7, 8, 9, 31, 64, 100, 1000}) {
      std::vector<uint64_t> values(count);
      const uint64_t mask = width == 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
      for (auto& v : values) v = rng() & mask;
      if (count > 0) values[0] = mask;  // the widest value of this width
      Bytes packed = PackBits(values, width);
      // An exact-size heap copy, so that reading one byte too far is caught by the sanitizers.
      std::unique_ptr<uint8_t[]> exact(new uint8_t[packed.size() + 1]);
      if (!packed.empty()) std::memcpy(exact.get(), packed.data(), packed.size());
      std::vector<uint64_t> out64(count);
      UnpackBits64(exact.get(), width, count, out64.data());
      EXPECT_EQ(out64, values) << "width " << width << " count " << count;
      if (width <= 32) {
        std::vector<uint32_t> out32(count);
        UnpackBits32(exact.get(), width, count, out32.data());
        for (int64_t i = 0; i < count; ++i) ASSERT_EQ(out32[i], values[i]) << "width " << width << " at " << i;
      }
    }
  }
}

TEST(RleBitPackedHybrid, DecodesTheSpecificationsBitPackedExample) {
  // Values 0..7 at width 3: one group, header (1 << 1) | 1.
  Bytes data = {0x03, 0x88, 0xC6, 0xFA};
  RleBitPackedDecoder decoder(data.data(), data.size(), 3);
  std::vector<int32_t> out(8);
  ASSERT_TRUE(decoder.Decode(8, out.data()).ok());
  EXPECT_EQ(out, (std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(RleBitPackedHybrid, MixesRunsAndServesAnyBatchSizes) {
  // RLE run: 5 x value 3 (width 2); then a bit-packed group 0,1,2,3,0,1,2,3; then 300 x 1.
  Bytes data = {0x0A, 0x03, 0x03};
  Bytes packed = PackBits({0, 1, 2, 3, 0, 1, 2, 3}, 2);
  data.insert(data.end(), packed.begin(), packed.end());
  AppendVarint(&data, 300 << 1);
  data.push_back(0x01);
  std::vector<int16_t> expected = {3, 3, 3, 3, 3, 0, 1, 2, 3, 0, 1, 2, 3};
  expected.resize(expected.size() + 300, 1);
  for (int batch : {1, 3, 7, 8, 100, 313}) {
    RleBitPackedDecoder decoder(data.data(), data.size(), 2);
    std::vector<int16_t> out(expected.size());
    for (size_t done = 0; done < out.size(); done += batch) {
      int64_t n = std::min<int64_t>(batch, out.size() - done);
      ASSERT_TRUE(decoder.Decode(n, out.data() + done).ok()) << "batch " << batch;
    }
    EXPECT_EQ(out, expected) << "batch " << batch;
    int16_t extra;
    EXPECT_FALSE(decoder.Decode(1, &extra).ok());
  }
}

TEST(RleBitPackedHybrid, WidthZeroIsAllZeros) {
  Bytes data;
  AppendVarint(&data, 1000 << 1);
  RleBitPackedDecoder decoder(data.data(), data.size(), 0);
  std::vector<uint32_t> out(1000, 9);
  ASSERT_TRUE(decoder.Decode(1000, out.data()).ok());
  EXPECT_EQ(out, std::vector<uint32_t>(1000, 0));
}

TEST(RleBitPackedHybrid, RejectsMalformedRuns) {
  uint32_t out[16];
  Bytes zero_run = {0x00};
  EXPECT_EQ(RleBitPackedDecoder(zero_run.data(), 1, 3).Decode(1, out).error_class(), "PARQUET_CORRUPT_FILE");
  Bytes missing_value = {0x0A};
  EXPECT_FALSE(RleBitPackedDecoder(missing_value.data(), 1, 8).Decode(1, out).ok());
  Bytes too_wide = {0x0A, 0x08};  // value 8 does not fit in 3 bits
  EXPECT_FALSE(RleBitPackedDecoder(too_wide.data(), 2, 3).Decode(1, out).ok());
  Bytes truncated_varint = {0x80};
  EXPECT_FALSE(RleBitPackedDecoder(truncated_varint.data(), 1, 3).Decode(1, out).ok());
  // A bit-packed run whose bytes stop early serves only the values present.
  Bytes short_group = {0x03, 0x88};  // 8 values of width 3 need 3 bytes
  RleBitPackedDecoder decoder(short_group.data(), 2, 3);
  EXPECT_TRUE(decoder.Decode(2, out).ok());
  EXPECT_EQ(out[0], 0u);
  EXPECT_EQ(out[1], 1u);
  EXPECT_FALSE(decoder.Decode(8, out).ok());
  Bytes empty;
  EXPECT_FALSE(RleBitPackedDecoder(empty.data(), 0, 1).Decode(1, out).ok());
  EXPECT_TRUE(RleBitPackedDecoder(empty.data(), 0, 1).Decode(0, out).ok());
}

TEST(Levels, V1SectionsCarryALengthPrefix) {
  Bytes data = {0x02, 0x00, 0x00, 0x00, 0x08, 0x01, 0xEE};  // 4 x level 1, then a foreign byte
  const uint8_t* pos = data.data();
  RleBitPackedDecoder decoder;
  ASSERT_TRUE(OpenLevelsV1(&pos, data.data() + data.size(), 1, &decoder).ok());
  EXPECT_EQ(pos, data.data() + 6);
  std::vector<int16_t> levels(4);
  ASSERT_TRUE(decoder.Decode(4, levels.data()).ok());
  EXPECT_EQ(levels, (std::vector<int16_t>{1, 1, 1, 1}));

  Bytes too_long = {0x09, 0x00, 0x00, 0x00, 0x08, 0x01};
  pos = too_long.data();
  EXPECT_EQ(OpenLevelsV1(&pos, too_long.data() + too_long.size(), 1, &decoder).error_class(), "PARQUET_CORRUPT_FILE");
  pos = data.data();
  EXPECT_FALSE(OpenLevelsV1(&pos, data.data() + 3, 1, &decoder).ok());
}

TEST(Levels, BitWidthsHoldTheMaximumLevel) {
  EXPECT_EQ(LevelBitWidth(0), 0);
  EXPECT_EQ(LevelBitWidth(1), 1);
  EXPECT_EQ(LevelBitWidth(2), 2);
  EXPECT_EQ(LevelBitWidth(3), 2);
  EXPECT_EQ(LevelBitWidth(4), 3);
}

TEST(Plain, FixedWidthValuesAreCopied) {
  std::vector<int32_t> values = {1, -2, 3, std::numeric_limits<int32_t>::min()};
  Bytes data(values.size() * 4);
  std::memcpy(data.data(), values.data(), data.size());
  auto decoder = MakePlainFixedDecoder(data.data(), data.size(), 4);
  std::vector<int32_t> out(4);
  ASSERT_TRUE(decoder->DecodeFixed(3, reinterpret_cast<uint8_t*>(out.data())).ok());
  ASSERT_TRUE(decoder->DecodeFixed(1, reinterpret_cast<uint8_t*>(out.data() + 3)).ok());
  EXPECT_EQ(out, values);
  EXPECT_FALSE(decoder->DecodeFixed(1, reinterpret_cast<uint8_t*>(out.data())).ok());
  EXPECT_TRUE(decoder->DecodeFixed(0, nullptr).ok());
  // INT96: 12 bytes per value.
  Bytes int96(24, 0x11);
  auto wide = MakePlainFixedDecoder(int96.data(), 23, 12);
  Bytes out96(24);
  EXPECT_TRUE(wide->DecodeFixed(1, out96.data()).ok());
  EXPECT_EQ(wide->DecodeFixed(1, out96.data()).error_class(), "PARQUET_CORRUPT_FILE");
}

TEST(Plain, BooleansAreBitPackedLeastSignificantFirst) {
  Bytes data = {0b00000101, 0b1};
  auto decoder = MakePlainBooleanDecoder(data.data(), data.size());
  Bytes out(9);
  ASSERT_TRUE(decoder->DecodeFixed(5, out.data()).ok());
  ASSERT_TRUE(decoder->DecodeFixed(4, out.data() + 5).ok());
  EXPECT_EQ(out, (Bytes{1, 0, 1, 0, 0, 0, 0, 0, 1}));
  EXPECT_TRUE(decoder->DecodeFixed(7, out.data()).ok());
  EXPECT_FALSE(decoder->DecodeFixed(1, out.data()).ok());
}

TEST(Plain, ByteArraysAreLengthPrefixed) {
  Bytes data = {5, 0, 0, 0, 'H', 'e', 'l', 'l', 'o', 0, 0, 0, 0, 3, 0, 0, 0, 'a', 'b', 'c'};
  auto decoder = MakePlainByteArrayDecoder(data.data(), data.size());
  std::vector<uint8_t> bytes;
  std::vector<int64_t> offsets = {0};
  ASSERT_TRUE(decoder->DecodeByteArrays(3, &bytes, &offsets).ok());
  EXPECT_EQ(Strings(bytes, offsets), (std::vector<std::string>{"Hello", "", "abc"}));
  EXPECT_FALSE(decoder->DecodeByteArrays(1, &bytes, &offsets).ok());
  // A length running past the page.
  Bytes bad = {6, 0, 0, 0, 'H', 'e', 'l', 'l', 'o'};
  auto truncated = MakePlainByteArrayDecoder(bad.data(), bad.size());
  EXPECT_EQ(truncated->DecodeByteArrays(1, &bytes, &offsets).error_class(), "PARQUET_CORRUPT_FILE");
}

TEST(Plain, VeryLongStringsSurvive) {
  std::string big(3 << 20, 'x');
  Bytes data(4);
  uint32_t length = big.size();
  std::memcpy(data.data(), &length, 4);
  data.insert(data.end(), big.begin(), big.end());
  auto decoder = MakePlainByteArrayDecoder(data.data(), data.size());
  std::vector<uint8_t> bytes;
  std::vector<int64_t> offsets = {0};
  ASSERT_TRUE(decoder->DecodeByteArrays(1, &bytes, &offsets).ok());
  EXPECT_EQ(offsets.back(), static_cast<int64_t>(big.size()));
}

TEST(RleBooleans, HaveALengthPrefix) {
  Bytes data = {0x02, 0x00, 0x00, 0x00, 0x06, 0x01};  // 3 x true
  auto decoder = MakeRleBooleanDecoder(data.data(), data.size());
  ASSERT_TRUE(decoder.ok());
  Bytes out(3);
  ASSERT_TRUE((*decoder)->DecodeFixed(3, out.data()).ok());
  EXPECT_EQ(out, (Bytes{1, 1, 1}));
  EXPECT_FALSE(MakeRleBooleanDecoder(data.data(), 3).ok());
  Bytes long_prefix = {0x09, 0x00, 0x00, 0x00, 0x06, 0x01};
  EXPECT_FALSE(MakeRleBooleanDecoder(long_prefix.data(), long_prefix.size()).ok());
}

TEST(DictionaryIndices, StartWithTheirBitWidth) {
  Bytes data = {0x03, 0x03, 0x88, 0xC6, 0xFA};
  auto decoder = MakeDictionaryIndexDecoder(data.data(), data.size());
  ASSERT_TRUE(decoder.ok());
  std::vector<int32_t> out(8);
  ASSERT_TRUE((*decoder)->DecodeIndices(8, out.data()).ok());
  EXPECT_EQ(out, (std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  Bytes wide = {33, 0x02, 0};
  EXPECT_EQ(MakeDictionaryIndexDecoder(wide.data(), wide.size()).status().error_class(), "PARQUET_CORRUPT_FILE");
  EXPECT_FALSE(MakeDictionaryIndexDecoder(wide.data(), 0).ok());
  // A dictionary of one value: width 0, any number of indices from a single RLE run.
  Bytes single = {0x00, 0xD0, 0x0F};  // bit width 0, then an RLE run of 1000 (header 2000)
  auto one = MakeDictionaryIndexDecoder(single.data(), single.size());
  ASSERT_TRUE(one.ok());
  std::vector<int32_t> zeros(1000, 5);
  ASSERT_TRUE((*one)->DecodeIndices(1000, zeros.data()).ok());
  EXPECT_EQ(zeros, std::vector<int32_t>(1000, 0));
}

TEST(DeltaBinaryPacked, DecodesTheSpecificationsExample) {
  // 7, 5, 3, 1, 2, 3, 4, 5: deltas -2 -2 -2 1 1 1 1, min delta -2, relative 0 0 0 3 3 3 3.
  Bytes data = {0x80, 0x01, 0x04, 0x08, 0x0E, 0x03, 0x02, 0x00, 0x00, 0x00, 0xC0, 0x3F, 0, 0, 0, 0, 0, 0};
  auto decoder = MakeDeltaBinaryPackedDecoder(data.data(), data.size(), 4, 8);
  ASSERT_TRUE(decoder.ok()) << decoder.status().ToString();
  std::vector<int32_t> out(8);
  ASSERT_TRUE((*decoder)->DecodeFixed(8, reinterpret_cast<uint8_t*>(out.data())).ok());
  EXPECT_EQ(out, (std::vector<int32_t>{7, 5, 3, 1, 2, 3, 4, 5}));
  EXPECT_FALSE((*decoder)->DecodeFixed(1, reinterpret_cast<uint8_t*>(out.data())).ok());
  // More values than the page holds.
  EXPECT_EQ(MakeDeltaBinaryPackedDecoder(data.data(), data.size(), 4, 7).status().error_class(), "PARQUET_CORRUPT_FILE");
}

TEST(DeltaBinaryPacked, RoundTripsExtremeInt64AndInt32Values) {
  std::mt19937_64 rng(7);
  std::vector<int64_t> values = {0, std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(), -1, 1};
  for (int i = 0; i < 1000; ++i) values.push_back(static_cast<int64_t>(rng()) >> (rng() % 64));
  Bytes data = EncodeDeltaBinaryPacked(values, 256, 8);
  auto decoder = MakeDeltaBinaryPackedDecoder(data.data(), data.size(), 8, values.size());
  ASSERT_TRUE(decoder.ok());
  std::vector<int64_t> out(values.size());
  size_t done = 0;
  for (size_t batch : {1, 100, 33, 1000}) {
    size_t n = std::min(batch, values.size() - done);
    ASSERT_TRUE((*decoder)->DecodeFixed(n, reinterpret_cast<uint8_t*>(out.data() + done)).ok());
    done += n;
  }
  EXPECT_EQ(out, values);

  std::vector<int64_t> ints = {std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min(), 0, 5};
  std::vector<int64_t> wrapped;  // the encoder works in 64 bits; deltas of int32 wrap in 32
  for (int64_t v : ints) wrapped.push_back(static_cast<int32_t>(v));
  Bytes data32 = EncodeDeltaBinaryPacked(wrapped);
  auto decoder32 = MakeDeltaBinaryPackedDecoder(data32.data(), data32.size(), 4, 4);
  ASSERT_TRUE(decoder32.ok());
  std::vector<int32_t> out32(4);
  // The reference encoder's 64-bit deltas need 33 bits; an int32 column never has them.
  EXPECT_FALSE((*decoder32)->DecodeFixed(4, reinterpret_cast<uint8_t*>(out32.data())).ok());
}

TEST(DeltaBinaryPacked, EmptyAndSingleValuePages) {
  Bytes empty = EncodeDeltaBinaryPacked({});
  auto none = MakeDeltaBinaryPackedDecoder(empty.data(), empty.size(), 8, 0);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE((*none)->DecodeFixed(0, nullptr).ok());
  EXPECT_FALSE((*none)->DecodeFixed(1, empty.data()).ok());
  Bytes one = EncodeDeltaBinaryPacked({-42});
  auto single = MakeDeltaBinaryPackedDecoder(one.data(), one.size(), 8, 1);
  ASSERT_TRUE(single.ok());
  int64_t v = 0;
  ASSERT_TRUE((*single)->DecodeFixed(1, reinterpret_cast<uint8_t*>(&v)).ok());
  EXPECT_EQ(v, -42);
}

TEST(DeltaBinaryPacked, RejectsBadHeadersAndTruncation) {
  Bytes bad_block = {0x40, 0x04, 0x01, 0x00};  // 64 values per block: not a multiple of 128
  EXPECT_FALSE(MakeDeltaBinaryPackedDecoder(bad_block.data(), bad_block.size(), 4, 10).ok());
  Bytes bad_miniblocks = {0x80, 0x01, 0x03, 0x01, 0x00};  // 128 / 3
  EXPECT_FALSE(MakeDeltaBinaryPackedDecoder(bad_miniblocks.data(), bad_miniblocks.size(), 4, 10).ok());
  Bytes wide = {0x80, 0x01, 0x04, 0x02, 0x00, 0x00, 33, 0, 0, 0};  // width 33 in an int32 column
  auto decoder = MakeDeltaBinaryPackedDecoder(wide.data(), wide.size(), 4, 2);
  ASSERT_TRUE(decoder.ok());
  int32_t out[2];
  EXPECT_EQ((*decoder)->DecodeFixed(2, reinterpret_cast<uint8_t*>(out)).error_class(), "PARQUET_CORRUPT_FILE");

  std::vector<int64_t> values;
  for (int i = 0; i < 300; ++i) values.push_back(i * i);
  Bytes full = EncodeDeltaBinaryPacked(values);
  // Every cut fails until the cut only removes the last miniblock's padding, which is optional.
  bool succeeded = false;
  for (size_t length = 0; length <= full.size(); ++length) {
    std::unique_ptr<uint8_t[]> prefix(new uint8_t[length + 1]);
    std::memcpy(prefix.get(), full.data(), length);
    auto truncated = MakeDeltaBinaryPackedDecoder(prefix.get(), length, 8, 300);
    std::vector<int64_t> decoded(300);
    bool ok = truncated.ok() && (*truncated)->DecodeFixed(300, reinterpret_cast<uint8_t*>(decoded.data())).ok();
    if (succeeded) {
      EXPECT_TRUE(ok) << length;
    }
    if (ok) {
      EXPECT_EQ(decoded, values) << length;
    }
    succeeded = succeeded || ok;
  }
  EXPECT_TRUE(succeeded);
}

TEST(DeltaLengthByteArray, DecodesLengthsThenBytes) {
  Bytes data = EncodeDeltaLength({"Hello", "World", "", "Foobar"});
  auto decoder = MakeDeltaLengthByteArrayDecoder(data.data(), data.size(), 4);
  ASSERT_TRUE(decoder.ok()) << decoder.status().ToString();
  std::vector<uint8_t> bytes;
  std::vector<int64_t> offsets = {0};
  ASSERT_TRUE((*decoder)->DecodeByteArrays(1, &bytes, &offsets).ok());
  ASSERT_TRUE((*decoder)->DecodeByteArrays(3, &bytes, &offsets).ok());
  EXPECT_EQ(Strings(bytes, offsets), (std::vector<std::string>{"Hello", "World", "", "Foobar"}));
  EXPECT_FALSE((*decoder)->DecodeByteArrays(1, &bytes, &offsets).ok());
  // The lengths promise more bytes than follow.
  EXPECT_FALSE(MakeDeltaLengthByteArrayDecoder(data.data(), data.size() - 1, 4).ok());
}

TEST(DeltaByteArray, RebuildsValuesFromPrefixesAndSuffixes) {
  // The specification's example: axis, axle, babble, babyhood.
  Bytes data = EncodeDeltaBinaryPacked({0, 2, 0, 3});
  Bytes suffixes = EncodeDeltaLength({"axis", "le", "babble", "yhood"});
  data.insert(data.end(), suffixes.begin(), suffixes.end());
  auto decoder = MakeDeltaByteArrayDecoder(data.data(), data.size(), 4, 0);
  ASSERT_TRUE(decoder.ok()) << decoder.status().ToString();
  std::vector<uint8_t> bytes;
  std::vector<int64_t> offsets = {0};
  ASSERT_TRUE((*decoder)->DecodeByteArrays(2, &bytes, &offsets).ok());
  ASSERT_TRUE((*decoder)->DecodeByteArrays(2, &bytes, &offsets).ok());
  EXPECT_EQ(Strings(bytes, offsets), (std::vector<std::string>{"axis", "axle", "babble", "babyhood"}));
}

TEST(DeltaByteArray, RejectsPrefixesLongerThanThePreviousValue) {
  Bytes data = EncodeDeltaBinaryPacked({0, 9});
  Bytes suffixes = EncodeDeltaLength({"ab", "c"});
  data.insert(data.end(), suffixes.begin(), suffixes.end());
  auto decoder = MakeDeltaByteArrayDecoder(data.data(), data.size(), 2, 0);
  ASSERT_TRUE(decoder.ok());
  std::vector<uint8_t> bytes;
  std::vector<int64_t> offsets = {0};
  EXPECT_EQ((*decoder)->DecodeByteArrays(2, &bytes, &offsets).error_class(), "PARQUET_CORRUPT_FILE");
}

TEST(DeltaByteArray, ServesFixedLengthValues) {
  Bytes data = EncodeDeltaBinaryPacked({0, 3});
  Bytes suffixes = EncodeDeltaLength({"abcd", "e"});
  data.insert(data.end(), suffixes.begin(), suffixes.end());
  auto decoder = MakeDeltaByteArrayDecoder(data.data(), data.size(), 2, 4);
  ASSERT_TRUE(decoder.ok());
  Bytes out(8);
  ASSERT_TRUE((*decoder)->DecodeFixed(2, out.data()).ok());
  EXPECT_EQ(std::string(out.begin(), out.end()), "abcdabce");
}

TEST(ByteStreamSplit, InterleavesTheBytesOfEachValue) {
  std::vector<float> values = {1.5f, -2.25f, 3.0e10f};
  Bytes plain(12);
  std::memcpy(plain.data(), values.data(), 12);
  Bytes split(12);
  for (int i = 0; i < 3; ++i) {
    for (int k = 0; k < 4; ++k) split[k * 3 + i] = plain[i * 4 + k];
  }
  auto decoder = MakeByteStreamSplitDecoder(split.data(), split.size(), 4);
  ASSERT_TRUE(decoder.ok());
  std::vector<float> out(3);
  ASSERT_TRUE((*decoder)->DecodeFixed(1, reinterpret_cast<uint8_t*>(out.data())).ok());
  ASSERT_TRUE((*decoder)->DecodeFixed(2, reinterpret_cast<uint8_t*>(out.data() + 1)).ok());
  EXPECT_EQ(out, values);
  EXPECT_FALSE((*decoder)->DecodeFixed(1, reinterpret_cast<uint8_t*>(out.data())).ok());
  EXPECT_FALSE(MakeByteStreamSplitDecoder(split.data(), 11, 4).ok());
}

TEST(Decoders, RefuseCallsTheirEncodingCannotServe) {
  Bytes data = {0, 0, 0, 0};
  auto plain = MakePlainFixedDecoder(data.data(), data.size(), 4);
  int32_t index;
  EXPECT_EQ(plain->DecodeIndices(1, &index).error_class(), "INTERNAL_ERROR");
}

}  // namespace
}  // namespace sluice::parquet
