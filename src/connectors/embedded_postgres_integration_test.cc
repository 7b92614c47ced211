#include "sluice/connectors/embedded_postgres.h"

#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "sluice/connectors/testing/postgres_fixture.h"
#include "sluice/core/error_classes.h"
#include "testing/temp_dir.h"

namespace sluice::connectors {
namespace {

// Runs `sql` on its own connection and returns the first column of the first row ("" if none).
std::string QueryOne(const std::string& conninfo, const std::string& sql) {
  std::unique_ptr<PGconn, decltype(&PQfinish)> conn(PQconnectdb(conninfo.c_str()), &PQfinish);
  EXPECT_EQ(PQstatus(conn.get()), CONNECTION_OK) << PQerrorMessage(conn.get());
  std::unique_ptr<PGresult, decltype(&PQclear)> result(PQexec(conn.get(), sql.c_str()), &PQclear);
  ExecStatusType status = PQresultStatus(result.get());
  EXPECT_TRUE(status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK) << sql << ": " << PQresultErrorMessage(result.get());
  if (status != PGRES_TUPLES_OK || PQntuples(result.get()) == 0) return "";
  return PQgetvalue(result.get(), 0, 0);
}

class EmbeddedPostgresTest : public ::testing::Test {
 protected:
  EmbeddedPostgresTest() {
    // The server may run as another OS user (when tests run as root); it must reach the data dir.
    chmod(dir_.path().c_str(), 0755);
  }

  EmbeddedPostgresOptions Options() const {
    EmbeddedPostgresOptions options;
    options.data_dir = dir_.Join("data");
    options.fsync = false;
    return options;
  }

