// The crash tests: a query into a Delta table is killed with SIGKILL at random moments, 30 times,
// restarted each time, and must end with every source row in the table exactly once. Two queries:
// rate → Delta, and Delta → Delta while another writer keeps appending to the source table.
//
// The test runs its own binary as the child: when SLUICE_CRASH_CHILD_DIR is set, the binary runs
// the query named by SLUICE_CRASH_QUERY from a static initializer, before any test, until it is
// killed. The random seed is printed; SLUICE_CRASH_SEED replays a run.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdlib>
#include <random>
#include <thread>

#include "sluice/core/builder.h"
#include "sluice/delta/scan.h"
#include "sluice/delta/writer.h"
#include "sluice/engine/registry.h"
#include "sluice/engine/streaming_query.h"
#include "connectors/delta/delta_formats_testing.h"
#include "testing/child_process.h"
#include "testing/crash_seed.h"
#include "testing/temp_dir.h"

namespace sluice::connectors {

using engine::Checkpoint;
using engine::QueryConfig;
using engine::Sink;
using engine::Source;
using engine::StreamingQuery;
using engine::Trigger;

namespace {

constexpr int kKills = 30;

// The query under test: `rate` or `delta` (reading <directory>/source) into <directory>/table.
Result<std::unique_ptr<StreamingQuery>> StartQuery(const std::string& directory, const std::string& kind,
                                                   Trigger trigger) {
  std::map<std::string, std::string> options;
  if (kind == "rate") {
    options = {{"rowsPerSecond", "5000"}, {"maxRowsPerBatch", "400"}};
  } else {
    options = {{"path", directory + "/source"}, {"maxFilesPerTrigger", "3"}};
  }
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Source> source, delta_testing::DeltaFormatsRegistry().MakeSource(kind, options));
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Sink> sink,
                          delta_testing::DeltaFormatsRegistry().MakeSink("delta", {{"path", directory + "/table"}}));
  QueryConfig config;
  config.name = "crash";
  config.checkpoint_location = directory + "/checkpoint";
  config.trigger = trigger;
  return StreamingQuery::Start(std::move(source), std::move(sink), std::move(config));
}

[[maybe_unused]] const bool kIsCrashChild = [] {
  const char* directory = std::getenv("SLUICE_CRASH_CHILD_DIR");
  const char* kind = std::getenv("SLUICE_CRASH_QUERY");
  if (directory == nullptr || kind == nullptr) return false;
  auto query = StartQuery(directory, kind, Trigger::ProcessingTime(std::chrono::microseconds(0)));
  Status status = query.ok() ? (*query)->Run() : query.status();
  std::fprintf(stderr, "the crash child ended before it was killed: %s\n", status.ToString().c_str());
  std::_Exit(3);
}();

pid_t SpawnChild(const std::string& directory, const std::string& kind) {
  return testing::SpawnSelf({"SLUICE_CRASH_CHILD_DIR=" + directory, "SLUICE_CRASH_QUERY=" + kind},
                            directory + "/child.log");
}

// The highest batch id in a log directory, or -1.
int64_t LatestBatchId(FileSystem* fs, const std::string& directory) {
  int64_t latest = -1;
  std::vector<FileInfo> files = *fs->List(directory);
  for (const FileInfo& file : files) {
    std::string name = file.path.substr(file.path.rfind('/') + 1);
    int64_t id = -1;
    auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), id);
    if (ec == std::errc() && end == name.data() + name.size()) latest = std::max(latest, id);
  }
  return latest;
}

// Every `value` of a Delta table, sorted; empty when there is no table.
std::vector<int64_t> TableValues(const std::string& path) {
  std::vector<int64_t> values;
  auto snapshot = delta::Snapshot::Load(LocalFileSystem(), path);
  if (!snapshot.ok()) return values;
  auto scan = delta::TableScan::Open(*snapshot, delta::ScanOptions{{"value"}}).value();
  for (BatchPtr batch = scan->Next().value(); batch; batch = scan->Next().value()) {
    for (int64_t row = 0; row < batch->num_rows(); ++row) values.push_back(batch->column(0)->Value<int64_t>(row));
  }
  std::sort(values.begin(), values.end());
  return values;
}

class CrashTest : public ::testing::Test {
 protected:
  void SetUp() override {
    random_.seed(sluice::testing::CrashSeed());
  }

