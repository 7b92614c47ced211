// The sluice command as a user runs it: the built binary started in a folder of the test's, its
// exit code and output checked. Covers what only the command line does (relative paths, listing
// with a damaged catalog file, signals).
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "sluice/connectors/embedded_kafka.h"
#include "sluice/core/builder.h"
#include "sluice/core/file_system.h"
#include "sluice/core/compute.h"
#include "sluice/delta/dml.h"
#include "sluice/delta/scan.h"
#include "sluice/delta/writer.h"
#include "sluice/storage/file_systems.h"
#include "testing/s3_server.h"
#include "testing/temp_dir.h"
#include "testing/paths.h"
#include "testing/scoped_environment.h"

extern char** environ;

namespace sluice::cli {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A program (`args[0]`, a path) started in `cwd`, its output going to files there.
class ChildProcess {
 public:
  ChildProcess(const std::string& cwd, std::vector<std::string> args) : out_(cwd + "/.out"), err_(cwd + "/.err") {
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
    posix_spawn_file_actions_addopen(&actions, 1, out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    started_ = posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ) == 0;
    posix_spawn_file_actions_destroy(&actions);
  }
  ~ChildProcess() {
    if (started_ && !exited_) {
      kill(pid_, SIGKILL);
      Wait();
    }
  }

  bool started() const { return started_; }
  void Signal(int signal) { kill(pid_, signal); }
  // The exit code, or -1 when it did not exit within `timeout` (it is then killed).
  int Wait(std::chrono::seconds timeout = std::chrono::seconds(60)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    int status = 0;
    while (waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
        exited_ = true;
        return -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    exited_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  std::string out() const { return ReadAll(out_); }
  std::string err() const { return ReadAll(err_); }

 private:
  std::string out_, err_;
  pid_t pid_ = -1;
  bool started_ = false;
  bool exited_ = false;
};

struct Ran {
  int exit_code;
  std::string out, err;
};

std::string SluiceBinary() { return sluice::testing::BinaryDir() + "/sluice"; }

// The sluice binary run in `cwd` with `args`.
Ran RunSluice(const std::string& cwd, std::vector<std::string> args) {
  args.insert(args.begin(), SluiceBinary());
  ChildProcess process(cwd, std::move(args));
  EXPECT_TRUE(process.started());
  int code = process.Wait();
  return {code, process.out(), process.err()};
}

// `script` run by bash in `cwd`.
Ran RunShell(const std::string& cwd, const std::string& script) {
  ChildProcess process(cwd, {"/bin/bash", script});
  EXPECT_TRUE(process.started());
  int code = process.Wait();
  return {code, process.out(), process.err()};
}

bool Contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

// The sluice binary run with `args` in `cwd` under a pseudo-terminal (its stdout and stderr both),
// sent SIGINT after `interrupt_after`: what the terminal showed (in `out`) and the exit code.
Ran RunInTerminal(const std::string& cwd, std::vector<std::string> args, std::chrono::milliseconds interrupt_after) {
  args.insert(args.begin(), SluiceBinary());
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  int terminal = -1;
  const pid_t pid = forkpty(&terminal, nullptr, nullptr, nullptr);
  if (pid < 0) return {-1, "", "forkpty failed"};
  if (pid == 0) {
    if (chdir(cwd.c_str()) == 0) execv(argv[0], argv.data());
    _exit(127);
  }
  std::string shown;
  const auto interrupt_at = std::chrono::steady_clock::now() + interrupt_after;
  const auto give_up = interrupt_at + std::chrono::seconds(60);
  bool interrupted = false;
  while (std::chrono::steady_clock::now() < give_up) {
    if (!interrupted && std::chrono::steady_clock::now() >= interrupt_at) {
      kill(pid, SIGINT);
      interrupted = true;
    }
    pollfd ready{terminal, POLLIN, 0};
    if (poll(&ready, 1, 100) <= 0) continue;
    char buffer[4096];
    const ssize_t n = read(terminal, buffer, sizeof(buffer));
    if (n <= 0) break;  // EIO: the child closed the terminal
    shown.append(buffer, static_cast<size_t>(n));
  }
  close(terminal);
  // The terminal closes as the child exits; it is reaped a moment later.
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() >= give_up) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return {-1, shown, "did not end within a minute of SIGINT"};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), shown, ""};
}

class CliTest : public ::testing::Test {
 protected:
  testing::TempDir dir_;
};

