#include "testing/store_root.h"

#include <cstdlib>
#include <filesystem>

#include "sluice/storage/file_systems.h"
#include "testing/azure_server.h"
#include "testing/s3_server.h"

namespace sluice::testing {

std::string StoreName(const ::testing::TestParamInfo<Store>& info) {
  switch (info.param) {
    case Store::kLocal:
      return "Local";
    case Store::kS3:
      return "S3";
    case Store::kAzure:
      return "Azure";
  }
  return "Unknown";
}

StoreRoot::StoreRoot(Store store) : file_system_(storage::DefaultFileSystem()) {
  if (store != Store::kLocal) {
    const bool s3 = store == Store::kS3;
    const std::string bucket = s3 ? S3Server::Shared().NewBucketUri() : AzureServer::Shared().NewContainerUri();
    // The stores' smallest sensible parts, so that tests reach uploads in parts with files of a
    // few MiB.
    Status configured =
        storage::ConfigureObjectStore(bucket, {{s3 ? "multipart_part_size" : "block_size", "5242880"}});
    if (!configured.ok()) ADD_FAILURE() << configured.ToString();
    path_ = bucket + "/root";
    return;
  }
  char pattern[] = "/tmp/sluice-store-XXXXXX";
  path_ = mkdtemp(pattern) != nullptr ? pattern : "/tmp/sluice-store";
}

StoreRoot::~StoreRoot() {
  if (std::getenv("SLUICE_KEEP_TEST_DIRS") != nullptr) return;
  (void)file_system_->DeleteRecursively(path_);
}

}  // namespace sluice::testing
