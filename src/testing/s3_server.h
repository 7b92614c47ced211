// S3Server: a real S3 implementation on loopback for the object-store tests: moto's server
// (`moto_server`, from the Python package index into tests/tools/venv by
// scripts/install-test-tools.sh; another executable with SLUICE_MOTO_SERVER). moto answers the S3
// API sluice uses — conditional PutObject (If-None-Match), multipart uploads, ranged GETs,
// ListObjectsV2 — and STS's AssumeRoleWithWebIdentity; it accepts any credentials.
//
// One server per test process (Shared()), started on first use on a free port, its log in a
// temporary folder, killed with the process. The environment gets test credentials
// (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY), AWS_ENDPOINT_URL pointing at the server,
// AWS_ALLOW_HTTP=true and AWS_EC2_METADATA_DISABLED=true, so DefaultFileSystem() (and delta-rs,
// started by a test) reach it with no options.
// Thread-safe.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>

#include "sluice/core/status.h"

namespace sluice::testing {

class S3Server {
 public:
  // The process's server; aborts the test binary with the server's log when it cannot start.
  static S3Server& Shared();

  std::string endpoint() const;  // "http://127.0.0.1:<port>"
  int port() const { return port_; }
  // Creates a bucket (any name valid in S3); OK when it exists.
  Status CreateBucket(const std::string& bucket);
  // A fresh bucket with a unique name ("sluice-test-<n>"), as "s3://<bucket>".
  std::string NewBucketUri();

  // Stops and starts the server again on the same port (moto keeps nothing: buckets are gone).
  void Restart();

 private:
  S3Server() = default;
  Status Launch();

  std::string directory_;
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace sluice::testing
