#include "sluice/connectors/pg_upsert_writer.h"

#include <gtest/gtest.h>

#include <numeric>
#include <thread>

#include "sluice/connectors/testing/postgres_fixture.h"
#include "sluice/core/builder.h"

namespace sluice::connectors {
namespace {

using testing::PostgresTestDatabase;
using testing::Rows;

TypePtr OrdersSchema() {
  return *DataType::Struct({{"id", DataType::Long()}, {"status", DataType::String()}, {"qty", DataType::Integer()}});
}

struct Order {
  int64_t id;
  const char* status;  // nullptr = NULL
  int32_t qty;
};

BatchPtr Orders(const std::vector<Order>& orders) {
  Int64Builder ids(DataType::Long());
  BinaryBuilder statuses(DataType::String());
  Int32Builder qtys(DataType::Integer());
  for (const Order& o : orders) {
    ids.Append(o.id);
    if (o.status) statuses.Append(o.status); else statuses.AppendNull();
    qtys.Append(o.qty);
  }
  return *RecordBatch::Make(OrdersSchema(), {ids.Finish(), statuses.Finish(), qtys.Finish()},
                            static_cast<int64_t>(orders.size()));
}

std::vector<int64_t> AllRows(const RecordBatch& batch) {
  std::vector<int64_t> rows(batch.num_rows());
  std::iota(rows.begin(), rows.end(), 0);
  return rows;
}

class PgUpsertWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = PostgresTestDatabase::Create();
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(*db);
  }

  Result<std::unique_ptr<PgUpsertWriter>> Open(std::string table, std::vector<std::string> key,
                                               TypePtr schema = OrdersSchema()) {
    PgUpsertWriterOptions options;
    options.conninfo = db_->connection_string();
    SLUICE_ASSIGN_OR_RETURN(options.table, ParseTableName(table));
    options.upsert_key = std::move(key);
    options.initial_backoff = std::chrono::milliseconds(10);
    return PgUpsertWriter::Open(std::move(options), std::move(schema));
  }

  Rows Select(const std::string& sql) {
    auto rows = db_->Query(sql);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return rows.ok() ? *rows : Rows{};
  }

  std::unique_ptr<PostgresTestDatabase> db_;
};

TEST_F(PgUpsertWriterTest, CreatesTheTableWithTheKeyAsPrimaryKeyAndUpserts) {
  auto writer = Open("orders", {"id"});
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  BatchPtr first = Orders({{1, "new", 5}, {2, "new", 7}});
  ASSERT_EQ(*(*writer)->WriteChunk("q", 0, 0, *first, AllRows(*first)), 2);
  BatchPtr second = Orders({{2, "shipped", 7}, {3, nullptr, 1}});
  ASSERT_EQ(*(*writer)->WriteChunk("q", 1, 0, *second, AllRows(*second)), 2);

  EXPECT_EQ(Select("SELECT id, status, qty FROM orders ORDER BY id"),
            (Rows{{"1", "new", "5"}, {"2", "shipped", "7"}, {"3", "NULL", "1"}}));
  EXPECT_EQ(Select("SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND "
                   "a.attnum = ANY(i.indkey) WHERE i.indrelid = 'orders'::regclass AND i.indisprimary"),
            (Rows{{"id"}}));
  // A table made for upserts leaves half of each page free, so that updating every row is HOT.
  EXPECT_EQ(Select("SELECT array_to_string(reloptions, ',') FROM pg_class WHERE oid = 'orders'::regclass"),
            (Rows{{"fillfactor=50"}}));
  // A table without a key (inserts only) keeps PostgreSQL's default.
  auto appender = Open("events", {});
  ASSERT_TRUE(appender.ok()) << appender.status().ToString();
  EXPECT_EQ(Select("SELECT coalesce(array_to_string(reloptions, ','), '') FROM pg_class WHERE oid = 'events'::regclass"),
            (Rows{{""}}));
}

