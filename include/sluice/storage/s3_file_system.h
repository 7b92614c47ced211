// The file system of one S3 bucket, on AWS S3 or any store that speaks its API (MinIO,
// Cloudflare R2, Ceph RGW), over HTTPS with AWS Signature V4 (sigv4.h): an ObjectStoreFileSystem
// (object_store.h, which says what each FileSystem operation does) over these calls:
//   Get / GetRange              GetObject, with a Range for the second
//   Put                         PutObject; If-None-Match: * when if_absent (412 → FILE_ALREADY_EXISTS)
//   Head                        HeadObject
//   List                        ListObjectsV2 with prefix, start-after and delimiter `/`, every page
//   Delete                      DeleteObject
//   StartUpload                 CreateMultipartUpload, UploadPart, CompleteMultipartUpload; an
//                               abandoned upload is aborted (AbortMultipartUpload); those of a killed
//                               process remain until the bucket's lifecycle rule
//                               AbortIncompleteMultipartUpload removes them (docs/storage.md)
// Paths are URIs `s3://bucket/key`. Every request is retried on connection failures, HTTP
// 500/502/503/504, 429 and the SlowDown/RequestTimeout/InternalError codes; 401/403 are
// STORAGE_ACCESS_DENIED with the store's code.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "sluice/storage/aws_credentials.h"
#include "sluice/storage/http_client.h"
#include "sluice/storage/object_store.h"

namespace sluice::storage {

struct S3Options {
  // "https://host[:port]" of an S3-compatible store; "" is AWS: https://s3.<region>.amazonaws.com.
  std::string endpoint;
  std::string region = "us-east-1";
  // Bucket in the host name (bucket.s3.…) or in the path (host/bucket/…). Default: virtual-hosted
  // on AWS, path-style with an `endpoint`.
  std::optional<bool> virtual_hosted_style;
  AwsCredentialSettings credentials;
  RetryPolicy retry;
  HttpClientOptions http;
  // part_size: the multipart upload's, at least 5 MiB (S3's smallest part but the last).
  ObjectStoreSettings settings;
};

// The options a store's section accepts (docs/storage.md), validated: unknown keys, malformed
// values and literal secrets are INVALID_STORAGE_URI / CONNECTION_LITERAL_SECRET / UNRESOLVED_SECRET.
Result<S3Options> S3OptionsFrom(const std::map<std::string, std::string>& given);

// The file system of `bucket`.
std::shared_ptr<ObjectStoreFileSystem> NewS3FileSystem(std::string bucket, S3Options options);

}  // namespace sluice::storage
