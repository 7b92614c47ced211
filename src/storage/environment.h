// The environment as the object stores' options read it (a private header of the storage layer).
#pragma once

#include <cstdlib>
#include <string>

namespace sluice::storage {

// The value of the environment variable `name`, or "" when it is not set.
inline std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

}  // namespace sluice::storage
