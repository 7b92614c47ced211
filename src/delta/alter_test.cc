#include "sluice/delta/alter.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "delta/scan_testing.h"
#include "sluice/core/builder.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/json_reader.h"
#include "sluice/delta/dml.h"
#include "sluice/delta/log.h"
#include "sluice/delta/snapshot.h"
#include "sluice/delta/writer.h"
#include "testing/temp_dir.h"

namespace sluice::delta {
namespace {

constexpr std::string_view kType = "struct<id:bigint,p:string,info:struct<city:string,zip:int>>";

// Rows of kType from JSON documents.
BatchPtr Rows(const std::vector<std::string>& documents, std::string_view type = kType) {
  auto reader = JsonReader::Make(ParseTypeString(type).value()).value();
  BinaryBuilder texts(DataType::String());
  for (const std::string& document : documents) texts.Append(document);
  ColumnPtr rows = reader->Read(*texts.Finish(), nullptr).value();
  return RecordBatch::Make(rows->type, rows->children, rows->length).value();
}

class AlterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteOptions options;
    options.partition_columns = {"p"};
    ASSERT_TRUE(WriteTable(fs_, table_, {Rows({R"({"id":1,"p":"a","info":{"city":"Oslo","zip":150}})",
                                               R"({"id":2,"p":"b","info":{"city":"Lima","zip":15001}})"})},
                           options)
                    .ok());
  }
  SnapshotPtr Latest() { return Snapshot::Load(fs_, table_).value(); }
  std::vector<std::string> Lines() { return testing::ScannedLines(Latest()); }
  std::string OperationOf(int64_t version) {
    for (const Action& action : ReadCommit(*fs_, table_, version).value()) {
      if (const auto* info = std::get_if<CommitInfo>(&action)) return info->operation;
    }
    return "";
  }
  std::vector<std::string> Names(const TypePtr& type) {
    std::vector<std::string> names;
    for (const Field& field : type->fields()) names.push_back(field.name);
    return names;
  }

  sluice::testing::TempDir dir_;
  std::shared_ptr<FileSystem> fs_ = LocalFileSystem();
  std::string table_ = dir_.Join("t");
};

// The column mapping recipe: mode name (with the legacy versions it needs) maps the columns in
// place; renames and drops then change names only, and every file reads as before.
TEST_F(AlterTest, ColumnMappingSetOnATableLetsItsColumnsBeRenamedAndDropped) {
  const std::vector<std::string> before = Lines();
  EXPECT_EQ(RenameColumn(fs_, table_, "id", "key").status().error_class(), errors::kDeltaUnsupportedRenameColumn);
  EXPECT_EQ(DropColumns(fs_, table_, {"info"}).status().error_class(), errors::kDeltaUnsupportedDropColumn);

  Result<int64_t> mapped = SetTableProperties(
      fs_, table_, {{"delta.minReaderVersion", "2"}, {"delta.minWriterVersion", "5"}, {"delta.columnMapping.mode", "name"}});
  ASSERT_TRUE(mapped.ok()) << mapped.status().ToString();
  EXPECT_EQ(*mapped, 1);
  SnapshotPtr snapshot = Latest();
  EXPECT_EQ(snapshot->protocol().min_reader_version, 2);
  EXPECT_EQ(snapshot->protocol().min_writer_version, 5);
  EXPECT_NE(snapshot->metadata().schema_string.find(R"("delta.columnMapping.physicalName":"info")"), std::string::npos)
      << "a column mapped in place keeps its name in the files";
  EXPECT_EQ(Lines(), before);

  ASSERT_TRUE(RenameColumn(fs_, table_, "id", "key").ok());
  ASSERT_TRUE(RenameColumn(fs_, table_, "INFO.city", "town").ok());
  ASSERT_TRUE(RenameColumn(fs_, table_, "p", "part").ok());
  snapshot = Latest();
  EXPECT_EQ(Names(snapshot->schema()), (std::vector<std::string>{"key", "part", "info"}));
  EXPECT_EQ(snapshot->metadata().partition_columns, std::vector<std::string>{"part"});
  EXPECT_EQ(Lines(), (std::vector<std::string>{R"(1,a,{"town":"Oslo","zip":150})", R"(2,b,{"town":"Lima","zip":15001})"}))
      << "the same values under the new names";
  EXPECT_EQ(testing::ScannedLines(snapshot, {.columns = {"key", "info"}}),
            (std::vector<std::string>{R"(1,{"town":"Oslo","zip":150})", R"(2,{"town":"Lima","zip":15001})"}));

  ASSERT_TRUE(DropColumns(fs_, table_, {"info.zip"}).ok());
  // A column of the dropped name added again is a new column: the old values stay gone.
  WriteOptions evolve;
  evolve.merge_schema = true;
  ASSERT_TRUE(WriteTable(fs_, table_,
                         {Rows({R"({"key":3,"part":"a","info":{"town":"Pune","zip":411001}})"},
                               "struct<key:bigint,part:string,info:struct<town:string,zip:int>>")},
                         evolve)
                  .ok());
  EXPECT_EQ(Lines(), (std::vector<std::string>{R"(1,a,{"town":"Oslo","zip":null})", R"(2,b,{"town":"Lima","zip":null})",
                                               R"(3,a,{"town":"Pune","zip":411001})"}));
  EXPECT_EQ(OperationOf(5), "DROP COLUMNS");
}