// New keys go in by COPY straight into the table; a chunk meeting keys already there mid-way falls
// back to the upsert and nothing of its COPY remains; tables whose column types differ from the
// rows' take the upsert always.
TEST_F(PgUpsertWriterTest, KeysAlreadyThereMidChunkAreUpsertedWhateverTheWritePath) {
  ASSERT_TRUE(db_->Execute("CREATE TABLE narrow (id integer PRIMARY KEY, status varchar(20), qty bigint)").ok());
  for (const std::string table : {"orders", "narrow"}) {
    SCOPED_TRACE(table);
    auto writer = Open(table, {"id"});
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    auto orders = [](int64_t from, int64_t to, const char* status) {
      std::vector<Order> rows;
      for (int64_t id = from; id < to; ++id) rows.push_back({id, status, static_cast<int32_t>(id % 7)});
      return Orders(rows);
    };
    BatchPtr first = orders(1, 101, "new");
    ASSERT_EQ(*(*writer)->WriteChunk(table, 0, 0, *first, AllRows(*first)), 100);
    BatchPtr overlapping = orders(95, 201, "second");
    ASSERT_EQ(*(*writer)->WriteChunk(table, 1, 0, *overlapping, AllRows(*overlapping)), 106);
    for (int64_t batch_id = 2; batch_id < 20; ++batch_id) {
      BatchPtr fresh = orders(batch_id * 1000, batch_id * 1000 + 10, "later");
      ASSERT_EQ(*(*writer)->WriteChunk(table, batch_id, 0, *fresh, AllRows(*fresh)), 10);
    }
    EXPECT_EQ(Select("SELECT status, count(*), min(id), max(id) FROM " + table + " GROUP BY 1 ORDER BY 1"),
              (Rows{{"later", "180", "2000", "19009"}, {"new", "94", "1", "94"}, {"second", "106", "95", "200"}}));
  }
}

TEST_F(PgUpsertWriterTest, CollapsesRowsWithTheSameKeyToTheLastOne) {
  auto writer = Open("orders", {"id"});
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  BatchPtr batch = Orders({{5, "a", 1}, {4, "x", 1}, {5, "b", 2}, {5, "c", 3}, {4, "y", 2}});
  ASSERT_EQ(*(*writer)->WriteChunk("q", 0, 0, *batch, AllRows(*batch)), 2);
  EXPECT_EQ(Select("SELECT id, status, qty FROM orders ORDER BY id"), (Rows{{"4", "y", "2"}, {"5", "c", "3"}}));
}

TEST_F(PgUpsertWriterTest, AReplayedChunkIsSkippedEvenWithoutAKey) {
  ASSERT_TRUE(db_->Execute("CREATE TABLE events (id bigint, status text, qty integer)").ok());
  auto writer = Open("events", {});
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  EXPECT_TRUE((*writer)->upsert_key().empty());
  BatchPtr batch = Orders({{1, "a", 1}, {1, "a", 1}});
  ASSERT_EQ(*(*writer)->WriteChunk("q", 7, 0, *batch, AllRows(*batch)), 2);
  ASSERT_EQ(*(*writer)->WriteChunk("q", 7, 0, *batch, AllRows(*batch)), 0);
  ASSERT_EQ(*(*writer)->WriteChunk("q", 7, 1, *batch, AllRows(*batch)), 2);
  ASSERT_EQ(*(*writer)->WriteChunk("other query", 7, 0, *batch, AllRows(*batch)), 2);
  EXPECT_EQ(Select("SELECT count(*) FROM events"), (Rows{{"6"}}));
  EXPECT_EQ(Select("SELECT query_id, batch_id, chunk FROM _sluice_progress ORDER BY 1, 2, 3"),
            (Rows{{"other query", "7", "0"}, {"q", "7", "0"}, {"q", "7", "1"}}));
}

TEST_F(PgUpsertWriterTest, ForgettingBatchesDeletesOnlyTheQuerysEarlierClaims) {
  ASSERT_TRUE(db_->Execute("CREATE TABLE events (id bigint, status text, qty integer)").ok());
  auto writer = Open("events", {});
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  BatchPtr batch = Orders({{1, "a", 1}});
  for (int64_t batch_id : {5, 6, 7}) ASSERT_EQ(*(*writer)->WriteChunk("q", batch_id, 0, *batch, AllRows(*batch)), 1);
  ASSERT_EQ(*(*writer)->WriteChunk("q/rt0", 5, 1, *batch, AllRows(*batch)), 1);
  ASSERT_EQ(*(*writer)->WriteChunk("other query", 5, 0, *batch, AllRows(*batch)), 1);
  ASSERT_TRUE((*writer)->ForgetBatchesBefore("q", 7).ok());
  EXPECT_EQ(Select("SELECT query_id, batch_id, chunk FROM _sluice_progress ORDER BY 1, 2, 3"),
            (Rows{{"other query", "5", "0"}, {"q", "7", "0"}, {"q/rt0", "5", "1"}}));
  EXPECT_EQ(Select("SELECT count(*) FROM events"), (Rows{{"5"}})) << "the rows stay";
}

