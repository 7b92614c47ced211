// Column-mapped tables between sluice and Apache Spark with Delta Lake 4.4, the engine whose tables
// users bring (tests/tools/delta_spark.py; Spark, the Delta jars and their virtual environment
// installed by scripts/install-test-tools.sh). Spark reads the tables sluice writes in both mapping
// modes, after DML with deletion vectors, schema evolution, OPTIMIZE and a checkpoint, as sluice
// reads them; sluice reads the tables Spark writes and then renames, drops and re-adds columns in,
// as Spark reads them. delta-rs reads sluice's tables too.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>
#include <fmt/format.h>
#include <simdjson.h>

#include "delta/column_mapping.h"
#include "delta/delta_replay_testing.h"
#include "delta/delta_rs_testing.h"
#include "delta/scan_testing.h"
#include "delta/spark_testing.h"
#include "parquet/duckdb_testing.h"
#include "sluice/core/builder.h"
#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/json_reader.h"
#include "sluice/core/json_text.h"
#include "sluice/delta/alter.h"
#include "sluice/delta/dml.h"
#include "sluice/delta/log.h"
#include "sluice/delta/maintenance.h"
#include "sluice/delta/scan.h"
#include "sluice/delta/transaction.h"
#include "sluice/delta/writer.h"
#include "sluice/expr/dml.h"
#include "testing/temp_dir.h"

