// The change feed's lag, commit in PostgreSQL -> row in Delta, under a steady pgbench-style write
// load, on a private PostgreSQL 15 started for the run.
//
//   change_feed_lag_bench [--rate TRANSACTIONS_PER_S] [--seconds S] [--flush_ms MS]
//
// The load is pgbench's TPC-B-like transaction (update an account, read its balance, update a
// teller and a branch, insert a history row) at --rate transactions/s (default 200) for --seconds
// (default 30), on tables of scale 1 with REPLICA IDENTITY FULL. The feed runs in this process
// with the flush interval of --flush_ms (default: the option's default, 1 second).
//
// Each history row carries its transaction's number; the writer notes the wall-clock time at which
// its COMMIT returned. A row is in Delta when the Delta commit holding it is: the modification time
// of that commit's _delta_log file. The commit holding a row is found by its `_sort_by` through the
// commits' `<slot>/<history table>/sort_by` txn versions. Prints p50/p90/p99/max of the lag over
// every transaction, and the load average.
#include <simdjson.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "bench_support.h"
#include "sluice/connectors/embedded_postgres.h"
#include "sluice/connectors/pg_change_feed.h"
#include "sluice/connectors/pg_connection.h"
#include "sluice/connectors/pgoutput.h"
#include "sluice/delta/scan.h"
#include "sluice/delta/snapshot.h"

namespace sluice::connectors {
namespace {

using bench::Die;

struct Flags {
  int64_t rate = 200;
  int64_t seconds = 30;
  int64_t flush_ms = 0;  // 0: the option's default
};

int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Flags ParseFlags(int argc, char** argv) {
  Flags flags;
  for (int i = 1; i + 1 < argc; i += 2) {
    int64_t value = std::atoll(argv[i + 1]);
    if (value <= 0) Die(Status::Error("BENCH", std::string("bad value for ") + argv[i]), "flags");
    if (!std::strcmp(argv[i], "--rate")) flags.rate = value;
    else if (!std::strcmp(argv[i], "--seconds")) flags.seconds = value;
    else if (!std::strcmp(argv[i], "--flush_ms")) flags.flush_ms = value;
    else Die(Status::Error("BENCH", std::string("unknown flag ") + argv[i]), "flags");
  }
  return flags;
}

// pgbench -i -s 1, with REPLICA IDENTITY FULL and a transaction number in the history table.
void CreateTables(PgConnection& conn) {
  Die(conn.Execute("CREATE TABLE pgbench_branches (bid int PRIMARY KEY, bbalance int, filler char(88));"
                   "CREATE TABLE pgbench_tellers (tid int PRIMARY KEY, bid int, tbalance int, filler char(84));"
                   "CREATE TABLE pgbench_accounts (aid int PRIMARY KEY, bid int, abalance int, filler char(84));"
                   "CREATE TABLE pgbench_history (tid int, bid int, aid int, delta int, mtime timestamp, "
                   "seq bigint);"
                   "ALTER TABLE pgbench_branches REPLICA IDENTITY FULL;"
                   "ALTER TABLE pgbench_tellers REPLICA IDENTITY FULL;"
                   "ALTER TABLE pgbench_accounts REPLICA IDENTITY FULL;"
                   "ALTER TABLE pgbench_history REPLICA IDENTITY FULL;"
                   "INSERT INTO pgbench_branches VALUES (1, 0, '');"
                   "INSERT INTO pgbench_tellers SELECT g, 1, 0, '' FROM generate_series(1, 10) g;"
                   "INSERT INTO pgbench_accounts SELECT g, 1, 0, '' FROM generate_series(1, 100000) g"),
      "create tables");
}

// Runs the load; returns the commit time (Unix micros) of each transaction by number.
std::vector<int64_t> WriteLoad(const std::string& conninfo, const Flags& flags) {
  auto conn = PgConnection::Connect(conninfo);
  Die(conn.status(), "connect");
  const int64_t total = flags.rate * flags.seconds;
  std::vector<int64_t> committed(total, 0);
  uint32_t random = 12345;
  auto next = [&random](uint32_t bound) {
    random = random * 1103515245 + 12345;
    return (random >> 8) % bound + 1;
  };
  const auto start = std::chrono::steady_clock::now();
  for (int64_t seq = 0; seq < total; ++seq) {
    std::this_thread::sleep_until(start + std::chrono::microseconds(seq * 1000000 / flags.rate));
    const uint32_t aid = next(100000), tid = next(10), delta = next(10000);
    const std::string sql =
        "BEGIN;"
        "UPDATE pgbench_accounts SET abalance = abalance + " + std::to_string(delta) + " WHERE aid = " +
        std::to_string(aid) + ";SELECT abalance FROM pgbench_accounts WHERE aid = " + std::to_string(aid) +
        ";UPDATE pgbench_tellers SET tbalance = tbalance + " + std::to_string(delta) + " WHERE tid = " +
        std::to_string(tid) + ";UPDATE pgbench_branches SET bbalance = bbalance + " + std::to_string(delta) +
        " WHERE bid = 1;INSERT INTO pgbench_history VALUES (" + std::to_string(tid) + ", 1, " + std::to_string(aid) +
        ", " + std::to_string(delta) + ", CURRENT_TIMESTAMP, " + std::to_string(seq) + ");COMMIT";
    Die((*conn)->Execute(sql), "transaction");
    committed[seq] = NowMicros();
  }
  return committed;
}

// (last _sort_by of the commit, when the commit became visible) for every commit of the table.
std::vector<std::pair<int64_t, int64_t>> CommitTimes(const std::string& table) {
  std::vector<std::pair<int64_t, int64_t>> commits;
  simdjson::dom::parser parser;
  for (const auto& entry : std::filesystem::directory_iterator(table + "/_delta_log")) {
    const std::string path = entry.path().string();
    if (!path.ends_with(".json")) continue;
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0) continue;
    const int64_t visible = static_cast<int64_t>(info.st_mtim.tv_sec) * 1000000 + info.st_mtim.tv_nsec / 1000;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
      simdjson::dom::element action;
      std::string_view app_id;
      int64_t version = 0;
      if (parser.parse(line).get(action) || action["txn"]["appId"].get(app_id) ||
          action["txn"]["version"].get(version) || !app_id.ends_with("/sort_by")) {
        continue;
      }
      commits.emplace_back(version, visible);
    }
  }
  std::sort(commits.begin(), commits.end());
  return commits;
}

