#include "sluice/delta/table_writer.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "sluice/core/builder.h"
#include "sluice/core/error_classes.h"
#include "sluice/delta/scan.h"
#include "sluice/delta/snapshot.h"
#include "testing/store_root.h"
#include "testing/temp_dir.h"

namespace sluice::delta {
namespace {

TypePtr IdSchema() { return ParseTypeString("struct<id:bigint,day:string>").value(); }

// Rows [from, to) with ids from..to-1, on day "d<id % 2>".
BatchPtr Rows(int64_t from, int64_t to) {
  Int64Builder ids(DataType::Long());
  BinaryBuilder days(DataType::String());
  for (int64_t id = from; id < to; ++id) {
    ids.Append(id);
    days.Append(id % 2 == 0 ? "d0" : "d1");
  }
  return RecordBatch::Make(IdSchema(), {ids.Finish(), days.Finish()}, to - from).value();
}

// Every test runs on the local disk and on S3 (moto on loopback).
class TableWriterTest : public ::testing::TestWithParam<sluice::testing::Store> {
 protected:
  std::vector<int64_t> Ids() {
    SnapshotPtr snapshot = Snapshot::Load(fs_, table_).value();
    auto scan = TableScan::Open(snapshot, ScanOptions{{"id"}}).value();
    std::vector<int64_t> ids;
    while (BatchPtr batch = scan->Next().value()) {
      for (int64_t row = 0; row < batch->num_rows(); ++row) ids.push_back(batch->column(0)->Value<int64_t>(row));
    }
    std::sort(ids.begin(), ids.end());
    return ids;
  }

  static std::vector<int64_t> Range(int64_t from, int64_t to) {
    std::vector<int64_t> ids;
    for (int64_t id = from; id < to; ++id) ids.push_back(id);
    return ids;
  }

  sluice::testing::StoreRoot dir_{GetParam()};
  std::string table_ = dir_.Join("table");
  std::shared_ptr<FileSystem> fs_ = dir_.file_system();
};

TEST_P(TableWriterTest, BatchesWrittenOneByOneAreCommittedOnceTogether) {
  WriteOptions options;
  options.partition_columns = {"day"};
  auto writer = TableWriter::Start(fs_, table_, IdSchema(), options);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  for (int64_t from = 0; from < 30; from += 10) ASSERT_TRUE((*writer)->Write(Rows(from, from + 10)).ok());
  EXPECT_FALSE(Snapshot::Load(fs_, table_).ok()) << "nothing is visible before the commit";
  auto committed = (*writer)->Commit();
  ASSERT_TRUE(committed.ok()) << committed.status().ToString();
  EXPECT_EQ(committed->version, 0);
  EXPECT_EQ(committed->num_rows, 30);
  EXPECT_EQ(committed->num_files, 2);  // one per day
  EXPECT_EQ(Ids(), Range(0, 30));
}

TEST_P(TableWriterTest, AWriterDroppedBeforeItsCommitLeavesTheTableAsItWas) {
  ASSERT_TRUE(WriteTable(fs_, table_, {Rows(0, 5)}).ok());
  {
    auto writer = TableWriter::Start(fs_, table_, IdSchema()).value();
    ASSERT_TRUE(writer->Write(Rows(5, 10)).ok());
  }
  EXPECT_EQ(Snapshot::Load(fs_, table_).value()->version(), 0);
  EXPECT_EQ(Ids(), Range(0, 5));
}

TEST_P(TableWriterTest, AWriteWhoseTransactionIsRecordedIgnoresItsBatches) {
  WriteOptions options;
  options.transactions = {SetTransaction{"query", 7, std::nullopt}};
  ASSERT_TRUE(WriteTable(fs_, table_, {Rows(0, 5)}, options).ok());
  auto writer = TableWriter::Start(fs_, table_, IdSchema(), options).value();
  ASSERT_TRUE(writer->Write(Rows(0, 5)).ok());
  auto replayed = writer->Commit();
  ASSERT_TRUE(replayed.ok()) << replayed.status().ToString();
  EXPECT_TRUE(replayed->skipped);
  EXPECT_EQ(replayed->version, 0);
  EXPECT_EQ(Ids(), Range(0, 5));
}

TEST_P(TableWriterTest, ABatchOfAnotherSchemaSpendsTheWriter) {
  auto writer = TableWriter::Start(fs_, table_, IdSchema()).value();
  Int64Builder ids(DataType::Long());
  ids.Append(1);
  BatchPtr other = RecordBatch::Make(ParseTypeString("struct<id:bigint>").value(), {ids.Finish()}, 1).value();
  EXPECT_EQ(writer->Write(other).error_class(), errors::kInvalidArgument);
  EXPECT_EQ(writer->Commit().status().error_class(), errors::kInvalidArgument);
  EXPECT_FALSE(Snapshot::Load(fs_, table_).ok());
}

TEST_P(TableWriterTest, AWriterWithoutBatchesCreatesTheTableWithItsSchema) {
  auto writer = TableWriter::Start(fs_, table_, IdSchema()).value();
  auto committed = writer->Commit();
  ASSERT_TRUE(committed.ok()) << committed.status().ToString();
  EXPECT_EQ(committed->num_files, 0);
  EXPECT_TRUE(Snapshot::Load(fs_, table_).value()->schema()->Equals(*IdSchema()));
}

}  // namespace
}  // namespace sluice::delta

