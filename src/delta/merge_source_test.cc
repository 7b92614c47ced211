// Insert-only merges and the streaming source, over real tables.
#include <algorithm>
#include <optional>

#include <gtest/gtest.h>

#include "sluice/core/builder.h"
#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "sluice/delta/alter.h"
#include "sluice/delta/dml.h"
#include "sluice/delta/log.h"
#include "sluice/delta/merge.h"
#include "sluice/delta/scan.h"
#include "sluice/delta/source.h"
#include "testing/temp_dir.h"

namespace sluice::delta {
namespace {

BatchPtr Ids(const std::vector<int64_t>& ids, const std::string& tag = "x") {
  TypePtr schema = ParseTypeString("struct<id:bigint,tag:string>").value();
  Int64Builder id_builder(DataType::Long());
  BinaryBuilder tag_builder(DataType::String());
  for (int64_t id : ids) {
    id_builder.Append(id);
    tag_builder.Append(tag);
  }
  return RecordBatch::Make(schema, {id_builder.Finish(), tag_builder.Finish()}, static_cast<int64_t>(ids.size())).value();
}

std::vector<std::string> Rows(const std::vector<BatchPtr>& batches) {
  std::vector<std::string> rows;
  for (const BatchPtr& batch : batches) {
    for (int64_t row = 0; row < batch->num_rows(); ++row) {
      rows.push_back(FormatValue(*batch->column(0), row) + ":" + FormatValue(*batch->column(1), row));
    }
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

class MergeSourceTest : public ::testing::Test {
 protected:
  std::vector<std::string> TableRows() {
    auto scan = TableScan::Open(Snapshot::Load(fs_, table_).value());
    std::vector<BatchPtr> batches;
    while (true) {
      BatchPtr batch = (*scan)->Next().value();
      if (batch == nullptr) break;
      batches.push_back(batch);
    }
    return Rows(batches);
  }

  sluice::testing::TempDir dir_{"delta-merge"};
  std::string table_ = dir_.Join("table");
  std::shared_ptr<FileSystem> fs_ = LocalFileSystem();
};

TEST_F(MergeSourceTest, InsertOnlyMergeAddsOnlyNewKeys) {
  auto first = InsertNewRows(fs_, table_, Ids({1, 2, 2}, "a"), {.key_columns = {"id"}});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->num_rows, 2);
  ASSERT_TRUE(InsertNewRows(fs_, table_, Ids({100, 101}, "far"), {.key_columns = {"id"}}).ok());
  auto second = InsertNewRows(fs_, table_, Ids({2, 3}, "b"), {.key_columns = {"ID"}});
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->num_rows, 1);
  EXPECT_EQ(TableRows(), (std::vector<std::string>{"100:far", "101:far", "1:a", "2:a", "3:b"}));
  auto info = std::get<CommitInfo>(ReadCommit(*fs_, table_, second->version).value().at(0));
  EXPECT_EQ(info.operation, "MERGE");
  EXPECT_EQ(InsertNewRows(fs_, table_, Ids({4}), {.key_columns = {"nope"}}).status().error_class(),
            errors::kUnresolvedColumn);
}

// Rows {value: {id, tag}} with a struct column, keyed by a dot path into it.
BatchPtr Nested(const std::vector<std::optional<int64_t>>& ids, const std::string& tag) {
  TypePtr value = ParseTypeString("struct<id:bigint,tag:string>").value();
  TypePtr schema = DataType::Struct({{"value", value}}).value();
  Int64Builder id_builder(DataType::Long());
  BinaryBuilder tag_builder(DataType::String());
  for (const std::optional<int64_t>& id : ids) {
    id ? id_builder.Append(*id) : id_builder.AppendNull();
    tag_builder.Append(tag);
  }
  auto column = std::make_shared<Column>();
  column->type = value;
  column->length = static_cast<int64_t>(ids.size());
  column->children = {id_builder.Finish(), tag_builder.Finish()};
  return RecordBatch::Make(schema, {column}, column->length).value();
}

TEST_F(MergeSourceTest, KeysMayBeFieldsOfStructColumns) {
  // Three commits, so that the statistics of the nested key rule files out.
  ASSERT_TRUE(InsertNewRows(fs_, table_, Nested({1, 2, 2}, "a"), {.key_columns = {"value.id"}}).ok());
  ASSERT_TRUE(InsertNewRows(fs_, table_, Nested({100, 101}, "far"), {.key_columns = {"value.id"}}).ok());
  auto third = InsertNewRows(fs_, table_, Nested({2, 3, std::nullopt, std::nullopt}, "b"), {.key_columns = {"VALUE.Id"}});
  ASSERT_TRUE(third.ok()) << third.status().ToString();
  EXPECT_EQ(third->num_rows, 2) << "3 and one null are new; 2 is there, the second null is the first's twin";
  auto again = InsertNewRows(fs_, table_, Nested({101, 3, 4}, "c"), {.key_columns = {"value.id", "value.tag"}});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->num_rows, 3) << "(id, tag) pairs: none of them is in the table";
  for (const std::string bad : {"value.nope", "value.id.x", "nope.id", "value."}) {
    SCOPED_TRACE(bad);
    EXPECT_EQ(InsertNewRows(fs_, table_, Nested({5}, "d"), {.key_columns = {bad}}).status().error_class(),
              errors::kUnresolvedColumn);
  }
}

TEST_F(MergeSourceTest, TheSourceStreamsAppendsInBoundedRanges) {
  ASSERT_TRUE(WriteTable(fs_, table_, {Ids({1})}).ok());
  auto source = DeltaSource::Open(fs_, table_, {.start = SourceOptions::Start::kVersion, .starting_version = 0, .max_files_per_trigger = 2});
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  for (int64_t id = 2; id <= 4; ++id) ASSERT_TRUE(WriteTable(fs_, table_, {Ids({id})}).ok());

  SourceOffset start = (*source)->initial_offset();
  EXPECT_EQ(start, (SourceOffset{0, 0}));
  std::vector<std::string> seen;
  for (int round = 0; round < 5; ++round) {
    auto end = (*source)->LatestOffset(start);
    ASSERT_TRUE(end.ok()) << end.status().ToString();
    if (*end == start) break;
    auto files = (*source)->Files(start, *end);
    EXPECT_LE(files->size(), 2u);
    auto rows = Rows((*source)->Read(start, *end).value());
    seen.insert(seen.end(), rows.begin(), rows.end());
    // Reading a range again gives the same rows.
    EXPECT_EQ(Rows((*source)->Read(start, *end).value()), rows);
    start = *end;
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<std::string>{"1:x", "2:x", "3:x", "4:x"}));
  EXPECT_EQ(start, (SourceOffset{4, 0}));

