// Where the tests find the source tree (docs, fuzz seeds, tools) and the build tree (the binary,
// plugins). The two paths are compiled into one object of the testing library only, so that a
// checkout in another folder changes one object and the compiler cache still serves every test.
#pragma once

#include <string>

namespace sluice::testing {

// The project's source directory, absolute, without a trailing slash.
const std::string& SourceDir();
// The build directory the tests were built in, absolute, without a trailing slash.
const std::string& BinaryDir();

}  // namespace sluice::testing
