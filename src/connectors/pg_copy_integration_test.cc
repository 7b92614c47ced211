#include "sluice/connectors/pg_copy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "sluice/connectors/pg_connection.h"
#include "sluice/connectors/testing/postgres_fixture.h"
#include "sluice/core/builder.h"

namespace sluice::connectors {
namespace {

using testing::PostgresTestDatabase;

// Creates `t` with the columns PgColumnType gives for the batch, COPYs the batch in binary, and
// returns every row as PostgreSQL prints it (ordered by the first column).
testing::Rows CopyAndReadBack(PostgresTestDatabase& db, const BatchPtr& batch) {
  std::string ddl = "CREATE TABLE t (";
  for (int i = 0; i < batch->num_columns(); ++i) {
    if (i > 0) ddl += ", ";
    ddl += QuoteIdentifier(batch->field(i).name) + " " + PgColumnType(*batch->field(i).type);
  }
  EXPECT_TRUE(db.Execute(ddl + ")").ok());
  auto conn = PgConnection::Connect(db.connection_string());
  EXPECT_TRUE(conn.ok()) << conn.status().ToString();
  std::vector<int> columns(batch->num_columns());
  std::iota(columns.begin(), columns.end(), 0);
  std::vector<int64_t> rows(batch->num_rows());
  std::iota(rows.begin(), rows.end(), 0);
  std::string data;
  PgCopyEncoder encoder;
  PgCopyEncoder::AppendHeader(&data);
  encoder.AppendRows(*batch, columns, rows, &data);
  PgCopyEncoder::AppendTrailer(&data);
  EXPECT_TRUE((*conn)->BeginCopy("COPY t FROM STDIN (FORMAT binary)").ok());
  EXPECT_TRUE((*conn)->PutCopyData(data).ok());
  Status end = (*conn)->EndCopy();
  EXPECT_TRUE(end.ok()) << end.ToString();
  auto result = db.Query("SET TimeZone = 'UTC'; SELECT * FROM t ORDER BY 1");
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? *result : testing::Rows{};
}

TEST(PgCopyEncoder, WritesEveryScalarTypeExactly) {
  auto db = PostgresTestDatabase::Create();
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  TypePtr schema = *DataType::Struct({{"id", DataType::Integer()},
                                      {"flag", DataType::Boolean()},
                                      {"tiny", DataType::Byte()},
                                      {"small", DataType::Short()},
                                      {"big", DataType::Long()},
                                      {"f", DataType::Float()},
                                      {"d", DataType::Double()},
                                      {"s", DataType::String()},
                                      {"b", DataType::Binary()},
                                      {"day", DataType::Date()},
                                      {"ts", DataType::Timestamp()},
                                      {"ntz", DataType::TimestampNtz()}});
  auto builder = ColumnBuilder::Make(schema);
  auto* row = static_cast<StructBuilder*>(builder.get());
  auto add = [&](int id, bool flag, int8_t tiny, int16_t small, int64_t big, float f, double d, const char* s,
                 std::string_view b, int32_t day, int64_t ts) {
    static_cast<Int32Builder*>(row->field_builder(0))->Append(id);
    static_cast<BooleanBuilder*>(row->field_builder(1))->Append(flag);
    static_cast<Int8Builder*>(row->field_builder(2))->Append(tiny);
    static_cast<Int16Builder*>(row->field_builder(3))->Append(small);
    static_cast<Int64Builder*>(row->field_builder(4))->Append(big);
    static_cast<FloatBuilder*>(row->field_builder(5))->Append(f);
    static_cast<DoubleBuilder*>(row->field_builder(6))->Append(d);
    static_cast<BinaryBuilder*>(row->field_builder(7))->Append(s);
    static_cast<BinaryBuilder*>(row->field_builder(8))->Append(b);
    static_cast<Int32Builder*>(row->field_builder(9))->Append(day);
    static_cast<Int64Builder*>(row->field_builder(10))->Append(ts);
    static_cast<Int64Builder*>(row->field_builder(11))->Append(ts);
    row->Append();
  };
  add(1, true, -128, -32768, INT64_MIN, 1.5f, -0.25, "héllo \"quoted\"", std::string_view("\0\xff", 2), 0, 0);
  add(2, false, 127, 32767, INT64_MAX, NAN, INFINITY, "", "", -1, 1769853600123456);  // 2026-01-31 10:00:00.123456
  ColumnPtr rows = builder->Finish();
  auto batch = RecordBatch::Make(schema, rows->children, 2);
  ASSERT_TRUE(batch.ok());
  testing::Rows got = CopyAndReadBack(**db, *batch);
  EXPECT_EQ(got, (testing::Rows{
                     {"1", "t", "-128", "-32768", "-9223372036854775808", "1.5", "-0.25", "héllo \"quoted\"", "\\x00ff",
                      "1970-01-01", "1970-01-01 00:00:00+00", "1970-01-01 00:00:00"},
                     {"2", "f", "127", "32767", "9223372036854775807", "NaN", "Infinity", "", "\\x", "1969-12-31",
                      "2026-01-31 10:00:00.123456+00", "2026-01-31 10:00:00.123456"},
                 }));
}

TEST(PgCopyEncoder, WritesNumericsAtEveryScaleAndMagnitude) {
  auto db = PostgresTestDatabase::Create();
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  struct Case {
    int precision, scale;
    int128_t unscaled;
    const char* expected;
  };
  int128_t big = 0;  // 38 nines, the largest decimal(38,0)
  for (int i = 0; i < 38; ++i) big = big * 10 + 9;
  std::vector<Case> cases = {
      {10, 2, 0, "0.00"},        {10, 2, 1, "0.01"},          {10, 2, -123456, "-1234.56"},
      {18, 0, 10000, "10000"},   {18, 4, 1, "0.0001"},        {18, 5, 123456789, "1234.56789"},
      {38, 0, big, "99999999999999999999999999999999999999"}, {38, 0, -big, "-99999999999999999999999999999999999999"}, {38, 38, 1, "0.00000000000000000000000000000000000001"},
      {9, 9, -999999999, "-0.999999999"},
  };
  int id = 0;
  for (const Case& c : cases) {
    TypePtr type = *DataType::Decimal(c.precision, c.scale);
    TypePtr schema = *DataType::Struct({{"v", type}});
    DecimalBuilder values(type);
    values.Append(c.unscaled);
    values.AppendNull();
    auto batch = RecordBatch::Make(schema, {values.Finish()}, 2);
    ASSERT_TRUE(batch.ok());
    ASSERT_TRUE((*db)->Execute("DROP TABLE IF EXISTS t").ok());
    testing::Rows got = CopyAndReadBack(**db, *batch);
    EXPECT_EQ(got, (testing::Rows{{c.expected}, {"NULL"}})) << "case " << id;
    ++id;
  }
}

TEST(PgCopyEncoder, WritesNestedValuesAsJsonb) {
  auto db = PostgresTestDatabase::Create();
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  TypePtr inner = *DataType::Struct({{"name", DataType::String()}, {"tags", DataType::Array(DataType::Long())}});
  TypePtr schema = *DataType::Struct({{"id", DataType::Integer()}, {"doc", inner}});
  Int32Builder ids(DataType::Integer());
  StructBuilder docs(inner);
  ids.Append(1);
  static_cast<BinaryBuilder*>(docs.field_builder(0))->Append("a\"b");
  auto* tags = static_cast<ListBuilder*>(docs.field_builder(1));
  static_cast<Int64Builder*>(tags->element_builder())->Append(7);
  tags->Append();
  docs.Append();
  ids.Append(2);
  docs.AppendNull();
  auto batch = RecordBatch::Make(schema, {ids.Finish(), docs.Finish()}, 2);
  ASSERT_TRUE(batch.ok());
  testing::Rows got = CopyAndReadBack(**db, *batch);
  EXPECT_EQ(got, (testing::Rows{{"1", "{\"name\": \"a\\\"b\", \"tags\": [7]}"}, {"2", "NULL"}}));
}

TEST(PgCopyEncoder, WritesNaNAndInfinityInsideNestedValuesAsStringsLikeSparkToJson) {
  auto db = PostgresTestDatabase::Create();
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  TypePtr point = *DataType::Struct({{"x", DataType::Double()}, {"label", DataType::String()}});
  TypePtr schema = *DataType::Struct({{"id", DataType::Integer()},
                                      {"point", point},
                                      {"samples", DataType::Array(DataType::Array(DataType::Float()))},
                                      {"limits", DataType::Map(DataType::String(), DataType::Double())},
                                      {"readings", DataType::Array(DataType::Double())}});
  Int32Builder ids(DataType::Integer());
  StructBuilder points(point);
  ListBuilder samples(schema->field(2).type);
  ListBuilder limits(schema->field(3).type);
  ListBuilder readings(schema->field(4).type);
  auto add = [&](int id, double x, const char* label, std::vector<float> floats, const char* key, double limit) {
    ids.Append(id);
    static_cast<DoubleBuilder*>(points.field_builder(0))->Append(x);
    static_cast<BinaryBuilder*>(points.field_builder(1))->Append(label);
    points.Append();
    auto* sample = static_cast<ListBuilder*>(samples.element_builder());
    for (float f : floats) {
      static_cast<FloatBuilder*>(sample->element_builder())->Append(f);
      static_cast<DoubleBuilder*>(readings.element_builder())->Append(f);
    }
    sample->Append();
    samples.Append();
    readings.Append();
    static_cast<BinaryBuilder*>(limits.key_builder())->Append(key);
    static_cast<DoubleBuilder*>(limits.value_builder())->Append(limit);
    limits.Append();
  };
  // Labels and keys that look like the bare words stay as they were.
  add(1, NAN, "NaN", {INFINITY, -INFINITY, 1.5f}, "Infinity", -INFINITY);
  add(2, 2.5, "In \"NaN\" we trust", {-1.0f}, "-Infinity", 0.5);
  auto batch = RecordBatch::Make(
      schema, {ids.Finish(), points.Finish(), samples.Finish(), limits.Finish(), readings.Finish()}, 2);
  ASSERT_TRUE(batch.ok());
  testing::Rows got = CopyAndReadBack(**db, *batch);
  // An array of doubles is a double precision[], which holds them as they are.
  EXPECT_EQ(got, (testing::Rows{
                     {"1", R"({"x": "NaN", "label": "NaN"})", R"([["Infinity", "-Infinity", 1.5]])",
                      R"({"Infinity": "-Infinity"})", "{Infinity,-Infinity,1.5}"},
                     {"2", R"({"x": 2.5, "label": "In \"NaN\" we trust"})", "[[-1.0]]", R"({"-Infinity": 0.5})",
                      "{-1}"},
                 }));
  // The values read back as JSON strings, as Spark's from_json would accept them.
  EXPECT_EQ(*(*db)->Query("SELECT jsonb_typeof(point->'x'), jsonb_typeof(samples->0->0) FROM t WHERE id = 1"),
            (testing::Rows{{"string", "string"}}));
}

