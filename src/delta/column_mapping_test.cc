#include "delta/column_mapping.h"

#include <algorithm>
#include <functional>
#include <set>

#include <gtest/gtest.h>
#include <simdjson.h>

#include "delta/data_files.h"
#include "delta/scan_testing.h"
#include "sluice/core/builder.h"
#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "sluice/delta/dml.h"
#include "sluice/delta/maintenance.h"
#include "sluice/delta/scan.h"
#include "sluice/delta/writer.h"
#include "sluice/expr/dml.h"
#include "sluice/parquet/reader.h"
#include "testing/temp_dir.h"

namespace sluice::delta {
namespace {

// Names a table without column mapping cannot hold, at the top level and nested.
constexpr const char* kHostileSchema =
    "struct<`order id`:bigint,`a.b`:string,`day=of,week`:string,`s(x)`:struct<`in ner`:int,plain:string>,"
    "`l;ist`:array<struct<`k{}`:int>>,`é\tü`:string>";

BatchPtr HostileRows(int64_t first, int64_t count) {
  TypePtr schema = ParseTypeString(kHostileSchema).value();
  std::vector<std::unique_ptr<ColumnBuilder>> builders;
  for (const Field& field : schema->fields()) builders.push_back(ColumnBuilder::Make(field.type));
  for (int64_t id = first; id < first + count; ++id) {
    static_cast<Int64Builder*>(builders[0].get())->Append(id);
    static_cast<BinaryBuilder*>(builders[1].get())->Append("v" + std::to_string(id));
    static_cast<BinaryBuilder*>(builders[2].get())->Append(id % 2 ? "odd" : "even");
    auto* s = static_cast<StructBuilder*>(builders[3].get());
    static_cast<Int32Builder*>(s->field_builder(0))->Append(static_cast<int32_t>(id * 10));
    static_cast<BinaryBuilder*>(s->field_builder(1))->Append("p" + std::to_string(id));
    s->Append();
    auto* list = static_cast<ListBuilder*>(builders[4].get());
    auto* element = static_cast<StructBuilder*>(list->element_builder());
    static_cast<Int32Builder*>(element->field_builder(0))->Append(static_cast<int32_t>(id));
    element->Append();
    list->Append();
    static_cast<BinaryBuilder*>(builders[5].get())->Append("ü" + std::to_string(id));
  }
  std::vector<ColumnPtr> columns;
  for (auto& builder : builders) columns.push_back(builder->Finish());
  return RecordBatch::Make(schema, std::move(columns), count).value();
}

class ColumnMappingTest : public ::testing::Test {
 protected:
  // Every row of the table, as its values joined by '|', sorted.
  std::vector<std::string> Rows(ScanOptions options = {}) {
    return testing::ScannedLines(Snapshot::Load(fs_, table_).value(), std::move(options),
                                 [](const RecordBatch& batch, int64_t row) { return testing::JoinedValues(batch, row, "|"); });
  }

  // The top-level column names of a data file and their Parquet field ids (-1: none).
  std::vector<std::pair<std::string, int>> FileColumns(const AddFile& file) {
    auto reader = parquet::ParquetReader::Open(*fs_, DataFilePath(table_, file.path).value());
    EXPECT_TRUE(reader.ok()) << reader.status().ToString();
    std::vector<std::pair<std::string, int>> columns;
    const auto& elements = (*reader)->metadata().schema;
    // The root's direct children: walk the flattened tree by child counts.
    size_t at = 1;
    std::function<void()> skip = [&] {
      const auto& e = elements[at++];
      for (int32_t i = 0; i < e.num_children.value_or(0); ++i) skip();
    };
    for (int32_t i = 0; i < elements[0].num_children.value_or(0); ++i) {
      columns.emplace_back(elements[at].name, elements[at].field_id.value_or(-1));
      skip();
    }
    return columns;
  }