namespace sluice::delta {
namespace {

TEST_P(TableWriterTest, TransactionsKnownOnlyAtCommitSkipAWriteTheTableAlreadyRecords) {
  // A stream's batch learns its last offset per partition only as it writes.
  auto first = TableWriter::Start(fs_, table_, IdSchema());
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_TRUE((*first)->Write(Rows(0, 10)).ok());
  auto committed = (*first)->Commit({SetTransaction{"stream-t-0", 9, std::nullopt}, SetTransaction{"stream-t-1", 4, std::nullopt}});
  ASSERT_TRUE(committed.ok()) << committed.status().ToString();
  EXPECT_FALSE(committed->skipped);

  // The same batch again (a replay after a crash): every transaction is recorded, nothing is added.
  auto replay = TableWriter::Start(fs_, table_, IdSchema());
  ASSERT_TRUE(replay.ok());
  ASSERT_TRUE((*replay)->Write(Rows(0, 10)).ok());
  auto skipped = (*replay)->Commit({SetTransaction{"stream-t-0", 9, std::nullopt}, SetTransaction{"stream-t-1", 4, std::nullopt}});
  ASSERT_TRUE(skipped.ok()) << skipped.status().ToString();
  EXPECT_TRUE(skipped->skipped);
  EXPECT_EQ(Ids(), Range(0, 10));

  // One partition further on: the batch is new, and written.
  auto next = TableWriter::Start(fs_, table_, IdSchema());
  ASSERT_TRUE(next.ok());
  ASSERT_TRUE((*next)->Write(Rows(10, 15)).ok());
  auto written = (*next)->Commit({SetTransaction{"stream-t-0", 9, std::nullopt}, SetTransaction{"stream-t-1", 9, std::nullopt}});
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  EXPECT_FALSE(written->skipped);
  EXPECT_EQ(Ids(), Range(0, 15));
  EXPECT_EQ(Snapshot::Load(fs_, table_).value()->TransactionVersion("stream-t-1"), 9);
}

TEST_P(TableWriterTest, AWriterThatOwnsProgressCommitsOnlyWhileTheTableRecordsWhatItExpects) {
  auto commit = [&](int64_t from, int64_t to, std::optional<int64_t> expected, int64_t version) {
    WriteOptions options;
    options.expected_transactions = {{"group-t-0", expected}};
    auto writer = TableWriter::Start(fs_, table_, IdSchema(), options);
    if (!writer.ok()) return writer.status();
    if (Status written = (*writer)->Write(Rows(from, to)); !written.ok()) return written;
    return (*writer)->Commit({SetTransaction{"group-t-0", version, std::nullopt}}).status();
  };
  // No table yet: nothing recorded, as expected.
  ASSERT_TRUE(commit(0, 10, std::nullopt, 9).ok());
  // Expecting none, or another version, is refused whether the table is ahead or behind.
  for (std::optional<int64_t> stale : {std::optional<int64_t>(), std::optional<int64_t>(4), std::optional<int64_t>(12)}) {
    Status refused = commit(10, 20, stale, 19);
    EXPECT_EQ(refused.error_class(), errors::kDeltaConcurrentModification) << refused.ToString();
    EXPECT_NE(refused.message().find("group-t-0"), std::string::npos) << refused.ToString();
  }
  ASSERT_TRUE(commit(10, 20, 9, 19).ok());
  EXPECT_EQ(Ids(), Range(0, 20));

  // Two writers that both found version 19: the second to commit loses, even though it appends
  // only (the first recorded progress for the appId it expected unchanged).
  WriteOptions options;
  options.expected_transactions = {{"group-t-0", 19}};
  auto first = TableWriter::Start(fs_, table_, IdSchema(), options);
  auto second = TableWriter::Start(fs_, table_, IdSchema(), options);
  ASSERT_TRUE(first.ok() && second.ok());
  ASSERT_TRUE((*first)->Write(Rows(20, 25)).ok());
  ASSERT_TRUE((*second)->Write(Rows(20, 25)).ok());
  ASSERT_TRUE((*first)->Commit({SetTransaction{"group-t-0", 24, std::nullopt}}).ok());
  auto lost = (*second)->Commit({SetTransaction{"group-t-0", 24, std::nullopt}});
  EXPECT_EQ(lost.status().error_class(), errors::kDeltaConcurrentModification) << lost.status().ToString();
  EXPECT_EQ(Ids(), Range(0, 25));

  // A concurrent commit of another appId (another member's partition) does not stand in the way.
  options.expected_transactions = {{"group-t-0", 24}};
  auto mine = TableWriter::Start(fs_, table_, IdSchema(), options);
  ASSERT_TRUE(mine.ok());
  ASSERT_TRUE((*mine)->Write(Rows(25, 30)).ok());
  WriteOptions other;
  other.expected_transactions = {{"group-t-1", std::nullopt}};
  auto theirs = TableWriter::Start(fs_, table_, IdSchema(), other);
  ASSERT_TRUE(theirs.ok());
  ASSERT_TRUE((*theirs)->Write(Rows(30, 35)).ok());
  ASSERT_TRUE((*theirs)->Commit({SetTransaction{"group-t-1", 4, std::nullopt}}).ok());
  auto committed = (*mine)->Commit({SetTransaction{"group-t-0", 29, std::nullopt}});
  ASSERT_TRUE(committed.ok()) << committed.status().ToString();
  EXPECT_EQ(Ids(), Range(0, 35));
  SnapshotPtr snapshot = Snapshot::Load(fs_, table_).value();
  EXPECT_EQ(snapshot->TransactionVersion("group-t-0"), 29);
  EXPECT_EQ(snapshot->TransactionVersion("group-t-1"), 4);
}

INSTANTIATE_TEST_SUITE_P(Stores, TableWriterTest, ::testing::ValuesIn(sluice::testing::kAllStores),
                         sluice::testing::StoreName);

}  // namespace
}  // namespace sluice::delta
