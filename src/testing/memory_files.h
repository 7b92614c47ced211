// Files held in memory, for tests of code that writes or reads through the FileSystem file
// interfaces (Parquet writers and readers) without touching the disk.
#pragma once

#include <string>
#include <utility>

#include "sluice/core/file_system.h"

namespace sluice::testing {

// A WritableFile appending to a string the test owns (which must outlive it).
class StringWritableFile final : public WritableFile {
 public:
  explicit StringWritableFile(std::string* out) : out_(out) {}
  Status Append(std::string_view data) override {
    out_->append(data);
    return Status::OK();
  }
  int64_t Tell() const override { return static_cast<int64_t>(out_->size()); }
  Status Close() override { return Status::OK(); }

 private:
  std::string* out_;
};

// A RandomAccessFile over bytes it owns; reads past the end are IO_ERROR, as on disk.
class StringRandomAccessFile final : public RandomAccessFile {
 public:
  explicit StringRandomAccessFile(std::string data) : data_(std::move(data)) {}
  int64_t Size() const override { return static_cast<int64_t>(data_.size()); }
  Status ReadAt(int64_t offset, int64_t length, std::string* out) const override {
    if (offset < 0 || length < 0 || offset + length > Size()) return Status::Error("IO_ERROR", "read past the end");
    out->assign(data_, static_cast<size_t>(offset), static_cast<size_t>(length));
    return Status::OK();
  }

 private:
  std::string data_;
};

}  // namespace sluice::testing
