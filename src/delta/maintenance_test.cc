#include "sluice/delta/maintenance.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <simdjson.h>

#include "sluice/core/builder.h"
#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "sluice/delta/dml.h"
#include "sluice/delta/log.h"
#include "sluice/delta/scan.h"
#include "sluice/delta/writer.h"
#include "testing/store_root.h"

namespace sluice::delta {
namespace {

constexpr int64_t kWeekMs = 7LL * 24 * 3600 * 1000;

// Rows (id bigint, p string) with ids [first, first + count), p alternating 'a' / 'b'.
BatchPtr Rows(int64_t first, int64_t count) {
  Int64Builder ids(DataType::Long());
  BinaryBuilder ps(DataType::String());
  for (int64_t id = first; id < first + count; ++id) {
    ids.Append(id);
    ps.Append(id % 2 == 0 ? "a" : "b");
  }
  return RecordBatch::Make(ParseTypeString("struct<id:bigint,p:string>").value(), {ids.Finish(), ps.Finish()}, count)
      .value();
}

// OPTIMIZE, VACUUM and RESTORE on the local disk and on the object stores (testing/store_root.h).
class MaintenanceTest : public ::testing::TestWithParam<sluice::testing::Store> {
 protected:
  void Append(int64_t first, int64_t count, WriteOptions options = {}) {
    auto written = WriteTable(fs_, table_, {Rows(first, count)}, options);
    ASSERT_TRUE(written.ok()) << written.status().ToString();
  }
  // Ten appends of 5 rows, partitioned by p when asked: 10 or 20 small files.
  void SmallFiles(bool partitioned, StringMap properties = {}) {
    WriteOptions options;
    if (partitioned) options.partition_columns = {"p"};
    options.table_properties = std::move(properties);
    for (int i = 0; i < 10; ++i) Append(i * 5, 5, options);
  }

  // The rows of `version` (latest: -1) as "id,p", sorted.
  std::vector<std::string> TableRows(int64_t version = -1) {
    SnapshotOptions options;
    if (version >= 0) options.version = version;
    std::vector<std::string> rows;
    auto snapshot = Snapshot::Load(fs_, table_, options);
    EXPECT_TRUE(snapshot.ok()) << snapshot.status().ToString();
    if (!snapshot.ok()) return rows;
    auto scan = TableScan::Open(*snapshot);
    while (scan.ok()) {
      auto next = (*scan)->Next();
      EXPECT_TRUE(next.ok()) << next.status().ToString();
      if (!next.ok() || *next == nullptr) break;
      for (int64_t row = 0; row < (*next)->num_rows(); ++row) {
        rows.push_back(FormatValue(*(*next)->column(0), row) + "," + FormatValue(*(*next)->column(1), row));
      }
    }
    std::sort(rows.begin(), rows.end());
    return rows;
  }
  std::vector<AddFile> Files() { return Snapshot::Load(fs_, table_).value()->files(); }
  std::optional<CommitInfo> Info(int64_t version) {
    for (Action& action : ReadCommit(*fs_, table_, version).value()) {
      if (auto* info = std::get_if<CommitInfo>(&action)) return *info;
    }
    return std::nullopt;
  }
  // Every file of the table but its log, by path, sorted.
  std::vector<std::string> DataFilesOnDisk() {
    std::vector<std::string> files;
    std::vector<std::string> folders{table_};
    while (!folders.empty()) {
      const std::string folder = folders.back();
      folders.pop_back();
      for (const FileInfo& entry : fs_->List(folder).value()) {
        if (entry.is_directory) {
          if (!entry.path.ends_with("/_delta_log")) folders.push_back(entry.path);
        } else {
          files.push_back(entry.path);
        }
      }
    }
    std::sort(files.begin(), files.end());
    return files;
  }

