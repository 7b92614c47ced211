// A directory under the system temp dir that exists for the life of the object and is removed
// with everything in it on destruction (unless SLUICE_KEEP_TEST_DIRS is set, for debugging).
#pragma once

#include <string>

namespace sluice::testing {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "sluice-test");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // path() + "/" + relative
  std::string Join(const std::string& relative) const { return path_ + "/" + relative; }

 private:
  std::string path_;
};

}  // namespace sluice::testing
