#include "testing/store_root.h"

#include <cstdlib>
#include <filesystem>

#include "sluice/storage/file_systems.h"
#include "testing/s3_server.h"

namespace sluice::testing {

std::string StoreName(const ::testing::TestParamInfo<Store>& info) {
  return info.param == Store::kLocal ? "Local" : "S3";
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
  char pattern[] = "/tmp/sluice-store-XXXXXX";
  path_ = mkdtemp(pattern) != nullptr ? pattern : "/tmp/sluice-store";
}

StoreRoot::~StoreRoot() {
  if (std::getenv("SLUICE_KEEP_TEST_DIRS") != nullptr) return;
  (void)file_system_->DeleteRecursively(path_);
}

}  // namespace sluice::testing
