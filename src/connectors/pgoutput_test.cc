#include "sluice/connectors/pgoutput.h"

#include <gtest/gtest.h>

#include <string>

namespace sluice::connectors {
namespace {

// Builds messages byte by byte, big-endian, as the server sends them.
class Bytes {
 public:
  Bytes& u8(uint8_t v) { s_.push_back(static_cast<char>(v)); return *this; }
  Bytes& u16(uint16_t v) { return be(v, 2); }
  Bytes& u32(uint32_t v) { return be(v, 4); }
  Bytes& u64(uint64_t v) { return be(v, 8); }
  Bytes& cstr(std::string_view v) { s_.append(v); s_.push_back('\0'); return *this; }
  Bytes& text(std::string_view v) { u8('t'); u32(static_cast<uint32_t>(v.size())); s_.append(v); return *this; }
  const std::string& str() const { return s_; }

 private:
  Bytes& be(uint64_t v, int n) {
    for (int i = n - 1; i >= 0; --i) s_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    return *this;
  }
  std::string s_;
};

TEST(Lsn, FormatsAndParsesLikePostgres) {
  EXPECT_EQ(FormatLsn(0x16B374D848ULL), "16/B374D848");
  EXPECT_EQ(FormatLsn(0), "0/0");
  EXPECT_EQ(*ParseLsn("16/B374D848"), 0x16B374D848ULL);
  EXPECT_EQ(*ParseLsn("0/1a"), 0x1aULL);
  EXPECT_FALSE(ParseLsn("16B374D848").ok());
  EXPECT_FALSE(ParseLsn("1/G").ok());
  EXPECT_FALSE(ParseLsn("123456789/0").ok());
}

TEST(ReplicationFrame, ParsesXLogDataAndKeepalive) {
  Bytes x;
  x.u8('w').u64(100).u64(200).u64(300).cstr("payload");
  auto frame = ParseReplicationFrame(x.str());
  ASSERT_TRUE(frame.ok()) << frame.status().ToString();
  EXPECT_EQ(frame->kind, ReplicationFrame::Kind::kXLogData);
  EXPECT_EQ(frame->xlog.wal_start, 100u);
  EXPECT_EQ(frame->xlog.wal_end, 200u);
  EXPECT_EQ(frame->xlog.payload, std::string_view("payload\0", 8));

  Bytes k;
  k.u8('k').u64(0xABCDEF).u64(5).u8(1);
  auto keepalive = ParseReplicationFrame(k.str());
  ASSERT_TRUE(keepalive.ok());
  EXPECT_EQ(keepalive->kind, ReplicationFrame::Kind::kKeepalive);
  EXPECT_EQ(keepalive->keepalive.wal_end, 0xABCDEFu);
  EXPECT_TRUE(keepalive->keepalive.reply_requested);
}

TEST(ReplicationFrame, RejectsTruncatedAndUnknownFrames) {
  EXPECT_EQ(ParseReplicationFrame("").status().error_class(), "PG_REPLICATION_PROTOCOL_ERROR");
  EXPECT_EQ(ParseReplicationFrame(std::string("w\0\0", 3)).status().error_class(), "PG_REPLICATION_PROTOCOL_ERROR");
  EXPECT_EQ(ParseReplicationFrame("zzzz").status().error_class(), "PG_REPLICATION_PROTOCOL_ERROR");
}

TEST(StandbyStatusUpdate, EncodesPositionsBigEndian) {
  std::string msg = EncodeStandbyStatusUpdate(0x0102030405060708ULL, 2, 3, 4, true);
  ASSERT_EQ(msg.size(), 34u);
  EXPECT_EQ(msg[0], 'r');
  EXPECT_EQ(static_cast<uint8_t>(msg[1]), 0x01);
  EXPECT_EQ(static_cast<uint8_t>(msg[8]), 0x08);
  EXPECT_EQ(static_cast<uint8_t>(msg[16]), 2);
  EXPECT_EQ(static_cast<uint8_t>(msg[33]), 1);
}

TEST(PgOutput, ParsesBeginAndCommit) {
  PgOutputMessage m;
  Bytes b;
  b.u8('B').u64(0x500).u64(777).u32(42);
  ASSERT_TRUE(ParsePgOutputMessage(b.str(), false, &m).ok());
  EXPECT_EQ(m.kind, PgOutputMessage::Kind::kBegin);
  EXPECT_EQ(m.final_lsn, 0x500u);
  EXPECT_EQ(m.timestamp, 777);
  EXPECT_EQ(m.xid, 42u);

  Bytes c;
  c.u8('C').u8(0).u64(0x500).u64(0x530).u64(777);
  ASSERT_TRUE(ParsePgOutputMessage(c.str(), false, &m).ok());
  EXPECT_EQ(m.kind, PgOutputMessage::Kind::kCommit);
  EXPECT_EQ(m.commit_lsn, 0x500u);
  EXPECT_EQ(m.end_lsn, 0x530u);
}

TEST(PgOutput, ParsesRelationColumnsAndKeys) {
  Bytes r;
  r.u8('R').u32(16384).cstr("public").cstr("orders").u8('f').u16(2);
  r.u8(1).cstr("id").u32(20).u32(0xFFFFFFFF);
  r.u8(0).cstr("note").u32(25).u32(0xFFFFFFFF);
  PgOutputMessage m;
  ASSERT_TRUE(ParsePgOutputMessage(r.str(), false, &m).ok());
  EXPECT_EQ(m.oid, 16384u);
  EXPECT_EQ(m.namespace_name, "public");
  EXPECT_EQ(m.name, "orders");
  EXPECT_EQ(m.replica_identity, 'f');
  ASSERT_EQ(m.columns.size(), 2u);
  EXPECT_TRUE(m.columns[0].part_of_key);
  EXPECT_EQ(m.columns[0].type_oid, 20u);
  EXPECT_EQ(m.columns[0].type_modifier, -1);
  EXPECT_EQ(m.columns[1].name, "note");
  EXPECT_FALSE(m.columns[1].part_of_key);
}

TEST(PgOutput, ParsesTuplesWithNullsToastAndText) {
  Bytes u;
  u.u8('U').u32(16384).u8('O').u16(3).text("1").u8('n').text("old");
  u.u8('N').u16(3).text("1").u8('n').u8('u');
  PgOutputMessage m;
  ASSERT_TRUE(ParsePgOutputMessage(u.str(), false, &m).ok());
  EXPECT_EQ(m.kind, PgOutputMessage::Kind::kUpdate);
  EXPECT_EQ(m.old_kind, 'O');
  ASSERT_EQ(m.old_tuple.size(), 3u);
  EXPECT_EQ(m.old_tuple[2].data, "old");
  ASSERT_EQ(m.new_tuple.size(), 3u);
  EXPECT_EQ(m.new_tuple[0].kind, TupleValue::Kind::kText);
  EXPECT_EQ(m.new_tuple[1].kind, TupleValue::Kind::kNull);
  EXPECT_EQ(m.new_tuple[2].kind, TupleValue::Kind::kUnchangedToast);

  Bytes plain_update;
  plain_update.u8('U').u32(7).u8('N').u16(1).text("x");
  ASSERT_TRUE(ParsePgOutputMessage(plain_update.str(), false, &m).ok());
  EXPECT_EQ(m.old_kind, 0);
  EXPECT_TRUE(m.old_tuple.empty());

  Bytes d;
  d.u8('D').u32(7).u8('K').u16(1).text("9");
  ASSERT_TRUE(ParsePgOutputMessage(d.str(), false, &m).ok());
  EXPECT_EQ(m.old_kind, 'K');
  EXPECT_EQ(m.old_tuple[0].data, "9");
  EXPECT_TRUE(m.new_tuple.empty());
}

TEST(PgOutput, ReadsTheXidOfStreamedDataMessages) {
  Bytes i;
  i.u8('I').u32(99).u32(16384).u8('N').u16(1).text("v");
  PgOutputMessage m;
  ASSERT_TRUE(ParsePgOutputMessage(i.str(), true, &m).ok());
  EXPECT_EQ(m.xid, 99u);
  EXPECT_EQ(m.oid, 16384u);
  // The same bytes outside a stream read the xid as the oid and then fail on the marker.
  EXPECT_FALSE(ParsePgOutputMessage(i.str(), false, &m).ok());
}

TEST(PgOutput, ParsesTruncateMessageAndStreamControl) {
  Bytes t;
  t.u8('T').u32(2).u8(1).u32(10).u32(11);
  PgOutputMessage m;
  ASSERT_TRUE(ParsePgOutputMessage(t.str(), false, &m).ok());
  EXPECT_EQ(m.truncated_oids, (std::vector<uint32_t>{10, 11}));
  EXPECT_EQ(m.flags, 1);

  Bytes msg;
  msg.u8('M').u8(1).u64(0x99).cstr("prefix").u32(3).cstr("ab");
  ASSERT_TRUE(ParsePgOutputMessage(msg.str(), false, &m).ok());
  EXPECT_EQ(m.name, "prefix");
  EXPECT_EQ(m.content, std::string_view("ab\0", 3));

  Bytes s;
  s.u8('S').u32(5).u8(1);
  ASSERT_TRUE(ParsePgOutputMessage(s.str(), false, &m).ok());
  EXPECT_EQ(m.xid, 5u);
  Bytes sc;
  sc.u8('c').u32(5).u8(0).u64(1).u64(2).u64(3);
  ASSERT_TRUE(ParsePgOutputMessage(sc.str(), false, &m).ok());
  EXPECT_EQ(m.end_lsn, 2u);
}

TEST(PgOutput, EveryTruncationOfAValidMessageIsAnError) {
  Bytes r;
  r.u8('R').u32(1).cstr("s").cstr("t").u8('d').u16(1).u8(1).cstr("c").u32(23).u32(0);
  Bytes u;
  u.u8('U').u32(1).u8('O').u16(2).text("abc").u8('n').u8('N').u16(1).text("z");
  for (const std::string& full : {r.str(), u.str()}) {
    PgOutputMessage m;
    ASSERT_TRUE(ParsePgOutputMessage(full, false, &m).ok());
    for (size_t n = 0; n < full.size(); ++n) {
      Status s = ParsePgOutputMessage(std::string_view(full).substr(0, n), false, &m);
      EXPECT_EQ(s.error_class(), "PG_REPLICATION_PROTOCOL_ERROR") << "prefix of " << n << " bytes";
    }
  }
}

TEST(PgOutput, RejectsLyingCountsAndUnknownKinds) {
  PgOutputMessage m;
  Bytes huge_tuple;
  huge_tuple.u8('I').u32(1).u8('N').u16(65535).u8('n');
  EXPECT_FALSE(ParsePgOutputMessage(huge_tuple.str(), false, &m).ok());
  Bytes huge_truncate;
  huge_truncate.u8('T').u32(0xFFFFFFFF).u8(0);
  EXPECT_FALSE(ParsePgOutputMessage(huge_truncate.str(), false, &m).ok());
  Bytes negative_length;
  negative_length.u8('I').u32(1).u8('N').u16(1).u8('t').u32(0xFFFFFFFF);
  EXPECT_FALSE(ParsePgOutputMessage(negative_length.str(), false, &m).ok());
  Bytes bad_column_kind;
  bad_column_kind.u8('I').u32(1).u8('N').u16(1).u8('x');
  EXPECT_FALSE(ParsePgOutputMessage(bad_column_kind.str(), false, &m).ok());
  EXPECT_FALSE(ParsePgOutputMessage("Q", false, &m).ok());
}

}  // namespace
}  // namespace sluice::connectors
