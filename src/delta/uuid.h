// Random (version 4) UUIDs for table ids, data file names and commit ids.
#pragma once

#include <string>

namespace sluice::delta {

// "af23c9d7-fff1-4a5a-a2c8-55c59bd782aa". Thread-safe.
std::string NewUuid();

}  // namespace sluice::delta
