// The backfill merge on its own: when it is due (the history overlapping what the stream
// ingested, or `max_wait` after the stream's oldest record), what it inserts, and that it runs once.
#include "sluice/pipeline/stream_backfill.h"

#include <gtest/gtest.h>

#include "sluice/core/builder.h"
#include "sluice/delta/scan.h"
#include "sluice/delta/snapshot.h"
#include "sluice/delta/writer.h"
#include "testing/temp_dir.h"

namespace sluice::pipeline {
namespace {

constexpr int64_t kHour = 3600LL * 1000 * 1000;
constexpr int64_t kStart = 1'767'225'600'000'000;  // 2026-01-01T00:00:00Z, in microseconds

// Rows (key, value, stream_record_timestamp[, record_source]) with keys `k<i>` at kStart + offset.
BatchPtr Rows(const std::vector<std::pair<int, int64_t>>& rows, const char* source) {
  BinaryBuilder keys(DataType::String()), values(DataType::String()), sources(DataType::String());
  FixedWidthBuilder<int64_t> timestamps(DataType::Timestamp());
  for (const auto& [i, offset] : rows) {
    keys.Append("k" + std::to_string(i));
    values.Append("v" + std::to_string(i));
    timestamps.Append(kStart + offset);
    sources.Append(source ? source : "");
  }
  std::vector<Field> fields = {{"key", DataType::String()}, {"value", DataType::String()},
                               {"stream_record_timestamp", DataType::Timestamp()}};
  std::vector<ColumnPtr> columns = {keys.Finish(), values.Finish(), timestamps.Finish()};
  if (source) {
    fields.push_back({"record_source", DataType::String()});
    columns.push_back(sources.Finish());
  }
  return RecordBatch::Make(DataType::Struct(std::move(fields)).value(), std::move(columns),
                           static_cast<int64_t>(rows.size()))
      .value();
}

std::multiset<std::string> TableRows(const std::string& table) {
  auto scan = delta::TableScan::Open(delta::Snapshot::Load(LocalFileSystem(), table).value(),
                                     {.columns = {"key", "record_source"}})
                  .value();
  std::multiset<std::string> rows;
  while (BatchPtr batch = scan->Next().value()) {
    for (int64_t row = 0; row < batch->num_rows(); ++row) {
      rows.insert(std::string(batch->column(0)->View(row)) + ":" + std::string(batch->column(1)->View(row)));
    }
  }
  return rows;
}

class BackfillTest : public ::testing::Test {
 protected:
  BackfillSpec Spec() const { return {"main.raw.events", table_, history_, {}}; }

  sluice::testing::TempDir dir_;
  std::string table_ = dir_.Join("table"), history_ = dir_.Join("history");
};

// The history ends two hours before the stream's first record: it never overlaps, and the merge
// comes once max_wait (48 h) has passed since that record. The history is read in several files.
TEST_F(BackfillTest, AHistoryThatNeverOverlapsIsMergedAfterMaxWait) {
  auto fs = LocalFileSystem();
  ASSERT_TRUE(delta::WriteTable(fs, table_, {Rows({{0, 0}, {1, kHour}, {2, 2 * kHour}}, "stream")}).ok());
  // Three commits of history: the older records, and record 0 again (kept once by the merge).
  ASSERT_TRUE(delta::WriteTable(fs, history_, {Rows({{10, -5 * kHour}, {11, -4 * kHour}}, nullptr)}).ok());
  ASSERT_TRUE(delta::WriteTable(fs, history_, {Rows({{12, -3 * kHour}, {13, -2 * kHour}}, nullptr)}).ok());
  ASSERT_TRUE(delta::WriteTable(fs, history_, {Rows({{13, -2 * kHour}, {0, 0}}, nullptr)}).ok());

  auto backfill = Backfill::Open(fs, Spec());
  ASSERT_TRUE(backfill.ok()) << backfill.status().ToString();
  auto early = (*backfill)->RunIfDue(std::nullopt, kStart + 48 * kHour - 1);
  ASSERT_TRUE(early.ok()) << early.status().ToString();
  EXPECT_FALSE(early->has_value()) << "not due: no overlap, and 48 h have not passed";
  auto due = (*backfill)->RunIfDue(std::nullopt, kStart + 48 * kHour);
  ASSERT_TRUE(due.ok()) << due.status().ToString();
  ASSERT_TRUE(due->has_value());
  EXPECT_EQ(**due, 4) << "k10..k13 once each (k13 twice in the history); k0 is in the table";
  EXPECT_TRUE((*backfill)->done());
  EXPECT_FALSE((*backfill)->RunIfDue(std::nullopt, kStart + 100 * kHour)->has_value());

  EXPECT_EQ(TableRows(table_),
            (std::multiset<std::string>{"k0:stream", "k1:stream", "k2:stream", "k10:backfill", "k11:backfill",
                                        "k12:backfill", "k13:backfill"}));
  // A new run finds the merge recorded and does not merge again.
  auto reopened = Backfill::Open(fs, Spec());
  ASSERT_TRUE(reopened.ok());
  EXPECT_TRUE((*reopened)->done());
}

// An empty history is merged too (nothing inserted), so that the backfill is recorded as run.
TEST_F(BackfillTest, AnEmptyHistoryIsRecordedAsMerged) {
  auto fs = LocalFileSystem();
  ASSERT_TRUE(delta::WriteTable(fs, table_, {Rows({{0, 0}}, "stream")}).ok());
  ASSERT_TRUE(delta::WriteTable(fs, history_, {Rows({}, nullptr)}).ok());
  auto backfill = Backfill::Open(fs, Spec());
  ASSERT_TRUE(backfill.ok()) << backfill.status().ToString();
  auto due = (*backfill)->RunIfDue(std::nullopt, kStart + 48 * kHour);
  ASSERT_TRUE(due.ok()) << due.status().ToString();
  EXPECT_EQ(due->value_or(-1), 0);
  EXPECT_TRUE(Backfill::Open(fs, Spec()).value()->done());
  EXPECT_EQ(TableRows(table_), (std::multiset<std::string>{"k0:stream"}));
}

}  // namespace
}  // namespace sluice::pipeline