  sluice::testing::StoreRoot dir_{GetParam()};
  std::string table_ = dir_.Join("table");
  std::shared_ptr<FileSystem> fs_ = dir_.file_system();
};

TEST_P(MaintenanceTest, OptimizeCompactsEachPartitionsSmallFilesWithoutChangingARow) {
  SmallFiles(/*partitioned=*/true);
  const std::vector<std::string> before = TableRows();
  ASSERT_EQ(Files().size(), 20u);
  auto result = Optimize(fs_, table_, {});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_FALSE(result->skipped);
  EXPECT_EQ(result->version, 10);
  EXPECT_EQ(result->num_files_removed, 20);
  EXPECT_EQ(result->num_files_added, 2);
  EXPECT_EQ(result->num_partitions_optimized, 2);
  EXPECT_EQ(TableRows(), before);
  std::vector<AddFile> files = Files();
  ASSERT_EQ(files.size(), 2u);
  EXPECT_NE(files[0].partition_values, files[1].partition_values);
  // No row changed: every action says so, and the commit is OPTIMIZE with Delta's metrics.
  for (const Action& action : ReadCommit(*fs_, table_, 10).value()) {
    if (auto* add = std::get_if<AddFile>(&action)) {
      EXPECT_FALSE(add->data_change);
    }
    if (auto* remove = std::get_if<RemoveFile>(&action)) {
      EXPECT_FALSE(remove->data_change);
    }
  }
  std::optional<CommitInfo> info = Info(10);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->operation, "OPTIMIZE");
  EXPECT_EQ(info->operation_metrics->at("numRemovedFiles"), "20");
  EXPECT_EQ(info->operation_metrics->at("numAddedFiles"), "2");
  // Nothing left to compact: no commit.
  auto again = Optimize(fs_, table_, {});
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->skipped);
  EXPECT_EQ(again->version, 10);
}

TEST_P(MaintenanceTest, OptimizeTakesOnlyTheChosenPartitionsAndFilesBelowTheTarget) {
  SmallFiles(/*partitioned=*/true);
  OptimizeSpec spec;
  spec.where = expr::Expression::Parse("p = 'a'").value();
  auto result = Optimize(fs_, table_, spec);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->num_files_removed, 10);
  EXPECT_EQ(Files().size(), 11u);  // a: one file; b: its ten
  EXPECT_EQ(Info(10)->operation_parameters.at("predicate"), "[\"(p = 'a')\"]");

  spec.where = expr::Expression::Parse("id > 3 AND p = 'b'").value();
  auto wrong = Optimize(fs_, table_, spec);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().error_class(), errors::kDeltaNonPartitionColumnReference);
  EXPECT_NE(wrong.status().message().find("`id`"), std::string_view::npos) << wrong.status().ToString();

  // Files at or above the target are left alone; bins stop at the target.
  OptimizeSpec tiny;
  tiny.target_file_size = 1;
  auto skipped = Optimize(fs_, table_, tiny);
  ASSERT_TRUE(skipped.ok());
  EXPECT_TRUE(skipped->skipped);
  OptimizeSpec pairs;
  pairs.target_file_size = Files().back().size * 2;  // about two of b's files a bin
  auto paired = Optimize(fs_, table_, pairs);
  ASSERT_TRUE(paired.ok()) << paired.status().ToString();
  EXPECT_GE(paired->num_files_added, 4);
  EXPECT_LE(paired->num_files_added, 6);
  EXPECT_EQ(TableRows().size(), 50u);
}

TEST_P(MaintenanceTest, OptimizeDropsRowsDeletionVectorsMarked) {
  SmallFiles(/*partitioned=*/false, {{"delta.enableDeletionVectors", "true"}});
  DeleteSpec remove;
  remove.where = expr::Expression::Parse("id % 5 = 0").value();
  auto deleted = DeleteFromTable(fs_, table_, remove);
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  ASSERT_EQ(deleted->num_deletion_vectors_added, 10);
  const std::vector<std::string> before = TableRows();
  ASSERT_EQ(before.size(), 40u);
  auto result = Optimize(fs_, table_, {});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->num_deletion_vectors_removed, 10);
  EXPECT_EQ(TableRows(), before);
  std::vector<AddFile> files = Files();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_FALSE(files[0].deletion_vector.has_value());
  EXPECT_NE(files[0].stats->find("\"numRecords\":40"), std::string::npos) << *files[0].stats;
}

