#include "sluice/core/path_names.h"

#include <filesystem>

#include <fmt/format.h>

namespace sluice {

std::string PathNameProblem(std::string_view name) {
  constexpr size_t kMaxBytes = 255;  // the longest file name of common file systems
  if (name.empty()) return "is empty";
  if (name.size() > kMaxBytes) return fmt::format("is longer than {} bytes", kMaxBytes);
  if (name[0] == '-') return "starts with `-`";
  for (char c : name) {
    bool allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (allowed) continue;
    auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x7f) return fmt::format("contains the byte 0x{:02X}", byte);
    return fmt::format("contains `{}`", c);
  }
  return "";
}

bool StaysUnder(std::string_view root, std::string_view path) {
  auto normal = [](std::string_view text) {
    std::string out = std::filesystem::path(text).lexically_normal().string();
    while (out.size() > 1 && out.back() == '/') out.pop_back();
    return out;
  };
  const std::string base = normal(root), full = normal(path);
  if (base.empty() || full.empty()) return false;
  if (full == base) return true;
  const std::string prefix = base == "/" ? base : base + "/";
  return full.compare(0, prefix.size(), prefix) == 0 && full.find("/../") == std::string::npos &&
         !full.ends_with("/..");
}

}  // namespace sluice
