#include "sluice/connectors/pg_replication.h"

#include <gtest/gtest.h>

#include <map>

#include "sluice/connectors/testing/postgres_fixture.h"

namespace sluice::connectors {
namespace {

using testing::PostgresTestDatabase;

// What a test saw of one replicated transaction, in order: "kind:values" strings.
struct Captured {
  std::vector<std::string> events;
  Lsn last_commit_end = 0;
};

std::string Values(const std::vector<TupleValue>& tuple) {
  std::string out;
  for (const TupleValue& v : tuple) {
    if (!out.empty()) out += ",";
    switch (v.kind) {
      case TupleValue::Kind::kNull: out += "NULL"; break;
      case TupleValue::Kind::kUnchangedToast: out += "TOAST"; break;
      default: out += std::string(v.data);
    }
  }
  return out;
}

// Reads frames until `commits` transactions have committed, answering keepalives.
Captured ReadTransactions(PgReplicationConnection* conn, int commits) {
  Captured captured;
  PgOutputMessage message;
  std::map<uint32_t, std::string> relations;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (commits > 0 && std::chrono::steady_clock::now() < deadline) {
    auto frame = conn->ReadFrame(std::chrono::milliseconds(200));
    EXPECT_TRUE(frame.ok()) << frame.status().ToString();
    if (!frame.ok() || !frame->has_value()) continue;
    if ((*frame)->kind == ReplicationFrame::Kind::kKeepalive) {
      if ((*frame)->keepalive.reply_requested) {
        EXPECT_TRUE(conn->SendStatus(0).ok());
      }
      continue;
    }
    Status s = ParsePgOutputMessage((*frame)->xlog.payload, false, &message);
    EXPECT_TRUE(s.ok()) << s.ToString();
    switch (message.kind) {
      case PgOutputMessage::Kind::kRelation:
        relations[message.oid] = std::string(message.namespace_name) + "." + std::string(message.name);
        captured.events.push_back("relation:" + relations[message.oid] + ":" + message.replica_identity);
        break;
      case PgOutputMessage::Kind::kInsert:
        captured.events.push_back("insert:" + relations[message.oid] + ":" + Values(message.new_tuple));
        break;
      case PgOutputMessage::Kind::kUpdate:
        captured.events.push_back("update:" + std::string(1, message.old_kind) + ":" + Values(message.old_tuple) +
                                  "->" + Values(message.new_tuple));
        break;
      case PgOutputMessage::Kind::kDelete:
        captured.events.push_back("delete:" + std::string(1, message.old_kind) + ":" + Values(message.old_tuple));
        break;
      case PgOutputMessage::Kind::kCommit:
        EXPECT_GT(message.end_lsn, message.commit_lsn);
        captured.last_commit_end = message.end_lsn;
        --commits;
        break;
      default:
        break;
    }
  }
  EXPECT_EQ(commits, 0) << "timed out waiting for transactions";
  return captured;
}

TEST(PgReplicationConnection, StreamsInsertsUpdatesAndDeletesWithFullOldRows) {
  auto db = PostgresTestDatabase::Create();
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  PostgresTestDatabase& d = **db;
  ASSERT_TRUE(d.Execute("CREATE TABLE orders (id bigint PRIMARY KEY, note text, qty int);"
                        "ALTER TABLE orders REPLICA IDENTITY FULL;"
                        "CREATE PUBLICATION feed FOR TABLES IN SCHEMA public;").ok());
  auto conn = PgReplicationConnection::Connect(d.connection_string());
  ASSERT_TRUE(conn.ok()) << conn.status().ToString();
  const std::string slot_name = "slot_" + d.name();
  auto slot = (*conn)->CreateSlot(slot_name, /*export_snapshot=*/false);
  ASSERT_TRUE(slot.ok()) << slot.status().ToString();
  EXPECT_GT(slot->consistent_point, 0u);

  ASSERT_TRUE(d.Execute("INSERT INTO orders VALUES (1, 'first', 5), (2, NULL, 7)").ok());
  ASSERT_TRUE(d.Execute("UPDATE orders SET qty = 6 WHERE id = 1").ok());
  ASSERT_TRUE(d.Execute("DELETE FROM orders WHERE id = 2").ok());

  ASSERT_TRUE((*conn)->StartReplication(slot_name, slot->consistent_point, {"feed"}).ok());
  Captured captured = ReadTransactions(conn->get(), 3);
  EXPECT_EQ(captured.events, (std::vector<std::string>{
                                 "relation:public.orders:f",
                                 "insert:public.orders:1,first,5",
                                 "insert:public.orders:2,NULL,7",
                                 "update:O:1,first,5->1,first,6",
                                 "delete:O:2,NULL,7",
                             }));

  // Confirming the last commit's end moves the slot forward: the server may release that WAL.
  ASSERT_TRUE((*conn)->SendStatus(captured.last_commit_end, /*reply_requested=*/false).ok());
  std::string confirmed;
  for (int i = 0; i < 100 && confirmed != FormatLsn(captured.last_commit_end); ++i) {
    (void)(*conn)->ReadFrame(std::chrono::milliseconds(50));
    auto value = d.QueryValue("SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = '" + slot_name + "'");
    ASSERT_TRUE(value.ok()) << value.status().ToString();
    confirmed = *value;
  }
  EXPECT_EQ(confirmed, FormatLsn(captured.last_commit_end));
}

TEST(PgReplicationConnection, ExportsASnapshotConsistentWithTheSlot) {
  auto db = PostgresTestDatabase::Create();
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  PostgresTestDatabase& d = **db;
  ASSERT_TRUE(d.Execute("CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t VALUES (1), (2);"
                        "CREATE PUBLICATION feed FOR TABLES IN SCHEMA public;").ok());
  auto conn = PgReplicationConnection::Connect(d.connection_string());
  ASSERT_TRUE(conn.ok()) << conn.status().ToString();
  auto slot = (*conn)->CreateSlot("snap_" + d.name(), /*export_snapshot=*/true);
  ASSERT_TRUE(slot.ok()) << slot.status().ToString();
  ASSERT_FALSE(slot->snapshot_name.empty());

  // A row written after the slot exists is not in the snapshot, but arrives through the stream.
  ASSERT_TRUE(d.Execute("INSERT INTO t VALUES (3)").ok());
  auto in_snapshot = d.QueryValue("BEGIN ISOLATION LEVEL REPEATABLE READ; SET TRANSACTION SNAPSHOT '" +
                                  slot->snapshot_name + "'; SELECT count(*) FROM t");
  ASSERT_TRUE(in_snapshot.ok()) << in_snapshot.status().ToString();
  EXPECT_EQ(*in_snapshot, "2");
  ASSERT_TRUE(d.Execute("COMMIT").ok());

  ASSERT_TRUE((*conn)->StartReplication(slot->name, slot->consistent_point, {"feed"}).ok());
  Captured captured = ReadTransactions(conn->get(), 1);
  ASSERT_EQ(captured.events.size(), 2u);
  EXPECT_EQ(captured.events[1], "insert:public.t:3");
}

TEST(PgReplicationConnection, RefusesHostileNamesBeforeTheyReachTheServer) {
  auto db = PostgresTestDatabase::Create();
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto conn = PgReplicationConnection::Connect((*db)->connection_string());
  ASSERT_TRUE(conn.ok()) << conn.status().ToString();
  EXPECT_EQ((*conn)->CreateSlot("x; DROP TABLE t", false).status().error_class(), "INVALID_ARGUMENT");
  EXPECT_EQ((*conn)->CreateSlot("UPPER", false).status().error_class(), "INVALID_ARGUMENT");
  EXPECT_EQ((*conn)->StartReplication("ok", 0, {"p' , x '"}).error_class(), "INVALID_ARGUMENT");
  EXPECT_EQ((*conn)->DropSlot(std::string(64, 'a')).error_class(), "INVALID_ARGUMENT");
  EXPECT_EQ((*conn)->DropSlot("does_not_exist").error_class(), "PG_QUERY_FAILED");
}

TEST(PgReplicationConnection, ReportsAnUnreachableServer) {
  auto conn = PgReplicationConnection::Connect("host=127.0.0.1 port=1 user=nobody dbname=x connect_timeout=2");
  EXPECT_EQ(conn.status().error_class(), "PG_CONNECTION_FAILED");
}

}  // namespace
}  // namespace sluice::connectors