// Points (x, y) spread over [0, 1000)^2, 40 per file, in 16 files each spanning the whole square.
BatchPtr Points(uint64_t seed, int64_t count) {
  Int64Builder xs(DataType::Long());
  Int64Builder ys(DataType::Long());
  for (int64_t i = 0; i < count; ++i) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    xs.Append(static_cast<int64_t>((seed >> 33) % 1000));
    ys.Append(static_cast<int64_t>((seed >> 13) % 1000));
  }
  return RecordBatch::Make(ParseTypeString("struct<x:bigint,y:bigint>").value(), {xs.Finish(), ys.Finish()}, count)
      .value();
}

// How many files' statistics may hold a point of [lo, hi)^2: what a filter on both columns reads.
int FilesHolding(const std::vector<AddFile>& files, int64_t lo, int64_t hi) {
  int n = 0;
  simdjson::dom::parser parser;
  for (const AddFile& file : files) {
    simdjson::dom::element stats = parser.parse(*file.stats).value();
    int64_t min_x = stats["minValues"]["x"].get_int64().value();
    int64_t max_x = stats["maxValues"]["x"].get_int64().value();
    int64_t min_y = stats["minValues"]["y"].get_int64().value();
    int64_t max_y = stats["maxValues"]["y"].get_int64().value();
    n += min_x < hi && max_x >= lo && min_y < hi && max_y >= lo;
  }
  return n;
}

