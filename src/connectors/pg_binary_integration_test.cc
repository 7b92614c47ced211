// Binary COPY decoding against a real PostgreSQL 15: each value read in binary equals what the
// server itself says the value is (its text, or its epoch offset computed by the server).
#include <gtest/gtest.h>

#include <algorithm>

#include "sluice/connectors/pg_batch_reader.h"
#include "sluice/connectors/pg_binary.h"
#include "sluice/connectors/testing/postgres_fixture.h"
#include "sluice/core/compute.h"

namespace sluice::connectors {
namespace {

using testing::PostgresTestDatabase;

class PgBinaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = PostgresTestDatabase::Create();
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(*db);
  }

  // Reads `query` and returns every row as FormatValue prints its columns, one string per row
  // with the columns joined by " | ".
  std::vector<std::string> Read(const std::string& query) {
    PgBatchReadOptions options;
    options.conninfo = db_->connection_string();
    options.query = query;
    auto batches = ReadPostgres(options);
    EXPECT_TRUE(batches.ok()) << batches.status().ToString();
    std::vector<std::string> rows;
    if (!batches.ok()) return rows;
    for (const auto& batch : *batches) {
      for (int64_t r = 0; r < batch->num_rows(); ++r) {
        std::string row;
        for (int c = 0; c < batch->num_columns(); ++c) row += (c ? " | " : "") + FormatValue(*batch->column(c), r);
        rows.push_back(std::move(row));
      }
    }
    return rows;
  }

  std::unique_ptr<PostgresTestDatabase> db_;
};

TEST_F(PgBinaryTest, NumericsAtEveryScaleAndMagnitudeEqualTheServersText) {
  // Each row: a value cast to a typmod, and the server's own text of it.
  const char* values[][2] = {
      {"0", "numeric(10,2)"},
      {"-0.01", "numeric(10,2)"},
      {"1234.56", "numeric(10,2)"},
      {"-98765432.1", "numeric(10,2)"},
      {"10000", "numeric(5,0)"},
      {"99999", "numeric(5,0)"},
      {"0.0001", "numeric(5,4)"},
      {"-0.1234567890123456789012345678901234567", "numeric(38,37)"},
      {"99999999999999999999999999999999999999", "numeric(38,0)"},
      {"-99999999999999999999999999999999999999", "numeric(38,0)"},
      {"1234567890123456789012345678.9012345678", "numeric(38,10)"},
      {"100000000.00000001", "numeric(20,8)"},
      {"7", "numeric(12,6)"},
  };
  // One row: each value in its typmod, then the server's text of it.
  std::string query = "SELECT ";
  std::string texts;
  for (size_t i = 0; i < std::size(values); ++i) {
    std::string cast = std::string("'") + values[i][0] + "'::" + values[i][1];
    query += cast + " AS v" + std::to_string(i) + ", ";
    texts += (i ? ", " : "") + cast + "::text AS t" + std::to_string(i);
  }
  auto rows = Read(query + texts);
  ASSERT_EQ(rows.size(), 1u);
  const size_t half = rows[0].size() / 2;
  EXPECT_EQ(rows[0].substr(0, half - 1), rows[0].substr(half + 2));
  EXPECT_EQ(rows[0].substr(0, 16), "0.00 | -0.01 | 1");
}

TEST_F(PgBinaryTest, NumericNaNAndNullsBecomeNull) {
  // A numeric with a typmod holds NaN but no infinity (the server refuses those).
  EXPECT_EQ(Read("SELECT v::numeric(10,2) AS v FROM (VALUES ('NaN'::numeric), (NULL), (1.5)) AS t(v)"),
            (std::vector<std::string>{"null", "null", "1.50"}));
}

