// The postgresql sink under the real_time trigger: buffering by batchsize and batchinterval,
// replays of an epoch, and recovery from a server restart and a terminated backend.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "sluice/connectors/pg_connection.h"
#include "sluice/connectors/pg_real_time_writer.h"
#include "sluice/connectors/postgres_sink.h"
#include "sluice/connectors/register_formats.h"
#include "sluice/connectors/testing/postgres_fixture.h"
#include "sluice/core/builder.h"
#include "sluice/engine/streaming_query.h"
#include "testing/temp_dir.h"

namespace sluice::connectors {
namespace {

using std::chrono::milliseconds;
using testing::PostgresTestDatabase;
using testing::Rows;

int64_t NowMs() {
  return std::chrono::duration_cast<milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Forwards TCP connections from a local port to the server's current port, so that a client keeps
// one address across a server restart (which moves the embedded server to a new port). A
// connection whose either side closes is closed on the other; while the target is down, new
// connections are closed at once, as a refused connection would be.
class TcpForwarder {
 public:
  explicit TcpForwarder(int target_port) : target_port_(target_port) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(addr);
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 && ::listen(listen_fd_, 16) == 0 &&
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &length) == 0) {
      port_ = ntohs(addr.sin_port);
    }
    acceptor_ = std::thread([this] { AcceptLoop(); });
  }
  ~TcpForwarder() {
    stop_.store(true);
    acceptor_.join();
    std::lock_guard lock(mu_);
    for (std::thread& t : relays_) t.join();
    ::close(listen_fd_);
  }
  int port() const { return port_; }
  void set_target_port(int port) { target_port_.store(port); }

 private:
  void AcceptLoop() {
    while (!stop_.load()) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      int client = ::accept(listen_fd_, nullptr, nullptr);
      if (client < 0) continue;
      std::lock_guard lock(mu_);
      relays_.emplace_back([this, client] { Relay(client); });
    }
  }
  void Relay(int client) {
    int server = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(target_port_.load()));
    if (::connect(server, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
      char buffer[65536];
      pollfd p[2] = {{client, POLLIN, 0}, {server, POLLIN, 0}};
      bool open = true;
      while (open && !stop_.load()) {
        if (::poll(p, 2, 50) <= 0) continue;
        for (int i = 0; i < 2 && open; ++i) {
          if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
          ssize_t n = ::read(p[i].fd, buffer, sizeof(buffer));
          for (ssize_t sent = 0; n > 0 && sent < n;) {
            ssize_t w = ::write(p[1 - i].fd, buffer + sent, n - sent);
            if (w <= 0) break;
            sent += w;
          }
          open = n > 0;
        }
      }
    }
    ::close(server);
    ::close(client);
  }

  std::atomic<int> target_port_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread acceptor_;
  std::mutex mu_;
  std::vector<std::thread> relays_;
};

class PostgresSinkRealTimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = PostgresTestDatabase::Create();
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(*db);
  }
  // A test that failed before Finish() leaves its query running: stopped here, so that the
  // failure is reported and the other tests run.
  void TearDown() override {
    if (runner_.joinable()) (void)Finish();
  }

  // Sink options for `table`, connecting to `port` (the server's own by default).
  std::map<std::string, std::string> Options(const std::string& table, int port = 0) {
    EmbeddedPostgres& server = db_->server();
    return {{"dbtable", table},
            {"checkpointLocation", dir_.Join("checkpoint")},
            {"host", server.host()},
            {"port", std::to_string(port ? port : server.port())},
            {"user", server.superuser()},
            {"database", db_->name()}};
  }

  // Starts rate(rows_per_second) -> postgresql under real_time with `checkpoint_interval`, on a
  // thread of its own; Finish() stops it and returns how it ended.
  void Start(int64_t rows_per_second, std::map<std::string, std::string> sink_options,
             milliseconds checkpoint_interval) {
    // Created here rather than by the sink, so that the test can read it from the start.
    ASSERT_TRUE(db_->Execute("CREATE TABLE events (\"timestamp\" timestamptz, value bigint)").ok());
    start_ms_ = NowMs();
    auto source = AllFormatsRegistry().MakeSource(
        "rate", {{"rowsPerSecond", std::to_string(rows_per_second)}, {"startTimestamp", std::to_string(start_ms_)}});
    ASSERT_TRUE(source.ok()) << source.status().ToString();
    auto sink = AllFormatsRegistry().MakeSink("postgresql", sink_options);
    ASSERT_TRUE(sink.ok()) << sink.status().ToString();
    engine::QueryConfig config;
    config.name = "rate_to_postgres_real_time";
    config.checkpoint_location = dir_.Join("checkpoint");
    config.trigger = engine::Trigger::RealTime(checkpoint_interval);
    config.output_mode = engine::OutputMode::kUpdate;
    auto query = engine::StreamingQuery::Start(std::move(*source), std::move(*sink), std::move(config));
    ASSERT_TRUE(query.ok()) << query.status().ToString();
    query_ = std::move(*query);
    runner_ = std::thread([this] { run_status_ = query_->Run(); });
  }
  Status Finish() {
    query_->Stop();
    runner_.join();
    return run_status_;
  }

  // Runs `sql` on a connection of the test's own, opened again when a server restart broke it.
  std::string Value(const std::string& sql) {
    Result<PgRows> rows = Status::Error("TEST", "not connected");
    for (int attempt = 0; attempt < 2 && !rows.ok(); ++attempt) {
      if (reader_ == nullptr || !reader_->is_open() || attempt > 0) {
        auto conn = PgConnection::Connect(db_->connection_string());
        if (!conn.ok()) continue;
        reader_ = std::move(*conn);
      }
      rows = reader_->Query(sql);
    }
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return rows.ok() && rows->size() == 1 && (*rows)[0][0] ? *(*rows)[0][0] : "";
  }
  int64_t Count(const std::string& table) { return std::stoll(Value("SELECT count(*) FROM " + table)); }
  // Waits until `table` holds at least `rows` rows, at most `limit`.
  bool WaitForRows(const std::string& table, int64_t rows, milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      if (Count(table) >= rows) return true;
      std::this_thread::sleep_for(milliseconds(10));
    }
    return false;
  }
  // Every row the rate source generated, each exactly once: values 0 .. n-1.
  void ExpectEveryValueOnce(const std::string& table) {
    EXPECT_EQ(Value("SELECT count(*) = count(DISTINCT value) AND count(*) = max(value) + 1 AND min(value) = 0 FROM " +
                    table),
              "t");
  }

  std::unique_ptr<PostgresTestDatabase> db_;
  std::unique_ptr<PgConnection> reader_;
  sluice::testing::TempDir dir_;
  int64_t start_ms_ = 0;
  std::unique_ptr<engine::StreamingQuery> query_;
  std::thread runner_;
  Status run_status_;
};

TEST_F(PostgresSinkRealTimeTest, RefusesABatchIntervalOfZeroByName) {
  auto options = Options("events");
  options["batchinterval"] = "0 seconds";
  Status refused = AllFormatsRegistry().MakeSink("postgresql", options).status();
  EXPECT_EQ(refused.error_class(), "JDBC_STREAMING_SINK_INVALID_OPTIONS");
  EXPECT_NE(refused.message().find("batchinterval"), std::string_view::npos) << refused.ToString();
}

TEST_F(PostgresSinkRealTimeTest, RowsBecomeVisibleWithinTheBatchIntervalFromASlowSource) {
  auto options = Options("events");
  options["batchinterval"] = "100 milliseconds";
  // 20 rows a second never fill a batch of 1000, and the epoch lasts longer than the test: only
  // the interval flushes.
  Start(20, options, std::chrono::seconds(60));
  // (poll time, largest value visible then)
  std::vector<std::pair<int64_t, int64_t>> seen;
  while (NowMs() < start_ms_ + 1500) {
    std::string max = Value("SELECT coalesce(max(value), -1) FROM events");
    seen.emplace_back(NowMs(), std::stoll(max));
    std::this_thread::sleep_for(milliseconds(5));
  }
  ASSERT_TRUE(Finish().ok());
  // Row v is generated at start + v * 50 ms; it must be visible at the first poll at least
  // interval + a margin for the write and a loaded CI machine later.
  int64_t checked = 0;
  bool flowing = false;
  for (const auto& [at, max] : seen) {
    // From the first visible row on: before it, the sink was still connecting and creating its
    // progress table.
    flowing = flowing || max >= 0;
    const int64_t due_value = (at - start_ms_ - 100 - 300) / 50;
    if (!flowing || due_value < 0) continue;
    EXPECT_GE(max, due_value) << "at +" << at - start_ms_ << " ms";
    ++checked;
  }
  EXPECT_GT(checked, 50);
  EXPECT_GE(std::stoll(Value("SELECT count(*) FROM events")), 20);
  ExpectEveryValueOnce("events");
}

TEST_F(PostgresSinkRealTimeTest, AFullBatchIsFlushedWithoutWaitingForTheInterval) {
  auto options = Options("events");
  options["batchsize"] = "50";
  options["batchinterval"] = "1 hour";
  Start(1000, options, std::chrono::seconds(60));
  ASSERT_TRUE(WaitForRows("events", 200, std::chrono::seconds(10)));
  // Only full batches can have been flushed: the interval is an hour away and the epoch a minute.
  EXPECT_EQ(Count("events") % 50, 0);
  EXPECT_EQ(Value("SELECT bool_and(chunk % 50 = 0) FROM _sluice_progress"), "t");
  ASSERT_TRUE(Finish().ok());
  // Ending the epoch flushed the rest.
  ExpectEveryValueOnce("events");
}