TEST(PgCopyEncoder, EncodesOnlyTheChosenRowsAndColumnsInOrder) {
  auto db = PostgresTestDatabase::Create();
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  TypePtr schema = *DataType::Struct({{"a", DataType::Long()}, {"b", DataType::String()}});
  Int64Builder a(DataType::Long());
  BinaryBuilder b(DataType::String());
  for (int i = 0; i < 5; ++i) {
    a.Append(i);
    b.Append("row" + std::to_string(i));
  }
  BatchPtr batch = *RecordBatch::Make(schema, {a.Finish(), b.Finish()}, 5);
  ASSERT_TRUE((*db)->Execute("CREATE TABLE t (b text, a bigint)").ok());
  auto conn = PgConnection::Connect((*db)->connection_string());
  ASSERT_TRUE(conn.ok());
  std::string data;
  PgCopyEncoder encoder;
  PgCopyEncoder::AppendHeader(&data);
  std::vector<int> columns = {1, 0};
  std::vector<int64_t> rows = {4, 1};
  encoder.AppendRows(*batch, columns, rows, &data);
  PgCopyEncoder::AppendTrailer(&data);
  ASSERT_TRUE((*conn)->BeginCopy("COPY t FROM STDIN (FORMAT binary)").ok());
  ASSERT_TRUE((*conn)->PutCopyData(data).ok());
  ASSERT_TRUE((*conn)->EndCopy().ok());
  EXPECT_EQ(*(*db)->Query("SELECT b, a FROM t ORDER BY a"), (testing::Rows{{"row1", "1"}, {"row4", "4"}}));
}

