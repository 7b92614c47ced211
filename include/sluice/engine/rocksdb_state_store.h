// RocksDbStateStore: the versioned state of one stateful operator kept in RocksDB, for state
// larger than memory (the `rocksdb` state store; StateStore keeps it in memory and Parquet files).
//
// The operator holds only the keys of the batch at hand and asks this store (its StateBacking)
// for the rows of the others. The working database lives in a private folder on local disk,
// `$TMPDIR/sluice-state/<pid>-XXXXXX`, removed with the store (and, when a process was killed, by
// the next store opened on the machine). Its versions are kept in the operator's state
// folder `directory` on `file_system` (the checkpoint's, so local disk or an object store), as
// Spark's RocksDB state store keeps them:
//   sst/<number>-<uuid>.sst   the database's table files, each copied once and shared by versions
//   <N>.<name>                version N's other files (CURRENT, MANIFEST-..., OPTIONS-...)
//   <N>.rocksdb               version N: its row count and the files above it is made of, written
//                             last (a version without it does not exist)
// Batch N loads version N-1 and writes version N before the engine writes `commits/N`; a batch
// run again after a crash loads version N-1 from these files, so it starts from exactly the state
// its first run started from. Versions older than the last StateStore::kVersionsToKeep are purged,
// and table files no kept version names with them.
//
// Not thread-safe (RocksDB's own threads compact in the background); one query, holding its
// checkpoint's lock, uses a store at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "sluice/core/file_system.h"
#include "sluice/core/record_batch.h"
#include "sluice/core/status.h"
#include "sluice/engine/stateful_operator.h"

namespace rocksdb {
class DB;
}

namespace sluice::engine {

class RocksDbStateStore final : public StateBacking {
 public:
  // `schema`: the operator's state rows, whose first `key_columns` columns are the key. IO_ERROR
  // when the temporary working folder cannot be made.
  static Result<std::unique_ptr<RocksDbStateStore>> Open(std::shared_ptr<FileSystem> file_system,
                                                         std::string directory, TypePtr schema, int key_columns);
  ~RocksDbStateStore() override;

  const std::string& directory() const { return directory_; }

  // Makes the working database hold version `version` (-1: empty), copying its files from the
  // state folder unless it holds exactly that version already. CANNOT_LOAD_STATE_STORE when the
  // version or a file it names is missing or unreadable, or the folder holds another state store's
  // files.
  Status Load(int64_t version);
  // Writes `changed` (state rows; each replaces its key's row) on top of the version loaded, which
  // must be `version - 1`, and keeps the result as version `version` in the state folder. After a
  // failure the working database holds no known version: Load again.
  Status Write(int64_t version, const RecordBatch& changed);

  // The rows of the version loaded or last written.
  int64_t num_rows() const { return num_rows_; }
  // What the working database holds in memory (memtables, cached blocks), roughly.
  int64_t memory_bytes() const;

  Result<BatchPtr> Find(const std::vector<ColumnPtr>& keys, const std::vector<int64_t>& rows,
                        std::vector<int64_t>* found) override;
  Status ForEach(const std::function<Status(const RecordBatch&)>& visit) override;

 private:
  RocksDbStateStore(std::shared_ptr<FileSystem> file_system, std::string directory, TypePtr schema, int key_columns,
                    std::string working);
  Status OpenDatabase();
  void CloseDatabase();
  Status Keep(int64_t version);
  Status Purge(int64_t version);

  std::shared_ptr<FileSystem> file_system_;
  std::string directory_;
  TypePtr schema_;
  int key_columns_;
  std::string working_;  // the local folder of the working database
  std::unique_ptr<rocksdb::DB> db_;
  static constexpr int64_t kUnknown = -2;
  int64_t loaded_ = kUnknown;
  int64_t num_rows_ = 0;
  // Table files of the working database already in the state folder: local name -> stored name.
  std::map<std::string, std::string> stored_;
  // The keys Find was asked for since the last Write, and whether it found each: Write counts the
  // new keys without reading them again.
  std::unordered_map<std::string, bool> asked_;
};

// Version N's file in the state folder, as RocksDbStateStore writes and reads it: its row count and
// its files, each a local name and the name stored in the state folder. Exposed for the fuzz test.
struct RocksDbVersion {
  int64_t rows = 0;
  std::map<std::string, std::string> files;
};
std::string FormatRocksDbVersion(const RocksDbVersion& version);
// CANNOT_LOAD_STATE_STORE for text that is not a version file (names with '/' or blanks included,
// except stored table files under sst/).
Result<RocksDbVersion> ParseRocksDbVersion(std::string_view text);

}  // namespace sluice::engine
