#include "sluice/delta/deletion_vector.h"

#include <random>
#include <set>

#include <gtest/gtest.h>

#include "sluice/core/error_classes.h"
#include "testing/temp_dir.h"

namespace sluice::delta {
namespace {

std::vector<uint64_t> Expand(const RowRanges& ranges) {
  std::vector<uint64_t> rows;
  for (const auto& [begin, end] : ranges) {
    for (uint64_t row = begin; row < end; ++row) rows.push_back(row);
  }
  return rows;
}

TEST(DeletionVectorTest, Z85IsZeroMqsBase85) {
  // The test vector of the Z85 specification (ZeroMQ RFC 32).
  const std::string bytes = {'\x86', '\x4F', '\xD2', '\x6F', '\xB5', '\x59', '\xF7', '\x5B'};
  EXPECT_EQ(Z85Encode(bytes), "HelloWorld");
  EXPECT_EQ(Z85Decode("HelloWorld").value(), bytes);
  EXPECT_EQ(Z85Decode("Hello").value().size(), 4u);
  EXPECT_EQ(Z85Decode("Hell").status().error_class(), errors::kDeltaDeletionVectorCorrupt);
  EXPECT_EQ(Z85Decode("Hel~o").status().error_class(), errors::kDeltaDeletionVectorCorrupt);
  EXPECT_EQ(Z85Decode("#####").status().error_class(), errors::kDeltaDeletionVectorCorrupt);  // above 2^32
}

// Sets of every shape round trip: sparse rows (array containers), dense ones (bitmaps), long runs,
// rows on both sides of the 2^16 and 2^32 boundaries.
TEST(DeletionVectorTest, RowSetsOfEveryShapeRoundTrip) {
  std::mt19937_64 random(7);
  std::vector<std::vector<uint64_t>> sets = {{0}, {65535, 65536}, {4294967295ull, 4294967296ull, 1ull << 40}};
  std::vector<uint64_t> dense;
  for (uint64_t row = 0; row < 200000; ++row) {
    if (random() % 3 == 0) dense.push_back(row);
  }
  sets.push_back(dense);
  std::vector<uint64_t> runs;
  for (uint64_t row = 10; row < 300000; ++row) {
    if ((row / 1000) % 2 == 0) runs.push_back(row);
  }
  sets.push_back(runs);
  std::set<uint64_t> sparse;
  while (sparse.size() < 5000) sparse.insert(random() % (1ull << 34));
  sets.emplace_back(sparse.begin(), sparse.end());
  for (const std::vector<uint64_t>& rows : sets) {
    const RowRanges ranges = RangesOf(rows);
    EXPECT_EQ(CountOf(ranges), rows.size());
    const std::string data = SerializeRowIndexes(ranges);
    auto back = DeserializeRowIndexes(data);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(Expand(*back), rows);
  }
  // A long run is a few bytes, not a bitmap per container.
  EXPECT_LT(SerializeRowIndexes({{0, 10'000'000}}).size(), 153u * 16);  // 153 run containers, not 1.2 MB of bitmaps
}

TEST(DeletionVectorTest, UnionMergesOverlappingAndTouchingRanges) {
  EXPECT_EQ(UnionOf({{0, 5}, {10, 12}}, {{5, 7}, {11, 20}, {30, 31}}), (RowRanges{{0, 7}, {10, 20}, {30, 31}}));
  EXPECT_EQ(RangesOf({1, 2, 3, 7, 9, 10}), (RowRanges{{1, 4}, {7, 8}, {9, 11}}));
}

TEST(DeletionVectorTest, DamagedBytesAreRefusedWhereverTheyAreCut) {
  const std::string data = SerializeRowIndexes(RangesOf({1, 5, 70000, 1ull << 33}));
  for (size_t cut = 0; cut < data.size(); ++cut) {
    auto rows = DeserializeRowIndexes(std::string_view(data).substr(0, cut));
    EXPECT_EQ(rows.status().error_class(), errors::kDeltaDeletionVectorCorrupt) << cut;
  }
  std::string wrong_magic = data;
  wrong_magic[0] ^= 1;
  EXPECT_EQ(DeserializeRowIndexes(wrong_magic).status().error_class(), errors::kDeltaDeletionVectorCorrupt);
  EXPECT_EQ(DeserializeRowIndexes(data + "x").status().error_class(), errors::kDeltaDeletionVectorCorrupt);
}

TEST(DeletionVectorTest, FilesAndInlineVectorsLoadAndDamageIsNamed) {
  sluice::testing::TempDir dir("delta-dv");
  auto fs = LocalFileSystem();
  const std::string table = dir.Join("t");
  const RowRanges rows = RangesOf({0, 3, 4, 99});
  auto stored = StoreDeletionVector(*fs, table, rows);
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  EXPECT_EQ(stored->storage_type, "u");
  EXPECT_EQ(stored->path_or_inline_dv.size(), 20u);
  EXPECT_EQ(stored->cardinality, 4);
  EXPECT_EQ(LoadDeletionVector(*fs, table, *stored).value(), rows);
  auto path = DeletionVectorFilePath(table, *stored);
  ASSERT_TRUE(path.ok());
  EXPECT_TRUE(path->starts_with(table + "/deletion_vector_")) << *path;

  // Inline: the Z85 of the bitmapData, padded to four bytes.
  std::string data = SerializeRowIndexes(rows);
  DeletionVectorDescriptor inline_dv{"i", "", std::nullopt, static_cast<int32_t>(data.size()), 4};
  data.resize((data.size() + 3) / 4 * 4, '\0');
  inline_dv.path_or_inline_dv = Z85Encode(data);
  EXPECT_EQ(LoadDeletionVector(*fs, table, inline_dv).value(), rows);

  // A wrong cardinality, a damaged file, a hostile prefix.
  DeletionVectorDescriptor wrong_count = *stored;
  wrong_count.cardinality = 5;
  EXPECT_EQ(LoadDeletionVector(*fs, table, wrong_count).status().error_class(), errors::kDeltaDeletionVectorCorrupt);
  std::string file = fs->ReadFile(*path).value();
  file[file.size() - 6] ^= 0x20;
  ASSERT_TRUE(fs->AtomicWrite(*path, file).ok());
  auto damaged = LoadDeletionVector(*fs, table, *stored);
  EXPECT_EQ(damaged.status().error_class(), errors::kDeltaDeletionVectorCorrupt);
  EXPECT_NE(damaged.status().message().find("checksum"), std::string_view::npos) << damaged.status().ToString();
  DeletionVectorDescriptor escaping = *stored;
  escaping.path_or_inline_dv = "../" + stored->path_or_inline_dv;
  EXPECT_EQ(LoadDeletionVector(*fs, table, escaping).status().error_class(), errors::kDeltaDeletionVectorCorrupt);
}

}  // namespace
}  // namespace sluice::delta