namespace sluice::delta {
namespace {

using parquet::testing::ShellQuote;
using parquet::testing::ToolsDir;
using testing::RunSpark;

constexpr const char* kSchema =
    "struct<`order id`:bigint,`a.b`:string,`day=of,week`:string,`s(x)`:struct<`in ner`:int,plain:string>,"
    "`l;ist`:array<string>>";

BatchPtr Rows(int64_t first, int64_t count) {
  TypePtr schema = ParseTypeString(kSchema).value();
  std::vector<std::unique_ptr<ColumnBuilder>> builders;
  for (const Field& field : schema->fields()) builders.push_back(ColumnBuilder::Make(field.type));
  for (int64_t id = first; id < first + count; ++id) {
    static_cast<Int64Builder*>(builders[0].get())->Append(id);
    static_cast<BinaryBuilder*>(builders[1].get())->Append("v" + std::to_string(id));
    static_cast<BinaryBuilder*>(builders[2].get())->Append(id % 2 ? "odd" : "ëven");
    auto* s = static_cast<StructBuilder*>(builders[3].get());
    static_cast<Int32Builder*>(s->field_builder(0))->Append(static_cast<int32_t>(id * 10));
    static_cast<BinaryBuilder*>(s->field_builder(1))->Append("p" + std::to_string(id));
    s->Append();
    auto* list = static_cast<ListBuilder*>(builders[4].get());
    static_cast<BinaryBuilder*>(list->element_builder())->Append("t" + std::to_string(id));
    list->Append();
  }
  std::vector<ColumnPtr> columns;
  for (auto& builder : builders) columns.push_back(builder->Finish());
  return RecordBatch::Make(schema, std::move(columns), count).value();
}

// The table's rows as sluice reads them, each a compact JSON array of its values in table order
// (the rendering of tests/tools/delta_spark.py), sorted.
std::vector<std::string> SluiceRows(const std::shared_ptr<FileSystem>& fs, const std::string& table) {
  auto snapshot = Snapshot::Load(fs, table);
  EXPECT_TRUE(snapshot.ok()) << snapshot.status().ToString();
  if (!snapshot.ok()) return {};
  return testing::ScannedLines(*snapshot, {}, testing::JsonRow);
}

// Changes a table the ways that move rows between files and mark them deleted: an UPDATE and a
// DELETE (deletion vectors), a MERGE, a write with a new column, OPTIMIZE, then enough appends for
// a checkpoint (the tenth version).
void WriteAndChange(const std::shared_ptr<FileSystem>& fs, const std::string& table, const StringMap& properties) {
  for (int64_t first = 0; first < 40; first += 10) {
    auto written = WriteTable(fs, table, {Rows(first, 10)},
                              {.partition_columns = {"day=of,week"}, .table_properties = properties});
    ASSERT_TRUE(written.ok()) << written.status().ToString();
  }
  auto update = UpdateTable(fs, table,
                            {.assignments = {{{"a.b"}, expr::Expression::Parse("concat('u', `order id`)").value()}},
                             .where = expr::Expression::Parse("`order id` % 5 = 0").value()});
  ASSERT_TRUE(update.ok()) << update.status().ToString();
  auto del = DeleteFromTable(fs, table, {.where = expr::Expression::Parse("`order id` % 7 = 0").value()});
  ASSERT_TRUE(del.ok()) << del.status().ToString();
  auto parsed = expr::ParseDml(
      "MERGE INTO t USING s ON t.`order id` = s.`order id` WHEN MATCHED THEN UPDATE SET `a.b` = 'm' "
      "WHEN NOT MATCHED THEN INSERT *");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const auto& merge = std::get<expr::MergeStatement>(*parsed);
  auto merged = MergeInto(fs, table, {Rows(35, 10)},
                          {.target_alias = "t", .source_alias = "s", .on = merge.on, .clauses = merge.clauses});
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  TypePtr wider = ParseTypeString("struct<`order id`:bigint,`day=of,week`:string,`new col`:int>").value();
  Int64Builder ids(DataType::Long());
  BinaryBuilder days(DataType::String());
  Int32Builder news(DataType::Integer());
  for (int64_t id = 50; id < 53; ++id) {
    ids.Append(id);
    days.Append("odd");
    news.Append(static_cast<int32_t>(id));
  }
  auto evolved = WriteTable(fs, table, {RecordBatch::Make(wider, {ids.Finish(), days.Finish(), news.Finish()}, 3).value()},
                            {.merge_schema = true});
  ASSERT_TRUE(evolved.ok()) << evolved.status().ToString();
  ASSERT_TRUE(Optimize(fs, table, {}).ok());
  for (int64_t id = 60; id < 62; ++id) ASSERT_TRUE(WriteTable(fs, table, {Rows(id, 1)}, {.merge_schema = true}).ok());
  EXPECT_TRUE(fs->Exists(table + "/_delta_log/00000000000000000010.checkpoint.parquet").value_or(false));
}

TEST(DeltaSparkInteropTest, ColumnMappedTablesReadTheSameInSparkAndSluice) {
  sluice::testing::TempDir dir;
  auto fs = LocalFileSystem();
  const std::string sluice_name = dir.Join("sluice name");  // the names need mapping: name mode by itself
  const std::string sluice_id = dir.Join("sluice_id");
  const std::string spark_name = dir.Join("spark_name");
  const std::string spark_id = dir.Join("spark_id");
  WriteAndChange(fs, sluice_name, {{"delta.enableDeletionVectors", "true"}});
  WriteAndChange(fs, sluice_id, {{"delta.columnMapping.mode", "id"}, {"delta.enableDeletionVectors", "true"}});
  if (::testing::Test::HasFatalFailure()) return;
  EXPECT_EQ(Snapshot::Load(fs, sluice_name).value()->metadata().configuration.at("delta.columnMapping.mode"), "name");

  std::map<std::string, std::vector<std::string>> spark =
      RunSpark({"read:" + sluice_name, "read:" + sluice_id, "write:name:" + spark_name, "write:id:" + spark_id});

  // 40 rows, minus the six multiples of 7, plus 35 and 40..44 merged in, 50..52 and 60, 61.
  for (const std::string& table : {sluice_name, sluice_id}) {
    SCOPED_TRACE(table);
    std::vector<std::string> ours = SluiceRows(fs, table);
    EXPECT_EQ(ours.size(), 45u);
    EXPECT_EQ(spark["read:" + table], ours);
    EXPECT_NE(std::find(ours.begin(), ours.end(), R"([5,"u5","odd",{"in ner":50,"plain":"p5"},["t5"],null])"),
              ours.end());
    EXPECT_NE(std::find(ours.begin(), ours.end(), R"([36,"m","ëven",{"in ner":360,"plain":"p36"},["t36"],null])"),
              ours.end());
    EXPECT_NE(std::find(ours.begin(), ours.end(), R"([51,null,"odd",null,null,51])"), ours.end());
  }
  // Spark's tables after renames, a drop and a re-added name: 60 rows minus the multiples of 7,
  // plus two.
  for (const std::string& table : {spark_name, spark_id}) {
    SCOPED_TRACE(table);
    std::vector<std::string> ours = SluiceRows(fs, table);
    EXPECT_EQ(ours.size(), 53u);
    EXPECT_EQ(spark["write:" + std::string(table == spark_name ? "name:" : "id:") + table], ours);
    EXPECT_NE(std::find(ours.begin(), ours.end(), R"([10,"u10","even",{"x y":10,"c":"c10"},{"k":10},null,null])"),
              ours.end());
    EXPECT_NE(std::find(ours.begin(), ours.end(), R"([101,null,"even",null,null,null,"again"])"), ours.end());
    SnapshotPtr snapshot = Snapshot::Load(fs, table).value();
    EXPECT_NE(PhysicalName(snapshot->schema()->field(1)), "full name");
  }
  // sluice appends to Spark's table and Spark reads it back.
  TypePtr schema = ParseTypeString("struct<id:bigint,`full name`:string,`day.of`:string,tags:string>").value();
  Int64Builder ids(DataType::Long());
  BinaryBuilder names(DataType::String()), days(DataType::String()), tags(DataType::String());
  ids.Append(200);
  names.Append("from sluice");
  days.Append("odd");
  tags.Append("x");
  auto appended = WriteTable(fs, spark_name,
                             {RecordBatch::Make(schema, {ids.Finish(), names.Finish(), days.Finish(), tags.Finish()}, 1).value()});
  ASSERT_TRUE(appended.ok()) << appended.status().ToString();
  std::map<std::string, std::vector<std::string>> again = RunSpark({"read:" + spark_name});
  EXPECT_EQ(again["read:" + spark_name], SluiceRows(fs, spark_name));
  EXPECT_EQ(again["read:" + spark_name].size(), 54u);

  // delta-rs reads sluice's tables, deletion vectors and mapping applied.
  for (const std::string& table : {sluice_name, sluice_id}) {
    const std::string out = testing::CommandOutput(ShellQuote(ToolsDir() + "/venv/bin/python") + " " +
                                                   ShellQuote(ToolsDir() + "/delta_rs_rows.py") + " " + ShellQuote(table));
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 45) << out.substr(0, 2000);
    EXPECT_NE(out.find(R"([36, "m", "ëven", {"in ner": 360, "plain": "p36"}, ["t36"], null])"), std::string::npos)
        << out.substr(0, 2000);
  }
}

// A table sluice wrote without column mapping, mapped in place by sluice (Delta's recipe), its
// columns renamed (a partition column, a nested field) and dropped: Spark reads it as sluice
// does, appends to it under the new names, and sluice reads Spark's rows back.
TEST(DeltaSparkInteropTest, ATableSluiceAltersReadsAndTakesWritesInSparkUnderItsNewNames) {
  sluice::testing::TempDir dir;
  auto fs = LocalFileSystem();
  const std::string table = dir.Join("altered");
  TypePtr schema = ParseTypeString("struct<id:bigint,p:string,info:struct<city:string,zip:int>,note:string>").value();
  auto reader = JsonReader::Make(schema).value();
  for (int64_t first = 0; first < 6; first += 3) {
    BinaryBuilder documents(DataType::String());
    for (int64_t id = first; id < first + 3; ++id) {
      documents.Append(fmt::format(R"({{"id":{},"p":"{}","info":{{"city":"city{}","zip":{}}},"note":"note{}"}})", id,
                                   id % 2 == 0 ? "even" : "odd", id, 1000 + id, id));
    }
    ColumnPtr rows = reader->Read(*documents.Finish(), nullptr).value();
    WriteOptions options;
    options.partition_columns = {"p"};
    ASSERT_TRUE(WriteTable(fs, table, {RecordBatch::Make(schema, rows->children, rows->length).value()}, options).ok());
  }
  ASSERT_TRUE(SetTableProperties(fs, table, {{"delta.minReaderVersion", "2"}, {"delta.minWriterVersion", "5"},
                                             {"delta.columnMapping.mode", "name"}})
                  .ok());
  ASSERT_TRUE(RenameColumn(fs, table, "p", "parity").ok());
  ASSERT_TRUE(RenameColumn(fs, table, "info.city", "town").ok());
  ASSERT_TRUE(RenameColumn(fs, table, "id", "order id").ok());
  ASSERT_TRUE(DropColumns(fs, table, {"note"}).ok());

  const std::string quoted = "delta.`" + table + "`";
  std::map<std::string, std::vector<std::string>> spark = RunSpark(
      {"read:" + table, "sql:INSERT INTO " + quoted + " VALUES (100, 'even', named_struct('town', 'Spark', 'zip', 7))",
       "sql:SELECT `order id`, parity, info.town FROM " + quoted + " WHERE `order id` IN (1, 100)"});
  const std::vector<std::string> before = {
      R"([0,"even",{"town":"city0","zip":1000}])", R"([1,"odd",{"town":"city1","zip":1001}])",
      R"([2,"even",{"town":"city2","zip":1002}])", R"([3,"odd",{"town":"city3","zip":1003}])",
      R"([4,"even",{"town":"city4","zip":1004}])", R"([5,"odd",{"town":"city5","zip":1005}])"};
  EXPECT_EQ(spark["read:" + table], before);
  EXPECT_EQ(spark["sql:SELECT `order id`, parity, info.town FROM " + quoted + " WHERE `order id` IN (1, 100)"],
            (std::vector<std::string>{R"([1,"odd","city1"])", R"([100,"even","Spark"])"}));
  std::vector<std::string> after = before;
  after.push_back(R"([100,"even",{"town":"Spark","zip":7}])");
  std::sort(after.begin(), after.end());
  EXPECT_EQ(SluiceRows(fs, table), after) << "sluice reads Spark's append under the new names";
}

// An overwrite with overwriteSchema gives a column-mapped, partitioned table a new schema (a
// column of the old name in another type among them) and another partition column; Spark reads
// it as sluice does and appends to it, and sluice reads Spark's row.
TEST(DeltaSparkInteropTest, ATableSluiceOverwritesWithANewSchemaReadsAndTakesWritesInSpark) {
  sluice::testing::TempDir dir;
  auto fs = LocalFileSystem();
  const std::string table = dir.Join("replaced");
  ASSERT_TRUE(WriteTable(fs, table, {Rows(0, 4)}, {.partition_columns = {"day=of,week"}}).ok());
  TypePtr schema = ParseTypeString("struct<`order id`:string,`zone code`:string,amount:double>").value();
  BinaryBuilder ids(DataType::String());
  BinaryBuilder zones(DataType::String());
  DoubleBuilder amounts(DataType::Double());
  for (const auto& [id, zone, amount] : std::vector<std::tuple<std::string, std::string, double>>{
           {"a1", "north", 1.5}, {"a2", "south", 2.5}, {"a3", "north", -4.25}}) {
    ids.Append(id);
    zones.Append(zone);
    amounts.Append(amount);
  }
  auto written = WriteTable(fs, table,
                            {RecordBatch::Make(schema, {ids.Finish(), zones.Finish(), amounts.Finish()}, 3).value()},
                            {.mode = WriteMode::kOverwrite, .partition_columns = {"zone code"}, .overwrite_schema = true});
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  EXPECT_EQ(Snapshot::Load(fs, table).value()->metadata().partition_columns, std::vector<std::string>{"zone code"});

  const std::string quoted = "delta.`" + table + "`";
  std::map<std::string, std::vector<std::string>> spark =
      RunSpark({"read:" + table, "sql:INSERT INTO " + quoted + " VALUES ('s1', 'west', 9.0)"});
  const std::vector<std::string> replaced = {R"(["a1","north",1.5])", R"(["a2","south",2.5])",
                                             R"(["a3","north",-4.25])"};
  EXPECT_EQ(spark["read:" + table], replaced);
  std::vector<std::string> after = replaced;
  after.push_back(R"(["s1","west",9.0])");
  EXPECT_EQ(SluiceRows(fs, table), after);
}

// Tables with V2 checkpoints (JSON and Parquet top-level files, sidecars) and with columns Spark
// widened read in sluice as Spark reads them; the V2 ones with their commits before the last
// checkpoint deleted, so that only the checkpoint and its sidecars can say what the table holds.
// And Spark reads a table whose columns sluice widened, with a timestamp_ntz column, and one
// sluice changed by ALTER TABLE (widenings schema evolution does not make, a column added in the
// middle, one moved first).
TEST(DeltaSparkInteropTest, V2CheckpointsAndWidenedColumnsReadAsSparkReadsThem) {
  sluice::testing::TempDir dir;
  auto fs = LocalFileSystem();
  const std::string v2_json = dir.Join("v2_json");
  const std::string v2_parquet = dir.Join("v2_parquet");
  const std::string widened = dir.Join("widened");
  // And one sluice widens (an int column to bigint, a float to double) with a timestamp_ntz column,
  // for Spark to read.
  const std::string sluice_widened = dir.Join("sluice_widened");
  {
    TypePtr narrow = ParseTypeString("struct<i:int,f:float,t:timestamp_ntz>").value();
    Int32Builder is(DataType::Integer());
    FloatBuilder fs_(DataType::Float());
    Int64Builder ts(DataType::TimestampNtz());
    is.Append(7);
    fs_.Append(2.5f);
    ts.Append(1'700'000'000'123'456);  // 2023-11-14 22:13:20.123456
    ASSERT_TRUE(WriteTable(fs, sluice_widened, {RecordBatch::Make(narrow, {is.Finish(), fs_.Finish(), ts.Finish()}, 1).value()}).ok());
    TypePtr wide = ParseTypeString("struct<i:bigint,f:double,t:timestamp_ntz>").value();
    Int64Builder il(DataType::Long());
    DoubleBuilder fd(DataType::Double());
    Int64Builder ts2(DataType::TimestampNtz());
    il.Append(9'000'000'000);
    fd.Append(0.25);
    ts2.AppendNull();
    ASSERT_TRUE(WriteTable(fs, sluice_widened, {RecordBatch::Make(wide, {il.Finish(), fd.Finish(), ts2.Finish()}, 1).value()},
                           {.merge_schema = true, .widen_types = true})
                    .ok());
  }
  const std::string sluice_altered = dir.Join("sluice_altered");
  {
    TypePtr narrow = ParseTypeString("struct<i:int,d:decimal(5,2),l:bigint>").value();
    auto reader = JsonReader::Make(narrow).value();
    BinaryBuilder texts(DataType::String());
    texts.Append(R"({"i":-7,"d":-1.25,"l":9000000000})");
    ColumnPtr rows = reader->Read(*texts.Finish(), nullptr).value();
    ASSERT_TRUE(WriteTable(fs, sluice_altered, {RecordBatch::Make(narrow, rows->children, 1).value()},
                           {.table_properties = {{"delta.enableTypeWidening", "true"}}})
                    .ok());
    for (const auto& [column, type] :
         {std::pair{"i", "double"}, std::pair{"d", "decimal(10,4)"}, std::pair{"l", "decimal(22,2)"}}) {
      ColumnChange change;
      change.type = ParseTypeString(type).value();
      ASSERT_TRUE(ChangeColumn(fs, sluice_altered, column, change).ok()) << column;
    }
    NewColumn note;
    note.path = "note";
    note.type = DataType::String();
    note.position = {ColumnPosition::Kind::kAfter, "i"};
    ASSERT_TRUE(AddColumns(fs, sluice_altered, {note}).ok());
    ColumnChange first;
    first.position = ColumnPosition{ColumnPosition::Kind::kFirst, ""};
    ASSERT_TRUE(ChangeColumn(fs, sluice_altered, "l", first).ok());
    TypePtr wide = Snapshot::Load(fs, sluice_altered).value()->schema();
    auto wide_reader = JsonReader::Make(wide).value();
    BinaryBuilder wide_texts(DataType::String());
    wide_texts.Append(R"({"l":"12345678901234567890.25","i":0.5,"note":"new","d":12345.6789})");
    ColumnPtr wide_rows = wide_reader->Read(*wide_texts.Finish(), nullptr).value();
    ASSERT_TRUE(WriteTable(fs, sluice_altered, {RecordBatch::Make(wide, wide_rows->children, 1).value()}).ok());
  }
  std::map<std::string, std::vector<std::string>> spark =
      RunSpark({"write:v2-json:" + v2_json, "write:v2-parquet:" + v2_parquet, "write:widened:" + widened,
                "read:" + sluice_widened, "read:" + sluice_altered});
  EXPECT_EQ(spark["read:" + sluice_altered], SluiceRows(fs, sluice_altered));
  EXPECT_EQ(spark["read:" + sluice_altered],
            (std::vector<std::string>{R"(["12345678901234567890.25",0.5,"new","12345.6789"])",
                                      R"(["9000000000.00",-7.0,null,"-1.2500"])"}));
  EXPECT_EQ(spark["read:" + sluice_widened], SluiceRows(fs, sluice_widened));
  EXPECT_EQ(spark["read:" + sluice_widened],
            (std::vector<std::string>{R"([7,2.5,"2023-11-14T22:13:20.123456"])", R"([9000000000,0.25,null])"}));

  for (const auto& [table, extension] : {std::pair{v2_json, ".json"}, std::pair{v2_parquet, ".parquet"}}) {
    SCOPED_TRACE(table);
    LogListing listing = ListLog(*fs, table).value();
    ASSERT_FALSE(listing.checkpoints.empty());
    const CheckpointFiles& last = listing.checkpoints.rbegin()->second;
    ASSERT_EQ(last.paths.size(), 1u);
    EXPECT_TRUE(last.paths[0].ends_with(extension)) << last.paths[0];
    EXPECT_GT(fs->List(table + "/_delta_log/_sidecars").value().size(), 1u);
    for (int64_t version = 0; version < last.version; ++version) {
      ASSERT_TRUE(fs->Delete(CommitPath(table, version)).ok());
    }
    SnapshotPtr snapshot = Snapshot::Load(fs, table).value();
    EXPECT_EQ(snapshot->checkpoint_version(), last.version);
    // 40 rows but the ten multiples of 4, and one more.
    std::vector<std::string> ours = SluiceRows(fs, table);
    EXPECT_EQ(ours.size(), 31u);
    EXPECT_EQ(spark["write:v2-" + std::string(extension + 1) + ":" + table], ours);
    // sluice appends until it checkpoints the table: a V2 checkpoint (UUID-named JSON), never a
    // classic one; the commits before it go, so that Spark reads the table from it.
    TypePtr schema = ParseTypeString("struct<id:bigint,part:string>").value();
    int64_t appended = 0;
    while (ListLog(*fs, table).value().checkpoints.rbegin()->first == last.version && appended < 12) {
      Int64Builder ids(DataType::Long());
      BinaryBuilder parts(DataType::String());
      ids.Append(200 + appended++);
      parts.Append("z");
      ASSERT_TRUE(WriteTable(fs, table, {RecordBatch::Make(schema, {ids.Finish(), parts.Finish()}, 1).value()}).ok());
    }
    EXPECT_EQ(SluiceRows(fs, table).size(), 31u + static_cast<size_t>(appended));
    listing = ListLog(*fs, table).value();
    const auto& [ours_version, ours_checkpoint] = *listing.checkpoints.rbegin();
    ASSERT_GT(ours_version, last.version);
    EXPECT_TRUE(ours_checkpoint.paths[0].ends_with(".json")) << ours_checkpoint.paths[0];
    EXPECT_EQ(ours_checkpoint.paths[0].find(".checkpoint.parquet"), std::string::npos) << ours_checkpoint.paths[0];
    for (int64_t version = last.version; version < ours_version; ++version) {
      ASSERT_TRUE(fs->Delete(CommitPath(table, version)).ok());
    }
    EXPECT_EQ(Snapshot::Load(fs, table).value()->checkpoint_version(), ours_version);
  }
  std::map<std::string, std::vector<std::string>> again = RunSpark({"read:" + v2_json, "read:" + v2_parquet});
  EXPECT_EQ(again["read:" + v2_json], SluiceRows(fs, v2_json));
  EXPECT_EQ(again["read:" + v2_parquet], SluiceRows(fs, v2_parquet));

  std::vector<std::string> ours = SluiceRows(fs, widened);
  EXPECT_EQ(ours, spark["write:widened:" + widened]);
  EXPECT_EQ(ours, (std::vector<std::string>{R"([1,2,1.5,{"x":3},-4.0,"-1.2500","5.00"])",
                                            R"([100000,9000000000,0.1,{"x":70000},0.5,"12345.6789","12345678901234567890.25"])"}));
  EXPECT_EQ(Snapshot::Load(fs, widened).value()->schema()->field(1).type->id(), TypeId::kLong);
}

// A JSON value with its numbers in one form (an integer, or the shortest text of a double), so
// that two renderings of the same values compare equal (Spark's 1073741947.0, sluice's
// 1.073741947E9).
std::string CanonicalJson(simdjson::dom::element value) {
  std::string out;
  simdjson::dom::array items;
  simdjson::dom::object fields;
  double number = 0;
  if (value.get(items) == simdjson::SUCCESS) {
    for (simdjson::dom::element item : items) out += (out.empty() ? "" : ",") + CanonicalJson(item);
    return "[" + out + "]";
  }
  if (value.get(fields) == simdjson::SUCCESS) {
    for (auto [key, item] : fields) out += (out.empty() ? "" : ",") + JsonString(key) + ":" + CanonicalJson(item);
    return "{" + out + "}";
  }
  if (value.is_double() && value.get(number) == simdjson::SUCCESS) return fmt::format("{}", number);
  return simdjson::minify(value);
}

// Rows (JSON arrays) in canonical form, sorted.
std::vector<std::string> CanonicalRows(const std::vector<std::string>& rows) {
  simdjson::dom::parser parser;
  std::vector<std::string> canonical;
  for (const std::string& row : rows) {
    simdjson::dom::element parsed;
    EXPECT_EQ(parser.parse(simdjson::padded_string(row)).get(parsed), simdjson::SUCCESS) << row;
    canonical.push_back(CanonicalJson(parsed));
  }
  std::sort(canonical.begin(), canonical.end());
  return canonical;
}

// The table's rows as delta-rs reads them, in canonical form.
std::vector<std::string> DeltaRsRows(const std::string& table) {
  return CanonicalRows(testing::DeltaRsLines(parquet::testing::ShellQuote(table)));
}

// The Delta kernel's test tables (the delta_kernel crate's tests/data, installed by
// scripts/install-test-tools.sh): tables Delta Spark and Databricks wrote with deletion vectors,
// V2 checkpoints with and without sidecars, log compaction files, change data files, type
// widening, timestamp_ntz, decimals, partitions, and column names holding dots and back quotes.
// sluice reads each as Spark reads it. Where Spark refuses a table (inconsistent features, a type
// change of the feature's preview, a partition folder name its paths cannot hold) or reads it
// otherwise than the kernel and delta-rs (it reads the compacted log's table without the deletes
// and updates), the rows are the kernel's own expectation (its tests/read.rs) or delta-rs's.
TEST(DeltaSparkInteropTest, TheDeltaKernelsTestTablesReadAsSparkOrTheKernelReadsThem) {
  namespace fs_ns = std::filesystem;
  auto fs = LocalFileSystem();
  const std::string tables = parquet::testing::ToolsDir() + "/delta-kernel/tables";
  ASSERT_TRUE(fs_ns::exists(tables + "/.version")) << "run scripts/install-test-tools.sh";
  // The kernel's expected rows (tests/read.rs), as sluice renders them.
  const std::map<std::string, std::vector<std::string>> kKernelRows = {
      {"compacted-log-files-table",
       {R"([0,"new"])", R"([1,"after-large-delete"])", R"([10,"merge1-insert"])", R"([12,"merge2-insert"])",
        R"([2,""])"}},
      {"timestamp-partitioned-table", {R"([1,0.5,"","1971-07-22T03:06:40Z"])"}},
      {"type-widening",
       {R"([1,2,3.4000000953674316,5.0,6.0,7.0,"123.45","67.89000","1.0","2.0","3.0","4.0","2024-09-09T00:00:00"])",
        R"([9223372036854775807,9223372036854775807,1.234567890123,1.234567890123,1.234567890123,1.234567890123,)"
        R"("12345678901234.56","12345678901.23456","123.4","12345.6","1234567890.1","123456789012345678.9",)"
        R"("2024-09-09T12:34:56.123456"])"}},
  };
  // Tables whose protocol lacks a feature their metadata uses (changeDataFeed): Spark refuses
  // them; delta-rs reads them.
  const std::set<std::string> kDeltaRsRead = {"cdf-table-with-dv", "table-with-cdf"};
  std::vector<std::string> names;
  for (const fs_ns::directory_entry& entry : fs_ns::directory_iterator(tables)) {
    if (fs_ns::exists(entry.path() / "_delta_log")) names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  ASSERT_EQ(names.size(), 35u);
  std::vector<std::string> spark_commands;
  for (const std::string& name : names) {
    if (!kKernelRows.contains(name) && !kDeltaRsRead.contains(name) && name != "with_checkpoint_no_last_checkpoint") {
      spark_commands.push_back("read:" + tables + "/" + name);
    }
  }
  std::map<std::string, std::vector<std::string>> spark = RunSpark(spark_commands);
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    const std::string table = tables + "/" + name;
    if (name == "with_checkpoint_no_last_checkpoint") {
      // A log without its data files: the snapshot is the checkpoint's (found with no
      // _last_checkpoint) and the commit after it; reading a file is FILE_NOT_FOUND, as in Spark.
      SnapshotPtr snapshot = Snapshot::Load(fs, table).value();
      EXPECT_EQ(snapshot->version(), 3);
      EXPECT_EQ(snapshot->checkpoint_version(), 2);
      auto scan = TableScan::Open(snapshot, {});
      ASSERT_TRUE(scan.ok()) << scan.status().ToString();
      EXPECT_EQ((*scan)->Next().status().error_class(), errors::kFileNotFound);
      continue;
    }
    std::vector<std::string> ours = SluiceRows(fs, table);
    if (auto kernel = kKernelRows.find(name); kernel != kKernelRows.end()) {
      EXPECT_EQ(ours, kernel->second);
    } else if (kDeltaRsRead.contains(name)) {
      EXPECT_EQ(CanonicalRows(ours), DeltaRsRows(table));
    } else {
      EXPECT_EQ(CanonicalRows(ours), CanonicalRows(spark["read:" + table]));
    }
  }
}

// delta-rs's test tables (the deltalake source distribution's crates/test/tests/data, installed
// by scripts/install-test-tools.sh): tables Spark, Databricks (declarative pipelines among them),
// delta-rs and Delta 0.2 / 0.8 writers made, with column mapping, liquid clustering, domain
// metadata, deletion vectors, change data, edge timestamps and timestamps stored without zone.
// sluice reads each as Spark reads it; where Spark cannot (a stale .crc beside a commit), as
// delta-rs does. Tables kept for their logs alone (their data files are not shipped) load at the
// version and with the files delta-rs finds. A table asking for reader version 5 and an unknown
// feature, and the tables of the variant type, are refused.
TEST(DeltaSparkInteropTest, DeltaRsTestTablesReadAsSparkOrDeltaRsReadsThem) {
  namespace fs_ns = std::filesystem;
  auto fs = LocalFileSystem();
  const std::string tables = parquet::testing::ToolsDir() + "/delta-rs/tables";
  ASSERT_TRUE(fs_ns::exists(tables + "/.version")) << "run scripts/install-test-tools.sh";
  const std::set<std::string> kLogOnly = {"checkpoint_with_partitions", "checkpoints", "checkpoints_vacuumed",
                                          "latest_not_checkpointed", "table-with-domain-metadata",
                                          "with_checkpoint_no_last_checkpoint"};
  const std::set<std::string> kRefused = {"simple_table_features", "spark-shredded-variant-preview-delta",
                                          "spark-variant-checkpoint", "spark-variant-stable-feature-checkpoint"};
  const std::set<std::string> kDeltaRsRead = {"cdc_ict_table"};
  const std::string kLarge = "COVID-19_NYT";  // 1.1 M rows: compared by count and sums
  std::vector<std::string> names;
  for (const fs_ns::directory_entry& entry : fs_ns::recursive_directory_iterator(tables)) {
    if (entry.is_directory() && entry.path().filename() == "_delta_log") {
      names.push_back(fs_ns::relative(entry.path().parent_path(), tables).string());
    }
  }
  std::sort(names.begin(), names.end());
  ASSERT_EQ(names.size(), 51u);
  std::vector<std::string> spark_commands = {
      "sql:SELECT count(*), sum(cases), sum(deaths), max(date) FROM delta.`" + tables + "/" + kLarge + "`"};
  for (const std::string& name : names) {
    if (!kLogOnly.contains(name) && !kRefused.contains(name) && !kDeltaRsRead.contains(name) && name != kLarge) {
      spark_commands.push_back("read:" + tables + "/" + name);
    }
  }
  std::map<std::string, std::vector<std::string>> spark = RunSpark(spark_commands);
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    const std::string table = tables + "/" + name;
    if (kRefused.contains(name)) {
      EXPECT_EQ(Snapshot::Load(fs, table).status().error_class(), errors::kDeltaProtocolUnsupported);
    } else if (kLogOnly.contains(name)) {
      Result<SnapshotPtr> snapshot = Snapshot::Load(fs, table);
      ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString();
      const std::vector<std::string> log = testing::DeltaRsLines("--log " + parquet::testing::ShellQuote(table));
      ASSERT_EQ(log.size(), 1u);
      EXPECT_EQ(log[0], fmt::format(R"({{"version": {}, "files": {}}})", (*snapshot)->version(),
                                    (*snapshot)->files().size()));
    } else if (kDeltaRsRead.contains(name)) {
      EXPECT_EQ(CanonicalRows(SluiceRows(fs, table)), DeltaRsRows(table));
    } else if (name == kLarge) {
      int64_t rows = 0, cases = 0, deaths = 0;
      std::string latest;
      auto scan = TableScan::Open(Snapshot::Load(fs, table).value(), {.columns = {"date", "cases", "deaths"}});
      ASSERT_TRUE(scan.ok()) << scan.status().ToString();
      while (true) {
        Result<BatchPtr> batch = (*scan)->Next();
        ASSERT_TRUE(batch.ok()) << batch.status().ToString();
        if (*batch == nullptr) break;
        for (int64_t row = 0; row < (*batch)->num_rows(); ++row) {
          ++rows;
          const Column& case_count = *(*batch)->column(1);
          const Column& death_count = *(*batch)->column(2);
          cases += case_count.IsNull(row) ? 0 : case_count.Value<int32_t>(row);
          deaths += death_count.IsNull(row) ? 0 : death_count.Value<int32_t>(row);
          latest = std::max(latest, std::string((*batch)->column(0)->View(row)));
        }
      }
      EXPECT_EQ(CanonicalRows({fmt::format(R"([{},{},{},"{}"])", rows, cases, deaths, latest)}),
                CanonicalRows(spark[spark_commands[0]]));
    } else {
      EXPECT_EQ(CanonicalRows(SluiceRows(fs, table)), CanonicalRows(spark["read:" + table]));
    }
  }
}

// A table Spark made with row tracking (Databricks' default for new tables) takes sluice's
// appends, deletion-vector deletes, UPDATE and OPTIMIZE: Spark then reads every row with a row id
// unique in the table, sluice's rows with the ids above the ones Spark gave and the version of the
// commit that wrote them, Spark's rows with the ids and versions they had; rows sluice rewrote keep
// their ids, and those it changed take the UPDATE's version.
TEST(DeltaSparkInteropTest, SluiceWritesIntoATableWithRowTrackingAsSparkReadsIt) {
  sluice::testing::TempDir dir;
  auto fs = LocalFileSystem();
  const std::string table = dir.Join("tracked");
  std::map<std::string, std::vector<std::string>> made = RunSpark({"write:rowtracking:" + table});
  ASSERT_EQ(made["write:rowtracking:" + table].size(), 15u);
  // Spark's two inserts are versions 1 and 2; sluice appends 15-19 (version 3) and 20-22 (4).
  TypePtr schema = ParseTypeString("struct<id:bigint,name:string>").value();
  for (auto [first, count] : {std::pair<int64_t, int64_t>{15, 5}, {20, 3}}) {
    Int64Builder ids(DataType::Long());
    BinaryBuilder names(DataType::String());
    for (int64_t id = first; id < first + count; ++id) {
      ids.Append(id);
      names.Append("x" + std::to_string(id));
    }
    auto written = WriteTable(fs, table, {RecordBatch::Make(schema, {ids.Finish(), names.Finish()}, count).value()}, {});
    ASSERT_TRUE(written.ok()) << written.status().ToString();
  }
  auto deleted = DeleteFromTable(fs, table, {.where = expr::Expression::Parse("id IN (3, 16)").value()});
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  SnapshotPtr snapshot = Snapshot::Load(fs, table).value();
  ASSERT_TRUE(snapshot->domains().contains("delta.rowTracking"));
  EXPECT_EQ(snapshot->domains().at("delta.rowTracking").configuration, R"({"rowIdHighWaterMark":22})");

  // id -> (row id, commit version) as Spark reads them.
  auto read_ids = [&] {
    std::map<int64_t, std::pair<int64_t, int64_t>> ids;
    std::map<std::string, std::vector<std::string>> read = RunSpark({"rowids:" + table});
    for (const std::string& row : read["rowids:" + table]) {
      simdjson::dom::parser parser;
      simdjson::dom::array values = parser.parse(simdjson::padded_string(row)).get_array().value();
      ids[values.at(0).get_int64().value()] = {values.at(1).get_int64().value(), values.at(2).get_int64().value()};
    }
    return ids;
  };
  const std::map<int64_t, std::pair<int64_t, int64_t>> before = read_ids();
  ASSERT_EQ(before.size(), 21u);
  std::set<int64_t> row_ids;
  for (const auto& [id, tracked] : before) {
    row_ids.insert(tracked.first);
    if (id >= 15) {
      // Spark's rows hold ids 0-14 in some order; sluice's follow the mark, file by file.
      EXPECT_EQ(tracked.first, id) << id;
      EXPECT_EQ(tracked.second, id < 20 ? 3 : 4) << id;
    } else {
      EXPECT_LT(tracked.first, 15) << id;
      EXPECT_EQ(tracked.second, id < 10 ? 1 : 2) << id;
    }
  }
  EXPECT_EQ(row_ids.size(), 21u) << "row ids are unique";
  // sluice's own reading agrees with Spark's.
  for (const std::string& line : testing::ScannedLines(Snapshot::Load(fs, table).value(),
                                                       {.columns = {"id"}, .row_tracking = true})) {
    const int64_t id = std::stoll(line);
    EXPECT_EQ(line, fmt::format("{},{},{}", id, before.at(id).first, before.at(id).second));
  }

  // An UPDATE writes the changed rows again and OPTIMIZE every row: the ids stay.
  auto updated = UpdateTable(fs, table, {.assignments = {{{"name"}, expr::Expression::Parse("'u'").value()}},
                                         .where = expr::Expression::Parse("id IN (5, 17)").value()});
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  auto optimized = Optimize(fs, table, {});
  ASSERT_TRUE(optimized.ok()) << optimized.status().ToString();
  ASSERT_EQ(Snapshot::Load(fs, table).value()->files().size(), 1u);
  std::map<int64_t, std::pair<int64_t, int64_t>> expected = before;
  for (int64_t id : {5, 17}) expected[id].second = updated->version;
  EXPECT_EQ(read_ids(), expected);
}

// A table sluice creates with delta.enableRowTracking: the protocol lists rowTracking and
// domainMetadata for writers (readers need neither), the configuration names the materialized
// columns, and every row sluice appends gets an id Spark reads as unique, with the commit version
// that wrote it; a DELETE by deletion vectors keeps the other rows' ids, and a MERGE keeps the id of
// the row it updates and gives the row it inserts a new one.
TEST(DeltaSparkInteropTest, SparkReadsTheRowIdsOfATableSluiceCreatesWithRowTracking) {
  sluice::testing::TempDir dir;
  auto fs = LocalFileSystem();
  const std::string table = dir.Join("created");
  TypePtr schema = ParseTypeString("struct<id:bigint,name:string>").value();
  for (auto [first, count] : {std::pair<int64_t, int64_t>{0, 4}, {4, 3}, {7, 2}}) {
    Int64Builder ids(DataType::Long());
    BinaryBuilder names(DataType::String());
    for (int64_t id = first; id < first + count; ++id) {
      ids.Append(id);
      names.Append("n" + std::to_string(id));
    }
    auto written = WriteTable(fs, table, {RecordBatch::Make(schema, {ids.Finish(), names.Finish()}, count).value()},
                              {.table_properties = {{"delta.enableRowTracking", "true"},
                                                    {"delta.enableDeletionVectors", "true"}}});
    ASSERT_TRUE(written.ok()) << written.status().ToString();
  }
  auto deleted = DeleteFromTable(fs, table, {.where = expr::Expression::Parse("id IN (1, 5)").value()});
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  SnapshotPtr snapshot = Snapshot::Load(fs, table).value();
  const Protocol& protocol = snapshot->protocol();
  EXPECT_EQ(protocol.min_writer_version, 7);
  ASSERT_TRUE(protocol.writer_features.has_value());
  for (const char* feature : {"rowTracking", "domainMetadata", "deletionVectors"}) {
    EXPECT_NE(std::find(protocol.writer_features->begin(), protocol.writer_features->end(), feature),
              protocol.writer_features->end())
        << feature;
  }
  EXPECT_TRUE(snapshot->metadata().configuration.at("delta.rowTracking.materializedRowIdColumnName").starts_with("_row-id-col-"));
  EXPECT_EQ(snapshot->domains().at("delta.rowTracking").configuration, R"({"rowIdHighWaterMark":8})");

  // A MERGE then updates id 2 (written again, keeping its row id) and inserts id 50.
  MergeSpec upsert;
  upsert.target_alias = "t";
  upsert.source_alias = "s";
  upsert.on = expr::Expression::Parse("t.id = s.id").value();
  upsert.clauses = {{.match = expr::MergeMatch::kMatched, .action = expr::MergeActionKind::kUpdateAll},
                    {.match = expr::MergeMatch::kNotMatched, .action = expr::MergeActionKind::kInsertAll}};
  Int64Builder source_ids(DataType::Long());
  BinaryBuilder source_names(DataType::String());
  for (int64_t id : {2, 50}) {
    source_ids.Append(id);
    source_names.Append("m" + std::to_string(id));
  }
  auto merged = MergeInto(fs, table, {RecordBatch::Make(schema, {source_ids.Finish(), source_names.Finish()}, 2).value()},
                          upsert);
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  ASSERT_EQ(merged->version, 4);

  std::map<std::string, std::vector<std::string>> read = RunSpark({"rowids:" + table});
  const std::vector<std::string>& rows = read["rowids:" + table];
  ASSERT_EQ(rows.size(), 8u);
  for (const std::string& row : rows) {
    simdjson::dom::parser parser;
    simdjson::dom::array values = parser.parse(simdjson::padded_string(row)).get_array().value();
    const int64_t id = values.at(0).get_int64().value();
    if (id == 50) {
      EXPECT_GE(values.at(1).get_int64().value(), 9) << row;  // a new id, above the mark before
      EXPECT_EQ(values.at(2).get_int64().value(), 4) << row;
      continue;
    }
    EXPECT_EQ(values.at(1).get_int64().value(), id) << row;  // ids follow the appends, file by file
    EXPECT_EQ(values.at(2).get_int64().value(), id == 2 ? 4 : id < 4 ? 0 : id < 7 ? 1 : 2) << row;
  }

  // Enabling it on a table that exists without it is refused: its rows would need their ids first.
  const std::string plain = dir.Join("plain");
  ASSERT_TRUE(WriteTable(fs, plain, {RecordBatch::Empty(schema)}).ok());
  auto alter = Transaction::Start(fs, plain);
  ASSERT_TRUE(alter.ok());
  Metadata enabled = Snapshot::Load(fs, plain).value()->metadata();
  enabled.configuration["delta.enableRowTracking"] = "true";
  EXPECT_EQ((*alter)->SetMetadata(enabled).status().error_class(), errors::kDeltaProtocolUnsupported);
}

}  // namespace
}  // namespace sluice::delta
