#include "sluice/delta/log.h"

#include <cctype>
#include <cstdint>

#include <fmt/format.h>

#include "sluice/core/error_classes.h"

namespace sluice::delta {
namespace {

// Parses `digits` (all ASCII digits, non-empty, no overflow) or returns -1.
int64_t ParseDigits(std::string_view digits) {
  if (digits.empty()) return -1;
  int64_t value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9' || value > (INT64_MAX - (c - '0')) / 10) return -1;
    value = value * 10 + (c - '0');
  }
  return value;
}

struct CheckpointName {
  int64_t version = -1;
  int64_t part = 0;   // 0 for a classic checkpoint
  int64_t parts = 0;  // 0 for a classic checkpoint
};

// A UUID's text: 8-4-4-4-12 hexadecimal digits.
bool IsUuid(std::string_view text) {
  if (text.size() != 36) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash != (text[i] == '-')) return false;
    if (!dash && !std::isxdigit(static_cast<unsigned char>(text[i]))) return false;
  }
  return true;
}

// "%020d.checkpoint.parquet", "%020d.checkpoint.%010d.%010d.parquet" or a V2 checkpoint's
// "%020d.checkpoint.<uuid>.json|parquet"; version -1 otherwise.
CheckpointName ParseCheckpointName(std::string_view name) {
  CheckpointName result;
  constexpr std::string_view kInfix = ".checkpoint";
  constexpr std::string_view kSuffix = ".parquet";
  if (name.size() < 20 + kInfix.size() + 5) return result;
  if (name.substr(20, kInfix.size()) != kInfix) return result;
  int64_t version = ParseDigits(name.substr(0, 20));
  if (version < 0) return result;
  std::string_view rest = name.substr(20 + kInfix.size());
  for (std::string_view extension : {std::string_view(".json"), kSuffix}) {
    if (rest.size() == 1 + 36 + extension.size() && rest[0] == '.' && rest.ends_with(extension) &&
        IsUuid(rest.substr(1, 36))) {
      result.version = version;
      return result;
    }
  }
  if (!name.ends_with(kSuffix)) return result;
  std::string_view parts = rest;
  parts.remove_suffix(kSuffix.size());
  if (parts.empty()) {
    result.version = version;
    return result;
  }
  // ".%010d.%010d"
  if (parts.size() != 22 || parts[0] != '.' || parts[11] != '.') return result;
  int64_t part = ParseDigits(parts.substr(1, 10));
  int64_t count = ParseDigits(parts.substr(12));
  if (part < 1 || count < 1 || part > count) return result;
  result = {version, part, count};
  return result;
}

}  // namespace

std::string LogDirectory(std::string_view table_path) { return fmt::format("{}/_delta_log", table_path); }

std::string CommitPath(std::string_view table_path, int64_t version) {
  return fmt::format("{}/_delta_log/{:020d}.json", table_path, version);
}

std::string LastCheckpointPath(std::string_view table_path) {
  return fmt::format("{}/_delta_log/_last_checkpoint", table_path);
}

std::string ClassicCheckpointPath(std::string_view table_path, int64_t version) {
  return fmt::format("{}/_delta_log/{:020d}.checkpoint.parquet", table_path, version);
}

Result<std::vector<Action>> ReadCommit(FileSystem& fs, std::string_view table_path, int64_t version) {
  std::string path = CommitPath(table_path, version);
  SLUICE_ASSIGN_OR_RETURN(std::string text, fs.ReadFile(path));
  std::vector<Action> actions;
  SLUICE_RETURN_IF_ERROR(ParseActions(text, path, &actions));
  // Every writer puts at least one action into a commit; an empty file is one whose writing was
  // cut short, not a commit.
  if (actions.empty()) {
    return Status::Error(errors::kDeltaLogCorrupt, fmt::format("commit file '{}' holds no action", path));
  }
  return actions;
}

Result<LogListing> ListLog(FileSystem& fs, std::string_view table_path, int64_t from_version) {
  std::string directory = LogDirectory(table_path);
  // Every file of a version is named by its 20 digits and a suffix starting with '.'; '/' sorts
  // after '.' and before every digit, so this name falls after the files of the version before.
  const std::string start_after = from_version > 0 ? fmt::format("{:020d}/", from_version - 1) : "";
  SLUICE_ASSIGN_OR_RETURN(std::vector<FileInfo> entries, fs.List(directory, "", start_after));
  LogListing listing;
  // Parts of multi-part checkpoints, keyed by (version, parts): which part numbers were seen.
  std::map<std::pair<int64_t, int64_t>, std::map<int64_t, std::string>> multi_part;
  for (const FileInfo& entry : entries) {
    if (entry.is_directory) continue;
    std::string_view name = entry.path;
    name.remove_prefix(name.rfind('/') + 1);
    if (int64_t version = ParseCommitFileName(name); version >= 0) {
      listing.commit_versions.push_back(version);
      listing.commit_times_ms.push_back(entry.modification_time_ms);
      continue;
    }
    CheckpointName checkpoint = ParseCheckpointName(name);
    if (checkpoint.version < 0) continue;
    if (checkpoint.parts == 0) {
      listing.checkpoints[checkpoint.version] = CheckpointFiles{checkpoint.version, {entry.path}};
    } else {
      multi_part[{checkpoint.version, checkpoint.parts}][checkpoint.part] = entry.path;
    }
  }
  for (auto& [key, parts] : multi_part) {
    auto [version, count] = key;
    if (static_cast<int64_t>(parts.size()) != count || listing.checkpoints.contains(version)) continue;
    CheckpointFiles files{version, {}};
    for (auto& [part, path] : parts) files.paths.push_back(std::move(path));
    listing.checkpoints[version] = std::move(files);
  }
  return listing;
}

}  // namespace sluice::delta