TEST_F(PostgresSinkRealTimeTest, SurvivesAServerRestartMidStreamLosingNothing) {
  TcpForwarder forwarder(db_->server().port());
  ASSERT_NE(forwarder.port(), 0);
  auto options = Options("events", forwarder.port());
  // A restart of a server that many tests wrote to takes long under ThreadSanitizer: the sink's
  // retries span about a minute here instead of the default's twenty seconds.
  options["maxretries"] = "12";
  Start(500, options, milliseconds(300));
  ASSERT_TRUE(WaitForRows("events", 100, std::chrono::seconds(10)));
  ASSERT_TRUE(db_->server().Restart().ok());
  forwarder.set_target_port(db_->server().port());
  const int64_t after_restart = Count("events");
  ASSERT_TRUE(WaitForRows("events", after_restart + 300, std::chrono::seconds(90)));
  Status ended = Finish();
  ASSERT_TRUE(ended.ok()) << ended.ToString();
  ExpectEveryValueOnce("events");
}

TEST_F(PostgresSinkRealTimeTest, SurvivesItsBackendBeingTerminatedMidStream) {
  auto options = Options("events");
  Start(500, options, milliseconds(300));
  for (int kill = 0; kill < 3; ++kill) {
    ASSERT_TRUE(WaitForRows("events", 100 * (kill + 1), std::chrono::seconds(10)));
    Value("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'sluice' AND "
          "datname = current_database()");
  }
  const int64_t after_kills = Count("events");
  ASSERT_TRUE(WaitForRows("events", after_kills + 200, std::chrono::seconds(30)));
  Status ended = Finish();
  ASSERT_TRUE(ended.ok()) << ended.ToString();
  ExpectEveryValueOnce("events");
}

BatchPtr Values(int64_t from, int64_t to) {
  Int64Builder values(DataType::Long());
  for (int64_t v = from; v < to; ++v) values.Append(v);
  TypePtr schema = *DataType::Struct({{"value", DataType::Long()}});
  return *RecordBatch::Make(schema, {values.Finish()}, to - from);
}

// Values from..to-1, shuffled by `seed` (0: in order), as a read of several Kafka partitions
// interleaves them differently each time.
BatchPtr Shuffled(int64_t from, int64_t to, unsigned seed) {
  std::vector<int64_t> order;
  for (int64_t v = from; v < to; ++v) order.push_back(v);
  if (seed != 0) std::shuffle(order.begin(), order.end(), std::mt19937(seed));
  Int64Builder values(DataType::Long());
  for (int64_t v : order) values.Append(v);
  TypePtr schema = *DataType::Struct({{"value", DataType::Long()}});
  return *RecordBatch::Make(schema, {values.Finish()}, to - from);
}

std::unique_ptr<PgRealTimeWriter> RealTimeWriter(const std::string& conninfo, int tasks, int64_t batch_size,
                                                  milliseconds batch_interval = milliseconds(5)) {
  std::vector<std::unique_ptr<PgUpsertWriter>> writers;
  for (int t = 0; t < tasks; ++t) {
    PgUpsertWriterOptions options;
    options.conninfo = conninfo;
    options.table = *ParseTableName("events");
    auto writer = PgUpsertWriter::Open(std::move(options), Values(0, 0)->schema());
    EXPECT_TRUE(writer.ok()) << writer.status().ToString();
    if (!writer.ok()) return nullptr;
    writers.push_back(std::move(*writer));
  }
  return std::make_unique<PgRealTimeWriter>(std::move(writers), PgRealTimeWriterOptions{"q", batch_size, batch_interval});
}

