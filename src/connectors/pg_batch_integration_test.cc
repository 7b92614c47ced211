#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <set>
#include <thread>

#include "sluice/connectors/pg_batch_reader.h"
#include "sluice/connectors/pg_batch_writer.h"
#include "sluice/connectors/pg_connection.h"
#include "sluice/connectors/pg_types.h"
#include "sluice/connectors/pg_upsert_writer.h"
#include "sluice/connectors/testing/postgres_fixture.h"
#include "sluice/core/builder.h"
#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"

namespace sluice::connectors {
namespace {

using testing::PostgresTestDatabase;
using TextRows = std::vector<std::vector<std::string>>;

// Every value of every batch as FormatValue prints it, rows in the order read.
TextRows Format(const std::vector<BatchPtr>& batches) {
  TextRows rows;
  for (const auto& batch : batches) {
    for (int64_t r = 0; r < batch->num_rows(); ++r) {
      std::vector<std::string> row;
      for (int c = 0; c < batch->num_columns(); ++c) row.push_back(FormatValue(*batch->column(c), r));
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

TextRows Sorted(TextRows rows) {
  std::sort(rows.begin(), rows.end());
  return rows;
}

class PgBatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = PostgresTestDatabase::Create();
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(*db);
  }
  void Run(std::string_view sql) {
    Status status = db_->Execute(sql);
    ASSERT_TRUE(status.ok()) << status.ToString();
  }
  PgBatchReadOptions Query(std::string query) {
    PgBatchReadOptions options;
    options.conninfo = db_->connection_string();
    options.query = std::move(query);
    return options;
  }
  PgBatchReadOptions Table(std::string table) {
    PgBatchReadOptions options;
    options.conninfo = db_->connection_string();
    options.dbtable = std::move(table);
    return options;
  }
  PgBatchWriteOptions Write(std::string table, PgWriteMode mode) {
    return PgBatchWriteOptions{db_->connection_string(), std::move(table), mode};
  }
  std::string Count(std::string_view table) { return *db_->QueryValue("SELECT count(*) FROM " + std::string(table)); }

  std::unique_ptr<PostgresTestDatabase> db_;
};

// Rows (id, name) with ids first..first+count-1 and names "name<id>".
BatchPtr People(int64_t first, int64_t count) {
  TypePtr schema = *DataType::Struct({{"id", DataType::Long()}, {"name", DataType::String()}});
  Int64Builder ids(DataType::Long());
  BinaryBuilder names(DataType::String());
  for (int64_t i = first; i < first + count; ++i) {
    ids.Append(i);
    names.Append("name" + std::to_string(i));
  }
  return *RecordBatch::Make(schema, {ids.Finish(), names.Finish()}, count);
}

TEST_F(PgBatchTest, ReadsEveryMappedTypeExactly) {
  Run("CREATE TYPE mood AS ENUM ('sad', 'happy')");
  Run(R"(CREATE TABLE every (
         id int, flag boolean, small smallint, big bigint, r real, d double precision,
         price numeric(10,2), free numeric, huge numeric(50,0), s text, v varchar(10), c char(3),
         b bytea, day date, ntz timestamp, ts timestamptz, j json, jb jsonb, u uuid,
         ints int[], texts text[], m mood))");
  Run(R"(INSERT INTO every VALUES
         (1, true, -32768, -9223372036854775808, 1.5, -0.25, 1234.56, 'NaN', 12345678901234567890123456789012345678901234567890,
          E'tab\there\nnew line \\ back', 'héllo', 'ab', '\x00ff5c09', '2026-01-31', '2026-01-31 10:00:00.123456',
          '2026-01-31 12:00:00.5+02', '{"a": [1, "x\ty"]}', '{"b": 2, "a": 1}', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
          '{1,NULL,3}', '{"x y","q\"t",NULL}', 'happy'),
         (2, NULL, NULL, NULL, 'NaN', '-Infinity', 'NaN', 0.000001, NULL, '', NULL, NULL, '\x', '-infinity', NULL,
          NULL, NULL, NULL, NULL, '{}', NULL, NULL))");
  auto reader = PgBatchReader::Open(Table("every"));
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  EXPECT_EQ((*reader)->schema()->ToString(),
            "struct<id:int,flag:boolean,small:smallint,big:bigint,r:float,d:double,price:decimal(10,2),free:string,"
            "huge:string,s:string,v:string,c:string,b:binary,day:date,ntz:timestamp_ntz,ts:timestamp,j:string,"
            "jb:string,u:string,ints:array<int>,texts:array<string>,m:string>");
  auto batches = ReadPostgres(Query("SELECT * FROM every ORDER BY id"));
  ASSERT_TRUE(batches.ok()) << batches.status().ToString();
  EXPECT_EQ(Format(*batches),
            (TextRows{{"1", "true", "-32768", "-9223372036854775808", "1.5", "-0.25", "1234.56", "NaN",
                       "12345678901234567890123456789012345678901234567890", "tab\there\nnew line \\ back", "héllo",
                       "ab ", "AP9cCQ==", "2026-01-31", "2026-01-31T10:00:00.123456", "2026-01-31T10:00:00.500000Z",
                       "{\"a\": [1, \"x\\ty\"]}", "{\"a\": 1, \"b\": 2}", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
                       "[1,null,3]", "[\"x y\",\"q\\\"t\",null]", "happy"},
                      {"2", "null", "null", "null", "NaN", "-Infinity", "null", "0.000001", "null", "", "null",
                       "null", "", "null", "null", "null", "null", "null", "null", "[]", "null", "null"}}));
}

TEST_F(PgBatchTest, QueryRunsEntirelyInTheDatabase) {
  Run("CREATE TABLE t (id int, v text)");
  Run("INSERT INTO t VALUES (1, 'one'), (2, '2'), (3, '3'), (4, 'four')");
  // Casting v to int fails for 'one' and 'four': the read succeeds only if the WHERE ran first,
  // at the source. The statement the server ran reports its own text from pg_stat_activity.
  std::string query =
      "SELECT id, v::int AS n, (SELECT query FROM pg_stat_activity WHERE pid = pg_backend_pid()) AS sent "
      "FROM t WHERE v ~ '^[0-9]+$' ORDER BY id";
  auto batches = ReadPostgres(Query(query));
  ASSERT_TRUE(batches.ok()) << batches.status().ToString();
  std::string sent = "COPY (" + query + ") TO STDOUT (FORMAT binary)";
  EXPECT_EQ(Format(*batches), (TextRows{{"2", "2", sent}, {"3", "3", sent}}));
}

TEST_F(PgBatchTest, SplitsLargeResultsIntoBatchesOfTheConfiguredSize) {
  Run("CREATE TABLE t AS SELECT g AS id FROM generate_series(1, 2500) g");
  PgBatchReadOptions options = Query("SELECT id FROM t ORDER BY id");
  options.batch_size = 1000;
  auto batches = ReadPostgres(options);
  ASSERT_TRUE(batches.ok()) << batches.status().ToString();
  ASSERT_EQ(batches->size(), 3u);
  EXPECT_EQ((*batches)[0]->num_rows(), 1000);
  EXPECT_EQ((*batches)[2]->num_rows(), 500);
  EXPECT_EQ(FormatValue(*(*batches)[2]->column(0), 499), "2500");
}

TEST_F(PgBatchTest, BatchesDroppedAsTheyComeLeaveNothingOfTheirValuesInLaterOnes) {
  // Text of varying length and nulls in both a fixed-width and a text column, so that a batch
  // filled in the buffers of a dropped one shows any stale byte, length or null.
  Run("CREATE TABLE t AS SELECT g AS id, CASE WHEN g % 7 = 0 THEN NULL ELSE g * 3 END AS n, "
      "CASE WHEN g % 5 = 0 THEN NULL ELSE repeat('x', g % 13) || g END AS s FROM generate_series(1, 5000) g");
  PgBatchReadOptions options = Query("SELECT id, n, s FROM t ORDER BY id");
  options.batch_size = 300;
  auto reader = PgBatchReader::Open(options);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  int64_t next_id = 1;
  Status read = (*reader)->Read([&](BatchPtr batch) {
    for (int64_t r = 0; r < batch->num_rows(); ++r, ++next_id) {
      const std::string id = std::to_string(next_id);
      EXPECT_EQ(FormatValue(*batch->column(0), r), id);
      EXPECT_EQ(FormatValue(*batch->column(1), r), next_id % 7 == 0 ? "null" : std::to_string(next_id * 3));
      EXPECT_EQ(FormatValue(*batch->column(2), r), next_id % 5 == 0 ? "null" : std::string(next_id % 13, 'x') + id);
    }
    return Status::OK();  // the batch dies here, its buffers free for the next ones
  });
  ASSERT_TRUE(read.ok()) << read.ToString();
  EXPECT_EQ(next_id, 5001);
}

TEST_F(PgBatchTest, PartitionedReadEqualsSingleReadUnderOneSnapshot) {
  // Keys below, inside and above the bounds, and nulls.
  Run("CREATE TABLE t AS SELECT g AS id, CASE WHEN g % 50 = 0 THEN NULL ELSE g - 200 END AS k, md5(g::text) AS v "
      "FROM generate_series(1, 3000) g");
  std::string query = "SELECT id, k, v, pg_current_snapshot()::text AS snap FROM t";
  PgBatchReadOptions partitioned = Query(query);
  partitioned.partition_column = "k";
  partitioned.lower_bound = 0;
  partitioned.upper_bound = 1000;
  partitioned.num_partitions = 4;
  partitioned.batch_size = 256;
  auto reader = PgBatchReader::Open(partitioned);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  ASSERT_EQ((*reader)->partition_queries().size(), 4u);
  EXPECT_NE((*reader)->partition_queries()[0].find("\"k\" < 250 OR \"k\" IS NULL"), std::string::npos);
  EXPECT_NE((*reader)->partition_queries()[3].find("\"k\" >= 750"), std::string::npos);
  std::vector<BatchPtr> parts;
  Status read = (*reader)->Read([&](BatchPtr batch) {
    parts.push_back(std::move(batch));
    return Status::OK();
  });
  ASSERT_TRUE(read.ok()) << read.ToString();
  TextRows partitioned_rows = Format(parts);
  std::set<std::string> snapshots;
  for (auto& row : partitioned_rows) {
    snapshots.insert(row.back());
    row.pop_back();
  }
  EXPECT_EQ(snapshots.size(), 1u);

  auto single = ReadPostgres(Table("t"));
  ASSERT_TRUE(single.ok()) << single.status().ToString();
  TextRows single_rows = Format(*single);
  ASSERT_EQ(single_rows.size(), 3000u);
  EXPECT_EQ(Sorted(partitioned_rows), Sorted(single_rows));
}

TEST_F(PgBatchTest, ATableSplitByBlockRangesReadsEveryRowOnceUnderOneSnapshot) {
  // Rows of several sizes over many blocks, with dead tuples in the middle ones.
  Run("CREATE TABLE wide AS SELECT g AS id, repeat(md5(g::text), 1 + g % 7) AS v FROM generate_series(1, 20000) g");
  Run("DELETE FROM wide WHERE id % 13 = 0");
  auto single = ReadPostgres(Table("wide"));
  ASSERT_TRUE(single.ok()) << single.status().ToString();
  const TextRows expected = Sorted(Format(*single));
  ASSERT_EQ(expected.size(), 20000u - 20000u / 13);

  for (int partitions : {2, 3, 4, 7}) {
    PgBatchReadOptions options = Table("wide");
    options.num_partitions = partitions;
    options.batch_size = 1000;
    auto reader = PgBatchReader::Open(options);
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    const std::vector<std::string>& queries = (*reader)->partition_queries();
    ASSERT_EQ(queries.size(), static_cast<size_t>(partitions));
    EXPECT_NE(queries.front().find("WHERE ctid < '("), std::string::npos) << queries.front();
    EXPECT_EQ(queries.back().find("ctid <"), std::string::npos) << "the last range is open: " << queries.back();
    // Rows added while the ranges are read are not part of the read (one snapshot), even in new
    // blocks past the last range's start.
    std::vector<BatchPtr> parts;
    bool inserted = false;
    Status read = (*reader)->Read([&](BatchPtr batch) {
      if (!inserted) {
        Run("INSERT INTO wide SELECT g, 'late' FROM generate_series(30001, 32000) g");
        inserted = true;
      }
      parts.push_back(std::move(batch));
      return Status::OK();
    });
    ASSERT_TRUE(read.ok()) << read.ToString();
    EXPECT_EQ(Sorted(Format(parts)), expected) << partitions << " ranges";
    Run("DELETE FROM wide WHERE id > 30000");
  }

  // A table of one block is one range; a query is not split without a partition column.
  Run("CREATE TABLE tiny AS SELECT 1 AS id");
  PgBatchReadOptions tiny = Table("tiny");
  tiny.num_partitions = 4;
  auto reader = PgBatchReader::Open(tiny);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  EXPECT_EQ((*reader)->partition_queries().size(), 1u);
  PgBatchReadOptions query = Query("SELECT * FROM wide");
  query.num_partitions = 4;
  Status refused = PgBatchReader::Open(query).status();
  EXPECT_EQ(refused.error_class(), "INVALID_OPTIONS");
  EXPECT_NE(refused.message().find("block ranges"), std::string::npos) << refused.ToString();
}

// A split read taken a few partitions at a time: the calls together read every row once under
// the first call's snapshot; a reader given the block count of an earlier one splits the table
// into the same ranges even after the table grew.
TEST_F(PgBatchTest, PartitionsReadAFewAtATimeAreOneSnapshotAndTheSameRangesAgain) {
  Run("CREATE TABLE wide AS SELECT g AS id, repeat(md5(g::text), 1 + g % 5) AS v FROM generate_series(1, 20000) g");
  const TextRows expected = Sorted(Format(*ReadPostgres(Table("wide"))));
  PgBatchReadOptions options = Table("wide");
  options.num_partitions = 5;
  options.batch_size = 700;
  auto reader = PgBatchReader::Open(options);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  ASSERT_EQ((*reader)->partition_count(), 5u);
  ASSERT_TRUE((*reader)->table_blocks().has_value());
  const int64_t blocks = *(*reader)->table_blocks();
  std::vector<BatchPtr> parts;
  auto keep = [&](BatchPtr batch) {
    parts.push_back(std::move(batch));
    return Status::OK();
  };
  for (auto [begin, end] : std::vector<std::pair<size_t, size_t>>{{0, 2}, {2, 3}, {3, 5}}) {
    ASSERT_TRUE((*reader)->ReadPartitions(begin, end, keep).ok()) << begin;
    // Changes between the calls are not part of the read.
    Run("INSERT INTO wide SELECT g, 'late' FROM generate_series(" + std::to_string(30000 + begin * 1000) + ", " +
        std::to_string(30000 + begin * 1000 + 999) + ") g");
    Run("DELETE FROM wide WHERE id = " + std::to_string(begin + 1));
  }
  EXPECT_EQ(Sorted(Format(parts)), expected);
  EXPECT_EQ((*reader)->ReadPartitions(4, 6, keep).error_class(), "INVALID_ARGUMENT");

  // The same ranges from the block count, though the table has grown since.
  PgBatchReadOptions again = options;
  again.table_blocks = blocks;
  auto same = PgBatchReader::Open(again);
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  EXPECT_EQ((*same)->partition_queries(), (*reader)->partition_queries());
  EXPECT_EQ((*same)->table_blocks(), blocks);
  auto grown = PgBatchReader::Open(options);
  ASSERT_TRUE(grown.ok());
  EXPECT_GT(*(*grown)->table_blocks(), blocks);
  EXPECT_NE((*grown)->partition_queries(), (*reader)->partition_queries());
  // A read that is not split has one partition and no block count.
  auto whole = PgBatchReader::Open(Table("wide"));
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ((*whole)->partition_count(), 1u);
  EXPECT_FALSE((*whole)->table_blocks().has_value());
}

TEST_F(PgBatchTest, RefusesBadReadOptions) {
  PgBatchReadOptions both = Query("SELECT 1");
  both.dbtable = "t";
  EXPECT_EQ(PgBatchReader::Open(both).status().error_class(), "INVALID_OPTIONS");
  PgBatchReadOptions neither = Query("SELECT 1");
  neither.query.reset();
  EXPECT_EQ(PgBatchReader::Open(neither).status().error_class(), "INVALID_OPTIONS");
  EXPECT_EQ(PgBatchReader::Open(Table("t; DROP TABLE x")).status().error_class(), "INVALID_ARGUMENT");
  PgBatchReadOptions half = Table("t");
  half.partition_column = "id";
  EXPECT_EQ(PgBatchReader::Open(half).status().error_class(), "INVALID_OPTIONS");
  PgBatchReadOptions hostile_column = Table("t");
  hostile_column.partition_column = "id) OR (1=1";
  hostile_column.lower_bound = 0;
  hostile_column.upper_bound = 10;
  EXPECT_EQ(PgBatchReader::Open(hostile_column).status().error_class(), "INVALID_ARGUMENT");
}

TEST_F(PgBatchTest, MissingTableAndBadCredentialsAreClearErrors) {
  Status missing = PgBatchReader::Open(Table("no_such_table")).status();
  EXPECT_EQ(missing.error_class(), "PG_QUERY_FAILED");
  EXPECT_NE(missing.message().find("\"public.no_such_table\" does not exist"), std::string::npos) << missing.ToString();

  PgBatchReadOptions stranger = Table("t");
  stranger.conninfo += " user=no_such_role";
  Status refused = PgBatchReader::Open(stranger).status();
  EXPECT_EQ(refused.error_class(), "PG_CONNECTION_FAILED");
  EXPECT_NE(refused.message().find("no_such_role"), std::string::npos) << refused.ToString();

  Status write_refused = WritePostgres(PgBatchWriteOptions{stranger.conninfo, "t", PgWriteMode::kAppend},
                                       People(0, 1)->schema(), {People(0, 1)});
  EXPECT_EQ(write_refused.error_class(), "PG_CONNECTION_FAILED");
}

TEST_F(PgBatchTest, AppendCreatesTheTableThenAddsRows) {
  BatchPtr first = People(0, 100);
  ASSERT_TRUE(WritePostgres(Write("sales.people", PgWriteMode::kAppend), first->schema(), {first}).ok() == false);
  Run("CREATE SCHEMA sales");
  Status created = WritePostgres(Write("sales.people", PgWriteMode::kAppend), first->schema(), {first, People(100, 50)});
  ASSERT_TRUE(created.ok()) << created.ToString();
  Status appended = WritePostgres(Write("sales.people", PgWriteMode::kAppend), first->schema(), {People(150, 10)});
  ASSERT_TRUE(appended.ok()) << appended.ToString();
  EXPECT_EQ(Count("sales.people"), "160");
  EXPECT_EQ(*db_->QueryValue("SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = "
                             "'sales.people'::regclass AND attname = 'id'"),
            "bigint");
  EXPECT_EQ(*db_->QueryValue("SELECT name FROM sales.people WHERE id = 159"), "name159");
}

TEST_F(PgBatchTest, ErrorIfExistsAndIgnoreLeaveAnExistingTableAlone) {
  BatchPtr rows = People(0, 10);
  ASSERT_TRUE(WritePostgres(Write("people", PgWriteMode::kErrorIfExists), rows->schema(), {rows}).ok());
  EXPECT_EQ(Count("people"), "10");
  Status exists = WritePostgres(Write("people", PgWriteMode::kErrorIfExists), rows->schema(), {rows});
  EXPECT_EQ(exists.error_class(), "PG_TABLE_ALREADY_EXISTS");
  auto ignoring = PgBatchWriter::Open(Write("people", PgWriteMode::kIgnore), rows->schema());
  ASSERT_TRUE(ignoring.ok()) << ignoring.status().ToString();
  EXPECT_TRUE((*ignoring)->skipped());
  ASSERT_TRUE((*ignoring)->Write(*rows).ok());
  ASSERT_TRUE((*ignoring)->Commit().ok());
  EXPECT_EQ(Count("people"), "10");
  ASSERT_TRUE(WritePostgres(Write("fresh", PgWriteMode::kIgnore), rows->schema(), {rows}).ok());
  EXPECT_EQ(Count("fresh"), "10");
}

TEST_F(PgBatchTest, AnUncommittedOrFailedWriteLeavesNothing) {
  BatchPtr rows = People(0, 10);
  {
    auto writer = PgBatchWriter::Open(Write("people", PgWriteMode::kAppend), rows->schema());
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    ASSERT_TRUE((*writer)->Write(*rows).ok());
  }
  EXPECT_EQ(*db_->QueryValue("SELECT to_regclass('people') IS NULL"), "t");
  Run("CREATE TABLE people (id bigint PRIMARY KEY, name text)");
  Status duplicate = WritePostgres(Write("people", PgWriteMode::kAppend), rows->schema(), {rows, People(5, 1)});
  EXPECT_EQ(duplicate.error_class(), "PG_QUERY_FAILED");
  EXPECT_EQ(Count("people"), "0");
  BatchPtr other = RecordBatch::Empty(*DataType::Struct({{"x", DataType::Integer()}}));
  auto writer = PgBatchWriter::Open(Write("people", PgWriteMode::kAppend), rows->schema());
  ASSERT_TRUE(writer.ok());
  EXPECT_EQ((*writer)->Write(*other).error_class(), "DATATYPE_MISMATCH");
  EXPECT_EQ(ParsePgWriteMode("Overwrite").value(), PgWriteMode::kOverwrite);
  EXPECT_EQ(ParsePgWriteMode("upsert").status().error_class(), "INVALID_OPTIONS");
}

TEST_F(PgBatchTest, WritesBatchesOfManyChunksWholeAndAFailureWhileChunksAreSentLeavesNothing) {
  // 10000 rows travel as three COPY chunks, sent while the next is encoded.
  ASSERT_TRUE(WritePostgres(Write("people", PgWriteMode::kAppend), People(0, 1)->schema(), {People(1, 10000)}).ok());
  EXPECT_EQ(*db_->QueryValue("SELECT count(*) || ' ' || sum(id) || ' ' || min(name) || ' ' || max(id) FROM people"),
            "10000 50005000 name1 10000");
  EXPECT_EQ(*db_->QueryValue("SELECT name FROM people WHERE id = 9000"), "name9000");
  // The second batch repeats a key in its first chunk: the server fails the COPY while the
  // remaining chunks are still being sent, and nothing of the transaction stays.
  Run("CREATE TABLE keyed (id bigint PRIMARY KEY, name text)");
  Status failed =
      WritePostgres(Write("keyed", PgWriteMode::kAppend), People(0, 1)->schema(), {People(1, 3), People(1, 20000)});
  EXPECT_EQ(failed.error_class(), "PG_QUERY_FAILED") << failed.ToString();
  EXPECT_EQ(Count("keyed"), "0");
}

TEST_F(PgBatchTest, OverwriteKeepsTheTableAndItsIndexes) {
  BatchPtr rows = People(0, 10);
  ASSERT_TRUE(WritePostgres(Write("people", PgWriteMode::kOverwrite), rows->schema(), {rows}).ok());
  EXPECT_EQ(Count("people"), "10");
  Run("CREATE UNIQUE INDEX people_id ON people (id); CREATE VIEW named AS SELECT name FROM people");
  Status replaced = WritePostgres(Write("people", PgWriteMode::kOverwrite), rows->schema(), {People(100, 3)});
  ASSERT_TRUE(replaced.ok()) << replaced.ToString();
  EXPECT_EQ(*db_->Query("SELECT name FROM named ORDER BY 1"),
            (testing::Rows{{"name100"}, {"name101"}, {"name102"}}));
  Status duplicate = WritePostgres(Write("people", PgWriteMode::kOverwrite), rows->schema(), {rows, rows});
  EXPECT_EQ(duplicate.error_class(), "PG_QUERY_FAILED");
  EXPECT_EQ(Count("people"), "3");
}

TEST_F(PgBatchTest, ConcurrentReadersNeverSeeAnEmptyOrPartialTableDuringOverwrite) {
  constexpr int64_t kSmall = 20000, kLarge = 30000;
  BatchPtr small = People(0, kSmall);
  ASSERT_TRUE(WritePostgres(Write("people", PgWriteMode::kOverwrite), small->schema(), {small}).ok());
  std::atomic<bool> done{false};
  std::set<std::string> seen;
  int64_t polls = 0;
  std::thread reader([&] {
    auto conn = PgConnection::Connect(db_->connection_string());
    if (!conn.ok()) return;
    while (!done.load()) {
      auto count = (*conn)->Query("SELECT count(*) FROM people");
      seen.insert(count.ok() ? *(*count)[0][0] : count.status().ToString());
      ++polls;
    }
  });
  for (int round = 0; round < 6; ++round) {
    std::vector<BatchPtr> batches;
    int64_t rows = round % 2 == 0 ? kLarge : kSmall;
    for (int64_t first = 0; first < rows; first += 5000) batches.push_back(People(first, 5000));
    Status status = WritePostgres(Write("people", PgWriteMode::kOverwrite), small->schema(), batches);
    ASSERT_TRUE(status.ok()) << status.ToString();
  }
  done = true;
  reader.join();
  EXPECT_GT(polls, 10);
  std::set<std::string> allowed = {std::to_string(kSmall), std::to_string(kLarge)};
  for (const auto& count : seen) EXPECT_TRUE(allowed.count(count)) << "a reader saw " << count;
}

TEST_F(PgBatchTest, WrittenValuesReadBackAsTheSameTypesAndValues) {
  TypePtr schema = *DataType::Struct({{"flag", DataType::Boolean()},
                                      {"small", DataType::Short()},
                                      {"i", DataType::Integer()},
                                      {"big", DataType::Long()},
                                      {"f", DataType::Float()},
                                      {"d", DataType::Double()},
                                      {"price", *DataType::Decimal(12, 3)},
                                      {"s", DataType::String()},
                                      {"b", DataType::Binary()},
                                      {"day", DataType::Date()},
                                      {"ts", DataType::Timestamp()},
                                      {"ntz", DataType::TimestampNtz()}});
  auto builder = ColumnBuilder::Make(schema);
  auto* row = static_cast<StructBuilder*>(builder.get());
  static_cast<BooleanBuilder*>(row->field_builder(0))->Append(true);
  static_cast<Int16Builder*>(row->field_builder(1))->Append(-7);
  static_cast<Int32Builder*>(row->field_builder(2))->Append(INT32_MIN);
  static_cast<Int64Builder*>(row->field_builder(3))->Append(INT64_MAX);
  static_cast<FloatBuilder*>(row->field_builder(4))->Append(0.1f);
  static_cast<DoubleBuilder*>(row->field_builder(5))->Append(0.1);
  static_cast<DecimalBuilder*>(row->field_builder(6))->Append(-123456789);
  static_cast<BinaryBuilder*>(row->field_builder(7))->Append("tab\t newline\n back\\ quote\" ünï");
  static_cast<BinaryBuilder*>(row->field_builder(8))->Append(std::string_view("\0\t\\\xff", 4));
  static_cast<Int32Builder*>(row->field_builder(9))->Append(20484);
  static_cast<Int64Builder*>(row->field_builder(10))->Append(1769853600123456);
  static_cast<Int64Builder*>(row->field_builder(11))->Append(-1);
  row->Append();
  row->AppendNull();
  ColumnPtr rows = builder->Finish();
  BatchPtr batch = *RecordBatch::Make(schema, rows->children, 2);
  ASSERT_TRUE(WritePostgres(Write("every", PgWriteMode::kAppend), schema, {batch}).ok());
  auto back = ReadPostgres(Query("SELECT * FROM every ORDER BY flag"));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->size(), 1u);
  EXPECT_EQ((*back)[0]->schema()->ToString(), schema->ToString());
  EXPECT_EQ(Format(*back), Format({batch}));
}

// The built-in array types sluice knows by oid are the server's own (pg_type.typarray).
TEST_F(PgBatchTest, TheBuiltInArrayOidsAreTheServers) {
  auto rows = db_->Query("SELECT oid::int8, typarray::int8 FROM pg_type WHERE typarray <> 0 AND oid < 10000");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  int known = 0;
  for (const auto& row : *rows) {
    const auto element = static_cast<uint32_t>(std::stoll(row[0]));
    const auto array = static_cast<uint32_t>(std::stoll(row[1]));
    if (PgArrayOidOf(element) == 0) continue;
    ++known;
    EXPECT_EQ(PgArrayOidOf(element), array) << "element " << element;
    EXPECT_EQ(PgArrayElementOid(array), element) << "array " << array;
  }
  EXPECT_EQ(known, 22);
}

TEST_F(PgBatchTest, ReadsArraysOfEveryMappedElementType) {
  Run(R"(CREATE TABLE arrays (id int, flags boolean[], smalls smallint[], bigs bigint[], rs real[], ds float8[],
         prices numeric(10,2)[], frees numeric[], texts text[], vs varchar(4)[], bs bytea[], days date[],
         ntzs timestamp[], tss timestamptz[], us uuid[], jbs jsonb[], ivs interval[]))");
  Run(R"(INSERT INTO arrays VALUES
         (1, '{t,NULL,f}', '{-32768,32767}', '{-9223372036854775808}', '{1.5,NaN,-Infinity}', '{0.1}',
          '{1.50,NULL,-0.01}', '{NaN,1e-20}', ARRAY['a,b', '{}', 'NULL', NULL, '', E'back\\slash "q"'],
          '{ab}', ARRAY['\x00ff'::bytea, NULL], '{2026-01-31,-infinity}', '{"2026-01-31 10:00:00.5"}',
          '{"2026-01-31 12:00:00+02"}', '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}', ARRAY['{"a": [1]}'::jsonb],
          '{"1 day 02:00:00"}'),
         (2, '{}', NULL, '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}'),
         (3, '[0:1]={t,t}', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL))");
  auto reader = PgBatchReader::Open(Table("arrays"));
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  EXPECT_EQ((*reader)->schema()->ToString(),
            "struct<id:int,flags:array<boolean>,smalls:array<smallint>,bigs:array<bigint>,rs:array<float>,"
            "ds:array<double>,prices:array<decimal(10,2)>,frees:array<string>,texts:array<string>,vs:array<string>,"
            "bs:array<binary>,days:array<date>,ntzs:array<timestamp_ntz>,tss:array<timestamp>,us:array<string>,"
            "jbs:array<string>,ivs:array<string>>");
  auto batches = ReadPostgres(Query("SELECT * FROM arrays ORDER BY id"));
  ASSERT_TRUE(batches.ok()) << batches.status().ToString();
  EXPECT_EQ(Format(*batches),
            (TextRows{{"1", "[true,null,false]", "[-32768,32767]", "[-9223372036854775808]", "[1.5,NaN,-Infinity]",
                       "[0.1]", "[1.50,null,-0.01]", "[\"NaN\",\"0.00000000000000000001\"]",
                       R"(["a,b","{}","NULL",null,"","back\\slash \"q\""])", "[\"ab\"]", "[\"AP8=\",null]",
                       "[\"2026-01-31\",null]", "[\"2026-01-31T10:00:00.500000\"]", "[\"2026-01-31T10:00:00Z\"]",
                       "[\"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11\"]", R"(["{\"a\": [1]}"])", "[\"1 day 02:00:00\"]"},
                      {"2", "[]", "null", "[]", "[]", "[]", "[]", "[]", "[]", "[]", "[]", "[]", "[]", "[]", "[]", "[]",
                       "[]"},
                      {"3", "[true,true]", "null", "null", "null", "null", "null", "null", "null", "null", "null",
                       "null", "null", "null", "null", "null", "null"}}));
}

