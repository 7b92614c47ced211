// A tripwire for kPluginAbiVersion: a hash of the headers a plugin is built against (plugin.h and
// every sluice header it includes, transitively; comments and blank space left out; the error
// class names, constants that no built plugin depends on, left out too) is recorded beside the
// version. Changing those headers changes the hash and fails this test until the
// version goes up and the hash recorded here is the new one.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "sluice/engine/plugin.h"
#include "testing/paths.h"

namespace sluice::engine {
namespace {

constexpr uint32_t kRecordedVersion = 10;
constexpr uint64_t kRecordedHash = 14043922730612902723ull;

// The header's text without comments and blank space.
std::string Significant(const std::string& path) {
  std::ifstream in(path);
  std::string line, text;
  while (std::getline(in, line)) {
    if (size_t comment = line.find("//"); comment != std::string::npos) line.resize(comment);
    for (char c : line) {
      if (c != ' ' && c != '\t' && c != '\r') text += c;
    }
  }
  return text;
}

// Every sluice header `header` includes, transitively, itself included.
void Collect(const std::string& header, std::set<std::string>* seen) {
  if (header == "sluice/core/error_classes.h" || !seen->insert(header).second) return;
  std::ifstream in(testing::SourceDir() + "/include/" + header);
  EXPECT_TRUE(in.good()) << header;
  static const std::regex kInclude(R"re(^#include "(sluice/[^"]+)")re");
  std::string line;
  while (std::getline(in, line)) {
    std::smatch match;
    if (std::regex_search(line, match, kInclude)) Collect(match[1], seen);
  }
}

TEST(PluginAbiTest, ThePluginHeadersChangeOnlyWithTheAbiVersion) {
  std::set<std::string> headers;
  Collect("sluice/engine/plugin.h", &headers);
  uint64_t hash = 14695981039346656037ull;  // FNV-1a
  for (const std::string& header : headers) {
    for (char c : header + "\n" + Significant(testing::SourceDir() + "/include/" + header)) {
      hash = (hash ^ static_cast<uint8_t>(c)) * 1099511628211ull;
    }
  }
  EXPECT_EQ(kPluginAbiVersion, kRecordedVersion)
      << "kPluginAbiVersion changed: record it here with the headers' hash, " << hash;
  EXPECT_EQ(hash, kRecordedHash) << "the headers a plugin is built against changed (" << headers.size()
                                 << " files); raise kPluginAbiVersion (include/sluice/engine/plugin.h) and record it "
                                    "here with the new hash, "
                                 << hash;
}

}  // namespace
}  // namespace sluice::engine
