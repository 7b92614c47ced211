// The FileSystem contract (core/file_system.h), the same tests on the local disk, on S3 (moto's
// server on loopback) and on Azure Blob Storage (Azurite): what Delta commits, checkpoints and
// catalogs rely on holds on all three.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <random>
#include <thread>

#include "sluice/core/error_classes.h"
#include "sluice/storage/file_systems.h"
#include "testing/store_root.h"

namespace sluice::storage {
namespace {

using testing::Store;
using testing::StoreRoot;

std::vector<std::string> Names(const std::vector<FileInfo>& entries, const std::string& root) {
  std::vector<std::string> names;
  for (const FileInfo& entry : entries) {
    names.push_back(entry.path.substr(root.size() + 1) + (entry.is_directory ? "/" : ""));
  }
  return names;
}

class FileSystemContractTest : public ::testing::TestWithParam<Store> {
 protected:
  StoreRoot root_{GetParam()};
  FileSystem& fs_ = *root_.file_system();
};

TEST_P(FileSystemContractTest, WritesReadsListsAndDeletes) {
  ASSERT_TRUE(fs_.AtomicWrite(root_.Join("a/b/one.txt"), "first").ok());
  ASSERT_TRUE(fs_.AtomicWrite(root_.Join("a/b/one.txt"), "one").ok());  // replaced
  ASSERT_TRUE(fs_.AtomicWrite(root_.Join("a/two.txt"), "two!").ok());
  ASSERT_TRUE(fs_.AtomicWrite(root_.Join("a/c/deep/three"), "").ok());  // empty files exist too
  EXPECT_EQ(fs_.ReadFile(root_.Join("a/b/one.txt")).value(), "one");
  EXPECT_EQ(fs_.ReadFile(root_.Join("a/c/deep/three")).value(), "");
  EXPECT_EQ(fs_.OpenForRead(root_.Join("a/c/deep/three")).value()->Size(), 0);
  std::string read;
  ASSERT_TRUE(fs_.OpenForRead(root_.Join("a/b/one.txt")).value()->ReadAt(1, 2, &read).ok());
  EXPECT_EQ(read, "ne");

  auto listed = fs_.List(root_.Join("a"));
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  EXPECT_EQ(Names(*listed, root_.Join("a")), (std::vector<std::string>{"b/", "c/", "two.txt"}));
  EXPECT_EQ(Names(fs_.List(root_.Join("a"), "t").value(), root_.Join("a")), (std::vector<std::string>{"two.txt"}));
  // A listing from a name on: what sorts after it, folders included, bytewise.
  EXPECT_EQ(Names(fs_.List(root_.Join("a"), "", "a").value(), root_.Join("a")), (std::vector<std::string>{"b/", "c/", "two.txt"}));
  EXPECT_EQ(Names(fs_.List(root_.Join("a"), "", "b").value(), root_.Join("a")), (std::vector<std::string>{"c/", "two.txt"}));
  EXPECT_EQ(Names(fs_.List(root_.Join("a"), "", "b/").value(), root_.Join("a")), (std::vector<std::string>{"c/", "two.txt"}));
  EXPECT_EQ(Names(fs_.List(root_.Join("a"), "", "c").value(), root_.Join("a")), (std::vector<std::string>{"two.txt"}));
  EXPECT_EQ(Names(fs_.List(root_.Join("a"), "", "two.txt").value(), root_.Join("a")), std::vector<std::string>{});
  EXPECT_EQ(Names(fs_.List(root_.Join("a"), "t", "a").value(), root_.Join("a")), (std::vector<std::string>{"two.txt"}));
  const FileInfo two = fs_.Stat(root_.Join("a/two.txt")).value();
  EXPECT_EQ(two.size, 4);
  EXPECT_FALSE(two.is_directory);
  EXPECT_GT(two.modification_time_ms, 1'600'000'000'000);
  EXPECT_TRUE(fs_.Stat(root_.Join("a/c")).value().is_directory);
  EXPECT_TRUE(fs_.Exists(root_.Join("a/c")).value());
  EXPECT_TRUE(fs_.Exists(root_.Join("a/two.txt")).value());

  // Absent things: FILE_NOT_FOUND to read, false to Exists, empty to List, OK to Delete.
  EXPECT_EQ(fs_.ReadFile(root_.Join("a/none")).status().error_class(), errors::kFileNotFound);
  EXPECT_EQ(fs_.Stat(root_.Join("a/none")).status().error_class(), errors::kFileNotFound);
  EXPECT_EQ(fs_.OpenForRead(root_.Join("a/none")).status().error_class(), errors::kFileNotFound);
  EXPECT_FALSE(fs_.Exists(root_.Join("a/none")).value());
  EXPECT_TRUE(fs_.List(root_.Join("nothing/here")).value().empty());
  EXPECT_TRUE(fs_.Delete(root_.Join("a/none")).ok());

  ASSERT_TRUE(fs_.Delete(root_.Join("a/two.txt")).ok());
  EXPECT_FALSE(fs_.Exists(root_.Join("a/two.txt")).value());
  ASSERT_TRUE(fs_.DeleteRecursively(root_.Join("a/c")).ok());
  EXPECT_EQ(Names(fs_.List(root_.Join("a")).value(), root_.Join("a")), (std::vector<std::string>{"b/"}));
  EXPECT_TRUE(fs_.DeleteRecursively(root_.Join("a/absent")).ok());
}

TEST_P(FileSystemContractTest, ExactlyOneOfRacingPutIfAbsentWins) {
  for (int round = 0; round < 3; ++round) {
    const std::string path = root_.Join("_delta_log/0000" + std::to_string(round) + ".json");
    std::atomic<int> winners{0}, already{0};
    std::vector<std::thread> writers;
    for (int w = 0; w < 6; ++w) {
      writers.emplace_back([&, w] {
        Status status = fs_.PutIfAbsent(path, "writer " + std::to_string(w));
        if (status.ok()) {
          ++winners;
        } else if (status.error_class() == errors::kFileAlreadyExists) {
          ++already;
        } else {
          ADD_FAILURE() << status.ToString();
        }
      });
    }
    for (std::thread& writer : writers) writer.join();
    EXPECT_EQ(winners.load(), 1);
    EXPECT_EQ(already.load(), 5);
    EXPECT_TRUE(fs_.ReadFile(path).value().starts_with("writer "));
  }
  EXPECT_EQ(fs_.PutIfAbsent(root_.Join("_delta_log/00000.json"), "late").error_class(), errors::kFileAlreadyExists);
}

TEST_P(FileSystemContractTest, LargeFilesWrittenInPartsReadByRanges) {
  // 13 MiB crosses S3's multipart threshold (5 MiB parts in this suite's store options): three
  // parts, the last one short.
  std::string data(13 * 1024 * 1024 + 17, '\0');
  std::mt19937_64 random(7);
  for (char& c : data) c = static_cast<char>(random());
  const std::string path = root_.Join("data/part-0.parquet");
  {
    auto file = fs_.OpenForWrite(path);
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    for (size_t at = 0; at < data.size(); at += 1'000'003) {
      ASSERT_TRUE((*file)->Append(std::string_view(data).substr(at, 1'000'003)).ok());
    }
    EXPECT_EQ((*file)->Tell(), static_cast<int64_t>(data.size()));
    EXPECT_FALSE(fs_.Exists(path).value());  // nothing visible before Close
    ASSERT_TRUE((*file)->Close().ok());
  }
  auto reader = fs_.OpenForRead(path);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  EXPECT_EQ((*reader)->Size(), static_cast<int64_t>(data.size()));
  std::string out;
  for (auto [offset, length] : std::vector<std::pair<int64_t, int64_t>>{
           {0, 4}, {static_cast<int64_t>(data.size()) - 8, 8}, {5 * 1024 * 1024 - 3, 10}, {12345, 0}}) {
    ASSERT_TRUE((*reader)->ReadAt(offset, length, &out).ok());
    EXPECT_EQ(out, data.substr(offset, length));
  }
  EXPECT_EQ((*reader)->ReadAt(static_cast<int64_t>(data.size()) - 2, 4, &out).error_class(), errors::kIoError);
  EXPECT_EQ(fs_.ReadFile(path).value(), data);

  // A file abandoned before Close leaves nothing behind.
  {
    auto abandoned = fs_.OpenForWrite(root_.Join("data/abandoned"));
    ASSERT_TRUE((*abandoned)->Append(data).ok());
  }
  EXPECT_FALSE(fs_.Exists(root_.Join("data/abandoned")).value());
}

TEST_P(FileSystemContractTest, HostileNamesRoundTrip) {
  const std::vector<std::string> names = {"with space", "plus+sign", "per%25cent", "équipe=1&x", "a?b#c",
                                          "quote'\"", "tilde~_-.dot", "日本"};
  for (const std::string& name : names) {
    ASSERT_TRUE(fs_.AtomicWrite(root_.Join("names/" + name), name).ok()) << name;
  }
  for (const std::string& name : names) EXPECT_EQ(fs_.ReadFile(root_.Join("names/" + name)).value(), name);
  std::vector<std::string> sorted = names;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(Names(fs_.List(root_.Join("names")).value(), root_.Join("names")), sorted);
  EXPECT_EQ(Names(fs_.List(root_.Join("names"), "p").value(), root_.Join("names")),
            (std::vector<std::string>{"per%25cent", "plus+sign"}));
}

TEST_P(FileSystemContractTest, RenameWithoutReplacing) {
  ASSERT_TRUE(fs_.AtomicWrite(root_.Join("r/from"), "x").ok());
  ASSERT_TRUE(fs_.AtomicWrite(root_.Join("r/taken"), "y").ok());
  EXPECT_EQ(fs_.Rename(root_.Join("r/from"), root_.Join("r/taken"), true).error_class(), errors::kFileAlreadyExists);
  ASSERT_TRUE(fs_.Rename(root_.Join("r/from"), root_.Join("r/to"), true).ok());
  EXPECT_EQ(fs_.ReadFile(root_.Join("r/to")).value(), "x");
  EXPECT_FALSE(fs_.Exists(root_.Join("r/from")).value());
}

INSTANTIATE_TEST_SUITE_P(Stores, FileSystemContractTest, ::testing::ValuesIn(testing::kAllStores), testing::StoreName);

}  // namespace
}  // namespace sluice::storage
