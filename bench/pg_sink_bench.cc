// The postgresql sink against psql's \copy, on a private PostgreSQL 15 started for the run.
//
//   pg_sink_bench [--rows N] [--batchsize N] [--rate ROWS_PER_S] [--seconds S]
//
// Rows: id bigint, name text, amount double precision, at timestamptz (the reference size is
// --rows 1000000; the default is 200000 to keep a run short).
//   1. insert: the rows through the sink (micro-batches of 10 000 rows, as a source would hand
//      them) into an empty table, keyed by id;
//   2. upsert: the same ids again with every other value changed, so every row conflicts and is
//      updated;
//   3. psql: `\copy ... FROM file` of the same rows (CSV) into the same, emptied table, then the
//      changed rows `\copy`ed into a temporary table and upserted by INSERT ... ON CONFLICT DO
//      UPDATE in one transaction (PostgreSQL's own speed with every key taken).
// Prints rows/s for each and the ratios of the sink to psql.
//   4. latency: rows handed to the sink under the real_time trigger at --rate rows/s (pieces every
//      10 ms, as the engine's real-time loop polls; default batchsize and batchinterval) for
//      --seconds, while a reader polls the table;
//      prints p50/p99/max of (row visible to the reader) - (row handed to the sink).
//   5. Kafka latency: a producer writes --rate records/s to a one-partition topic of a Kafka mock
//      cluster in this process, stamping each record's produce time; a `real_time` query (the
//      kafka source into the sink, default batchsize and batchinterval, upsert key
//      partition,offset) writes them into PostgreSQL while a reader polls the table every 1 ms;
//      prints p50/p99/max of (record visible to the reader) - (record produced), and the same
//      split at the moment the query hands the record to the sink (the source's part, the sink's).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <atomic>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_support.h"
#include "sluice/connectors/embedded_kafka.h"
#include "sluice/connectors/register_formats.h"
#include "sluice/connectors/embedded_postgres.h"
#include "sluice/connectors/pg_connection.h"
#include "sluice/core/builder.h"
#include "sluice/engine/streaming_query.h"

