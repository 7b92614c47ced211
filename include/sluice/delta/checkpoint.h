// Checkpoints (PROTOCOL.md, "Checkpoints", "Checkpoint Schema"): the reconciled state of a table
// at one version, stored as Parquet so that readers skip replaying the log before it.
//
// Thread-safe as the FileSystem is.
#pragma once

#include <functional>

#include "sluice/core/file_system.h"
#include "sluice/delta/actions.h"
#include "sluice/delta/log.h"

namespace sluice::delta {

// Receives the actions of a checkpoint one by one, in file order.
using ActionSink = std::function<void(Action&&)>;

// The files of the checkpoint that `_last_checkpoint` points to (classic, or `parts` parts).
CheckpointFiles CheckpointFilesOf(std::string_view table_path, const LastCheckpoint& last_checkpoint);

// Reads every action of a classic or multi-part V1 checkpoint into `sink`. FILE_NOT_FOUND when a
// file is missing; DELTA_LOG_CORRUPT when a file is not a valid checkpoint.
Status ReadCheckpoint(FileSystem& fs, const CheckpointFiles& checkpoint, const ActionSink& sink);

}  // namespace sluice::delta