TEST(PgConnection, ReportsServerErrorsWithTheirSqlstate) {
  auto db = PostgresTestDatabase::Create();
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto conn = PgConnection::Connect((*db)->connection_string());
  ASSERT_TRUE(conn.ok());
  ASSERT_TRUE((*conn)->Execute("CREATE TABLE k (id int PRIMARY KEY)").ok());
  ASSERT_TRUE((*conn)->Query("INSERT INTO k VALUES ($1)", {std::string("1")}).ok());
  Status dup = (*conn)->Query("INSERT INTO k VALUES ($1)", {std::string("1")}).status();
  EXPECT_EQ(dup.error_class(), "PG_QUERY_FAILED");
  EXPECT_EQ((*conn)->last_sqlstate(), "23505");
  auto rows = (*conn)->Query("SELECT $1::text, $2::text", {std::string("x'; DROP TABLE k; --"), std::nullopt});
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ((*rows)[0][0], "x'; DROP TABLE k; --");
  EXPECT_FALSE((*rows)[0][1].has_value());
}

TEST(TableName, AcceptsOnlySimpleIdentifiers) {
  EXPECT_EQ(ParseTableName("orders")->Quoted(), "\"public\".\"orders\"");
  EXPECT_EQ(ParseTableName("Sales.Orders_2")->Quoted(), "\"Sales\".\"Orders_2\"");
  for (const char* hostile : {"", ".", "a.", ".b", "a.b.c", "1abc", "a-b", "a b", "a;drop table x", "\"a\"", "a.b\"",
                              "ünïcode"}) {
    EXPECT_EQ(ParseTableName(hostile).status().error_class(), "INVALID_ARGUMENT") << hostile;
  }
  EXPECT_FALSE(ParseTableName(std::string(64, 'a')).ok());
  EXPECT_EQ(QuoteIdentifier("we\"ird"), "\"we\"\"ird\"");
}

}  // namespace
}  // namespace sluice::connectors
