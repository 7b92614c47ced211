// `sluice copy` against a real PostgreSQL: a query into a Delta table of the warehouse and back
// into a new table, through a named connection, with exact values; a copy split into batches of
// partitions, killed at random moments and run again until it ends, holds every row once.
//
// The crash child is this binary: when SLUICE_COPY_CRASH holds `from<TAB>to<TAB>warehouse<TAB>
// checkpoint`, a static initializer runs that copy before any test and exits.
#include "sluice/pipeline/copy.h"

#include <signal.h>
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <sstream>
#include <thread>

#include "sluice/connectors/testing/postgres_fixture.h"
#include "sluice/core/error_classes.h"
#include "sluice/delta/scan.h"
#include "sluice/delta/snapshot.h"
#include "sluice/pipeline/catalog.h"
#include "testing/child_process.h"
#include "testing/crash_seed.h"
#include "testing/temp_dir.h"

namespace sluice::pipeline {
namespace {

using connectors::testing::PostgresTestDatabase;
using connectors::testing::Rows;

// A copy's options: its warehouse and a checkpoint it keeps.
CopyOptions Kept(const std::string& warehouse, const std::string& checkpoint) {
  CopyOptions options;
  options.warehouse = warehouse;
  options.checkpoint = checkpoint;
  return options;
}

[[maybe_unused]] const bool kIsCrashChild = [] {
  const char* job = std::getenv("SLUICE_COPY_CRASH");
  if (job == nullptr) return false;
  std::vector<std::string> parts;
  std::istringstream fields(job);
  for (std::string part; std::getline(fields, part, '\t');) parts.push_back(part);
  Result<CopyResult> copied = RunCopy(ParseEndpointSpec(parts.at(0)).value(), ParseEndpointSpec(parts.at(1)).value(),
                                      Kept(parts.at(2), parts.at(3)));
  if (!copied.ok()) std::fprintf(stderr, "the copy failed: %s\n", copied.status().ToString().c_str());
  std::_Exit(copied.ok() ? 0 : 1);
}();

constexpr std::string_view kColumns =
    "id, name, balance, active, born, seen_at, seen_at_tz, score, payload, big";

class CopyIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = PostgresTestDatabase::Create();
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(*db);
    ::setenv("SLUICE_COPY_TEST_PASSWORD", "not-checked-by-a-trust-server", 1);
    const auto& server = db_->server();
    Status created = catalog_.Create({"shop",
                                      "postgresql",
                                      {{"host", server.host()},
                                       {"port", std::to_string(server.port())},
                                       {"database", db_->name()},
                                       {"user", server.superuser()},
                                       {"password", "${env:SLUICE_COPY_TEST_PASSWORD}"}}});
    ASSERT_TRUE(created.ok()) << created.ToString();
    Run(R"(CREATE TABLE customers (id integer PRIMARY KEY, name text, balance numeric(12,2), active boolean,
                                   born date, seen_at timestamp, seen_at_tz timestamptz, score double precision,
                                   payload bytea, big bigint);
           INSERT INTO customers VALUES
             (1, 'Ada', 10.50, true, '1815-12-10', '2024-01-02 03:04:05.123456', '2024-01-02 03:04:05+00', 1.5, '\x00ff', 9007199254740993),
             (2, 'Grace, "Amazing" O''Hopper', -0.01, false, '1906-12-09', '1970-01-01 00:00:00', '1999-12-31 23:59:59.999999+00', -2.25e10, '\x', -1),
             (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
             (4, 'Ünïcødé ✓', 99999999.99, true, '2000-02-29', '2038-01-19 03:14:08', '2038-01-19 03:14:08+00', 0, '\x0a0d', 0);)");
  }

  void Run(std::string_view sql) {
    Status status = db_->Execute(sql);
    ASSERT_TRUE(status.ok()) << status.ToString();
  }
  Rows Select(const std::string& table) {
    auto rows = db_->Query("SELECT " + std::string(kColumns) + " FROM " + table + " ORDER BY id");
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return rows.value_or({});
  }
  Result<CopyResult> Copy(const std::string& from, const std::string& to) {
    SLUICE_ASSIGN_OR_RETURN(CopyEndpoint source, ParseEndpointSpec(from));
    SLUICE_ASSIGN_OR_RETURN(CopyEndpoint sink, ParseEndpointSpec(to));
    CopyOptions options;
    options.warehouse = warehouse_.path();
    return RunCopy(source, sink, options);
  }

  sluice::testing::TempDir warehouse_;
  Catalog catalog_{LocalFileSystem(), warehouse_.path()};
  std::unique_ptr<PostgresTestDatabase> db_;
};

