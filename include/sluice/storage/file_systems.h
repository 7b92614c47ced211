// Paths as users give them: a plain local path, `file:///path`, or an object store's URI
// (`s3://bucket/prefix`). DefaultFileSystem() serves all of them, choosing the store by each
// path's scheme, so tables on different stores mix in one pipeline and no caller needs to know
// where a path lives.
//
// An S3 bucket's options (endpoint, region, credentials, retries: s3_file_system.h) come from the
// longest prefix configured with ConfigureObjectStore (a pipeline's `object_stores` section), else
// from the environment alone (AWS_ENDPOINT_URL, AWS_REGION, the credential chain).
//
// Thread-safe. The file systems made for buckets live as long as the process.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "sluice/core/file_system.h"
#include "sluice/core/status.h"

namespace sluice::storage {

// The file system behind every path sluice is given.
std::shared_ptr<FileSystem> DefaultFileSystem();

// Options for the URIs starting with `uri_prefix` ("s3://bucket" or "s3://bucket/some/prefix"):
// validated now (INVALID_STORAGE_URI, UNRESOLVED_SECRET, CONNECTION_LITERAL_SECRET). Configuring a
// prefix again replaces its options for buckets not yet used.
Status ConfigureObjectStore(const std::string& uri_prefix, const std::map<std::string, std::string>& options);

// Whether `path` names an object store (s3://, az://, abfss://) rather than the local disk.
bool IsObjectStoreUri(std::string_view path);

// The path in the form every FileSystem call takes: an object store's URI checked (a valid bucket
// name, no empty, `.` or `..` segments) and without a trailing `/`; `file:///p` as `/p`; a
// relative local path made absolute and normalized. INVALID_STORAGE_URI for an unknown scheme or
// a malformed URI.
Result<std::string> ResolvePath(std::string_view path);

// ResolvePath's result, or `path` as given when ResolvePath refuses it: for callers that report a
// bad path at its first use (the file system's first call on it fails with INVALID_STORAGE_URI).
std::string AbsolutePath(std::string_view path);

}  // namespace sluice::storage
