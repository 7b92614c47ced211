// The file system of one Azure Blob Storage container: an ObjectStoreFileSystem (object_store.h,
// which says what each FileSystem operation does) over the Blob service's REST API:
//   Get / GetRange              Get Blob, with x-ms-range for the second
//   Put                         Put Blob (a block blob); If-None-Match: * when if_absent
//                               (409 BlobAlreadyExists or 412 → FILE_ALREADY_EXISTS)
//   Head                        Get Blob Properties
//   List                        List Blobs with prefix and delimiter `/`, every page (the service
//                               cannot start after a key: later pages are filtered here)
//   Delete                      Delete Blob
//   StartUpload                 Put Block per part (block ids of one length), Put Block List to
//                               publish; an abandoned upload's blocks are left uncommitted, and the
//                               service discards them after a week
// Paths are `az://container/key` (the account from the options) or
// `abfss://container@account.dfs.core.windows.net/key` (the account from the host; requests go to
// the same account's blob endpoint, which serves hierarchical-namespace accounts too).
//
// Authentication: Shared Key (an account key: each request signed with HMAC-SHA256, as
// AzureSharedKeyStringToSign says) or a SAS token (appended to every request's query). From, in
// order: the options `account_key` / `sas_token` (secret references), the option
// `connection_string`, the environment's AZURE_STORAGE_CONNECTION_STRING, then
// AZURE_STORAGE_ACCOUNT_KEY / AZURE_STORAGE_SAS_TOKEN. A connection string's BlobEndpoint (the
// emulator's `http://127.0.0.1:10000/devstoreaccount1`, `UseDevelopmentStorage=true`) is the
// endpoint unless the option `endpoint` is given.
//
// Retried: connection failures and HTTP 408/429/500/502/503/504 (ServerBusy, OperationTimedOut);
// 401/403 are STORAGE_ACCESS_DENIED with the service's code. Thread-safe.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sluice/storage/http_client.h"
#include "sluice/storage/object_store.h"

namespace sluice::storage {

struct AzureOptions {
  std::string account_name;  // for az:// paths; abfss:// paths name their own
  // The base64 account key (Shared Key), or a SAS token without its leading '?'; one of them.
  std::string account_key;
  std::string sas_token;
  // "https://host[:port][/path]" of the Blob service; "" is https://<account>.blob.core.windows.net.
  std::string endpoint;
  RetryPolicy retry;
  HttpClientOptions http;
  // part_size: bytes per staged block.
  ObjectStoreSettings settings;
};

// The options an `az://` or `abfss://` section accepts (docs/storage.md), validated like S3's, with
// the environment's settings filled in where the options are silent.
Result<AzureOptions> AzureOptionsFrom(const std::map<std::string, std::string>& given);

// The file system of the container `root` names: "az://container" or
// "abfss://container@account.dfs.core.windows.net". INVALID_STORAGE_URI when no account is known
// for an az:// root; STORAGE_CREDENTIALS_NOT_FOUND when neither a key nor a SAS token is.
Result<std::shared_ptr<ObjectStoreFileSystem>> NewAzureFileSystem(const std::string& root, AzureOptions options);

// Shared Key's string to sign (learn.microsoft.com: "Authorize with Shared Key", version
// 2015-02-21 and later): the method, the standard headers' values in their fixed order (an empty
// line for each absent one; Content-Length empty when 0), the `x-ms-` headers lower-cased and
// sorted as `name:value` lines, then the canonicalized resource: `/account` + the request's
// encoded path + each query parameter as `\nname:value` (names lower-cased and sorted, values
// decoded). `query` holds the parameters raw, as sent before encoding.
std::string AzureSharedKeyStringToSign(std::string_view method, const HttpHeaders& headers, std::string_view account,
                                       std::string_view encoded_path,
                                       const std::vector<std::pair<std::string, std::string>>& query);
// The account key's bytes from its base64 text; INVALID_STORAGE_URI when it is not base64.
Result<std::string> DecodeAccountKey(std::string_view base64);

// The Authorization header's value: "SharedKey account:base64(HMAC-SHA256(key, string_to_sign))".
// `key` is the account key's bytes (decoded from its base64).
std::string AzureSharedKeyAuthorization(std::string_view account, std::string_view key,
                                        std::string_view string_to_sign);

}  // namespace sluice::storage
