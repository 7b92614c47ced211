#include "engine/piece_pipe.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace sluice::engine {
namespace {

// The pieces between the reading and the writing thread.
struct Channel {
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<BatchPtr> waiting;
  bool read_done = false;
  Status write_status;
};

void AddPieces(Channel& channel, BatchWriter& writer) {
  while (true) {
    BatchPtr piece;
    {
      std::unique_lock lock(channel.mutex);
      channel.changed.wait(lock, [&] { return !channel.waiting.empty() || channel.read_done; });
      if (channel.waiting.empty()) return;
      piece = std::move(channel.waiting.front());
      channel.waiting.pop_front();
    }
    channel.changed.notify_all();
    Status added = writer.Add(std::move(piece));
    if (!added.ok()) {
      std::lock_guard lock(channel.mutex);
      channel.write_status = std::move(added);
      channel.waiting.clear();
      channel.changed.notify_all();
      return;
    }
  }
}

}  // namespace

PipeOutcome PipePieces(Source& source, const std::string& start, const std::string& end, BatchWriter& writer,
                       size_t capacity) {
  Channel channel;
  PipeOutcome outcome;
  std::thread adder([&] { AddPieces(channel, writer); });
  outcome.read = source.ReadPieces(start, end, [&](BatchPtr piece) -> Status {
    outcome.rows += piece->num_rows();
    std::unique_lock lock(channel.mutex);
    channel.changed.wait(lock, [&] { return channel.waiting.size() < capacity || !channel.write_status.ok(); });
    if (!channel.write_status.ok()) return channel.write_status;
    channel.waiting.push_back(std::move(piece));
    lock.unlock();
    channel.changed.notify_all();
    return Status::OK();
  });
  {
    std::lock_guard lock(channel.mutex);
    channel.read_done = true;
    // A failed read's pieces are never written.
    if (!outcome.read.ok()) channel.waiting.clear();
  }
  channel.changed.notify_all();
  adder.join();
  outcome.write = std::move(channel.write_status);
  return outcome;
}

}  // namespace sluice::engine
