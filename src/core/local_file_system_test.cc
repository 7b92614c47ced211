#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "sluice/core/error_classes.h"
#include "testing/temp_dir.h"
#include "sluice/core/file_system.h"

namespace sluice {
namespace {

class LocalFileSystemTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& relative) const { return dir_.Join(relative); }

  // Every name in a directory, as the OS sees it (staging files included).
  static std::vector<std::string> RawNames(const std::string& directory) {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(directory)) {
      names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  FileSystem& fs_ = *LocalFileSystem();
  testing::TempDir dir_{"sluice-lfs"};
  const std::string& root_ = dir_.path();
};

TEST_F(LocalFileSystemTest, AtomicWriteCreatesParentsAndReadReturnsTheSameBytes) {
  std::string data("binary\0bytes\n", 13);
  ASSERT_TRUE(fs_.AtomicWrite(Path("a/b/c.bin"), data).ok());
  Result<std::string> read = fs_.ReadFile(Path("a/b/c.bin"));
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, data);
}

TEST_F(LocalFileSystemTest, AtomicWriteReplacesExistingContent) {
  ASSERT_TRUE(fs_.AtomicWrite(Path("f"), "old content").ok());
  ASSERT_TRUE(fs_.AtomicWrite(Path("f"), "new").ok());
  EXPECT_EQ(*fs_.ReadFile(Path("f")), "new");
  EXPECT_EQ(RawNames(root_), std::vector<std::string>{"f"});
}

TEST_F(LocalFileSystemTest, ReadingAMissingFileIsFileNotFoundNamingThePath) {
  Result<std::string> read = fs_.ReadFile(Path("missing.json"));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().error_class(), errors::kFileNotFound);
  EXPECT_NE(read.status().message().find(Path("missing.json")), std::string_view::npos);
  EXPECT_NE(read.status().message().find("No such file or directory"), std::string_view::npos);
}

TEST_F(LocalFileSystemTest, RelativePathsAreRejected) {
  EXPECT_EQ(fs_.ReadFile("relative/path").status().error_class(), errors::kInvalidArgument);
  EXPECT_EQ(fs_.AtomicWrite("", "x").error_class(), errors::kInvalidArgument);
}

TEST_F(LocalFileSystemTest, WritableFileIsInvisibleUntilClosed) {
  Result<std::unique_ptr<WritableFile>> file = fs_.OpenForWrite(Path("dir/part-0.parquet"));
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ASSERT_TRUE((*file)->Append("PAR1").ok());
  std::string big(200000, 'x');  // larger than the write buffer
  ASSERT_TRUE((*file)->Append(big).ok());
  ASSERT_TRUE((*file)->Append("PAR1").ok());
  EXPECT_EQ((*file)->Tell(), 200008);
  EXPECT_FALSE(*fs_.Exists(Path("dir/part-0.parquet")));
  EXPECT_TRUE(fs_.List(Path("dir"))->empty());

  ASSERT_TRUE((*file)->Close().ok());
  EXPECT_EQ(*fs_.ReadFile(Path("dir/part-0.parquet")), "PAR1" + big + "PAR1");
  EXPECT_EQ(RawNames(Path("dir")), std::vector<std::string>{"part-0.parquet"});
  EXPECT_EQ((*file)->Append("more").error_class(), errors::kInternalError);
}

TEST_F(LocalFileSystemTest, AbandonedWritableFileLeavesNothingBehind) {
  {
    Result<std::unique_ptr<WritableFile>> file = fs_.OpenForWrite(Path("abandoned"));
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE((*file)->Append("partial").ok());
  }
  EXPECT_TRUE(RawNames(root_).empty());
}

