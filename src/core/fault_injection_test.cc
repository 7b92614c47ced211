#include "sluice/core/fault_injection.h"

#include <filesystem>

#include <gtest/gtest.h>

#include "sluice/core/error_classes.h"
#include "testing/temp_dir.h"

namespace sluice {
namespace {

class FaultInjectionTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& relative) const { return dir_.Join(relative); }

  std::shared_ptr<FaultInjectionFileSystem> fs_ = std::make_shared<FaultInjectionFileSystem>(LocalFileSystem());
  testing::TempDir dir_{"sluice-fault"};
  const std::string& root_ = dir_.path();
};

TEST_F(FaultInjectionTest, WithoutFaultsCallsPassThroughAndAreCounted) {
  ASSERT_TRUE(fs_->AtomicWrite(Path("a"), "1").ok());
  ASSERT_TRUE(fs_->PutIfAbsent(Path("b"), "2").ok());
  EXPECT_EQ(*fs_->ReadFile(Path("a")), "1");
  EXPECT_EQ(*fs_->ReadFile(Path("b")), "2");
  EXPECT_EQ(fs_->List(root_)->size(), 2u);
  EXPECT_EQ(fs_->CallCount(FileOp::kReadFile), 2);
  EXPECT_EQ(fs_->CallCount(FileOp::kPutIfAbsent), 1);
  EXPECT_EQ(fs_->TotalCalls(), 5);
  EXPECT_EQ(fs_->InjectedFailures(), 0);
  fs_->ResetCounts();
  EXPECT_EQ(fs_->TotalCalls(), 0);
}

TEST_F(FaultInjectionTest, TheNthCallOfAnOperationFailsAndOnlyThatOne) {
  ASSERT_TRUE(fs_->AtomicWrite(Path("a"), "1").ok());
  fs_->InjectFault({.op = FileOp::kReadFile, .nth = 3});
  EXPECT_TRUE(fs_->ReadFile(Path("a")).ok());
  EXPECT_TRUE(fs_->Exists(Path("a")).ok());  // another operation: not counted by the fault
  EXPECT_TRUE(fs_->ReadFile(Path("a")).ok());
  Result<std::string> third = fs_->ReadFile(Path("a"));
  ASSERT_FALSE(third.ok());
  EXPECT_EQ(third.status().error_class(), errors::kIoError);
  EXPECT_EQ(third.status().message(), "injected fault: ReadFile '" + Path("a") + "' (call 3, before it took effect)");
  EXPECT_TRUE(fs_->ReadFile(Path("a")).ok());
  EXPECT_EQ(fs_->InjectedFailures(), 1);
}

TEST_F(FaultInjectionTest, CallsAreCountedFromWhenTheFaultIsArmed) {
  ASSERT_TRUE(fs_->AtomicWrite(Path("a"), "1").ok());
  ASSERT_TRUE(fs_->AtomicWrite(Path("b"), "1").ok());
  fs_->InjectFault({.op = FileOp::kAtomicWrite, .nth = 1});
  EXPECT_FALSE(fs_->AtomicWrite(Path("c"), "1").ok());
  EXPECT_FALSE(*fs_->Exists(Path("c")));
}

TEST_F(FaultInjectionTest, AFaultWithoutOperationCountsEveryCall) {
  fs_->InjectFault({.nth = 2});
  EXPECT_TRUE(fs_->CreateDirectories(Path("d")).ok());
  EXPECT_FALSE(fs_->Exists(Path("d")).ok());
  EXPECT_TRUE(fs_->Stat(Path("d")).ok());
}

TEST_F(FaultInjectionTest, PutIfAbsentFailingBeforeLeavesNoFile) {
  fs_->InjectFault({.op = FileOp::kPutIfAbsent, .nth = 1, .timing = FaultTiming::kBefore});
  EXPECT_EQ(fs_->PutIfAbsent(Path("_delta_log/00000.json"), "commit").error_class(), errors::kIoError);
  EXPECT_FALSE(*fs_->Exists(Path("_delta_log/00000.json")));
  EXPECT_TRUE(fs_->PutIfAbsent(Path("_delta_log/00000.json"), "commit").ok());
}

TEST_F(FaultInjectionTest, PutIfAbsentFailingAfterHasTakenEffect) {
  fs_->InjectFault({.op = FileOp::kPutIfAbsent, .nth = 1, .timing = FaultTiming::kAfter});
  Status status = fs_->PutIfAbsent(Path("_delta_log/00000.json"), "commit");
  EXPECT_EQ(status.error_class(), errors::kIoError);
  EXPECT_NE(status.message().find("after it took effect"), std::string_view::npos);
  EXPECT_EQ(*fs_->ReadFile(Path("_delta_log/00000.json")), "commit");
  // The retry a naive caller would make now meets its own file.
  EXPECT_EQ(fs_->PutIfAbsent(Path("_delta_log/00000.json"), "commit").error_class(), errors::kFileAlreadyExists);
}

