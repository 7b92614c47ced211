#include "sluice/engine/streaming_query.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <set>
#include <thread>

#include "sluice/core/builder.h"
#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "sluice/engine/builtin_sinks.h"
#include "sluice/engine/memory_sink.h"
#include "sluice/engine/rate_source.h"
#include "sluice/engine/read_once_source.h"
#include "sluice/engine/relational_operators.h"
#include "testing/temp_dir.h"

namespace sluice::engine {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr int64_t kSecond = 1'000'000;

std::unique_ptr<Source> Rate(int64_t rows_per_second, std::optional<int64_t> max_rows_per_batch = std::nullopt) {
  std::map<std::string, std::string> given = {{"rowsPerSecond", std::to_string(rows_per_second)},
                                              {"startTimestamp", "0"}};
  if (max_rows_per_batch) given["maxRowsPerBatch"] = std::to_string(*max_rows_per_batch);
  return MakeRateSource(ValidateOptions("rate source", kRateSourceOptions, given).value()).value();
}

// The `value` column of every batch a callback saw, by batch id.
struct SeenBatches {
  std::vector<int64_t> ids;
  std::vector<std::vector<int64_t>> values;

  ForeachBatchFunction Recorder(std::function<Status(int64_t)> also = nullptr) {
    return [this, also](const RecordBatch& batch, const BatchContext& context) -> Status {
      const int64_t batch_id = context.batch_id;
      ids.push_back(batch_id);
      std::vector<int64_t> column;
      for (int64_t row = 0; row < batch.num_rows(); ++row) column.push_back(batch.column(1)->Value<int64_t>(row));
      values.push_back(std::move(column));
      return also ? also(batch_id) : Status::OK();
    };
  }
  std::vector<int64_t> sizes() const {
    std::vector<int64_t> result;
    for (const auto& v : values) result.push_back(static_cast<int64_t>(v.size()));
    return result;
  }
};

std::vector<int64_t> Range(int64_t from, int64_t to) {
  std::vector<int64_t> values;
  for (int64_t v = from; v < to; ++v) values.push_back(v);
  return values;
}

class StreamingQueryTest : public ::testing::Test {
 protected:
  QueryConfig Config(Trigger trigger) {
    QueryConfig config;
    config.name = "test_query";
    config.checkpoint_location = dir_.Join("checkpoint");
    config.trigger = trigger;
    config.clock = clock_;
    config.on_progress = [this](const QueryProgress& progress) {
      progress_.push_back(progress);
      if (stop_after_batch_ >= 0 && progress.batch_id >= stop_after_batch_) query_->Stop();
    };
    return config;
  }

  // Starts a query into a recording foreachBatch sink and runs it to its end.
  Status RunToEnd(std::unique_ptr<Source> source, ForeachBatchFunction function, Trigger trigger) {
    auto query = StreamingQuery::Start(std::move(source), MakeForeachBatchSink("record", std::move(function)),
                                       Config(trigger));
    if (!query.ok()) return query.status();
    query_ = std::move(query).value();
    Status status = query_->Run();
    query_.reset();
    return status;
  }

  bool Exists(const std::string& relative) { return *LocalFileSystem()->Exists(dir_.Join("checkpoint/" + relative)); }