TEST_F(LocalFileSystemTest, RandomAccessReadsExactRangesAndRejectsShortReads) {
  ASSERT_TRUE(fs_.AtomicWrite(Path("r"), "0123456789").ok());
  Result<std::unique_ptr<RandomAccessFile>> file = fs_.OpenForRead(Path("r"));
  ASSERT_TRUE(file.ok());
  EXPECT_EQ((*file)->Size(), 10);
  std::string out;
  ASSERT_TRUE((*file)->ReadAt(6, 4, &out).ok());
  EXPECT_EQ(out, "6789");
  ASSERT_TRUE((*file)->ReadAt(10, 0, &out).ok());
  EXPECT_EQ(out, "");
  EXPECT_EQ((*file)->ReadAt(8, 3, &out).error_class(), errors::kIoError);
  EXPECT_EQ((*file)->ReadAt(-1, 1, &out).error_class(), errors::kIoError);
  EXPECT_EQ(fs_.OpenForRead(Path("nope")).status().error_class(), errors::kFileNotFound);
}

TEST_F(LocalFileSystemTest, ListReturnsEntriesWithPrefixSortedByName) {
  for (const char* name : {"00003.json", "00001.json", "00010.checkpoint.parquet", "_last_checkpoint"}) {
    ASSERT_TRUE(fs_.AtomicWrite(Path("_delta_log/") + name, "{}").ok());
  }
  ASSERT_TRUE(fs_.CreateDirectories(Path("_delta_log/0000sub")).ok());

  Result<std::vector<FileInfo>> listed = fs_.List(Path("_delta_log"), "000");
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  std::vector<std::string> paths;
  for (const FileInfo& info : *listed) paths.push_back(info.path);
  EXPECT_EQ(paths, (std::vector<std::string>{Path("_delta_log/00001.json"), Path("_delta_log/00003.json"),
                                             Path("_delta_log/0000sub"), Path("_delta_log/00010.checkpoint.parquet")}));
  EXPECT_EQ((*listed)[0].size, 2);
  EXPECT_FALSE((*listed)[0].is_directory);
  EXPECT_TRUE((*listed)[2].is_directory);
  EXPECT_GT((*listed)[0].modification_time_ms, 1600000000000);

  EXPECT_EQ(fs_.List(Path("_delta_log"))->size(), 5u);
  EXPECT_EQ(fs_.List(Path("_delta_log/"), "_last")->size(), 1u);
}

TEST_F(LocalFileSystemTest, ListOfAnAbsentDirectoryIsEmpty) {
  Result<std::vector<FileInfo>> listed = fs_.List(Path("no/such/dir"));
  ASSERT_TRUE(listed.ok());
  EXPECT_TRUE(listed->empty());
}

TEST_F(LocalFileSystemTest, ListHidesFilesStillBeingWritten) {
  Result<std::unique_ptr<WritableFile>> file = fs_.OpenForWrite(Path("log/00000.json"));
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(RawNames(Path("log")).size(), 1u);  // the staging file exists on disk
  EXPECT_TRUE(fs_.List(Path("log"))->empty());
}

TEST_F(LocalFileSystemTest, StatAndExists) {
  ASSERT_TRUE(fs_.AtomicWrite(Path("d/f"), "12345").ok());
  Result<FileInfo> info = fs_.Stat(Path("d/f"));
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->path, Path("d/f"));
  EXPECT_EQ(info->size, 5);
  EXPECT_FALSE(info->is_directory);
  EXPECT_TRUE(fs_.Stat(Path("d"))->is_directory);
  EXPECT_EQ(fs_.Stat(Path("d/g")).status().error_class(), errors::kFileNotFound);
  EXPECT_EQ(fs_.Stat(Path("d/f/under-a-file")).status().error_class(), errors::kFileNotFound);
  EXPECT_TRUE(*fs_.Exists(Path("d/f")));
  EXPECT_TRUE(*fs_.Exists(Path("d")));
  EXPECT_FALSE(*fs_.Exists(Path("d/g")));
  EXPECT_FALSE(*fs_.Exists(Path("d/f/under-a-file")));
}