// A value of more than one dimension does not fit the column's array type: the read fails naming
// the column, and a cast in the query reads it (as text, or one dimension at a time).
TEST_F(PgBatchTest, AMultiDimensionalArrayFailsTheReadNamingItsColumn) {
  Run("CREATE TABLE grid (id int, cells int[]); INSERT INTO grid VALUES (1, '{1,2}'), (2, '{{1,2},{3,4}}')");
  auto batches = ReadPostgres(Table("grid"));
  ASSERT_FALSE(batches.ok());
  EXPECT_EQ(batches.status().error_class(), errors::kInvalidArgument);
  EXPECT_NE(batches.status().message().find("column `cells`"), std::string_view::npos) << batches.status().ToString();
  auto cast = ReadPostgres(Query("SELECT id, cells::text AS cells FROM grid ORDER BY id"));
  ASSERT_TRUE(cast.ok()) << cast.status().ToString();
  EXPECT_EQ(Format(*cast), (TextRows{{"1", "{1,2}"}, {"2", "{{1,2},{3,4}}"}}));
}

// Types from extensions, composite types and arrays of types without a fixed oid are read as
// PostgreSQL prints them.
TEST_F(PgBatchTest, ExtensionCompositeAndEnumArrayTypesAreTheirTextForm) {
  Run("CREATE EXTENSION postgis; CREATE EXTENSION hstore; CREATE TYPE pair AS (a int, b text); "
      "CREATE TYPE mood AS ENUM ('sad', 'happy')");
  Run(R"(CREATE TABLE shapes (id int, g geometry, geo geography, h hstore, p pair, moods mood[], pairs pair[]);
         INSERT INTO shapes VALUES (1, ST_GeomFromText('POINT(1 2)', 4326), 'SRID=4326;POINT(3 4)',
           'a=>1, "b c"=>NULL', ROW(7, 'x y'), '{happy,sad}', ARRAY[ROW(1, 'z')::pair]))");
  auto batches = ReadPostgres(Query("SELECT * FROM shapes"));
  ASSERT_TRUE(batches.ok()) << batches.status().ToString();
  ASSERT_EQ(batches->size(), 1u);
  EXPECT_EQ((*batches)[0]->schema()->ToString(),
            "struct<id:int,g:string,geo:string,h:string,p:string,moods:string,pairs:string>");
  EXPECT_EQ(Format(*batches),
            (TextRows{{"1", "0101000020E6100000000000000000F03F0000000000000040",
                       "0101000020E610000000000000000008400000000000001040", R"("a"=>"1", "b c"=>NULL)",
                       "(7,\"x y\")", "{happy,sad}", R"x({"(1,z)"})x"}}));
}