TEST_F(PgBinaryTest, TimestampsAndDatesBefore2000And1970AndBeforeChristMatchTheServer) {
  // The server computes each value's offset from the Unix epoch; the binary read must agree.
  auto rows = Read(
      "SELECT ts, (extract(epoch FROM ts) * 1000000)::int8 AS ts_micros, ntz, "
      "(extract(epoch FROM ntz) * 1000000)::int8 AS ntz_micros, d, d - date '1970-01-01' AS d_days "
      "FROM (VALUES (timestamptz '1999-12-31 23:59:59.999999+00', timestamp '1999-12-31 23:59:59.999999', date '1999-12-31'),"
      "             (timestamptz '1969-07-20 20:17:40.5+00', timestamp '1969-07-20 20:17:40.5', date '1969-07-20'),"
      "             (timestamptz '0044-03-15 12:00:00+00 BC', timestamp '0044-03-15 12:00:00 BC', date '0044-03-15 BC'),"
      "             (timestamptz '2000-01-01 00:00:00+00', timestamp '2000-01-01 00:00:00', date '2000-01-01'),"
      "             (timestamptz '2262-04-11 23:47:16.854775+00', timestamp '9999-12-31 23:59:59', date '9999-12-31'))"
      " AS t(ts, ntz, d)");
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0],
            "1999-12-31T23:59:59.999999Z | 946684799999999 | 1999-12-31T23:59:59.999999 | 946684799999999 | "
            "1999-12-31 | 10956");
  EXPECT_EQ(rows[1], "1969-07-20T20:17:40.500000Z | -14182939500000 | 1969-07-20T20:17:40.500000 | -14182939500000 | "
                     "1969-07-20 | -165");
  EXPECT_EQ(rows[3], "2000-01-01T00:00:00Z | 946684800000000 | 2000-01-01T00:00:00 | 946684800000000 | 2000-01-01 | 10957");
  // Every row's binary value equals the server's epoch offset.
  PgBatchReadOptions options;
  options.conninfo = db_->connection_string();
  options.query =
      "SELECT ts, (extract(epoch FROM ts) * 1000000)::int8, d, d - date '1970-01-01' FROM "
      "(VALUES (timestamptz '0044-03-15 12:00:00+00 BC', date '0044-03-15 BC'), "
      "(timestamptz '2262-04-11 23:47:16.854775+00', date '9999-12-31')) AS t(ts, d)";
  auto batches = ReadPostgres(options);
  ASSERT_TRUE(batches.ok()) << batches.status().ToString();
  const RecordBatch& batch = *(*batches)[0];
  for (int64_t r = 0; r < batch.num_rows(); ++r) {
    EXPECT_EQ(batch.column(0)->Value<int64_t>(r), batch.column(1)->Value<int64_t>(r));
    EXPECT_EQ(batch.column(2)->Value<int32_t>(r), batch.column(3)->Value<int32_t>(r));
  }
}

TEST_F(PgBinaryTest, InfinitiesOfDatesAndTimestampsBecomeNull) {
  EXPECT_EQ(Read("SELECT timestamptz 'infinity' AS a, timestamp '-infinity' AS b, date 'infinity' AS c, "
                 "date '-infinity' AS d"),
            (std::vector<std::string>{"null | null | null | null"}));
}

TEST_F(PgBinaryTest, NullsOfEveryTypeStayNull) {
  EXPECT_EQ(Read("SELECT NULL::boolean AS c1, NULL::smallint AS c2, NULL::int AS c3, NULL::bigint AS c4, "
                 "NULL::real AS c5, NULL::float8 AS c6, NULL::numeric(10,2) AS c7, NULL::numeric AS c8, "
                 "NULL::text AS c9, NULL::varchar(3) AS c10, NULL::char(2) AS c11, NULL::bytea AS c12, "
                 "NULL::date AS c13, NULL::timestamp AS c14, NULL::timestamptz AS c15, NULL::json AS c16, "
                 "NULL::jsonb AS c17, NULL::uuid AS c18, NULL::int[] AS c19"),
            (std::vector<std::string>{
                "null | null | null | null | null | null | null | null | null | null | null | null | null | null | "
                "null | null | null | null | null"}));
}

TEST_F(PgBinaryTest, TextFormsMatchTheServersTextForEveryStringMappedType) {
  ASSERT_TRUE(db_->Execute("CREATE TYPE mood AS ENUM ('sad', 'happy')").ok());
  // uuid and jsonb are decoded from binary; interval, an enum's array and unbounded numeric are cast
  // to text.
  auto rows = Read(
      "SELECT u, u::text AS ut, jb, jb::text AS jbt, m, m::text AS mt, i, i::text AS it, a, a::text AS at, n, "
      "n::text AS nt, c, c::text || '|' AS ct FROM "
      "(VALUES ('A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'::uuid, '{\"b\": [1, 2.50], \"a\": null}'::jsonb, 'happy'::mood, "
      "interval '1 day 02:03:04', ARRAY['happy'::mood, NULL], 'NaN'::numeric, 'ab'::char(4))) AS t(u, jb, m, i, a, n, c)");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0],
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11 | a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11 | {\"a\": null, \"b\": [1, 2.50]} | "
            "{\"a\": null, \"b\": [1, 2.50]} | happy | happy | 1 day 02:03:04 | 1 day 02:03:04 | {happy,NULL} | "
            "{happy,NULL} | NaN | NaN | ab   | ab|");
}

