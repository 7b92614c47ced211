#include "sluice/delta/dml.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sluice/core/builder.h"
#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "delta/scan_testing.h"
#include "sluice/delta/maintenance.h"
#include "sluice/delta/scan.h"
#include "sluice/delta/writer.h"
#include "testing/store_root.h"
#include "testing/temp_dir.h"

namespace sluice::delta {
namespace {

// One row of the tests' tables: (id bigint, v bigint, op string), NULL as std::nullopt.
struct Row {
  std::optional<int64_t> id;
  std::optional<int64_t> v;
  std::optional<std::string> op;
};

BatchPtr Rows(const std::vector<Row>& rows, const std::string& schema = "struct<id:bigint,v:bigint,op:string>") {
  TypePtr type = ParseTypeString(schema).value();
  Int64Builder ids(DataType::Long());
  Int64Builder vs(DataType::Long());
  BinaryBuilder ops(DataType::String());
  for (const Row& row : rows) {
    row.id ? ids.Append(*row.id) : ids.AppendNull();
    row.v ? vs.Append(*row.v) : vs.AppendNull();
    row.op ? ops.Append(*row.op) : ops.AppendNull();
  }
  return RecordBatch::Make(type, {ids.Finish(), vs.Finish(), ops.Finish()}, static_cast<int64_t>(rows.size())).value();
}

// The statement's parts as MergeInto takes them.
MergeSpec Spec(const std::string& sql) {
  auto parsed = expr::ParseDml(sql);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  const auto& merge = std::get<expr::MergeStatement>(*parsed);
  MergeSpec spec;
  spec.target_alias = merge.target_alias;
  spec.source_alias = merge.source_alias;
  spec.on = merge.on;
  spec.clauses = merge.clauses;
  spec.merge_schema = merge.with_schema_evolution;
  return spec;
}

// Every test runs on the local disk and on S3 (moto on loopback).
class DmlTest : public ::testing::TestWithParam<sluice::testing::Store> {
 protected:
  // A table of ids [first, first + count) with v = id * 10 and op 'old', in one file per call.
  void Append(int64_t first, int64_t count, WriteOptions options = {}) {
    std::vector<Row> rows;
    for (int64_t id = first; id < first + count; ++id) rows.push_back({id, id * 10, "old"});
    auto written = WriteTable(fs_, table_, {Rows(rows)}, options);
    ASSERT_TRUE(written.ok()) << written.status().ToString();
  }

  // The table's rows as "id,v,op" (every column, in table order), sorted.
  std::vector<std::string> TableRows() { return testing::ScannedLines(Snapshot::Load(fs_, table_).value()); }

  Result<DmlResult> Merge(const std::string& sql, const std::vector<Row>& source) {
    return MergeInto(fs_, table_, {Rows(source)}, Spec(sql));
  }

