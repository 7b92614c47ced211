#include "sluice/connectors/pg_real_time_writer.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <limits>
#include <mutex>
#include <thread>

#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"

namespace sluice::connectors {

namespace {

using Clock = std::chrono::steady_clock;

// Rows of a buffered piece not yet taken into a chunk start at `offset`.
struct Piece {
  BatchPtr batch;
  int64_t offset = 0;
  Clock::time_point arrived;
};

}  // namespace

struct PgRealTimeWriter::Task {
  std::unique_ptr<PgUpsertWriter> writer;
  std::string progress_id;

  std::mutex mu;
  std::condition_variable wake;   // to the flush thread: rows came, the epoch ends, or stop
  std::condition_variable space;  // to Add / EndEpoch: room in the buffer, buffer drained, or an error
  // Guarded by mu.
  std::deque<Piece> pending;
  int64_t pending_rows = 0;
  bool flushing = false;
  bool draining = false;
  bool stopping = false;
  Status error;
  int64_t epoch = -1;
  int64_t taken = 0;  // rows of the epoch taken out of the buffer so far
  int64_t flushes = 0;

  // Used by the flush thread only.
  int64_t known_epoch = -1;
  int64_t committed = 0;  // rows of known_epoch this delivery skips as already in the table
  Clock::time_point last_flush = Clock::now();  // when the latest chunk was taken (or the task began)
  std::vector<int64_t> row_ids;
  std::thread thread;
};

std::string RealTimeProgressId(const std::string& query_id, size_t task) {
  return query_id + "/rt" + std::to_string(task);
}

PgRealTimeWriter::PgRealTimeWriter(std::vector<std::unique_ptr<PgUpsertWriter>> writers,
                                   PgRealTimeWriterOptions options)
    : options_(std::move(options)) {
  for (size_t t = 0; t < writers.size(); ++t) {
    auto task = std::make_unique<Task>();
    task->writer = std::move(writers[t]);
    task->progress_id = RealTimeProgressId(options_.query_id, t);
    tasks_.push_back(std::move(task));
  }
  for (auto& task : tasks_) task->thread = std::thread([this, t = task.get()] { FlushLoop(t); });
}

PgRealTimeWriter::~PgRealTimeWriter() {
  for (auto& task : tasks_) {
    std::lock_guard lock(task->mu);
    task->stopping = true;
    task->wake.notify_all();
  }
  for (auto& task : tasks_) task->thread.join();
}

int64_t PgRealTimeWriter::flushes() const {
  int64_t total = 0;
  for (const auto& task : tasks_) {
    std::lock_guard lock(task->mu);
    total += task->flushes;
  }
  return total;
}

Status PgRealTimeWriter::Add(int64_t epoch_id, const RecordBatch& rows) {
  if (rows.num_rows() == 0) return Status::OK();
  if (epoch_id != epoch_) {
    epoch_ = epoch_id;
    epoch_rows_ = 0;
  }
  // Copying a RecordBatch copies its column pointers, not the data.
  auto whole = std::make_shared<const RecordBatch>(rows);
  SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> order, tasks_[0]->writer->CanonicalOrder(whole));
  std::vector<BatchPtr> parts(tasks_.size());
  if (tasks_.size() == 1) {
    bool in_order = static_cast<int64_t>(order.size()) == rows.num_rows();
    for (size_t i = 0; in_order && i < order.size(); ++i) in_order = order[i] == static_cast<int64_t>(i);
    parts[0] = in_order ? whole : Take(whole, order);
  } else {
    // By key hash, so one key always goes through one connection; key-less rows round-robin by
    // their place in the epoch.
    std::vector<int> key_columns;
    for (const std::string& k : tasks_[0]->writer->upsert_key()) key_columns.push_back(rows.schema()->FieldIndex(k));
    std::vector<uint64_t> hashes;
    if (!key_columns.empty()) hashes = HashRows(whole, key_columns);
    std::vector<std::vector<int64_t>> indices(tasks_.size());
    for (size_t i = 0; i < order.size(); ++i) {
      const uint64_t h = key_columns.empty() ? static_cast<uint64_t>(epoch_rows_) + i : hashes[order[i]];
      indices[h % tasks_.size()].push_back(order[i]);
    }
    for (size_t t = 0; t < tasks_.size(); ++t) {
      if (!indices[t].empty()) parts[t] = Take(whole, indices[t]);
    }
  }
  epoch_rows_ += static_cast<int64_t>(order.size());
  for (size_t t = 0; t < tasks_.size(); ++t) {
    if (parts[t] == nullptr) continue;
    Task& task = *tasks_[t];
    std::unique_lock lock(task.mu);
    if (task.epoch != epoch_id && (task.pending_rows > 0 || task.flushing)) {
      // A new epoch without EndEpoch of the last: its rows go first, under their own epoch id.
      task.draining = true;
      task.wake.notify_all();
      task.space.wait(lock, [&] { return !task.error.ok() || (task.pending_rows == 0 && !task.flushing); });
      task.draining = false;
    }
    task.space.wait(lock, [&] { return !task.error.ok() || task.pending_rows < options_.batch_size; });
    if (!task.error.ok()) return task.error;
    if (task.epoch != epoch_id) {
      task.epoch = epoch_id;
      task.taken = 0;
    }
    task.pending.push_back(Piece{parts[t], 0, Clock::now()});
    task.pending_rows += parts[t]->num_rows();
    task.wake.notify_all();
  }
  return Status::OK();
}

