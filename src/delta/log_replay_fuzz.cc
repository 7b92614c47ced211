// Replays a Delta log folder made from the input: a valid table creation at version 0, then the
// input cut at each "\n--\n" into the commits 1, 2, ... A part "gap" leaves its version out (a
// hole), a part starting "_last_checkpoint:" is written as the checkpoint pointer instead of a
// commit, one starting "checkpoint:" as a V2 JSON checkpoint of the last version written (its
// sidecar actions name files under _delta_log/_sidecars), one starting "sidecar:" as the sidecar
// `s.parquet`, and when the first byte is odd a valid commit follows the last part, so that bad
// commits are met in the middle of the log too. Loading the snapshot, listing the history and planning a
// stream over it may refuse the log (DELTA_LOG_CORRUPT and the like), never crash, and a snapshot
// that loads must hold only files with non-negative sizes.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "sluice/core/file_system.h"
#include "sluice/delta/log.h"
#include "sluice/delta/snapshot.h"
#include "sluice/delta/source.h"

namespace {

constexpr std::string_view kCreate =
    R"({"commitInfo":{"timestamp":1767225600000,"operation":"CREATE TABLE"}})"
    "\n"
    R"({"protocol":{"minReaderVersion":1,"minWriterVersion":2}})"
    "\n"
    R"({"metaData":{"id":"af23c9d7-fff1-4a5a-a2c8-55c59bd782aa","format":{"provider":"parquet","options":{}},)"
    R"("schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}},)"
    R"({\"name\":\"day\",\"type\":\"string\",\"nullable\":true,\"metadata\":{}}]}","partitionColumns":["day"],)"
    R"("configuration":{},"createdTime":1767225600000}})"
    "\n";
constexpr std::string_view kAppend =
    R"({"add":{"path":"day=a/f.parquet","partitionValues":{"day":"a"},"size":10,"modificationTime":1,"dataChange":true}})"
    "\n";

const std::string& TablePath() {
  static const std::string path = [] {
    char pattern[] = "/tmp/sluice-log-fuzz-XXXXXX";
    const char* dir = ::mkdtemp(pattern);
    if (dir == nullptr) std::abort();
    return std::string(dir) + "/table";
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto fs = sluice::LocalFileSystem();
  const std::string& table = TablePath();
  (void)fs->DeleteRecursively(table);
  if (!fs->CreateDirectories(sluice::delta::LogDirectory(table)).ok()) std::abort();
  if (!fs->AtomicWrite(sluice::delta::CommitPath(table, 0), kCreate).ok()) std::abort();
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  int64_t version = 1;
  constexpr std::string_view kSeparator = "\n--\n";
  constexpr std::string_view kPointer = "_last_checkpoint:";
  constexpr std::string_view kCheckpoint = "checkpoint:";
  constexpr std::string_view kSidecar = "sidecar:";
  for (int part = 0; part < 16; ++part) {
    const size_t cut = rest.find(kSeparator);
    const std::string_view text = rest.substr(0, cut);
    if (text.substr(0, kPointer.size()) == kPointer) {
      if (!fs->AtomicWrite(sluice::delta::LogDirectory(table) + "/_last_checkpoint", text.substr(kPointer.size())).ok()) {
        std::abort();
      }
    } else if (text.substr(0, kCheckpoint.size()) == kCheckpoint) {
      const std::string name = sluice::delta::CommitPath(table, version - 1);
      const std::string path = name.substr(0, name.size() - 5) + ".checkpoint.0b4dc0e6-2c59-4bd2-a3be-7d3a1b0c5f00.json";
      if (!fs->AtomicWrite(path, text.substr(kCheckpoint.size())).ok()) std::abort();
    } else if (text.substr(0, kSidecar.size()) == kSidecar) {
      const std::string folder = sluice::delta::LogDirectory(table) + "/_sidecars";
      if (!fs->CreateDirectories(folder).ok() || !fs->AtomicWrite(folder + "/s.parquet", text.substr(kSidecar.size())).ok()) {
        std::abort();
      }
    } else {
      if (text != "gap" && !fs->AtomicWrite(sluice::delta::CommitPath(table, version), text).ok()) std::abort();
      ++version;
    }
    if (cut == std::string_view::npos) break;
    rest.remove_prefix(cut + kSeparator.size());
  }
  const bool followed = size > 0 && (data[0] & 1);
  if (followed && !fs->AtomicWrite(sluice::delta::CommitPath(table, version), kAppend).ok()) std::abort();

  auto snapshot = sluice::delta::Snapshot::Load(fs, table);
  if (snapshot.ok()) {
    for (const auto& file : (*snapshot)->files()) {
      if (file.size < 0) std::abort();
    }
  }
  // A stream from the first version, and one from the snapshot (the default).
  for (auto start_at : {sluice::delta::SourceOptions::Start::kVersion, sluice::delta::SourceOptions::Start::kSnapshot}) {
    auto source = sluice::delta::DeltaSource::Open(fs, table, {.start = start_at, .starting_version = 0});
    if (!source.ok()) continue;
    sluice::delta::SourceOffset start = (*source)->initial_offset();
    auto end = (*source)->LatestOffset(start);
    if (end.ok()) (void)(*source)->Files(start, *end);
  }
  return 0;
}