TEST_F(FaultInjectionTest, RenameFailingBeforeOrAfter) {
  ASSERT_TRUE(fs_->AtomicWrite(Path("tmp1"), "x").ok());
  ASSERT_TRUE(fs_->AtomicWrite(Path("tmp2"), "y").ok());
  fs_->InjectFault({.op = FileOp::kRename, .nth = 1, .timing = FaultTiming::kBefore});
  EXPECT_FALSE(fs_->Rename(Path("tmp1"), Path("offsets/0"), true).ok());
  EXPECT_TRUE(*fs_->Exists(Path("tmp1")));

  fs_->InjectFault({.op = FileOp::kRename, .nth = 1, .timing = FaultTiming::kAfter});
  ASSERT_TRUE(fs_->CreateDirectories(Path("offsets")).ok());
  EXPECT_FALSE(fs_->Rename(Path("tmp2"), Path("offsets/1"), true).ok());
  EXPECT_FALSE(*fs_->Exists(Path("tmp2")));
  EXPECT_EQ(*fs_->ReadFile(Path("offsets/1")), "y");
}

TEST_F(FaultInjectionTest, AWrappedFailureWinsOverAnInjectedOne) {
  fs_->InjectFault({.op = FileOp::kReadFile, .nth = 1, .timing = FaultTiming::kAfter});
  EXPECT_EQ(fs_->ReadFile(Path("missing")).status().error_class(), errors::kFileNotFound);
}

TEST_F(FaultInjectionTest, StickyFaultsKeepFailing) {
  fs_->InjectFault({.op = FileOp::kAtomicWrite, .nth = 2, .sticky = true});
  EXPECT_TRUE(fs_->AtomicWrite(Path("1"), "x").ok());
  for (int i = 2; i < 6; ++i) EXPECT_FALSE(fs_->AtomicWrite(Path(std::to_string(i)), "x").ok());
  EXPECT_EQ(fs_->InjectedFailures(), 4);
  fs_->ClearFaults();
  EXPECT_TRUE(fs_->AtomicWrite(Path("6"), "x").ok());
}

TEST_F(FaultInjectionTest, PathFilterCountsOnlyMatchingCalls) {
  fs_->InjectFault({.op = FileOp::kPutIfAbsent, .nth = 2, .path_substring = "/commits/"});
  EXPECT_TRUE(fs_->PutIfAbsent(Path("offsets/0"), "o").ok());
  EXPECT_TRUE(fs_->PutIfAbsent(Path("commits/0"), "c").ok());
  EXPECT_TRUE(fs_->PutIfAbsent(Path("offsets/1"), "o").ok());
  EXPECT_FALSE(fs_->PutIfAbsent(Path("commits/1"), "c").ok());
}

TEST_F(FaultInjectionTest, ACustomErrorIsReturnedAsGiven) {
  fs_->InjectFault({.op = FileOp::kList, .error = Status::Error(errors::kFileNotFound, "bucket vanished")});
  EXPECT_EQ(fs_->List(root_).status(), Status::Error(errors::kFileNotFound, "bucket vanished"));
}

TEST_F(FaultInjectionTest, WritableFileCloseFailingBeforePublishesNothing) {
  fs_->InjectFault({.op = FileOp::kClose, .nth = 1});
  Result<std::unique_ptr<WritableFile>> file = fs_->OpenForWrite(Path("part-0"));
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Append("data").ok());
  EXPECT_EQ((*file)->Tell(), 4);
  EXPECT_FALSE((*file)->Close().ok());
  file->reset();
  EXPECT_FALSE(*fs_->Exists(Path("part-0")));
  EXPECT_TRUE(std::filesystem::is_empty(root_));
}

TEST_F(FaultInjectionTest, WritableFileCloseFailingAfterHasPublished) {
  fs_->InjectFault({.op = FileOp::kClose, .nth = 1, .timing = FaultTiming::kAfter});
  Result<std::unique_ptr<WritableFile>> file = fs_->OpenForWrite(Path("part-0"));
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Append("data").ok());
  EXPECT_FALSE((*file)->Close().ok());
  EXPECT_EQ(*fs_->ReadFile(Path("part-0")), "data");
}

TEST_F(FaultInjectionTest, AppendAndReadAtCanFail) {
  fs_->InjectFault({.op = FileOp::kAppend, .nth = 2});
  fs_->InjectFault({.op = FileOp::kReadAt, .nth = 1});
  Result<std::unique_ptr<WritableFile>> file = fs_->OpenForWrite(Path("f"));
  ASSERT_TRUE(file.ok());
  EXPECT_TRUE((*file)->Append("ab").ok());
  EXPECT_FALSE((*file)->Append("cd").ok());
  ASSERT_TRUE((*file)->Close().ok());
  Result<std::unique_ptr<RandomAccessFile>> reader = fs_->OpenForRead(Path("f"));
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ((*reader)->Size(), 2);
  std::string out;
  EXPECT_FALSE((*reader)->ReadAt(0, 2, &out).ok());
  ASSERT_TRUE((*reader)->ReadAt(0, 2, &out).ok());
  EXPECT_EQ(out, "ab");
  EXPECT_EQ(fs_->CallCount(FileOp::kAppend), 2);
  EXPECT_EQ(fs_->CallCount(FileOp::kReadAt), 2);
}

TEST_F(FaultInjectionTest, EveryOperationHasAName) {
  for (int op = 0; op < kFileOpCount; ++op) {
    EXPECT_NE(FileOpName(static_cast<FileOp>(op)), "unknown") << op;
  }
}

}  // namespace
}  // namespace sluice