TEST_F(PgUpsertWriterTest, InfersTheKeyFromThePrimaryKey) {
  ASSERT_TRUE(db_->Execute("CREATE TABLE orders (qty integer, status text, id bigint PRIMARY KEY)").ok());
  auto writer = Open("orders", {});
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  EXPECT_EQ((*writer)->upsert_key(), (std::vector<std::string>{"id"}));
  BatchPtr batch = Orders({{1, "a", 1}});
  ASSERT_TRUE((*writer)->WriteChunk("q", 0, 0, *batch, AllRows(*batch)).ok());
  batch = Orders({{1, "b", 2}});
  ASSERT_TRUE((*writer)->WriteChunk("q", 1, 0, *batch, AllRows(*batch)).ok());
  EXPECT_EQ(Select("SELECT id, status, qty FROM orders"), (Rows{{"1", "b", "2"}}));
}

TEST_F(PgUpsertWriterTest, RefusesAKeyThatIsNotThePrimaryKey) {
  ASSERT_TRUE(db_->Execute("CREATE TABLE orders (id bigint PRIMARY KEY, status text, qty integer)").ok());
  EXPECT_EQ(Open("orders", {"status"}).status().error_class(), "PG_UPSERT_KEY_MISMATCH");
  EXPECT_EQ(Open("orders", {"id", "status"}).status().error_class(), "PG_UPSERT_KEY_MISMATCH");
  EXPECT_EQ(Open("orders", {"nope"}).status().error_class(), "PG_UPSERT_KEY_MISMATCH");
  ASSERT_TRUE(db_->Execute("CREATE TABLE plain (id bigint, status text, qty integer)").ok());
  Status no_pk = Open("plain", {"id"}).status();
  EXPECT_EQ(no_pk.error_class(), "PG_UPSERT_KEY_MISMATCH");
  EXPECT_NE(no_pk.message().find("none"), std::string_view::npos) << no_pk.ToString();
}

TEST_F(PgUpsertWriterTest, RefusesAKeyOfANestedType) {
  TypePtr schema = *DataType::Struct({{"id", DataType::Array(DataType::Long())}, {"v", DataType::Long()}});
  EXPECT_EQ(Open("nested", {"id"}, schema).status().error_class(), "PG_UPSERT_KEY_MISMATCH");
}

// Arrays of scalars are upserted into PostgreSQL arrays in a table the writer creates, and as
// jsonb into a table that holds them as jsonb; updates of an array replace it whole.
TEST_F(PgUpsertWriterTest, UpsertsArraysIntoArrayColumnsOrIntoExistingJsonbColumns) {
  TypePtr schema = *DataType::Struct({{"id", DataType::Long()}, {"tags", DataType::Array(DataType::String())}});
  auto tagged = [&](int64_t id, std::vector<const char*> tags) {
    Int64Builder ids(DataType::Long());
    ListBuilder lists(schema->field(1).type);
    ids.Append(id);
    for (const char* tag : tags) {
      if (tag == nullptr) {
        lists.element_builder()->AppendNull();
      } else {
        static_cast<BinaryBuilder*>(lists.element_builder())->Append(tag);
      }
    }
    lists.Append();
    return *RecordBatch::Make(schema, {ids.Finish(), lists.Finish()}, 1);
  };
  ASSERT_TRUE(db_->Execute("CREATE TABLE old_tags (id bigint PRIMARY KEY, tags jsonb)").ok());
  for (const char* table : {"new_tags", "old_tags"}) {
    SCOPED_TRACE(table);
    auto writer = Open(table, {"id"}, schema);
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    for (int64_t batch_id = 0; batch_id < 3; ++batch_id) {
      BatchPtr batch = batch_id == 0 ? tagged(1, {"a", nullptr}) : tagged(1, {"b,c", "{d}", ""});
      auto written = (*writer)->WriteChunk(table, batch_id, 0, *batch, AllRows(*batch));
      ASSERT_TRUE(written.ok()) << written.status().ToString();
    }
  }
  EXPECT_EQ(Select("SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'new_tags'::regclass "
                   "AND attname = 'tags'"),
            (Rows{{"text[]"}}));
  EXPECT_EQ(Select("SELECT tags::text, array_length(tags, 1)::text FROM new_tags"), (Rows{{"{\"b,c\",\"{d}\",\"\"}", "3"}}));
  EXPECT_EQ(Select("SELECT tags::text FROM old_tags"), (Rows{{"[\"b,c\", \"{d}\", \"\"]"}}));
}