namespace sluice::connectors {
namespace {

using bench::Die;

using Clock = std::chrono::steady_clock;
constexpr int64_t kPieceRows = 10'000;
// 2024-01-01 in microseconds since the Unix epoch.
constexpr int64_t kBaseMicros = 1'704'067'200'000'000;

struct Flags {
  int64_t rows = 200'000;
  int64_t batch_size = 10'000;
  int64_t rate = 5'000;
  int64_t seconds = 5;
};

double Seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

TypePtr BenchSchema() {
  return *DataType::Struct({{"id", DataType::Long()},
                            {"name", DataType::String()},
                            {"amount", DataType::Double()},
                            {"at", DataType::Timestamp()}});
}

// Rows [from, to); `salt` changes every value but the id.
BatchPtr Rows(int64_t from, int64_t to, int salt) {
  Int64Builder ids(DataType::Long());
  BinaryBuilder names(DataType::String());
  DoubleBuilder amounts(DataType::Double());
  Int64Builder ats(DataType::Timestamp());
  char name[64];
  for (int64_t i = from; i < to; ++i) {
    ids.Append(i);
    int n = std::snprintf(name, sizeof(name), "customer %lld/%d", static_cast<long long>(i), salt);
    names.Append(std::string_view(name, n));
    amounts.Append(static_cast<double>(i % 100'000) / 100.0 + salt);
    ats.Append(kBaseMicros + (i + salt) * 1'000'000);
  }
  return *RecordBatch::Make(BenchSchema(), {ids.Finish(), names.Finish(), amounts.Finish(), ats.Finish()}, to - from);
}

std::unique_ptr<engine::Sink> OpenSink(const EmbeddedPostgres& server, const std::string& table,
                                       const std::string& query_id, int64_t batch_size) {
  auto sink = AllFormatsRegistry().MakeSink("postgresql", {{"dbtable", table},
                                                {"checkpointLocation", "/unused"},
                                                {"host", server.host()},
                                                {"port", std::to_string(server.port())},
                                                {"user", server.superuser()},
                                                {"upsertkey", "id"},
                                                {"batchsize", std::to_string(batch_size)}});
  Die(sink.status(), "sink");
  Die((*sink)->Open(engine::SinkContext{query_id, engine::OutputMode::kUpdate, nullptr}), "open");
  return std::move(*sink);
}

double ThroughSink(const EmbeddedPostgres& server, const std::string& query_id, int salt, const Flags& flags) {
  auto sink = OpenSink(server, "bench", query_id, flags.batch_size);
  std::vector<BatchPtr> batches;
  for (int64_t from = 0; from < flags.rows; from += kPieceRows) {
    batches.push_back(Rows(from, std::min(flags.rows, from + kPieceRows), salt));
  }
  const Clock::time_point start = Clock::now();
  for (size_t b = 0; b < batches.size(); ++b) Die(engine::AddBatch(*sink, static_cast<int64_t>(b), *batches[b]), "batch");
  return static_cast<double>(flags.rows) / Seconds(start);
}

// The rows of Rows(0, flags.rows, salt) as CSV, timestamps as UTC text.
std::string WriteCsv(const std::string& path, int salt, const Flags& flags) {
  std::ofstream out(path);
  for (int64_t i = 0; i < flags.rows; ++i) {
    std::time_t t = static_cast<std::time_t>(kBaseMicros / 1'000'000 + i + salt);
    char at[32];
    std::strftime(at, sizeof(at), "%Y-%m-%d %H:%M:%S+00", std::gmtime(&t));
    out << i << ",customer " << i << "/" << salt << "," << static_cast<double>(i % 100'000) / 100.0 + salt << ","
        << at << "\n";
  }
  return path;
}

struct PsqlRates {
  double copy = 0;    // \copy into the emptied table
  double upsert = 0;  // \copy into a temporary table, then INSERT ... ON CONFLICT DO UPDATE of every row
};

// What PostgreSQL does with the same rows driven by psql: the reference for both sink figures.
PsqlRates ThroughPsql(const EmbeddedPostgres& server, const std::string& dir, const Flags& flags) {
  const std::string psql = "/usr/lib/postgresql/15/bin/psql \"" + server.ConnectionString() + "\" -qtAX -v ON_ERROR_STOP=1";
  auto run = [&](const std::string& arguments) {
    if (std::system((psql + " " + arguments).c_str()) != 0) Die(Status::Error("BENCH", "psql " + arguments), "psql");
  };
  const std::string first = WriteCsv(dir + "/rows-0.csv", 0, flags);
  const std::string second = WriteCsv(dir + "/rows-1.csv", 1, flags);
  const std::string script = dir + "/upsert.sql";
  std::ofstream(script) << "BEGIN;\nCREATE TEMPORARY TABLE staged (LIKE bench) ON COMMIT DROP;\n\\copy staged FROM '"
                        << second << "' (FORMAT csv)\n"
                        << "INSERT INTO bench SELECT * FROM staged ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, "
                           "amount = EXCLUDED.amount, at = EXCLUDED.at;\nCOMMIT;\n";
  run("-c 'TRUNCATE bench'");
  PsqlRates rates;
  Clock::time_point start = Clock::now();
  run("-c \"\\copy bench FROM '" + first + "' (FORMAT csv)\"");
  rates.copy = static_cast<double>(flags.rows) / Seconds(start);
  start = Clock::now();
  run("-f '" + script + "'");
  rates.upsert = static_cast<double>(flags.rows) / Seconds(start);
  return rates;
}

void PrintPercentiles(const char* what, std::vector<double> millis) {
  std::sort(millis.begin(), millis.end());
  std::printf("  %-28s p50 %6.1f ms  p99 %6.1f ms  max %6.1f ms\n", what, bench::Percentile(millis, 0.5),
              bench::Percentile(millis, 0.99), millis.back());
}

void Latency(const EmbeddedPostgres& server, const Flags& flags) {
  {
    // Created before the reader starts polling it (the sink would create it at its first rows).
    auto conn = PgConnection::Connect(server.ConnectionString());
    Die(conn.status(), "connect");
    Die((*conn)->Execute("CREATE TABLE latency (id bigint PRIMARY KEY, name text, amount double precision, "
                         "at timestamptz)"),
        "create");
  }
  // The default batchsize and batchinterval.
  auto sink = OpenSink(server, "latency", "latency", 1000);
  const int64_t total = flags.rate * flags.seconds;
  std::vector<Clock::time_point> handed(total), visible(total);
  std::thread reader([&] {
    auto conn = PgConnection::Connect(server.ConnectionString());
    Die(conn.status(), "reader");
    int64_t seen = 0;
    while (seen < total) {
      auto rows = (*conn)->Query("SELECT coalesce(max(id) + 1, 0) FROM latency");
      Die(rows.status(), "poll");
      const Clock::time_point now = Clock::now();
      const int64_t upto = std::min<int64_t>(total, std::atoll((*rows)[0][0]->c_str()));
      for (; seen < upto; ++seen) visible[seen] = now;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  // Ids are handed over in order, so the largest visible id tells which rows are visible.
  const Clock::time_point start = Clock::now();
  int64_t epoch = 0;
  Clock::time_point epoch_start = start;
  for (int64_t next = 0; next < total;) {
    const int64_t due = std::min<int64_t>(total, static_cast<int64_t>(Seconds(start) * flags.rate));
    if (due > next) {
      BatchPtr piece = Rows(next, due, 0);
      const Clock::time_point now = Clock::now();
      for (int64_t i = next; i < due; ++i) handed[i] = now;
      Die(sink->AddRealTimeRows(epoch, *piece), "add");
      next = due;
    }
    if (Seconds(epoch_start) >= 5) {
      Die(sink->EndEpoch(epoch++), "epoch");
      epoch_start = Clock::now();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  Die(sink->EndEpoch(epoch), "epoch");
  reader.join();
  std::vector<double> millis;
  for (int64_t i = 0; i < total; ++i) {
    millis.push_back(std::chrono::duration<double, std::milli>(visible[i] - handed[i]).count());
  }
  std::printf("latency at %lld rows/s, batchsize 1000, batchinterval 100 ms:\n", static_cast<long long>(flags.rate));
  PrintPercentiles("handed to the sink -> visible", std::move(millis));
}

// Forwards to the postgresql sink, noting when each Kafka offset is handed over: splits the
// Kafka latency into the source's part and the sink's.
class StampingSink final : public engine::Sink {
 public:
  StampingSink(std::unique_ptr<engine::Sink> inner, std::vector<Clock::time_point>* handed)
      : inner_(std::move(inner)), handed_(handed) {}
  std::string description() const override { return inner_->description(); }
  std::vector<engine::OutputMode> supported_output_modes() const override { return inner_->supported_output_modes(); }
  Status Open(const engine::SinkContext& context) override { return inner_->Open(context); }
  Result<std::unique_ptr<engine::BatchWriter>> BeginBatch(const engine::BatchInfo& info) override {
    return engine::WholeBatchWriter::Concatenating(info.schema, [this, batch_id = info.batch_id](const RecordBatch& batch) {
      Stamp(batch);
      return engine::AddBatch(*inner_, batch_id, batch);
    });
  }
  bool supports_real_time() const override { return true; }
  Status AddRealTimeRows(int64_t epoch_id, const RecordBatch& rows) override {
    Stamp(rows);
    return inner_->AddRealTimeRows(epoch_id, rows);
  }
  Status EndEpoch(int64_t epoch_id) override { return inner_->EndEpoch(epoch_id); }
  // Pieces handed over so far (read once the query has stopped).
  int64_t pieces() const { return pieces_; }

 private:
  void Stamp(const RecordBatch& rows) {
    ++pieces_;
    const Clock::time_point now = Clock::now();
    const Column& offsets = *rows.column(rows.schema()->FieldIndex("offset"));
    for (int64_t r = 0; r < rows.num_rows(); ++r) {
      const int64_t offset = offsets.values<int64_t>()[r];
      if (offset >= 0 && offset < static_cast<int64_t>(handed_->size())) (*handed_)[offset] = now;
    }
  }

  std::unique_ptr<engine::Sink> inner_;
  std::vector<Clock::time_point>* handed_;
  int64_t pieces_ = 0;
};

// Kafka produce -> row visible in PostgreSQL, through a real_time query.
void KafkaLatency(const EmbeddedPostgres& server, const std::string& dir, const Flags& flags) {
  auto kafka = EmbeddedKafka::Start(1);
  Die(kafka.status(), "kafka");
  Die((*kafka)->CreateTopic("events", 1), "topic");
  {
    auto conn = PgConnection::Connect(server.ConnectionString());
    Die(conn.status(), "connect");
    Die((*conn)->Execute("CREATE TABLE kafka_latency (key bytea, value bytea, topic text, \"partition\" integer, "
                         "\"offset\" bigint, \"timestamp\" timestamptz, headers jsonb, "
                         "PRIMARY KEY (\"partition\", \"offset\"))"),
        "create");
  }
  engine::Registry& registry = AllFormatsRegistry();
  auto source = registry.MakeSource("kafka", {{"bootstrap_servers", (*kafka)->bootstrap_servers()},
                                             {"subscribe", "events"},
                                             {"starting_offsets", "earliest"}});
  Die(source.status(), "source");
  // The default batchsize and batchinterval.
  auto sink = registry.MakeSink("postgresql", {{"dbtable", "kafka_latency"},
                                               {"checkpointLocation", dir + "/kafka_checkpoint"},
                                               {"host", server.host()},
                                               {"port", std::to_string(server.port())},
                                               {"user", server.superuser()},
                                               {"upsertkey", "partition,offset"}});
  Die(sink.status(), "sink");
  const int64_t total = flags.rate * flags.seconds + 1;
  std::vector<Clock::time_point> produced(total), handed(total), visible(total);
  auto stamping = std::make_unique<StampingSink>(std::move(*sink), &handed);
  const StampingSink* stamps = stamping.get();
  engine::QueryConfig config;
  config.name = "kafka_latency";
  config.checkpoint_location = dir + "/kafka_checkpoint";
  config.trigger = engine::Trigger::RealTime();
  config.output_mode = engine::OutputMode::kUpdate;
  auto query = engine::StreamingQuery::Start(std::move(*source), std::move(stamping), std::move(config));
  Die(query.status(), "query");
  Status query_status;
  std::thread runner([&] { query_status = (*query)->Run(); });

  auto producer = KafkaTestProducer::Connect((*kafka)->bootstrap_servers());
  Die(producer.status(), "producer");
  // Record i lands at offset i of the one partition; produced[i] is when Produce() was called,
  // handed[i] when the query handed it to the sink.
  std::atomic<int64_t> seen{0};
  std::thread reader([&] {
    auto conn = PgConnection::Connect(server.ConnectionString());
    Die(conn.status(), "reader");
    while (seen.load() < total) {
      auto rows = (*conn)->Query("SELECT coalesce(max(\"offset\") + 1, 0) FROM kafka_latency");
      Die(rows.status(), "poll");
      const Clock::time_point now = Clock::now();
      const int64_t upto = std::min<int64_t>(total, std::atoll((*rows)[0][0]->c_str()));
      for (int64_t i = seen.load(); i < upto; ++i) visible[i] = now;
      if (upto > seen.load()) seen.store(upto);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  auto produce = [&](int64_t i) {
    KafkaTestMessage message;
    message.value = std::to_string(i);
    message.partition = 0;
    produced[i] = Clock::now();
    Die((*producer)->Produce("events", message), "produce");
  };
  // One record first, to wait out the query's start (connections, table checks).
  produce(0);
  Die((*producer)->Flush(), "flush");
  while (seen.load() < 1) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const Clock::time_point start = Clock::now();
  for (int64_t next = 1; next < total;) {
    const int64_t due = std::min<int64_t>(total, 1 + static_cast<int64_t>(Seconds(start) * flags.rate));
    for (; next < due; ++next) produce(next);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  Die((*producer)->Flush(), "flush");
  reader.join();
  (*query)->Stop();
  runner.join();
  Die(query_status, "query");
  std::vector<double> whole, in_source, in_sink;
  for (int64_t i = 1; i < total; ++i) {
    whole.push_back(std::chrono::duration<double, std::milli>(visible[i] - produced[i]).count());
    in_source.push_back(std::chrono::duration<double, std::milli>(handed[i] - produced[i]).count());
    in_sink.push_back(std::chrono::duration<double, std::milli>(visible[i] - handed[i]).count());
  }
  std::printf("Kafka produce -> visible at %lld rows/s, batchsize 1000, batchinterval 100 ms:\n",
              static_cast<long long>(flags.rate));
  std::printf("  %lld pieces handed to the sink, one every %.1f ms on average\n", static_cast<long long>(stamps->pieces()),
              1000.0 * static_cast<double>(flags.seconds) / static_cast<double>(std::max<int64_t>(1, stamps->pieces())));
  PrintPercentiles("produce -> visible", whole);
  PrintPercentiles("produce -> handed to the sink", in_source);
  PrintPercentiles("handed to the sink -> visible", in_sink);
}

Flags ParseFlags(int argc, char** argv) {
  Flags flags;
  for (int i = 1; i + 1 < argc; i += 2) {
    int64_t value = std::atoll(argv[i + 1]);
    if (value <= 0) Die(Status::Error("BENCH", std::string("bad value for ") + argv[i]), "flags");
    if (!std::strcmp(argv[i], "--rows")) flags.rows = value;
    else if (!std::strcmp(argv[i], "--batchsize")) flags.batch_size = value;
    else if (!std::strcmp(argv[i], "--rate")) flags.rate = value;
    else if (!std::strcmp(argv[i], "--seconds")) flags.seconds = value;
    else Die(Status::Error("BENCH", std::string("unknown flag ") + argv[i]), "flags");
  }
  return flags;
}

int Main(int argc, char** argv) {
  const Flags flags = ParseFlags(argc, argv);
  const std::string dir = bench::FreshDirectory("sluice-pg-sink-bench");
  std::unique_ptr<EmbeddedPostgres> started = bench::StartPostgres(dir);
  EmbeddedPostgres& server = *started;

  std::printf("== %lld rows (id bigint, name text, amount double, at timestamptz), batchsize %lld\n",
              static_cast<long long>(flags.rows), static_cast<long long>(flags.batch_size));
  const double insert = ThroughSink(server, "insert", 0, flags);
  const double upsert = ThroughSink(server, "upsert", 1, flags);
  const PsqlRates psql = ThroughPsql(server, dir, flags);
  std::printf("sink, empty table:     %10.0f rows/s  %.2fx psql \\copy\n", insert, insert / psql.copy);
  std::printf("sink, every key taken: %10.0f rows/s  %.2fx psql \\copy, %.2fx psql upsert\n", upsert,
              upsert / psql.copy, upsert / psql.upsert);
  std::printf("psql \\copy:            %10.0f rows/s\n", psql.copy);
  std::printf("psql upsert:           %10.0f rows/s (\\copy into a temporary table, INSERT ... ON CONFLICT)\n",
              psql.upsert);
  Latency(server, flags);
  KafkaLatency(server, dir, flags);
  Die(server.Stop(), "stop");
  std::system(("rm -rf '" + dir + "'").c_str());
  return 0;
}

}  // namespace
}  // namespace sluice::connectors

int main(int argc, char** argv) { return sluice::connectors::Main(argc, argv); }