  // Kills the query kKills times, then lets one clean run settle what the last kill left.
  void KillRepeatedly(const std::string& kind) {
    int in_flight = 0, in_flight_after_sink_commit = 0;
    for (int kill = 0; kill < kKills; ++kill) {
      pid_t child = SpawnChild(dir_.path(), kind);
      ASSERT_GT(child, 0);
      std::this_thread::sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<int>(20, 500)(random_)));
      ASSERT_EQ(::kill(child, SIGKILL), 0);
      int status = 0;
      ASSERT_EQ(::waitpid(child, &status, 0), child);
      ASSERT_TRUE(WIFSIGNALED(status)) << "the child exited by itself; its log:\n"
                                       << fs_->ReadFile(dir_.Join("child.log")).value_or("");
      int64_t planned = LatestBatchId(fs_.get(), dir_.Join("checkpoint/offsets"));
      if (planned > LatestBatchId(fs_.get(), dir_.Join("checkpoint/commits"))) {
        ++in_flight;
        if (TableHoldsBatch(planned)) ++in_flight_after_sink_commit;
      }
    }
    std::cout << in_flight << " of " << kKills << " kills left a batch planned but not committed, "
              << in_flight_after_sink_commit << " of them after the Delta commit of that batch\n";
  }

  bool TableHoldsBatch(int64_t batch_id) {
    auto metadata = fs_->ReadFile(dir_.Join("checkpoint/metadata"));
    auto snapshot = delta::Snapshot::Load(fs_, dir_.Join("table"));
    if (!metadata.ok() || !snapshot.ok()) return false;
    std::string query_id = metadata->substr(7, 36);  // {"id":"<36 characters>"}
    return (*snapshot)->TransactionVersion(query_id).value_or(-1) >= batch_id;
  }

  // A clean run to the end of what is available; returns the source rows it stopped at.
  std::string Settle(const std::string& kind) {
    auto query = StartQuery(dir_.path(), kind, Trigger::AvailableNow());
    EXPECT_TRUE(query.ok()) << query.status().ToString();
    if (!query.ok()) return "";
    Status status = (*query)->Run();
    EXPECT_TRUE(status.ok()) << status.ToString();
    int64_t last = (*query)->next_batch_id() - 1;
    query->reset();
    auto checkpoint = Checkpoint::Open(fs_, dir_.Join("checkpoint")).value();
    return checkpoint->ReadOffsets(last)->source_offsets[0];
  }

  testing::TempDir dir_{"sluice-crash"};
  std::shared_ptr<FileSystem> fs_ = LocalFileSystem();
  std::mt19937_64 random_;
};

TEST_F(CrashTest, RateIntoDeltaHoldsEveryRowExactlyOnceAfterThirtyKills) {
  KillRepeatedly("rate");
  std::string end = Settle("rate");  // {"rows":N}
  int64_t source_rows = std::stoll(end.substr(end.find(':') + 1));
  ASSERT_GT(source_rows, 0);
  std::vector<int64_t> landed = TableValues(dir_.Join("table"));
  ASSERT_EQ(static_cast<int64_t>(landed.size()), source_rows) << "rows lost or duplicated";
  for (int64_t i = 0; i < source_rows; ++i) ASSERT_EQ(landed[i], i) << "row " << i << " lost or duplicated";
}

TEST_F(CrashTest, DeltaIntoDeltaHoldsEveryRowExactlyOnceAfterThirtyKills) {
  // Another writer appends 20 rows at a time to the source table all along.
  auto schema = DataType::Struct({Field{"value", DataType::Long()}}).value();
  std::atomic<int64_t> appended{0};
  auto append = [&] {
    Int64Builder values(DataType::Long());
    for (int i = 0; i < 20; ++i) values.Append(appended + i);
    auto batch = RecordBatch::Make(schema, {values.Finish()}, 20).value();
    ASSERT_TRUE(delta::WriteTable(fs_, dir_.Join("source"), {batch}).ok());
    appended += 20;
  };
  append();
  std::atomic<bool> writing{true};
  std::thread writer([&] {
    while (writing) {
      append();
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
    }
  });
  KillRepeatedly("delta");
  writing = false;
  writer.join();
  Settle("delta");
  std::vector<int64_t> landed = TableValues(dir_.Join("table"));
  ASSERT_EQ(static_cast<int64_t>(landed.size()), appended.load()) << "rows lost or duplicated";
  for (int64_t i = 0; i < appended; ++i) ASSERT_EQ(landed[i], i) << "row " << i << " lost or duplicated";
}

}  // namespace
}  // namespace sluice::connectors