TEST_F(CopyIntegrationTest, QueryToDeltaTableAndBackGivesTheSameValues) {
  Result<CopyResult> in = Copy("postgresql:connection=shop,query='SELECT " + std::string(kColumns) +
                                   " FROM customers WHERE id <> 4'",
                               "main.bronze.customers");
  ASSERT_TRUE(in.ok()) << in.status().ToString();
  EXPECT_EQ(in->rows, 3);
  EXPECT_TRUE(LocalFileSystem()->Exists(warehouse_.Join("main/bronze/customers/_delta_log/00000000000000000000.json")).value());

  Result<CopyResult> out = Copy("main.bronze.customers", "postgresql:connection=shop,dbtable=customers_copy");
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->rows, 3);

  Rows expected = Select("customers WHERE id <> 4");
  ASSERT_EQ(expected.size(), 3u);
  EXPECT_EQ(Select("customers_copy"), expected);
  EXPECT_EQ(db_->QueryValue("SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
                            "WHERE attrelid = 'customers_copy'::regclass AND attname = 'balance'")
                .value_or(""),
            "numeric(12,2)");
  // The temporary checkpoints are gone.
  EXPECT_TRUE(LocalFileSystem()->List(warehouse_.Join("_sluice/copies")).value().empty());
}

TEST_F(CopyIntegrationTest, AWholeTableWithExplicitOptionsOverridingTheConnection) {
  Result<CopyResult> in = Copy("postgresql:connection=shop,dbtable=customers,num_partitions=2,partition_column=id,"
                               "lower_bound=1,upper_bound=5,database=" + db_->name(),
                               "delta:table=main.bronze.all_customers");
  ASSERT_TRUE(in.ok()) << in.status().ToString();
  EXPECT_EQ(in->rows, 4);
  ASSERT_TRUE(Copy("main.bronze.all_customers", "postgresql:connection=shop,dbtable=all_copy").ok());
  EXPECT_EQ(Select("all_copy"), Select("customers"));
}

TEST_F(CopyIntegrationTest, WriteModesOfThePostgresSink) {
  ASSERT_TRUE(Copy("postgresql:connection=shop,query='SELECT id, name FROM customers WHERE id <= 2'", "main.s.two").ok());
  ASSERT_TRUE(Copy("main.s.two", "postgresql:connection=shop,dbtable=target").ok());

  Result<CopyResult> again = Copy("main.s.two", "postgresql:connection=shop,dbtable=target");
  EXPECT_EQ(again.status().error_class(), errors::kPgTableAlreadyExists);

  ASSERT_TRUE(Copy("main.s.two", "postgresql:connection=shop,dbtable=target,mode=append").ok());
  EXPECT_EQ(db_->QueryValue("SELECT count(*) FROM target").value_or(""), "4");

  ASSERT_TRUE(Copy("main.s.two", "postgresql:connection=shop,dbtable=target,mode=overwrite").ok());
  EXPECT_EQ(db_->QueryValue("SELECT count(*) FROM target").value_or(""), "2");

  ASSERT_TRUE(Copy("main.s.two", "postgresql:connection=shop,dbtable=target,mode=ignore").ok());
  EXPECT_EQ(db_->QueryValue("SELECT count(*) FROM target").value_or(""), "2");
}

TEST_F(CopyIntegrationTest, ACopyWithItsOwnCheckpointRunsOnlyOnce) {
  ASSERT_TRUE(Copy("postgresql:connection=shop,dbtable=customers", "main.s.all").ok());
  const CopyOptions options = Kept(warehouse_.path(), warehouse_.Join("copy_checkpoint"));
  CopyEndpoint from = ParseEndpointSpec("main.s.all").value();
  CopyEndpoint to = ParseEndpointSpec("postgresql:connection=shop,dbtable=once,mode=append").value();
  Result<CopyResult> first = RunCopy(from, to, options);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->rows, 4);
  Result<CopyResult> second = RunCopy(from, to, options);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->rows, 0);
  EXPECT_EQ(db_->QueryValue("SELECT count(*) FROM once").value_or(""), "4");
  EXPECT_TRUE(LocalFileSystem()->Exists(warehouse_.Join("copy_checkpoint/commits/0")).value());
}

