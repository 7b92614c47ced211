// The one mapping between a stream's Kafka offsets and the txns of its Delta table: which
// partitions a batch read, the txn each records, and the starting offsets the txns give back.
#include "sluice/connectors/kafka_transactions.h"

#include <gtest/gtest.h>

#include "sluice/core/builder.h"
#include "sluice/core/error_classes.h"
#include "sluice/delta/writer.h"
#include "sluice/storage/file_systems.h"
#include "testing/temp_dir.h"

namespace sluice::connectors {
namespace {

TEST(KafkaTransactionsTest, ABatchRecordsTheLastOffsetOfEveryPartitionWhoseOffsetMoved) {
  // Partition 0 moved from 10 to 25, 1 did not, 2 is new to the batch, 3 is new but empty.
  Result<PartitionEnds> ends = PartitionEndsBetween(R"({"orders":{"0":10,"1":7},"a-b":{"0":3}})",
                                                    R"({"orders":{"0":25,"1":7,"2":4,"3":0},"a-b":{"0":4}})");
  ASSERT_TRUE(ends.ok()) << ends.status().ToString();
  EXPECT_EQ(*ends, (PartitionEnds{{{"orders", 0}, 24}, {{"orders", 2}, 3}, {{"a-b", 0}, 3}}));
  // The first batch of a query has no start: every partition that has records is recorded.
  ends = PartitionEndsBetween("", R"({"orders":{"0":5,"1":0}})");
  ASSERT_TRUE(ends.ok());
  EXPECT_EQ(*ends, (PartitionEnds{{{"orders", 0}, 4}}));
  for (const auto& [start, end] : std::vector<std::pair<std::string, std::string>>{
           {"", "not json"}, {"", R"({"orders":{"0":-1}})"}, {"{\"orders\":{\"x\":1}}", R"({"orders":{"0":1}})"}, {"", ""}}) {
    EXPECT_EQ(PartitionEndsBetween(start, end).status().error_class(), errors::kSourceOffsetInvalid) << start << end;
  }

  const std::vector<delta::SetTransaction> txns = PartitionTransactions("main.raw.events", {{{"a-b", 0}, 3}, {{"orders", 12}, 24}});
  ASSERT_EQ(txns.size(), 2u);
  EXPECT_EQ(txns[0].app_id, "main.raw.events-a-b-0");
  EXPECT_EQ(txns[0].version, 3);
  EXPECT_EQ(txns[1].app_id, "main.raw.events-orders-12");
  EXPECT_EQ(txns[1].version, 24);
}

TEST(KafkaTransactionsTest, RowsRaiseTheirPartitionsLastOffsets) {
  BinaryBuilder topic(DataType::String());
  Int32Builder partition(DataType::Integer());
  Int64Builder offset(DataType::Long());
  const std::vector<std::tuple<std::string, int32_t, int64_t>> rows = {
      {"t", 0, 5}, {"t", 0, 7}, {"t", 1, 2}, {"t", 0, 6}, {"u", 0, 1}, {"t", 1, 9}};
  for (const auto& [t, p, o] : rows) {
    topic.Append(t);
    partition.Append(p);
    offset.Append(o);
  }
  TypePtr schema = DataType::Struct({{"topic", DataType::String()}, {"partition", DataType::Integer()},
                                     {"offset", DataType::Long()}})
                       .value();
  BatchPtr batch = RecordBatch::Make(schema, {topic.Finish(), partition.Finish(), offset.Finish()}, 6).value();
  PartitionEnds ends{{{"t", 0}, 8}};  // from an earlier piece
  ASSERT_TRUE(AddPartitionEnds(*batch, &ends).ok());
  EXPECT_EQ(ends, (PartitionEnds{{{"t", 0}, 8}, {{"t", 1}, 9}, {{"u", 0}, 1}}));
  EXPECT_EQ(AddPartitionEnds(*RecordBatch::Empty(DataType::Struct({{"x", DataType::Long()}}).value()), &ends)
                .error_class(),
            errors::kUnresolvedColumn);
}

TEST(KafkaTransactionsTest, TheTablesTxnsGiveTheNextOffsetOfEachPartitionOfTheStream) {
  testing::TempDir dir;
  auto fs = storage::DefaultFileSystem();
  const std::string table = dir.path() + "/events";
  auto none = ResumeOffsets(fs, table, "main.raw.events");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());

  Int64Builder values(DataType::Long());
  values.Append(1);
  BatchPtr rows = RecordBatch::Make(DataType::Struct({{"x", DataType::Long()}}).value(), {values.Finish()}, 1).value();
  delta::WriteOptions options;
  // Another stream's txn and an appId that names no partition are not this stream's.
  options.transactions = PartitionTransactions("main.raw.events", {{{"orders-eu", 0}, 41}, {{"orders-eu", 3}, 9}});
  options.transactions.push_back({"main.raw.events2-orders-0", 99, std::nullopt});
  options.transactions.push_back({"main.raw.events-orders-x", 99, std::nullopt});
  ASSERT_TRUE(delta::WriteTable(fs, table, {rows}, options).ok());
  auto resume = ResumeOffsets(fs, table, "main.raw.events");
  ASSERT_TRUE(resume.ok()) << resume.status().ToString();
  EXPECT_EQ(resume->value_or(""), R"({"orders-eu":{"0":42,"3":10}})");
  resume = ResumeOffsets(fs, table, "main.raw.other");
  ASSERT_TRUE(resume.ok());
  EXPECT_FALSE(resume->has_value());
}

}  // namespace
}  // namespace sluice::connectors