// Arrays of scalars become PostgreSQL arrays of the element's type, null elements and empty
// arrays included; arrays of nested values stay jsonb.
TEST_F(PgBatchTest, WritesArraysAsPostgresArraysAndReadsThemBack) {
  TypePtr schema = *DataType::Struct({{"id", DataType::Integer()},
                                      {"ints", DataType::Array(DataType::Integer())},
                                      {"texts", DataType::Array(DataType::String())},
                                      {"prices", DataType::Array(*DataType::Decimal(12, 3))},
                                      {"times", DataType::Array(DataType::Timestamp())},
                                      {"blobs", DataType::Array(DataType::Binary())},
                                      {"bytes", DataType::Array(DataType::Byte())},
                                      {"grid", DataType::Array(DataType::Array(DataType::Integer()))}});
  auto builder = ColumnBuilder::Make(schema);
  auto* row = static_cast<StructBuilder*>(builder.get());
  auto list = [&](int field) { return static_cast<ListBuilder*>(row->field_builder(field)); };
  // Row 1: values with a null element in each array.
  static_cast<Int32Builder*>(row->field_builder(0))->Append(1);
  static_cast<Int32Builder*>(list(1)->element_builder())->Append(INT32_MIN);
  list(1)->element_builder()->AppendNull();
  list(1)->Append();
  static_cast<BinaryBuilder*>(list(2)->element_builder())->Append("a,b {\"c\"} \\ NULL");
  list(2)->element_builder()->AppendNull();
  static_cast<BinaryBuilder*>(list(2)->element_builder())->Append("");
  list(2)->Append();
  static_cast<DecimalBuilder*>(list(3)->element_builder())->Append(-123456789);
  list(3)->Append();
  static_cast<Int64Builder*>(list(4)->element_builder())->Append(1769853600123456);
  list(4)->Append();
  static_cast<BinaryBuilder*>(list(5)->element_builder())->Append(std::string_view("\0\xff", 2));
  list(5)->Append();
  static_cast<Int8Builder*>(list(6)->element_builder())->Append(-128);
  list(6)->Append();
  auto* inner = static_cast<ListBuilder*>(list(7)->element_builder());
  static_cast<Int32Builder*>(inner->element_builder())->Append(5);
  inner->Append();
  list(7)->Append();
  row->Append();
  // Row 2: empty arrays; row 3: null arrays.
  static_cast<Int32Builder*>(row->field_builder(0))->Append(2);
  for (int f = 1; f <= 7; ++f) list(f)->Append();
  row->Append();
  static_cast<Int32Builder*>(row->field_builder(0))->Append(3);
  for (int f = 1; f <= 7; ++f) list(f)->AppendNull();
  row->Append();
  ColumnPtr rows = builder->Finish();
  BatchPtr batch = *RecordBatch::Make(schema, rows->children, 3);
  ASSERT_TRUE(WritePostgres(Write("lists", PgWriteMode::kAppend), schema, {batch}).ok());
  EXPECT_EQ(*db_->QueryValue("SELECT string_agg(format_type(atttypid, atttypmod), ', ' ORDER BY attnum) FROM "
                             "pg_attribute WHERE attrelid = 'lists'::regclass AND attnum > 0"),
            "integer, integer[], text[], numeric(12,3)[], timestamp with time zone[], bytea[], smallint[], jsonb");
  EXPECT_EQ(*db_->QueryValue("SELECT texts[1] || '|' || (texts[2] IS NULL)::text || '|' || array_length(ints, 1) "
                             "FROM lists WHERE id = 1"),
            "a,b {\"c\"} \\ NULL|true|2");
  auto back = ReadPostgres(Query("SELECT id, ints, texts, prices, times, blobs, bytes FROM lists ORDER BY id"));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(Format(*back), (TextRows{{"1", "[-2147483648,null]", R"(["a,b {\"c\"} \\ NULL",null,""])", "[-123456.789]",
                                      "[\"2026-01-31T10:00:00.123456Z\"]", "[\"AP8=\"]", "[-128]"},
                                     {"2", "[]", "[]", "[]", "[]", "[]", "[]"},
                                     {"3", "null", "null", "null", "null", "null", "null"}}));
  EXPECT_EQ(*db_->QueryValue("SELECT grid::text FROM lists WHERE id = 1"), "[[5]]");
}

