// What a PostgreSQL connection says besides its results: server notices and warnings go to the
// debug log, never to the terminal.
#include "sluice/connectors/pg_connection.h"

#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <vector>

#include "sluice/connectors/testing/postgres_fixture.h"
#include "sluice/core/logging.h"

namespace sluice::connectors {
namespace {

TEST(PgConnectionTest, NoticesAndWarningsGoToTheDebugLogNotToStderr) {
  auto db = testing::PostgresTestDatabase::Create();
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto conn = PgConnection::Connect((*db)->connection_string());
  ASSERT_TRUE(conn.ok()) << conn.status().ToString();
  std::mutex mutex;
  std::vector<std::string> logged;
  LogLevel before = GetLogLevel();
  SetLogLevel(LogLevel::kDebug);
  SetLogSinkForTesting([&](LogLevel level, std::string_view message) {
    std::lock_guard lock(mutex);
    if (level == LogLevel::kDebug) logged.emplace_back(message);
  });
  ::testing::internal::CaptureStderr();
  for (const char* sql : {"CREATE TABLE IF NOT EXISTS noticed (id int)", "CREATE TABLE IF NOT EXISTS noticed (id int)",
                          "ROLLBACK", "DO $$ BEGIN RAISE NOTICE 'hello from the server'; END $$"}) {
    EXPECT_TRUE((*conn)->Execute(sql).ok()) << sql;
  }
  std::string printed = ::testing::internal::GetCapturedStderr();
  SetLogSinkForTesting(nullptr);
  SetLogLevel(before);
  EXPECT_EQ(printed, "");
  std::string all;
  for (const std::string& line : logged) all += line + "\n";
  EXPECT_NE(all.find("relation \"noticed\" already exists, skipping"), std::string::npos) << all;
  EXPECT_NE(all.find("there is no transaction in progress"), std::string::npos) << all;
  EXPECT_NE(all.find("hello from the server"), std::string::npos) << all;
}

}  // namespace
}  // namespace sluice::connectors
