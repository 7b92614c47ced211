#include "sluice/core/sensitive_values.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

namespace sluice {
namespace {

struct Remembered {
  std::mutex mutex;
  std::vector<std::string> values;  // longest first, so that a value inside another is masked with it
  std::atomic<bool> any{false};
};

Remembered& Values() {
  static Remembered* remembered = new Remembered();  // never destroyed: used until exit
  return *remembered;
}

}  // namespace

void RememberSensitiveValue(std::string_view value) {
  if (value.size() < kMinSensitiveBytes) return;
  Remembered& remembered = Values();
  std::lock_guard lock(remembered.mutex);
  std::vector<std::string>& values = remembered.values;
  if (values.size() >= kMaxSensitiveValues || std::find(values.begin(), values.end(), value) != values.end()) return;
  auto at = std::find_if(values.begin(), values.end(), [&](const std::string& v) { return v.size() < value.size(); });
  values.emplace(at, value);
  remembered.any.store(true, std::memory_order_release);
}

std::string ScrubSensitiveValues(std::string text) {
  Remembered& remembered = Values();
  if (!remembered.any.load(std::memory_order_acquire)) return text;
  std::lock_guard lock(remembered.mutex);
  for (const std::string& value : remembered.values) {
    for (size_t at = text.find(value); at != std::string::npos; at = text.find(value, at + 5)) {
      text.replace(at, value.size(), "*****");
    }
  }
  return text;
}

}  // namespace sluice