// A table split into 24 block ranges, copied 2 ranges per batch into Delta with a kept
// checkpoint, killed with SIGKILL at random moments and started again until a run ends by
// itself: the table holds every source row exactly once, in one Delta commit per batch.
TEST_F(CopyIntegrationTest, ACopyKilledAtRandomResumesBatchByBatchAndHoldsEveryRowOnce) {
  Run("CREATE TABLE big AS SELECT g AS id, repeat(md5(g::text), 1 + g % 3) AS v FROM generate_series(1, 300000) g");
  const std::string from = "postgresql:connection=shop,dbtable=big,num_partitions=24,partitions_per_batch=2";
  const std::string table = warehouse_.Join("main/s/crash");
  const std::string job = from + "\tmain.s.crash\t" + warehouse_.path() + "\t" + warehouse_.Join("crash_checkpoint");
  std::mt19937_64 random(sluice::testing::CrashSeed());
  int kills = 0;
  bool ended = false;
  for (int round = 0; round < 30 && !ended; ++round) {
    pid_t child = sluice::testing::SpawnSelf({"SLUICE_COPY_CRASH=" + job}, warehouse_.Join("child.log"));
    ASSERT_GT(child, 0);
    // The first kill comes early, so that at least one lands before the end.
    std::this_thread::sleep_for(
        std::chrono::milliseconds(std::uniform_int_distribution<int>(20, round == 0 ? 120 : 300)(random)));
    int status = 0;
    if (::waitpid(child, &status, WNOHANG) == child) {
      ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << sluice::testing::TailOf(warehouse_.Join("child.log"), 20);
      ended = true;
      break;
    }
    ::kill(child, SIGKILL);
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ended = WIFEXITED(status) && WEXITSTATUS(status) == 0;  // it may have ended as it was killed
    kills += WIFSIGNALED(status) ? 1 : 0;
  }
  if (!ended) {  // a last run, left to end
    Result<CopyResult> last = RunCopy(ParseEndpointSpec(from).value(), ParseEndpointSpec("main.s.crash").value(),
                                      Kept(warehouse_.path(), warehouse_.Join("crash_checkpoint")));
    ASSERT_TRUE(last.ok()) << last.status().ToString();
  }
  std::cout << kills << " kill(s) before the copy ended\n";
  EXPECT_GT(kills, 0);
  auto snapshot = delta::Snapshot::Load(LocalFileSystem(), table);
  ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString();
  EXPECT_EQ((*snapshot)->version(), 11) << "one commit per batch of two ranges";
  std::vector<int64_t> ids;
  auto scan = delta::TableScan::Open(*snapshot);
  ASSERT_TRUE(scan.ok());
  while (true) {
    Result<BatchPtr> batch = (*scan)->Next();
    ASSERT_TRUE(batch.ok()) << batch.status().ToString();
    if (*batch == nullptr) break;
    ColumnPtr column = (*batch)->ColumnAt("id").value();
    for (int64_t row = 0; row < (*batch)->num_rows(); ++row) ids.push_back(column->Value<int32_t>(row));
  }
  std::sort(ids.begin(), ids.end());
  ASSERT_EQ(ids.size(), 300000u);
  for (int64_t i = 0; i < 300000; ++i) ASSERT_EQ(ids[static_cast<size_t>(i)], i + 1) << "every id once";

  // The checkpoint keeps the partitions it started with: other partition options are refused.
  Result<CopyResult> changed = RunCopy(
      ParseEndpointSpec("postgresql:connection=shop,dbtable=big,num_partitions=16,partitions_per_batch=2").value(),
      ParseEndpointSpec("main.s.crash").value(),
      Kept(warehouse_.path(), warehouse_.Join("crash_checkpoint")));
  EXPECT_EQ(changed.status().error_class(), "INVALID_OPTIONS") << changed.status().ToString();
}

TEST_F(CopyIntegrationTest, AnUnknownConnectionSuggestsTheClosestName) {
  Result<CopyResult> copy = Copy("postgresql:connection=shops,dbtable=customers", "main.s.t");
  EXPECT_EQ(copy.status().error_class(), errors::kConnectionNotFound);
  EXPECT_NE(copy.status().message().find("did you mean `shop`?"), std::string_view::npos) << copy.status().message();
}

TEST_F(CopyIntegrationTest, ALiteralPasswordIsRefusedAndNeverStored) {
  Status created = catalog_.Create({"leaky", "postgresql", {{"host", "127.0.0.1"}, {"password", "s3cret"}}});
  EXPECT_EQ(created.error_class(), errors::kConnectionLiteralSecret);
  EXPECT_EQ(created.message().find("s3cret"), std::string_view::npos);
  EXPECT_EQ(Copy("postgresql:connection=leaky,dbtable=customers", "main.s.t").status().error_class(),
            errors::kConnectionNotFound);
}

TEST_F(CopyIntegrationTest, AnUnsetPasswordVariableFailsBeforeConnecting) {
  ::unsetenv("SLUICE_COPY_TEST_PASSWORD");
  Result<CopyResult> copy = Copy("postgresql:connection=shop,dbtable=customers", "main.s.t");
  EXPECT_EQ(copy.status().error_class(), errors::kUnresolvedSecret);
  EXPECT_NE(copy.status().message().find("SLUICE_COPY_TEST_PASSWORD"), std::string_view::npos);
}

TEST_F(CopyIntegrationTest, BadSpecsAndOptionsFailBeforeAnyDataMoves) {
  EXPECT_EQ(Copy("postgresql:connection=shop,query='SELECT 1", "main.s.t").status().error_class(),
            errors::kInvalidArgument);
  EXPECT_EQ(Copy("postgresql:connection=shop,query='SELECT 1',dbtable=customers", "main.s.t").status().error_class(),
            errors::kInvalidOptions);
  EXPECT_EQ(Copy("postgresql:connection=shop", "main.s.t").status().error_class(), errors::kInvalidOptions);
  EXPECT_EQ(Copy("postgresql:connection=shop,dbtable=customers", "delta:table=main.bronze").status().error_class(),
            errors::kInvalidArgument);
  EXPECT_EQ(Copy("postgresql:connection=shop,dbtable=no_such_table", "main.s.t").status().error_class(),
            errors::kPgQueryFailed);
  EXPECT_EQ(Copy("mysql:dbtable=x", "main.s.t").status().error_class(), errors::kDataSourceNotFound);
  EXPECT_FALSE(LocalFileSystem()->Exists(warehouse_.Join("main/s/t")).value());
}

}  // namespace
}  // namespace sluice::pipeline