// A table whose array columns are jsonb (created before arrays became PostgreSQL arrays,
// or by hand) keeps receiving them as JSON, in append and overwrite alike.
TEST_F(PgBatchTest, ArraysIntoAnExistingJsonbColumnStayJson) {
  Run("CREATE TABLE tagged (id int, tags jsonb, nums jsonb)");
  TypePtr schema = *DataType::Struct({{"id", DataType::Integer()},
                                      {"tags", DataType::Array(DataType::String())},
                                      {"nums", DataType::Array(DataType::Long())}});
  auto builder = ColumnBuilder::Make(schema);
  auto* row = static_cast<StructBuilder*>(builder.get());
  static_cast<Int32Builder*>(row->field_builder(0))->Append(1);
  auto* tags = static_cast<ListBuilder*>(row->field_builder(1));
  static_cast<BinaryBuilder*>(tags->element_builder())->Append("x");
  tags->element_builder()->AppendNull();
  tags->Append();
  auto* nums = static_cast<ListBuilder*>(row->field_builder(2));
  static_cast<Int64Builder*>(nums->element_builder())->Append(7);
  nums->Append();
  row->Append();
  ColumnPtr rows = builder->Finish();
  BatchPtr batch = *RecordBatch::Make(schema, rows->children, 1);
  for (PgWriteMode mode : {PgWriteMode::kAppend, PgWriteMode::kOverwrite}) {
    Status written = WritePostgres(Write("tagged", mode), schema, {batch});
    ASSERT_TRUE(written.ok()) << written.ToString();
  }
  EXPECT_EQ(*db_->QueryValue("SELECT count(*) || ' ' || max(tags::text) || ' ' || max(nums::text) FROM tagged"),
            "1 [\"x\", null] [7]");
}

