// StoreRoot: an empty folder on one of the stores sluice writes to, for suites that run the same
// tests on the local disk and on an object store (INSTANTIATE_TEST_SUITE_P over kAllStores):
//
//   class MyTest : public ::testing::TestWithParam<Store> {
//     StoreRoot root_{GetParam()};   // root_.path() is "/tmp/…", "s3://sluice-test-…" or "az://sluice-test-…"
//   };
//   INSTANTIATE_TEST_SUITE_P(Stores, MyTest, ::testing::ValuesIn(kAllStores), StoreName);
//
// The S3 root is a fresh bucket of the process's S3Server (s3_server.h), the Azure root a fresh
// container of its AzureServer (azure_server.h). The folder and everything
// in it is removed on destruction. file_system() is storage::DefaultFileSystem(), which serves
// both kinds of path.
#pragma once

#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "sluice/core/file_system.h"

namespace sluice::testing {

enum class Store { kLocal, kS3, kAzure };
inline constexpr Store kAllStores[] = {Store::kLocal, Store::kS3, Store::kAzure};

std::string StoreName(const ::testing::TestParamInfo<Store>& info);

class StoreRoot {
 public:
  explicit StoreRoot(Store store);
  ~StoreRoot();
  StoreRoot(const StoreRoot&) = delete;
  StoreRoot& operator=(const StoreRoot&) = delete;

  const std::string& path() const { return path_; }
  std::string Join(const std::string& relative) const { return path_ + "/" + relative; }
  const std::shared_ptr<FileSystem>& file_system() const { return file_system_; }

 private:
  std::string path_;
  std::shared_ptr<FileSystem> file_system_;
};

}  // namespace sluice::testing