TEST_P(MaintenanceTest, ZOrderingLetsStatisticsSkipFilesForFiltersOnEveryColumn) {
  std::vector<std::string> before_rows;
  for (uint64_t file = 0; file < 16; ++file) {
    ASSERT_TRUE(WriteTable(fs_, table_, {Points(file + 1, 40)}).ok());
  }
  auto rows = [&] {
    std::vector<std::string> out;
    auto scan = TableScan::Open(Snapshot::Load(fs_, table_).value()).value();
    while (BatchPtr batch = scan->Next().value()) {
      for (int64_t r = 0; r < batch->num_rows(); ++r) {
        out.push_back(FormatValue(*batch->column(0), r) + "," + FormatValue(*batch->column(1), r));
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  before_rows = rows();
  EXPECT_EQ(FilesHolding(Files(), 0, 100), 16);
  OptimizeSpec spec;
  spec.zorder_by = {"x", "y"};
  spec.target_file_size = Files()[0].size;  // about 16 files again
  auto result = Optimize(fs_, table_, spec);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(rows(), before_rows);
  EXPECT_GE(Files().size(), 8u);
  EXPECT_LE(FilesHolding(Files(), 0, 100), 4) << "a corner of a hundredth of the square";
  EXPECT_EQ(Info(16)->operation_parameters.at("zOrderBy"), "[\"x\",\"y\"]");

  for (const auto& [columns, error_class] : std::vector<std::pair<std::vector<std::string>, std::string_view>>{
           {{"nosuch"}, errors::kUnresolvedColumn}}) {
    OptimizeSpec wrong;
    wrong.zorder_by = columns;
    EXPECT_EQ(Optimize(fs_, table_, wrong).status().error_class(), error_class);
  }
}

TEST_P(MaintenanceTest, ZOrderingRefusesPartitionColumns) {
  SmallFiles(/*partitioned=*/true);
  OptimizeSpec spec;
  spec.zorder_by = {"p"};
  auto refused = Optimize(fs_, table_, spec);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().error_class(), errors::kDeltaZorderingOnPartitionColumn);
  EXPECT_NE(refused.status().message().find("partition column"), std::string_view::npos);
  spec.zorder_by = {"id"};
  auto ordered = Optimize(fs_, table_, spec);
  ASSERT_TRUE(ordered.ok()) << ordered.status().ToString();
  EXPECT_EQ(TableRows().size(), 50u);
}

TEST_P(MaintenanceTest, AutoCompactionKeepsATableOfManySmallCommitsCompact) {
  WriteOptions options;
  options.partition_columns = {"p"};
  options.table_properties = {{"delta.autoOptimize.autoCompact", "true"}};
  for (int i = 0; i < 60; ++i) Append(i * 2, 2, options);  // one small file per partition a commit
  EXPECT_EQ(TableRows().size(), 120u);
  // At the 50th small file of a partition the table was compacted, in a commit of its own.
  std::vector<int64_t> optimized;
  for (int64_t version : ListLog(*fs_, table_).value().commit_versions) {
    if (Info(version)->operation == "OPTIMIZE") optimized.push_back(version);
  }
  EXPECT_EQ(optimized, std::vector<int64_t>{50});
  EXPECT_EQ(Files().size(), 2u + 2u * 10u);  // one compacted file per partition, ten small since
  // Without the property nothing happens by itself.
  const std::string plain = dir_.Join("plain");
  for (int i = 0; i < 55; ++i) ASSERT_TRUE(WriteTable(fs_, plain, {Rows(i, 1)}).ok());
  EXPECT_EQ(Snapshot::Load(fs_, plain).value()->files().size(), 55u);
}

TEST_P(MaintenanceTest, VacuumDeletesOnlyWhatNoVersionWithinTheRetentionNeeds) {
  SmallFiles(/*partitioned=*/true);
  ASSERT_TRUE(Optimize(fs_, table_, {}).ok());  // the 20 small files become tombstones
  const std::string orphan = table_ + "/p=a/part-orphan.parquet";  // a failed write's leftover
  ASSERT_TRUE(fs_->AtomicWrite(orphan, "x").ok());
  const std::string own = table_ + "/_sluice_transactions/app";
  ASSERT_TRUE(fs_->AtomicWrite(own, "1").ok());
  ASSERT_EQ(DataFilesOnDisk().size(), 24u);

  // Within the default week nothing goes; below it, only when forced.
  auto now = Vacuum(fs_, table_, {});
  ASSERT_TRUE(now.ok()) << now.status().ToString();
  EXPECT_TRUE(now->files.empty());
  VacuumSpec short_retention;
  short_retention.retention_hours = 1;
  auto refused = Vacuum(fs_, table_, short_retention);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().error_class(), errors::kDeltaVacuumRetentionPeriodTooShort);

  // Eight days later: a dry run lists the tombstones and the orphan, deletes nothing.
  VacuumSpec later;
  later.now_ms = Info(10)->timestamp.value() + kWeekMs + 24 * 3600 * 1000;
  later.dry_run = true;
  auto listed = Vacuum(fs_, table_, later);
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  EXPECT_EQ(listed->files.size(), 21u);
  EXPECT_TRUE(std::binary_search(listed->files.begin(), listed->files.end(), orphan));
  EXPECT_EQ(DataFilesOnDisk().size(), 24u);
  const int64_t versions_before = ListLog(*fs_, table_).value().commit_versions.size();

  later.dry_run = false;
  auto vacuumed = Vacuum(fs_, table_, later);
  ASSERT_TRUE(vacuumed.ok()) << vacuumed.status().ToString();
  EXPECT_EQ(vacuumed->files, listed->files);
  std::vector<std::string> left = DataFilesOnDisk();
  EXPECT_EQ(left.size(), 3u);  // the two live files and sluice's own file
  EXPECT_TRUE(std::binary_search(left.begin(), left.end(), own));
  for (const AddFile& file : Files()) {
    EXPECT_TRUE(fs_->Exists(table_ + "/" + file.path).value()) << file.path;
  }
  EXPECT_EQ(TableRows().size(), 50u);
  // VACUUM START and VACUUM END are recorded; an older version can no longer be read.
  EXPECT_EQ(static_cast<int64_t>(ListLog(*fs_, table_).value().commit_versions.size()), versions_before + 2);
  EXPECT_EQ(Info(11)->operation, "VACUUM START");  // the first VACUUM, which found nothing to delete
  EXPECT_EQ(Info(11)->operation_metrics->at("numFilesToDelete"), "0");
  EXPECT_EQ(Info(13)->operation, "VACUUM START");
  EXPECT_EQ(Info(13)->operation_metrics->at("numFilesToDelete"), "21");
  EXPECT_EQ(Info(14)->operation, "VACUUM END");
  EXPECT_EQ(Info(14)->operation_metrics->at("numDeletedFiles"), "21");
  auto old = TableScan::Open(Snapshot::Load(fs_, table_, SnapshotOptions{.version = 3}).value());
  ASSERT_TRUE(old.ok());
  EXPECT_FALSE((*old)->Next().ok());
}

TEST_P(MaintenanceTest, VacuumKeepsTheDeletionVectorsOfLiveFilesAndDeletesTheOthers) {
  SmallFiles(/*partitioned=*/false, {{"delta.enableDeletionVectors", "true"}});
  DeleteSpec remove;
  remove.where = expr::Expression::Parse("id < 3").value();
  ASSERT_TRUE(DeleteFromTable(fs_, table_, remove).ok());
  auto dv_files = [&] {
    int n = 0;
    for (const std::string& file : DataFilesOnDisk()) n += file.find("deletion_vector_") != std::string::npos;
    return n;
  };
  ASSERT_EQ(dv_files(), 1);
  VacuumSpec later;
  later.now_ms = Info(10)->timestamp.value() + 2 * kWeekMs;
  ASSERT_TRUE(Vacuum(fs_, table_, later).ok());
  EXPECT_EQ(dv_files(), 1);  // its data file is live
  EXPECT_EQ(TableRows().size(), 47u);
  ASSERT_TRUE(Optimize(fs_, table_, {}).ok());
  later.now_ms = *later.now_ms + 2 * kWeekMs;
  auto vacuumed = Vacuum(fs_, table_, later);
  ASSERT_TRUE(vacuumed.ok()) << vacuumed.status().ToString();
  EXPECT_EQ(dv_files(), 0);
  EXPECT_EQ(TableRows().size(), 47u);
}

TEST_P(MaintenanceTest, RestoreBringsBackAnEarlierVersionsRows) {
  Append(0, 5);   // v0
  Append(5, 5);   // v1
  DeleteSpec remove;
  remove.where = expr::Expression::Parse("id % 2 = 0").value();
  ASSERT_TRUE(DeleteFromTable(fs_, table_, remove).ok());  // v2
  WriteOptions overwrite;
  overwrite.mode = WriteMode::kOverwrite;
  Append(100, 2, overwrite);  // v3
  const std::vector<std::string> at_one = TableRows(1);
  ASSERT_EQ(at_one.size(), 10u);

  auto restored = Restore(fs_, table_, {.version = 1});
  ASSERT_TRUE(restored.ok()) << restored.status().ToString();
  EXPECT_EQ(restored->version, 4);
  EXPECT_EQ(TableRows(), at_one);
  EXPECT_EQ(restored->num_files_restored, 2);
  EXPECT_EQ(restored->num_files_removed, 1);
  EXPECT_EQ(restored->num_files_after_restore, 2);
  EXPECT_EQ(Info(4)->operation, "RESTORE");
  EXPECT_EQ(Info(4)->operation_parameters.at("version"), "1");
  // Restoring the latest version again changes no file.
  auto same = Restore(fs_, table_, {.version = 4});
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->num_files_restored + same->num_files_removed, 0);
  EXPECT_EQ(TableRows(), at_one);

  for (int64_t version : {-1, 99}) {
    auto wrong = Restore(fs_, table_, {.version = version});
    ASSERT_FALSE(wrong.ok()) << version;
    EXPECT_EQ(wrong.status().error_class(), errors::kDeltaCannotRestoreTableVersion);
  }
  // Once vacuumed, the files of version 2 (the deleted rows' rewrite) are gone for good.
  VacuumSpec later;
  later.now_ms = Info(5)->timestamp.value() + 2 * kWeekMs;
  ASSERT_TRUE(Vacuum(fs_, table_, later).ok());
  auto gone = Restore(fs_, table_, {.version = 2});
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.status().error_class(), errors::kDeltaCannotRestoreTableVersion);
  EXPECT_NE(gone.status().message().find("gone"), std::string_view::npos) << gone.status().ToString();
}