  sluice::testing::StoreRoot dir_{GetParam()};
  std::string table_ = dir_.Join("table");
  std::shared_ptr<FileSystem> fs_ = dir_.file_system();
};

TEST_P(DmlTest, AnUpsertUpdatesMatchedRowsInsertsTheRestAndRewritesOnlyTouchedFiles) {
  for (int i = 0; i < 4; ++i) Append(i * 5, 5);  // four files: ids 0-4, 5-9, 10-14, 15-19
  auto result = Merge("MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *",
                      {{18, 1, "new"}, {19, 2, "new"}, {20, 3, "new"}});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->version, 4);
  EXPECT_EQ(result->num_source_rows, 3);
  EXPECT_EQ(result->num_rows_updated, 2);
  EXPECT_EQ(result->num_rows_inserted, 1);
  EXPECT_EQ(result->num_rows_deleted, 0);
  EXPECT_EQ(result->num_rows_copied, 3);   // 15, 16, 17 rewritten beside the updated rows
  EXPECT_EQ(result->num_files_removed, 1);  // only the file of ids 15-19
  EXPECT_EQ(result->num_files_total, 4);
  EXPECT_EQ(result->num_files_scanned, 1);  // statistics rule out the others
  std::vector<std::string> rows = TableRows();
  ASSERT_EQ(rows.size(), 21u);
  EXPECT_EQ(rows[0], "0,0,old");
  EXPECT_EQ(std::count(rows.begin(), rows.end(), "18,1,new"), 1);
  EXPECT_EQ(std::count(rows.begin(), rows.end(), "19,2,new"), 1);
  EXPECT_EQ(std::count(rows.begin(), rows.end(), "20,3,new"), 1);
  EXPECT_EQ(std::count(rows.begin(), rows.end(), "17,170,old"), 1);
  SnapshotPtr snapshot = Snapshot::Load(fs_, table_).value();
  EXPECT_EQ(snapshot->files().size(), 4u);  // three untouched + one rewritten (inserts in the same file)
}

// Source keys far apart (5 and 95) span every file's range, but only the files holding one of
// them are read, by statistics or by partition value.
TEST_P(DmlTest, OnlyFilesWhoseStatisticsHoldASourceKeyAreRead) {
  for (int i = 0; i < 10; ++i) Append(i * 10, 10);
  const std::string upsert = "MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *";
  auto result = Merge(upsert, {{5, 1, "x"}, {95, 1, "x"}, {1000, 1, "x"}});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->num_files_total, 10);
  EXPECT_EQ(result->num_files_scanned, 2);
  EXPECT_EQ(result->num_rows_updated, 2);
  EXPECT_EQ(result->num_rows_inserted, 1);
  // A key on the partition column of a partitioned table.
  std::vector<Row> rows;
  for (int64_t id = 0; id < 30; ++id) rows.push_back({id, id % 6, "p"});
  const std::string partitioned = dir_.Join("partitioned");
  ASSERT_TRUE(WriteTable(fs_, partitioned, {Rows(rows)}, {.partition_columns = {"v"}}).ok());
  auto by_partition = MergeInto(fs_, partitioned, {Rows({{std::nullopt, 4, "q"}})},
                                Spec("MERGE INTO t USING s ON t.v = s.v WHEN MATCHED THEN UPDATE SET op = s.op"));
  ASSERT_TRUE(by_partition.ok()) << by_partition.status().ToString();
  EXPECT_EQ(by_partition->num_files_total, 6);
  EXPECT_EQ(by_partition->num_files_scanned, 1);
  EXPECT_EQ(by_partition->num_rows_updated, 5);
}

TEST_P(DmlTest, ClausesApplyInOrderWithTheirConditions) {
  Append(0, 10);
  auto result = Merge(
      "MERGE INTO target AS t USING updates AS s ON t.id = s.id "
      "WHEN MATCHED AND s.op = 'delete' THEN DELETE "
      "WHEN MATCHED AND s.v > t.v THEN UPDATE SET v = s.v, op = 'raised' "
      "WHEN MATCHED THEN UPDATE SET t.op = concat('kept ', s.op) "
      "WHEN NOT MATCHED AND s.op <> 'delete' THEN INSERT (id, v) VALUES (s.id, s.v * 2) "
      "WHEN NOT MATCHED BY SOURCE AND t.id >= 8 THEN DELETE "
      "WHEN NOT MATCHED BY SOURCE THEN UPDATE SET op = 'untouched'",
      {{1, 0, "delete"}, {2, 100, "up"}, {3, 5, "down"}, {50, 7, "new"}, {51, 7, "delete"}, {4, std::nullopt, "x"}});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(TableRows(), (std::vector<std::string>{"0,0,untouched", "2,100,raised", "3,30,kept down", "4,40,kept x",
                                                   "5,50,untouched", "50,14,null", "6,60,untouched", "7,70,untouched"}));
  EXPECT_EQ(result->num_rows_deleted, 3);   // 1 matched, 8 and 9 not matched by source
  EXPECT_EQ(result->num_rows_updated, 7);   // 2, 3, 4 and 0, 5, 6, 7
  EXPECT_EQ(result->num_rows_inserted, 1);  // 51 is not inserted: its condition fails
}