TEST_F(LocalFileSystemTest, DeleteRemovesAFileAndAcceptsAnAbsentOne) {
  ASSERT_TRUE(fs_.AtomicWrite(Path("f"), "x").ok());
  ASSERT_TRUE(fs_.Delete(Path("f")).ok());
  EXPECT_FALSE(*fs_.Exists(Path("f")));
  EXPECT_TRUE(fs_.Delete(Path("f")).ok());
}

TEST_F(LocalFileSystemTest, DeleteRecursivelyRemovesATree) {
  ASSERT_TRUE(fs_.AtomicWrite(Path("t/a/1"), "x").ok());
  ASSERT_TRUE(fs_.AtomicWrite(Path("t/a/b/2"), "x").ok());
  ASSERT_TRUE(fs_.CreateDirectories(Path("t/empty")).ok());
  ASSERT_TRUE(fs_.DeleteRecursively(Path("t")).ok());
  EXPECT_FALSE(*fs_.Exists(Path("t")));
  EXPECT_TRUE(fs_.DeleteRecursively(Path("t")).ok());
}

TEST_F(LocalFileSystemTest, CreateDirectoriesIsIdempotentAndRefusesAFileInTheWay) {
  ASSERT_TRUE(fs_.CreateDirectories(Path("x/y/z")).ok());
  ASSERT_TRUE(fs_.CreateDirectories(Path("x/y/z")).ok());
  EXPECT_TRUE(fs_.Stat(Path("x/y/z"))->is_directory);
  ASSERT_TRUE(fs_.AtomicWrite(Path("file"), "x").ok());
  Status status = fs_.CreateDirectories(Path("file/sub"));
  EXPECT_EQ(status.error_class(), errors::kIoError);
}

TEST_F(LocalFileSystemTest, RenameWithNoReplaceRefusesAnExistingTarget) {
  ASSERT_TRUE(fs_.AtomicWrite(Path("from"), "new").ok());
  ASSERT_TRUE(fs_.AtomicWrite(Path("to"), "old").ok());
  Status status = fs_.Rename(Path("from"), Path("to"), /*no_replace=*/true);
  EXPECT_EQ(status.error_class(), errors::kFileAlreadyExists);
  EXPECT_NE(status.message().find(Path("to")), std::string_view::npos);
  EXPECT_EQ(*fs_.ReadFile(Path("from")), "new");
  EXPECT_EQ(*fs_.ReadFile(Path("to")), "old");

  ASSERT_TRUE(fs_.Rename(Path("from"), Path("to"), /*no_replace=*/false).ok());
  EXPECT_EQ(*fs_.ReadFile(Path("to")), "new");
  EXPECT_FALSE(*fs_.Exists(Path("from")));

  ASSERT_TRUE(fs_.Rename(Path("to"), Path("fresh"), /*no_replace=*/true).ok());
  EXPECT_EQ(*fs_.ReadFile(Path("fresh")), "new");
  EXPECT_EQ(fs_.Rename(Path("to"), Path("other"), true).error_class(), errors::kFileNotFound);
}

TEST_F(LocalFileSystemTest, PutIfAbsentCreatesOnceAndNeverOverwrites) {
  ASSERT_TRUE(fs_.PutIfAbsent(Path("_delta_log/00000.json"), "first").ok());
  Status second = fs_.PutIfAbsent(Path("_delta_log/00000.json"), "second");
  EXPECT_EQ(second.error_class(), errors::kFileAlreadyExists);
  EXPECT_NE(second.message().find(Path("_delta_log/00000.json")), std::string_view::npos);
  EXPECT_EQ(*fs_.ReadFile(Path("_delta_log/00000.json")), "first");
  EXPECT_EQ(RawNames(Path("_delta_log")), std::vector<std::string>{"00000.json"});
}

