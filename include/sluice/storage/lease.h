// A lease: the exclusive lock of a file system that has put-if-absent but no lock of its own (the
// object stores). The lock at `path` is a folder of generations, `path/<20-digit number>`, each a
// small JSON object {"holder": "host pid N since <UTC time>", "expires_ms": T}:
//   - to take the lock, read the latest generation; if it is unexpired, fail with
//     STORAGE_LEASE_HELD naming its holder and expiry (unless its holder ran on this host as a
//     process that is gone); else PutIfAbsent the next generation (exactly one of several racing
//     takers wins it);
//   - the holder's heartbeat thread rewrites its own generation with a later expiry every third
//     of the duration, and gives the lease up as lost when a newer generation appears or its
//     expiry passes without a successful renewal (Check() then fails);
//   - releasing writes the generation with expiry 0, so the next taker need not wait.
// A process killed with -9 holds the lease until its expiry at most (not at all for a successor
// on the same host). Two holders can overlap only
// while a stalled holder has not yet noticed its loss; every step it publishes after that fails,
// and what it published before is fenced by put-if-absent (checkpoint entries, Delta versions).
//
// Thread-safe.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "sluice/core/file_system.h"

namespace sluice::storage {

Result<std::unique_ptr<FileLock>> TakeLease(std::shared_ptr<FileSystem> file_system, const std::string& path,
                                            std::chrono::milliseconds duration);

}  // namespace sluice::storage
