// The Delta sink under the engine's piece-by-piece batches: every piece in one commit, and no
// commit at all when the read fails mid-way.
#include <gtest/gtest.h>

#include <algorithm>

#include "sluice/core/builder.h"
#include "sluice/core/error_classes.h"
#include "sluice/delta/scan.h"
#include "sluice/delta/snapshot.h"
#include "sluice/connectors/delta/formats.h"
#include "sluice/engine/read_once_source.h"
#include "sluice/engine/streaming_query.h"
#include "testing/temp_dir.h"

namespace sluice::connectors {

using engine::PieceConsumer;
using engine::QueryConfig;
using engine::ReadOnceSource;
using engine::SourceContext;
using engine::StreamingQuery;
using engine::Trigger;

namespace {

TypePtr ValueSchema() { return DataType::Struct({{"value", DataType::Long()}}).value(); }

// Reads values 0..99 in ten pieces of ten; with `fail_at` set, the read fails instead of
// reading that piece.
class TenPiecesSource final : public ReadOnceSource {
 public:
  explicit TenPiecesSource(int fail_at = -1) : fail_at_(fail_at) {}
  std::string description() const override { return "TenPiecesSource"; }
  TypePtr schema() const override { return ValueSchema(); }
  Status Open(const SourceContext&) override { return Status::OK(); }

 protected:
  Result<std::vector<BatchPtr>> ReadAll() override {
    return Status::Error(errors::kInternalError, "the engine reads this source in pieces");
  }
  Status ReadAllPieces(const PieceConsumer& consume) override {
    for (int piece = 0; piece < 10; ++piece) {
      if (piece == fail_at_) return Status::Error(errors::kPgQueryFailed, "the server went away");
      Int64Builder values(DataType::Long());
      for (int64_t v = piece * 10; v < piece * 10 + 10; ++v) values.Append(v);
      SLUICE_ASSIGN_OR_RETURN(BatchPtr batch, RecordBatch::Make(ValueSchema(), {values.Finish()}, 10));
      SLUICE_RETURN_IF_ERROR(consume(std::move(batch)));
    }
    return Status::OK();
  }

 private:
  int fail_at_;
};

class DeltaSinkPiecesTest : public ::testing::Test {
 protected:
  Status RunOnce(int fail_at) {
    SLUICE_ASSIGN_OR_RETURN(auto options, ValidateOptions("delta sink", kDeltaSinkOptions, {{"path", table_}}));
    SLUICE_ASSIGN_OR_RETURN(auto sink, MakeDeltaSink(options));
    QueryConfig config;
    config.name = "copy";
    config.checkpoint_location = dir_.Join("checkpoint");
    config.trigger = Trigger::Once();
    SLUICE_ASSIGN_OR_RETURN(auto query,
                            StreamingQuery::Start(std::make_unique<TenPiecesSource>(fail_at), std::move(sink), std::move(config)));
    return query->Run();
  }

  std::vector<int64_t> Values(const delta::SnapshotPtr& snapshot) {
    auto scan = delta::TableScan::Open(snapshot, delta::ScanOptions{{"value"}}).value();
    std::vector<int64_t> values;
    while (BatchPtr batch = scan->Next().value()) {
      for (int64_t row = 0; row < batch->num_rows(); ++row) values.push_back(batch->column(0)->Value<int64_t>(row));
    }
    return values;
  }

  testing::TempDir dir_{"sluice-delta-pieces"};
  std::string table_ = dir_.Join("table");
};

TEST_F(DeltaSinkPiecesTest, EveryPieceOfABatchLandsInOneCommitInOrder) {
  ASSERT_TRUE(RunOnce(-1).ok());
  auto snapshot = delta::Snapshot::Load(LocalFileSystem(), table_);
  ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString();
  EXPECT_EQ((*snapshot)->version(), 0);
  EXPECT_EQ((*snapshot)->files().size(), 1u);
  std::vector<int64_t> expected;
  for (int64_t v = 0; v < 100; ++v) expected.push_back(v);
  EXPECT_EQ(Values(*snapshot), expected);
}

TEST_F(DeltaSinkPiecesTest, AReadFailingMidwayCommitsNothingAndTheRerunWritesTheBatchOnce) {
  Status failed = RunOnce(6);
  EXPECT_EQ(failed.error_class(), errors::kPgQueryFailed);
  EXPECT_FALSE(delta::Snapshot::Load(LocalFileSystem(), table_).ok()) << "no version of the table may exist";

  ASSERT_TRUE(RunOnce(-1).ok());
  auto snapshot = delta::Snapshot::Load(LocalFileSystem(), table_).value();
  EXPECT_EQ(snapshot->version(), 0);
  std::vector<int64_t> values = Values(snapshot);
  EXPECT_EQ(values.size(), 100u);
  std::sort(values.begin(), values.end());
  EXPECT_EQ(std::unique(values.begin(), values.end()), values.end());
}

}  // namespace
}  // namespace sluice::connectors
