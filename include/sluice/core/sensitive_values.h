// The values sluice never prints. Options validation remembers every value that is a secret or
// came from a secret reference (core/options.h); every error message (Status::Error), log line
// (core/logging.h) and event-log line is scrubbed of them, each occurrence becoming `*****`. So a
// host or user given as ${env:...} never reaches a terminal or a file even when a library (libpq,
// librdkafka) quotes it back in its own error text.
//
// Values shorter than kMinSensitiveBytes are not remembered: masking every "db" or "1" would
// garble messages without protecting anything. At most kMaxSensitiveValues distinct values are
// kept (a process validates a bounded set of options). Thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace sluice {

inline constexpr size_t kMinSensitiveBytes = 3;
inline constexpr size_t kMaxSensitiveValues = 1024;

void RememberSensitiveValue(std::string_view value);

// `text` with every remembered value replaced by `*****` (longest values first).
std::string ScrubSensitiveValues(std::string text);

}  // namespace sluice