// A column name longer than the 63 bytes PostgreSQL keeps is refused by every writer, naming it,
// before the table is created or touched.
TEST_F(PgBatchTest, WritersRefuseAColumnNameLongerThanPostgresKeepsBeforeTouchingTheTable) {
  const std::string long_name(64, 'x');
  TypePtr schema = *DataType::Struct({{"id", DataType::Integer()}, {long_name, DataType::String()}});
  for (PgWriteMode mode : {PgWriteMode::kAppend, PgWriteMode::kOverwrite, PgWriteMode::kErrorIfExists}) {
    Status written = WritePostgres(Write("wide", mode), schema, {RecordBatch::Empty(schema)});
    EXPECT_EQ(written.error_class(), errors::kInvalidSchema) << written.ToString();
    EXPECT_NE(written.message().find(long_name), std::string_view::npos) << written.ToString();
  }
  PgUpsertWriterOptions options;
  options.conninfo = db_->connection_string();
  options.table = ParseTableName("wide").value();
  options.upsert_key = {"id"};
  auto upsert = PgUpsertWriter::Open(std::move(options), schema);
  EXPECT_EQ(upsert.status().error_class(), errors::kInvalidSchema) << upsert.status().ToString();
  EXPECT_EQ(*db_->QueryValue("SELECT to_regclass('wide') IS NULL"), "t") << "no table was created";
}

}  // namespace
}  // namespace sluice::connectors