Status PgRealTimeWriter::EndEpoch(int64_t) {
  for (auto& task : tasks_) {
    std::lock_guard lock(task->mu);
    task->draining = true;
    task->wake.notify_all();
  }
  Status result;
  for (auto& task : tasks_) {
    std::unique_lock lock(task->mu);
    task->space.wait(lock, [&] { return !task->error.ok() || (task->pending_rows == 0 && !task->flushing); });
    task->draining = false;
    if (result.ok()) result = task->error;
  }
  return result;
}

void PgRealTimeWriter::FlushLoop(Task* task) {
  std::unique_lock lock(task->mu);
  while (!task->stopping) {
    if (task->pending_rows == 0 || !task->error.ok()) {
      task->wake.wait(lock);
      continue;
    }
    if (task->pending_rows < options_.batch_size && !task->draining) {
      // Due when the oldest row has waited the interval, or at once when the last flush is an
      // interval ago: rows that come in pieces (a source read every so often) then do not wait
      // a whole interval after the source has already held them, and there are still at most
      // about one flush per interval besides full batches.
      const Clock::time_point due =
          std::min(task->pending.front().arrived, task->last_flush) + options_.batch_interval;
      if (Clock::now() < due) {
        task->wake.wait_until(lock, due);
        continue;
      }
    }
    // Take the oldest rows, at most batch_size, as one chunk.
    std::vector<BatchPtr> segments;
    int64_t n = 0;
    while (n < options_.batch_size && !task->pending.empty()) {
      Piece& piece = task->pending.front();
      const int64_t take = std::min(piece.batch->num_rows() - piece.offset, options_.batch_size - n);
      segments.push_back(take == piece.batch->num_rows() ? piece.batch : Slice(piece.batch, piece.offset, take));
      piece.offset += take;
      n += take;
      if (piece.offset == piece.batch->num_rows()) task->pending.pop_front();
    }
    task->pending_rows -= n;
    task->last_flush = Clock::now();
    const int64_t epoch = task->epoch;
    const int64_t first = task->taken;
    task->taken += n;
    task->flushing = true;
    task->space.notify_all();
    lock.unlock();

    Result<bool> flushed = WriteChunk(task, epoch, first, segments);

    lock.lock();
    task->flushing = false;
    if (!flushed.ok()) {
      task->error = flushed.status();
      task->pending.clear();
      task->pending_rows = 0;
    } else if (*flushed) {
      ++task->flushes;
    }
    task->space.notify_all();
  }
}

Result<bool> PgRealTimeWriter::WriteChunk(Task* task, int64_t epoch, int64_t first,
                                          const std::vector<BatchPtr>& segments) {
  int64_t n = 0;
  for (const BatchPtr& s : segments) n += s->num_rows();
  const int64_t end = first + n;
  if (epoch != task->known_epoch) {
    SLUICE_ASSIGN_OR_RETURN(task->committed, task->writer->LastCommittedChunk(task->progress_id, epoch));
    task->known_epoch = epoch;
    SLUICE_RETURN_IF_ERROR(task->writer->ForgetBatchesBefore(task->progress_id, epoch));
  }
  if (end > std::numeric_limits<int32_t>::max()) {
    return Status::Error(errors::kPgQueryFailed, "an epoch of more than 2^31 rows per writer task; use a shorter "
                                                 "real_time checkpoint interval");
  }
  // Rows of the epoch that an earlier delivery already committed are not written again.
  if (end <= task->committed) return false;
  const int64_t skip = std::max<int64_t>(0, task->committed - first);
  BatchPtr chunk = segments[0];
  if (segments.size() > 1) {
    SLUICE_ASSIGN_OR_RETURN(chunk, Concatenate(segments));
  }
  task->row_ids.resize(n - skip);
  for (int64_t i = 0; i < n - skip; ++i) task->row_ids[i] = skip + i;
  SLUICE_ASSIGN_OR_RETURN(int64_t written,
                          task->writer->WriteChunk(task->progress_id, epoch, static_cast<int32_t>(end), *chunk,
                                                   task->row_ids));
  return written > 0;
}

}  // namespace sluice::connectors
