#include "sluice/connectors/kafka_source.h"

#include <gtest/gtest.h>

#include <fstream>
#include <unistd.h>

#include <atomic>
#include <map>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "sluice/connectors/register_formats.h"
#include "sluice/connectors/testing/kafka_fixture.h"
#include "sluice/core/clock.h"
#include "sluice/core/error_classes.h"
#include "sluice/engine/memory_sink.h"
#include "sluice/engine/streaming_query.h"
#include "testing/temp_dir.h"

namespace sluice::connectors {
namespace {

using Options = std::map<std::string, std::string>;

std::string Servers() { return testing::SharedKafka().value()->bootstrap_servers(); }

// A topic name no other test uses, for topics a test creates itself.
std::string UniqueName(std::string_view what) {
  static std::atomic<int> counter{0};
  return fmt::format("kafka_source_{}_{}_{}", what, getpid(), counter++);
}

// Produces "<prefix>-<i>" for i in [0, count) to `partition`, keyed "k<i>".
void ProduceValues(const std::string& topic, int32_t partition, const std::string& prefix, int count) {
  std::vector<KafkaTestMessage> messages;
  for (int i = 0; i < count; ++i) {
    KafkaTestMessage message;
    message.key = "k" + std::to_string(i);
    message.value = prefix + "-" + std::to_string(i);
    message.partition = partition;
    messages.push_back(std::move(message));
  }
  ASSERT_TRUE(ProduceMessages(Servers(), topic, messages).ok());
}

struct Row {
  std::optional<std::string> key;
  std::optional<std::string> value;
  std::string topic;
  int32_t partition = 0;
  int64_t offset = 0;
  bool has_timestamp = false;
  std::vector<std::pair<std::string, std::string>> headers;
};

std::vector<Row> Rows(const RecordBatch& batch) {
  std::vector<Row> rows;
  const Column& headers = *batch.column(6);
  const Column& header_struct = *headers.children[0];
  for (int64_t i = 0; i < batch.num_rows(); ++i) {
    Row row;
    if (batch.column(0)->IsValid(i)) row.key = std::string(batch.column(0)->View(i));
    if (batch.column(1)->IsValid(i)) row.value = std::string(batch.column(1)->View(i));
    row.topic = std::string(batch.column(2)->View(i));
    row.partition = batch.column(3)->Value<int32_t>(i);
    row.offset = batch.column(4)->Value<int64_t>(i);
    row.has_timestamp = batch.column(5)->IsValid(i) && batch.column(5)->Value<int64_t>(i) > 0;
    for (int64_t h = headers.offsets[i]; h < headers.offsets[i + 1]; ++h) {
      row.headers.emplace_back(header_struct.children[0]->View(h), header_struct.children[1]->View(h));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

// A source opened as a query would open it, with its state in its own directory.
class OpenSource {
 public:
  explicit OpenSource(Options options) {
    if (!options.count("bootstrap_servers")) options["bootstrap_servers"] = Servers();
    auto made = AllFormatsRegistry().MakeSource("kafka", options);
    EXPECT_TRUE(made.ok()) << made.status().ToString();
    source_ = std::move(*made);
    engine::SourceContext context{"kafka-source-test", LocalFileSystem(), dir_.path(), SystemClock()};
    Status opened = source_->Open(context);
    EXPECT_TRUE(opened.ok()) << opened.ToString();
    auto initial = source_->InitialOffset();
    EXPECT_TRUE(initial.ok()) << initial.status().ToString();
    position_ = *initial;
  }

  engine::Source& source() { return *source_; }
  const std::string& position() const { return position_; }

  // Plans and reads batches until nothing new is available; returns each batch's rows.
  std::vector<std::vector<Row>> ReadBatches(engine::ReadLimit limit = {}) {
    std::vector<std::vector<Row>> batches;
    while (true) {
      auto end = source_->LatestOffset(position_, limit);
      EXPECT_TRUE(end.ok()) << end.status().ToString();
      if (!end.ok() || *end == position_) return batches;
      auto read = source_->Read(position_, *end);
      EXPECT_TRUE(read.ok()) << read.status().ToString();
      if (!read.ok()) return batches;
      std::vector<Row> rows;
      for (const BatchPtr& batch : *read) {
        for (Row& row : Rows(*batch)) rows.push_back(std::move(row));
      }
      batches.push_back(std::move(rows));
      position_ = *end;
    }
  }

  std::vector<Row> ReadAll() {
    std::vector<Row> all;
    for (auto& batch : ReadBatches()) all.insert(all.end(), batch.begin(), batch.end());
    return all;
  }

 private:
  sluice::testing::TempDir dir_{"kafka-source"};
  std::unique_ptr<engine::Source> source_;
  std::string position_;
};

// The values read from each partition, in the order read.
std::map<std::pair<std::string, int32_t>, std::vector<std::string>> ValuesByPartition(const std::vector<Row>& rows) {
  std::map<std::pair<std::string, int32_t>, std::vector<std::string>> values;
  for (const Row& row : rows) values[{row.topic, row.partition}].push_back(row.value.value_or("<null>"));
  return values;
}

// What `values` holds for one partition (nothing for a partition not read).
std::vector<std::string> In(const std::map<std::pair<std::string, int32_t>, std::vector<std::string>>& values,
                            const std::string& topic, int32_t partition) {
  auto found = values.find({topic, partition});
  return found == values.end() ? std::vector<std::string>{} : found->second;
}

std::vector<std::string> Values(const std::string& prefix, int from, int to) {
  std::vector<std::string> values;
  for (int i = from; i < to; ++i) values.push_back(prefix + "-" + std::to_string(i));
  return values;
}

TEST(KafkaSourceTest, SubscribeReadsEveryRecordOfEveryPartitionWithItsMetadata) {
  std::string topic = testing::CreateTestTopic(3).value();
  for (int32_t p = 0; p < 3; ++p) ProduceValues(topic, p, "p" + std::to_string(p), 4);
  KafkaTestMessage tombstone;
  tombstone.key = "gone";
  tombstone.partition = 1;
  tombstone.headers = {{"source", "crm"}, {"trace", std::string("\0\1", 2)}};
  ASSERT_TRUE(ProduceMessages(Servers(), topic, {tombstone}).ok());

  OpenSource source({{"subscribe", topic}, {"starting_offsets", "earliest"}});
  std::vector<Row> rows = source.ReadAll();

  ASSERT_EQ(rows.size(), 13u);
  auto values = ValuesByPartition(rows);
  EXPECT_EQ(In(values, topic, 0), Values("p0", 0, 4));
  std::vector<std::string> expected_1 = Values("p1", 0, 4);
  expected_1.push_back("<null>");
  EXPECT_EQ(In(values, topic, 1), expected_1);
  EXPECT_EQ(In(values, topic, 2), Values("p2", 0, 4));
  for (const Row& row : rows) {
    EXPECT_TRUE(row.has_timestamp);
    if (row.key == "gone") {
      EXPECT_EQ(row.offset, 4);
      EXPECT_FALSE(row.value.has_value());
      EXPECT_EQ(row.headers, (std::vector<std::pair<std::string, std::string>>{{"source", "crm"},
                                                                               {"trace", std::string("\0\1", 2)}}));
    } else {
      EXPECT_EQ(*row.key, "k" + std::to_string(row.offset));
      EXPECT_TRUE(row.headers.empty());
    }
  }
  EXPECT_EQ(source.position(), fmt::format(R"({{"{}":{{"0":4,"1":5,"2":4}}}})", topic));
}

TEST(KafkaSourceTest, ALargeReadComesInPiecesEachPartitionInOrderEveryRecordOnce) {
  std::string topic = testing::CreateTestTopic(2).value();
  ProduceValues(topic, 0, "p0", 90'000);
  ProduceValues(topic, 1, "p1", 60'000);
  OpenSource source({{"subscribe", topic}, {"starting_offsets", "earliest"}});
  auto end = source.source().LatestOffset(source.position(), {});
  ASSERT_TRUE(end.ok()) << end.status().ToString();

  // The engine writes each piece while the next is read: a read of 150,000 records is not one
  // batch of them.
  std::vector<int64_t> sizes;
  std::vector<Row> rows;
  Status read = source.source().ReadPieces(source.position(), *end, [&](BatchPtr piece) {
    sizes.push_back(piece->num_rows());
    for (Row& row : Rows(*piece)) rows.push_back(std::move(row));
    return Status::OK();
  });
  ASSERT_TRUE(read.ok()) << read.ToString();
  ASSERT_GE(sizes.size(), 3u);
  for (int64_t size : sizes) EXPECT_LE(size, 65536 + 4096);
  auto values = ValuesByPartition(rows);
  EXPECT_EQ(In(values, topic, 0), Values("p0", 0, 90'000));
  EXPECT_EQ(In(values, topic, 1), Values("p1", 0, 60'000));

  // A consumer that fails stops the read with its error.
  int pieces_taken = 0;
  Status stopped = source.source().ReadPieces(source.position(), *end, [&](BatchPtr) {
    ++pieces_taken;
    return Status::Error(errors::kIoError, "disk full");
  });
  EXPECT_EQ(stopped.error_class(), errors::kIoError);
  EXPECT_EQ(pieces_taken, 1);
}

TEST(KafkaSourceTest, SubscribeTakesSeveralTopics) {
  std::string first = testing::CreateTestTopic(2).value();
  std::string second = testing::CreateTestTopic(1).value();
  ProduceValues(first, 1, "a", 2);
  ProduceValues(second, 0, "b", 3);

  OpenSource source({{"subscribe", first + ", " + second}, {"starting_offsets", "earliest"}});
  auto values = ValuesByPartition(source.ReadAll());

  EXPECT_EQ(values.size(), 2u);
  EXPECT_EQ(In(values, first, 1), Values("a", 0, 2));
  EXPECT_EQ(In(values, second, 0), Values("b", 0, 3));
}

TEST(KafkaSourceTest, SubscribePatternReadsOnlyTopicsWhoseWholeNameMatches) {
  std::string prefix = UniqueName("pattern");
  auto* kafka = testing::SharedKafka().value();
  ASSERT_TRUE(kafka->CreateTopic(prefix + "_orders", 2).ok());
  ASSERT_TRUE(kafka->CreateTopic(prefix + "_payments", 1).ok());
  ASSERT_TRUE(kafka->CreateTopic(prefix + "_orders_archive", 1).ok());
  ProduceValues(prefix + "_orders", 0, "o", 2);
  ProduceValues(prefix + "_payments", 0, "pay", 1);
  ProduceValues(prefix + "_orders_archive", 0, "old", 3);

  OpenSource source({{"subscribe_pattern", prefix + "_(orders|payments)"}, {"starting_offsets", "earliest"}});
  auto values = ValuesByPartition(source.ReadAll());

  EXPECT_EQ(values.size(), 2u);
  EXPECT_EQ(In(values, prefix + "_orders", 0), Values("o", 0, 2));
  EXPECT_EQ(In(values, prefix + "_payments", 0), Values("pay", 0, 1));
}

TEST(KafkaSourceTest, AssignReadsOnlyTheGivenPartitions) {
  std::string topic = testing::CreateTestTopic(3).value();
  for (int32_t p = 0; p < 3; ++p) ProduceValues(topic, p, "p" + std::to_string(p), 3);

  OpenSource source({{"assign", fmt::format(R"({{"{}":[0,2]}})", topic)}, {"starting_offsets", "earliest"}});
  auto values = ValuesByPartition(source.ReadAll());

  EXPECT_EQ(values.size(), 2u);
  EXPECT_EQ(In(values, topic, 0), Values("p0", 0, 3));
  EXPECT_EQ(In(values, topic, 2), Values("p2", 0, 3));
}

TEST(KafkaSourceTest, LatestIsTheDefaultAndReadsOnlyWhatArrivesAfterTheStart) {
  std::string topic = testing::CreateTestTopic(2).value();
  ProduceValues(topic, 0, "before", 5);

  OpenSource source({{"subscribe", topic}});
  EXPECT_TRUE(source.ReadAll().empty());
  ProduceValues(topic, 0, "after", 2);
  ProduceValues(topic, 1, "after", 1);
  auto values = ValuesByPartition(source.ReadAll());

  EXPECT_EQ(In(values, topic, 0), Values("after", 0, 2));
  EXPECT_EQ(In(values, topic, 1), Values("after", 0, 1));
}

TEST(KafkaSourceTest, PerPartitionStartingOffsetsStartEachPartitionWhereTold) {
  std::string topic = testing::CreateTestTopic(3).value();
  for (int32_t p = 0; p < 3; ++p) ProduceValues(topic, p, "p" + std::to_string(p), 5);

  // Partition 0 from offset 3, partition 1 from earliest, partition 2 from latest.
  OpenSource source({{"subscribe", topic},
                     {"starting_offsets", fmt::format(R"({{"{}":{{"0":3,"1":-2,"2":-1}}}})", topic)}});
  ProduceValues(topic, 2, "late", 1);
  auto values = ValuesByPartition(source.ReadAll());

  EXPECT_EQ(In(values, topic, 0), Values("p0", 3, 5));
  EXPECT_EQ(In(values, topic, 1), Values("p1", 0, 5));
  EXPECT_EQ(In(values, topic, 2), Values("late", 0, 1));
}

TEST(KafkaSourceTest, TheInitialPositionIsKeptAcrossRestarts) {
  std::string topic = testing::CreateTestTopic(1).value();
  sluice::testing::TempDir state("kafka-state");
  auto initial = [&]() -> std::string {
    auto source = AllFormatsRegistry().MakeSource("kafka", {{"bootstrap_servers", Servers()}, {"subscribe", topic}});
    EXPECT_TRUE(source.ok());
    EXPECT_TRUE((*source)->Open({"q", LocalFileSystem(), state.path(), SystemClock()}).ok());
    return (*source)->InitialOffset().value();
  };
  std::string first = initial();
  ProduceValues(topic, 0, "v", 3);
  EXPECT_EQ(initial(), first);
  EXPECT_EQ(first, fmt::format(R"({{"{}":{{"0":0}}}})", topic));
}

TEST(KafkaSourceTest, MaxOffsetsPerTriggerSplitsTheBacklogIntoSeveralBatches) {
  std::string topic = testing::CreateTestTopic(3).value();
  for (int32_t p = 0; p < 3; ++p) ProduceValues(topic, p, "p" + std::to_string(p), 10);

  OpenSource source({{"subscribe", topic}, {"starting_offsets", "earliest"}, {"max_offsets_per_trigger", "7"}});
  std::vector<std::vector<Row>> batches = source.ReadBatches();

  ASSERT_EQ(batches.size(), 5u);  // 7 + 7 + 7 + 7 + 2
  std::vector<Row> all;
  for (size_t i = 0; i < batches.size(); ++i) {
    EXPECT_EQ(batches[i].size(), i + 1 < batches.size() ? 7u : 2u);
    all.insert(all.end(), batches[i].begin(), batches[i].end());
  }
  auto values = ValuesByPartition(all);
  for (int32_t p = 0; p < 3; ++p) EXPECT_EQ(In(values, topic, p), Values("p" + std::to_string(p), 0, 10));
}

// Between limited batches the source keeps its partitions assigned and holds the records it read
// beyond a batch's end; these tests pin what that must never change.
TEST(KafkaSourceTest, LimitedBatchesInARowReadEveryRecordOnceAndInOrder) {
  std::string topic = testing::CreateTestTopic(4).value();
  for (int32_t p = 0; p < 4; ++p) ProduceValues(topic, p, "p" + std::to_string(p), 300 + 50 * p);

  OpenSource source({{"subscribe", topic}, {"starting_offsets", "earliest"}, {"max_offsets_per_trigger", "101"}});
  std::vector<std::vector<Row>> batches = source.ReadBatches();

  ASSERT_EQ(batches.size(), 15u);  // 1500 records, 101 a batch
  std::vector<Row> all;
  for (size_t i = 0; i < batches.size(); ++i) {
    EXPECT_EQ(batches[i].size(), i + 1 < batches.size() ? 101u : 86u) << "batch " << i;
    all.insert(all.end(), batches[i].begin(), batches[i].end());
  }
  auto values = ValuesByPartition(all);
  for (int32_t p = 0; p < 4; ++p) {
    EXPECT_EQ(In(values, topic, p), Values("p" + std::to_string(p), 0, 300 + 50 * p)) << "partition " << p;
  }
}

TEST(KafkaSourceTest, RecordsCarriedFromOneLimitedBatchToTheNextKeepKeysNullsHeadersAndTimestamps) {
  std::string topic = testing::CreateTestTopic(1).value();
  std::vector<KafkaTestMessage> messages;
  for (int i = 0; i < 30; ++i) {
    KafkaTestMessage message;
    message.key = "k" + std::to_string(i);
    if (i % 5 != 0) message.value = "v" + std::to_string(i);
    message.headers = {{"trace", "t" + std::to_string(i)}, {"n", std::to_string(i % 3)}};
    message.partition = 0;
    messages.push_back(std::move(message));
  }
  ASSERT_TRUE(ProduceMessages(Servers(), topic, messages).ok());

  OpenSource source({{"subscribe", topic}, {"starting_offsets", "earliest"}, {"max_offsets_per_trigger", "7"}});
  std::vector<std::vector<Row>> batches = source.ReadBatches();

  ASSERT_EQ(batches.size(), 5u);
  std::vector<Row> all;
  for (auto& batch : batches) all.insert(all.end(), batch.begin(), batch.end());
  ASSERT_EQ(all.size(), 30u);
  for (int i = 0; i < 30; ++i) {
    const Row& row = all[i];
    EXPECT_EQ(row.offset, i);
    EXPECT_EQ(row.key, "k" + std::to_string(i));
    EXPECT_EQ(row.value, i % 5 != 0 ? std::optional<std::string>("v" + std::to_string(i)) : std::nullopt);
    EXPECT_TRUE(row.has_timestamp);
    EXPECT_EQ(row.headers, (std::vector<std::pair<std::string, std::string>>{{"trace", "t" + std::to_string(i)},
                                                                             {"n", std::to_string(i % 3)}}));
  }
}

TEST(KafkaSourceTest, AReadThatDoesNotContinueThePreviousOneReadsExactlyItsRange) {
  std::string topic = testing::CreateTestTopic(2).value();
  for (int32_t p = 0; p < 2; ++p) ProduceValues(topic, p, "p" + std::to_string(p), 100);
  OpenSource source({{"subscribe", topic}, {"starting_offsets", "earliest"}, {"max_offsets_per_trigger", "40"}});
  engine::ReadLimit limit;
  std::string start = source.position();
  std::string first_end = source.source().LatestOffset(start, limit).value();
  std::vector<Row> first = Rows(*source.source().Read(start, first_end).value().at(0));
  std::string second_end = source.source().LatestOffset(first_end, limit).value();
  ASSERT_TRUE(source.source().Read(first_end, second_end).ok());

  // A replay of the first batch (a restart re-running it) and a read from further back.
  std::vector<Row> again = Rows(*source.source().Read(start, first_end).value().at(0));
  std::vector<Row> both = Rows(*source.source().Read(start, second_end).value().at(0));

  auto expected = ValuesByPartition(first);
  EXPECT_EQ(ValuesByPartition(again), expected);
  EXPECT_EQ(In(expected, topic, 0), Values("p0", 0, 20));
  auto values = ValuesByPartition(both);
  EXPECT_EQ(In(values, topic, 0), Values("p0", 0, 40));
  EXPECT_EQ(In(values, topic, 1), Values("p1", 0, 40));
}

TEST(KafkaSourceTest, APartitionThatGetsRecordsBetweenLimitedBatchesIsReadToo) {
  std::string topic = testing::CreateTestTopic(2).value();
  ProduceValues(topic, 0, "a", 60);
  OpenSource source({{"subscribe", topic}, {"starting_offsets", "earliest"}, {"max_offsets_per_trigger", "25"}});
  engine::ReadLimit limit;
  std::string start = source.position();
  std::string end = source.source().LatestOffset(start, limit).value();
  std::vector<Row> first = Rows(*source.source().Read(start, end).value().at(0));
  ProduceValues(topic, 1, "b", 30);
  // A position to continue from, as the query would have committed it.
  std::vector<Row> rest;
  std::string position = end;
  while (true) {
    std::string next = source.source().LatestOffset(position, limit).value();
    if (next == position) break;
    for (Row& row : Rows(*source.source().Read(position, next).value().at(0))) rest.push_back(std::move(row));
    position = next;
  }

  EXPECT_EQ(first.size(), 25u);
  first.insert(first.end(), rest.begin(), rest.end());
  auto values = ValuesByPartition(first);
  EXPECT_EQ(In(values, topic, 0), Values("a", 0, 60));
  EXPECT_EQ(In(values, topic, 1), Values("b", 0, 30));
}

TEST(KafkaSourceTest, ReadingEverythingAvailableIgnoresTheTriggerLimit) {
  std::string topic = testing::CreateTestTopic(2).value();
  ProduceValues(topic, 0, "v", 10);

  OpenSource source({{"subscribe", topic}, {"starting_offsets", "earliest"}, {"max_offsets_per_trigger", "3"}});
  std::vector<std::vector<Row>> batches = source.ReadBatches(engine::ReadLimit{true, std::nullopt});

  ASSERT_EQ(batches.size(), 1u);
  EXPECT_EQ(batches[0].size(), 10u);
}

TEST(KafkaSourceTest, ATopicCreatedWhileRunningIsDiscoveredAndReadFromItsStart) {
  std::string prefix = UniqueName("discovery");
  auto* kafka = testing::SharedKafka().value();
  ASSERT_TRUE(kafka->CreateTopic(prefix + "_a", 2).ok());
  ProduceValues(prefix + "_a", 0, "a", 2);

  OpenSource source({{"subscribe_pattern", prefix + "_.*"}});  // latest: nothing of _a yet
  EXPECT_TRUE(source.ReadAll().empty());
  ASSERT_TRUE(kafka->CreateTopic(prefix + "_b", 3).ok());
  ProduceValues(prefix + "_b", 2, "b", 4);
  ProduceValues(prefix + "_a", 1, "a1", 1);
  auto values = ValuesByPartition(source.ReadAll());

  EXPECT_EQ(values.size(), 2u);
  EXPECT_EQ(In(values, prefix + "_b", 2), Values("b", 0, 4));
  EXPECT_EQ(In(values, prefix + "_a", 1), Values("a1", 0, 1));
}

TEST(KafkaSourceTest, OffsetsBeyondThePartitionsEndAreDataLoss) {
  std::string topic = testing::CreateTestTopic(1).value();
  ProduceValues(topic, 0, "v", 3);
  std::string beyond = fmt::format(R"({{"{}":{{"0":10}}}})", topic);

  OpenSource failing({{"subscribe", topic}, {"starting_offsets", beyond}});
  auto planned = failing.source().LatestOffset(failing.position(), {});
  ASSERT_FALSE(planned.ok());
  EXPECT_EQ(planned.status().error_class(), errors::kKafkaDataLoss);
  EXPECT_NE(planned.status().message().find("[3, 10) of topic " + topic + " partition 0"), std::string::npos)
      << planned.status().message();
  auto read = failing.source().Read(fmt::format(R"({{"{}":{{"0":1}}}})", topic), beyond);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().error_class(), errors::kKafkaDataLoss);

  OpenSource skipping({{"subscribe", topic}, {"starting_offsets", beyond}, {"fail_on_data_loss", "false"}});
  EXPECT_TRUE(skipping.ReadAll().empty());
  ProduceValues(topic, 0, "w", 2);
  auto values = ValuesByPartition(skipping.ReadAll());
  EXPECT_EQ(In(values, topic, 0), Values("w", 0, 2));
}

// The INVALID_OPTIONS message of making a source with `options`.
std::string InvalidOptionsMessage(Options options) {
  options["bootstrap_servers"] = "127.0.0.1:1";
  auto made = AllFormatsRegistry().MakeSource("kafka", options);
  EXPECT_FALSE(made.ok());
  if (made.ok()) return "";
  EXPECT_EQ(made.status().error_class(), errors::kInvalidOptions) << made.status().ToString();
  return std::string(made.status().message());
}

TEST(KafkaSourceTest, InvalidOptionCombinationsFailNamingTheKeys) {
  std::string none = InvalidOptionsMessage({});
  for (const char* key : {"subscribe", "subscribe_pattern", "assign"}) {
    EXPECT_NE(none.find(key), std::string::npos) << none;
  }
  std::string two = InvalidOptionsMessage({{"subscribe", "a"}, {"assign", R"({"a":[0]})"}});
  EXPECT_NE(two.find("`subscribe`, `assign`"), std::string::npos) << two;
  std::string all = InvalidOptionsMessage({{"subscribe", "a"}, {"subscribe_pattern", "a.*"}, {"assign", R"({"a":[0]})"}});
  EXPECT_NE(all.find("given: `subscribe`, `subscribe_pattern`, `assign`"), std::string::npos) << all;

  EXPECT_NE(InvalidOptionsMessage({{"assign", R"({"a":[-1]})"}}).find("assign"), std::string::npos);
  EXPECT_NE(InvalidOptionsMessage({{"subscribe_pattern", "(unclosed"}}).find("subscribe_pattern"), std::string::npos);
  EXPECT_NE(InvalidOptionsMessage({{"subscribe", "a"}, {"starting_offsets", "newest"}}).find("starting_offsets"),
            std::string::npos);
  EXPECT_NE(InvalidOptionsMessage({{"assign", R"({"a":[0]})"}, {"starting_offsets", R"({"a":{"1":5}})"}})
                .find("a[1]"),
            std::string::npos);
  EXPECT_NE(InvalidOptionsMessage({{"subscribe", "a"}, {"max_offsets_per_trigger", "0"}}).find("max_offsets_per_trigger"),
            std::string::npos);
  EXPECT_NE(InvalidOptionsMessage({{"subscribe", "a"}, {"sasl_mechanism", "PLAIN"}}).find("`user` and `password`"),
            std::string::npos);
  EXPECT_NE(InvalidOptionsMessage({{"subscribe", "a"}, {"sasl_mechanism", "GSSAPI"}}).find("sasl_mechanism"),
            std::string::npos);
  EXPECT_NE(InvalidOptionsMessage({{"subscribe", "a"}, {"ssl_certificate_location", "/c.pem"}}).find("ssl_key_location"),
            std::string::npos);
  EXPECT_NE(InvalidOptionsMessage({{"subscribe", "a"}, {"kafka.group.id", "mine"}}).find("kafka.group.id"),
            std::string::npos);
  EXPECT_NE(InvalidOptionsMessage({{"subscribe", "a"}, {"kafka.no.such.property", "1"}}).find("kafka.no.such.property"),
            std::string::npos);
  EXPECT_NE(InvalidOptionsMessage({{"subscribe", "a"}, {"subscribe_topics", "a"}}).find("subscribe_topics"),
            std::string::npos);

  ::setenv("SLUICE_TEST_OAUTH_SECRET", "oauth-secret", 1);
  const Options oauth = {{"subscribe", "a"},
                         {"sasl_mechanism", "OAUTHBEARER"},
                         {"sasl_oauthbearer_token_endpoint_url", "https://idp.example.com/token"},
                         {"sasl_oauthbearer_client_id", "sluice"},
                         {"sasl_oauthbearer_client_secret", "${env:SLUICE_TEST_OAUTH_SECRET}"}};
  for (const char* needed : {"sasl_oauthbearer_token_endpoint_url", "sasl_oauthbearer_client_id",
                             "sasl_oauthbearer_client_secret"}) {
    Options missing = oauth;
    missing.erase(needed);
    EXPECT_NE(InvalidOptionsMessage(missing).find(fmt::format("OAUTHBEARER needs `{}`", needed)), std::string::npos);
  }
  Options with_user = oauth;
  with_user["user"] = "me";
  EXPECT_NE(InvalidOptionsMessage(with_user).find("not `user` and `password`"), std::string::npos);
  Options ftp = oauth;
  ftp["sasl_oauthbearer_token_endpoint_url"] = "ftp://idp.example.com/token";
  EXPECT_NE(InvalidOptionsMessage(ftp).find("http:// or https://"), std::string::npos);
  for (const char* option : {"sasl_oauthbearer_token_endpoint_url", "sasl_oauthbearer_client_id", "sasl_oauthbearer_scope"}) {
    EXPECT_NE(InvalidOptionsMessage({{"subscribe", "a"}, {option, "x"}}).find(fmt::format("`{}` needs `sasl_mechanism` OAUTHBEARER", option)),
              std::string::npos);
  }
  Options plain_with_oauth = oauth;
  plain_with_oauth["sasl_mechanism"] = "PLAIN";
  plain_with_oauth["user"] = "me";
  plain_with_oauth["password"] = "${env:SLUICE_TEST_OAUTH_SECRET}";
  EXPECT_NE(InvalidOptionsMessage(plain_with_oauth).find("needs `sasl_mechanism` OAUTHBEARER"), std::string::npos);
  Options literal = oauth;
  literal["bootstrap_servers"] = Servers();
  literal["sasl_oauthbearer_client_secret"] = "oauth-secret";
  auto refused = AllFormatsRegistry().MakeSource("kafka", literal);
  EXPECT_EQ(refused.status().error_class(), errors::kConnectionLiteralSecret);
  EXPECT_EQ(refused.status().message().find("oauth-secret"), std::string_view::npos) << refused.status().ToString();
  Options accepted = oauth;
  accepted["bootstrap_servers"] = Servers();
  EXPECT_TRUE(AllFormatsRegistry().MakeSource("kafka", accepted).ok());
}

TEST(KafkaSourceTest, SecretsNeverAppearInMessages) {
  ::setenv("SLUICE_TEST_KAFKA_SECRET", "hunter2", 1);
  std::string message = InvalidOptionsMessage({{"subscribe", "a"}, {"password", "${env:SLUICE_TEST_KAFKA_SECRET}"}});
  EXPECT_NE(message.find("`user` and `password` need `sasl_mechanism`"), std::string::npos) << message;
  EXPECT_EQ(message.find("hunter2"), std::string::npos) << message;
  auto literal = AllFormatsRegistry().MakeSource(
      "kafka", {{"bootstrap_servers", "127.0.0.1:1"}, {"subscribe", "a"}, {"password", "hunter2"}});
  EXPECT_EQ(literal.status().error_class(), errors::kConnectionLiteralSecret);
  EXPECT_EQ(literal.status().message().find("hunter2"), std::string_view::npos) << literal.status().ToString();
}

TEST(KafkaSourceTest, ClientSettingsAreAcceptedAndPassedThrough) {
  ::setenv("SLUICE_TEST_KAFKA_SECRET", "secret", 1);
  auto made = AllFormatsRegistry().MakeSource("kafka", {{"bootstrap_servers", Servers()},
                                                    {"subscribe", "a"},
                                                    {"sasl_mechanism", "SCRAM-SHA-512"},
                                                    {"user", "ingest"},
                                                    {"password", "${env:SLUICE_TEST_KAFKA_SECRET}"},
                                                    {"kafka.fetch.max.bytes", "1048576"},
                                                    {"kafka.client.id", "sluice-test"}});
  EXPECT_TRUE(made.ok()) << made.status().ToString();
}

// Mutual TLS from a PKCS#12 keystore: passed to the client, its password a secret; a Java
// KeyStore is refused with how to convert it, and so is a keystore given beside the PEM files.
TEST(KafkaSourceTest, AKeystoreMustBePkcs12) {
  sluice::testing::TempDir dir;
  const std::string jks = dir.Join("client.jks"), p12 = dir.Join("client.p12");
  std::ofstream(jks, std::ios::binary) << std::string("\xFE\xED\xFE\xED\x00\x00\x00\x02", 8);
  std::ofstream(p12, std::ios::binary) << std::string("\x30\x82\x0a\x00", 4);  // a DER SEQUENCE, as PKCS#12 starts
  ::setenv("SLUICE_TEST_KEYSTORE_SECRET", "changeit", 1);
  auto made = AllFormatsRegistry().MakeSource("kafka", {{"bootstrap_servers", "127.0.0.1:1"},
                                                    {"subscribe", "a"},
                                                    {"ssl_keystore_location", p12},
                                                    {"ssl_keystore_password", "${env:SLUICE_TEST_KEYSTORE_SECRET}"}});
  EXPECT_TRUE(made.ok()) << made.status().ToString();
  std::string refused = InvalidOptionsMessage({{"subscribe", "a"}, {"ssl_keystore_location", jks}});
  EXPECT_NE(refused.find("Java KeyStore"), std::string::npos) << refused;
  EXPECT_NE(refused.find("keytool -importkeystore -srckeystore " + jks), std::string::npos) << refused;
  EXPECT_NE(InvalidOptionsMessage({{"subscribe", "a"}, {"ssl_keystore_location", dir.Join("missing.p12")}})
                .find("cannot be read"),
            std::string::npos);
  EXPECT_NE(InvalidOptionsMessage({{"subscribe", "a"}, {"ssl_keystore_password", "${env:SLUICE_TEST_KEYSTORE_SECRET}"}})
                .find("`ssl_keystore_password` needs `ssl_keystore_location`"),
            std::string::npos);
  EXPECT_NE(InvalidOptionsMessage({{"subscribe", "a"},
                                   {"ssl_keystore_location", p12},
                                   {"ssl_certificate_location", "/c.pem"},
                                   {"ssl_key_location", "/k.pem"}})
                .find("not both"),
            std::string::npos);
  auto literal = AllFormatsRegistry().MakeSource("kafka", {{"bootstrap_servers", "127.0.0.1:1"},
                                                       {"subscribe", "a"},
                                                       {"ssl_keystore_location", p12},
                                                       {"ssl_keystore_password", "changeit"}});
  EXPECT_EQ(literal.status().error_class(), errors::kConnectionLiteralSecret);
  EXPECT_EQ(literal.status().message().find("changeit"), std::string_view::npos) << literal.status().ToString();
}

// Runs kafka -> memory with the available_now trigger on `checkpoint`; returns the table.
std::shared_ptr<engine::MemoryTable> RunIntoMemory(const std::string& topic, const std::string& checkpoint) {
  auto source = AllFormatsRegistry().MakeSource("kafka", {{"bootstrap_servers", Servers()},
                                                      {"subscribe", topic},
                                                      {"starting_offsets", "earliest"},
                                                      {"max_offsets_per_trigger", "25"}});
  EXPECT_TRUE(source.ok()) << source.status().ToString();
  auto table = std::make_shared<engine::MemoryTable>();
  engine::QueryConfig config;
  config.name = "kafka_to_memory";
  config.checkpoint_location = checkpoint;
  config.trigger = engine::Trigger::AvailableNow();
  auto query = engine::StreamingQuery::Start(std::move(*source), std::make_unique<engine::MemorySink>(table), std::move(config));
  EXPECT_TRUE(query.ok()) << query.status().ToString();
  if (!query.ok()) return table;
  Status run = (*query)->Run();
  EXPECT_TRUE(run.ok()) << run.ToString();
  return table;
}

std::vector<Row> TableRows(const engine::MemoryTable& table) {
  std::vector<Row> rows;
  for (const BatchPtr& batch : table.batches()) {
    for (Row& row : Rows(*batch)) rows.push_back(std::move(row));
  }
  return rows;
}

TEST(KafkaSourceTest, AQueryDeliversEveryRecordExactlyOnceAndARestartOnlyNewOnes) {
  std::string topic = testing::CreateTestTopic(3).value();
  for (int32_t p = 0; p < 3; ++p) ProduceValues(topic, p, "p" + std::to_string(p), 30);
  sluice::testing::TempDir checkpoint("kafka-checkpoint");

  auto first = RunIntoMemory(topic, checkpoint.path());
  EXPECT_GE(first->batches().size(), 4u);  // 90 records, at most 25 a batch
  auto values = ValuesByPartition(TableRows(*first));
  for (int32_t p = 0; p < 3; ++p) EXPECT_EQ(In(values, topic, p), Values("p" + std::to_string(p), 0, 30));

  ProduceValues(topic, 1, "new", 3);
  auto second = RunIntoMemory(topic, checkpoint.path());
  values = ValuesByPartition(TableRows(*second));
  EXPECT_EQ(values.size(), 1u);
  EXPECT_EQ(In(values, topic, 1), Values("new", 0, 3));

  auto third = RunIntoMemory(topic, checkpoint.path());
  EXPECT_EQ(third->num_rows(), 0);
}

}  // namespace
}  // namespace sluice::connectors
