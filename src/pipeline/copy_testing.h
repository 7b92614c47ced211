// A fixture for tests of `sluice copy`: a private directory with a warehouse inside, RunCopy on
// two endpoint specs, and the text of the files a copy wrote.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sluice/pipeline/copy.h"
#include "testing/temp_dir.h"

namespace sluice::pipeline::testing {

class CopyTest : public ::testing::Test {
 protected:
  explicit CopyTest(const std::string& dir_prefix) : dir_(dir_prefix) {}

  // Copies `from` into `to` (endpoint specs as `sluice copy` takes them), warehouse in dir_.
  Result<CopyResult> Copy(const std::string& from, const std::string& to) {
    SLUICE_ASSIGN_OR_RETURN(CopyEndpoint source, ParseEndpointSpec(from));
    SLUICE_ASSIGN_OR_RETURN(CopyEndpoint sink, ParseEndpointSpec(to));
    CopyOptions options;
    options.warehouse = dir_.Join("warehouse");
    return RunCopy(source, sink, options);
  }

  // The text of every file in `directory`, in name order.
  static std::string FilesText(const std::string& directory) {
    std::vector<std::filesystem::path> paths;
    for (const auto& entry : std::filesystem::directory_iterator(directory)) paths.push_back(entry.path());
    std::sort(paths.begin(), paths.end());
    std::string text;
    for (const auto& path : paths) {
      std::ifstream in(path);
      std::stringstream content;
      content << in.rdbuf();
      text += content.str();
    }
    return text;
  }

  sluice::testing::TempDir dir_;
};

}  // namespace sluice::pipeline::testing