// RESTORE TO TIMESTAMP takes the latest version committed at or before the time (commit times as
// time travel has them); a time before the first commit or after the last is refused by class,
// and so are text that is not a timestamp and a target that is both or neither.
TEST_P(MaintenanceTest, RestoreToATimestampTakesTheVersionCommittedAtOrBeforeIt) {
  Append(0, 5);  // v0
  Append(5, 5);  // v1
  Append(10, 5);  // v2
  const std::vector<int64_t> times = MonotonicCommitTimes(ListLog(*fs_, table_).value().commit_times_ms);
  ASSERT_EQ(times.size(), 3u);
  const std::vector<std::string> at_one = TableRows(1);
  // Exactly the time of version 1, in UTC and with a zone offset written out.
  const std::string utc = TimestampText(times[1] * 1000);
  for (const std::string& timestamp : {utc, utc.substr(0, utc.size() - 1) + "+00:00"}) {
    SCOPED_TRACE(timestamp);
    auto restored = Restore(fs_, table_, {.timestamp = timestamp});
    ASSERT_TRUE(restored.ok()) << restored.status().ToString();
    EXPECT_EQ(restored->restored_version, 1);
    EXPECT_EQ(TableRows(), at_one);
    EXPECT_EQ(Info(restored->version)->operation_parameters.at("timestamp"), timestamp);
    EXPECT_EQ(Info(restored->version)->operation_parameters.count("version"), 0u);
  }
  auto earlier = Restore(fs_, table_, {.timestamp = TimestampText((times[0] - 1) * 1000)});
  EXPECT_EQ(earlier.status().error_class(), errors::kDeltaCannotRestoreTimestampEarlier) << earlier.status().ToString();
  const std::vector<int64_t> now_times = MonotonicCommitTimes(ListLog(*fs_, table_).value().commit_times_ms);
  auto greater = Restore(fs_, table_, {.timestamp = TimestampText((now_times.back() + 1) * 1000)});
  EXPECT_EQ(greater.status().error_class(), errors::kDeltaCannotRestoreTimestampGreater) << greater.status().ToString();
  EXPECT_NE(greater.status().message().find("version " + std::to_string(now_times.size() - 1)), std::string::npos)
      << greater.status().ToString();
  for (const RestoreTarget& bad : {RestoreTarget{.timestamp = "yesterday"}, RestoreTarget{.timestamp = "2026-13-01"},
                                   RestoreTarget{}, RestoreTarget{.version = 1, .timestamp = "2026-01-01"}}) {
    EXPECT_EQ(Restore(fs_, table_, bad).status().error_class(), errors::kInvalidArgument);
  }
  EXPECT_EQ(ListLog(*fs_, table_).value().commit_versions.size(), now_times.size()) << "nothing committed";
}

INSTANTIATE_TEST_SUITE_P(Stores, MaintenanceTest, ::testing::ValuesIn(sluice::testing::kAllStores),
                         sluice::testing::StoreName);

}  // namespace
}  // namespace sluice::delta
