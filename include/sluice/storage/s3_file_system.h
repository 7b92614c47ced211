// S3FileSystem: the FileSystem of one S3 bucket, on AWS S3 or any store that speaks its API
// (MinIO, Cloudflare R2, Ceph RGW), over HTTPS with AWS Signature V4 (sigv4.h).
//
// Paths are URIs `s3://bucket/key`; a "directory" is a key prefix ending before a `/`. How each
// FileSystem operation maps to the API:
//   ReadFile          GetObject
//   OpenForRead       a GetObject of the first MiB (small files are then read in one request),
//                     ranged GetObjects past it (Parquet footers, column chunks)
//   OpenForWrite      one PutObject on Close, or a multipart upload once the file passes
//                     `multipart_part_size`: each part is uploaded while the writer fills the
//                     next; a file destroyed without Close aborts its upload (orphans of a killed
//                     process remain until the bucket's lifecycle rule
//                     AbortIncompleteMultipartUpload removes them, see docs/storage.md)
//   AtomicWrite       PutObject (atomic in S3)
//   PutIfAbsent       PutObject with If-None-Match: * (412 → FILE_ALREADY_EXISTS). The first
//                     PutIfAbsent of a file system checks that the store honours the condition
//                     and fails with STORAGE_CONDITIONAL_WRITE_UNSUPPORTED when it does not. A
//                     reply lost after the write happened is resolved by reading the object back.
//   List              ListObjectsV2 with prefix and delimiter `/`, every page
//   Stat / Exists     one ListObjectsV2 with the key as prefix: the object itself, or `key/` among
//                     the common prefixes (a directory)
//   Delete            DeleteObject; DeleteRecursively lists the prefix and deletes each key
//   CreateDirectories nothing (S3 has no directories)
//   Rename            copy of the bytes then DeleteObject (not atomic; no_replace by PutIfAbsent)
//   Lock              a lease (lease.h): generations put-if-absent, renewed by a heartbeat
// Every request is retried with exponential back-off and full jitter on connection failures,
// HTTP 500/502/503/504, 429 and the SlowDown/RequestTimeout/InternalError codes, up to
// `max_retries` times; HTTP 401/403 are STORAGE_ACCESS_DENIED with the store's code.
//
// Thread-safe, like every FileSystem.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "sluice/core/file_system.h"
#include "sluice/storage/aws_credentials.h"
#include "sluice/storage/http_client.h"
#include "sluice/storage/xml_reply.h"

namespace sluice::storage {

struct S3Options {
  // "https://host[:port]" of an S3-compatible store; "" is AWS: https://s3.<region>.amazonaws.com.
  std::string endpoint;
  std::string region = "us-east-1";
  // Bucket in the host name (bucket.s3.…) or in the path (host/bucket/…). Default: virtual-hosted
  // on AWS, path-style with an `endpoint`.
  std::optional<bool> virtual_hosted_style;
  AwsCredentialSettings credentials;
  int max_retries = 10;
  std::chrono::milliseconds retry_base_delay{100};
  std::chrono::milliseconds retry_max_delay{10'000};
  HttpClientOptions http;
  int64_t multipart_part_size = 16 << 20;  // at least 5 MiB, S3's smallest part but the last
  std::chrono::milliseconds lease_duration{60'000};
};

// The options a store's section accepts (docs/storage.md), validated: unknown keys, malformed
// values and literal secrets are INVALID_STORAGE_URI / CONNECTION_LITERAL_SECRET / UNRESOLVED_SECRET.
Result<S3Options> S3OptionsFrom(const std::map<std::string, std::string>& given);

class S3FileSystem final : public FileSystem, public std::enable_shared_from_this<S3FileSystem> {
 public:
  S3FileSystem(std::string bucket, S3Options options);
  ~S3FileSystem() override;

  Result<std::string> ReadFile(const std::string& path) override;
  Result<std::unique_ptr<RandomAccessFile>> OpenForRead(const std::string& path) override;
  Result<std::unique_ptr<WritableFile>> OpenForWrite(const std::string& path) override;
  Status AtomicWrite(const std::string& path, std::string_view data) override;
  Status PutIfAbsent(const std::string& path, std::string_view data) override;
  Result<FileInfo> Stat(const std::string& path) override;
  Result<bool> Exists(const std::string& path) override;
  Result<std::vector<FileInfo>> List(const std::string& directory, std::string_view prefix = "") override;
  Status Delete(const std::string& path) override;
  Status DeleteRecursively(const std::string& path) override;
  Status CreateDirectories(const std::string& path) override;
  Status Rename(const std::string& from, const std::string& to, bool no_replace) override;
  // A lease (lease.h) of `lease_duration`. The file system must be owned by a shared_ptr.
  Result<std::unique_ptr<FileLock>> Lock(const std::string& path) override;

  // Requests sent so far, retries included (for benchmarks and round-trip tests).
  int64_t requests_sent() const { return requests_sent_.load(); }

  // One signed request with retries; public for the multipart writer.
  struct Call {
    std::string method;
    std::string key;
    std::vector<std::pair<std::string, std::string>> query;
    HttpHeaders headers;
    std::string_view body;
  };
  // `ambiguous` (when not null) is set when an attempt before the answered one may have reached
  // the store (a connection lost after sending, a 5xx): the answer may then be to a repeat.
  Result<HttpResponse> Send(const Call& call, bool* ambiguous = nullptr);
  // The failure of an answered call: FILE_NOT_FOUND, STORAGE_ACCESS_DENIED or IO_ERROR.
  Status Failure(std::string_view operation, const std::string& key, const HttpResponse& response) const;
  std::string Uri(std::string_view key) const { return "s3://" + bucket_ + "/" + std::string(key); }

 private:
  Result<std::string> KeyOf(const std::string& path) const;
  // Every page of ListObjectsV2 under `prefix` (with the `/` delimiter when `by_folder`).
  Status ListPages(const std::string& prefix, bool by_folder, const std::function<void(ListPage&)>& visit);
  Status CheckConditionalWrites(const std::string& near_key);

  const std::string bucket_;
  const S3Options options_;
  HttpClient http_;
  AwsCredentialProvider credentials_;
  std::string base_url_;  // scheme://host[:port]
  std::string host_;      // the Host header
  std::string path_prefix_;  // "/bucket" for path-style, "" for virtual-hosted
  std::atomic<int64_t> requests_sent_{0};
  std::mutex probe_mutex_;
  bool conditional_writes_checked_ = false;
};

}  // namespace sluice::storage
