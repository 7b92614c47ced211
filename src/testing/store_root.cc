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
  if (store == Store::kS3) {
    const std::string bucket = S3Server::Shared().NewBucketUri();
    // S3's smallest parts, so that tests reach multipart uploads with files of a few MiB.
    Status configured = storage::ConfigureObjectStore(bucket, {{"multipart_part_size", "5242880"}});
    if (!configured.ok()) ADD_FAILURE() << configured.ToString();
    path_ = bucket + "/root";
    return;
  }
  if (store == Store::kAzure) {
    const std::string container = AzureServer::Shared().NewContainerUri();
    // Small blocks, so that tests reach staged uploads with files of a few MiB.
    Status configured = storage::ConfigureObjectStore(container, {{"block_size", "5242880"}});
    if (!configured.ok()) ADD_FAILURE() << configured.ToString();
    path_ = container + "/root";
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