TEST_P(DmlTest, ATargetRowMatchedBySeveralSourceRowsIsRefusedUnlessOnlyDeleted) {
  Append(0, 5);
  const std::vector<Row> twice = {{2, 1, "a"}, {2, 2, "b"}};
  auto update = Merge("MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v", twice);
  ASSERT_FALSE(update.ok());
  EXPECT_EQ(update.status().error_class(), errors::kDeltaMultipleSourceRowMatchingTargetRowInMerge);
  // The same with an insert clause: every pair counts, even one no matched condition accepts.
  auto conditional = Merge(
      "MERGE INTO t USING s ON t.id = s.id WHEN MATCHED AND s.op = 'a' THEN UPDATE SET v = s.v "
      "WHEN NOT MATCHED THEN INSERT *",
      twice);
  EXPECT_EQ(conditional.status().error_class(), errors::kDeltaMultipleSourceRowMatchingTargetRowInMerge);
  EXPECT_EQ(Snapshot::Load(fs_, table_).value()->version(), 0);  // nothing was committed
  // With matched clauses only, pairs no condition accepts do not count.
  auto only_matched = Merge("MERGE INTO t USING s ON t.id = s.id WHEN MATCHED AND s.op = 'a' THEN UPDATE SET v = s.v",
                            twice);
  ASSERT_TRUE(only_matched.ok()) << only_matched.status().ToString();
  // An unconditional DELETE is not ambiguous.
  auto deleted = Merge("MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE", twice);
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  EXPECT_EQ(deleted->num_rows_deleted, 1);
  EXPECT_EQ(TableRows(), (std::vector<std::string>{"0,0,old", "1,10,old", "3,30,old", "4,40,old"}));
}

TEST_P(DmlTest, NullKeysNeverMatchAndConditionsWithoutEqualitiesStillJoin) {
  Append(0, 4);
  auto nulls = Merge("MERGE INTO t USING s ON t.v = s.v WHEN MATCHED THEN DELETE WHEN NOT MATCHED THEN INSERT *",
                     {{std::nullopt, std::nullopt, "null key"}, {7, 10, "x"}});
  ASSERT_TRUE(nulls.ok()) << nulls.status().ToString();
  EXPECT_EQ(TableRows(), (std::vector<std::string>{"0,0,old", "2,20,old", "3,30,old", "null,null,null key"}));
  // No equality: every pair is evaluated (a band join).
  auto band = Merge("MERGE INTO t USING s ON t.id > s.id AND t.id <= s.v WHEN MATCHED THEN UPDATE SET op = s.op",
                    {{0, 2, "band"}});
  ASSERT_TRUE(band.ok()) << band.status().ToString();
  EXPECT_EQ(TableRows(), (std::vector<std::string>{"0,0,old", "2,20,band", "3,30,old", "null,null,null key"}));
}

TEST_P(DmlTest, UnqualifiedNamesResolveWhenOnlyOneTableHasThem) {
  Append(0, 3);
  BatchPtr source = Rows({{1, 99, "s"}}, "struct<key:bigint,amount:bigint,op:string>");
  MergeSpec spec = Spec("MERGE INTO t USING s ON id = key WHEN MATCHED THEN UPDATE SET v = amount, op = s.op");
  auto result = MergeInto(fs_, table_, {source}, spec);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(TableRows(), (std::vector<std::string>{"0,0,old", "1,99,s", "2,20,old"}));
  // `op` is in both tables: unqualified it names neither.
  auto ambiguous = MergeInto(fs_, table_, {source}, Spec("MERGE INTO t USING s ON id = key WHEN MATCHED THEN UPDATE SET v = length(op)"));
  EXPECT_EQ(ambiguous.status().error_class(), errors::kUnresolvedColumn);
}