  sluice::testing::TempDir dir_{"sluice-embedded-pg"};
};

TEST_F(EmbeddedPostgresTest, StartsALoopbackServerReadyForLogicalReplication) {
  EmbeddedPostgres server(Options());
  Status started = server.Start();
  ASSERT_TRUE(started.ok()) << started.ToString();
  EXPECT_TRUE(server.running());
  EXPECT_GT(server.port(), 0);
  EXPECT_EQ(server.host(), "127.0.0.1");
  EXPECT_EQ(server.superuser(), "sluice");
  EXPECT_EQ(server.data_dir(), dir_.Join("data"));

  std::string conninfo = server.ConnectionString("postgres");
  EXPECT_EQ(QueryOne(conninfo, "SHOW wal_level"), "logical");
  EXPECT_EQ(QueryOne(conninfo, "SHOW max_replication_slots"), "20");
  EXPECT_EQ(QueryOne(conninfo, "SHOW max_wal_senders"), "20");
  EXPECT_EQ(QueryOne(conninfo, "SHOW listen_addresses"), "127.0.0.1");
  EXPECT_EQ(QueryOne(conninfo, "SHOW fsync"), "off");
  EXPECT_EQ(QueryOne(conninfo, "SHOW server_version_num").substr(0, 2), "15");
  EXPECT_EQ(QueryOne(conninfo, "SELECT rolsuper FROM pg_roles WHERE rolname = current_user"), "t");
  EXPECT_EQ(QueryOne(conninfo, "SELECT slot_name FROM pg_create_logical_replication_slot('s1', 'pgoutput')"), "s1");
  EXPECT_EQ(QueryOne(conninfo, "SELECT plugin FROM pg_replication_slots WHERE slot_name = 's1'"), "pgoutput");

  // The unix socket lives in the data directory, not in /var/run/postgresql.
  struct stat st{};
  EXPECT_EQ(stat((server.data_dir() + "/.s.PGSQL." + std::to_string(server.port())).c_str(), &st), 0);

  Status stopped = server.Stop();
  ASSERT_TRUE(stopped.ok()) << stopped.ToString();
  EXPECT_FALSE(server.running());
  EXPECT_EQ(server.port(), 0);
  EXPECT_FALSE(std::ifstream(server.data_dir() + "/postmaster.pid").good());
}

TEST_F(EmbeddedPostgresTest, RunsAsAnUnprivilegedOsUserWhenRoot) {
  if (geteuid() != 0) GTEST_SKIP() << "only meaningful as root";
  EmbeddedPostgres server(Options());
  ASSERT_TRUE(server.Start().ok());
  EXPECT_EQ(server.os_user(), "postgres");
  struct stat st{};
  ASSERT_EQ(stat(server.data_dir().c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, getpwnam("postgres")->pw_uid);
  EXPECT_TRUE(server.Stop().ok());
}

TEST_F(EmbeddedPostgresTest, CreatesDatabasesOnRequest) {
  EmbeddedPostgres server(Options());
  ASSERT_TRUE(server.Start().ok());
  ASSERT_TRUE(server.CreateDatabase("orders db").ok());
  EXPECT_EQ(QueryOne(server.ConnectionString("orders db"), "SELECT current_database()"), "orders db");

  Status again = server.CreateDatabase("orders db");
  EXPECT_EQ(again.error_class(), errors::kEmbeddedServiceFailed);
  EXPECT_NE(again.message().find("already exists"), std::string_view::npos) << again.ToString();
}

TEST_F(EmbeddedPostgresTest, SecondServerOnTheSameDataDirectoryFailsClearly) {
  EmbeddedPostgres first(Options());
  ASSERT_TRUE(first.Start().ok());
  EmbeddedPostgres second(Options());
  Status status = second.Start();
  EXPECT_EQ(status.error_class(), errors::kEmbeddedServiceFailed);
  EXPECT_NE(status.message().find("in use by a running PostgreSQL server"), std::string_view::npos) << status.ToString();
  EXPECT_NE(status.message().find("postmaster.pid"), std::string_view::npos) << status.ToString();
  EXPECT_FALSE(second.running());

  // The same object cannot start twice either.
  EXPECT_EQ(first.Start().error_class(), errors::kEmbeddedServiceFailed);
  EXPECT_EQ(QueryOne(first.ConnectionString(), "SELECT 1"), "1");
}

TEST_F(EmbeddedPostgresTest, StopThenStartKeepsTheData) {
  EmbeddedPostgres server(Options());
  ASSERT_TRUE(server.Start().ok());
  QueryOne(server.ConnectionString(), "CREATE TABLE t (x int); INSERT INTO t VALUES (1), (2)");
  ASSERT_TRUE(server.Restart().ok());
  EXPECT_EQ(QueryOne(server.ConnectionString(), "SELECT sum(x) FROM t"), "3");
}

TEST_F(EmbeddedPostgresTest, RestartAfterKill9RecoversCommittedData) {
  EmbeddedPostgres server(Options());
  ASSERT_TRUE(server.Start().ok());
  QueryOne(server.ConnectionString(), "CREATE TABLE t (x int); INSERT INTO t SELECT generate_series(1, 1000)");
  // A replication slot must survive the crash too: the change feed resumes from it.
  QueryOne(server.ConnectionString(), "SELECT pg_create_logical_replication_slot('feed', 'pgoutput')");
  QueryOne(server.ConnectionString(), "CHECKPOINT");
  // An open session at the moment of the crash must not keep the next server from starting.
  std::unique_ptr<PGconn, decltype(&PQfinish)> idle(PQconnectdb(server.ConnectionString().c_str()), &PQfinish);
  ASSERT_EQ(PQstatus(idle.get()), CONNECTION_OK);

  ASSERT_TRUE(server.Kill9().ok());
  EXPECT_FALSE(server.running());
  Status restarted = server.Start();
  ASSERT_TRUE(restarted.ok()) << restarted.ToString();
  EXPECT_EQ(QueryOne(server.ConnectionString(), "SELECT count(*) FROM t"), "1000");
  EXPECT_EQ(QueryOne(server.ConnectionString(), "SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'feed'"), "1");
}

TEST_F(EmbeddedPostgresTest, AServerWhoseOwnerIsKilledGoesAwaySoTheNextOwnerCanStart) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t owner = fork();
  if (owner == 0) {
    close(ready[0]);
    EmbeddedPostgres server(Options());
    char started = server.Start().ok() ? '1' : '0';
    (void)!write(ready[1], &started, 1);
    pause();
    _exit(0);
  }
  close(ready[1]);
  char started = 0;
  ASSERT_EQ(read(ready[0], &started, 1), 1);
  close(ready[0]);
  ASSERT_EQ(started, '1');
  // As a crash test does: kill the owning process, then start again on the same directory at once.
  kill(owner, SIGKILL);
  waitpid(owner, nullptr, 0);
  EmbeddedPostgres next(Options());
  Status restarted = next.Start();
  ASSERT_TRUE(restarted.ok()) << restarted.ToString();
  EXPECT_EQ(QueryOne(next.ConnectionString(), "SELECT 1"), "1");
}

TEST_F(EmbeddedPostgresTest, RefusesADirectoryThatIsNotACluster) {
  std::ofstream(dir_.Join("stranger.txt")) << "not a database";
  EmbeddedPostgresOptions options = Options();
  options.data_dir = dir_.path();
  EmbeddedPostgres server(options);
  Status status = server.Start();
  EXPECT_EQ(status.error_class(), errors::kEmbeddedServiceFailed);
  EXPECT_NE(status.message().find("not empty and holds no PostgreSQL cluster"), std::string_view::npos)
      << status.ToString();
}

TEST_F(EmbeddedPostgresTest, ReportsMissingBinaries) {
  EmbeddedPostgresOptions options = Options();
  options.bin_dir = dir_.Join("no-such-bin");
  EmbeddedPostgres server(options);
  Status status = server.Start();
  EXPECT_EQ(status.error_class(), errors::kEmbeddedServiceFailed);
  EXPECT_NE(status.message().find("postgresql-15"), std::string_view::npos) << status.ToString();
}

TEST_F(EmbeddedPostgresTest, StartupFailureQuotesTheServerLog) {
  EmbeddedPostgres server(Options());
  ASSERT_TRUE(server.Start().ok());
  ASSERT_TRUE(server.Stop().ok());
  std::ofstream(server.data_dir() + "/postgresql.conf", std::ios::app) << "shared_buffers = 'lots'\n";
  Status status = server.Start();
  EXPECT_EQ(status.error_class(), errors::kEmbeddedServiceFailed);
  EXPECT_NE(status.message().find("during startup"), std::string_view::npos) << status.ToString();
  EXPECT_NE(status.message().find("shared_buffers"), std::string_view::npos) << status.ToString();
}

TEST_F(EmbeddedPostgresTest, UnreachableDataDirectoryIsRelocatedOnRequest) {
  if (geteuid() != 0) GTEST_SKIP() << "only root runs the server as another OS user";
  chmod(dir_.path().c_str(), 0700);
  EmbeddedPostgres refused(Options());
  Status status = refused.Start();
  EXPECT_EQ(status.error_class(), errors::kEmbeddedServiceFailed);
  EXPECT_NE(status.message().find("cannot search " + dir_.path()), std::string_view::npos) << status.ToString();

  EmbeddedPostgresOptions options = Options();
  options.relocate_if_unreachable = true;
  EmbeddedPostgres relocated(options);
  ASSERT_TRUE(relocated.Start().ok());
  EXPECT_TRUE(relocated.relocated());
  EXPECT_EQ(relocated.data_dir().rfind("/var/tmp/sluice-postgres-", 0), 0u) << relocated.data_dir();
  EXPECT_EQ(QueryOne(relocated.ConnectionString(), "SHOW wal_level"), "logical");
  ASSERT_TRUE(relocated.Stop().ok());
  std::error_code ignored;
  std::filesystem::remove_all(relocated.data_dir(), ignored);
}

TEST(PostgresTestDatabaseTest, EachTestGetsAFreshDatabaseOnOneSharedServer) {
  auto first = testing::PostgresTestDatabase::Create();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto second = testing::PostgresTestDatabase::Create();
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_NE((*first)->name(), (*second)->name());
  EXPECT_EQ(&(*first)->server(), &(*second)->server());

  ASSERT_TRUE((*first)->Execute("CREATE TABLE t (id int, name text); INSERT INTO t VALUES (1, 'a'), (2, NULL)").ok());
  auto rows = (*first)->Query("SELECT id, name FROM t ORDER BY id");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(*rows, (testing::Rows{{"1", "a"}, {"2", "NULL"}}));
  EXPECT_EQ((*second)->QueryValue("SELECT count(*) FROM pg_tables WHERE tablename = 't'").value_or("?"), "0");
  EXPECT_EQ((*first)->QueryValue("SHOW wal_level").value_or("?"), "logical");

  Status bad = (*first)->Execute("SELEC 1");
  EXPECT_EQ(bad.error_class(), errors::kEmbeddedServiceFailed);
  EXPECT_NE(bad.message().find("syntax error"), std::string_view::npos) << bad.ToString();
  EXPECT_FALSE((*first)->QueryValue("SELECT 1, 2").ok());
}

}  // namespace
}  // namespace sluice::connectors
