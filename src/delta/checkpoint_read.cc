#include <fmt/format.h>

#include "sluice/core/error_classes.h"
#include "sluice/delta/checkpoint.h"

namespace sluice::delta {

CheckpointFiles CheckpointFilesOf(std::string_view table_path, const LastCheckpoint& last_checkpoint) {
  CheckpointFiles files{last_checkpoint.version, {}};
  int64_t parts = last_checkpoint.parts.value_or(1);
  if (parts <= 1) {
    files.paths.push_back(ClassicCheckpointPath(table_path, last_checkpoint.version));
    return files;
  }
  for (int64_t part = 1; part <= parts; ++part) {
    files.paths.push_back(fmt::format("{}/{:020d}.checkpoint.{:010d}.{:010d}.parquet", LogDirectory(table_path),
                                      last_checkpoint.version, part, parts));
  }
  return files;
}

Status ReadCheckpoint(FileSystem&, const CheckpointFiles& checkpoint, const ActionSink&) {
  return Status::Error(errors::kNotImplemented,
                       fmt::format("reading the Parquet checkpoint of version {} is not available in this build",
                                   checkpoint.version));
}

}  // namespace sluice::delta