  testing::TempDir dir_;
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>(0);
  std::unique_ptr<StreamingQuery> query_;
  std::vector<QueryProgress> progress_;
  int64_t stop_after_batch_ = -1;
};

TEST_F(StreamingQueryTest, OnceReadsEverythingAvailableInOneBatchThenStops) {
  clock_->AdvanceBy(seconds(3));
  SeenBatches seen;
  ASSERT_TRUE(RunToEnd(Rate(10, /*max_rows_per_batch=*/4), seen.Recorder(), Trigger::Once()).ok());
  EXPECT_EQ(seen.ids, std::vector<int64_t>{0});
  EXPECT_EQ(seen.values[0], Range(0, 30)) << "the source's per-batch limit does not apply to once";
  EXPECT_TRUE(Exists("offsets/0"));
  EXPECT_TRUE(Exists("commits/0"));
  EXPECT_EQ(*LocalFileSystem()->ReadFile(dir_.Join("checkpoint/offsets/0")),
            "v1\n{\"batchWatermarkMs\":0,\"batchTimestampMs\":3000,\"conf\":{}}\n{\"rows\":30}");
}

TEST_F(StreamingQueryTest, OnceWithNothingAvailableRunsNoBatch) {
  SeenBatches seen;
  ASSERT_TRUE(RunToEnd(Rate(10), seen.Recorder(), Trigger::Once()).ok());
  EXPECT_TRUE(seen.ids.empty());
  EXPECT_FALSE(Exists("offsets/0"));
}

TEST_F(StreamingQueryTest, AvailableNowReadsWhatWasThereAtStartInLimitedBatches) {
  clock_->AdvanceBy(seconds(3));
  SeenBatches seen;
  // Each batch takes a second, during which ten more rows arrive; they are left for later.
  auto slow = seen.Recorder([this](int64_t) {
    clock_->AdvanceBy(seconds(1));
    return Status::OK();
  });
  ASSERT_TRUE(RunToEnd(Rate(10, /*max_rows_per_batch=*/7), slow, Trigger::AvailableNow()).ok());
  EXPECT_EQ(seen.ids, (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(seen.sizes(), (std::vector<int64_t>{7, 7, 7, 7, 2}));
  EXPECT_EQ(seen.values[4], Range(28, 30));
}

TEST_F(StreamingQueryTest, ProcessingTimeFiresOnTheIntervalGrid) {
  SeenBatches seen;
  stop_after_batch_ = 2;
  ASSERT_TRUE(RunToEnd(Rate(10), seen.Recorder(), Trigger::ProcessingTime(seconds(1))).ok());
  ASSERT_EQ(progress_.size(), 3u);
  // At 0 s nothing is available yet; then one batch per second, each holding that second's rows.
  EXPECT_EQ(progress_[0].timestamp_micros, 1 * kSecond);
  EXPECT_EQ(progress_[1].timestamp_micros, 2 * kSecond);
  EXPECT_EQ(progress_[2].timestamp_micros, 3 * kSecond);
  EXPECT_EQ(seen.values[1], Range(10, 20));
}

TEST_F(StreamingQueryTest, ProcessingTimeDoesNotCatchUpMissedIntervals) {
  SeenBatches seen;
  stop_after_batch_ = 3;
  auto first_batch_is_slow = seen.Recorder([this](int64_t batch_id) {
    if (batch_id == 0) clock_->AdvanceBy(milliseconds(3500));
    return Status::OK();
  });
  ASSERT_TRUE(RunToEnd(Rate(10), first_batch_is_slow, Trigger::ProcessingTime(seconds(1))).ok());
  ASSERT_EQ(progress_.size(), 4u);
  EXPECT_EQ(progress_[0].timestamp_micros, 1 * kSecond);
  // Batch 0 overran the 2 s, 3 s and 4 s triggers: one batch follows at once, then the grid resumes.
  EXPECT_EQ(progress_[1].timestamp_micros, 4'500'000);
  EXPECT_EQ(progress_[2].timestamp_micros, 5 * kSecond);
  EXPECT_EQ(progress_[3].timestamp_micros, 6 * kSecond);
  EXPECT_EQ(seen.sizes(), (std::vector<int64_t>{10, 35, 5, 10}));
}

TEST_F(StreamingQueryTest, ProcessingTimeZeroStartsTheNextBatchWhenTheLastEnds) {
  SeenBatches seen;
  stop_after_batch_ = 4;
  ASSERT_TRUE(RunToEnd(Rate(100), seen.Recorder(), Trigger::ProcessingTime(seconds(0))).ok());
  ASSERT_EQ(progress_.size(), 5u);
  // Nothing is ever waited for but a short poll when the source has nothing new.
  for (size_t i = 1; i < progress_.size(); ++i) {
    EXPECT_EQ(progress_[i].timestamp_micros - progress_[i - 1].timestamp_micros, 10'000);
  }
  EXPECT_EQ(seen.sizes(), (std::vector<int64_t>{1, 1, 1, 1, 1}));
}

TEST_F(StreamingQueryTest, RealTimeDeliversRowsAsTheyComeAndLogsEachCheckpointInterval) {
  auto table = std::make_shared<MemoryTable>();
  stop_after_batch_ = 1;
  auto query = StreamingQuery::Start(Rate(100), std::make_unique<MemorySink>(table), Config(Trigger::RealTime(seconds(1))));
  ASSERT_TRUE(query.ok()) << query.status().ToString();
  query_ = std::move(query).value();
  ASSERT_TRUE(query_->Run().ok());
  // Two epochs of one second; every 10 ms poll delivered the one row that had come. The epoch
  // closes at 1 s, before the row that comes at that instant, which opens the next one.
  ASSERT_EQ(progress_.size(), 2u);
  EXPECT_EQ(progress_[0].num_input_rows, 99);
  EXPECT_EQ(progress_[1].num_input_rows, 100);
  EXPECT_EQ(table->num_rows(), 199);
  EXPECT_EQ(table->batches().size(), 199u);
  EXPECT_EQ(table->batch_ids().front(), 0);
  EXPECT_EQ(table->batch_ids().back(), 1);
  EXPECT_EQ(ParseOffsetLogEntry(*LocalFileSystem()->ReadFile(dir_.Join("checkpoint/offsets/0")))->source_offsets[0],
            "{\"rows\":99}");
  EXPECT_TRUE(Exists("commits/1"));
}

// A sink that accepts only the append mode.
class AppendOnlySink final : public Sink {
 public:
  std::string description() const override { return "AppendOnlySink"; }
  std::vector<OutputMode> supported_output_modes() const override { return {OutputMode::kAppend}; }
  Status Open(const SinkContext&) override { return Status::OK(); }
  Result<std::unique_ptr<BatchWriter>> BeginBatch(const BatchInfo& info) override {
    return WholeBatchWriter::Concatenating(info.schema, [](const RecordBatch&) { return Status::OK(); });
  }
};

// A source whose one batch is read in three pieces: values 0-1, 2-3 and 4-5.
class ThreePiecesSource final : public ReadOnceSource {
 public:
  std::string description() const override { return "ThreePiecesSource"; }
  TypePtr schema() const override { return DataType::Struct({{"value", DataType::Long()}}).value(); }
  Status Open(const SourceContext&) override { return Status::OK(); }

 protected:
  Result<std::vector<BatchPtr>> ReadAll() override {
    std::vector<BatchPtr> pieces;
    for (int64_t first = 0; first < 6; first += 2) {
      Int64Builder values(DataType::Long());
      values.Append(first);
      values.Append(first + 1);
      SLUICE_ASSIGN_OR_RETURN(BatchPtr piece, RecordBatch::Make(schema(), {values.Finish()}, 2));
      pieces.push_back(std::move(piece));
    }
    return pieces;
  }
};

// Records the row counts it is handed: one entry per batch (a WholeBatchWriter), or one per piece
// when it takes pieces (a writer of its own).
class PieceCountingSink final : public Sink {
 public:
  PieceCountingSink(bool takes_pieces, std::vector<int64_t>* rows) : takes_pieces_(takes_pieces), rows_(rows) {}
  std::string description() const override { return "PieceCountingSink"; }
  std::vector<OutputMode> supported_output_modes() const override { return {OutputMode::kAppend}; }
  Status Open(const SinkContext&) override { return Status::OK(); }
  Result<std::unique_ptr<BatchWriter>> BeginBatch(const BatchInfo& info) override {
    if (!takes_pieces_) {
      return WholeBatchWriter::Concatenating(info.schema, [this](const RecordBatch& batch) { return Count(batch); });
    }
    struct EachPiece final : BatchWriter {
      PieceCountingSink* sink;
      explicit EachPiece(PieceCountingSink* s) : sink(s) {}
      Status Add(BatchPtr piece) override { return sink->Count(*piece); }
      Status Commit() override { return Status::OK(); }
    };
    return std::unique_ptr<BatchWriter>(new EachPiece(this));
  }

 private:
  Status Count(const RecordBatch& batch) {
    for (int64_t row = 0; row < batch.num_rows(); ++row) {
      if (batch.column(0)->Value<int64_t>(row) != static_cast<int64_t>(values_seen_++)) {
        return Status::Error("TEST", "rows out of order");
      }
    }
    rows_->push_back(batch.num_rows());
    return Status::OK();
  }

  bool takes_pieces_;
  std::vector<int64_t>* rows_;
  size_t values_seen_ = 0;
};

// Records each real-time call's values (one entry per AddRealTimeRows) and each batch; fails the
// `fail_at`-th real-time call (1-based), as a process dying mid-epoch would stop it.
class ReadRecordingSink final : public Sink {
 public:
  explicit ReadRecordingSink(int fail_at = 0) : fail_at_(fail_at) {}
  std::string description() const override { return "ReadRecordingSink"; }
  std::vector<OutputMode> supported_output_modes() const override { return {OutputMode::kAppend}; }
  Status Open(const SinkContext&) override { return Status::OK(); }
  bool supports_real_time() const override { return true; }
  Status AddRealTimeRows(int64_t epoch_id, const RecordBatch& rows) override {
    if (++calls_ == fail_at_) return Status::Error(errors::kIoError, "the process died");
    reads.push_back({epoch_id, Values(rows)});
    return Status::OK();
  }
  Status EndEpoch(int64_t epoch_id) override {
    ended.push_back(epoch_id);
    return Status::OK();
  }
  Result<std::unique_ptr<BatchWriter>> BeginBatch(const BatchInfo& info) override {
    return WholeBatchWriter::Concatenating(info.schema, [this, batch_id = info.batch_id](const RecordBatch& batch) {
      batches.push_back({batch_id, Values(batch)});
      return Status::OK();
    });
  }

  std::vector<std::pair<int64_t, std::vector<int64_t>>> reads;
  std::vector<std::pair<int64_t, std::vector<int64_t>>> batches;
  std::vector<int64_t> ended;

 private:
  static std::vector<int64_t> Values(const RecordBatch& rows) {
    std::vector<int64_t> values;
    for (int64_t row = 0; row < rows.num_rows(); ++row) values.push_back(rows.column(1)->Value<int64_t>(row));
    return values;
  }
  int fail_at_;
  int calls_ = 0;
};

TEST_F(StreamingQueryTest, ARealTimeEpochCutShortIsDeliveredAgainInTheSameReadsThenEnded) {
  // Epoch 0 commits after a second of reads; epoch 1 dies at its fifth read.
  auto dying = std::make_unique<ReadRecordingSink>(99 + 5);
  ReadRecordingSink* first = dying.get();
  auto query = StreamingQuery::Start(Rate(100), std::move(dying), Config(Trigger::RealTime(seconds(1))));
  ASSERT_TRUE(query.ok()) << query.status().ToString();
  Status died = (*query)->Run();
  ASSERT_EQ(died.error_class(), errors::kIoError);
  ASSERT_EQ(first->ended, std::vector<int64_t>{0});
  EXPECT_TRUE(Exists("reads/1"));
  EXPECT_FALSE(Exists("reads/0")) << "a committed epoch's reads are not kept";
  std::vector<std::vector<int64_t>> delivered;
  for (const auto& [epoch, values] : first->reads) {
    if (epoch == 1) delivered.push_back(values);
  }
  ASSERT_EQ(delivered.size(), 4u);
  query->reset();

  // Much later, under another trigger: epoch 1 comes first, in its five logged reads (the fifth
  // never reached the sink), and is ended; then the new rows come as batch 2.
  clock_->AdvanceBy(seconds(30));
  auto replaying = std::make_unique<ReadRecordingSink>();
  ReadRecordingSink* second = replaying.get();
  query = StreamingQuery::Start(Rate(100), std::move(replaying), Config(Trigger::Once()));
  ASSERT_TRUE(query.ok()) << query.status().ToString();
  ASSERT_TRUE((*query)->Run().ok());
  ASSERT_EQ(second->reads.size(), 5u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(second->reads[i], std::make_pair(int64_t{1}, delivered[i])) << i;
  EXPECT_EQ(second->reads[4].second, std::vector<int64_t>{delivered[3].back() + 1});
  EXPECT_EQ(second->ended, std::vector<int64_t>{1});
  EXPECT_TRUE(Exists("commits/1"));
  EXPECT_FALSE(Exists("reads/1"));
  ASSERT_EQ(second->batches.size(), 1u);
  EXPECT_EQ(second->batches[0].first, 2);
  EXPECT_EQ(second->batches[0].second.front(), second->reads[4].second.back() + 1) << "no row lost, none repeated";
}

TEST_F(StreamingQueryTest, ARealTimeEpochWhoseOffsetsWereLoggedIsEndedAgainWithoutLoggingThemTwice) {
  auto first = std::make_unique<ReadRecordingSink>();
  auto query = StreamingQuery::Start(Rate(100), std::move(first), Config(Trigger::RealTime(milliseconds(200))));
  ASSERT_TRUE(query.ok());
  stop_after_batch_ = 0;
  query_ = std::move(query).value();
  ASSERT_TRUE(query_->Run().ok());
  query_.reset();
  // The process died between offsets/0 and commits/0.
  ASSERT_TRUE(LocalFileSystem()->Delete(dir_.Join("checkpoint/commits/0")).ok());
  ASSERT_TRUE(LocalFileSystem()->AtomicWrite(dir_.Join("checkpoint/reads/0/0"), "{\"rows\":7}").ok());
  ASSERT_TRUE(LocalFileSystem()->AtomicWrite(dir_.Join("checkpoint/reads/0/1"), "{\"rows\":19}").ok());
  stop_after_batch_ = -1;
  auto replaying = std::make_unique<ReadRecordingSink>();
  ReadRecordingSink* second = replaying.get();
  query = StreamingQuery::Start(Rate(100), std::move(replaying), Config(Trigger::Once()));
  ASSERT_TRUE(query.ok());
  ASSERT_TRUE((*query)->Run().ok()) << "offsets/0 is not written twice";
  ASSERT_EQ(second->reads.size(), 2u);
  EXPECT_EQ(second->reads[0].second, Range(0, 7));
  EXPECT_EQ(second->reads[1].second, Range(7, 19));
  EXPECT_TRUE(Exists("commits/0"));
}

TEST_F(StreamingQueryTest, AnEpochLoggedUnderRealTimeCannotBeReplayedIntoASinkWithoutIt) {
  ASSERT_TRUE(LocalFileSystem()->AtomicWrite(dir_.Join("checkpoint/metadata"), "{\"id\":\"q\"}").ok());
  ASSERT_TRUE(LocalFileSystem()->AtomicWrite(dir_.Join("checkpoint/reads/0/0"), "{\"rows\":3}").ok());
  auto query = StreamingQuery::Start(Rate(100), std::make_unique<AppendOnlySink>(), Config(Trigger::Once()));
  ASSERT_TRUE(query.ok());
  Status refused = (*query)->Run();
  EXPECT_EQ(refused.error_class(), errors::kUnsupportedTrigger);
  EXPECT_NE(refused.message().find("epoch 0"), std::string_view::npos) << refused.ToString();
}

TEST_F(StreamingQueryTest, ASinkGetsTheBatchInTheSourcesPiecesOrWholeByDefault) {
  for (bool takes_pieces : {true, false}) {
    SCOPED_TRACE(takes_pieces);
    std::vector<int64_t> rows;
    QueryConfig config = Config(Trigger::Once());
    config.checkpoint_location = dir_.Join(takes_pieces ? "pieces" : "whole");
    auto query = StreamingQuery::Start(std::make_unique<ThreePiecesSource>(),
                                       std::make_unique<PieceCountingSink>(takes_pieces, &rows), std::move(config));
    ASSERT_TRUE(query.ok()) << query.status().ToString();
    ASSERT_TRUE((*query)->Run().ok());
    EXPECT_EQ(rows, takes_pieces ? std::vector<int64_t>({2, 2, 2}) : std::vector<int64_t>({6}));
    EXPECT_EQ(progress_.back().num_input_rows, 6);
  }
}

TEST_F(StreamingQueryTest, RefusesOutputModesTheSinkOrTheQueryCannotHonour) {
  QueryConfig update = Config(Trigger::Once());
  update.output_mode = OutputMode::kUpdate;
  auto refused = StreamingQuery::Start(Rate(1), std::make_unique<AppendOnlySink>(), std::move(update));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().error_class(), errors::kUnsupportedOutputMode);
  EXPECT_NE(refused.status().message().find("it supports: append"), std::string_view::npos);

  QueryConfig complete = Config(Trigger::Once());
  complete.output_mode = OutputMode::kComplete;
  std::ostringstream out;
  auto no_aggregation = StreamingQuery::Start(Rate(1), MakeConsoleSink(&out, 20), std::move(complete));
  ASSERT_FALSE(no_aggregation.ok());
  EXPECT_EQ(no_aggregation.status().error_class(), errors::kUnsupportedOutputMode);

  auto not_real_time = StreamingQuery::Start(Rate(1), std::make_unique<AppendOnlySink>(), Config(Trigger::RealTime()));
  ASSERT_FALSE(not_real_time.ok());
  EXPECT_EQ(not_real_time.status().error_class(), errors::kUnsupportedTrigger);
  EXPECT_FALSE(Exists("metadata")) << "refused before touching the checkpoint";
}

TEST_F(StreamingQueryTest, ASecondQueryOnTheSameCheckpointFailsFast) {
  auto first = StreamingQuery::Start(Rate(1), std::make_unique<AppendOnlySink>(), Config(Trigger::Once()));
  ASSERT_TRUE(first.ok());
  auto second = StreamingQuery::Start(Rate(1), std::make_unique<AppendOnlySink>(), Config(Trigger::Once()));
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().error_class(), errors::kConcurrentQuery);
}

TEST_F(StreamingQueryTest, OffsetsAreLoggedBeforeTheBatchRunsAndCommitsAfter) {
  clock_->AdvanceBy(seconds(1));
  bool checked = false;
  auto check = [&](const RecordBatch&, const BatchContext& context) {
    const int64_t batch_id = context.batch_id;
    checked = true;
    EXPECT_TRUE(Exists("offsets/" + std::to_string(batch_id)));
    EXPECT_FALSE(Exists("commits/" + std::to_string(batch_id)));
    return Status::OK();
  };
  ASSERT_TRUE(RunToEnd(Rate(10), check, Trigger::Once()).ok());
  EXPECT_TRUE(checked);
  EXPECT_TRUE(Exists("commits/0"));
}

TEST_F(StreamingQueryTest, AFailedBatchStopsTheQueryAndRunsAgainWithTheSameIdAndRange) {
  clock_->AdvanceBy(seconds(1));
  SeenBatches first_run;
  stop_after_batch_ = 10;
  auto fail_batch_one = first_run.Recorder([](int64_t batch_id) {
    return batch_id == 1 ? Status::Error(errors::kIoError, "disk full") : Status::OK();
  });
  Status failed = RunToEnd(Rate(10), fail_batch_one, Trigger::ProcessingTime(seconds(1)));
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error_class(), errors::kIoError);
  EXPECT_NE(failed.message().find("batch 1"), std::string_view::npos);
  EXPECT_TRUE(Exists("offsets/1"));
  EXPECT_FALSE(Exists("commits/1"));
  std::string query_id = progress_.back().id, run_id = progress_.back().run_id;

  // Much later, the query restarts: batch 1 comes again with the same rows before anything new.
  clock_->AdvanceBy(seconds(60));
  SeenBatches second_run;
  progress_.clear();
  ASSERT_TRUE(RunToEnd(Rate(10), second_run.Recorder(), Trigger::Once()).ok());
  EXPECT_EQ(second_run.ids, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(second_run.values[0], first_run.values[1]);
  EXPECT_EQ(second_run.values[1].front(), first_run.values[1].back() + 1) << "no row lost, none repeated";
  EXPECT_EQ(progress_.front().id, query_id);
  EXPECT_NE(progress_.front().run_id, run_id);
}

TEST_F(StreamingQueryTest, ACommittedBatchIsNeverReplayed) {
  clock_->AdvanceBy(seconds(1));
  SeenBatches first, second;
  ASSERT_TRUE(RunToEnd(Rate(10), first.Recorder(), Trigger::Once()).ok());
  clock_->AdvanceBy(seconds(1));
  ASSERT_TRUE(RunToEnd(Rate(10), second.Recorder(), Trigger::Once()).ok());
  EXPECT_EQ(second.ids, std::vector<int64_t>{1});
  EXPECT_EQ(second.values[0], Range(10, 20));
}

// The pieces of a checkpoint that a crash or a hand can leave behind: the query refuses each one
// instead of starting over (which would deliver every row again).
TEST_F(StreamingQueryTest, ACheckpointMissingPartOfItsLogsIsCorrupt) {
  auto fs = LocalFileSystem();
  for (std::string removed : {"offsets", "offsets/2", "metadata", "offsets/0,offsets/1,offsets/2"}) {
    SCOPED_TRACE(removed);
    ASSERT_TRUE(fs->DeleteRecursively(dir_.Join("checkpoint")).ok());
    for (int run = 0; run < 3; ++run) {
      clock_->AdvanceBy(seconds(1));
      SeenBatches seen;
      ASSERT_TRUE(RunToEnd(Rate(10), seen.Recorder(), Trigger::Once()).ok());
    }
    size_t begin = 0;
    while (begin < removed.size()) {
      size_t comma = std::min(removed.find(',', begin), removed.size());
      ASSERT_TRUE(fs->DeleteRecursively(dir_.Join("checkpoint/" + removed.substr(begin, comma - begin))).ok());
      begin = comma + 1;
    }
    clock_->AdvanceBy(seconds(1));
    SeenBatches after;
    Status status = RunToEnd(Rate(10), after.Recorder(), Trigger::Once());
    EXPECT_EQ(status.error_class(), errors::kCheckpointCorrupt) << status.ToString();
    EXPECT_TRUE(after.ids.empty());
  }
}

TEST_F(StreamingQueryTest, ProgressHasTheFieldsOfSparksStreamingQueryProgress) {
  clock_->AdvanceBy(seconds(2));
  SeenBatches seen;
  ASSERT_TRUE(RunToEnd(Rate(10), seen.Recorder(), Trigger::Once()).ok());
  ASSERT_EQ(progress_.size(), 1u);
  std::string json = progress_[0].ToJson();
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(json).value();
  EXPECT_EQ(std::string_view(doc["id"].get_string().value()), progress_[0].id);
  EXPECT_EQ(doc["runId"].get_string().value().size(), 36u);
  EXPECT_EQ(std::string_view(doc["name"].get_string().value()), "test_query");
  EXPECT_EQ(std::string_view(doc["timestamp"].get_string().value()), "1970-01-01T00:00:02.000Z");
  EXPECT_EQ(doc["batchId"].get_int64().value(), 0);
  EXPECT_EQ(doc["numInputRows"].get_int64().value(), 20);
  EXPECT_TRUE(doc["inputRowsPerSecond"].is_number());
  EXPECT_TRUE(doc["processedRowsPerSecond"].is_number());
  for (const char* phase : {"latestOffset", "getBatch", "walCommit", "addBatch", "commitOffsets", "triggerExecution"}) {
    EXPECT_TRUE(doc["durationMs"][phase].is_int64()) << phase;
  }
  simdjson::dom::element source = doc["sources"].at(0).value();
  EXPECT_EQ(std::string_view(source["description"].get_string().value()), "RateSource[rowsPerSecond=10]");
  EXPECT_EQ(source["startOffset"]["rows"].get_int64().value(), 0);
  EXPECT_EQ(source["endOffset"]["rows"].get_int64().value(), 20);
  EXPECT_EQ(source["latestOffset"]["rows"].get_int64().value(), 20);
  EXPECT_EQ(source["numInputRows"].get_int64().value(), 20);
  EXPECT_EQ(std::string_view(doc["sink"]["description"].get_string().value()), "ForeachBatchSink[record]");
  EXPECT_EQ(doc["sink"]["numOutputRows"].get_int64().value(), 20);
}

TEST_F(StreamingQueryTest, StopFromAnotherThreadEndsTheRunGracefully) {
  QueryConfig config = Config(Trigger::ProcessingTime(seconds(0)));
  config.clock = SystemClock();
  config.on_progress = nullptr;
  auto table = std::make_shared<MemoryTable>();
  std::map<std::string, std::string> rate = {{"rowsPerSecond", "1000"}};
  auto source = MakeRateSource(ValidateOptions("rate source", kRateSourceOptions, rate).value()).value();
  auto query = StreamingQuery::Start(std::move(source), std::make_unique<MemorySink>(table), std::move(config));
  ASSERT_TRUE(query.ok());
  std::thread stopper([&] {
    std::this_thread::sleep_for(milliseconds(300));
    (*query)->Stop();
  });
  Status status = (*query)->Run();
  stopper.join();
  EXPECT_TRUE(status.ok()) << status.ToString();
  EXPECT_GT(table->num_rows(), 0);
  EXPECT_EQ(table->last_batch_id() + 1, (*query)->next_batch_id()) << "the last batch was committed, not cut off";
}

TEST(TriggerTest, ParsesNamesAndIntervals) {
  EXPECT_EQ(ParseTrigger("processing_time", "10 seconds")->interval, seconds(10));
  EXPECT_EQ(ParseTrigger("processing_time")->interval, seconds(0));
  EXPECT_EQ(ParseTrigger("Once")->kind, Trigger::Kind::kOnce);
  EXPECT_EQ(ParseTrigger("available_now")->kind, Trigger::Kind::kAvailableNow);
  EXPECT_EQ(ParseTrigger("real_time")->checkpoint_interval, seconds(5));
  EXPECT_EQ(ParseTrigger("real_time", "500ms")->checkpoint_interval, milliseconds(500));
  EXPECT_EQ(ParseTrigger("continuous").status().error_class(), errors::kInvalidOptions);
  EXPECT_EQ(ParseTrigger("once", "1s").status().error_class(), errors::kInvalidOptions);
  EXPECT_EQ(ParseTrigger("processing_time", "10").status().error_class(), errors::kInvalidOptions);
}

// ---- Operators between the source and the sink -------------------------------------------------

std::vector<std::unique_ptr<Operator>> Operators(std::unique_ptr<Operator> a, std::unique_ptr<Operator> b = nullptr) {
  std::vector<std::unique_ptr<Operator>> operators;
  operators.push_back(std::move(a));
  if (b) operators.push_back(std::move(b));
  return operators;
}

std::unique_ptr<Operator> Where(const std::string& sql) {
  return std::make_unique<FilterOperator>(expr::Expression::Parse(sql).value(), expr::SqlOptions{}, "where");
}

std::unique_ptr<Operator> Select(const std::vector<std::string>& items) {
  std::vector<expr::NamedExpression> named;
  for (const std::string& item : items) named.push_back(expr::ParseNamedExpression(item).value());
  return std::make_unique<ProjectOperator>(std::move(named), expr::SqlOptions{}, "select");
}

std::unique_ptr<Operator> GroupBy(const std::string& sql, OutputMode mode) {
  return std::make_unique<AggregateOperator>(expr::ParseSelect(sql).value(), mode, expr::SqlOptions{}, "sql");
}

// Each row of each batch as "batch:col0,col1,...".
struct SeenRows {
  std::vector<std::string> rows;
  ForeachBatchFunction Recorder(std::function<Status(int64_t)> also = nullptr) {
    return [this, also](const RecordBatch& batch, const BatchContext& context) -> Status {
      for (int64_t row = 0; row < batch.num_rows(); ++row) {
        std::string text = std::to_string(context.batch_id) + ":";
        for (int c = 0; c < batch.num_columns(); ++c) {
          text += (c > 0 ? "," : "") + FormatValue(*batch.column(c), row);
        }
        rows.push_back(std::move(text));
      }
      return also ? also(context.batch_id) : Status::OK();
    };
  }
};

// Over a changelog (a change feed's history, Delta's change data feed) min and max of a row's
// values are refused; the change columns, arguments reading the change type, and the other
// aggregates are not; without a change-type column nothing is refused.
TEST(OperatorChainTest, MinAndMaxOfValuesOverAChangelogAreRefused) {
  auto schema = [](const std::string& change_type) {
    return DataType::Struct({{"item", DataType::Long()},
                             {"price", DataType::Double()},
                             {change_type, DataType::String()},
                             {"_pg_lsn", DataType::Long()},
                             {"_timestamp", DataType::TimestampNtz()}})
        .value();
  };
  const std::string from = " FROM t GROUP BY item";
  for (const std::string change_type : {"_pg_change_type", "_change_type", "_PG_CHANGE_TYPE"}) {
    SCOPED_TRACE(change_type);
    for (const std::string refused : {"max(price)", "min(price)", "max(price * 2) + 1", "min(price + _pg_lsn)",
                                      "count(*), max(_pg_lsn), MAX(Price)"}) {
      OperatorChain chain(Operators(GroupBy("SELECT item, " + refused + from, OutputMode::kUpdate)));
      Result<TypePtr> bound = chain.Bind(schema(change_type));
      ASSERT_FALSE(bound.ok()) << refused;
      EXPECT_EQ(bound.status().error_class(), errors::kUnsupportedChangelogAggregate) << refused;
      EXPECT_NE(bound.status().message().find("_pg_change_type"), std::string::npos);
    }
    for (const std::string& allowed : std::vector<std::string>{
             "max(_timestamp), max(_pg_lsn), min(_pg_lsn)", "sum(CASE WHEN " + change_type + " = 'delete' THEN -price ELSE price END)",
          "max(CASE WHEN " + change_type + " <> 'delete' THEN price END)", "count(*), sum(price), avg(price)",
          "first(price), last(price)", "count(DISTINCT price)"}) {
      OperatorChain chain(Operators(GroupBy("SELECT item, " + allowed + from, OutputMode::kUpdate)));
      Result<TypePtr> bound = chain.Bind(schema(change_type));
      EXPECT_TRUE(bound.ok()) << allowed << ": " << bound.status().ToString();
    }
  }
  OperatorChain plain(Operators(GroupBy("SELECT item, max(price), min(price)" + from, OutputMode::kUpdate)));
  EXPECT_TRUE(plain.Bind(schema("change")).ok());
}

// uuid() draws from each row's number within its batch, counted across the batch's pieces: no
// two rows of a batch share a value (in a filter, in a projection, in a branch only some rows
// reach, in a lambda's elements), and the batch run again at its time gives the same values.
TEST(OperatorChainTest, UuidsAreDistinctAcrossTheBatchsPiecesAndTheSameOnReplay) {
  TypePtr schema = DataType::Struct({{"value", DataType::Long()}}).value();
  auto run = [&](int64_t timestamp_micros) {
    OperatorChain chain(Operators(Where("uuid() IS NOT NULL AND value >= 0"),
                                  Select({"uuid() AS u", "CASE WHEN value % 2 = 0 THEN uuid() END AS even",
                                          "transform(array(1, 2), x -> uuid()) AS pair"})));
    EXPECT_TRUE(chain.Bind(schema).ok());
    EXPECT_TRUE(chain.BeginBatch({7, timestamp_micros}).ok());
    std::vector<std::string> values;
    for (int64_t piece = 0; piece < 3; ++piece) {
      Int64Builder rows(DataType::Long());
      for (int64_t v = 0; v < 4; ++v) rows.Append(piece * 4 + v);
      Status pushed = chain.Push(RecordBatch::Make(schema, {rows.Finish()}, 4).value(), [&](BatchPtr out) {
        for (int64_t row = 0; row < out->num_rows(); ++row) {
          for (int c = 0; c < out->num_columns(); ++c) values.push_back(FormatValue(*out->column(c), row));
        }
        return Status::OK();
      });
      EXPECT_TRUE(pushed.ok()) << pushed.ToString();
    }
    return values;
  };
  const std::vector<std::string> first = run(1'700'000'000'000'000);
  ASSERT_EQ(first.size(), 36u);
  std::set<std::string> uuids;
  for (size_t i = 0; i < first.size(); i += 3) {
    uuids.insert(first[i]);
    if (first[i + 1].size() == 36) uuids.insert(first[i + 1]);  // odd rows: null
    uuids.insert(first[i + 2].substr(1, 36));
    uuids.insert(first[i + 2].substr(first[i + 2].size() - 37, 36));
  }
  EXPECT_EQ(uuids.size(), 12u + 6u + 24u);
  EXPECT_EQ(run(1'700'000'000'000'000), first);
  EXPECT_NE(run(1'700'000'000'000'001), first);
}

// In an aggregation's keys and arguments too, uuid() and rand() draw from each row's number within
// its batch across the pieces: every row its own group when grouped by uuid(), one value per row
// in collect_list(rand(7)), the same again when the batch runs again.
TEST(OperatorChainTest, UuidAndRandInAnAggregationAreDistinctAcrossTheBatchsPieces) {
  TypePtr schema = DataType::Struct({{"value", DataType::Long()}}).value();
  auto run = [&](const std::string& sql, int64_t batch_id) {
    OperatorChain chain(Operators(GroupBy(sql, OutputMode::kUpdate)));
    EXPECT_TRUE(chain.Bind(schema).ok());
    std::vector<std::string> values;
    auto emit = [&](BatchPtr out) {
      for (int64_t row = 0; row < out->num_rows(); ++row) {
        std::string text;
        for (int c = 0; c < out->num_columns(); ++c) text += FormatValue(*out->column(c), row) + "|";
        values.push_back(text);
      }
      return Status::OK();
    };
    // Two batches (at two times, as batches are), the second numbering its rows from 0 again.
    for (int64_t batch = 0; batch < 2; ++batch) {
      EXPECT_TRUE(chain.BeginBatch({batch_id + batch, 1'700'000'000'000'000 + batch}).ok());
      for (int64_t piece = 0; piece < 3; ++piece) {
        Int64Builder rows(DataType::Long());
        for (int64_t v = 0; v < 4; ++v) rows.Append(piece * 4 + v);
        EXPECT_TRUE(chain.Push(RecordBatch::Make(schema, {rows.Finish()}, 4).value(), emit).ok());
      }
      EXPECT_TRUE(chain.Finish(emit).ok());
      chain.stateful().at(0)->ClearChanges();  // as the query does once the batch's state is written
    }
    std::sort(values.begin(), values.end());
    return values;
  };
  std::vector<std::string> by_uuid = run("SELECT uuid() AS u, count(*) AS n FROM t GROUP BY uuid()", 0);
  ASSERT_EQ(by_uuid.size(), 24u);  // 12 rows a batch, each its own group
  for (const std::string& row : by_uuid) EXPECT_TRUE(row.ends_with("|1|")) << row;
  EXPECT_EQ(run("SELECT uuid() AS u, count(*) AS n FROM t GROUP BY uuid()", 0), by_uuid);
  std::vector<std::string> randoms = run("SELECT count(DISTINCT rand(7)) AS d, min(rand(7)) AS m FROM t", 0);
  // The global group after each batch: 12 distinct values, and the second batch draws the same
  // sequence again (each batch starts it, as each Spark micro-batch does).
  ASSERT_EQ(randoms.size(), 2u);
  EXPECT_TRUE(randoms[0].starts_with("12|")) << randoms[0];
  EXPECT_EQ(randoms[1], randoms[0]);
}

TEST_F(StreamingQueryTest, OperatorsRunBetweenTheSourceAndTheSinkAndReportTheirRows) {
  clock_->AdvanceBy(seconds(2));
  SeenRows seen;
  QueryConfig config = Config(Trigger::Once());
  config.operators = Operators(Where("value % 4 = 1"), Select({"value * 10 AS tens"}));
  auto query = StreamingQuery::Start(Rate(10), MakeForeachBatchSink("record", seen.Recorder()), std::move(config));
  ASSERT_TRUE(query.ok()) << query.status().ToString();
  ASSERT_TRUE((*query)->Run().ok());
  EXPECT_EQ(seen.rows, (std::vector<std::string>{"0:10", "0:50", "0:90", "0:130", "0:170"}));

  ASSERT_EQ(progress_.size(), 1u);
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(progress_[0].ToJson()).value();
  EXPECT_EQ(doc["numInputRows"].get_int64().value(), 20);
  EXPECT_EQ(doc["sink"]["numOutputRows"].get_int64().value(), 5) << "what the sink got, not what was read";
  simdjson::dom::array operators = doc["operators"].get_array().value();
  ASSERT_EQ(operators.size(), 2u);
  EXPECT_EQ(std::string_view(operators.at(0)["name"].get_string().value()), "filter");
  EXPECT_EQ(operators.at(0)["numInputRows"].get_int64().value(), 20);
  EXPECT_EQ(operators.at(0)["numOutputRows"].get_int64().value(), 5);
  EXPECT_EQ(std::string_view(operators.at(1)["name"].get_string().value()), "project");
  EXPECT_EQ(operators.at(1)["numInputRows"].get_int64().value(), 5);
  EXPECT_EQ(operators.at(1)["numOutputRows"].get_int64().value(), 5);
  EXPECT_TRUE(operators.at(1)["durationMs"].is_number());
}

// current_timestamp() is the batch's time as offsets/N logged it: a batch run again after a crash,
// a minute later, gives the values of its first run, and the next batch has its own time.
TEST_F(StreamingQueryTest, ABatchRunAgainEvaluatesAtTheTimeItsOffsetsLogged) {
  for (int run = 0; run < 2; ++run) {
    clock_->AdvanceBy(run == 0 ? milliseconds(3250) : seconds(60));
    SeenRows seen;
    QueryConfig config = Config(run == 0 ? Trigger::ProcessingTime(seconds(0)) : Trigger::Once());
    config.operators = Operators(Select({"value", "unix_micros(current_timestamp()) AS at"}));
    auto fail_first_run = [run](int64_t) {
      return run == 0 ? Status::Error(errors::kIoError, "disk full") : Status::OK();
    };
    auto query = StreamingQuery::Start(Rate(4), MakeForeachBatchSink("record", seen.Recorder(fail_first_run)),
                                       std::move(config));
    ASSERT_TRUE(query.ok()) << query.status().ToString();
    Status ran = (*query)->Run();
    if (run == 0) {
      ASSERT_EQ(ran.error_class(), errors::kIoError);
      EXPECT_EQ(seen.rows.front(), "0:0,3250000") << "the trigger's time, to the millisecond";
      continue;
    }
    ASSERT_TRUE(ran.ok()) << ran.ToString();
    ASSERT_EQ(seen.rows.size(), 253u);
    for (int64_t value = 0; value < 13; ++value) {
      EXPECT_EQ(seen.rows[value], "0:" + std::to_string(value) + ",3250000") << "batch 0 again, at its first time";
    }
    EXPECT_EQ(seen.rows[13], "1:13,63250000");
  }
}

TEST_F(StreamingQueryTest, AnAggregationsStateIsTheCheckpointsAndABatchRunAgainStartsFromItsVersion) {
  const std::string sql = "SELECT value % 3 AS k, count(*) AS n, sum(value) AS s FROM t GROUP BY value % 3";
  std::vector<std::string> batches;
  for (int run = 0; run < 3; ++run) {
    clock_->AdvanceBy(seconds(1));
    SeenRows seen;
    QueryConfig config = Config(Trigger::Once());
    config.output_mode = OutputMode::kComplete;
    config.operators = Operators(GroupBy(sql, OutputMode::kComplete));
    // The second run fails batch 1 after the groups took its rows: the third starts it over.
    auto fail = [run](int64_t) { return run == 1 ? Status::Error(errors::kIoError, "disk full") : Status::OK(); };
    auto query = StreamingQuery::Start(Rate(6), MakeForeachBatchSink("record", seen.Recorder(fail)), std::move(config));
    ASSERT_TRUE(query.ok()) << query.status().ToString();
    Status ran = (*query)->Run();
    ASSERT_EQ(ran.ok(), run != 1) << ran.ToString();
    std::sort(seen.rows.begin(), seen.rows.end());
    std::string joined;
    for (const std::string& row : seen.rows) joined += row + " ";
    batches.push_back(joined);
  }
  // Rows 0..5; then 6..11, failed after the groups took them; then 6..11 again (batch 1, from
  // state version 0, not from the groups the failed run left) and 12..17 (batch 2).
  EXPECT_EQ(batches[0], "0:0,2,3 0:1,2,5 0:2,2,7 ");
  EXPECT_EQ(batches[2], "1:0,4,18 1:1,4,22 1:2,4,26 2:0,6,45 2:1,6,51 2:2,6,57 ");
  EXPECT_TRUE(Exists("state/0/2.delta.parquet"));
  EXPECT_EQ(progress_.back().state_operators.at(0).num_rows_total, 3);
}

TEST_F(StreamingQueryTest, QueriesWithStateOrGroupsRefuseModesAndTriggersTheyCannotHonour) {
  std::ostringstream out;
  QueryConfig append = Config(Trigger::Once());
  append.operators = Operators(GroupBy("SELECT count(*) AS n FROM t", OutputMode::kUpdate));
  auto no_append = StreamingQuery::Start(Rate(1), MakeConsoleSink(&out, 20), std::move(append));
  EXPECT_EQ(no_append.status().error_class(), errors::kUnsupportedOutputMode);

  QueryConfig real_time = Config(Trigger::RealTime());
  real_time.operators =
      Operators(std::make_unique<DeduplicateOperator>(std::vector<std::string>{"value"}, expr::SqlOptions{}, "dedup"));
  auto table = MemoryTable::Named("dedup_real_time");
  auto no_real_time = StreamingQuery::Start(Rate(1), std::make_unique<MemorySink>(table), std::move(real_time));
  EXPECT_EQ(no_real_time.status().error_class(), errors::kUnsupportedTrigger);
  EXPECT_NE(no_real_time.status().message().find("keeps state"), std::string_view::npos);
  EXPECT_FALSE(Exists("metadata")) << "refused before touching the checkpoint";
}

TEST_F(StreamingQueryTest, BindingErrorsOfTheOperatorsStopTheFirstBatchBeforeTheSinkGetsARow) {
  clock_->AdvanceBy(seconds(1));
  SeenRows seen;
  QueryConfig config = Config(Trigger::Once());
  config.operators = Operators(Select({"nope + 1 AS x"}));
  auto query = StreamingQuery::Start(Rate(4), MakeForeachBatchSink("record", seen.Recorder()), std::move(config));
  ASSERT_TRUE(query.ok()) << query.status().ToString();
  Status ran = (*query)->Run();
  EXPECT_EQ(ran.error_class(), "UNRESOLVED_COLUMN") << ran.ToString();
  EXPECT_NE(ran.message().find("select 'x'"), std::string_view::npos) << ran.ToString();
  EXPECT_TRUE(seen.rows.empty());
  EXPECT_FALSE(Exists("commits/0"));
}

TEST_F(StreamingQueryTest, GeneratorsInASelectGiveRowsPerElementAndMultiply) {
  clock_->AdvanceBy(seconds(1));
  SeenRows seen;
  QueryConfig config = Config(Trigger::Once());
  config.operators = Operators(Select({"value", "explode(slice(array(10, 20), 1, CAST(value % 3 AS INT))) AS e",
                                       "value + 100 AS v", "posexplode(array('x', 'y'))"}));
  auto query = StreamingQuery::Start(Rate(3), MakeForeachBatchSink("record", seen.Recorder()), std::move(config));
  ASSERT_TRUE(query.ok()) << query.status().ToString();
  ASSERT_TRUE((*query)->Run().ok());
  // value 0 has no element (no row), 1 has one, 2 has two; each then twice, by posexplode.
  EXPECT_EQ(seen.rows, (std::vector<std::string>{"0:1,10,101,0,x", "0:1,10,101,1,y", "0:2,10,102,0,x",
                                                 "0:2,10,102,1,y", "0:2,20,102,0,x", "0:2,20,102,1,y"}));
  EXPECT_EQ(progress_.back().operators.at(0).name, "generate");
  EXPECT_EQ(progress_.back().operators.at(0).num_input_rows, 3);
  EXPECT_EQ(progress_.back().operators.at(0).num_output_rows, 6);
}

// A source whose batch comes in two pieces of two schemas, as a Delta table whose schema evolved
// within the batch's range gives them: `value`, then `value` and `extra`.
class EvolvingSource final : public ReadOnceSource {
 public:
  std::string description() const override { return "EvolvingSource"; }
  TypePtr schema() const override { return DataType::Struct({{"value", DataType::Long()}}).value(); }
  Status Open(const SourceContext&) override { return Status::OK(); }

 protected:
  Result<std::vector<BatchPtr>> ReadAll() override {
    Int64Builder first(DataType::Long()), second(DataType::Long()), extra(DataType::Long());
    first.Append(1);
    second.Append(2);
    extra.Append(20);
    TypePtr wider = DataType::Struct({{"value", DataType::Long()}, {"extra", DataType::Long()}}).value();
    return std::vector<BatchPtr>{RecordBatch::Make(schema(), {first.Finish()}, 1).value(),
                                 RecordBatch::Make(wider, {second.Finish(), extra.Finish()}, 1).value()};
  }
};

TEST_F(StreamingQueryTest, PiecesOfAnEvolvedSchemaBindTheOperatorsAgainUnlessTheyKeepState) {
  SeenRows seen;
  QueryConfig config = Config(Trigger::Once());
  config.operators = Operators(Where("value > 0"), Select({"value * 10 AS tens"}));
  auto query = StreamingQuery::Start(std::make_unique<EvolvingSource>(), MakeForeachBatchSink("record", seen.Recorder()),
                                     std::move(config));
  ASSERT_TRUE(query.ok()) << query.status().ToString();
  ASSERT_TRUE((*query)->Run().ok());
  EXPECT_EQ(seen.rows, (std::vector<std::string>{"0:10", "0:20"}));

  QueryConfig grouped = Config(Trigger::Once());
  grouped.checkpoint_location = dir_.Join("grouped");
  grouped.output_mode = OutputMode::kComplete;
  grouped.operators = Operators(GroupBy("SELECT count(*) AS n FROM t", OutputMode::kComplete));
  auto stateful = StreamingQuery::Start(std::make_unique<EvolvingSource>(),
                                        MakeForeachBatchSink("record", seen.Recorder()), std::move(grouped));
  ASSERT_TRUE(stateful.ok()) << stateful.status().ToString();
  Status ran = (*stateful)->Run();
  EXPECT_EQ(ran.error_class(), errors::kInvalidSchema) << ran.ToString();
  EXPECT_NE(ran.message().find("restart"), std::string_view::npos) << ran.ToString();
}

}  // namespace
}  // namespace sluice::engine