TEST_F(PgBinaryTest, PartitionedReadsCastTheSameColumnsAsASingleRead) {
  ASSERT_TRUE(db_->Execute("CREATE TABLE t AS SELECT g AS k, ARRAY[g, g + 1] AS pair, g * interval '1 minute' AS span "
                           "FROM generate_series(1, 100) g").ok());
  PgBatchReadOptions options;
  options.conninfo = db_->connection_string();
  options.dbtable = "t";
  options.partition_column = "k";
  options.lower_bound = 1;
  options.upper_bound = 101;
  options.num_partitions = 3;
  auto batches = ReadPostgres(options);
  ASSERT_TRUE(batches.ok()) << batches.status().ToString();
  std::vector<std::string> rows;
  for (const auto& batch : *batches) {
    for (int64_t r = 0; r < batch->num_rows(); ++r) {
      rows.push_back(FormatValue(*batch->column(0), r) + " " + FormatValue(*batch->column(1), r) + " " +
                     FormatValue(*batch->column(2), r));
    }
  }
  std::sort(rows.begin(), rows.end());
  EXPECT_EQ(rows, (std::vector<std::string>(Read("SELECT k::text || ' ' || array_to_json(pair)::text || ' ' || span::text AS row FROM t "
                                                 "ORDER BY (k::text || ' ' || array_to_json(pair)::text || ' ' || "
                                                 "span::text) COLLATE \"C\""))));
}

TEST_F(PgBinaryTest, BatchesLargerThanTheInitialRoomKeepEveryValueAndNull) {
  // 70000 rows in one batch: the columns outgrow their first 65536 rows of room; nulls before
  // and after that point stay where they are.
  PgBatchReadOptions options;
  options.conninfo = db_->connection_string();
  options.query = "SELECT g::bigint AS id, CASE WHEN g IN (3, 69999) THEN NULL ELSE g * 2 END AS twice, "
                  "CASE WHEN g = 5 THEN NULL ELSE (g / 4.0)::numeric(10,2) END AS quarter "
                  "FROM generate_series(1, 70000) g ORDER BY g";
  options.batch_size = 100000;
  auto batches = ReadPostgres(options);
  ASSERT_TRUE(batches.ok()) << batches.status().ToString();
  ASSERT_EQ(batches->size(), 1u);
  const RecordBatch& batch = *(*batches)[0];
  ASSERT_EQ(batch.num_rows(), 70000);
  EXPECT_TRUE(batch.column(0)->Validate().ok());
  EXPECT_TRUE(batch.column(1)->Validate().ok());
  EXPECT_EQ(batch.column(1)->null_count, 2);
  EXPECT_EQ(batch.column(2)->null_count, 1);
  for (int64_t r : {0, 2, 4, 65535, 65536, 69998, 69999}) {
    EXPECT_EQ(batch.column(0)->Value<int64_t>(r), r + 1);
    EXPECT_EQ(batch.column(1)->IsNull(r), r == 2 || r == 69998) << r;
    EXPECT_EQ(FormatValue(*batch.column(1), r), r == 2 || r == 69998 ? "null" : std::to_string(2 * (r + 1)));
    EXPECT_EQ(batch.column(2)->IsNull(r), r == 4) << r;
  }
  EXPECT_EQ(FormatValue(*batch.column(2), 69999), "17500.00");
}

TEST(PgBinaryDecoding, RejectsBytesOfTheWrongLengthOrOutOfRange) {
  auto ints = ColumnBuilder::Make(DataType::Integer());
  EXPECT_EQ(AppendPgBinary(PgBinaryKind::kInt4, 0, std::string_view("\0\0\1", 3), ints.get()).error_class(),
            "INVALID_ARGUMENT");
  auto flags = ColumnBuilder::Make(DataType::Boolean());
  EXPECT_FALSE(AppendPgBinary(PgBinaryKind::kBool, 0, std::string_view("\2", 1), flags.get()).ok());
  auto decimals = ColumnBuilder::Make(*DataType::Decimal(10, 2));
  // ndigits 2 but only one digit present.
  EXPECT_FALSE(AppendPgBinary(PgBinaryKind::kNumeric, 2, std::string_view("\0\2\0\0\0\0\0\2\0\1", 10), decimals.get()).ok());
  // 0.001 does not fit scale 2.
  EXPECT_FALSE(AppendPgBinary(PgBinaryKind::kNumeric, 2, std::string_view("\0\1\xff\xff\0\0\0\3\0\x0a", 10),
                              decimals.get()).ok());
  // A digit above 9999.
  EXPECT_FALSE(AppendPgBinary(PgBinaryKind::kNumeric, 2, std::string_view("\0\1\0\0\0\0\0\2\x27\x10", 10),
                              decimals.get()).ok());
  // 10^40 does not fit 38 digits.
  EXPECT_FALSE(AppendPgBinary(PgBinaryKind::kNumeric, 0, std::string_view("\0\1\0\x0a\0\0\0\0\0\1", 10),
                              decimals.get()).ok());
  auto jsonb = ColumnBuilder::Make(DataType::String());
  EXPECT_FALSE(AppendPgBinary(PgBinaryKind::kJsonb, 0, std::string_view("\2{}", 3), jsonb.get()).ok());
  EXPECT_FALSE(AppendPgBinary(PgBinaryKind::kUuid, 0, std::string_view("0123456789abcde"), jsonb.get()).ok());
  EXPECT_EQ(ints->length() + flags->length() + decimals->length() + jsonb->length(), 0);
}

}  // namespace
}  // namespace sluice::connectors
