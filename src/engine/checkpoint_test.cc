#include "sluice/engine/checkpoint.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "sluice/core/error_classes.h"
#include "testing/store_root.h"

namespace sluice::engine {
namespace {

// Every test runs on the local disk and on S3 (moto on loopback).
class CheckpointTest : public ::testing::TestWithParam<testing::Store> {
 protected:
  std::unique_ptr<Checkpoint> OpenOrDie() {
    Result<std::unique_ptr<Checkpoint>> checkpoint = Checkpoint::Open(fs_, root_);
    EXPECT_TRUE(checkpoint.ok()) << checkpoint.status().ToString();
    return std::move(checkpoint).value();
  }

  testing::StoreRoot store_{GetParam()};
  std::shared_ptr<FileSystem> fs_ = store_.file_system();
  std::string root_ = store_.Join("checkpoint");
};

TEST_P(CheckpointTest, OffsetLogEntryHasSparkShape) {
  OffsetLogEntry entry{1767225600000, {"{\"rows\":10}"}};
  EXPECT_EQ(SerializeOffsetLogEntry(entry),
            "v1\n{\"batchWatermarkMs\":0,\"batchTimestampMs\":1767225600000,\"conf\":{}}\n{\"rows\":10}");
  Result<OffsetLogEntry> parsed = ParseOffsetLogEntry(SerializeOffsetLogEntry(entry));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, entry);
  EXPECT_EQ(SerializeCommitLogEntry(), "v1\n{\"nextBatchWatermarkMs\":0}");
  EXPECT_TRUE(ParseCommitLogEntry(SerializeCommitLogEntry()).ok());
}

TEST_P(CheckpointTest, MalformedLogEntriesAreCorruptNotCrashes) {
  for (std::string_view text : {"", "v2\n{}\n{}", "v1", "v1\nnot json\n{}", "v1\n{\"batchTimestampMs\":1}",
                                "v1\n{\"batchTimestampMs\":1}\n{\"rows\":", "v1\n{\"batchTimestampMs\":\"x\"}\n1"}) {
    Result<OffsetLogEntry> parsed = ParseOffsetLogEntry(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(parsed.status().error_class(), errors::kCheckpointCorrupt) << text;
  }
  EXPECT_EQ(ParseCommitLogEntry("v1\n{").error_class(), errors::kCheckpointCorrupt);
}

TEST_P(CheckpointTest, QueryIdIsCreatedOnceAndStableAcrossRestarts) {
  std::string first_id;
  {
    auto checkpoint = OpenOrDie();
    first_id = checkpoint->query_id();
    EXPECT_EQ(first_id.size(), 36u);
  }
  auto reopened = OpenOrDie();
  EXPECT_EQ(reopened->query_id(), first_id);
  EXPECT_EQ(*fs_->ReadFile(root_ + "/metadata"), "{\"id\":\"" + first_id + "\"}");
}

// A folder without metadata is a new checkpoint only when it holds nothing else: the rest of a
// checkpoint whose metadata was lost, or another program's files, are never taken for a fresh
// start (nor written into).
TEST_P(CheckpointTest, AFolderWithContentButNoMetadataIsRefused) {
  int case_number = 0;
  for (std::string entry : {"commits/0", "offsets/0", "sources/0/state", "precious.txt", "metadata.bak"}) {
    SCOPED_TRACE(entry);
    std::string root = store_.Join("refused-" + std::to_string(case_number++));
    ASSERT_TRUE(fs_->CreateDirectories(root + "/" + entry.substr(0, entry.rfind('/') + 1)).ok());
    ASSERT_TRUE(fs_->AtomicWrite(root + "/" + entry, "x").ok());
    Result<std::unique_ptr<Checkpoint>> opened = Checkpoint::Open(fs_, root);
    ASSERT_FALSE(opened.ok());
    EXPECT_EQ(opened.status().error_class(), errors::kCheckpointCorrupt);
    EXPECT_FALSE(fs_->Exists(root + "/metadata").value());
    EXPECT_EQ(*fs_->ReadFile(root + "/" + entry), "x");
  }
  // An empty folder, or one left with only its lock, is a new checkpoint.
  ASSERT_TRUE(fs_->CreateDirectories(root_).ok());
  ASSERT_TRUE(fs_->AtomicWrite(root_ + "/lock", "").ok());
  EXPECT_TRUE(Checkpoint::Open(fs_, root_).ok());
}

TEST_P(CheckpointTest, SecondQueryOnTheSameCheckpointFailsFast) {
  auto running = OpenOrDie();
  Result<std::unique_ptr<Checkpoint>> second = Checkpoint::Open(fs_, root_);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().error_class(), errors::kConcurrentQuery);
  // It names the holder: its host, process and since when.
  EXPECT_NE(second.status().message().find(" pid " + std::to_string(::getpid()) + " since 20"), std::string_view::npos)
      << second.status().ToString();
  running.reset();
  EXPECT_TRUE(Checkpoint::Open(fs_, root_).ok()) << "the lock is released with the checkpoint";
}

TEST_P(CheckpointTest, LogFilesAreWrittenOnceAndASecondWriterLosesWithConcurrentQuery) {
  auto checkpoint = OpenOrDie();
  OffsetLogEntry entry{5, {"{\"rows\":1}"}};
  ASSERT_TRUE(checkpoint->WriteOffsets(0, entry).ok());
  EXPECT_EQ(checkpoint->WriteOffsets(0, OffsetLogEntry{6, {"{\"rows\":2}"}}).error_class(), errors::kConcurrentQuery);
  EXPECT_EQ(*checkpoint->ReadOffsets(0), entry) << "the first write wins and is never replaced";
  ASSERT_TRUE(checkpoint->WriteCommit(0).ok());
  EXPECT_EQ(checkpoint->WriteCommit(0).error_class(), errors::kConcurrentQuery);
}

TEST_P(CheckpointTest, LatestBatchesTellAnUncommittedBatchApart) {
  auto checkpoint = OpenOrDie();
  EXPECT_EQ(*checkpoint->LatestOffsetBatch(), std::nullopt);
  EXPECT_EQ(*checkpoint->LatestCommitBatch(), std::nullopt);
  ASSERT_TRUE(checkpoint->WriteOffsets(0, {1, {"0"}}).ok());
  ASSERT_TRUE(checkpoint->WriteCommit(0).ok());
  ASSERT_TRUE(checkpoint->WriteOffsets(1, {2, {"7"}}).ok());
  EXPECT_EQ(*checkpoint->LatestOffsetBatch(), 1);
  EXPECT_EQ(*checkpoint->LatestCommitBatch(), 0);
  // Stray files (a temporary file of an interrupted write) are not entries.
  ASSERT_TRUE(fs_->AtomicWrite(root_ + "/offsets/.2.tmp", "partial").ok());
  EXPECT_EQ(*checkpoint->LatestOffsetBatch(), 1);
}

TEST_P(CheckpointTest, AnEpochsReadsAreLoggedOneFileEachAndGoWithItsCommit) {
  auto checkpoint = OpenOrDie();
  EXPECT_EQ(*checkpoint->ReadEpochReads(3), std::nullopt);
  ASSERT_TRUE(checkpoint->LogEpochRead(3, 0, "{\"rows\":4}").ok());
  ASSERT_TRUE(checkpoint->LogEpochRead(3, 1, "{\"rows\":9}").ok());
  EXPECT_EQ(*fs_->ReadFile(root_ + "/reads/3/1"), "{\"rows\":9}");
  EXPECT_EQ(*checkpoint->ReadEpochReads(3), (std::vector<std::string>{"{\"rows\":4}", "{\"rows\":9}"}));
  EXPECT_EQ(checkpoint->LogEpochRead(3, 1, "{\"rows\":10}").error_class(), errors::kConcurrentQuery);
  // Stray files (a temporary file of an interrupted write) are not reads.
  ASSERT_TRUE(fs_->AtomicWrite(root_ + "/reads/3/.2.tmp", "partial").ok());
  EXPECT_EQ(checkpoint->ReadEpochReads(3)->value_or(std::vector<std::string>{}).size(), 2u);
  ASSERT_TRUE(checkpoint->WriteOffsets(3, {1, {"{\"rows\":9}"}}).ok());
  ASSERT_TRUE(checkpoint->WriteCommit(3).ok());
  EXPECT_EQ(*checkpoint->ReadEpochReads(3), std::nullopt);
  EXPECT_FALSE(*fs_->Exists(root_ + "/reads/3"));

  // A gap, or a read that is not one line of JSON, is corruption.
  ASSERT_TRUE(checkpoint->LogEpochRead(4, 0, "{\"rows\":4}").ok());
  ASSERT_TRUE(checkpoint->LogEpochRead(4, 2, "{\"rows\":9}").ok());
  EXPECT_EQ(checkpoint->ReadEpochReads(4).status().error_class(), errors::kCheckpointCorrupt);
  ASSERT_TRUE(checkpoint->LogEpochRead(5, 0, "{\"rows\":").ok());
  EXPECT_EQ(checkpoint->ReadEpochReads(5).status().error_class(), errors::kCheckpointCorrupt);
}

TEST_P(CheckpointTest, KeepsTheLastHundredEntries) {
  auto checkpoint = OpenOrDie();
  for (int64_t id = 0; id < 150; ++id) {
    ASSERT_TRUE(checkpoint->WriteOffsets(id, {id, {"{}"}}).ok());
    ASSERT_TRUE(checkpoint->WriteCommit(id).ok());
  }
  for (const char* log : {"/offsets", "/commits"}) {
    std::vector<FileInfo> files = *fs_->List(root_ + log);
    EXPECT_EQ(files.size(), 100u) << log;
  }
  EXPECT_FALSE(*fs_->Exists(root_ + "/offsets/49"));
  EXPECT_TRUE(*fs_->Exists(root_ + "/offsets/50"));
  EXPECT_TRUE(*fs_->Exists(root_ + "/commits/149"));
}

TEST_P(CheckpointTest, PurgeAfterRestartRemovesOldEntriesOfEarlierRuns) {
  {
    auto checkpoint = OpenOrDie();
    for (int64_t id = 0; id < 99; ++id) {
      ASSERT_TRUE(checkpoint->WriteOffsets(id, {id, {"{}"}}).ok());
      ASSERT_TRUE(checkpoint->WriteCommit(id).ok());
    }
  }
  auto checkpoint = OpenOrDie();
  ASSERT_TRUE(checkpoint->WriteOffsets(99, {99, {"{}"}}).ok());
  ASSERT_TRUE(checkpoint->WriteCommit(99).ok());
  ASSERT_TRUE(checkpoint->WriteOffsets(100, {100, {"{}"}}).ok());
  ASSERT_TRUE(checkpoint->WriteCommit(100).ok());
  EXPECT_FALSE(*fs_->Exists(root_ + "/offsets/0"));
  EXPECT_TRUE(*fs_->Exists(root_ + "/offsets/1"));
  EXPECT_EQ(fs_->List(root_ + "/commits")->size(), 100u);
}

INSTANTIATE_TEST_SUITE_P(Stores, CheckpointTest, ::testing::ValuesIn(testing::kAllStores), testing::StoreName);

TEST(UuidTest, IsVersionFourAndDistinct) {
  std::string a = NewUuid(), b = NewUuid();
  EXPECT_NE(a, b);
  ASSERT_EQ(a.size(), 36u);
  EXPECT_EQ(a[14], '4');
  EXPECT_EQ(a[8], '-');
}

}  // namespace
}  // namespace sluice::engine
