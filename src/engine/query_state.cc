#include "engine/query_state.h"

#include <chrono>

#include "sluice/core/error_classes.h"

namespace sluice::engine {

QueryState::QueryState(std::shared_ptr<FileSystem> file_system, std::string checkpoint_location,
                       StateStoreKind kind)
    : file_system_(std::move(file_system)), checkpoint_location_(std::move(checkpoint_location)), kind_(kind) {}

Status QueryState::Load(OperatorChain& chain, int64_t version) {
  std::vector<StatefulOperator*> operators = chain.stateful();
  if (!loaded_.empty() && operators == loaded_ && version == loaded_version_) return Status::OK();
  loaded_.clear();
  for (StatefulOperator* op : operators) op->set_backing(nullptr);
  if (kind_ == StateStoreKind::kRocksDb) {
    rocksdb_stores_.clear();
    for (size_t k = 0; k < operators.size(); ++k) {
      SLUICE_ASSIGN_OR_RETURN(auto store, RocksDbStateStore::Open(file_system_, DirectoryOf(k),
                                                                  operators[k]->state_schema(),
                                                                  operators[k]->num_key_columns()));
      rocksdb_stores_.push_back(std::move(store));
    }
    for (size_t k = 0; k < operators.size(); ++k) {
      SLUICE_RETURN_IF_ERROR(rocksdb_stores_[k]->Load(version));
      operators[k]->set_backing(rocksdb_stores_[k].get());
      operators[k]->Reset();
    }
  } else {
    stores_.clear();
    for (size_t k = 0; k < operators.size(); ++k) {
      StatefulOperator* op = operators[k];
      stores_.emplace_back(file_system_, DirectoryOf(k), op->state_schema());
      op->Reset();
      SLUICE_ASSIGN_OR_RETURN(std::vector<BatchPtr> parts, stores_.back().Load(version));
      for (const BatchPtr& part : parts) SLUICE_RETURN_IF_ERROR(op->Load(*part));
      op->ClearChanges();
    }
  }
  loaded_ = std::move(operators);
  loaded_version_ = version;
  return Status::OK();
}

Status QueryState::Save(OperatorChain& chain, int64_t batch_id) {
  std::vector<StatefulOperator*> operators = chain.stateful();
  if (operators != loaded_) {
    return Status::Error(errors::kInternalError, "the query's state was not loaded before its batch");
  }
  progress_.clear();
  for (size_t k = 0; k < operators.size(); ++k) {
    StatefulOperator* op = operators[k];
    const auto started = std::chrono::steady_clock::now();
    SLUICE_ASSIGN_OR_RETURN(BatchPtr changed, op->ChangedState());
    int64_t rows = op->num_rows();
    int64_t memory = op->memory_bytes();
    if (kind_ == StateStoreKind::kRocksDb) {
      SLUICE_RETURN_IF_ERROR(rocksdb_stores_[k]->Write(batch_id, *changed));
      rows = rocksdb_stores_[k]->num_rows();
      memory += rocksdb_stores_[k]->memory_bytes();
    } else {
      SLUICE_RETURN_IF_ERROR(stores_[k].Write(batch_id, *changed, [op] { return op->State(); }));
    }
    progress_.push_back(StateOperatorProgress{
        std::string(op->name()), rows, op->num_changed(),
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count(),
        memory});
    op->ClearChanges();
    // With rocksdb the operator holds only the batch's keys, and lets them go with the batch.
    if (kind_ == StateStoreKind::kRocksDb) op->Reset();
  }
  loaded_version_ = batch_id;
  return Status::OK();
}

}  // namespace sluice::engine
