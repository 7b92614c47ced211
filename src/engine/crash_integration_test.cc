// The crash test: a query from the rate source into an idempotent sink is killed with SIGKILL at
// random moments, 30 times, restarted each time, and must end with every source row in the sink
// exactly once.
//
// The test runs its own binary as the child: CrashChild.RunsUntilKilled does nothing unless
// SLUICE_CRASH_CHILD_DIR is set, in which case it runs the query until it is killed. The random
// seed is printed, and SLUICE_CRASH_SEED replays a run.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <random>
#include <thread>

#include "sluice/core/error_classes.h"
#include "sluice/engine/rate_source.h"
#include "sluice/engine/streaming_query.h"
#include "testing/temp_dir.h"

extern char** environ;

namespace sluice::engine {
namespace {

constexpr int kKills = 30;

// Lands batch N in `<directory>/batch-N`, one value per line, with put-if-absent: a batch that is
// already there is left alone. The simplest sink that is idempotent per batch id.
class BatchFileSink final : public Sink {
 public:
  explicit BatchFileSink(std::string directory) : directory_(std::move(directory)) {}
  std::string description() const override { return "BatchFileSink"; }
  std::vector<OutputMode> supported_output_modes() const override { return {OutputMode::kAppend}; }
  Status Open(const SinkContext& context) override {
    file_system_ = context.file_system;
    return Status::OK();
  }
  Status AddBatch(int64_t batch_id, const RecordBatch& batch) override {
    std::string text;
    for (int64_t row = 0; row < batch.num_rows(); ++row) {
      text += std::to_string(batch.column(1)->Value<int64_t>(row));
      text += '\n';
    }
    Status status = file_system_->PutIfAbsent(directory_ + "/batch-" + std::to_string(batch_id), text);
    return status.error_class() == errors::kFileAlreadyExists ? Status::OK() : status;
  }

 private:
  std::string directory_;
  std::shared_ptr<FileSystem> file_system_;
};

Result<std::unique_ptr<StreamingQuery>> StartQuery(const std::string& directory, Trigger trigger) {
  std::map<std::string, std::string> options = {{"rowsPerSecond", "5000"}, {"maxRowsPerBatch", "400"}};
  SLUICE_ASSIGN_OR_RETURN(ValidatedOptions validated, ValidateOptions("rate source", kRateSourceOptions, options));
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Source> source, MakeRateSource(validated));
  QueryConfig config;
  config.name = "crash";
  config.checkpoint_location = directory + "/checkpoint";
  config.trigger = trigger;
  return StreamingQuery::Start(std::move(source), std::make_unique<BatchFileSink>(directory + "/sink"), config);
}

TEST(CrashChild, RunsUntilKilled) {
  const char* directory = std::getenv("SLUICE_CRASH_CHILD_DIR");
  if (directory == nullptr) GTEST_SKIP() << "run by CrashTest as its child";
  auto query = StartQuery(directory, Trigger::ProcessingTime(std::chrono::microseconds(0)));
  ASSERT_TRUE(query.ok()) << query.status().ToString();
  Status status = (*query)->Run();
  FAIL() << "the query ended before it was killed: " << status.ToString();
}

pid_t SpawnChild(const std::string& directory) {
  char self[4096];
  ssize_t length = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (length <= 0) return -1;
  self[length] = '\0';
  std::string filter = "--gtest_filter=CrashChild.RunsUntilKilled";
  std::string env_dir = "SLUICE_CRASH_CHILD_DIR=" + directory;
  std::vector<char*> argv = {self, filter.data(), nullptr};
  std::vector<char*> envp;
  for (char** e = environ; *e != nullptr; ++e) envp.push_back(*e);
  envp.push_back(env_dir.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  std::string log = directory + "/child.log";
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = -1;
  int error = posix_spawn(&pid, self, &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  return error == 0 ? pid : -1;
}

std::vector<int64_t> ReadValues(const std::string& text) {
  std::vector<int64_t> values;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    int64_t value = 0;
    std::from_chars(text.data() + begin, text.data() + end, value);
    values.push_back(value);
    begin = end + 1;
  }
  return values;
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

TEST(CrashTest, EveryRowExactlyOnceAfterThirtyKills) {
  testing::TempDir dir("sluice-crash");
  std::shared_ptr<FileSystem> fs = LocalFileSystem();
  ASSERT_TRUE(fs->CreateDirectories(dir.Join("sink")).ok());
  uint64_t seed = std::random_device{}();
  if (const char* given = std::getenv("SLUICE_CRASH_SEED")) seed = std::strtoull(given, nullptr, 10);
  std::cout << "crash test seed " << seed << " (SLUICE_CRASH_SEED replays it)\n";
  std::mt19937_64 random(seed);

  int killed_with_batch_in_flight = 0, killed_after_sink_wrote = 0;
  for (int kill = 0; kill < kKills; ++kill) {
    pid_t child = SpawnChild(dir.path());
    ASSERT_GT(child, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<int>(20, 400)(random)));
    ASSERT_EQ(::kill(child, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the child exited by itself; see " << dir.Join("child.log") << ":\n"
                                     << fs->ReadFile(dir.Join("child.log")).value_or("");
    int64_t planned = LatestBatchId(fs.get(), dir.Join("checkpoint/offsets"));
    if (planned > LatestBatchId(fs.get(), dir.Join("checkpoint/commits"))) {
      ++killed_with_batch_in_flight;
      if (*fs->Exists(dir.Join("sink/batch-" + std::to_string(planned)))) ++killed_after_sink_wrote;
    }
  }
  std::cout << killed_with_batch_in_flight << " of " << kKills << " kills left a batch planned but not committed, "
            << killed_after_sink_wrote << " of them after the sink had written it\n";

  // A last, clean run settles whatever the last kill left in flight.
  auto query = StartQuery(dir.path(), Trigger::Once());
  ASSERT_TRUE(query.ok()) << query.status().ToString();
  ASSERT_TRUE((*query)->Run().ok());
  int64_t last_batch = (*query)->next_batch_id() - 1;
  query->reset();

  auto checkpoint = Checkpoint::Open(fs, dir.Join("checkpoint"));
  ASSERT_TRUE(checkpoint.ok());
  ASSERT_EQ(*(*checkpoint)->LatestCommitBatch(), last_batch);
  std::string end_offset = (*checkpoint)->ReadOffsets(last_batch)->source_offsets[0];
  int64_t source_rows = std::stoll(end_offset.substr(end_offset.find(':') + 1));
  ASSERT_GT(source_rows, 0);

  std::vector<int64_t> landed;
  std::vector<FileInfo> batches = *fs->List(dir.Join("sink"), "batch-");
  EXPECT_EQ(static_cast<int64_t>(batches.size()), last_batch + 1) << "one file per batch id, no more";
  for (const FileInfo& batch : batches) {
    std::vector<int64_t> values = ReadValues(*fs->ReadFile(batch.path));
    landed.insert(landed.end(), values.begin(), values.end());
  }
  std::sort(landed.begin(), landed.end());
  ASSERT_EQ(static_cast<int64_t>(landed.size()), source_rows) << "rows lost or duplicated";
  for (int64_t i = 0; i < source_rows; ++i) ASSERT_EQ(landed[i], i) << "row " << i << " lost or duplicated";
}

}  // namespace
}  // namespace sluice::engine