TEST_P(DmlTest, WrongStatementsAreRefusedBeforeAnythingIsWritten) {
  Append(0, 3);
  struct Case {
    std::string sql;
    std::string_view error;
  };
  const Case cases[] = {
      {"MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET nope = 1", errors::kUnresolvedColumn},
      {"MERGE INTO t USING s ON t.id = s.nope WHEN MATCHED THEN DELETE", errors::kUnresolvedColumn},
      {"MERGE INTO t USING s ON t.id + s.id WHEN MATCHED THEN DELETE", errors::kDatatypeMismatch},
      {"MERGE INTO t USING s ON t.id = s.id WHEN NOT MATCHED THEN INSERT (id) VALUES (t.id)", errors::kUnresolvedColumn},
      {"MERGE INTO t USING s ON t.id = s.id WHEN NOT MATCHED BY SOURCE AND s.v > 0 THEN DELETE", errors::kUnresolvedColumn},
      {"MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = 1, t.v = 2", errors::kInvalidArgument},
      {"MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = 'x'", errors::kCastInvalidInput},
  };
  for (const Case& c : cases) {
    auto result = Merge(c.sql, {{1, 1, "a"}});
    ASSERT_FALSE(result.ok()) << c.sql;
    EXPECT_EQ(result.status().error_class(), c.error) << c.sql << ": " << result.status().ToString();
  }
  // INSERT * needs every table column in the source, unless the schema evolves.
  BatchPtr narrow = RecordBatch::Make(ParseTypeString("struct<id:bigint>").value(), {Rows({{5, 0, ""}})->column(0)}, 1).value();
  auto star = MergeInto(fs_, table_, {narrow}, Spec("MERGE INTO t USING s ON t.id = s.id WHEN NOT MATCHED THEN INSERT *"));
  EXPECT_EQ(star.status().error_class(), errors::kUnresolvedColumn) << star.status().ToString();
  EXPECT_EQ(Snapshot::Load(fs_, table_).value()->version(), 0);
  auto missing = MergeInto(fs_, dir_.Join("nothing"), {narrow}, Spec("MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE"));
  EXPECT_EQ(missing.status().error_class(), errors::kDeltaTableNotFound);
}

TEST_P(DmlTest, SchemaEvolutionAddsTheSourcesNewColumns) {
  Append(0, 2);
  TypePtr wide = ParseTypeString("struct<id:bigint,v:bigint,op:string,note:string>").value();
  BatchPtr base = Rows({{1, 11, "upd"}, {5, 55, "ins"}});
  BinaryBuilder notes(DataType::String());
  notes.Append("n1");
  notes.Append("n5");
  BatchPtr source = RecordBatch::Make(wide, {base->column(0), base->column(1), base->column(2), notes.Finish()}, 2).value();
  // Without evolution the source's extra column is not written.
  auto kept = MergeInto(fs_, table_, {Slice(source, 0, 1)},
                        Spec("MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"));
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  EXPECT_EQ(TableRows(), (std::vector<std::string>{"0,0,old", "1,11,upd"}));
  auto evolved = MergeInto(fs_, table_, {source},
                           Spec("MERGE WITH SCHEMA EVOLUTION INTO t USING s ON t.id = s.id "
                                "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"));
  ASSERT_TRUE(evolved.ok()) << evolved.status().ToString();
  EXPECT_EQ(TableRows(), (std::vector<std::string>{"0,0,old,null", "1,11,upd,n1", "5,55,ins,n5"}));
}

TEST_P(DmlTest, UpdateAndDeleteChangeTheRowsWhereHoldsAndPruneByPartition) {
  std::vector<Row> rows;
  for (int64_t id = 0; id < 12; ++id) rows.push_back({id, id % 3, id % 2 ? "odd" : "even"});
  ASSERT_TRUE(WriteTable(fs_, table_, {Rows(rows)}, {.partition_columns = {"op"}}).ok());
  auto update = UpdateTable(fs_, table_,
                            {.target_alias = "t",
                             .assignments = {{{"t", "v"}, expr::Expression::Parse("t.v + 100").value()}},
                             .where = expr::Expression::Parse("op = 'odd' AND t.v = 1").value()});
  ASSERT_TRUE(update.ok()) << update.status().ToString();
  EXPECT_EQ(update->num_rows_updated, 2);  // 1 and 7
  EXPECT_EQ(update->num_files_removed, 1);  // the even partition is never read
  EXPECT_EQ(update->num_rows_copied, 4);
  auto del = DeleteFromTable(fs_, table_, {.where = expr::Expression::Parse("id >= 10 OR v > 100").value()});
  ASSERT_TRUE(del.ok()) << del.status().ToString();
  EXPECT_EQ(del->num_rows_deleted, 4);  // 10, 11, 1, 7
  std::vector<std::string> left = TableRows();
  EXPECT_EQ(left, (std::vector<std::string>{"0,0,even", "2,2,even", "3,0,odd", "4,1,even", "5,2,odd", "6,0,even",
                                            "8,2,even", "9,0,odd"}));
  auto all = DeleteFromTable(fs_, table_, {});
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(all->num_rows_deleted, 8);
  EXPECT_TRUE(TableRows().empty());
  SnapshotPtr snapshot = Snapshot::Load(fs_, table_).value();
  EXPECT_EQ(snapshot->files().size(), 0u);
}

