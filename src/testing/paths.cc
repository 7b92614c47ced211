#include "testing/paths.h"

namespace sluice::testing {

const std::string& SourceDir() {
  static const std::string dir = SLUICE_SOURCE_DIR;
  return dir;
}

const std::string& BinaryDir() {
  static const std::string dir = SLUICE_BINARY_DIR;
  return dir;
}

}  // namespace sluice::testing
