#include "sluice/core/logging.h"

#include <atomic>
#include <cctype>
#include <mutex>
#include <string>

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "sluice/core/error_classes.h"
#include "sluice/core/sensitive_values.h"

namespace sluice {
namespace {

std::atomic<LogLevel> current_level{LogLevel::kInfo};

std::mutex& SinkMutex() {
  static std::mutex mutex;
  return mutex;
}

std::function<void(LogLevel, std::string_view)>& TestSink() {
  static std::function<void(LogLevel, std::string_view)> sink;
  return sink;
}

// Not registered with spdlog's global registry, so nothing else can reconfigure it, and never
// destroyed, so that logging keeps working while static objects are torn down.
spdlog::logger& StderrLogger() {
  static spdlog::logger* logger = [] {
    auto* created = new spdlog::logger("sluice", std::make_shared<spdlog::sinks::stderr_sink_mt>());
    created->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%l] %v", spdlog::pattern_time_type::utc);
    created->set_level(spdlog::level::trace);  // filtering happens in LogEnabled
    return created;
  }();
  return *logger;
}

spdlog::level::level_enum ToSpdlog(LogLevel level) {
  switch (level) {
    case LogLevel::kTrace: return spdlog::level::trace;
    case LogLevel::kDebug: return spdlog::level::debug;
    case LogLevel::kInfo: return spdlog::level::info;
    case LogLevel::kWarn: return spdlog::level::warn;
    case LogLevel::kError: return spdlog::level::err;
    case LogLevel::kOff: return spdlog::level::off;
  }
  return spdlog::level::info;
}

}  // namespace

void SetLogLevel(LogLevel level) { current_level.store(level); }

LogLevel GetLogLevel() { return current_level.load(); }

bool LogEnabled(LogLevel level) { return level != LogLevel::kOff && level >= current_level.load(); }

Result<LogLevel> ParseLogLevel(std::string_view name) {
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "trace") return LogLevel::kTrace;
  if (lower == "debug") return LogLevel::kDebug;
  if (lower == "info") return LogLevel::kInfo;
  if (lower == "warn" || lower == "warning") return LogLevel::kWarn;
  if (lower == "error") return LogLevel::kError;
  if (lower == "off") return LogLevel::kOff;
  return Status::Error(errors::kInvalidArgument,
                       "unknown log level '" + std::string(name) + "'; use trace, debug, info, warn, error or off");
}

void LogMessage(LogLevel level, std::string_view text) {
  if (!LogEnabled(level)) return;
  const std::string message = ScrubSensitiveValues(std::string(text));
  {
    std::lock_guard lock(SinkMutex());
    if (TestSink()) {
      TestSink()(level, message);
      return;
    }
  }
  StderrLogger().log(ToSpdlog(level), message);
}

void SetLogSinkForTesting(std::function<void(LogLevel, std::string_view)> sink) {
  std::lock_guard lock(SinkMutex());
  TestSink() = std::move(sink);
}

}  // namespace sluice
