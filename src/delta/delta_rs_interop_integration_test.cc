// Tables sluice changes with deletion vectors, read by an independent engine: delta-rs (the
// `deltalake` package, installed by scripts/install-test-tools.sh), through
// tests/tools/delta_rs_rows.py. Its rows must be those sluice reads and the ones the test expects.
// The tables are written on the local disk and on S3 (moto on loopback; delta-rs reaches it through
// the AWS_* environment the S3 server sets).
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "delta/delta_replay_testing.h"
#include "delta/delta_rs_testing.h"
#include "delta/scan_testing.h"
#include "parquet/duckdb_testing.h"
#include "sluice/core/builder.h"
#include "sluice/delta/dml.h"
#include "sluice/delta/scan.h"
#include "sluice/delta/snapshot.h"
#include "sluice/delta/writer.h"
#include "testing/store_root.h"

namespace sluice::delta {
namespace {

using parquet::testing::ShellQuote;

// The table's rows as delta-rs reads them, as `[id, "name"]` lines, sorted.
std::vector<std::string> DeltaRsRows(const std::string& table) { return testing::DeltaRsLines(ShellQuote(table)); }

std::string Line(int64_t id, const std::string& name) { return "[" + std::to_string(id) + ", \"" + name + "\"]"; }

// The same lines from sluice's own scan.
std::vector<std::string> SluiceRows(const std::shared_ptr<FileSystem>& fs, const std::string& table) {
  return testing::ScannedLines(Snapshot::Load(fs, table).value(), {}, [](const RecordBatch& batch, int64_t row) {
    return Line(batch.column(0)->Value<int64_t>(row), std::string(batch.column(1)->View(row)));
  });
}

// DELETEs, UPDATEs and a MERGE mark rows deleted in the same files again and again (the vectors
// of a file accumulate), over more than ten commits (a checkpoint carries the vectors).
class DeltaRsInteropTest : public ::testing::TestWithParam<sluice::testing::Store> {};

TEST_P(DeltaRsInteropTest, DeltaRsReadsTheRowsSluiceMarkedDeleted) {
  sluice::testing::StoreRoot dir(GetParam());
  auto fs = dir.file_system();
  const std::string table = dir.Join("t");
  TypePtr schema = ParseTypeString("struct<id:bigint,name:string>").value();
  std::map<int64_t, std::string> expected;
  for (int64_t file = 0; file < 3; ++file) {
    Int64Builder ids(DataType::Long());
    BinaryBuilder names(DataType::String());
    for (int64_t id = file * 1000; id < (file + 1) * 1000; ++id) {
      ids.Append(id);
      names.Append("n" + std::to_string(id));
      expected[id] = "n" + std::to_string(id);
    }
    ASSERT_TRUE(WriteTable(fs, table, {RecordBatch::Make(schema, {ids.Finish(), names.Finish()}, 1000).value()},
                           {.table_properties = {{"delta.enableDeletionVectors", "true"}}})
                    .ok());
  }
  const auto protocol = Snapshot::Load(fs, table).value()->protocol();
  ASSERT_TRUE(protocol.reader_features.has_value());
  EXPECT_EQ(*protocol.reader_features, std::vector<std::string>{"deletionVectors"});

  for (int64_t k = 0; k < 10; ++k) {
    auto deleted = DeleteFromTable(fs, table, {.where = expr::Expression::Parse(fmt::format("id % 97 = {}", k)).value()});
    ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
    EXPECT_EQ(deleted->num_rows_copied, 0);
    std::erase_if(expected, [&](const auto& row) { return row.first % 97 == k; });
  }
  auto updated = UpdateTable(fs, table, {.assignments = {{{"name"}, expr::Expression::Parse("upper(name)").value()}},
                                         .where = expr::Expression::Parse("id BETWEEN 1500 AND 1510").value()});
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  for (auto& [id, name] : expected) {
    if (id >= 1500 && id <= 1510) name = "N" + std::to_string(id);
  }
  // A MERGE deleting some matched rows and updating others.
  Int64Builder ids(DataType::Long());
  BinaryBuilder names(DataType::String());
  for (int64_t id : {50, 2999, 3500}) {
    ids.Append(id);
    names.Append(id == 50 ? "delete" : "merged");
  }
  MergeSpec merge{.target_alias = "t", .source_alias = "s", .on = expr::Expression::Parse("t.id = s.id").value()};
  merge.clauses = {
      expr::MergeClause{.match = expr::MergeMatch::kMatched, .condition = expr::Expression::Parse("s.name = 'delete'").value(),
                        .action = expr::MergeActionKind::kDelete},
      expr::MergeClause{.match = expr::MergeMatch::kMatched, .action = expr::MergeActionKind::kUpdateAll},
      expr::MergeClause{.match = expr::MergeMatch::kNotMatched, .action = expr::MergeActionKind::kInsertAll}};
  auto merged = MergeInto(fs, table, {RecordBatch::Make(schema, {ids.Finish(), names.Finish()}, 3).value()}, merge);
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  EXPECT_GT(merged->num_deletion_vectors_added, 0);
  ASSERT_EQ(expected.erase(50), 1u);
  expected[2999] = "merged";
  expected[3500] = "merged";
  ASSERT_TRUE(fs->Exists(table + "/_delta_log/00000000000000000010.checkpoint.parquet").value());

  std::vector<std::string> wanted;
  for (const auto& [id, name] : expected) wanted.push_back(Line(id, name));
  std::sort(wanted.begin(), wanted.end());
  EXPECT_EQ(SluiceRows(fs, table), wanted);
  EXPECT_EQ(DeltaRsRows(table), wanted);
  // The three original data files are still the table's (never rewritten), each with a vector.
  int with_vectors = 0;
  const SnapshotPtr snapshot = Snapshot::Load(fs, table).value();
  for (const AddFile& file : snapshot->files()) with_vectors += file.deletion_vector ? 1 : 0;
  EXPECT_EQ(with_vectors, 3);
}

INSTANTIATE_TEST_SUITE_P(Stores, DeltaRsInteropTest, ::testing::ValuesIn(sluice::testing::kAllStores),
                         sluice::testing::StoreName);

}  // namespace
}  // namespace sluice::delta
