// Checkpoints (PROTOCOL.md, "Checkpoints", "Checkpoint Schema"): the reconciled state of a table
// at one version, stored as Parquet so that readers skip replaying the log before it.
//
// sluice writes classic single-file V1 checkpoints (`%020d.checkpoint.parquet`) with one action
// per row in the struct columns txn, add, remove, metaData, protocol and domainMetadata, and for
// tables with the v2Checkpoint feature V2 checkpoints as one UUID-named JSON file
// (`%020d.checkpoint.<uuid>.json`, ending with `checkpointMetadata`), then points
// `_last_checkpoint` at them. It reads classic and multi-part V1
// checkpoints and V2 checkpoints (UUID-named JSON or Parquet files, or classic-named ones, with
// their `sidecar` files under `_delta_log/_sidecars/`) written by any engine (columns and actions
// it does not know are ignored).
//
// Thread-safe as the FileSystem is.
#pragma once

#include <functional>

#include "sluice/core/file_system.h"
#include "sluice/delta/actions.h"
#include "sluice/delta/log.h"
#include "sluice/delta/snapshot.h"

namespace sluice::delta {

// Receives the actions of a checkpoint one by one, in file order.
using ActionSink = std::function<void(Action&&)>;

// The files of the checkpoint that `_last_checkpoint` points to (classic, or `parts` parts).
CheckpointFiles CheckpointFilesOf(std::string_view table_path, const LastCheckpoint& last_checkpoint);

// Reads every action of a checkpoint into `sink`: its files, then the sidecars they name.
// FILE_NOT_FOUND when a file is missing; DELTA_LOG_CORRUPT when a file is not a valid checkpoint.
Status ReadCheckpoint(FileSystem& fs, const CheckpointFiles& checkpoint, const ActionSink& sink);

// The checkpoint's Parquet schema as sluice writes it.
const TypePtr& CheckpointSchema();

// Writes the checkpoint of `snapshot` (its protocol, metadata, txns, domains, live files and the
// tombstones younger than delta.deletedFileRetentionDuration at `now_ms`), classic or V2 as the
// table's features say, then updates `_last_checkpoint` unless it already points at a newer
// checkpoint. A classic checkpoint that already exists is left alone. Errors are IO errors; the
// table stays readable whatever happens.
Status WriteCheckpoint(const Snapshot& snapshot, int64_t now_ms);

// Table properties holding durations ("interval 7 days", "interval 1 week"): the duration in ms.
// INVALID_OPTIONS when the text is not such an interval.
Result<int64_t> ParseIntervalMs(std::string_view text);

// Deletes the commits and checkpoints older than delta.logRetentionDuration (default 30 days)
// that no kept version needs: everything before the newest checkpoint all of whose preceding
// commits have expired. Returns how many files were deleted. Versions before that checkpoint can
// no longer be time-traveled to.
Result<int64_t> CleanUpExpiredLog(FileSystem& fs, const Snapshot& snapshot, int64_t now_ms);

}  // namespace sluice::delta