// Exit codes as docs/errors.md states them: 0 done, 1 failed, 2 invalid input — an unknown
// command (the nearest one suggested), an unknown flag, a missing argument.
TEST_F(CliTest, ExitCodesTellFailuresFromInvalidInput) {
  Ran typo = RunSluice(dir_.path(), {"runn", "pipeline.yaml"});
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_TRUE(Contains(typo.err, "unknown command `runn`; did you mean `run`?")) << typo.err;
  Ran stranger = RunSluice(dir_.path(), {"frobnicate"});
  EXPECT_EQ(stranger.exit_code, 2);
  EXPECT_TRUE(Contains(stranger.err, "unknown command `frobnicate`\n")) << stranger.err;
  EXPECT_FALSE(Contains(stranger.err, "did you mean")) << stranger.err;
  Ran flag = RunSluice(dir_.path(), {"delta", "history", "--no-such-flag", "t"});
  EXPECT_EQ(flag.exit_code, 2);
  EXPECT_FALSE(Contains(flag.err, "unknown command")) << flag.err;
  // A flag a command would ignore is not one it takes: `describe` prints no list to limit.
  Ran ignored = RunSluice(dir_.path(), {"delta", "describe", "t", "--limit", "3"});
  EXPECT_EQ(ignored.exit_code, 2);
  EXPECT_TRUE(Contains(ignored.err, "--limit")) << ignored.err;
  Ran missing = RunSluice(dir_.path(), {"parquet", "cat"});
  EXPECT_EQ(missing.exit_code, 2);
  Ran nothing = RunSluice(dir_.path(), {});
  EXPECT_EQ(nothing.exit_code, 2);
  Ran failed = RunSluice(dir_.path(), {"parquet", "cat", "nowhere.parquet"});
  EXPECT_EQ(failed.exit_code, 1);
  EXPECT_TRUE(Contains(failed.err, "FILE_NOT_FOUND")) << failed.err;
  Ran version = RunSluice(dir_.path(), {"--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_TRUE(Contains(version.out, "sluice ")) << version.out;
  Ran help = RunSluice(dir_.path(), {"delta", "--help"});
  EXPECT_EQ(help.exit_code, 0);
}

// A Parquet file written by another engine (pyarrow), named relative to the working folder.
TEST_F(CliTest, ParquetCommandsTakeRelativePaths) {
  std::filesystem::create_directories(dir_.Join("sub"));
  std::filesystem::copy_file(sluice::testing::SourceDir() + "/src/parquet/fuzz_seeds/reader_fuzz/plain_v1",
                             dir_.Join("sub/f.parquet"));
  Ran cat = RunSluice(dir_.Join("sub"), {"parquet", "cat", "f.parquet"});
  EXPECT_EQ(cat.exit_code, 0) << cat.err;
  EXPECT_TRUE(Contains(cat.out, "ccc")) << cat.out;
  Ran schema = RunSluice(dir_.path(), {"parquet", "schema", "sub/f.parquet"});
  EXPECT_EQ(schema.exit_code, 0) << schema.err;
  EXPECT_TRUE(Contains(schema.out, "id")) << schema.out;
  Ran meta = RunSluice(dir_.Join("sub"), {"parquet", "meta", "./f.parquet"});
  EXPECT_EQ(meta.exit_code, 0) << meta.err;
  EXPECT_TRUE(Contains(meta.out, "3")) << meta.out;
  Ran missing = RunSluice(dir_.path(), {"parquet", "cat", "nowhere.parquet"});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_TRUE(Contains(missing.err, dir_.Join("nowhere.parquet"))) << "the error names the absolute path: " << missing.err;
}

// One damaged catalog file is named; the other connections are still listed.
TEST_F(CliTest, ConnectionListNamesADamagedFileAndListsTheRest) {
  for (const char* name : {"good", "broken"}) {
    Ran created = RunSluice(dir_.path(), {"connection", "create", "--warehouse", dir_.Join("w"), name, "--type",
                                          "postgresql", "-o", "host=localhost"});
    ASSERT_EQ(created.exit_code, 0) << created.err;
  }
  const std::string broken = dir_.Join("w/_sluice/catalog/connections/broken.json");
  ASSERT_TRUE(std::filesystem::exists(broken));
  std::ofstream(broken) << "{\"name\": ";
  Ran listed = RunSluice(dir_.path(), {"connection", "list", "--warehouse", dir_.Join("w")});
  EXPECT_TRUE(Contains(listed.out, "good")) << listed.out << listed.err;
  EXPECT_TRUE(Contains(listed.err, "broken.json")) << listed.err;
  EXPECT_NE(listed.exit_code, 0) << "a damaged file is a failure, though the rest is listed";
}

// A commit missing from the middle of a Delta log: the readers of the command line refuse the
// table rather than show a version before the hole.
TEST_F(CliTest, DeltaCommandsRefuseATableWithAHoleInItsLog) {
  auto fs = LocalFileSystem();
  const std::string table = dir_.Join("t");
  TypePtr schema = *DataType::Struct({{"id", DataType::Long()}});
  for (int64_t version = 0; version < 5; ++version) {
    Int64Builder ids(DataType::Long());
    ids.Append(version);
    BatchPtr batch = *RecordBatch::Make(schema, {ids.Finish()}, 1);
    ASSERT_TRUE(delta::WriteTable(fs, table, {batch}, {}).ok());
  }
  Ran whole = RunSluice(dir_.path(), {"delta", "history", "t"});
  EXPECT_EQ(whole.exit_code, 0) << whole.err;
  // A table in `delta show`'s style, newest first, values whole.
  EXPECT_TRUE(Contains(whole.out, "|version|")) << whole.out;
  EXPECT_TRUE(Contains(whole.out, " operationParameters|")) << whole.out;
  EXPECT_LT(whole.out.find("|      4|"), whole.out.find("|      0|")) << whole.out;
  EXPECT_TRUE(Contains(whole.out, "{mode=Append, partitionBy=[]}")) << whole.out;
  std::filesystem::remove(table + "/_delta_log/00000000000000000002.json");
  for (const char* command : {"history", "show", "describe"}) {
    SCOPED_TRACE(command);
    Ran holed = RunSluice(dir_.path(), {"delta", command, "t"});
    EXPECT_NE(holed.exit_code, 0) << holed.out;
    EXPECT_TRUE(Contains(holed.err, "DELTA_LOG_CORRUPT")) << holed.err;
  }
}

// The delta commands on a table in S3 (moto on loopback, reached through the AWS_* environment the
// server sets, which the command inherits): read, change, compact and vacuum it; a malformed URI
// is refused by class, with exit code 1 and nothing written.
TEST_F(CliTest, DeltaCommandsWorkOnATableInS3) {
  const std::string table = sluice::testing::S3Server::Shared().NewBucketUri() + "/sales";
  auto fs = storage::DefaultFileSystem();
  TypePtr schema = *DataType::Struct({{"id", DataType::Long()}});
  for (int64_t version = 0; version < 4; ++version) {
    Int64Builder ids(DataType::Long());
    ids.Append(version);
    ASSERT_TRUE(delta::WriteTable(fs, table, {*RecordBatch::Make(schema, {ids.Finish()}, 1)}, {}).ok());
  }
  Ran history = RunSluice(dir_.path(), {"delta", "history", table});
  EXPECT_EQ(history.exit_code, 0) << history.err;
  EXPECT_TRUE(Contains(history.out, "WRITE")) << history.out;
  Ran update = RunSluice(dir_.path(), {"delta", "update", table + "/", "--set", "id = id + 100", "--where", "id = 2"});
  EXPECT_EQ(update.exit_code, 0) << update.err;
  Ran optimized = RunSluice(dir_.path(), {"delta", "optimize", table});
  EXPECT_EQ(optimized.exit_code, 0) << optimized.err;
  Ran shown = RunSluice(dir_.path(), {"delta", "show", table, "--format", "csv"});
  EXPECT_EQ(shown.exit_code, 0) << shown.err;
  for (const char* id : {"0", "1", "102", "3"}) EXPECT_TRUE(Contains(shown.out, std::string("\n") + id + "\n")) << shown.out;
  EXPECT_FALSE(Contains(shown.out, "\n2\n")) << shown.out;
  // RESTORE by version or by time; a time before the first commit is refused by class (exit 1),
  // both targets or neither are usage errors (exit 2).
  Ran restored = RunSluice(dir_.path(), {"delta", "restore", table, "--version", "4"});
  EXPECT_EQ(restored.exit_code, 0) << restored.err;
  EXPECT_TRUE(Contains(restored.out, "version 6: the rows of version 4")) << restored.out;
  Ran too_early = RunSluice(dir_.path(), {"delta", "restore", table, "--timestamp", "2000-01-01"});
  EXPECT_EQ(too_early.exit_code, 1) << too_early.err;
  EXPECT_TRUE(Contains(too_early.err, "DELTA_CANNOT_RESTORE_TIMESTAMP_EARLIER")) << too_early.err;
  Ran by_time = RunSluice(dir_.path(), {"delta", "restore", table, "--timestamp", "2999-01-01 00:00:00"});
  EXPECT_TRUE(Contains(by_time.err, "DELTA_CANNOT_RESTORE_TIMESTAMP_GREATER")) << by_time.err;
  for (std::vector<std::string> wrong : {std::vector<std::string>{"delta", "restore", table},
                                         {"delta", "restore", table, "--version", "1", "--timestamp", "2026-01-01"}}) {
    EXPECT_EQ(RunSluice(dir_.path(), wrong).exit_code, 2) << wrong.size();
  }
  Ran vacuum = RunSluice(dir_.path(), {"delta", "vacuum", table, "--retain", "0", "--force"});
  EXPECT_EQ(vacuum.exit_code, 0) << vacuum.err;
  EXPECT_EQ(delta::Snapshot::Load(fs, table).value()->files().size(), 4u);  // the files of version 4, before OPTIMIZE
  for (const std::string bad : {"s3://Upper_Case/t", "s3://bucket/a/../t", "gs://bucket/t"}) {
    Ran refused = RunSluice(dir_.path(), {"delta", "history", bad});
    EXPECT_EQ(refused.exit_code, 1) << bad;
    EXPECT_TRUE(Contains(refused.err, "INVALID_STORAGE_URI")) << bad << ": " << refused.err;
  }
}

// The project file's object stores reach every command's paths, before the environment: with
// the environment's endpoint dead, the project's endpoint serves `delta` and `copy`; with the
// project's endpoint dead, the environment's is not used.
TEST_F(CliTest, AProjectFilesObjectStoresServeEveryCommand) {
  const std::string bucket = sluice::testing::S3Server::Shared().NewBucketUri();
  Int64Builder ids(DataType::Long());
  for (int64_t id = 0; id < 3; ++id) ids.Append(id);
  BatchPtr rows = RecordBatch::Make(DataType::Struct({{"id", DataType::Long()}}).value(), {ids.Finish()}, 3).value();
  ASSERT_TRUE(delta::WriteTable(storage::DefaultFileSystem(), bucket + "/lake/t", {rows}).ok());

  std::ofstream(dir_.Join("sluice.yaml"))
      << "object_stores:\n  " << bucket << "/lake:\n    endpoint: " << sluice::testing::S3Server::Shared().endpoint()
      << "\n    access_key_id: ${env:AWS_ACCESS_KEY_ID}\n    secret_access_key: ${env:AWS_SECRET_ACCESS_KEY}\n"
      << "    max_retries: 0\n";
  std::ofstream(dir_.Join("dead_env.sh"))
      << "export AWS_ENDPOINT_URL=http://127.0.0.1:1 AWS_ENDPOINT_URL_S3=http://127.0.0.1:1\n"
      << SluiceBinary() << " delta show " << bucket << "/lake/t --format csv &&\n"
      << SluiceBinary() << " copy --from delta:path=" << bucket << "/lake/t --to delta:path=" << bucket
      << "/lake/copied &&\n"
      << SluiceBinary() << " delta show " << bucket << "/lake/copied --format csv --order-by id\n";
  Ran served = RunShell(dir_.path(), dir_.Join("dead_env.sh"));
  EXPECT_EQ(served.exit_code, 0) << served.err;
  EXPECT_TRUE(served.out.starts_with("id\n0\n1\n2\n")) << served.out;
  EXPECT_TRUE(served.out.ends_with("id\n0\n1\n2\n")) << served.out;
  EXPECT_EQ(delta::Snapshot::Load(storage::DefaultFileSystem(), bucket + "/lake/copied").value()->num_records(), 3);

  std::ofstream(dir_.Join("sluice.yaml"))
      << "object_stores:\n  " << bucket << ": {endpoint: http://127.0.0.1:1, max_retries: 0}\n";
  Ran dead = RunSluice(dir_.path(), {"delta", "history", bucket + "/lake/t"});
  EXPECT_EQ(dead.exit_code, 1) << dead.out;
  EXPECT_TRUE(Contains(dead.err, "127.0.0.1:1")) << dead.err;
}

// `delta alter`: one kind of change per call, through the binary; refusals by class (exit 1),
// a call of two kinds or none is invalid input (exit 2).
TEST_F(CliTest, DeltaAlterChangesPropertiesAndColumnsOneKindPerCall) {
  const std::string table = dir_.Join("t");
  Int64Builder ids(DataType::Long());
  BinaryBuilder cities(DataType::String());
  for (int64_t id = 0; id < 3; ++id) {
    ids.Append(id);
    cities.Append("city" + std::to_string(id));
  }
  TypePtr schema = *DataType::Struct({{"id", DataType::Long()}, {"city", DataType::String()}});
  ASSERT_TRUE(delta::WriteTable(LocalFileSystem(), table, {*RecordBatch::Make(schema, {ids.Finish(), cities.Finish()}, 3)}).ok());
  Ran unmapped = RunSluice(dir_.path(), {"delta", "alter", table, "--rename-column", "city", "--to", "town"});
  EXPECT_EQ(unmapped.exit_code, 1);
  EXPECT_TRUE(Contains(unmapped.err, "DELTA_UNSUPPORTED_RENAME_COLUMN")) << unmapped.err;
  Ran mapped = RunSluice(dir_.path(), {"delta", "alter", table, "--set", "delta.columnMapping.mode=name", "--set",
                                       "owner=data team"});
  EXPECT_EQ(mapped.exit_code, 0) << mapped.err;
  EXPECT_EQ(mapped.out, "version 1: 2 properties set\n");
  Ran renamed = RunSluice(dir_.path(), {"delta", "alter", table, "--rename-column", "city", "--to", "home town"});
  EXPECT_EQ(renamed.out, "version 2: column city renamed to home town\n") << renamed.err;
  Ran shown = RunSluice(dir_.path(), {"delta", "show", table, "--order-by", "id", "--format", "csv"});
  EXPECT_EQ(shown.out, "id,home town\n0,city0\n1,city1\n2,city2\n") << shown.err;
  Ran unset = RunSluice(dir_.path(), {"delta", "alter", table, "--unset", "owner", "--unset", "gone", "--if-exists"});
  EXPECT_EQ(unset.out, "version 3: 2 properties unset\n") << unset.err;
  Ran unknown = RunSluice(dir_.path(), {"delta", "alter", table, "--set", "delta.enableChangeDataFeed=true"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_TRUE(Contains(unknown.err, "DELTA_UNKNOWN_CONFIGURATION")) << unknown.err;
  Ran dropped = RunSluice(dir_.path(), {"delta", "alter", table, "--drop-column", "id"});
  EXPECT_EQ(dropped.out, "version 4: 1 column(s) dropped\n") << dropped.err;
  Ran added = RunSluice(dir_.path(), {"delta", "alter", table, "--add-column", "zip", "--type", "int", "--first"});
  EXPECT_EQ(added.out, "version 5: column zip added\n") << added.err;
  Ran narrow = RunSluice(dir_.path(), {"delta", "alter", table, "--alter-column", "zip", "--type", "bigint"});
  EXPECT_EQ(narrow.exit_code, 1);
  EXPECT_TRUE(Contains(narrow.err, "DELTA_UNSUPPORTED_ALTER_TABLE_CHANGE_COL_OP")) << narrow.err;
  ASSERT_EQ(RunSluice(dir_.path(), {"delta", "alter", table, "--set", "delta.enableTypeWidening=true"}).exit_code, 0);
  Ran widened = RunSluice(dir_.path(), {"delta", "alter", table, "--alter-column", "zip", "--type", "decimal(12,2)",
                                        "--comment", "postal code", "--after", "home town"});
  EXPECT_EQ(widened.out, "version 7: column zip changed\n") << widened.err;
  Ran described = RunSluice(dir_.path(), {"delta", "describe", table});
  EXPECT_TRUE(Contains(described.out, "decimal(12,2)")) << described.out;
  EXPECT_TRUE(Contains(described.out, "typeWidening")) << described.out;
  Ran moved = RunSluice(dir_.path(), {"delta", "show", table, "--order-by", "home town", "--format", "csv"});
  EXPECT_EQ(moved.out, "home town,zip\ncity0,\ncity1,\ncity2,\n") << moved.err;
  Ran history = RunSluice(dir_.path(), {"delta", "history", table, "--limit", "8"});
  for (const char* operation : {"CHANGE COLUMN", "ADD COLUMNS", "DROP COLUMNS", "UNSET TBLPROPERTIES", "RENAME COLUMN",
                                "SET TBLPROPERTIES"}) {
    EXPECT_TRUE(Contains(history.out, operation)) << history.out;
  }
  for (std::vector<std::string> wrong : {std::vector<std::string>{"delta", "alter", table},
                                         {"delta", "alter", table, "--set", "a=b", "--unset", "c"},
                                         {"delta", "alter", table, "--to", "x"},
                                         {"delta", "alter", table, "--rename-column", "x"},
                                         {"delta", "alter", table, "--if-exists"},
                                         {"delta", "alter", table, "--type", "int"},
                                         {"delta", "alter", table, "--add-column", "x"},
                                         {"delta", "alter", table, "--alter-column", "zip", "--first", "--after", "x"},
                                         {"delta", "alter", table, "--drop-not-null"},
                                         {"delta", "alter", table, "--add-column", "x", "--type", "int",
                                          "--drop-not-null"}}) {
    EXPECT_EQ(RunSluice(dir_.path(), wrong).exit_code, 2) << wrong.size();
  }
  EXPECT_EQ(RunSluice(dir_.path(), {"delta", "alter", table, "--set", "novalue"}).exit_code, 1);
}

// Rows as newcomers explore them: sorted (--order-by), all of them (--limit all), long values cut
// where asked (--truncate, --no-truncate), and the table saying when it shows only some; bad values
// of the options refused with exit code 2 (flags) or 1 (values), naming the option.
TEST_F(CliTest, DeltaShowOrdersLimitsAndTruncatesRows) {
  const std::string table = dir_.path() + "/words";
  TypePtr schema = *DataType::Struct({{"id", DataType::Long()}, {"word", DataType::String()}});
  for (int64_t version = 0; version < 3; ++version) {
    Int64Builder ids(DataType::Long());
    BinaryBuilder words(DataType::String());
    for (int64_t k = 0; k < 10; ++k) {
      ids.Append(30 - version * 10 - k);
      words.Append(std::string(static_cast<size_t>(k + 1) * 3, static_cast<char>('a' + k)));
    }
    ASSERT_TRUE(delta::WriteTable(LocalFileSystem(), table, {*RecordBatch::Make(schema, {ids.Finish(), words.Finish()}, 10)}, {}).ok());
  }
  Ran sorted = RunSluice(dir_.path(), {"delta", "show", table, "--order-by", "id", "--limit", "3", "--format", "csv"});
  EXPECT_EQ(sorted.exit_code, 0) << sorted.err;
  EXPECT_EQ(sorted.out, "id,word\n1,jjjjjjjjjjjjjjjjjjjjjjjjjjjjjj\n2,iiiiiiiiiiiiiiiiiiiiiiiiiii\n3,hhhhhhhhhhhhhhhhhhhhhhhh\n");
  // Sorted by a column that is not printed, alone or beside one that is.
  for (const char* keys : {"id", "word,id"}) {
    Ran unprinted = RunSluice(dir_.path(), {"delta", "show", table, "--columns", "word", "--order-by", keys, "--limit",
                                            "2", "--format", "csv"});
    EXPECT_EQ(unprinted.exit_code, 0) << unprinted.err;
    EXPECT_EQ(unprinted.out, std::string(keys) == "id" ? "word\njjjjjjjjjjjjjjjjjjjjjjjjjjjjjj\niiiiiiiiiiiiiiiiiiiiiiiiiii\n"
                                                      : "word\naaa\naaa\n")
        << keys;
  }
  Ran all = RunSluice(dir_.path(), {"delta", "show", table, "--limit", "all", "--format", "jsonl"});
  EXPECT_EQ(all.exit_code, 0) << all.err;
  EXPECT_EQ(std::count(all.out.begin(), all.out.end(), '\n'), 30) << all.out;
  Ran table_view = RunSluice(dir_.path(), {"delta", "show", table, "--order-by", "id", "--limit", "2", "--truncate", "8"});
  EXPECT_EQ(table_view.exit_code, 0) << table_view.err;
  EXPECT_TRUE(Contains(table_view.out, "|jjjjj...|")) << table_view.out;
  EXPECT_TRUE(Contains(table_view.out, "\n2 of 30 rows\n")) << "the total from the files' statistics: " << table_view.out;
  Ran filtered = RunSluice(dir_.path(), {"delta", "show", table, "--where", "id > 25", "--limit", "2"});
  EXPECT_TRUE(Contains(filtered.out, "only showing top 2 rows")) << "a filter's total is unknown: " << filtered.out;
  Ran whole = RunSluice(dir_.path(), {"delta", "show", table, "--order-by", "id", "--limit", "1", "--no-truncate"});
  EXPECT_TRUE(Contains(whole.out, "|jjjjjjjjjjjjjjjjjjjjjjjjjjjjjj|")) << whole.out;
  Ran every = RunSluice(dir_.path(), {"delta", "show", table, "--limit", "all"});
  EXPECT_FALSE(Contains(every.out, "only showing")) << every.out;
  Ran bad_limit = RunSluice(dir_.path(), {"delta", "show", table, "--limit", "most"});
  EXPECT_EQ(bad_limit.exit_code, 1);
  EXPECT_TRUE(Contains(bad_limit.err, "--limit takes a number of rows or all")) << bad_limit.err;
  Ran bad_column = RunSluice(dir_.path(), {"delta", "show", table, "--order-by", "nope"});
  EXPECT_EQ(bad_column.exit_code, 1);
  EXPECT_TRUE(Contains(bad_column.err, "no column nope; the columns are id, word")) << bad_column.err;
  Ran bad_truncate = RunSluice(dir_.path(), {"delta", "show", table, "--truncate", "many"});
  EXPECT_EQ(bad_truncate.exit_code, 2) << bad_truncate.err;
  Ran deleted = RunSluice(dir_.path(), {"delta", "delete", table, "--where", "id <= 5"});
  ASSERT_EQ(deleted.exit_code, 0) << deleted.err;
  Ran after_delete = RunSluice(dir_.path(), {"delta", "show", table, "--limit", "3"});
  EXPECT_TRUE(Contains(after_delete.out, "\n3 of 25 rows\n")) << after_delete.out;
  Ran described = RunSluice(dir_.path(), {"delta", "describe", table});
  EXPECT_TRUE(Contains(described.out, "\nrows: 25\n")) << described.out;
  Ran described_json = RunSluice(dir_.path(), {"delta", "describe", table, "--json"});
  EXPECT_TRUE(Contains(described_json.out, "\"numRecords\":25,")) << described_json.out;
}

// SIGINT while the PostgreSQL sink waits between retries of a server that is not there: the run
// stops at once, as stopped, not failed after the back-off.
// Every row of a Delta table as text, sorted.
std::vector<std::string> TableRows(const std::string& path) {
  std::vector<std::string> rows;
  auto scan = delta::TableScan::Open(delta::Snapshot::Load(LocalFileSystem(), path).value());
  EXPECT_TRUE(scan.ok()) << scan.status().ToString();
  while (scan.ok()) {
    auto batch = (*scan)->Next();
    EXPECT_TRUE(batch.ok()) << batch.status().ToString();
    if (!batch.ok() || *batch == nullptr) break;
    for (int64_t r = 0; r < (*batch)->num_rows(); ++r) {
      rows.push_back(FormatValue(*(*batch)->column(0), r) + "," + FormatValue(*(*batch)->column(1), r));
    }
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

// `sluice delta merge` killed (SIGKILL) at random moments leaves its table at the version before
// or at the merged one, never between; run again, it finishes the merge.
TEST_F(CliTest, AMergeKilledAtAnyMomentLeavesTheOldOrTheNewTable) {
  auto fs = LocalFileSystem();
  TypePtr schema = ParseTypeString("struct<id:bigint,qty:bigint>").value();
  auto batch = [&](int64_t first, int64_t count, int64_t qty) {
    Int64Builder ids(DataType::Long()), qtys(DataType::Long());
    for (int64_t id = first; id < first + count; ++id) {
      ids.Append(id);
      qtys.Append(qty + id % 10);
    }
    return RecordBatch::Make(schema, {ids.Finish(), qtys.Finish()}, count).value();
  };
  const std::string original = dir_.Join("original");
  for (int64_t file = 0; file < 40; ++file) ASSERT_TRUE(delta::WriteTable(fs, original, {batch(file * 5000, 5000, 0)}).ok());
  // The source touches every other file and inserts new ids.
  const std::string source = dir_.Join("source");
  for (int64_t file = 0; file < 40; file += 2) {
    ASSERT_TRUE(delta::WriteTable(fs, source, {batch(file * 5000 + 100, 50, 1000)}).ok());
  }
  ASSERT_TRUE(delta::WriteTable(fs, source, {batch(1'000'000, 3000, 1000)}).ok());
  const std::vector<std::string> merge = {"delta", "merge", "victim", "--source", "source", "--on", "t.id = s.id",
                                          "--when", "MATCHED THEN UPDATE SET qty = t.qty + s.qty",
                                          "--when", "NOT MATCHED THEN INSERT *"};
  const std::vector<std::string> before = TableRows(original);
  std::filesystem::copy(original, dir_.Join("victim"), std::filesystem::copy_options::recursive);
  const auto started = std::chrono::steady_clock::now();
  Ran clean = RunSluice(dir_.path(), merge);
  const auto took = std::chrono::steady_clock::now() - started;
  ASSERT_EQ(clean.exit_code, 0) << clean.err;
  EXPECT_TRUE(Contains(clean.out, "1000 rows updated, 0 deleted, 3000 inserted")) << clean.out;
  const std::vector<std::string> after = TableRows(dir_.Join("victim"));
  ASSERT_EQ(after.size(), before.size() + 3000);

  std::mt19937_64 random(std::random_device{}());
  int old_tables = 0, new_tables = 0;
  for (int kill = 0; kill < 12; ++kill) {
    std::filesystem::remove_all(dir_.Join("victim"));
    std::filesystem::copy(original, dir_.Join("victim"), std::filesystem::copy_options::recursive);
    std::vector<std::string> args = merge;
    args.insert(args.begin(), SluiceBinary());
    ChildProcess process(dir_.path(), args);
    ASSERT_TRUE(process.started());
    const auto span = std::chrono::duration_cast<std::chrono::microseconds>(took).count();
    std::this_thread::sleep_for(std::chrono::microseconds(random() % static_cast<uint64_t>(span + 1)));
    process.Signal(SIGKILL);
    process.Wait();
    std::vector<std::string> rows = TableRows(dir_.Join("victim"));
    ASSERT_TRUE(rows == before || rows == after) << "a kill left " << rows.size() << " rows";
    (rows == before ? old_tables : new_tables) += 1;
    if (rows == before) {
      Ran again = RunSluice(dir_.path(), merge);
      ASSERT_EQ(again.exit_code, 0) << again.err;
      EXPECT_EQ(TableRows(dir_.Join("victim")), after);
    }
  }
  std::cout << old_tables << " kills left the old table, " << new_tables << " the merged one\n";
}

TEST_F(CliTest, SigintDuringAPostgresRetryBackOffStopsTheRunAtOnce) {
  std::ofstream(dir_.Join("p.yaml")) << "name: retry\nstorage: " << dir_.Join("storage") << "\nwarehouse: "
                                     << dir_.Join("w") << R"(
sinks:
  pg: {format: postgresql, options: {host: 127.0.0.1, port: 1, user: u, database: d, dbtable: t, maxretries: 100}}
flows:
  - {name: numbers, source: {format: rate, options: {rowsPerSecond: 10}}, sink: pg, trigger: {kind: processing_time, interval: 1 second}}
)";
  ChildProcess run(dir_.path(), {SluiceBinary(), "run", "p.yaml"});
  ASSERT_TRUE(run.started());
  std::this_thread::sleep_for(std::chrono::seconds(2));
  run.Signal(SIGINT);
  const auto signalled = std::chrono::steady_clock::now();
  EXPECT_EQ(run.Wait(std::chrono::seconds(20)), 0) << run.err();
  EXPECT_LT(std::chrono::steady_clock::now() - signalled, std::chrono::seconds(5));
  EXPECT_TRUE(Contains(run.out(), "flow numbers: STOPPED")) << run.out() << run.err();
  const std::string events = ReadAll(dir_.Join("storage/system/events.jsonl"));
  EXPECT_TRUE(Contains(events, "\"status\":\"STOPPED\"")) << events;
  EXPECT_FALSE(Contains(events, "\"status\":\"FAILED\"")) << events;
}

// Under a terminal, `sluice run` keeps one progress line current, redrawn in place (rows in, the
// rate, rows out, the last batch); Ctrl-C stops the run after the batches in progress and leaves the
// closing figures. Written to a file, the same run draws no line.
TEST_F(CliTest, ARunKeepsItsProgressOnOneTerminalLineAndStopsOnInterrupt) {
  std::ofstream(dir_.Join("p.yaml")) << "name: live\nstorage: " << dir_.Join("storage") << "\nwarehouse: "
                                     << dir_.Join("w") << R"(
sinks:
  events: {format: delta, table: main.s.events}
flows:
  - {name: numbers, source: {format: rate, options: {rowsPerSecond: 50}}, sink: events, trigger: {kind: processing_time, interval: 200 milliseconds}}
)";
  Ran shown = RunInTerminal(dir_.path(), {"run", "p.yaml"}, std::chrono::seconds(4));
  EXPECT_EQ(shown.exit_code, 0) << shown.out << shown.err;
  static const std::regex kLine("\r\x1b\\[Knumbers: (\\d+) in \\((\\d+)/s\\), (\\d+) out, batch (\\d+)");
  int64_t lines = 0, last_in = -1, last_out = -1, last_batch = -1;
  for (auto it = std::sregex_iterator(shown.out.begin(), shown.out.end(), kLine); it != std::sregex_iterator(); ++it) {
    ++lines;
    const int64_t in = std::stoll((*it)[1]), batch = std::stoll((*it)[4]);
    EXPECT_GE(in, last_in) << "rows in never go down";
    EXPECT_GE(batch, last_batch) << "batches never go back";
    last_in = in;
    last_out = std::stoll((*it)[3]);
    last_batch = batch;
  }
  EXPECT_GE(lines, 3) << shown.out;
  EXPECT_GT(last_in, 0) << shown.out;
  EXPECT_EQ(last_out, last_in) << "nothing is filtered: every row read is written";
  EXPECT_GE(last_batch, 1) << shown.out;
  EXPECT_FALSE(Contains(shown.out, "batch -1")) << shown.out;
  EXPECT_TRUE(Contains(shown.out, "stopping after the batches in progress...")) << shown.out;
  static const std::regex kClosing("flow numbers: STOPPED, (\\d+) batch\\(es\\), (\\d+) rows in, (\\d+) rows out");
  std::smatch closing;
  ASSERT_TRUE(std::regex_search(shown.out, closing, kClosing)) << shown.out;
  EXPECT_GE(std::stoll(closing[2]), last_in);
  EXPECT_EQ(closing[2], closing[3]);

  ChildProcess plain(dir_.path(), {SluiceBinary(), "run", "p.yaml"});
  ASSERT_TRUE(plain.started());
  std::this_thread::sleep_for(std::chrono::seconds(2));
  plain.Signal(SIGINT);
  EXPECT_EQ(plain.Wait(), 0) << plain.err();
  EXPECT_FALSE(Contains(plain.out(), "\x1b[K")) << plain.out();
  EXPECT_TRUE(Contains(plain.out(), "flow numbers: STOPPED")) << plain.out();
}

// Pipeline `name` (storage and warehouse under `dir`) whose flow `good` writes rate rows into the
// Delta table main.s.first and whose flow `bad` fails its first batch on an expectation, which
// ends a run with exit code 1.
std::string GoodAndFailingFlows(const testing::TempDir& dir, const std::string& name) {
  return "name: " + name + "\nstorage: " + dir.Join("storage") + "\nwarehouse: " + dir.Join("w") + R"(
sinks:
  first: {format: delta, table: main.s.first}
  second: {format: delta, table: main.s.second}
flows:
  - {name: good, source: {format: rate, options: {rowsPerSecond: 1000}}, sink: first}
  - name: bad
    source: {format: rate, options: {rowsPerSecond: 1000}}
    expectations: [{name: negative, expect_or_fail: value < 0}]
    sink: second
)";
}

// A pipeline file's relative storage and warehouse are beside it, wherever sluice runs from; the
// delta commands name its tables catalog.schema.table with --warehouse (or $SLUICE_WAREHOUSE) and
// print fields inside structs by their dot paths.
TEST_F(CliTest, RelativeFoldersAreBesideThePipelineAndTablesGoByTheirNames) {
  std::filesystem::create_directories(dir_.Join("project"));
  // A rate source started ten seconds ago: one batch of about ten rows.
  const int64_t start_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch()).count() - 10'000;
  std::ofstream(dir_.Join("project/p.yaml")) << R"(name: relative
storage: state
warehouse: ../tables
sinks:
  events: {format: delta, table: main.s.events}
flows:
  - name: numbers
    source: {format: rate, options: {rowsPerSecond: 1, startTimestamp: )" << start_ms << R"(}}
    select: ["named_struct('id', value, 'half', value / 2) AS payload", "value % 2 AS parity"]
    sink: events
    trigger: once
)";
  std::filesystem::create_directories(dir_.Join("elsewhere"));
  Ran validated = RunSluice(dir_.Join("elsewhere"), {"validate", "../project/p.yaml"});
  ASSERT_EQ(validated.exit_code, 0) << validated.out << validated.err;
  Ran ran = RunSluice(dir_.Join("elsewhere"), {"run", "../project/p.yaml"});
  ASSERT_EQ(ran.exit_code, 0) << ran.out << ran.err;
  EXPECT_TRUE(std::filesystem::exists(dir_.Join("project/state/system/events.jsonl")));
  EXPECT_TRUE(std::filesystem::exists(dir_.Join("tables/main/s/events/_delta_log")));
  EXPECT_FALSE(std::filesystem::exists(dir_.Join("elsewhere/state")));
  Ran status = RunSluice(dir_.Join("elsewhere"), {"status", "../project/p.yaml", "--json"});
  EXPECT_TRUE(Contains(status.out, "\"numbers\"")) << status.out << status.err;

  Ran shown = RunSluice(dir_.path(), {"delta", "show", "main.s.events", "--warehouse", "tables", "--columns",
                                      "payload.id,parity", "--where", "payload.id < 3", "--format", "csv"});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_EQ(shown.out, "payload.id,parity\n0,0\n1,1\n2,0\n");
  Ran history = RunSluice(dir_.path(), {"delta", "history", "main.s.events", "--warehouse", dir_.Join("tables")});
  EXPECT_EQ(history.exit_code, 0) << history.err;
  EXPECT_TRUE(Contains(history.out, "STREAMING UPDATE")) << history.out;
  Ran missing = RunSluice(dir_.path(), {"delta", "describe", "main.s.nope", "--warehouse", "tables"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_TRUE(Contains(missing.err, "DELTA_TABLE_NOT_FOUND")) << missing.err;
  Ran hostile = RunSluice(dir_.path(), {"delta", "show", "main.s..x", "--warehouse", "tables"});
  EXPECT_EQ(hostile.exit_code, 1) << hostile.out;
  Ran field = RunSluice(dir_.path(), {"delta", "show", "main.s.events", "--warehouse", "tables", "--columns", "payload.nope"});
  EXPECT_EQ(field.exit_code, 1);
  EXPECT_TRUE(Contains(field.err, "UNRESOLVED_COLUMN")) << field.err;
}

// A project file (./sluice.yaml, or --config before or after the command) gives every command its
// warehouse, relative to the file; --warehouse and $SLUICE_WAREHOUSE win over it; a file with an
// unknown key, of the wrong shape or missing is invalid input.
TEST_F(CliTest, AProjectFileGivesEveryCommandItsWarehouse) {
  std::filesystem::create_directories(dir_.Join("proj"));
  std::filesystem::create_directories(dir_.Join("elsewhere"));
  std::ofstream(dir_.Join("proj/sluice.yaml")) << "# the project's defaults\nwarehouse: tables\n";
  Int64Builder ids(DataType::Long());
  for (int64_t id = 0; id < 3; ++id) ids.Append(id);
  BatchPtr rows = RecordBatch::Make(DataType::Struct({{"id", DataType::Long()}}).value(), {ids.Finish()}, 3).value();
  ASSERT_TRUE(delta::WriteTable(storage::DefaultFileSystem(), dir_.Join("proj/tables/main/s/t"), {rows}).ok());

  Ran here = RunSluice(dir_.Join("proj"), {"delta", "show", "main.s.t", "--format", "csv"});
  ASSERT_EQ(here.exit_code, 0) << here.err;
  EXPECT_EQ(here.out, "id\n0\n1\n2\n");
  Ran after = RunSluice(dir_.Join("elsewhere"), {"delta", "show", "main.s.t", "--config", "../proj/sluice.yaml",
                                                  "--format", "csv"});
  EXPECT_EQ(after.exit_code, 0) << after.err;
  EXPECT_EQ(after.out, "id\n0\n1\n2\n");
  Ran before = RunSluice(dir_.Join("elsewhere"), {"--config=../proj/sluice.yaml", "delta", "describe", "main.s.t"});
  EXPECT_EQ(before.exit_code, 0) << before.err;
  Ran catalog = RunSluice(dir_.Join("proj"), {"connection", "list", "--json"});
  EXPECT_EQ(catalog.exit_code, 0) << catalog.err;

  Ran flag = RunSluice(dir_.Join("proj"), {"delta", "show", "main.s.t", "--warehouse", "other"});
  EXPECT_EQ(flag.exit_code, 1);
  EXPECT_TRUE(Contains(flag.err, dir_.Join("proj/other/main/s/t"))) << flag.err;
  std::ofstream(dir_.Join("env.sh")) << "SLUICE_WAREHOUSE=" << dir_.Join("env") << " " << SluiceBinary()
                                     << " delta show main.s.t\n";
  Ran environment = RunShell(dir_.Join("proj"), dir_.Join("env.sh"));
  EXPECT_EQ(environment.exit_code, 1);
  EXPECT_TRUE(Contains(environment.err, dir_.Join("env/main/s/t"))) << environment.err;

  // Its connections serve `copy` and `cdf` before the catalog's: a server that is not there is
  // reached at the project's host and port (nothing listens on port 1).
  std::ofstream(dir_.Join("proj/sluice.yaml"))
      << "warehouse: tables\nconnections:\n  shop: {type: postgresql, host: 127.0.0.1, port: 1, database: d, "
         "user: u, password: \"${env:PROJECT_PG_PASSWORD}\"}\n";
  ::setenv("PROJECT_PG_PASSWORD", "not-needed", 1);
  Ran copied = RunSluice(dir_.Join("proj"),
                         {"copy", "--from", "postgresql:connection=shop,dbtable=public.t", "--to", "main.s.copied"});
  EXPECT_EQ(copied.exit_code, 1) << copied.err;
  EXPECT_TRUE(Contains(copied.err, "PG_CONNECTION_FAILED") && Contains(copied.err, "127.0.0.1") &&
              Contains(copied.err, "port 1")) << copied.err;
  Ran checked = RunSluice(dir_.Join("proj"), {"cdf", "check", "--connection", "shop"});
  EXPECT_EQ(checked.exit_code, 1) << checked.err;
  EXPECT_TRUE(Contains(checked.err, "PG_CONNECTION_FAILED")) << checked.err;
  Ran unknown = RunSluice(dir_.Join("elsewhere"),
                          {"copy", "--from", "postgresql:connection=shop,dbtable=public.t", "--to", "main.s.c"});
  EXPECT_TRUE(Contains(unknown.err, "CONNECTION_NOT_FOUND")) << "only the project has it: " << unknown.err;

  const std::pair<std::string, std::string> kInvalid[] = {
      {"connections:\n  shop: {type: postgresql, host: h, password: hunter2}\n", "CONNECTION_LITERAL_SECRET"},
      {"connections:\n  shop: {type: mysql, host: h}\n", "mysql"},
      {"connections:\n  shop: [a]\n", "must be a mapping"},
      {"connections: shop\n", "`connections` must map names"},
      {"wherehouse: tables\n", "unknown key `wherehouse`"},
      {"warehouse: [a, b]\n", "`warehouse` must be a directory"},
      {"object_stores:\n  s3://lake: {secret_access_key: hunter2}\n", "CONNECTION_LITERAL_SECRET"},
      {"object_stores:\n  s3://lake: {endpoint_url: http://h}\n", "INVALID_STORAGE_URI"},
      {"object_stores:\n  gs://lake: {region: x}\n", "INVALID_STORAGE_URI"},
      {"object_stores:\n  s3://lake: [a]\n", "must be a mapping of options"},
      {"object_stores: s3://lake\n", "`object_stores` must map"},
      {"warehouse: [\n", "not YAML"},
      {"- tables\n", "expected a mapping"},
  };
  for (const auto& [text, complaint] : kInvalid) {
    std::ofstream(dir_.Join("elsewhere/sluice.yaml")) << text;
    Ran invalid = RunSluice(dir_.Join("elsewhere"), {"delta", "show", "main.s.t"});
    EXPECT_EQ(invalid.exit_code, 2) << text;
    EXPECT_TRUE(Contains(invalid.err, "project file")) << invalid.err;
    EXPECT_TRUE(Contains(invalid.err, complaint)) << text << ": " << invalid.err;
    EXPECT_FALSE(Contains(invalid.err, "hunter2")) << "no secret in a message: " << invalid.err;
  }
  Ran missing = RunSluice(dir_.Join("proj"), {"--config", "nope.yaml", "delta", "show", "main.s.t"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_TRUE(Contains(missing.err, "nope.yaml: no such file")) << missing.err;
}

// `sluice events` prints a pipeline's event log, filtered by flow, level and type, as text or JSON
// lines, and follows it while runs append.
TEST_F(CliTest, EventsPrintsTheLogFilteredAndFollowsIt) {
  std::ofstream(dir_.Join("p.yaml")) << GoodAndFailingFlows(dir_, "logged");
  // The failing flow ends the run.
  Ran failed = RunSluice(dir_.path(), {"run", "p.yaml"});
  ASSERT_EQ(failed.exit_code, 1) << failed.out << failed.err;

  Ran all = RunSluice(dir_.path(), {"events", "p.yaml"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  for (std::string_view part : {"flow_definition", "[good] ", "[bad] ", "ERROR", "flow 'bad' is FAILED"}) {
    EXPECT_TRUE(Contains(all.out, part)) << part << " in:\n" << all.out;
  }
  auto lines = [](const std::string& text) {
    std::vector<std::string> result;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) result.push_back(line);
    return result;
  };
  simdjson::dom::parser parser;
  auto field = [&](const std::string& line, const char* key) {
    simdjson::dom::element event;
    EXPECT_EQ(parser.parse(line).get(event), simdjson::SUCCESS) << line;
    std::string_view value;
    if (std::string_view(key) == "flow") return std::string(event["origin"]["flow"].get(value) ? "" : value);
    return std::string(event[key].get(value) ? "" : value);
  };
  Ran definitions = RunSluice(dir_.path(), {"events", "p.yaml", "--json", "--type", "flow_definition"});
  ASSERT_EQ(definitions.exit_code, 0) << definitions.err;
  std::set<std::string> defined;
  for (const std::string& line : lines(definitions.out)) {
    EXPECT_EQ(field(line, "event_type"), "flow_definition");
    defined.insert(field(line, "flow"));
  }
  EXPECT_EQ(defined, (std::set<std::string>{"good", "bad"}));
  Ran errors = RunSluice(dir_.path(), {"events", "p.yaml", "--json", "--level", "error"});
  ASSERT_EQ(errors.exit_code, 0) << errors.err;
  ASSERT_FALSE(lines(errors.out).empty());
  for (const std::string& line : lines(errors.out)) EXPECT_EQ(field(line, "level"), "ERROR") << line;
  Ran good = RunSluice(dir_.path(), {"events", "p.yaml", "--json", "--flow", "good"});
  ASSERT_FALSE(lines(good.out).empty());
  for (const std::string& line : lines(good.out)) EXPECT_EQ(field(line, "flow"), "good") << line;
  EXPECT_EQ(lines(all.out).size(), lines(RunSluice(dir_.path(), {"events", "p.yaml", "--json"}).out).size());

  // Wrong input is 2, a missing file 1.
  EXPECT_EQ(RunSluice(dir_.path(), {"events", "p.yaml", "--level", "LOUD"}).exit_code, 2);
  EXPECT_EQ(RunSluice(dir_.path(), {"events", "p.yaml", "--type", "gossip"}).exit_code, 2);
  EXPECT_EQ(RunSluice(dir_.path(), {"events"}).exit_code, 2);
  EXPECT_EQ(RunSluice(dir_.path(), {"events", "missing.yaml"}).exit_code, 1);

  // Following: the events of a second run appear while it runs.
  ChildProcess follow(dir_.path(), {SluiceBinary(), "events", "p.yaml", "--follow", "--type", "error"});
  ASSERT_TRUE(follow.started());
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const size_t before = lines(follow.out()).size();
  EXPECT_EQ(before, lines(RunSluice(dir_.path(), {"events", "p.yaml", "--type", "error"}).out).size());
  ASSERT_EQ(RunSluice(dir_.path(), {"run", "p.yaml"}).exit_code, 1);
  std::string followed;
  for (int i = 0; i < 50 && lines(followed).size() <= before; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    followed = follow.out();
  }
  EXPECT_GT(lines(followed).size(), before) << followed;
  follow.Signal(SIGINT);
  EXPECT_EQ(follow.Wait(std::chrono::seconds(10)), 0) << follow.err();
}

// `sluice status --json` and `sluice validate --json` give scripts what the text shows: every flow
// and stream with its last state, the problems with their error classes.
TEST_F(CliTest, StatusAndValidateSpeakJson) {
  std::ofstream(dir_.Join("p.yaml")) << GoodAndFailingFlows(dir_, "scripted") << R"(streams:
  - name: main.raw.idle
    source: {format: kafka, options: {bootstrap_servers: "127.0.0.1:1", subscribe: t}}
    ingestion_config: {table: main.raw.idle}
materialized_views:
  - name: main.gold.counts
    sql: SELECT count(*) AS n FROM STREAM(main.raw.idle)
)";
  Ran valid = RunSluice(dir_.path(), {"validate", "p.yaml", "--json"});
  ASSERT_EQ(valid.exit_code, 0) << valid.err;
  // One parser per document: a parser's elements last until it parses the next.
  simdjson::dom::parser validated, statused, refused;
  simdjson::dom::element result;
  ASSERT_EQ(validated.parse(simdjson::padded_string(valid.out)).get(result), simdjson::SUCCESS) << valid.out;
  EXPECT_TRUE(result["valid"].get_bool().value());
  EXPECT_EQ(result["flows"].get_int64().value(), 3);  // two flows and the materialized view
  EXPECT_EQ(result["streams"].get_int64().value(), 1);

  ASSERT_EQ(RunSluice(dir_.path(), {"run", "p.yaml", "--flow", "good", "--flow", "bad"}).exit_code, 1);
  Ran status = RunSluice(dir_.path(), {"status", "p.yaml", "--json"});
  ASSERT_EQ(status.exit_code, 0) << status.err;
  ASSERT_EQ(statused.parse(simdjson::padded_string(status.out)).get(result), simdjson::SUCCESS) << status.out;
  std::map<std::string, simdjson::dom::element> rows;
  // Bound first: a range-for over a temporary result's value() would outlive it.
  simdjson::dom::array flows = result["flows"].get_array().value();
  for (simdjson::dom::element row : flows) {
    rows[std::string(row["name"].get_string().value())] = row;
  }
  ASSERT_EQ(rows.size(), 4u) << status.out;
  EXPECT_EQ(rows["good"]["kind"].get_string().value(), "flow");
  EXPECT_EQ(rows["main.gold.counts"]["kind"].get_string().value(), "materialized_view");
  EXPECT_EQ(rows["main.gold.counts"]["state"].get_string().value(), "NEVER RUN");
  EXPECT_EQ(rows["bad"]["state"].get_string().value(), "FAILED");
  EXPECT_NE(rows["bad"]["error"].get_string().value().find("negative"), std::string_view::npos) << status.out;
  EXPECT_EQ(rows["main.raw.idle"]["kind"].get_string().value(), "stream");
  EXPECT_EQ(rows["main.raw.idle"]["state"].get_string().value(), "NEVER RUN");
  EXPECT_TRUE(rows["main.raw.idle"]["last_batch"].is_null());
  Ran text = RunSluice(dir_.path(), {"status", "p.yaml"});
  EXPECT_TRUE(Contains(text.out, "main.raw.idle")) << text.out;

  // The table of the good flow (which the failing one may have stopped before its first commit),
  // given a commit by a one-batch flow, described and its history, as JSON.
  const int64_t start_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch()).count() - 10'000;
  std::ofstream(dir_.Join("once.yaml")) << "name: once\nstorage: " << dir_.Join("once") << "\nwarehouse: "
                                        << dir_.Join("w") << R"(
sinks:
  first: {format: delta, table: main.s.first}
flows:
  - name: one_batch
    source: {format: rate, options: {rowsPerSecond: 1, startTimestamp: )" << start_ms << R"(}}
    sink: first
    trigger: once
)";
  Ran once = RunSluice(dir_.path(), {"run", "once.yaml"});
  ASSERT_EQ(once.exit_code, 0) << once.out << once.err;
  const std::string table = dir_.Join("w/main/s/first");
  Ran history = RunSluice(dir_.path(), {"delta", "history", table, "--json"});
  ASSERT_EQ(history.exit_code, 0) << history.err;
  simdjson::dom::parser versions;
  int64_t newest = -1;
  std::istringstream history_lines(history.out);
  for (std::string line; std::getline(history_lines, line);) {
    simdjson::dom::element version;
    ASSERT_EQ(versions.parse(simdjson::padded_string(line)).get(version), simdjson::SUCCESS) << line;
    if (newest < 0) newest = version["version"].get_int64().value();
    EXPECT_FALSE(version["operation"].get_string().value().empty()) << line;
    EXPECT_TRUE(version["operationMetrics"].is_object()) << line;
  }
  EXPECT_GE(newest, 0) << history.out;
  Ran described = RunSluice(dir_.path(), {"delta", "describe", table, "--json"});
  ASSERT_EQ(described.exit_code, 0) << described.err;
  simdjson::dom::parser describing;
  ASSERT_EQ(describing.parse(simdjson::padded_string(described.out)).get(result), simdjson::SUCCESS) << described.out;
  EXPECT_EQ(result["version"].get_int64().value(), newest);
  EXPECT_EQ(result["schema"]["type"].get_string().value(), "struct");
  EXPECT_GE(result["numFiles"].get_int64().value(), 1);

  std::ofstream(dir_.Join("broken.yaml")) << "name: broken\nstorage: " << dir_.Join("storage2") << "\nwarehouse: "
                                          << dir_.Join("w") << R"(
sinks:
  lake: {format: delta, table: main.s.t}
flows:
  - {name: a, source: {format: rate, options: {rowsPerSecond: 0}}, sink: lake}
  - {name: b, source: {format: rate}, sink: nowhere}
)";
  Ran broken = RunSluice(dir_.path(), {"validate", "broken.yaml", "--json"});
  EXPECT_EQ(broken.exit_code, 1);
  ASSERT_EQ(refused.parse(simdjson::padded_string(broken.out)).get(result), simdjson::SUCCESS) << broken.out;
  EXPECT_FALSE(result["valid"].get_bool().value());
  std::vector<std::string> classes;
  simdjson::dom::array problems = result["problems"].get_array().value();
  for (simdjson::dom::element problem : problems) {
    classes.emplace_back(problem["error_class"].get_string().value());
  }
  EXPECT_EQ(classes.size(), 2u) << broken.out;
}

// The catalog's listings as JSON: connections (secrets only as their references) and streams.
TEST_F(CliTest, CatalogListingsSpeakJson) {
  const std::string warehouse = dir_.Join("w");
  ASSERT_EQ(RunSluice(dir_.path(), {"connection", "create", "--warehouse", warehouse, "shop", "--type", "postgresql",
                                    "-o", "host=db.internal", "-o", "password=${env:SHOP_PASSWORD}"})
                .exit_code,
            0);
  ASSERT_EQ(RunSluice(dir_.path(), {"connection", "create", "--warehouse", warehouse, "bus", "--type", "kafka", "-o",
                                    "bootstrap_servers=k:9092"})
                .exit_code,
            0);
  Ran listed = RunSluice(dir_.path(), {"connection", "list", "--warehouse", warehouse, "--json"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  simdjson::dom::parser connections, described_parser, streams, got_parser;
  simdjson::dom::element result;
  ASSERT_EQ(connections.parse(simdjson::padded_string(listed.out)).get(result), simdjson::SUCCESS) << listed.out;
  std::map<std::string, std::string> targets;
  simdjson::dom::array list = result["connections"].get_array().value();
  for (simdjson::dom::element connection : list) {
    targets[std::string(connection["name"].get_string().value())] = connection["target"].get_string().value();
  }
  EXPECT_EQ(targets, (std::map<std::string, std::string>{{"bus", "k:9092"}, {"shop", "db.internal:5432/postgres"}}));
  Ran described = RunSluice(dir_.path(), {"connection", "describe", "--warehouse", warehouse, "shop", "--json"});
  ASSERT_EQ(described.exit_code, 0) << described.err;
  ASSERT_EQ(described_parser.parse(simdjson::padded_string(described.out)).get(result), simdjson::SUCCESS);
  EXPECT_EQ(result["options"]["host"].get_string().value(), "db.internal");
  EXPECT_EQ(result["secrets"]["password"].get_string().value(), "${env:SHOP_PASSWORD}");
  EXPECT_TRUE(result["options"]["password"].error() == simdjson::NO_SUCH_FIELD) << described.out;

  for (const char* name : {"main.raw.a", "main.raw.b"}) {
    std::ofstream(dir_.Join("s.yaml")) << "name: " << name
                                       << "\nsource: {format: kafka, options: {connection: bus, subscribe: orders}}\n"
                                          "ingestion_config: {table: "
                                       << name << "}\nscale: {group: true}\n";
    Ran created = RunSluice(dir_.path(), {"stream", "create", "--warehouse", warehouse, "s.yaml"});
    ASSERT_EQ(created.exit_code, 0) << created.err;
  }
  Ran page = RunSluice(dir_.path(), {"stream", "list", "--warehouse", warehouse, "--json", "--max-results", "1"});
  ASSERT_EQ(page.exit_code, 0) << page.err;
  ASSERT_EQ(streams.parse(simdjson::padded_string(page.out)).get(result), simdjson::SUCCESS) << page.out;
  simdjson::dom::array first_page = result["streams"].get_array().value();
  ASSERT_EQ(first_page.size(), 1u);
  EXPECT_EQ(first_page.at(0)["name"].get_string().value(), "main.raw.a");
  EXPECT_EQ(first_page.at(0)["workers_group"].get_string().value(), "sluice-main.raw.a");
  EXPECT_EQ(result["next_page_token"].get_string().value(), "main.raw.a");
  Ran got = RunSluice(dir_.path(), {"stream", "get", "--warehouse", warehouse, "main.raw.b", "--json"});
  ASSERT_EQ(got.exit_code, 0) << got.err;
  ASSERT_EQ(got_parser.parse(simdjson::padded_string(got.out)).get(result), simdjson::SUCCESS) << got.out;
  EXPECT_EQ(result["subscribe"].get_string().value(), "orders");
  EXPECT_NE(result["definition"].get_string().value().find("scale: {group: true}"), std::string_view::npos);
}

// `sluice help` prints a command's help; `sluice completion` scripts complete commands and flags
// from the same definitions (bash run for real; fish and zsh checked for their shape).
TEST_F(CliTest, HelpAndCompletionComeFromTheCommandsDefinitions) {
  Ran help = RunSluice(dir_.path(), {"help", "delta", "history"});
  ASSERT_EQ(help.exit_code, 0) << help.err;
  EXPECT_TRUE(Contains(help.out, "--json")) << help.out;
  EXPECT_TRUE(Contains(help.out, "--limit")) << help.out;
  EXPECT_TRUE(Contains(RunSluice(dir_.path(), {"help"}).out, "completion"));
  Ran unknown = RunSluice(dir_.path(), {"help", "delta", "nope"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_TRUE(Contains(unknown.err, "unknown command `nope`")) << unknown.err;

  Ran bash = RunSluice(dir_.path(), {"completion", "bash"});
  ASSERT_EQ(bash.exit_code, 0) << bash.err;
  std::ofstream(dir_.Join("sluice.bash")) << bash.out;
  std::ofstream(dir_.Join("complete.sh")) << "source " << dir_.Join("sluice.bash") << R"(
complete_words() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _sluice; echo "${COMPREPLY[*]}"; }
complete_words sluice del
complete_words sluice delta his
complete_words sluice delta history --j
complete_words sluice run p.yaml --inst
complete_words sluice stream run main.raw.x --work
)";
  Ran completed = RunShell(dir_.path(), dir_.Join("complete.sh"));
  ASSERT_EQ(completed.exit_code, 0) << completed.err;
  EXPECT_EQ(completed.out, "delta\nhistory\n--json\n--instance-id\n--workers-group\n");

  Ran fish = RunSluice(dir_.path(), {"completion", "fish"});
  EXPECT_TRUE(Contains(fish.out, "complete -c sluice -n '__fish_seen_subcommand_from history' -l json")) << fish.out;
  Ran zsh = RunSluice(dir_.path(), {"completion", "zsh"});
  EXPECT_TRUE(Contains(zsh.out, "bashcompinit") && Contains(zsh.out, "complete -F _sluice sluice")) << zsh.out;
  EXPECT_EQ(RunSluice(dir_.path(), {"completion", "tcsh"}).exit_code, 2);

  // The man page: every command with its flags, which groff renders without a warning.
  Ran man = RunSluice(dir_.path(), {"man"});
  ASSERT_EQ(man.exit_code, 0) << man.err;
  EXPECT_TRUE(man.out.starts_with(".TH SLUICE 1 ")) << man.out.substr(0, 100);
  // Positionals are named one way across commands: FILE, NAME, TABLE (and help's COMMAND,
  // completion's SHELL).
  std::set<std::string> positionals;
  std::istringstream lines(man.out.substr(0, man.out.find(".SH EXIT STATUS")));
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with(".B ") && !line.starts_with(".B sluice") && !line.starts_with(".B \\-")) {
      positionals.insert(line.substr(3));
    }
  }
  EXPECT_EQ(positionals, (std::set<std::string>{"COMMAND", "FILE", "NAME", "SHELL", "TABLE"}));
  std::ofstream(dir_.Join("sluice.1")) << man.out;
  std::ofstream(dir_.Join("render.sh")) << "groff -man -Tascii -ww -P-cbou " << dir_.Join("sluice.1") << "\n";
  Ran rendered = RunShell(dir_.path(), dir_.Join("render.sh"));
  ASSERT_EQ(rendered.exit_code, 0) << rendered.err;
  EXPECT_EQ(rendered.err, "") << "groff's warnings";
  for (const char* text : {"sluice delta history", "--json", "sluice stream run", "--workers-group", "sluice man",
                           "SLUICE_WAREHOUSE", "EXIT STATUS"}) {
    EXPECT_TRUE(Contains(rendered.out, text)) << text;
  }
}

// `sluice demo --keep-running` leaves its Kafka and PostgreSQL up, so that the pipeline file it
// wrote runs against them, and so do the quickstart's three pipelines (examples/quickstart, as
// docs/quickstart.md runs them), until Ctrl-C stops them.
TEST_F(CliTest, TheDemoKeptRunningServesItsPipelineAndTheQuickstartsUntilCtrlC) {
  for (const char* folder : {"demo-cwd", "feed-cwd"}) std::filesystem::create_directories(dir_.Join(folder));
  ChildProcess demo(dir_.Join("demo-cwd"), {SluiceBinary(), "demo", "--dir", dir_.Join("demo"), "--keep-running"});
  ASSERT_TRUE(demo.started());
  bool up = false;
  for (int i = 0; i < 1200 && !up; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    up = Contains(demo.out(), "stay up until Ctrl-C");
  }
  ASSERT_TRUE(up) << demo.out() << demo.err();
  // The orders upserted into PostgreSQL again (the flow starts afresh: a checkpoint of its own),
  // and read from Kafka again: both services answer.
  Ran again = RunSluice(dir_.path(), {"run", dir_.Join("demo/pipeline.yaml"), "--flow", "orders_to_postgres",
                                      "--full-refresh", "orders_to_postgres"});
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_TRUE(Contains(again.out, "orders_to_postgres: COMPLETED")) << again.out;

  // The addresses as the quickstart exports them.
  std::smatch address;
  const std::string shown = demo.out();
  ASSERT_TRUE(std::regex_search(shown, address, std::regex(R"(Kafka \(([^)]+)\) and PostgreSQL \(([^:]+):(\d+)\))")))
      << shown;
  const std::string bootstrap = address[1], pg_host = address[2], pg_port = address[3];
  sluice::testing::ScopedEnvironment environment(
      {{"KAFKA_BOOTSTRAP", bootstrap.c_str()}, {"PG_HOST", pg_host.c_str()}, {"PG_PORT", pg_port.c_str()}});
  const std::string quickstart = dir_.Join("quickstart");
  std::filesystem::copy(sluice::testing::SourceDir() + "/examples/quickstart", quickstart);
  for (const char* file : {"pipeline.yaml", "changes.yaml"}) {
    Ran valid = RunSluice(quickstart, {"validate", file});
    EXPECT_EQ(valid.exit_code, 0) << valid.out << valid.err;
    EXPECT_TRUE(Contains(valid.out, "is valid")) << valid.out;
  }
  // 2-3: the stream and the aggregate into PostgreSQL.
  Ran first = RunSluice(quickstart, {"run", "pipeline.yaml"});
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  EXPECT_TRUE(Contains(first.out, "flow customer_spend: COMPLETED, 1 batch(es), 60 rows in, 5 rows out")) << first.out;
  EXPECT_TRUE(Contains(first.out, "flow main.raw.orders: COMPLETED, 1 batch(es), 60 rows in, 60 rows out"))
      << first.out;
  Ran orders = RunSluice(quickstart, {"delta", "show", "main.raw.orders", "--warehouse", "warehouse", "--columns",
                                      "value.order_id,value.customer,kafka_offset", "--order-by", "value.order_id",
                                      "--limit", "2", "--format", "csv"});
  EXPECT_EQ(orders.exit_code, 0) << orders.err;
  EXPECT_EQ(orders.out.substr(0, orders.out.find('\n')), "value.order_id,value.customer,kafka_offset");
  EXPECT_TRUE(Contains(orders.out, "\n1000,ada,")) << orders.out;

  // 4: run again, nothing is read twice; two more orders, and only they are read.
  Ran unchanged = RunSluice(quickstart, {"run", "pipeline.yaml"});
  EXPECT_EQ(unchanged.exit_code, 0) << unchanged.err;
  EXPECT_TRUE(Contains(unchanged.out, "flow customer_spend: COMPLETED, 0 batch(es), 0 rows in, 0 rows out"))
      << unchanged.out;
  std::vector<connectors::KafkaTestMessage> two_orders(2);
  two_orders[0].value = R"({"order_id":2001,"customer":"ada","item":"kettle","quantity":1,"amount":30.00})";
  two_orders[1].value = R"({"order_id":2002,"customer":"margaret","item":"teapot","quantity":2,"amount":24.00})";
  auto run_with_two_orders = [&] {
    ASSERT_TRUE(connectors::ProduceMessages(bootstrap, "demo.orders", two_orders).ok());
    Ran run = RunSluice(quickstart, {"run", "pipeline.yaml"});
    EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
    EXPECT_TRUE(Contains(run.out, "flow customer_spend: COMPLETED, 1 batch(es), 2 rows in, 2 rows out")) << run.out;
  };
  run_with_two_orders();

  // 5: the change feed of the demo database's public tables, customer_spend's history read back.
  Ran identity = RunSluice(quickstart, {"cdf", "set-replica-identity", "--host", pg_host, "--port", pg_port, "--user",
                                        "sluice", "--database", "sluice_demo", "--schema", "public"});
  ASSERT_EQ(identity.exit_code, 0) << identity.out << identity.err;
  EXPECT_TRUE(Contains(identity.out, "REPLICA IDENTITY FULL: public.customer_spend\n")) << identity.out;
  ChildProcess feed(dir_.Join("feed-cwd"), {SluiceBinary(), "run", quickstart + "/changes.yaml"});
  ASSERT_TRUE(feed.started());
  const std::vector<std::string> history_query = {
      "delta",     "show",      "main.cdc.lb_customer_spend_history", "--warehouse", "warehouse", "--order-by",
      "_sort_by",  "--columns", "customer,orders,spent,_pg_change_type", "--format", "csv", "--limit", "all"};
  auto history_holds = [&](const std::vector<std::string>& rows) {
    std::string history, complaint;
    for (int i = 0; i < 600; ++i) {
      Ran shown = RunSluice(quickstart, history_query);
      history = shown.out;
      complaint = shown.err;
      if (std::all_of(rows.begin(), rows.end(), [&](const std::string& row) { return Contains(history, row); })) {
        return history;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << "the history never held every expected row: " << history << complaint;
    return history;
  };
  // The copy of its first start, then the same two orders again: both customers updated.
  history_holds({"ada,13,330.00,insert", "barbara,6,1068.00,insert", "margaret,1,24.00,insert"});
  run_with_two_orders();
  const std::string history =
      history_holds({"ada,13,330.00,update_preimage\nada,14,360.00,update_postimage",
                     "margaret,1,24.00,update_preimage\nmargaret,2,48.00,update_postimage"});
  EXPECT_EQ(std::count(history.begin(), history.end(), '\n'), 1 + 6 + 4) << history;
  Ran status = RunSluice(quickstart, {"status", "changes.yaml"});
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_FALSE(Contains(status.out, "|name|kind|")) << "no table of flows without flows: " << status.out;
  // The feed's tables, as `sluice status` and `sluice cdf status` both print them.
  Ran feed_status = RunSluice(quickstart, {"cdf", "status", "--host", pg_host, "--port", pg_port, "--user", "sluice",
                                           "--database", "sluice_demo", "--schema", "public", "--target", "main.cdc",
                                           "--warehouse", "warehouse"});
  EXPECT_EQ(feed_status.exit_code, 0) << feed_status.err;
  EXPECT_TRUE(Contains(feed_status.out, "STREAMING (running in process ")) << feed_status.out;
  for (const std::string& shown : {status.out, feed_status.out}) {
    EXPECT_TRUE(Contains(shown, "|  public.customer_spend|  lb_customer_spend_history|STREAMING|  10|")) << shown;
    EXPECT_TRUE(Contains(shown, "status|rows|committed LSN|")) << shown;
  }
  feed.Signal(SIGINT);
  EXPECT_EQ(feed.Wait(std::chrono::seconds(60)), 0) << feed.err();

  demo.Signal(SIGINT);
  EXPECT_EQ(demo.Wait(std::chrono::seconds(60)), 0) << demo.err();
  EXPECT_TRUE(Contains(demo.out(), "Stopped PostgreSQL and Kafka")) << demo.out();
}

// `sluice serve` runs the catalog's streams until SIGINT; `sluice status --warehouse` shows each.
TEST_F(CliTest, ServeRunsTheCatalogsStreamsAndStatusShowsThem) {
  std::filesystem::create_directories(dir_.Join("kafka"));
  ChildProcess kafka(dir_.Join("kafka"), {SluiceBinary(), "kafka-embedded", "--topic", "events:2"});
  ASSERT_TRUE(kafka.started());
  std::string bootstrap;
  for (int i = 0; i < 200 && bootstrap.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::string out = kafka.out();
    if (out.find('\n') != std::string::npos) bootstrap = out.substr(0, out.find('\n'));
  }
  ASSERT_FALSE(bootstrap.empty()) << kafka.err();
  std::ofstream(dir_.Join("events.yaml"))
      << "name: main.raw.events\nsource: {format: kafka, options: {bootstrap_servers: \"" << bootstrap
      << "\", subscribe: events}}\nschema_config:\n  value: {format: json, schema: "
         "'{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\"}}}'}\n"
         "ingestion_config: {table: main.raw.events}\n";
  Ran created = RunSluice(dir_.path(), {"stream", "create", "--warehouse", dir_.Join("w"), "events.yaml"});
  ASSERT_EQ(created.exit_code, 0) << created.err;

  Ran never = RunSluice(dir_.path(), {"status", "--warehouse", dir_.Join("w")});
  EXPECT_NE(never.exit_code, 0);
  EXPECT_TRUE(Contains(never.err, "no `sluice serve` has run")) << never.err;

  ChildProcess serve(dir_.path(), {SluiceBinary(), "serve", "--warehouse", dir_.Join("w")});
  ASSERT_TRUE(serve.started());
  std::string shown;
  for (int i = 0; i < 200; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    Ran status = RunSluice(dir_.path(), {"status", "--warehouse", dir_.Join("w")});
    shown = status.out;
    if (status.exit_code == 0 && Contains(shown, "RUNNING")) break;
  }
  EXPECT_TRUE(Contains(shown, "main.raw.events")) << shown;
  EXPECT_TRUE(Contains(shown, "RUNNING")) << shown;
  serve.Signal(SIGINT);
  EXPECT_EQ(serve.Wait(std::chrono::seconds(30)), 0) << serve.err();
  EXPECT_TRUE(Contains(serve.out(), "stopped")) << serve.out();
  Ran after = RunSluice(dir_.path(), {"status", "--warehouse", dir_.Join("w")});
  EXPECT_TRUE(Contains(after.out, "STOPPED")) << after.out;
  Ran as_json = RunSluice(dir_.path(), {"status", "--warehouse", dir_.Join("w"), "--json"});
  ASSERT_EQ(as_json.exit_code, 0) << as_json.err;
  simdjson::dom::parser parser;
  simdjson::dom::element served;
  ASSERT_EQ(parser.parse(simdjson::padded_string(as_json.out)).get(served), simdjson::SUCCESS) << as_json.out;
  simdjson::dom::array streams = served["served"].get_array().value();
  ASSERT_EQ(streams.size(), 1u) << as_json.out;
  EXPECT_EQ(streams.at(0)["name"].get_string().value(), "main.raw.events");
  EXPECT_EQ(streams.at(0)["state"].get_string().value(), "STOPPED");
  // The stream's events, through the catalog: all streams, or the one named.
  for (std::vector<std::string> selection : {std::vector<std::string>{}, {"--stream", "main.raw.events"}}) {
    std::vector<std::string> args = {"events", "--warehouse", dir_.Join("w"), "--type", "flow_progress"};
    args.insert(args.end(), selection.begin(), selection.end());
    Ran events = RunSluice(dir_.path(), args);
    EXPECT_EQ(events.exit_code, 0) << events.err;
    EXPECT_TRUE(Contains(events.out, "[main.raw.events] flow 'main.raw.events' is RUNNING")) << events.out;
    EXPECT_TRUE(Contains(events.out, "is STOPPED")) << events.out;
  }
  EXPECT_EQ(RunSluice(dir_.path(), {"events", "--warehouse", dir_.Join("w"), "--stream", "main.raw.nothing"}).exit_code, 1);
  EXPECT_EQ(RunSluice(dir_.path(), {"events", "--stream", "main.raw.events"}).exit_code, 2);
  kafka.Signal(SIGINT);
  EXPECT_EQ(kafka.Wait(std::chrono::seconds(30)), 0);
}

}  // namespace
}  // namespace sluice::cli

namespace sluice::cli {
namespace {

// A shell example of the docs marked `<!-- runnable -->` on the line before its ```sh fence:
// commands (continued with `\`), each followed by the lines of output it prints, as `# ` comments.
struct ShellExample {
  std::string file;
  int line = 0;
  std::vector<std::pair<std::string, std::vector<std::string>>> commands;  // command, expected output
};

std::vector<ShellExample> RunnableShellExamples() {
  std::vector<ShellExample> examples;
  std::vector<std::string> files = {sluice::testing::SourceDir() + "/README.md"};
  for (const auto& entry : std::filesystem::directory_iterator(sluice::testing::SourceDir() + "/docs")) {
    if (entry.path().extension() == ".md") files.push_back(entry.path());
  }
  for (const std::string& file : files) {
    std::ifstream in(file);
    std::string line, previous;
    int number = 0;
    while (std::getline(in, line)) {
      ++number;
      if (line == "```sh" && previous == "<!-- runnable -->") {
        ShellExample example{file, number, {}};
        std::string pending;
        while (std::getline(in, line) && line != "```") {
          ++number;
          if (line.rfind("# ", 0) == 0 && !example.commands.empty() && pending.empty()) {
            example.commands.back().second.push_back(line.substr(2));
            continue;
          }
          if (!line.empty() && line.back() == '\\') {
            pending += line.substr(0, line.size() - 1) + " ";
            continue;
          }
          example.commands.push_back({pending + line, {}});
          pending.clear();
        }
        examples.push_back(std::move(example));
      }
      previous = line;
    }
  }
  return examples;
}

// Output compared with runs of spaces as one and numbers as any number (timings, counts of rows
// read at a moment), so that an example shows real output without being held to its figures.
std::string Normalized(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c >= '0' && c <= '9') {
      while (i + 1 < text.size() && ((text[i + 1] >= '0' && text[i + 1] <= '9') || text[i + 1] == '.')) ++i;
      out += '#';
    } else if (c == ' ' || c == '\t') {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == '\n')) out.pop_back();
  return out;
}

// Every runnable shell example runs, in a fresh folder with its own warehouse, with `sluice` the
// built binary and the paths under build/ those of this build; each command succeeds and prints
// the output the example shows.
TEST(DocsShellExamplesTest, EveryRunnableExampleRunsAndPrintsWhatItShows) {
  std::vector<ShellExample> examples = RunnableShellExamples();
  ASSERT_GE(examples.size(), 2u) << "the docs mark runnable examples";
  for (const ShellExample& example : examples) {
    SCOPED_TRACE(example.file + ":" + std::to_string(example.line));
    testing::TempDir dir;
    for (const auto& [command, expected] : example.commands) {
      SCOPED_TRACE(command);
      std::ofstream(dir.Join("example.sh"))
          << "set -e\nsluice() { \"" << sluice::testing::BinaryDir() << "/sluice\" \"$@\"; }\nexport SLUICE_WAREHOUSE=" << dir.Join("w")
          << "\nexport ORDERS_DB_PASSWORD=example-password\ncd " << dir.path() << "\nmkdir -p build\nln -sfn "
          << sluice::testing::BinaryDir() << "/libsluice_sequence_plugin.so build/libsluice_sequence_plugin.so\n"
          << command << "\n";
      Ran ran = RunShell(dir.path(), dir.Join("example.sh"));
      ASSERT_EQ(ran.exit_code, 0) << ran.out << ran.err;
      std::string wanted;
      for (const std::string& line : expected) wanted += line + "\n";
      EXPECT_EQ(Normalized(ran.out), Normalized(wanted));
    }
  }
}

}  // namespace
}  // namespace sluice::cli