  sluice::testing::TempDir dir_;
  std::string table_ = dir_.Join("table");
  std::shared_ptr<FileSystem> fs_ = LocalFileSystem();
};

TEST_F(ColumnMappingTest, ANewTableWithNamesThatNeedItGetsNameModeAndReadsBackExactly) {
  auto written = WriteTable(fs_, table_, {HostileRows(0, 4)}, {.partition_columns = {"day=of,week"}});
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  SnapshotPtr snapshot = Snapshot::Load(fs_, table_).value();
  EXPECT_EQ(snapshot->metadata().configuration.at("delta.columnMapping.mode"), "name");
  // Six top-level fields, two inside the struct, one inside the array's element.
  EXPECT_EQ(snapshot->metadata().configuration.at("delta.columnMapping.maxColumnId"), "9");
  const Protocol& protocol = snapshot->protocol();
  EXPECT_EQ(protocol.min_reader_version, 3);
  ASSERT_TRUE(protocol.reader_features && protocol.writer_features);
  EXPECT_NE(std::find(protocol.reader_features->begin(), protocol.reader_features->end(), "columnMapping"),
            protocol.reader_features->end());
  EXPECT_NE(std::find(protocol.writer_features->begin(), protocol.writer_features->end(), "columnMapping"),
            protocol.writer_features->end());
  // Logical names in the schema; each field has a distinct id and physical name at any depth.
  const TypePtr& schema = snapshot->schema();
  EXPECT_EQ(schema->field(0).name, "order id");
  std::set<std::string> physical;
  for (const Field& field : schema->fields()) physical.insert(PhysicalName(field));
  for (const Field& field : schema->field(3).type->fields()) physical.insert(PhysicalName(field));
  physical.insert(PhysicalName(schema->field(4).type->element_type()->field(0)));
  EXPECT_EQ(physical.size(), 9u);
  for (const std::string& name : physical) EXPECT_TRUE(name.starts_with("col-")) << name;

  // Files in two-character folders, partition values and statistics by physical names, Parquet
  // columns by physical names (no field ids in name mode).
  ASSERT_EQ(snapshot->files().size(), 2u);
  const std::string id_physical = PhysicalName(schema->field(0));
  const std::string day_physical = PhysicalName(schema->field(2));
  for (const AddFile& file : snapshot->files()) {
    EXPECT_EQ(file.path.find('/'), 2u) << file.path;
    EXPECT_EQ(file.partition_values.count(day_physical), 1u);
    EXPECT_NE(file.stats->find("\"" + id_physical + "\""), std::string::npos) << *file.stats;
    EXPECT_EQ(file.stats->find("order id"), std::string::npos) << *file.stats;
    std::vector<std::pair<std::string, int>> columns = FileColumns(file);
    ASSERT_EQ(columns.size(), 5u);  // the partition column is not stored
    EXPECT_EQ(columns[0], std::make_pair(id_physical, -1));
  }
  EXPECT_EQ(Rows(), (std::vector<std::string>{
                        R"(0|v0|even|{"in ner":0,"plain":"p0"}|[{"k{}":0}]|ü0)",
                        R"(1|v1|odd|{"in ner":10,"plain":"p1"}|[{"k{}":1}]|ü1)",
                        R"(2|v2|even|{"in ner":20,"plain":"p2"}|[{"k{}":2}]|ü2)",
                        R"(3|v3|odd|{"in ner":30,"plain":"p3"}|[{"k{}":3}]|ü3)",
                    }));
  // What readers see carries no mapping metadata.
  auto scan = TableScan::Open(snapshot);
  ASSERT_TRUE(scan.ok());
  EXPECT_EQ((*scan)->schema()->ToJson().find("columnMapping"), std::string::npos);
  // Filters prune by physical statistics and partition values, and select by logical names.
  auto pruned = TableScan::Open(snapshot, {.columns = {"a.b"}, .filter = "`day=of,week` = 'odd' AND `order id` > 1"});
  ASSERT_TRUE(pruned.ok()) << pruned.status().ToString();
  EXPECT_EQ((*pruned)->files().size(), 1u);
  EXPECT_EQ(Rows({.columns = {"a.b"}, .filter = "`day=of,week` = 'odd' AND `order id` > 1"}),
            std::vector<std::string>{"v3"});
  EXPECT_EQ(Rows({.filter = "`s(x)`.`in ner` >= 20"}).size(), 2u);
}

TEST_F(ColumnMappingTest, IdModeWritesTheColumnIdsAsParquetFieldIds) {
  auto written = WriteTable(fs_, table_, {HostileRows(0, 3)}, {.table_properties = {{"delta.columnMapping.mode", "id"}}});
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  SnapshotPtr snapshot = Snapshot::Load(fs_, table_).value();
  EXPECT_EQ(snapshot->metadata().configuration.at("delta.columnMapping.mode"), "id");
  ASSERT_EQ(snapshot->files().size(), 1u);
  std::vector<std::pair<std::string, int>> columns = FileColumns(snapshot->files()[0]);
  ASSERT_EQ(columns.size(), 6u);
  // Ids in pre-order: the struct's two fields take 5 and 6, the list element's field 8.
  const int ids[] = {1, 2, 3, 4, 7, 9};
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(columns[i].first, PhysicalName(snapshot->schema()->field(i)));
    EXPECT_EQ(columns[i].second, ids[i]) << "field " << i;
  }
  EXPECT_EQ(Rows().size(), 3u);
}

TEST_F(ColumnMappingTest, EvolvedColumnsGetNewIdsAndExistingOnesKeepTheirs) {
  ASSERT_TRUE(WriteTable(fs_, table_, {HostileRows(0, 2)}).ok());
  SnapshotPtr before = Snapshot::Load(fs_, table_).value();
  // A batch with a new top-level column and a new field inside the struct.
  TypePtr wider = ParseTypeString(
                      "struct<`order id`:bigint,`s(x)`:struct<`in ner`:int,`new field`:string>,`new col`:double>")
                      .value();
  Int64Builder ids(DataType::Long());
  ids.Append(7);
  StructBuilder s(wider->field(1).type);
  static_cast<Int32Builder*>(s.field_builder(0))->Append(70);
  static_cast<BinaryBuilder*>(s.field_builder(1))->Append("n");
  s.Append();
  DoubleBuilder news(DataType::Double());
  news.Append(1.5);
  BatchPtr batch = RecordBatch::Make(wider, {ids.Finish(), s.Finish(), news.Finish()}, 1).value();
  auto evolved = WriteTable(fs_, table_, {batch}, {.merge_schema = true});
  ASSERT_TRUE(evolved.ok()) << evolved.status().ToString();
  SnapshotPtr after = Snapshot::Load(fs_, table_).value();
  EXPECT_EQ(after->metadata().configuration.at("delta.columnMapping.maxColumnId"), "11");
  for (int i = 0; i < before->schema()->num_fields(); ++i) {
    EXPECT_EQ(PhysicalName(after->schema()->field(i)), PhysicalName(before->schema()->field(i)));
  }
  std::vector<std::string> rows = Rows({.columns = {"order id", "s(x)", "new col"}});
  EXPECT_EQ(rows, (std::vector<std::string>{R"(0|{"in ner":0,"plain":"p0","new field":null}|null)",
                                            R"(1|{"in ner":10,"plain":"p1","new field":null}|null)",
                                            R"(7|{"in ner":70,"plain":null,"new field":"n"}|1.5)"}));
}

// A table as Spark leaves it after RENAME COLUMN and DROP COLUMN: the files keep the physical
// names, the schema says what they are called now.
TEST_F(ColumnMappingTest, RenamedAndDroppedColumnsReadByTheirPhysicalNames) {
  ASSERT_TRUE(WriteTable(fs_, table_, {HostileRows(0, 2)}).ok());
  auto txn = Transaction::Start(fs_, table_);
  ASSERT_TRUE(txn.ok());
  Metadata metadata = (*txn)->read_snapshot()->metadata();
  TypePtr schema = (*txn)->read_snapshot()->schema();
  std::vector<Field> fields;
  for (const Field& field : schema->fields()) {
    if (field.name == "a.b") continue;  // dropped
    Field renamed = field;
    if (field.name == "order id") renamed.name = "id";
    fields.push_back(std::move(renamed));
  }
  metadata.schema_string = DataType::Struct(fields).value()->ToJson();
  ASSERT_TRUE((*txn)->SetMetadata(metadata).ok());
  ASSERT_TRUE((*txn)->Commit("RENAME COLUMN", {}).ok());
  EXPECT_EQ(Rows({.columns = {"id", "é\tü"}, .filter = "id = 1"}), std::vector<std::string>{"1|ü1"});
  // A column added later under a dropped column's name is a new column: null in old files.
  ASSERT_TRUE(WriteTable(fs_, table_, {RecordBatch::Make(ParseTypeString("struct<id:bigint,`a.b`:string>").value(),
                                                         {[] {
                                                            Int64Builder b(DataType::Long());
                                                            b.Append(9);
                                                            return b.Finish();
                                                          }(),
                                                          [] {
                                                            BinaryBuilder b(DataType::String());
                                                            b.Append("new");
                                                            return b.Finish();
                                                          }()},
                                                         1)
                                           .value()},
                         {.merge_schema = true})
                  .ok());
  EXPECT_EQ(Rows({.columns = {"id", "a.b"}}), (std::vector<std::string>{"0|null", "1|null", "9|new"}));
}

TEST_F(ColumnMappingTest, DmlAndOptimizeKeepThePhysicalNames) {
  for (bool deletion_vectors : {false, true}) {
    SCOPED_TRACE(deletion_vectors);
    sluice::testing::TempDir dir;
    table_ = dir.Join("table");
    StringMap properties = {{"delta.columnMapping.mode", "name"}};
    if (deletion_vectors) properties["delta.enableDeletionVectors"] = "true";
    for (int64_t first = 0; first < 40; first += 10) {
      ASSERT_TRUE(WriteTable(fs_, table_, {HostileRows(first, 10)},
                             {.partition_columns = {"day=of,week"}, .table_properties = properties})
                      .ok());
    }
    auto update = UpdateTable(
        fs_, table_,
        {.assignments = {{{"a.b"}, expr::Expression::Parse("'updated'").value()}},
         .where = expr::Expression::Parse("`order id` IN (3, 4) AND `day=of,week` = 'odd'").value()});
    ASSERT_TRUE(update.ok()) << update.status().ToString();
    EXPECT_EQ(update->num_rows_updated, 1);
    auto del = DeleteFromTable(fs_, table_, {.where = expr::Expression::Parse("`s(x)`.`in ner` >= 300").value()});
    ASSERT_TRUE(del.ok()) << del.status().ToString();
    EXPECT_EQ(del->num_rows_deleted, 10);
    auto parsed = expr::ParseDml(
        "MERGE INTO t USING s ON t.`order id` = s.`order id` WHEN MATCHED THEN UPDATE SET `a.b` = 'merged' "
        "WHEN NOT MATCHED THEN INSERT *");
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    const auto& statement = std::get<expr::MergeStatement>(*parsed);
    auto merged = MergeInto(fs_, table_, {HostileRows(5, 2), HostileRows(100, 1)},
                            {.target_alias = statement.target_alias,
                             .source_alias = statement.source_alias,
                             .on = statement.on,
                             .clauses = statement.clauses});
    ASSERT_TRUE(merged.ok()) << merged.status().ToString();
    EXPECT_EQ(merged->num_rows_inserted, 1);
    auto optimized = Optimize(fs_, table_, {});
    ASSERT_TRUE(optimized.ok()) << optimized.status().ToString();
    std::vector<std::string> ids = Rows({.columns = {"order id", "a.b"}});
    EXPECT_EQ(ids.size(), 31u);
    EXPECT_NE(std::find(ids.begin(), ids.end(), "3|updated"), ids.end());
    EXPECT_NE(std::find(ids.begin(), ids.end(), "4|v4"), ids.end());
    EXPECT_NE(std::find(ids.begin(), ids.end(), "5|merged"), ids.end());
    EXPECT_NE(std::find(ids.begin(), ids.end(), "100|v100"), ids.end());
    SnapshotPtr snapshot = Snapshot::Load(fs_, table_).value();
    const std::string id_physical = PhysicalName(snapshot->schema()->field(0));
    for (const AddFile& file : snapshot->files()) {
      EXPECT_EQ(file.path.find('/'), 2u) << file.path;
      EXPECT_NE(file.stats->find(id_physical), std::string::npos);
      EXPECT_EQ(FileColumns(file)[0].first, id_physical);
    }
  }
}

TEST_F(ColumnMappingTest, WithoutModeNameLeftoverMetadataIsIgnored) {
  // A table whose mapping was dropped (mode none) but whose fields still carry physical names:
  // its files use the logical names, as the protocol says.
  ASSERT_TRUE(WriteTable(fs_, table_, {RecordBatch::Make(ParseTypeString("struct<id:bigint>").value(),
                                                         {[] {
                                                            Int64Builder b(DataType::Long());
                                                            b.Append(5);
                                                            return b.Finish();
                                                          }()},
                                                         1)
                                           .value()})
                  .ok());
  std::string log = fs_->ReadFile(table_ + "/_delta_log/00000000000000000000.json").value();
  const std::string plain = R"(\"metadata\":{})";
  ASSERT_NE(log.find(plain), std::string::npos) << log;
  log.replace(log.find(plain), plain.size(),
              R"(\"metadata\":{\"delta.columnMapping.id\":1,\"delta.columnMapping.physicalName\":\"col-gone\"})");
  ASSERT_TRUE(fs_->AtomicWrite(table_ + "/_delta_log/00000000000000000000.json", log).ok());
  EXPECT_EQ(Rows(), std::vector<std::string>{"5"});
  EXPECT_EQ(PhysicalName(Snapshot::Load(fs_, table_).value()->schema()->field(0)), "id");
}

TEST(RelabelTest, SharesValuesAndRefusesAnotherLayout) {
  TypePtr from = ParseTypeString("struct<a:array<struct<x:int>>>").value()->field(0).type;
  TypePtr to = ParseTypeString("struct<b:array<struct<`y z`:int>>>").value()->field(0).type;
  ListBuilder list(from);
  auto* element = static_cast<StructBuilder*>(list.element_builder());
  static_cast<Int32Builder*>(element->field_builder(0))->Append(4);
  element->Append();
  list.Append();
  ColumnPtr column = list.Finish();
  auto relabeled = Relabel(column, to);
  ASSERT_TRUE(relabeled.ok()) << relabeled.status().ToString();
  EXPECT_TRUE((*relabeled)->type->Equals(*to));
  EXPECT_EQ((*relabeled)->children[0]->children[0], column->children[0]->children[0]);  // shared leaf
  EXPECT_EQ(FormatValue(**relabeled, 0), R"([{"y z":4}])");
  EXPECT_EQ(Relabel(column, DataType::Array(DataType::Integer())).status().error_class(), errors::kInternalError);
}

}  // namespace
}  // namespace sluice::delta
