// CommitCoordinator: put-if-absent for object stores that have no conditional write (older
// S3-compatible servers), decided by a database instead of the store, as Delta's log stores with
// an external lock do. ObjectStoreFileSystem::PutIfAbsent, given one, does for each path:
//   1. Claim(uri, bytes): records the path with its bytes; exactly one claimant of a path wins.
//   2. the winner writes the object with a plain PUT, then Complete(uri).
// A loser whose claim meets an incomplete one (its winner died between 1 and 2) writes the
// recorded bytes itself and completes the claim before failing with FILE_ALREADY_EXISTS, so a
// version claimed by a killed writer becomes visible and the log moves on. A claim whose reply
// was lost is recognised by its bytes on the next attempt, as a lost conditional PUT is.
//
// Claims are kept: a path is never claimed twice. Thread-safe.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "sluice/core/status.h"

namespace sluice::storage {

class CommitCoordinator {
 public:
  virtual ~CommitCoordinator() = default;

  struct Claim {
    bool won = false;
    // The claim that holds the path when not won: its bytes and whether its object was written.
    std::string bytes;
    bool complete = false;
  };
  virtual Result<Claim> TryClaim(const std::string& uri, std::string_view bytes) = 0;
  virtual Status Complete(const std::string& uri) = 0;
};

// The coordinator in a PostgreSQL table: `connection` is a libpq connection string or URI
// (`postgresql://user:password@host:5432/db`), `table` a `name` or `schema.name` of simple
// identifiers, created when missing with the columns (path text primary key, bytes bytea,
// complete boolean, claimed_at timestamptz). One connection, reconnected when lost.
// PG_CONNECTION_FAILED when the server cannot be reached, INVALID_STORAGE_URI for a bad table name.
Result<std::shared_ptr<CommitCoordinator>> ConnectPostgresCommitCoordinator(const std::string& connection,
                                                                            const std::string& table);

}  // namespace sluice::storage
