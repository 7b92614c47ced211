// The layout of a table's `_delta_log` directory: where commits and checkpoints live, how to read
// one commit, and how to list what the log holds. Stateless functions over a FileSystem;
// thread-safe as the FileSystem is.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/file_system.h"
#include "sluice/delta/actions.h"

namespace sluice::delta {

// `<table>/_delta_log`
std::string LogDirectory(std::string_view table_path);
// `<table>/_delta_log/%020d.json`
std::string CommitPath(std::string_view table_path, int64_t version);
// `<table>/_delta_log/_last_checkpoint`
std::string LastCheckpointPath(std::string_view table_path);
// `<table>/_delta_log/%020d.checkpoint.parquet`
std::string ClassicCheckpointPath(std::string_view table_path, int64_t version);

// Reads and parses the commit file of `version`. FILE_NOT_FOUND when it does not exist,
// DELTA_LOG_CORRUPT when it does not parse or holds no action (an empty or blank file).
Result<std::vector<Action>> ReadCommit(FileSystem& fs, std::string_view table_path, int64_t version);

// One complete checkpoint: a classic file or every part of a multi-part checkpoint, in order.
struct CheckpointFiles {
  int64_t version = 0;
  std::vector<std::string> paths;
};

// What a listing of `_delta_log` holds (the whole log, or its versions from one on).
struct LogListing {
  // Commit versions in ascending order, with the modification time of each file (ms).
  std::vector<int64_t> commit_versions;
  std::vector<int64_t> commit_times_ms;
  // Complete checkpoints by version (multi-part checkpoints with a missing part are left out, as
  // the protocol requires); a UUID-named V2 checkpoint (`%020d.checkpoint.<uuid>.json|parquet`)
  // is one file, its sidecars named inside it. Of several checkpoints of one version, any one.
  std::map<int64_t, CheckpointFiles> checkpoints;
};

// Lists the log's commits and checkpoints of versions `from_version` and later: one listing of
// the files from that name on, so that the cost is what is listed, not the whole log.
Result<LogListing> ListLog(FileSystem& fs, std::string_view table_path, int64_t from_version = 0);

}  // namespace sluice::delta