TEST_F(PostgresSinkRealTimeTest, AnEpochDeliveredAgainInTheSameReadsInAnotherOrderWritesOnlyTheRowsNotYetCommitted) {
  // Reads of epoch 7: [0, 64), [64, 100), [100, 150).
  const std::vector<std::pair<int64_t, int64_t>> reads = {{0, 64}, {64, 100}, {100, 150}};
  for (int tasks : {1, 3}) {
    for (bool ended : {true, false}) {
      SCOPED_TRACE(::testing::Message() << tasks << " tasks, first delivery ended: " << ended);
      ASSERT_TRUE(db_->Execute("DROP TABLE IF EXISTS events; DROP TABLE IF EXISTS _sluice_progress").ok());
      int64_t written_before = 0;
      {
        // The first delivery gets two reads in one order; it ends the epoch, or the process dies
        // with rows still buffered.
        auto first = RealTimeWriter(db_->connection_string(), tasks, 30, milliseconds(ended ? 5 : 60'000));
        ASSERT_NE(first, nullptr);
        ASSERT_TRUE(first->Add(7, *Shuffled(0, 64, 1)).ok());
        ASSERT_TRUE(first->Add(7, *Shuffled(64, 100, 2)).ok());
        if (ended) {
          ASSERT_TRUE(first->EndEpoch(7).ok());
        } else {
          ASSERT_TRUE(WaitForRows("events", 90, milliseconds(5000))) << "full chunks of 30 go before the crash";
        }
        written_before = Count("events");
      }
      EXPECT_EQ(written_before, ended ? 100 : 90);
      // After the restart the epoch comes again in the same reads, each in another order, and one
      // more read; then epoch 8.
      auto second = RealTimeWriter(db_->connection_string(), tasks, 30);
      ASSERT_NE(second, nullptr);
      for (size_t r = 0; r < reads.size(); ++r) {
        ASSERT_TRUE(second->Add(7, *Shuffled(reads[r].first, reads[r].second, 100 + r)).ok());
      }
      ASSERT_TRUE(second->EndEpoch(7).ok());
      ASSERT_TRUE(second->Add(8, *Values(150, 170)).ok());
      ASSERT_TRUE(second->EndEpoch(8).ok());
      EXPECT_EQ(Count("events"), 170);
      ExpectEveryValueOnce("events");
    }
  }
}

TEST_F(PostgresSinkRealTimeTest, RowsComingToAWriterIdleForAnIntervalAreWrittenAtOnceAndFlushesKeepToOnePerInterval) {
  using Clock = std::chrono::steady_clock;
  const milliseconds interval(1000);
  auto writer = RealTimeWriter(db_->connection_string(), 1, 1000, interval);
  ASSERT_NE(writer, nullptr);
  // The first rows wait out an interval from the writer's start.
  ASSERT_TRUE(writer->Add(0, *Values(0, 10)).ok());
  ASSERT_TRUE(WaitForRows("events", 10, milliseconds(5000)));
  std::this_thread::sleep_for(interval + milliseconds(200));
  // An interval after the last flush: the next rows go at once, well before another interval.
  const Clock::time_point added = Clock::now();
  ASSERT_TRUE(writer->Add(0, *Values(10, 20)).ok());
  ASSERT_TRUE(WaitForRows("events", 20, milliseconds(5000)));
  EXPECT_LT(Clock::now() - added, milliseconds(700));
  // Rows right behind them wait for the interval since that flush.
  ASSERT_TRUE(writer->Add(0, *Values(20, 30)).ok());
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_EQ(Count("events"), 20);
  ASSERT_TRUE(WaitForRows("events", 30, milliseconds(5000)));
  EXPECT_EQ(writer->flushes(), 3);
  ASSERT_TRUE(writer->EndEpoch(0).ok());
  ExpectEveryValueOnce("events");
}

// Back-pressure: while the database does not take a task's chunk (another session holds a lock
// on the table that lets readers in but no writer), the task buffers one more batchsize of rows
// and then Add() waits, so that memory stays bounded; once the lock goes, every row is written once.
TEST_F(PostgresSinkRealTimeTest, AFullBufferMakesAddWaitUntilTheDatabaseTakesRowsAgain) {
  auto writer = RealTimeWriter(db_->connection_string(), 1, 10, milliseconds(60'000));
  ASSERT_NE(writer, nullptr);
  auto locker = PgConnection::Connect(db_->connection_string());
  ASSERT_TRUE(locker.ok()) << locker.status().ToString();
  ASSERT_TRUE((*locker)->Execute("BEGIN").ok());
  ASSERT_TRUE((*locker)->Execute("LOCK TABLE events IN EXCLUSIVE MODE").ok());

  std::atomic<int> added{0};
  Status adding;
  std::thread source([&] {
    for (int64_t from = 0; from < 40 && adding.ok(); from += 10) {
      adding = writer->Add(1, *Values(from, from + 10));
      added.fetch_add(1);
    }
  });
  // The first read becomes the chunk the task is writing (held by the lock), the second fills the
  // buffer, and the third waits.
  std::this_thread::sleep_for(milliseconds(800));
  EXPECT_EQ(added.load(), 2) << "Add returns while the buffer has room, and waits once it is full";
  EXPECT_EQ(Count("events"), 0);
  ASSERT_TRUE((*locker)->Execute("COMMIT").ok());
  source.join();
  ASSERT_TRUE(adding.ok()) << adding.ToString();
  EXPECT_EQ(added.load(), 4);
  ASSERT_TRUE(writer->EndEpoch(1).ok());
  EXPECT_EQ(Count("events"), 40);
  ExpectEveryValueOnce("events");
}

}  // namespace
}  // namespace sluice::connectors