TEST_F(PgUpsertWriterTest, RefusesStreamColumnsTheTableLacks) {
  ASSERT_TRUE(db_->Execute("CREATE TABLE orders (id bigint PRIMARY KEY, qty integer)").ok());
  Status s = Open("orders", {"id"}).status();
  EXPECT_EQ(s.error_class(), "PG_SCHEMA_MISMATCH");
  EXPECT_NE(s.message().find("status"), std::string_view::npos);
}

TEST_F(PgUpsertWriterTest, QuotesReservedAndMixedCaseColumnNames) {
  TypePtr schema = *DataType::Struct({{"select", DataType::Long()}, {"Order Total", DataType::Double()},
                                      {"we\"ird", DataType::String()}});
  auto writer = Open("Reserved", {"select"}, schema);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  Int64Builder a(DataType::Long());
  DoubleBuilder b(DataType::Double());
  BinaryBuilder c(DataType::String());
  a.Append(1);
  b.Append(2.5);
  c.Append("x");
  BatchPtr batch = *RecordBatch::Make(schema, {a.Finish(), b.Finish(), c.Finish()}, 1);
  ASSERT_TRUE((*writer)->WriteChunk("q", 0, 0, *batch, AllRows(*batch)).ok());
  EXPECT_EQ(Select("SELECT \"select\", \"Order Total\", \"we\"\"ird\" FROM \"Reserved\""), (Rows{{"1", "2.5", "x"}}));
}

TEST_F(PgUpsertWriterTest, SkipsUpdatesThatChangeNothing) {
  auto writer = Open("orders", {"id"});
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  BatchPtr batch = Orders({{1, "a", 1}});
  ASSERT_TRUE((*writer)->WriteChunk("q", 0, 0, *batch, AllRows(*batch)).ok());
  std::string before = Select("SELECT xmin FROM orders")[0][0];
  ASSERT_TRUE((*writer)->WriteChunk("q", 1, 0, *batch, AllRows(*batch)).ok());
  EXPECT_EQ(Select("SELECT xmin FROM orders")[0][0], before) << "an identical row was rewritten";
}

TEST_F(PgUpsertWriterTest, RetriesWhenItsBackendIsTerminatedMidStream) {
  auto writer = Open("orders", {"id"});
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  for (int64_t batch_id = 0; batch_id < 20; ++batch_id) {
    if (batch_id % 5 == 2) {
      ASSERT_TRUE(db_->Execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
                               "AND pid <> pg_backend_pid() AND backend_type = 'client backend'").ok());
    }
    BatchPtr batch = Orders({{batch_id, "v", static_cast<int32_t>(batch_id)}});
    auto written = (*writer)->WriteChunk("q", batch_id, 0, *batch, AllRows(*batch));
    ASSERT_TRUE(written.ok()) << written.status().ToString();
  }
  EXPECT_GE((*writer)->retries(), 4);
  EXPECT_EQ(Select("SELECT count(*), sum(qty) FROM orders"), (Rows{{"20", "190"}}));
}

TEST_F(PgUpsertWriterTest, FailsAtOnceOnNonTransientErrorsWithTheSqlstate) {
  ASSERT_TRUE(db_->Execute("CREATE TABLE orders (id bigint PRIMARY KEY, status text, qty integer CHECK (qty > 0))").ok());
  auto writer = Open("orders", {"id"});
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  BatchPtr batch = Orders({{1, "a", -1}});
  Status s = (*writer)->WriteChunk("q", 0, 0, *batch, AllRows(*batch)).status();
  EXPECT_EQ(s.error_class(), "PG_QUERY_FAILED");
  EXPECT_NE(s.message().find("23514"), std::string_view::npos) << s.ToString();
  EXPECT_EQ((*writer)->retries(), 0);
  // The failed chunk left nothing behind, so it can be written once fixed.
  batch = Orders({{1, "a", 1}});
  EXPECT_EQ(*(*writer)->WriteChunk("q", 0, 0, *batch, AllRows(*batch)), 1);
}

