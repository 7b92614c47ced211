// Logging: one process-wide log written to stderr, with a level filter.
//
//   LogInfo("stream {} committed batch {} ({} rows)", name, batch_id, rows);
//
// Formatting uses fmt syntax and happens only when the level is enabled. Never pass a secret:
// log options through ValidatedOptions::Redacted(), never their raw values.
// All functions are thread-safe.
#pragma once

#include <functional>
#include <string_view>
#include <utility>

#include <fmt/core.h>

#include "sluice/core/status.h"

namespace sluice {

enum class LogLevel { kTrace, kDebug, kInfo, kWarn, kError, kOff };

// Messages below `level` are dropped. The default is kInfo.
void SetLogLevel(LogLevel level);
LogLevel GetLogLevel();
bool LogEnabled(LogLevel level);
// "trace", "debug", "info", "warn" (or "warning"), "error", "off", in any case; INVALID_ARGUMENT
// otherwise.
Result<LogLevel> ParseLogLevel(std::string_view name);

// Writes one line: "[2026-01-31 12:00:00.123] [info] message" (UTC), if `level` is enabled.
void LogMessage(LogLevel level, std::string_view message);

// Sends messages that pass the level filter to `sink` instead of stderr, until called again with
// an empty function. For tests that assert on what is logged.
void SetLogSinkForTesting(std::function<void(LogLevel, std::string_view)> sink);

template <typename... Args>
void LogAt(LogLevel level, fmt::format_string<Args...> format, Args&&... args) {
  if (LogEnabled(level)) LogMessage(level, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void LogDebug(fmt::format_string<Args...> format, Args&&... args) {
  LogAt(LogLevel::kDebug, format, std::forward<Args>(args)...);
}
template <typename... Args>
void LogInfo(fmt::format_string<Args...> format, Args&&... args) {
  LogAt(LogLevel::kInfo, format, std::forward<Args>(args)...);
}
template <typename... Args>
void LogWarn(fmt::format_string<Args...> format, Args&&... args) {
  LogAt(LogLevel::kWarn, format, std::forward<Args>(args)...);
}
template <typename... Args>
void LogError(fmt::format_string<Args...> format, Args&&... args) {
  LogAt(LogLevel::kError, format, std::forward<Args>(args)...);
}

}  // namespace sluice