int Main(int argc, char** argv) {
  const Flags flags = ParseFlags(argc, argv);
  const std::string dir = bench::FreshDirectory("sluice-cdf-lag-bench");
  std::unique_ptr<EmbeddedPostgres> started = bench::StartPostgres(dir);
  EmbeddedPostgres& server = *started;
  const std::string conninfo = server.ConnectionString("postgres");
  auto sql = PgConnection::Connect(conninfo);
  Die(sql.status(), "connect");
  CreateTables(**sql);

  std::map<std::string, std::string> options = {
      {"host", server.host()},       {"port", std::to_string(server.port())}, {"user", server.superuser()},
      {"database", "postgres"},      {"schema", "public"},                    {"target", "main.cdc"},
      {"warehouse", dir + "/wh"}};
  if (flags.flush_ms > 0) options["flush_interval"] = std::to_string(flags.flush_ms) + "ms";
  auto config = MakeChangeFeedConfig(options);
  Die(config.status(), "config");
  auto feed = PgChangeFeed::Start(*config);
  Die(feed.status(), "feed start");
  std::atomic<bool> stop{false};
  Status run_status;
  std::thread runner([&] { run_status = (*feed)->Run(stop); });

  std::printf("== %lld pgbench-style transactions/s for %lld s, flush interval %lld ms\n",
              static_cast<long long>(flags.rate), static_cast<long long>(flags.seconds),
              static_cast<long long>(config->flush_interval.count() / 1000));
  std::vector<int64_t> committed = WriteLoad(conninfo, flags);
  auto end = (*sql)->Query("SELECT pg_current_wal_lsn()::text");
  Die(end.status(), "wal position");
  const Lsn target = *ParseLsn(*(*end)[0][0]);
  while ((*feed)->confirmed_lsn() < target) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  stop = true;
  runner.join();
  Die(run_status, "feed");

  const std::string table = config->target_directory() + "/lb_pgbench_history_history";
  const auto commits = CommitTimes(table);
  auto snapshot = delta::Snapshot::Load(LocalFileSystem(), table);
  Die(snapshot.status(), "history snapshot");
  auto scan = delta::TableScan::Open(*snapshot, {.columns = {"seq", "_sort_by"}});
  Die(scan.status(), "history scan");
  std::vector<int64_t> lags;
  for (;;) {
    auto batch = (*scan)->Next();
    Die(batch.status(), "history read");
    if (*batch == nullptr) break;
    const Column& seq = *(*batch)->column(0);
    const Column& sort_by = *(*batch)->column(1);
    for (int64_t row = 0; row < (*batch)->num_rows(); ++row) {
      const int64_t number = seq.Value<int64_t>(row);
      auto commit = std::lower_bound(commits.begin(), commits.end(), std::make_pair(sort_by.Value<int64_t>(row),
                                                                                    std::numeric_limits<int64_t>::min()));
      if (number < 0 || number >= static_cast<int64_t>(committed.size()) || commit == commits.end()) {
        Die(Status::Error("BENCH", "a history row without its transaction or commit"), "analysis");
      }
      lags.push_back(commit->second - committed[number]);
    }
  }
  std::sort(lags.begin(), lags.end());
  if (lags.size() != committed.size()) {
    std::fprintf(stderr, "%zu history rows for %zu transactions\n", lags.size(), committed.size());
    return 1;
  }
  double load[3] = {0, 0, 0};
  ::getloadavg(load, 3);
  std::printf("lag commit -> Delta over %zu transactions: p50 %.3f s  p90 %.3f s  p99 %.3f s  max %.3f s\n",
              lags.size(), bench::Percentile(lags, 0.5) / 1e6, bench::Percentile(lags, 0.9) / 1e6, bench::Percentile(lags, 0.99) / 1e6,
              lags.back() / 1e6);
  std::printf("load average: %.2f %.2f %.2f\n", load[0], load[1], load[2]);
  sql->reset();
  Die(server.Stop(), "stop");
  std::system(("rm -rf '" + dir + "'").c_str());
  return 0;
}

}  // namespace
}  // namespace sluice::connectors

int main(int argc, char** argv) { return sluice::connectors::Main(argc, argv); }