  auto latest = DeltaSource::Open(fs_, table_, {.start = SourceOptions::Start::kLatest});
  EXPECT_EQ((*latest)->initial_offset(), (SourceOffset{4, 0}));
  ASSERT_TRUE(WriteTable(fs_, table_, {Ids({9})}, {.mode = WriteMode::kOverwrite}).ok());
  EXPECT_EQ((*latest)->LatestOffset(start).status().error_class(), errors::kDeltaSourceDataDeleted);
  EXPECT_EQ(DeltaSource::Open(fs_, table_, {.start = SourceOptions::Start::kVersion, .starting_version = 99}).status().error_class(),
            errors::kDeltaVersionNotFound);
}

// A stream waiting for the next version must not wait forever for a commit that is missing
// while later ones exist: one missing commit is found at once, several once a checkpoint (every
// 10 commits) lies past them.
// The rows a source reads from `start` to the end of the log, or its error.
Result<std::vector<std::string>> ReadToEnd(DeltaSource& source, SourceOffset start) {
  std::vector<std::string> seen;
  while (true) {
    SLUICE_ASSIGN_OR_RETURN(SourceOffset end, source.LatestOffset(start));
    if (end == start) return seen;
    SLUICE_ASSIGN_OR_RETURN(std::vector<BatchPtr> batches, source.Read(start, end));
    std::vector<std::string> rows = Rows(batches);
    seen.insert(seen.end(), rows.begin(), rows.end());
    start = end;
  }
}