TEST_F(LocalFileSystemTest, AtomicWriteNeverShowsPartialContent) {
  const std::string path = Path("checkpoint/metadata");
  const std::string a(1 << 20, 'a');
  const std::string b(1 << 19, 'b');
  ASSERT_TRUE(fs_.AtomicWrite(path, a).ok());
  std::atomic<bool> done{false};
  std::atomic<int> bad_reads{0};
  std::atomic<int> reads{0};
  std::thread reader([&] {
    while (!done.load()) {
      Result<std::string> content = fs_.ReadFile(path);
      if (!content.ok() || (*content != a && *content != b)) ++bad_reads;
      ++reads;
    }
  });
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(fs_.AtomicWrite(path, i % 2 == 0 ? b : a).ok());
  done = true;
  reader.join();
  EXPECT_EQ(bad_reads.load(), 0);
  EXPECT_GT(reads.load(), 0);
}

TEST_F(LocalFileSystemTest, RacingThreadsPutIfAbsentExactlyOneWins) {
  constexpr int kRounds = 100;
  constexpr int kWriters = 8;
  for (int round = 0; round < kRounds; ++round) {
    const std::string path = Path("log/" + std::to_string(round));
    std::atomic<bool> go{false};
    std::vector<Status> results(kWriters);
    std::vector<std::thread> writers;
    for (int w = 0; w < kWriters; ++w) {
      writers.emplace_back([&, w] {
        while (!go.load()) std::this_thread::yield();
        results[w] = fs_.PutIfAbsent(path, "writer " + std::to_string(w));
      });
    }
    go = true;
    for (std::thread& t : writers) t.join();
    int winner = -1;
    for (int w = 0; w < kWriters; ++w) {
      if (results[w].ok()) {
        ASSERT_EQ(winner, -1) << "two winners in round " << round;
        winner = w;
      } else {
        ASSERT_EQ(results[w].error_class(), errors::kFileAlreadyExists) << results[w].ToString();
      }
    }
    ASSERT_NE(winner, -1) << "no winner in round " << round;
    EXPECT_EQ(*fs_.ReadFile(path), "writer " + std::to_string(winner));
  }
  EXPECT_EQ(RawNames(Path("log")).size(), static_cast<size_t>(kRounds));
}

// Child processes report through their exit code.
constexpr int kExitWon = 0;
constexpr int kExitLost = 1;
constexpr int kExitFailed = 2;

TEST_F(LocalFileSystemTest, RacingProcessesPutIfAbsentExactlyOneWins) {
  constexpr int kRounds = 40;
  constexpr int kWriters = 4;
  for (int round = 0; round < kRounds; ++round) {
    const std::string path = Path("commits/" + std::to_string(round));
    int start_pipe[2];
    ASSERT_EQ(::pipe(start_pipe), 0);
    std::vector<pid_t> children;
    for (int w = 0; w < kWriters; ++w) {
      pid_t pid = ::fork();
      ASSERT_GE(pid, 0);
      if (pid == 0) {
        ::close(start_pipe[1]);
        char byte;
        // Every child blocks here until the parent closes the pipe, so they start together.
        while (::read(start_pipe[0], &byte, 1) > 0) {
        }
        Status status = LocalFileSystem()->PutIfAbsent(path, "process " + std::to_string(w));
        ::_exit(status.ok() ? kExitWon : status.error_class() == errors::kFileAlreadyExists ? kExitLost : kExitFailed);
      }
      children.push_back(pid);
    }
    ::close(start_pipe[0]);
    ::close(start_pipe[1]);
    int winner = -1;
    for (int w = 0; w < kWriters; ++w) {
      int wait_status = 0;
      ASSERT_EQ(::waitpid(children[w], &wait_status, 0), children[w]);
      ASSERT_TRUE(WIFEXITED(wait_status));
      int code = WEXITSTATUS(wait_status);
      ASSERT_NE(code, kExitFailed) << "round " << round;
      if (code == kExitWon) {
        ASSERT_EQ(winner, -1) << "two winners in round " << round;
        winner = w;
      }
    }
    ASSERT_NE(winner, -1) << "no winner in round " << round;
    EXPECT_EQ(*fs_.ReadFile(path), "process " + std::to_string(winner));
  }
  EXPECT_EQ(RawNames(Path("commits")).size(), static_cast<size_t>(kRounds));
}

}  // namespace
}  // namespace sluice