TEST_F(PgUpsertWriterTest, ConcurrentWritersOnOverlappingKeysNeverSurfaceDeadlocks) {
  auto setup = Open("orders", {"id"});
  ASSERT_TRUE(setup.ok()) << setup.status().ToString();
  std::vector<std::thread> threads;
  std::vector<Status> results(2);
  for (int w = 0; w < 2; ++w) {
    threads.emplace_back([&, w] {
      auto writer = Open("orders", {"id"});
      if (!writer.ok()) {
        results[w] = writer.status();
        return;
      }
      for (int64_t batch_id = 0; batch_id < 30; ++batch_id) {
        std::vector<Order> orders;
        // Writer 0 lists keys ascending, writer 1 descending: unsorted, this deadlocks.
        for (int i = 0; i < 50; ++i) orders.push_back({w == 0 ? i : 49 - i, "x", static_cast<int32_t>(batch_id + 1)});
        BatchPtr batch = Orders(orders);
        auto written = (*writer)->WriteChunk("writer" + std::to_string(w), batch_id, 0, *batch, AllRows(*batch));
        if (!written.ok()) {
          results[w] = written.status();
          return;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_TRUE(results[0].ok()) << results[0].ToString();
  EXPECT_TRUE(results[1].ok()) << results[1].ToString();
  EXPECT_EQ(Select("SELECT count(*), min(qty), max(qty) FROM orders"), (Rows{{"50", "30", "30"}}));
}

TEST(PgConnectionCopyData, RunsStatementsFeedingEachCopyItsDataAndReturnsTheLastRows) {
  auto db = PostgresTestDatabase::Create();
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto conn = PgConnection::Connect((*db)->connection_string());
  ASSERT_TRUE(conn.ok()) << conn.status().ToString();
  ASSERT_TRUE((*conn)->Execute("CREATE TABLE a (x integer); CREATE TABLE b (s text)").ok());
  const std::string_view data[] = {"1\n2\n", "it's\n\\N\n"};
  auto rows = (*conn)->ExecuteWithCopyData(
      "BEGIN; COPY a FROM STDIN; COPY b FROM STDIN; SELECT sum(x), count(s), count(*) FROM a, b; COMMIT", data);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(*rows, (PgRows{{"6", "2", "4"}}));
  EXPECT_EQ((*db)->Query("SELECT s FROM b ORDER BY s").value(), (Rows{{"it's"}, {"NULL"}}));
}

TEST(PgConnectionCopyData, StopsAtTheFirstFailureAndKeepsTheConnectionUsable) {
  auto db = PostgresTestDatabase::Create();
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto conn = PgConnection::Connect((*db)->connection_string());
  ASSERT_TRUE(conn.ok()) << conn.status().ToString();
  ASSERT_TRUE((*conn)->Execute("CREATE TABLE a (x integer)").ok());
  const std::string_view bad[] = {"1\nnot a number\n"};
  Status failed = (*conn)->ExecuteWithCopyData("BEGIN; COPY a FROM STDIN; INSERT INTO a VALUES (7); COMMIT", bad).status();
  EXPECT_EQ(failed.error_class(), "PG_QUERY_FAILED");
  EXPECT_EQ((*conn)->last_sqlstate(), "22P02") << failed.ToString();
  ASSERT_TRUE((*conn)->Execute("ROLLBACK").ok());
  EXPECT_EQ((*db)->QueryValue("SELECT count(*) FROM a").value(), "0");

  const std::string_view one[] = {"1\n"};
  Status too_few = (*conn)->ExecuteWithCopyData("COPY a FROM STDIN; COPY a FROM STDIN", one).status();
  EXPECT_EQ(too_few.error_class(), "PG_QUERY_FAILED") << too_few.ToString();
  const std::string_view two[] = {"1\n", "2\n"};
  Status too_many = (*conn)->ExecuteWithCopyData("COPY a FROM STDIN", two).status();
  EXPECT_EQ(too_many.error_class(), "PG_QUERY_FAILED") << too_many.ToString();
  EXPECT_TRUE((*conn)->Query("SELECT 1").ok());
}

}  // namespace
}  // namespace sluice::connectors