// By default a stream reads the table as of its latest version first, as Spark does: a table
// overwritten before the stream started is read as it is now, not refused, in ranges of at most
// max_files_per_trigger files that read the same rows again; then the commits after it.
TEST_F(MergeSourceTest, ByDefaultTheSnapshotIsReadFirstThenLaterCommits) {
  ASSERT_TRUE(WriteTable(fs_, table_, {Ids({1})}).ok());
  ASSERT_TRUE(WriteTable(fs_, table_, {Ids({2})}, {.mode = WriteMode::kOverwrite}).ok());
  for (int64_t id = 3; id <= 7; ++id) ASSERT_TRUE(WriteTable(fs_, table_, {Ids({id})}).ok());
  ASSERT_TRUE(DeleteFromTable(fs_, table_, {.where = expr::Expression::Parse("id = 5").value()}).ok());
  auto source = DeltaSource::Open(fs_, table_, {.max_files_per_trigger = 2});
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  SourceOffset start = (*source)->initial_offset();
  EXPECT_EQ(start, (SourceOffset{7, 0, true}));
  std::vector<std::string> seen;
  std::vector<SourceOffset> ends;
  while (true) {
    auto end = (*source)->LatestOffset(start);
    ASSERT_TRUE(end.ok()) << end.status().ToString();
    if (*end == start) break;
    EXPECT_LE((*source)->Files(start, *end)->size(), 2u);
    auto rows = Rows((*source)->Read(start, *end).value());
    EXPECT_EQ(Rows((*source)->Read(start, *end).value()), rows);
    seen.insert(seen.end(), rows.begin(), rows.end());
    ends.push_back(*end);
    start = *end;
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<std::string>{"2:x", "3:x", "4:x", "6:x", "7:x"}));
  EXPECT_EQ(ends.front(), (SourceOffset{7, 2, true}));
  EXPECT_EQ(start, (SourceOffset{8, 0}));
  // Later appends follow; a later rewrite stops the stream as before.
  ASSERT_TRUE(WriteTable(fs_, table_, {Ids({8})}).ok());
  EXPECT_EQ(ReadToEnd(**source, start).value(), std::vector<std::string>{"8:x"});
  ASSERT_TRUE(WriteTable(fs_, table_, {Ids({9})}, {.mode = WriteMode::kOverwrite}).ok());
  EXPECT_EQ(ReadToEnd(**source, SourceOffset{9, 0}).status().error_class(), errors::kDeltaSourceDataDeleted);
  // An empty table's snapshot is no rows.
  const std::string empty = dir_.Join("empty");
  ASSERT_TRUE(WriteTable(fs_, empty, {Ids({})}).ok());
  auto over_empty = DeltaSource::Open(fs_, empty);
  ASSERT_TRUE(over_empty.ok());
  EXPECT_TRUE(ReadToEnd(**over_empty, (*over_empty)->initial_offset()).value().empty());
}

