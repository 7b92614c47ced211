#include "engine/piece_pipe.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "sluice/core/builder.h"
#include "sluice/core/error_classes.h"

namespace sluice::engine {
namespace {

TypePtr ValueSchema() { return DataType::Struct({{"value", DataType::Long()}}).value(); }

// Pieces alive anywhere (in the source, between the threads, in the writer).
std::atomic<int> live_pieces{0};

// A piece of one row holding `value`, counted in live_pieces while it exists.
BatchPtr Piece(int64_t value) {
  Int64Builder values(DataType::Long());
  values.Append(value);
  BatchPtr made = RecordBatch::Make(ValueSchema(), {values.Finish()}, 1).value();
  ++live_pieces;
  auto* raw = new RecordBatch(*made);
  return BatchPtr(raw, [](const RecordBatch* piece) {
    --live_pieces;
    delete piece;
  });
}

// Reads `pieces` one-row pieces with values 0, 1, ...; fails instead of reading piece
// `fail_at` when it is set.
class CountingSource final : public Source {
 public:
  explicit CountingSource(int pieces, int fail_at = -1) : pieces_(pieces), fail_at_(fail_at) {}
  std::string description() const override { return "CountingSource"; }
  TypePtr schema() const override { return ValueSchema(); }
  Status Open(const SourceContext&) override { return Status::OK(); }
  Result<std::string> InitialOffset() override { return std::string("0"); }
  Result<std::string> LatestOffset(const std::string&, const ReadLimit&) override { return std::string("1"); }
  Result<std::vector<BatchPtr>> Read(const std::string&, const std::string&) override {
    return Status::Error(errors::kInternalError, "the pipe reads in pieces");
  }
  Status ReadPieces(const std::string&, const std::string&, const PieceConsumer& consume) override {
    for (int i = 0; i < pieces_; ++i) {
      if (i == fail_at_) return Status::Error(errors::kIoError, "the connection broke");
      ++read;
      SLUICE_RETURN_IF_ERROR(consume(Piece(i)));
    }
    return Status::OK();
  }
  Status Commit(const std::string&) override { return Status::OK(); }

  int read = 0;

 private:
  int pieces_;
  int fail_at_;
};

// Records the values it is given (holding no piece), optionally slowly; fails on piece `fail_at`.
class RecordingWriter final : public BatchWriter {
 public:
  explicit RecordingWriter(int fail_at = -1, std::chrono::microseconds delay = {}) : fail_at_(fail_at), delay_(delay) {}
  Status Add(BatchPtr piece) override {
    max_live = std::max(max_live, live_pieces.load());
    if (static_cast<int>(values.size()) == fail_at_) return Status::Error(errors::kIoError, "the disk is full");
    values.push_back(piece->column(0)->Value<int64_t>(0));
    std::this_thread::sleep_for(delay_);
    return Status::OK();
  }
  Status Commit() override { return Status::Error(errors::kInternalError, "the pipe never commits"); }

  std::vector<int64_t> values;
  int max_live = 0;

 private:
  int fail_at_;
  std::chrono::microseconds delay_;
};

TEST(PipePiecesTest, TheWriterGetsEveryPieceInTheSourcesOrder) {
  CountingSource source(200);
  RecordingWriter writer;
  PipeOutcome outcome = PipePieces(source, "0", "1", writer);
  ASSERT_TRUE(outcome.read.ok()) << outcome.read.ToString();
  ASSERT_TRUE(outcome.write.ok()) << outcome.write.ToString();
  EXPECT_EQ(outcome.rows, 200);
  ASSERT_EQ(writer.values.size(), 200u);
  for (int64_t i = 0; i < 200; ++i) EXPECT_EQ(writer.values[i], i);
  EXPECT_EQ(live_pieces.load(), 0);
}

TEST(PipePiecesTest, ASlowWriterHoldsTheSourceBackToAFewPiecesInMemory) {
  CountingSource source(50);
  RecordingWriter writer(-1, std::chrono::microseconds(500));
  PipeOutcome outcome = PipePieces(source, "0", "1", writer, 2);
  ASSERT_TRUE(outcome.read.ok() && outcome.write.ok());
  EXPECT_EQ(writer.values.size(), 50u);
  // Two waiting, the one the writer takes and the one the source has made: never the whole batch.
  EXPECT_LE(writer.max_live, 4);
  EXPECT_EQ(live_pieces.load(), 0);
}

TEST(PipePiecesTest, AFailingWriterStopsTheSourceWithItsError) {
  CountingSource source(1000);
  RecordingWriter writer(3);
  PipeOutcome outcome = PipePieces(source, "0", "1", writer, 2);
  EXPECT_EQ(outcome.write.error_class(), errors::kIoError);
  EXPECT_EQ(outcome.read.error_class(), errors::kIoError);
  EXPECT_EQ(writer.values, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_LE(source.read, 3 + 2 + 2);
  EXPECT_EQ(live_pieces.load(), 0);
}

TEST(PipePiecesTest, AReadErrorEndsThePipeWithThePiecesBeforeIt) {
  CountingSource source(100, 10);
  RecordingWriter writer;
  PipeOutcome outcome = PipePieces(source, "0", "1", writer);
  EXPECT_EQ(outcome.read.error_class(), errors::kIoError);
  EXPECT_TRUE(outcome.write.ok());
  EXPECT_LE(writer.values.size(), 10u);
  for (size_t i = 0; i < writer.values.size(); ++i) EXPECT_EQ(writer.values[i], static_cast<int64_t>(i));
  EXPECT_EQ(live_pieces.load(), 0);
}

}  // namespace
}  // namespace sluice::engine
