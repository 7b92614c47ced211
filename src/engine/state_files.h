// The files of a state folder, as both state stores name them: `<version><suffix>`. Private to
// the engine.
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/file_system.h"
#include "sluice/core/status.h"

namespace sluice::engine {

// The names of the files in `directory` (none when it does not exist).
inline Result<std::vector<std::string>> StateFileNames(FileSystem& file_system, const std::string& directory) {
  std::vector<std::string> names;
  SLUICE_ASSIGN_OR_RETURN(bool exists, file_system.Exists(directory));
  if (!exists) return names;
  SLUICE_ASSIGN_OR_RETURN(std::vector<FileInfo> files, file_system.List(directory));
  for (const FileInfo& file : files) names.push_back(file.path.substr(file.path.find_last_of('/') + 1));
  return names;
}

// The version a file named `<version><suffix>` is of; nothing for other names.
inline std::optional<int64_t> StateVersionOf(std::string_view name, std::string_view suffix) {
  if (!name.ends_with(suffix)) return std::nullopt;
  std::string_view digits = name.substr(0, name.size() - suffix.size());
  int64_t version = -1;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), version);
  if (ec != std::errc() || end != digits.data() + digits.size() || version < 0) return std::nullopt;
  return version;
}

}  // namespace sluice::engine
