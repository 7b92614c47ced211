// ScopedEnvironment: environment variables set (or, given nullptr, unset) for a test's scope, and
// restored to what they were when it ends. Not thread-safe (the environment is the process's).
#pragma once

#include <cstdlib>
#include <map>
#include <optional>
#include <string>

namespace sluice::testing {

class ScopedEnvironment {
 public:
  explicit ScopedEnvironment(const std::map<std::string, const char*>& values) {
    for (const auto& [name, value] : values) {
      const char* before = std::getenv(name.c_str());
      saved_[name] = before != nullptr ? std::optional<std::string>(before) : std::nullopt;
      if (value != nullptr) {
        setenv(name.c_str(), value, 1);
      } else {
        unsetenv(name.c_str());
      }
    }
  }
  ~ScopedEnvironment() {
    for (const auto& [name, value] : saved_) {
      if (value) {
        setenv(name.c_str(), value->c_str(), 1);
      } else {
        unsetenv(name.c_str());
      }
    }
  }
  ScopedEnvironment(const ScopedEnvironment&) = delete;
  ScopedEnvironment& operator=(const ScopedEnvironment&) = delete;

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

}  // namespace sluice::testing
