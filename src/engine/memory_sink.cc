#include "sluice/engine/memory_sink.h"

#include <map>

namespace sluice::engine {

std::shared_ptr<MemoryTable> MemoryTable::Named(const std::string& name) {
  static std::mutex mutex;
  static auto* tables = new std::map<std::string, std::shared_ptr<MemoryTable>>();
  std::lock_guard lock(mutex);
  std::shared_ptr<MemoryTable>& table = (*tables)[name];
  if (!table) table = std::make_shared<MemoryTable>();
  return table;
}

std::vector<BatchPtr> MemoryTable::batches() const {
  std::lock_guard lock(mutex_);
  return batches_;
}

std::vector<int64_t> MemoryTable::batch_ids() const {
  std::lock_guard lock(mutex_);
  return batch_ids_;
}

int64_t MemoryTable::num_rows() const {
  std::lock_guard lock(mutex_);
  int64_t rows = 0;
  for (const BatchPtr& batch : batches_) rows += batch->num_rows();
  return rows;
}

int64_t MemoryTable::last_batch_id() const {
  std::lock_guard lock(mutex_);
  return last_batch_id_;
}

void MemoryTable::Append(int64_t batch_id, BatchPtr batch) {
  std::lock_guard lock(mutex_);
  batches_.push_back(std::move(batch));
  batch_ids_.push_back(batch_id);
  last_batch_id_ = std::max(last_batch_id_, batch_id);
}

Result<std::unique_ptr<BatchWriter>> MemorySink::BeginBatch(const BatchInfo& info) {
  return WholeBatchWriter::Concatenating(info.schema, [this, batch_id = info.batch_id](const RecordBatch& batch) {
    if (batch_id <= table_->last_batch_id()) return Status::OK();
    // Copying a RecordBatch copies its column pointers, not the data.
    table_->Append(batch_id, std::make_shared<const RecordBatch>(batch));
    return Status::OK();
  });
}

Status MemorySink::AddRealTimeRows(int64_t epoch_id, const RecordBatch& rows) {
  table_->Append(epoch_id, std::make_shared<const RecordBatch>(rows));
  return Status::OK();
}

}  // namespace sluice::engine