TEST_P(DmlTest, AReplayedMergeIsAppliedOnce) {
  Append(0, 3);
  MergeSpec spec = Spec("MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = t.v + s.v WHEN NOT MATCHED THEN INSERT *");
  spec.transactions = {SetTransaction{"flow-1", 7, std::nullopt}};
  auto first = MergeInto(fs_, table_, {Rows({{1, 1, "x"}, {9, 9, "x"}})}, spec);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto replay = MergeInto(fs_, table_, {Rows({{1, 1, "x"}, {9, 9, "x"}})}, spec);
  ASSERT_TRUE(replay.ok()) << replay.status().ToString();
  EXPECT_TRUE(replay->skipped);
  EXPECT_EQ(replay->version, first->version);
  EXPECT_EQ(TableRows(), (std::vector<std::string>{"0,0,old", "1,11,old", "2,20,old", "9,9,x"}));
}

TEST_P(DmlTest, TheCommitRecordsDeltasOperationMetrics) {
  Append(0, 3);
  auto result = Merge("MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE WHEN NOT MATCHED THEN INSERT *",
                      {{1, 0, "d"}, {7, 0, "i"}});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  auto commit = fs_->ReadFile(table_ + "/_delta_log/00000000000000000001.json");
  ASSERT_TRUE(commit.ok());
  for (std::string_view expected : {"\"operation\":\"MERGE\"", "\"numTargetRowsDeleted\":\"1\"",
                                    "\"numTargetRowsInserted\":\"1\"", "\"numTargetRowsCopied\":\"2\"",
                                    "\"isolationLevel\":\"WriteSerializable\"", "\"isBlindAppend\":false"}) {
    EXPECT_NE(commit->find(expected), std::string::npos) << expected << " in " << *commit;
  }
}

// The table's row count from its files' statistics follows deletes, with deletion vectors (the
// files keep their numRecords; the vectors' cardinality comes off) and without (files rewritten).
TEST_P(DmlTest, TheRowCountFromStatisticsFollowsDeletesWithAndWithoutDeletionVectors) {
  for (bool deletion_vectors : {false, true}) {
    SCOPED_TRACE(deletion_vectors);
    table_ = dir_.Join(deletion_vectors ? "with_dv" : "without_dv");
    StringMap properties;
    if (deletion_vectors) properties["delta.enableDeletionVectors"] = "true";
    Append(0, 10, {.table_properties = properties});
    Append(10, 10);
    EXPECT_EQ(Snapshot::Load(fs_, table_).value()->num_records(), 20);
    auto del = DeleteFromTable(fs_, table_, {.where = expr::Expression::Parse("id % 4 = 0").value()});
    ASSERT_TRUE(del.ok()) << del.status().ToString();
    SnapshotPtr snapshot = Snapshot::Load(fs_, table_).value();
    EXPECT_EQ(snapshot->num_records(), 15);
    bool any_vector = false;
    for (const AddFile& file : snapshot->files()) any_vector = any_vector || file.deletion_vector.has_value();
    EXPECT_EQ(any_vector, deletion_vectors);
  }
}

