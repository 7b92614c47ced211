#include "sluice/delta/alter.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "delta/scan_testing.h"
#include "sluice/core/builder.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/json_reader.h"
#include "sluice/core/types.h"
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
  std::string OperationOf(int64_t version) { return OperationOf(table_, version); }
  std::string OperationOf(const std::string& table, int64_t version) {
    for (const Action& action : ReadCommit(*fs_, table, version).value()) {
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
      {{{"DELTA.COLUMNMAPPING.MAXCOLUMNID", "9"}}, errors::kDeltaCannotModifyTableProperty},
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
  EXPECT_EQ(DropColumns(fs_, table_, {"id.inner"}).status().error_class(), errors::kInvalidFieldName);
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

// ADD COLUMNS: nullable columns at any depth and position, with comments; older files read null
// for them; with column mapping a new column gets an id and a physical name of its own.
TEST_F(AlterTest, AddedColumnsGoWhereAskedAndReadNullInOlderFiles) {
  NewColumn score;
  score.path = "score";
  score.type = DataType::Double();
  score.comment = "points, \"quoted\"";
  score.position.kind = ColumnPosition::Kind::kFirst;
  NewColumn country;
  country.path = "INFO.country";
  country.type = DataType::String();
  country.position = {ColumnPosition::Kind::kAfter, "CITY"};
  NewColumn tags;
  tags.path = "tags";
  tags.type = ParseTypeString("array<string>").value();
  Result<int64_t> added = AddColumns(fs_, table_, {score, country, tags});
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  EXPECT_EQ(OperationOf(*added), "ADD COLUMNS");
  SnapshotPtr snapshot = Latest();
  EXPECT_EQ(Names(snapshot->schema()), (std::vector<std::string>{"score", "id", "p", "info", "tags"}));
  EXPECT_EQ(Names(snapshot->schema()->field(3).type), (std::vector<std::string>{"city", "country", "zip"}));
  EXPECT_EQ(snapshot->schema()->field(0).metadata, R"({"comment":"points, \"quoted\""})");
  EXPECT_EQ(Lines(), (std::vector<std::string>{R"(null,1,a,{"city":"Oslo","country":null,"zip":150},null)",
                                               R"(null,2,b,{"city":"Lima","country":null,"zip":15001},null)"}));
  ASSERT_TRUE(WriteTable(fs_, table_,
                         {Rows({R"({"score":2.5,"id":3,"p":"a","info":{"city":"Pune","country":"IN","zip":1},"tags":["x"]})"},
                               "struct<score:double,id:bigint,p:string,info:struct<city:string,country:string,zip:int>,"
                               "tags:array<string>>")})
                  .ok());
  EXPECT_EQ(Lines().front(), R"(2.5,3,a,{"city":"Pune","country":"IN","zip":1},["x"])");

  const int64_t version = Latest()->version();
  const struct {
    std::string path;
    bool nullable;
    ColumnPosition position;
    std::string_view error_class;
  } kRefused[] = {
      {"extra", false, {}, errors::kDeltaOperationNotAllowed},
      {"ID", true, {}, errors::kFieldAlreadyExists},
      {"info.City", true, {}, errors::kFieldAlreadyExists},
      {"id.part", true, {}, errors::kInvalidFieldName},
      {"nothing.part", true, {}, errors::kUnresolvedColumn},
      {"extra", true, {ColumnPosition::Kind::kAfter, "nothing"}, errors::kUnresolvedColumn},
      {"`extra", true, {}, errors::kInvalidArgument},
  };
  for (const auto& [path, nullable, position, error_class] : kRefused) {
    NewColumn column;
    column.path = path;
    column.type = DataType::Integer();
    column.nullable = nullable;
    column.position = position;
    EXPECT_EQ(AddColumns(fs_, table_, {column}).status().error_class(), error_class) << path;
  }
  NewColumn fine;
  fine.path = "fine";
  fine.type = DataType::Integer();
  EXPECT_EQ(AddColumns(fs_, table_, {fine, fine}).status().error_class(), errors::kFieldAlreadyExists)
      << "the columns of one call are added in order";
  EXPECT_EQ(Latest()->version(), version) << "a refused change commits nothing";

  // With column mapping, the new column is mapped like the others.
  ASSERT_TRUE(SetTableProperties(fs_, table_, {{"delta.columnMapping.mode", "name"}}).ok());
  ASSERT_TRUE(AddColumns(fs_, table_, {fine}).ok());
  const Field mapped = Latest()->schema()->fields().back();
  EXPECT_EQ(mapped.name, "fine");
  EXPECT_NE(mapped.metadata.find(R"("delta.columnMapping.physicalName":"col-)"), std::string::npos) << mapped.metadata;
  EXPECT_EQ(Lines().front(), R"(2.5,3,a,{"city":"Pune","country":"IN","zip":1},["x"],null)");
}

// CHANGE COLUMN ... TYPE: each widening of type widening, older files widened as they are read,
// by scans, filters and rewrites; the change recorded as Delta records it.
TEST_F(AlterTest, WidenedColumnsReadOlderFilesWidened) {
  constexpr std::string_view kNarrow = "struct<b:tinyint,i:int,l:bigint,f:float,d:decimal(5,2),s:struct<x:smallint>>";
  const std::string table = dir_.Join("widened");
  ASSERT_TRUE(WriteTable(fs_, table, {Rows({R"({"b":-3,"i":7,"l":9000000000,"f":1.5,"d":-1.25,"s":{"x":-300}})",
                                            R"({"b":null,"i":-2,"l":null,"f":null,"d":999.99,"s":null})"},
                                           kNarrow)})
                  .ok());
  auto widen = [&](const std::string& column, std::string_view type) {
    ColumnChange change;
    change.type = ParseTypeString(type).value();
    return ChangeColumn(fs_, table, column, change);
  };
  EXPECT_EQ(widen("i", "bigint").status().error_class(), errors::kDeltaUnsupportedAlterTableChangeColOp)
      << "widening needs the table property";
  ASSERT_TRUE(SetTableProperties(fs_, table, {{"delta.enableTypeWidening", "true"}}).ok());
  const int64_t before = Snapshot::Load(fs_, table).value()->version();
  const struct {
    std::string column;
    std::string_view type;
    std::string_view error_class;
  } kRefused[] = {
      {"l", "double", errors::kDeltaUnsupportedAlterTableChangeColOp},  // a numeric upcast Delta does not widen
      {"i", "float", errors::kDeltaUnsupportedAlterTableChangeColOp},
      {"b", "decimal(4,1)", errors::kDeltaUnsupportedAlterTableChangeColOp},  // fewer than 10 digits for an int32
      {"l", "decimal(20,1)", errors::kNotSupportedChangeColumn},  // cannot hold every long
      {"l", "int", errors::kNotSupportedChangeColumn},
      {"i", "string", errors::kNotSupportedChangeColumn},
      {"d", "decimal(10,1)", errors::kNotSupportedChangeColumn},
      {"d", "double", errors::kNotSupportedChangeColumn},
      {"s", "struct<x:int>", errors::kNotSupportedChangeColumn},
      {"s.y", "int", errors::kUnresolvedColumn},
  };
  for (const auto& [column, type, error_class] : kRefused) {
    EXPECT_EQ(widen(column, type).status().error_class(), error_class) << column << " " << type;
  }
  EXPECT_EQ(Snapshot::Load(fs_, table).value()->version(), before) << "a refused change commits nothing";

  for (const auto& [column, type] : std::vector<std::pair<std::string, std::string_view>>{
           {"b", "int"}, {"b", "decimal(12,2)"}, {"i", "double"}, {"l", "decimal(22,2)"}, {"f", "double"},
           {"d", "decimal(10,4)"}, {"s.x", "bigint"}, {"s.x", "bigint"}}) {
    Result<int64_t> changed = widen(column, type);
    ASSERT_TRUE(changed.ok()) << column << " " << type << ": " << changed.status().ToString();
  }
  SnapshotPtr snapshot = Snapshot::Load(fs_, table).value();
  EXPECT_EQ(snapshot->schema()->ToString(),
            "struct<b:decimal(12,2),i:double,l:decimal(22,2),f:double,d:decimal(10,4),s:struct<x:bigint>>");
  EXPECT_NE(snapshot->metadata().schema_string.find(
                R"j("delta.typeChanges":[{"fromType":"byte","toType":"integer"},{"fromType":"integer","toType":"decimal(12,2)"}])j"),
            std::string::npos)
      << snapshot->metadata().schema_string;
  EXPECT_NE(snapshot->metadata().schema_string.find(R"j({"fromType":"decimal(5,2)","toType":"decimal(10,4)"})j"),
            std::string::npos);
  ASSERT_TRUE(snapshot->protocol().reader_features.has_value());
  EXPECT_NE(std::find(snapshot->protocol().reader_features->begin(), snapshot->protocol().reader_features->end(),
                      "typeWidening"),
            snapshot->protocol().reader_features->end());
  const std::vector<std::string> kOlder = {R"(-3.00,7.0,9000000000.00,1.5,-1.2500,{"x":-300})",
                                           R"(null,-2.0,null,null,999.9900,null)"};
  EXPECT_EQ(testing::ScannedLines(snapshot), kOlder);

  // Wider values beside the older file's; a filter on a widened column (statistics of the older
  // file in its old type); a rewrite of the older file.
  ASSERT_TRUE(WriteTable(fs_, table, {Rows({R"({"b":1234567.25,"i":0.5,"l":1234567890123.5,"f":2.25,"d":123456.0001,"s":{"x":10000000000}})"},
                                           snapshot->schema()->ToString())})
                  .ok());
  EXPECT_EQ(testing::ScannedLines(Snapshot::Load(fs_, table).value(), {.filter = "i > 0"}),
            (std::vector<std::string>{R"(-3.00,7.0,9000000000.00,1.5,-1.2500,{"x":-300})",
                                      R"(1234567.25,0.5,1234567890123.50,2.25,123456.0001,{"x":10000000000})"}));
  ASSERT_TRUE(UpdateTable(fs_, table, {.assignments = {{{"d"}, expr::Expression::Parse("d + 1").value()}},
                                       .where = expr::Expression::Parse("i = -2").value()})
                  .ok());
  EXPECT_EQ(testing::ScannedLines(Snapshot::Load(fs_, table).value(), {.filter = "i < 1"}),
            (std::vector<std::string>{R"(1234567.25,0.5,1234567890123.50,2.25,123456.0001,{"x":10000000000})",
                                      R"(null,-2.0,null,null,1000.9900,null)"}))
      << "the UPDATE rewrote the older file's row widened";
}

// CHANGE COLUMN's other changes: a comment, a column let to hold nulls, a new position.
TEST_F(AlterTest, ChangedColumnsTakeCommentsNullabilityAndPositions) {
  const std::string table = dir_.Join("strict");
  TypePtr schema = DataType::Struct({{"id", DataType::Long(), false}, {"name", DataType::String()}}).value();
  Int64Builder ids(DataType::Long());
  BinaryBuilder names(DataType::String());
  ids.Append(1);
  names.Append("ada");
  ASSERT_TRUE(WriteTable(fs_, table, {RecordBatch::Make(schema, {ids.Finish(), names.Finish()}, 1).value()}).ok());
  ColumnChange comment;
  comment.comment = "the key";
  ASSERT_TRUE(ChangeColumn(fs_, table, "ID", comment).ok());
  ColumnChange strict;
  strict.nullable = false;
  EXPECT_EQ(ChangeColumn(fs_, table, "name", strict).status().error_class(),
            errors::kDeltaUnsupportedAlterTableChangeColOp);
  EXPECT_TRUE(ChangeColumn(fs_, table, "id", strict).ok()) << "already NOT NULL";
  ColumnChange loose;
  loose.nullable = true;
  loose.position = ColumnPosition{ColumnPosition::Kind::kAfter, "name"};
  Result<int64_t> moved = ChangeColumn(fs_, table, "id", loose);
  ASSERT_TRUE(moved.ok()) << moved.status().ToString();
  EXPECT_EQ(OperationOf(table, *moved), "CHANGE COLUMN");
  SnapshotPtr snapshot = Snapshot::Load(fs_, table).value();
  EXPECT_EQ(snapshot->schema()->ToString(), "struct<name:string,id:bigint>");
  EXPECT_TRUE(snapshot->schema()->field(1).nullable);
  EXPECT_EQ(snapshot->schema()->field(1).metadata, R"({"comment":"the key"})");
  EXPECT_EQ(testing::ScannedLines(snapshot), std::vector<std::string>{"ada,1"});
  EXPECT_EQ(ChangeColumn(fs_, table, "id", ColumnChange{}).status().error_class(), errors::kInvalidArgument);
  ColumnChange first;
  first.position = ColumnPosition{ColumnPosition::Kind::kFirst, ""};
  ASSERT_TRUE(ChangeColumn(fs_, table, "id", first).ok());
  EXPECT_EQ(Snapshot::Load(fs_, table).value()->schema()->ToString(), "struct<id:bigint,name:string>");
}

}  // namespace
}  // namespace sluice::delta