// A log of: append 1; truncate (removes only); append 2; overwrite with 3 (removes and adds);
// append 4. ignoreDeletes passes over the truncation and fails at the overwrite;
// skipChangeCommits passes over both, the overwrite's rows included.
TEST_F(MergeSourceTest, IgnoreDeletesAndSkipChangeCommitsPassOverCommitsThatRemoveData) {
  ASSERT_TRUE(WriteTable(fs_, table_, {Ids({1})}).ok());
  ASSERT_TRUE(TruncateTable(fs_, table_).ok());
  ASSERT_TRUE(WriteTable(fs_, table_, {Ids({2})}).ok());
  ASSERT_TRUE(WriteTable(fs_, table_, {Ids({3})}, {.mode = WriteMode::kOverwrite}).ok());
  ASSERT_TRUE(WriteTable(fs_, table_, {Ids({4})}).ok());

  auto plain = DeltaSource::Open(fs_, table_, {.start = SourceOptions::Start::kVersion, .starting_version = 0});
  EXPECT_EQ(ReadToEnd(**plain, (*plain)->initial_offset()).status().error_class(), errors::kDeltaSourceDataDeleted);

  auto ignoring = DeltaSource::Open(fs_, table_, {.start = SourceOptions::Start::kVersion, .starting_version = 0, .ignore_deletes = true});
  Result<std::vector<std::string>> ignored = ReadToEnd(**ignoring, (*ignoring)->initial_offset());
  EXPECT_EQ(ignored.status().error_class(), errors::kDeltaSourceDataDeleted) << "the overwrite also adds";
  EXPECT_EQ((*ignoring)->LatestOffset({0, 0}).value(), (SourceOffset{3, 0})) << "1, the truncation and 2 are read";

  auto skipping = DeltaSource::Open(fs_, table_, {.start = SourceOptions::Start::kVersion, .starting_version = 0, .skip_change_commits = true});
  Result<std::vector<std::string>> skipped = ReadToEnd(**skipping, (*skipping)->initial_offset());
  ASSERT_TRUE(skipped.ok()) << skipped.status().ToString();
  EXPECT_EQ(*skipped, (std::vector<std::string>{"1:x", "2:x", "4:x"}));
}

// A stream reads on through columns added to a mapped table and through its properties, stops
// before a commit that renames or drops a column (the rows before it read), and fails there by
// Spark's class; a stream started at or after that commit reads on.
TEST_F(MergeSourceTest, AStreamStopsAtARenameOrDropOfAColumnAndReadsOnThroughAddedOnes) {
  ASSERT_TRUE(WriteTable(fs_, table_, {Ids({1})}, {.table_properties = {{"delta.columnMapping.mode", "name"}}}).ok());
  TypePtr wider = ParseTypeString("struct<id:bigint,tag:string,extra:int>").value();
  Int64Builder ids(DataType::Long());
  BinaryBuilder tags(DataType::String());
  Int32Builder extras(DataType::Integer());
  ids.Append(2);
  tags.Append("x");
  extras.Append(20);
  ASSERT_TRUE(WriteTable(fs_, table_, {RecordBatch::Make(wider, {ids.Finish(), tags.Finish(), extras.Finish()}, 1).value()},
                         {.merge_schema = true})
                  .ok());                                                            // version 1: a column added
  ASSERT_TRUE(SetTableProperties(fs_, table_, {{"delta.appendOnly", "false"}}).ok());  // 2
  ASSERT_TRUE(WriteTable(fs_, table_, {Ids({3})}).ok());                               // 3
  int64_t from = 0;  // the drop is read by a stream started at the rename
  for (const char* change : {"rename", "drop"}) {
    SCOPED_TRACE(change);
    const int64_t at = Snapshot::Load(fs_, table_).value()->version() + 1;
    ASSERT_TRUE((std::string(change) == "rename" ? RenameColumn(fs_, table_, "tag", "label").status()
                                                 : DropColumns(fs_, table_, {"extra"}).status())
                    .ok());
    ASSERT_TRUE(WriteTable(fs_, table_, {Ids({at + 10})}, {.merge_schema = true}).ok());
    auto source = DeltaSource::Open(fs_, table_, {.start = SourceOptions::Start::kVersion, .starting_version = from});
    ASSERT_TRUE(source.ok());
    EXPECT_EQ((*source)->LatestOffset({from, 0}).value(), (SourceOffset{at, 0})) << "the range ends before it";
    Result<std::vector<std::string>> read = ReadToEnd(**source, (*source)->initial_offset());
    EXPECT_EQ(read.status().error_class(), errors::kDeltaStreamingIncompatibleSchemaChange);
    EXPECT_NE(read.status().message().find(std::string("version ") + std::to_string(at)), std::string::npos)
        << read.status().message();
    auto after = DeltaSource::Open(fs_, table_, {.start = SourceOptions::Start::kVersion, .starting_version = at});
    Result<std::vector<std::string>> later = ReadToEnd(**after, (*after)->initial_offset());
    ASSERT_TRUE(later.ok()) << later.status().ToString();
    EXPECT_EQ(later->size(), 1u);
    from = at;
  }
}

