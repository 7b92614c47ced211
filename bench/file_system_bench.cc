// Local file system figures, each beside the bare POSIX calls that do the same durable work:
//   1. put-if-absent of small files (the cost of one Delta commit or checkpoint log entry), beside
//      open + write + fsync + close + rename + fsync of the directory;
//   2. streaming a large file through WritableFile in 1 KiB appends (as encoders write), beside
//      write() of 64 KiB blocks (on the machines tried, larger blocks were slower), fsync, rename
//      and fsync of the directory.
//
//   file_system_bench [--dir PATH] [--files N] [--mib N]
//
// The last two lines are machine-readable: `fs_put_if_absent files=N per_s=R reference_per_s=P
// ratio=X` and `fs_stream mib=N mib_per_s=R reference_mib_per_s=P ratio=X` (ratio = sluice's rate
// over the reference's; 1.0 means no overhead).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "sluice/core/file_system.h"

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

void Check(const sluice::Status& status, const char* what) {
  if (!status.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, status.ToString().c_str());
    std::exit(1);
  }
}

void CheckPosix(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "%s: %s\n", what, std::strerror(errno));
    std::exit(1);
  }
}

void SyncDirectory(const std::string& directory) {
  int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY);
  CheckPosix(fd >= 0 && ::fsync(fd) == 0 && ::close(fd) == 0, "fsync directory");
}

void BenchPutIfAbsent(sluice::FileSystem& fs, const std::string& dir, int files) {
  const std::string content(1024, 'c');
  Check(fs.CreateDirectories(dir + "/put"), "create directory");
  auto start = Clock::now();
  for (int i = 0; i < files; ++i) Check(fs.PutIfAbsent(dir + "/put/" + std::to_string(i), content), "put-if-absent");
  double seconds = Seconds(start);

  const std::string reference_dir = dir + "/reference-put";
  Check(fs.CreateDirectories(reference_dir), "create directory");
  start = Clock::now();
  for (int i = 0; i < files; ++i) {
    std::string target = reference_dir + "/" + std::to_string(i);
    std::string temp = target + ".tmp";
    int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
    CheckPosix(fd >= 0, "open");
    CheckPosix(::write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size()), "write");
    CheckPosix(::fsync(fd) == 0 && ::close(fd) == 0, "fsync");
    CheckPosix(::rename(temp.c_str(), target.c_str()) == 0, "rename");
    SyncDirectory(reference_dir);
  }
  double reference = Seconds(start);
  std::printf("fs_put_if_absent files=%d per_s=%.1f reference_per_s=%.1f ratio=%.3f\n", files, files / seconds,
              files / reference, reference / seconds);
}

double StreamThroughFileSystem(sluice::FileSystem& fs, const std::string& path, int mib) {
  const std::string piece(1024, 'p');
  auto start = Clock::now();
  auto file = fs.OpenForWrite(path);
  Check(file.status(), "open for write");
  for (int i = 0; i < mib * 1024; ++i) Check((*file)->Append(piece), "append");
  Check((*file)->Close(), "close");
  return Seconds(start);
}

double StreamThroughPosix(const std::string& dir, const std::string& name, int mib) {
  const std::string block(1 << 16, 'b');
  const std::string temp = dir + "/." + name + ".tmp";
  auto start = Clock::now();
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  CheckPosix(fd >= 0, "open");
  for (int i = 0; i < mib * 16; ++i) {
    CheckPosix(::write(fd, block.data(), block.size()) == static_cast<ssize_t>(block.size()), "write");
  }
  CheckPosix(::fsync(fd) == 0 && ::close(fd) == 0, "fsync");
  CheckPosix(::rename(temp.c_str(), (dir + "/" + name).c_str()) == 0, "rename");
  SyncDirectory(dir);
  return Seconds(start);
}

// Alternates the two writers and keeps each one's best round, so that neither pays for the
// other's write-back.
void BenchStream(sluice::FileSystem& fs, const std::string& dir, int mib) {
  double seconds = 1e30;
  double reference = 1e30;
  for (int round = 0; round < 3; ++round) {
    reference = std::min(reference, StreamThroughPosix(dir, "reference-stream-" + std::to_string(round), mib));
    seconds = std::min(seconds, StreamThroughFileSystem(fs, dir + "/stream/part-" + std::to_string(round), mib));
  }
  std::printf("fs_stream mib=%d mib_per_s=%.1f reference_mib_per_s=%.1f ratio=%.3f\n", mib, mib / seconds,
              mib / reference, reference / seconds);
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir;
  int files = 200;
  int mib = 256;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--dir") {
      dir = argv[i + 1];
    } else if (flag == "--files") {
      files = std::atoi(argv[i + 1]);
    } else if (flag == "--mib") {
      mib = std::atoi(argv[i + 1]);
    } else {
      std::fprintf(stderr, "usage: file_system_bench [--dir PATH] [--files N] [--mib N]\n");
      return 2;
    }
  }
  if (files < 1 || mib < 1) {
    std::fprintf(stderr, "--files and --mib must be at least 1\n");
    return 2;
  }
  bool made_dir = dir.empty();
  if (made_dir) {
    char pattern[] = "/tmp/sluice-fs-bench-XXXXXX";
    CheckPosix(::mkdtemp(pattern) != nullptr, "mkdtemp");
    dir = pattern;
  }
  std::shared_ptr<sluice::FileSystem> fs = sluice::LocalFileSystem();
  BenchPutIfAbsent(*fs, dir, files);
  BenchStream(*fs, dir, mib);
  if (made_dir) Check(fs->DeleteRecursively(dir), "clean up");
  return 0;
}