// On a table that tracks row ids, a row keeps its id through every rewrite (UPDATE, MERGE,
// copy-on-write DELETE, OPTIMIZE) and its commit version until it changes; an inserted row gets
// an id no other row has. With and without deletion vectors.
TEST_P(DmlTest, RowsKeepTheirIdsThroughUpdatesMergesDeletesAndCompaction) {
  for (bool deletion_vectors : {false, true}) {
    SCOPED_TRACE(deletion_vectors);
    table_ = dir_.Join(deletion_vectors ? "with_dv" : "without_dv");
    StringMap properties = {{"delta.enableRowTracking", "true"}};
    if (deletion_vectors) properties["delta.enableDeletionVectors"] = "true";
    Append(0, 5, {.table_properties = properties});  // version 0: ids 0-4, row ids 0-4
    Append(5, 5);                                    // version 1: ids 5-9, row ids 5-9
    // "id,row id,commit version" of every row, sorted by id.
    auto tracked = [&] {
      std::vector<std::string> lines = testing::ScannedLines(Snapshot::Load(fs_, table_).value(),
                                                             {.columns = {"id"}, .row_tracking = true});
      std::sort(lines.begin(), lines.end(), [](const std::string& a, const std::string& b) {
        return std::stoll(a) < std::stoll(b);
      });
      return lines;
    };
    EXPECT_EQ(tracked(), (std::vector<std::string>{"0,0,0", "1,1,0", "2,2,0", "3,3,0", "4,4,0", "5,5,1", "6,6,1",
                                                   "7,7,1", "8,8,1", "9,9,1"}));

    auto updated = UpdateTable(fs_, table_, {.assignments = {{{"v"}, expr::Expression::Parse("-1").value()}},
                                             .where = expr::Expression::Parse("id IN (2, 7)").value()});
    ASSERT_TRUE(updated.ok()) << updated.status().ToString();  // version 2
    auto merged = Merge("MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *",
                        {{3, 33, "new"}, {100, 1000, "new"}});  // version 3
    ASSERT_TRUE(merged.ok()) << merged.status().ToString();
    std::vector<std::string> after_merge = tracked();
    ASSERT_EQ(after_merge.size(), 11u);
    EXPECT_EQ(std::vector<std::string>(after_merge.begin(), after_merge.end() - 1),
              (std::vector<std::string>{"0,0,0", "1,1,0", "2,2,2", "3,3,3", "4,4,0", "5,5,1", "6,6,1", "7,7,2", "8,8,1",
                                        "9,9,1"}));
    // The inserted row's id is above every id the table gave before, its version the MERGE's.
    const std::string inserted = after_merge.back();
    ASSERT_TRUE(inserted.starts_with("100,")) << inserted;
    EXPECT_GT(std::stoll(inserted.substr(4)), 9) << inserted;
    EXPECT_TRUE(inserted.ends_with(",3")) << inserted;

    ASSERT_TRUE(DeleteFromTable(fs_, table_, {.where = expr::Expression::Parse("id = 4").value()}).ok());
    auto optimized = Optimize(fs_, table_, {});
    ASSERT_TRUE(optimized.ok()) << optimized.status().ToString();
    EXPECT_EQ(Snapshot::Load(fs_, table_).value()->files().size(), 1u);
    after_merge.erase(after_merge.begin() + 4);  // id 4
    EXPECT_EQ(tracked(), after_merge);
    // The stored ids stay out of the table's rows.
    std::vector<std::string> rows = TableRows();
    ASSERT_EQ(rows.size(), 10u);
    EXPECT_EQ(rows.front(), "0,0,old");
    EXPECT_EQ(std::count(rows.begin(), rows.end(), "3,33,new"), 1);
    EXPECT_EQ(std::count(rows.begin(), rows.end(), "7,-1,old"), 1);
  }
}

// Row ids are only asked of tables that track them.
TEST_P(DmlTest, RowIdsOfATableWithoutRowTrackingAreRefused) {
  Append(0, 3);
  auto scan = TableScan::Open(Snapshot::Load(fs_, table_).value(), {.row_tracking = true});
  EXPECT_EQ(scan.status().error_class(), errors::kDeltaProtocolUnsupported) << scan.status().ToString();
}

INSTANTIATE_TEST_SUITE_P(Stores, DmlTest, ::testing::ValuesIn(sluice::testing::kAllStores),
                         sluice::testing::StoreName);

}  // namespace
}  // namespace sluice::delta