// A stream that starts at a commit rewriting the whole table (an overwrite, a change feed's
// re-snapshot) reads that commit's adds: the table's new content; one that started before it fails
// there. LastWholeRewrite finds that commit.
TEST_F(MergeSourceTest, AStreamStartedAtAWholeRewriteReadsTheNewContent) {
  ASSERT_TRUE(WriteTable(fs_, table_, {Ids({1})}).ok());
  ASSERT_TRUE(WriteTable(fs_, table_, {Ids({2})}).ok());
  EXPECT_EQ(LastWholeRewrite(fs_, table_).value(), std::nullopt) << "no commit removes data yet";
  ASSERT_TRUE(WriteTable(fs_, table_, {Ids({3, 30})}, {.mode = WriteMode::kOverwrite}).ok());
  ASSERT_TRUE(WriteTable(fs_, table_, {Ids({4})}).ok());
  EXPECT_EQ(LastWholeRewrite(fs_, table_).value(), std::optional<int64_t>(2));

  auto restarted = DeltaSource::Open(fs_, table_, {.start = SourceOptions::Start::kVersion, .starting_version = 2});
  ASSERT_TRUE(restarted.ok());
  (*restarted)->StartedAt(2);
  Result<std::vector<std::string>> rows = ReadToEnd(**restarted, (*restarted)->initial_offset());
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(*rows, (std::vector<std::string>{"30:x", "3:x", "4:x"}));

  auto from_start = DeltaSource::Open(fs_, table_, {.start = SourceOptions::Start::kVersion, .starting_version = 0});
  (*from_start)->StartedAt(0);
  EXPECT_EQ(ReadToEnd(**from_start, (*from_start)->initial_offset()).status().error_class(),
            errors::kDeltaSourceDataDeleted);
  // Started at 2 without saying so, the source treats the rewrite as any other.
  auto unannounced = DeltaSource::Open(fs_, table_, {.start = SourceOptions::Start::kVersion, .starting_version = 2});
  EXPECT_EQ(ReadToEnd(**unannounced, (*unannounced)->initial_offset()).status().error_class(),
            errors::kDeltaSourceDataDeleted);
}

TEST_F(MergeSourceTest, TheSourceReportsAHoleInsteadOfWaitingAtIt) {
  for (int holes : {1, 3}) {
    SCOPED_TRACE(holes);
    sluice::testing::TempDir dir("delta-source-hole");
    table_ = dir.Join("table");
    ASSERT_TRUE(WriteTable(fs_, table_, {Ids({1})}).ok());
    auto source = DeltaSource::Open(fs_, table_, {.start = SourceOptions::Start::kVersion, .starting_version = 0});
    ASSERT_TRUE(source.ok()) << source.status().ToString();
    auto end = (*source)->LatestOffset((*source)->initial_offset());
    ASSERT_TRUE(end.ok()) << end.status().ToString();
    EXPECT_EQ(*end, (SourceOffset{1, 0}));
    EXPECT_EQ((*source)->LatestOffset(*end).value(), *end);  // nothing new: no error
    const int64_t commits = holes == 1 ? 2 : 12;  // the 3-hole case writes past the checkpoint of version 10
    for (int64_t id = 2; id <= 1 + commits; ++id) ASSERT_TRUE(WriteTable(fs_, table_, {Ids({id})}).ok());
    for (int64_t version = 1; version <= holes; ++version) ASSERT_TRUE(fs_->Delete(CommitPath(table_, version)).ok());
    EXPECT_EQ((*source)->LatestOffset(*end).status().error_class(), errors::kDeltaLogCorrupt);
  }
}

}  // namespace
}  // namespace sluice::delta
