// StateStore: the versioned state of one stateful operator of a query, in
// `<checkpoint>/state/<operator>/`, as Spark's HDFS-backed state store keeps it.
//
// Batch N reads version N-1 and writes version N before the engine writes `commits/N`, so a
// batch run again after a crash starts from exactly the state its first run started from,
// whatever it wrote before the crash. Each version is a delta (`N.delta.parquet`: the rows of the
// keys batch N changed, each a whole row that replaces the key's earlier one); every
// `kSnapshotInterval`-th version is also written whole (`N.snapshot.parquet`). Loading version V
// reads the newest snapshot at or below V and the deltas after it, in order. Files are Parquet,
// written atomically (publishing writes of FileSystem), so any Parquet reader can inspect them.
//
// A snapshot is written off the batch's path: Write takes the whole state, then encodes and
// writes it on a thread of its own while the query goes on. Until the snapshot is published the
// deltas keep its version loadable (a load reads an older snapshot and more deltas), and a
// snapshot that fails is logged and left out the same way. The next Write, and the destructor,
// wait for it. The file system must be thread-safe (every FileSystem of sluice is).
//
// Not thread-safe otherwise; one query (holding its checkpoint's lock) uses a store at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "sluice/core/file_system.h"
#include "sluice/core/record_batch.h"
#include "sluice/core/status.h"

namespace sluice::engine {

class StateStore {
 public:
  static constexpr int64_t kSnapshotInterval = 10;
  // Versions kept loadable, as the offset log keeps batches (Checkpoint::kEntriesToKeep).
  static constexpr int64_t kVersionsToKeep = 100;

  StateStore(std::shared_ptr<FileSystem> file_system, std::string directory, TypePtr schema);
  StateStore(StateStore&&) = default;
  StateStore& operator=(StateStore&&) = default;
  // Waits for a snapshot still being written.
  ~StateStore();

  const std::string& directory() const { return directory_; }
  const TypePtr& schema() const { return schema_; }

  // The row sets making up `version`, to apply in order (a snapshot, then deltas); empty for
  // version -1 (before the first batch). CANNOT_LOAD_STATE_STORE when a file the version needs is
  // missing, unreadable, or of another schema.
  Result<std::vector<BatchPtr>> Load(int64_t version) const;
  // Writes `version`: `changed` as its delta and, every kSnapshotInterval versions, `all` (a
  // callback, so the whole state is built only when needed; called before Write returns) as its
  // snapshot, written after Write returns; then deletes the files no version of the last
  // kVersionsToKeep needs. Rewriting a version replaces it.
  Status Write(int64_t version, const RecordBatch& changed, const std::function<Result<BatchPtr>()>& all);

 private:
  std::string PathOf(int64_t version, bool snapshot) const;
  Result<BatchPtr> ReadFile(const std::string& path) const;
  Status Purge(int64_t version);
  // Waits for the snapshot being written, if any, and logs its failure.
  void AwaitSnapshot();

  std::shared_ptr<FileSystem> file_system_;
  std::string directory_;
  TypePtr schema_;
  std::future<Status> pending_snapshot_;
};

}  // namespace sluice::engine
