// The state a query's operators keep between batches, version by version: one store per stateful
// operator of the chain, at `<checkpoint>/state/<k>/` for the k-th of them — a StateStore (the
// memory state store) or a RocksDbStateStore (the rocksdb one). Private to the engine; used from
// the thread that runs the query's batches.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sluice/core/file_system.h"
#include "sluice/engine/operator.h"
#include "sluice/engine/progress.h"
#include "sluice/engine/rocksdb_state_store.h"
#include "sluice/engine/state_store.h"
#include "sluice/engine/streaming_query.h"

namespace sluice::engine {

class QueryState {
 public:
  QueryState(std::shared_ptr<FileSystem> file_system, std::string checkpoint_location, StateStoreKind kind);

  // Makes the chain's stateful operators hold state version `version` (-1: none), loading it
  // unless they hold exactly that version already (with rocksdb: their backing holds it, and the
  // operators hold nothing).
  Status Load(OperatorChain& chain, int64_t version);
  // Writes what batch `batch_id` changed as version `batch_id` (after the chain's Finish).
  Status Save(OperatorChain& chain, int64_t batch_id);
  // The operators' state is no longer a known version (a batch failed, the chain was bound again).
  void Forget() { loaded_.clear(); }

  // The stateful operators' figures for the last Save.
  const std::vector<StateOperatorProgress>& progress() const { return progress_; }

 private:
  std::string DirectoryOf(size_t k) const { return checkpoint_location_ + "/state/" + std::to_string(k); }

  std::shared_ptr<FileSystem> file_system_;
  std::string checkpoint_location_;
  StateStoreKind kind_;
  // One per stateful operator, of the kind above.
  std::vector<StateStore> stores_;
  std::vector<std::unique_ptr<RocksDbStateStore>> rocksdb_stores_;
  // The operators holding `loaded_version_`; empty when no version is known to be held.
  std::vector<StatefulOperator*> loaded_;
  int64_t loaded_version_ = -1;
  std::vector<StateOperatorProgress> progress_;
};

}  // namespace sluice::engine