TEST_F(AlterTest, PropertiesAreCheckedAndRaiseTheProtocolTheyNeed) {
  // Deletion vectors on an existing table: the feature is added, and a DELETE then marks rows.
  ASSERT_TRUE(SetTableProperties(fs_, table_, {{"delta.enableDeletionVectors", "true"}, {"owner", "data team"}}).ok());
  SnapshotPtr snapshot = Latest();
  ASSERT_TRUE(snapshot->protocol().writer_features.has_value());
  EXPECT_NE(std::find(snapshot->protocol().writer_features->begin(), snapshot->protocol().writer_features->end(),
                      "deletionVectors"),
            snapshot->protocol().writer_features->end());
  EXPECT_EQ(snapshot->Property("owner", ""), "data team");
  ASSERT_TRUE(WriteTable(fs_, table_, {Rows({R"({"id":3,"p":"a"})", R"({"id":4,"p":"a"})"})}).ok());
  ASSERT_TRUE(DeleteFromTable(fs_, table_, {.where = expr::Expression::Parse("id = 3").value()}).ok());
  snapshot = Latest();
  EXPECT_EQ(Lines(), (std::vector<std::string>{R"(1,a,{"city":"Oslo","zip":150})", R"(2,b,{"city":"Lima","zip":15001})",
                                               "4,a,null"}));
  bool marked = false;
  for (const AddFile& file : snapshot->files()) marked = marked || file.deletion_vector.has_value();
  EXPECT_TRUE(marked) << "the DELETE wrote a deletion vector";

  const struct {
    StringMap properties;
    std::string_view error_class;
  } kRefused[] = {
      {{{"delta.enableChangeDataFeed", "true"}}, errors::kDeltaUnknownConfiguration},
      {{{"delta.apendOnly", "true"}}, errors::kDeltaUnknownConfiguration},
      {{{"delta.columnMapping.maxColumnId", "9"}}, errors::kDeltaCannotModifyTableProperty},
      {{{"delta.columnMapping.mode", "id"}}, errors::kDeltaUnsupportedColumnMappingModeChange},
      {{{"delta.minReaderVersion", "3"}}, errors::kInvalidArgument},
      {{{"delta.minWriterVersion", "five"}}, errors::kInvalidArgument},
      {{{"delta.enableRowTracking", "true"}}, errors::kDeltaProtocolUnsupported},
  };
  const int64_t version = Latest()->version();
  for (const auto& [properties, error_class] : kRefused) {
    EXPECT_EQ(SetTableProperties(fs_, table_, properties).status().error_class(), error_class)
        << properties.begin()->first;
  }
  EXPECT_EQ(Latest()->version(), version) << "a refused change commits nothing";

  // Keys are Delta's whatever their case; unsetting checks too.
  ASSERT_TRUE(SetTableProperties(fs_, table_, {{"DELTA.APPENDONLY", "false"}}).ok());
  EXPECT_EQ(Latest()->Property("delta.appendOnly", ""), "false");
  ASSERT_TRUE(UnsetTableProperties(fs_, table_, {"owner", "delta.appendOnly"}, false).ok());
  EXPECT_EQ(Latest()->Property("owner", "none"), "none");
  EXPECT_EQ(UnsetTableProperties(fs_, table_, {"owner"}, false).status().error_class(), errors::kInvalidArgument);
  EXPECT_TRUE(UnsetTableProperties(fs_, table_, {"owner"}, true).ok());
  ASSERT_TRUE(SetTableProperties(fs_, table_, {{"delta.columnMapping.mode", "name"}}).ok());
  EXPECT_EQ(SetTableProperties(fs_, table_, {{"delta.columnMapping.mode", "none"}}).status().error_class(),
            errors::kDeltaUnsupportedColumnMappingModeChange);
  EXPECT_EQ(UnsetTableProperties(fs_, table_, {"delta.columnMapping.mode"}, false).status().error_class(),
            errors::kDeltaUnsupportedColumnMappingModeChange);
  EXPECT_EQ(OperationOf(1), "SET TBLPROPERTIES");
}

TEST_F(AlterTest, ColumnChangesThatCannotBeAreRefusedAndCommitNothing) {
  ASSERT_TRUE(SetTableProperties(fs_, table_, {{"delta.columnMapping.mode", "name"}}).ok());
  const int64_t version = Latest()->version();
  EXPECT_EQ(DropColumns(fs_, table_, {"p"}).status().error_class(), errors::kDeltaUnsupportedDropPartitionColumn);
  EXPECT_EQ(DropColumns(fs_, table_, {"missing"}).status().error_class(), errors::kUnresolvedColumn);
  EXPECT_EQ(DropColumns(fs_, table_, {"id.inner"}).status().error_class(), errors::kUnresolvedColumn);
  EXPECT_EQ(RenameColumn(fs_, table_, "id", "P").status().error_class(), errors::kDeltaSchemaMismatch);
  EXPECT_EQ(RenameColumn(fs_, table_, "id", "").status().error_class(), errors::kInvalidArgument);
  EXPECT_EQ(RenameColumn(fs_, table_, "`id", "x").status().error_class(), errors::kInvalidArgument);
  ASSERT_TRUE(DropColumns(fs_, table_, {"info.zip"}).ok());
  EXPECT_EQ(DropColumns(fs_, table_, {"info.city"}).status().error_class(), errors::kDeltaUnsupportedDropColumn)
      << "a struct keeps one field";
  EXPECT_EQ(Latest()->version(), version + 1);
  // A name of any characters, as column mapping allows.
  ASSERT_TRUE(RenameColumn(fs_, table_, "id", "order id (v2)").ok());
  EXPECT_EQ(Names(Latest()->schema())[0], "order id (v2)");
  EXPECT_EQ(RenameColumn(fs_, dir_.Join("nothing"), "a", "b").status().error_class(), errors::kDeltaTableNotFound);
}

}  // namespace
}  // namespace sluice::delta
