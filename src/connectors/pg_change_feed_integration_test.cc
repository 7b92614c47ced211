// The change feed against a real PostgreSQL 15 (wal_level=logical): what each kind of change,
// type, table and schema change leaves in the history tables.
#include "sluice/connectors/pg_change_feed.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <random>
#include <set>
#include <thread>

#include "pg_change_feed_testing.h"
#include "sluice/connectors/pg_connection.h"
#include "sluice/connectors/pgoutput.h"
#include "sluice/connectors/testing/postgres_fixture.h"
#include "sluice/storage/file_systems.h"
#include "testing/store_root.h"
#include "testing/temp_dir.h"

namespace sluice::connectors {
namespace {

using cdf_testing::ChangeFeedTest;
using cdf_testing::History;
using cdf_testing::ReadHistory;
using cdf_testing::Replay;
using testing::PostgresTestDatabase;

TEST_F(ChangeFeedTest, EveryChangeKindBecomesHistoryRows) {
  Execute("CREATE TABLE items (id int PRIMARY KEY, name text, qty int); ALTER TABLE items REPLICA IDENTITY FULL");
  StartFeed();
  EXPECT_FALSE(std::filesystem::exists(HistoryPath("lb_items_history"))) << "an empty table gets no history yet";
  Execute("INSERT INTO items VALUES (1, 'apple', 10), (2, 'pear', 20)");
  Execute("UPDATE items SET qty = 11 WHERE id = 1");
  Execute("DELETE FROM items WHERE id = 2");
  CatchUp();

  History history = Read("lb_items_history");
  EXPECT_EQ(history.columns, (std::vector<std::string>{"id", "name", "qty"}));
  EXPECT_EQ(history.Texts(), (std::vector<std::string>{"insert:1,apple,10", "insert:2,pear,20",
                                                       "update_preimage:1,apple,10", "update_postimage:1,apple,11",
                                                       "delete:2,pear,20"}));
  ASSERT_EQ(history.rows.size(), 5u);
  EXPECT_EQ(history.rows[0].lsn, history.rows[1].lsn) << "one transaction, one commit LSN";
  EXPECT_LT(history.rows[1].lsn, history.rows[2].lsn);
  EXPECT_EQ(history.rows[2].lsn, history.rows[3].lsn);
  EXPECT_NE(history.rows[0].xid, "null");
  EXPECT_EQ(Replay(history), SourceRows("SELECT id, name, qty FROM items"));
}

TEST_F(ChangeFeedTest, TypesMapAsDocumentedInSnapshotAndStream) {
  Execute(
      "CREATE TYPE mood AS ENUM ('sad', 'happy');"
      "CREATE TABLE typed (id int, b boolean, s smallint, l bigint, r real, d double precision, n numeric(10,2), "
      "nu numeric, big numeric(50,2), t text, v varchar(5), c char(3), j json, jb jsonb, m mood, dt date, "
      "ts timestamp, tz timestamptz, by bytea, u uuid, arr int[], tags text[], prices numeric(10,2)[], "
      "days date[]); ALTER TABLE typed REPLICA IDENTITY FULL");
  const std::string values =
      "true, -2, 9000000000, 1.5, 2.25, 12.5, 'NaN', 123456789012345678901234567890.5, 'x', 'ab', 'z', "
      "'{\"a\": 1}', '{\"b\": [1, 2]}', 'happy', '2024-02-29', '2024-01-02 03:04:05.5', "
      "'2024-01-02 03:04:05+02', '\\x00ff', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{1,NULL,3}', "
      "ARRAY['a b', 'q\"t', NULL, ''], '{1.5,NaN}', '{}'";
  Execute("INSERT INTO typed VALUES (1, " + values + ")");
  StartFeed();
  Execute("INSERT INTO typed VALUES (2, " + values + ")");
  Execute("INSERT INTO typed (id, n, tz) VALUES (3, 'NaN', '2024-06-01 12:00:00-07:30')");
  CatchUp();

  History history = Read("lb_typed_history");
  EXPECT_EQ(history.types,
            (std::vector<std::string>{"int", "boolean", "smallint", "bigint", "float", "double", "decimal(10,2)",
                                      "string", "string", "string", "string", "string", "string", "string", "string",
                                      "date", "timestamp_ntz", "timestamp", "binary", "string", "array<int>", "array<string>",
                                      "array<decimal(10,2)>", "array<date>"}));
  ASSERT_EQ(history.rows.size(), 3u);
  const std::vector<std::string> expected = {"true",
                                             "-2",
                                             "9000000000",
                                             "1.5",
                                             "2.25",
                                             "12.50",
                                             "NaN",
                                             "123456789012345678901234567890.50",
                                             "x",
                                             "ab",
                                             "z  ",
                                             "{\"a\": 1}",
                                             "{\"b\": [1, 2]}",
                                             "happy",
                                             "2024-02-29",
                                             "2024-01-02T03:04:05.500000",
                                             "2024-01-02T01:04:05Z",
                                             "AP8=",
                                             "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
                                             "[1,null,3]",
                                             "[\"a b\",\"q\\\"t\",null,\"\"]",
                                             "[1.50,null]",
                                             "[]"};
  for (int row = 0; row < 2; ++row) {
    SCOPED_TRACE(row == 0 ? "snapshot" : "stream");
    std::vector<std::string> got(history.rows[row].values.begin() + 1, history.rows[row].values.end());
    EXPECT_EQ(got, expected);
  }
  EXPECT_EQ(history.rows[2].values[6], "null") << "numeric NaN in a decimal column is null";
  EXPECT_EQ(history.rows[2].values[17], "2024-06-01T19:30:00Z");
}

// Types of extensions (PostGIS, hstore), composite types and arrays of them are their text form
// in the copy and in the stream; an array value of two dimensions is null (the column's type has
// one), and the row is kept.
TEST_F(ChangeFeedTest, ExtensionAndCompositeTypesAreTheirTextFormAndTwoDimensionsAreNull) {
  Execute(
      "CREATE EXTENSION postgis; CREATE EXTENSION hstore; CREATE TYPE pair AS (a int, b text);"
      "CREATE TABLE shapes (id int, g geometry, h hstore, p pair, pairs pair[], cells int[]);"
      "ALTER TABLE shapes REPLICA IDENTITY FULL");
  const std::string values =
      "ST_GeomFromText('POINT(1 2)', 4326), 'a=>1, \"b c\"=>NULL', ROW(7, 'x y'), ARRAY[ROW(1, 'z')::pair], ";
  Execute("INSERT INTO shapes VALUES (1, " + values + "'{1,2}')");
  StartFeed();
  Execute("INSERT INTO shapes VALUES (2, " + values + "'{{1,2},{3,4}}')");
  Execute("INSERT INTO shapes VALUES (3, " + values + "'{5}')");
  CatchUp();
  History history = Read("lb_shapes_history");
  EXPECT_EQ(history.types, (std::vector<std::string>{"int", "string", "string", "string", "string", "array<int>"}));
  ASSERT_EQ(history.rows.size(), 3u);
  const std::vector<std::string> text_forms = {"0101000020E6100000000000000000F03F0000000000000040",
                                               "\"a\"=>\"1\", \"b c\"=>NULL", "(7,\"x y\")", "{\"(1,z)\"}"};
  for (int row = 0; row < 3; ++row) {
    SCOPED_TRACE(row);
    std::vector<std::string> got(history.rows[row].values.begin() + 1, history.rows[row].values.begin() + 5);
    EXPECT_EQ(got, text_forms);
  }
  EXPECT_EQ(history.rows[0].values[5], "[1,2]");
  EXPECT_EQ(history.rows[1].values[5], "null");
  EXPECT_EQ(history.rows[2].values[5], "[5]");
}

TEST_F(ChangeFeedTest, UnchangedToastedValuesAreFilledFromTheOldRow) {
  Execute("CREATE TABLE docs (id int PRIMARY KEY, body text, version int); ALTER TABLE docs REPLICA IDENTITY FULL");
  StartFeed();
  Execute("INSERT INTO docs SELECT 1, string_agg(md5(random()::text), '') , 1 FROM generate_series(1, 400)");
  Execute("UPDATE docs SET version = 2");
  CatchUp();
  auto body = db_->QueryValue("SELECT body FROM docs");
  ASSERT_TRUE(body.ok());
  ASSERT_EQ(body->size(), 12800u);
  History history = Read("lb_docs_history");
  ASSERT_EQ(history.rows.size(), 3u);
  EXPECT_EQ(history.rows[2].change_type, "update_postimage");
  EXPECT_EQ(history.rows[2].values[1], *body);
  EXPECT_EQ(history.rows[2].values[2], "2");
  EXPECT_EQ(history.rows[1].values[1], *body);
}

TEST_F(ChangeFeedTest, SnapshotWithConcurrentWritesHasNoGapAndNoDuplicate) {
  Execute("CREATE TABLE accounts (id int PRIMARY KEY, balance int) ;ALTER TABLE accounts REPLICA IDENTITY FULL;"
          "INSERT INTO accounts SELECT g, 100 FROM generate_series(1, 5000) g");
  std::atomic<bool> writing{true};
  std::thread writer([&] {
    auto conn = PgConnection::Connect(db_->connection_string());
    ASSERT_TRUE(conn.ok());
    std::mt19937 random(7);
    for (int next_id = 5001; writing.load(); ++next_id) {
      int id = static_cast<int>(random() % next_id) + 1;
      std::string sql = "BEGIN; INSERT INTO accounts VALUES (" + std::to_string(next_id) + ", 1);" +
                        "UPDATE accounts SET balance = balance + 1 WHERE id = " + std::to_string(id) + ";" +
                        (next_id % 3 == 0 ? "DELETE FROM accounts WHERE id = " + std::to_string(id / 2 + 1) + ";" : "") +
                        "COMMIT";
      ASSERT_TRUE((*conn)->Execute(sql).ok());
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  StartFeed();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  writing = false;
  writer.join();
  CatchUp();
  History history = Read("lb_accounts_history");
  EXPECT_EQ(history.rows.front().change_type, "insert");
  EXPECT_EQ(Replay(history), SourceRows("SELECT id, balance FROM accounts"));
}

// A new slot becomes consistent at a running-transactions record it logs itself, after waiting
// for the transactions the previous such record listed; its consistent point is the end of that
// record. A transaction running at that record and committing right after it has its Commit at
// the consistent point: the exported snapshot does not hold it, and the server streams it. The
// test places such a commit by holding one transaction open through each of the slot's waits,
// and by locking the table in the last one, so that the copy waits for its commit (once the feed
// starts streaming, the server may log running-transactions records of its own).
TEST_F(ChangeFeedTest, ATransactionCommittedAtTheConsistentPointIsStreamed) {
  Execute("CREATE TABLE accounts (id int PRIMARY KEY, balance int); ALTER TABLE accounts REPLICA IDENTITY FULL");
  auto begin_with_xid = [](PgConnection& conn) -> std::string {
    if (!conn.Execute("BEGIN").ok()) return "";
    auto xid = conn.Query("SELECT txid_current()::text");
    return xid.ok() && !xid->empty() && (*xid)[0][0] ? *(*xid)[0][0] : "";
  };
  auto slot_waits_for = [&](const std::string& xid) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      auto waiting = db_->QueryValue("SELECT count(*) FROM pg_locks WHERE locktype = 'transactionid' AND NOT granted "
                                     "AND transactionid = '" + xid + "'::xid");
      if (waiting.ok() && *waiting == "1") return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  };
  // Starts the feed and commits the update right at its slot's consistent point, which it
  // returns; empty when another server process (autovacuum, a checkpoint) logged a record in
  // between, the update then rolled back and the feed and its slot gone.
  auto commit_at_the_consistent_point = [&](std::string* consistent_point) {
    Execute("TRUNCATE accounts; INSERT INTO accounts VALUES (1, 100), (2, 100)");
    auto first = PgConnection::Connect(db_->connection_string());
    auto second = PgConnection::Connect(db_->connection_string());
    auto boundary = PgConnection::Connect(db_->connection_string());
    ASSERT_TRUE(first.ok() && second.ok() && boundary.ok());
    const std::string first_xid = begin_with_xid(**first);
    ASSERT_FALSE(first_xid.empty());
    std::thread starting([this] { StartFeed(); });
    // However this ends, the set-up must end first: closing the connections ends their
    // transactions, which the slot may be waiting for.
    struct EndStart {
      std::vector<std::unique_ptr<PgConnection>*> connections;
      std::thread* starting;
      ~EndStart() {
        for (auto* connection : connections) connection->reset();
        if (starting->joinable()) starting->join();
      }
    } end_start{{&*first, &*second, &*boundary}, &starting};
    ASSERT_TRUE(slot_waits_for(first_xid)) << "the slot never waited for the transaction open at its start";
    // Begun after the slot's first record, hence running at its second.
    const std::string second_xid = begin_with_xid(**second);
    ASSERT_TRUE((*first)->Execute("COMMIT").ok());
    ASSERT_TRUE(slot_waits_for(second_xid)) << "the slot never waited for the transaction open at its second record";
    // Begun after the second record, hence running at the third, where the slot becomes consistent.
    ASSERT_TRUE((*boundary)
                    ->Execute("BEGIN; LOCK TABLE accounts IN ACCESS EXCLUSIVE MODE;"
                              "UPDATE accounts SET balance = 101 WHERE id = 1")
                    .ok());
    ASSERT_TRUE((*second)->Execute("COMMIT").ok());
    std::string point;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (point.empty() && std::chrono::steady_clock::now() < deadline) {
      auto flushed = db_->QueryValue("SELECT coalesce(confirmed_flush_lsn::text, '') FROM pg_replication_slots "
                                     "WHERE slot_name = '" + Config().slot_name + "'");
      if (flushed.ok()) point = *flushed;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    ASSERT_FALSE(point.empty()) << "the slot never became consistent";
    auto insert_at = (*boundary)->Query("SELECT pg_current_wal_insert_lsn()::text");
    ASSERT_TRUE(insert_at.ok() && !insert_at->empty() && (*insert_at)[0][0]);
    const bool at_the_point = *(*insert_at)[0][0] == point;
    ASSERT_TRUE((*boundary)->Execute(at_the_point ? "COMMIT" : "ROLLBACK").ok());
    starting.join();
    ASSERT_NE(feed_, nullptr) << "the set-up failed";
    if (at_the_point) {
      *consistent_point = point;
      return;
    }
    StopFeed();
    Status dropped = DropChangeFeedSlot(Config());
    ASSERT_TRUE(dropped.ok()) << dropped.ToString();
    std::filesystem::remove_all(dir_.Join("main"));
  };

  // Another server process can also log a record (the background writer's snapshot of running
  // transactions, every 15 s) between the check and the COMMIT, which then lands past the point:
  // the update is streamed but the edge was not met, and the attempt is made again.
  bool met = false;
  for (int attempt = 0; attempt < 5 && !met && !HasFatalFailure(); ++attempt) {
    std::string consistent_point;
    commit_at_the_consistent_point(&consistent_point);
    if (consistent_point.empty()) continue;
    CatchUp();
    History history = Read("lb_accounts_history");
    EXPECT_EQ(history.Texts(), (std::vector<std::string>{"insert:1,100", "insert:2,100", "update_preimage:1,100",
                                                         "update_postimage:1,101"}));
    ASSERT_EQ(history.rows.size(), 4u);
    auto lsn = ParseLsn(consistent_point);
    ASSERT_TRUE(lsn.ok());
    ASSERT_GE(static_cast<Lsn>(history.rows[2].lsn), *lsn) << "a change before the consistent point was streamed";
    met = static_cast<Lsn>(history.rows[2].lsn) == *lsn;
    if (!met) {
      StopFeed();
      Status dropped = DropChangeFeedSlot(Config());
      ASSERT_TRUE(dropped.ok()) << dropped.ToString();
      std::filesystem::remove_all(dir_.Join("main"));
    }
  }
  EXPECT_TRUE(met) << "other server processes wrote to the WAL in every attempt: no update committed at the "
                      "consistent point";
}

TEST_F(ChangeFeedTest, NewPartitionedRenamedAndCollidingTablesMapByRelation) {
  StartFeed();
  Execute("CREATE TABLE orders (id int, amount int) ; ALTER TABLE orders REPLICA IDENTITY FULL;"
          "INSERT INTO orders VALUES (1, 10)");
  Execute("CREATE TABLE events (id int, region text) PARTITION BY LIST (region);"
          "CREATE TABLE events_eu PARTITION OF events FOR VALUES IN ('eu');"
          "CREATE TABLE events_us PARTITION OF events FOR VALUES IN ('us');"
          "ALTER TABLE events_eu REPLICA IDENTITY FULL; ALTER TABLE events_us REPLICA IDENTITY FULL;"
          "INSERT INTO events VALUES (1, 'eu'), (2, 'us')");
  Execute("ALTER TABLE orders RENAME TO orders_2024; INSERT INTO orders_2024 VALUES (2, 20)");
  Execute("CREATE TABLE orders (id int, amount int); ALTER TABLE orders REPLICA IDENTITY FULL;"
          "INSERT INTO orders VALUES (3, 30)");
  CatchUp();

  EXPECT_EQ(Read("lb_orders_history").Texts(), (std::vector<std::string>{"insert:1,10", "insert:2,20"}));
  EXPECT_EQ(Read("lb_orders_history_1").Texts(), (std::vector<std::string>{"insert:3,30"}));
  EXPECT_EQ(Read("lb_events_history").Texts(), (std::vector<std::string>{"insert:1,eu", "insert:2,us"}));
  EXPECT_FALSE(std::filesystem::exists(HistoryPath("lb_events_eu_history")));

  // The mapping outlives the process: a restart keeps writing the renamed table's history.
  StopFeed();
  Execute("INSERT INTO orders_2024 VALUES (4, 40)");
  StartFeed();
  CatchUp();
  EXPECT_EQ(Read("lb_orders_history").Texts(), (std::vector<std::string>{"insert:1,10", "insert:2,20", "insert:4,40"}));
}

// Two feeds of one target capture a `users` table each (schemas public and marketing): they
// write two history tables, whichever feed meets its table first, and keep them across restarts.
TEST_F(ChangeFeedTest, TwoFeedsOfOneTargetNeverShareAHistoryTable) {
  Execute("CREATE TABLE users (id int, name text); ALTER TABLE users REPLICA IDENTITY FULL;"
          "INSERT INTO users VALUES (1, 'public-1')");
  Execute("CREATE SCHEMA marketing; CREATE TABLE marketing.users (id int, name text);"
          "ALTER TABLE marketing.users REPLICA IDENTITY FULL; INSERT INTO marketing.users VALUES (1, 'marketing-1')");
  ChangeFeedConfig marketing = Config();
  marketing.schema = "marketing";
  marketing.slot_name = Config().slot_name + "_m";
  marketing.publication_name = marketing.slot_name;
  auto run_marketing = [&](const std::function<void()>& while_running) {
    auto feed = PgChangeFeed::Start(marketing);
    ASSERT_TRUE(feed.ok()) << feed.status().ToString();
    std::atomic<bool> stop{false};
    Status ran;
    std::thread thread([&] { ran = (*feed)->Run(stop); });
    while_running();
    auto lsn = ParseLsn(db_->QueryValue("SELECT pg_current_wal_lsn()").value()).value();
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while ((*feed)->confirmed_lsn() < lsn && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    stop = true;
    thread.join();
    EXPECT_TRUE(ran.ok()) << ran.ToString();
  };
  StartFeed();
  run_marketing([&] { Execute("INSERT INTO marketing.users VALUES (2, 'marketing-2')"); });
  Execute("INSERT INTO users VALUES (2, 'public-2')");
  CatchUp();
  StopFeed();
  // Restarted, each feed goes on writing its own table.
  StartFeed();
  run_marketing([&] { Execute("INSERT INTO marketing.users VALUES (3, 'marketing-3')"); });
  Execute("INSERT INTO users VALUES (3, 'public-3')");
  CatchUp();

  EXPECT_EQ(Read("lb_users_history").Texts(),
            (std::vector<std::string>{"insert:1,public-1", "insert:2,public-2", "insert:3,public-3"}));
  EXPECT_EQ(Read("lb_users_history_1").Texts(),
            (std::vector<std::string>{"insert:1,marketing-1", "insert:2,marketing-2", "insert:3,marketing-3"}));
  Status dropped = DropChangeFeedSlot(marketing);
  EXPECT_TRUE(dropped.ok()) << dropped.ToString();
}

TEST_F(ChangeFeedTest, ColumnChangesReSnapshotTheTable) {
  Execute("CREATE TABLE t (id int, a text, b int); ALTER TABLE t REPLICA IDENTITY FULL;"
          "INSERT INTO t VALUES (1, 'x', 1), (2, 'y', 2)");
  StartFeed();
  Execute("UPDATE t SET b = 5 WHERE id = 1");
  Execute("ALTER TABLE t ADD COLUMN c int; UPDATE t SET c = id * 10 WHERE id = 2");
  CatchUp();
  History added = Read("lb_t_history");
  EXPECT_EQ(added.columns, (std::vector<std::string>{"id", "a", "b", "c"}));
  EXPECT_EQ(added.Texts(), (std::vector<std::string>{"insert:1,x,5,null", "insert:2,y,2,20"}));

  Execute("ALTER TABLE t DROP COLUMN b; INSERT INTO t VALUES (3, 'z', 30)");
  Execute("INSERT INTO t VALUES (4, 'w', 40)");
  Execute("ALTER TABLE t ALTER COLUMN c TYPE bigint");
  Execute("DELETE FROM t WHERE id = 1");  // its transaction brings the new Relation: re-snapshot
  CatchUp();
  History changed = Read("lb_t_history");
  EXPECT_EQ(changed.columns, (std::vector<std::string>{"id", "a", "c"}));
  EXPECT_EQ(changed.types, (std::vector<std::string>{"int", "string", "bigint"}));
  EXPECT_EQ(Replay(changed), SourceRows("SELECT id, a, c FROM t"));

  Execute("DELETE FROM t WHERE id = 3");  // streamed as usual after the re-snapshot
  CatchUp();
  History streamed = Read("lb_t_history");
  EXPECT_EQ(streamed.rows.back().Text(), "delete:3,z,30");
  EXPECT_EQ(Replay(streamed), SourceRows("SELECT id, a, c FROM t"));
}

TEST_F(ChangeFeedTest, TablesWithoutFullIdentityStreamKeysAndSaySo) {
  Execute("CREATE TABLE k (id int PRIMARY KEY, v text); INSERT INTO k VALUES (1, 'a')");
  StartFeed();
  Execute("UPDATE k SET v = 'b'");
  Execute("DELETE FROM k");
  CatchUp();
  EXPECT_EQ(Read("lb_k_history").Texts(), (std::vector<std::string>{"insert:1,a", "update_preimage:1,null",
                                                                    "update_postimage:1,b", "delete:1,null"}));
  auto status = ChangeFeedStatus(Config());
  ASSERT_TRUE(status.ok()) << status.status().ToString();
  EXPECT_NE(status->find("\"replica_identity_full\":false"), std::string::npos) << *status;
  EXPECT_NE(status->find("REPLICA IDENTITY is not FULL"), std::string::npos) << *status;
}

TEST_F(ChangeFeedTest, StatusSaysWhichTablesAreSkippedAndWhy) {
  Execute("CREATE TABLE items (id int); ALTER TABLE items REPLICA IDENTITY FULL; INSERT INTO items VALUES (1);"
          "CREATE TABLE later (id int); ALTER TABLE later REPLICA IDENTITY FULL;"
          "CREATE UNLOGGED TABLE scratch (id int); INSERT INTO scratch VALUES (1);"
          "CREATE MATERIALIZED VIEW totals AS SELECT count(*) AS n FROM items");
  StartFeed();
  EXPECT_EQ(TableStatus("public.items")["status"], "STREAMING");
  auto later = TableStatus("public.later");
  EXPECT_EQ(later["status"], "SKIPPED");
  EXPECT_EQ(later["target"], "");
  EXPECT_EQ(later["reason"], "empty so far: its history table appears with its first row");
  auto scratch = TableStatus("public.scratch");
  EXPECT_EQ(scratch["status"], "SKIPPED");
  EXPECT_TRUE(scratch["reason"].starts_with("UNLOGGED:")) << scratch["reason"];
  EXPECT_FALSE(std::filesystem::exists(HistoryPath("lb_scratch_history"))) << "an unlogged table is never copied";
  auto totals = TableStatus("public.totals");
  EXPECT_EQ(totals["status"], "SKIPPED");
  EXPECT_TRUE(totals["reason"].starts_with("a materialized view")) << totals["reason"];

  // Its first row gives the empty table its history.
  Execute("INSERT INTO later VALUES (7)");
  CatchUp();
  later = TableStatus("public.later");
  EXPECT_EQ(later["status"], "STREAMING");
  EXPECT_EQ(later["target"], "lb_later_history");
  EXPECT_EQ(later.count("reason"), 0u);
  EXPECT_EQ(Read("lb_later_history").Texts(), (std::vector<std::string>{"insert:7"}));
  StopFeed();
  auto stopped = ChangeFeedStatus(Config());
  ASSERT_TRUE(stopped.ok());
  EXPECT_NE(stopped->find("{\"status\":\"STOPPED\""), std::string::npos) << *stopped;
}

TEST_F(ChangeFeedTest, ATableWhoseHistoryCannotBeWrittenFailsTheFeedAndSaysWhy) {
  Execute("CREATE TABLE good (id int); ALTER TABLE good REPLICA IDENTITY FULL");
  StartFeed();
  Execute("CREATE TABLE clash (id int, _pg_lsn int); ALTER TABLE clash REPLICA IDENTITY FULL;"
          "INSERT INTO clash VALUES (1, 1)");
  Status ended = FeedEnds();
  EXPECT_EQ(ended.error_class(), "INVALID_SCHEMA") << ended.ToString();

  auto status = ChangeFeedStatus(Config());
  ASSERT_TRUE(status.ok());
  EXPECT_NE(status->find("{\"status\":\"FAILED\",\"error\":\"INVALID_SCHEMA: "), std::string::npos) << *status;
  auto clash = TableStatus("public.clash");
  EXPECT_EQ(clash["status"], "FAILED");
  EXPECT_EQ(clash["target"], "lb_clash_history");
  EXPECT_NE(clash["reason"].find("lb_clash_history cannot hold its source's columns"), std::string::npos)
      << clash["reason"];
  EXPECT_EQ(TableStatus("public.good")["status"], "SKIPPED");
  EXPECT_EQ(RunningChangeFeedPid(Config()), 0) << "a failed feed releases its lock";
}

TEST_F(ChangeFeedTest, StopAndStartKeepTheSlotUnlessItIsDropped) {
  Execute("CREATE TABLE s (id int); ALTER TABLE s REPLICA IDENTITY FULL");
  StartFeed();
  Execute("INSERT INTO s VALUES (1)");
  CatchUp();
  StopFeed();
  Execute("INSERT INTO s VALUES (2)");
  StartFeed();
  CatchUp();
  EXPECT_EQ(Read("lb_s_history").Texts(), (std::vector<std::string>{"insert:1", "insert:2"}));

  StopFeed();
  ASSERT_TRUE(DropChangeFeedSlot(Config()).ok());
  Execute("INSERT INTO s VALUES (3)");
  StartFeed();
  Execute("INSERT INTO s VALUES (4)");
  CatchUp();
  EXPECT_EQ(Read("lb_s_history").Texts(), (std::vector<std::string>{"insert:1", "insert:2", "insert:4"}))
      << "a dropped slot misses what changed meanwhile";
}

TEST_F(ChangeFeedTest, ASecondProcessCannotRunTheSameFeed) {
  StartFeed();
  EXPECT_NE(RunningChangeFeedPid(Config()), 0);
  auto second = PgChangeFeed::Start(Config());
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().error_class(), "CDF_ALREADY_RUNNING");
}

TEST_F(ChangeFeedTest, ASourceColumnNamedLikeAHistoryColumnFailsTheSetUp) {
  Execute("CREATE TABLE clash (id int, _sort_by int); INSERT INTO clash VALUES (1, 1)");
  auto feed = PgChangeFeed::Start(Config());
  ASSERT_FALSE(feed.ok());
  EXPECT_EQ(feed.status().error_class(), "INVALID_SCHEMA");
  EXPECT_NE(feed.status().message().find("lb_clash_history"), std::string_view::npos) << feed.status().ToString();
  EXPECT_EQ(TableStatus("public.clash")["status"], "FAILED");
  EXPECT_EQ(TableStatus("public.clash")["reason"], feed.status().ToString());
}

// The feed with its warehouse — history tables, state, status and lock — on each store.
class ChangeFeedOnStoresTest : public ChangeFeedTest, public ::testing::WithParamInterface<sluice::testing::Store> {
 protected:
  ChangeFeedOnStoresTest() { warehouse_ = root_.path(); }
  sluice::testing::StoreRoot root_{GetParam()};
};

TEST_P(ChangeFeedOnStoresTest, HistoryStateAndLockLiveInTheWarehouse) {
  Execute("CREATE TABLE items (id int PRIMARY KEY, name text, qty int); ALTER TABLE items REPLICA IDENTITY FULL;"
          "INSERT INTO items VALUES (1, 'apple', 10)");
  StartFeed();
  Execute("INSERT INTO items VALUES (2, 'pear', 20)");
  Execute("UPDATE items SET qty = 11 WHERE id = 1");
  Execute("DELETE FROM items WHERE id = 2");
  CatchUp();
  EXPECT_EQ(Read("lb_items_history").Texts(),
            (std::vector<std::string>{"insert:1,apple,10", "insert:2,pear,20", "update_preimage:1,apple,10",
                                      "update_postimage:1,apple,11", "delete:2,pear,20"}));
  const std::string state = warehouse_ + "/main/cdc/_change_feeds/" + Config().slot_name;
  EXPECT_TRUE(storage::DefaultFileSystem()->Exists(state + "/state.json").value());
  EXPECT_EQ(TableStatus("public.items")["status"], "STREAMING");
  EXPECT_NE(RunningChangeFeedPid(Config()), 0);
  auto second = PgChangeFeed::Start(Config());
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().error_class(), "CDF_ALREADY_RUNNING");

  // Stopped and started again, it resumes from the state in the warehouse: nothing lost or doubled.
  StopFeed();
  EXPECT_EQ(RunningChangeFeedPid(Config()), 0);
  Execute("INSERT INTO items VALUES (3, 'fig', 30)");
  StartFeed();
  Execute("UPDATE items SET name = 'figs' WHERE id = 3");
  CatchUp();
  History history = Read("lb_items_history");
  EXPECT_EQ(history.rows.size(), 8u);
  EXPECT_EQ(Replay(history), SourceRows("SELECT id, name, qty FROM items"));
}

INSTANTIATE_TEST_SUITE_P(Stores, ChangeFeedOnStoresTest, ::testing::ValuesIn(sluice::testing::kAllStores),
                         sluice::testing::StoreName);

TEST(ChangeFeedConfigTest, OptionsAreCheckedBeforeAnythingRuns) {
  auto config = MakeChangeFeedConfig({{"schema", "public"}, {"target", "main.cdc"}, {"warehouse", "/w"},
                                      {"database", "Shop"}, {"flush_interval", "250ms"}});
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->slot_name, "sluice_cdf_shop_public");
  EXPECT_EQ(config->publication_name, "sluice_cdf_shop_public");
  EXPECT_EQ(config->state_directory(), "/w/main/cdc/_change_feeds/sluice_cdf_shop_public");
  EXPECT_EQ(config->flush_interval, std::chrono::milliseconds(250));

  auto unknown = MakeChangeFeedConfig({{"schema", "public"}, {"target", "main.cdc"}, {"warehouse", "/w"},
                                       {"flushinterval", "1s"}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().error_class(), "CDF_INVALID_OPTIONS");
  auto bad_target = MakeChangeFeedConfig({{"schema", "public"}, {"target", "cdc"}, {"warehouse", "/w"}});
  ASSERT_FALSE(bad_target.ok());
  EXPECT_NE(bad_target.status().message().find("catalog.schema"), std::string_view::npos);
  auto bad_slot = MakeChangeFeedConfig(
      {{"schema", "public"}, {"target", "main.cdc"}, {"warehouse", "/w"}, {"slot_name", "Bad-Name"}});
  EXPECT_EQ(bad_slot.status().error_class(), "CDF_INVALID_OPTIONS");
}

TEST(ChangeFeedCheckTest, ReportsReplicaIdentityAndFixesIt) {
  auto db = PostgresTestDatabase::Create();
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE((*db)->Execute("CREATE TABLE a (id int); CREATE TABLE b (id int); ALTER TABLE b REPLICA IDENTITY FULL")
                  .ok());
  auto check = CheckChangeFeed((*db)->connection_string(), "public");
  ASSERT_TRUE(check.ok()) << check.status().ToString();
  EXPECT_EQ(check->wal_level, "logical");
  EXPECT_TRUE(check->can_replicate);
  EXPECT_TRUE(check->problems.empty());
  ASSERT_EQ(check->tables.size(), 2u);
  EXPECT_FALSE(check->tables[0].ready());
  EXPECT_TRUE(check->tables[1].ready());

  auto changed = SetReplicaIdentityFull((*db)->connection_string(), "public", /*future=*/true);
  ASSERT_TRUE(changed.ok()) << changed.status().ToString();
  EXPECT_EQ(*changed, (std::vector<std::string>{"a"}));
  ASSERT_TRUE((*db)->Execute("CREATE TABLE c (id int)").ok());
  auto after = CheckChangeFeed((*db)->connection_string(), "public");
  ASSERT_TRUE(after.ok());
  for (const auto& table : after->tables) EXPECT_TRUE(table.ready()) << table.name << " " << table.replica_identity;
}

}  // namespace
}  // namespace sluice::connectors
