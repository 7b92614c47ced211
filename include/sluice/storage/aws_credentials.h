// Where S3 requests get their credentials, in the order AWS's own tools look:
//   1. the store's options `access_key_id` + `secret_access_key` (+ `session_token`), which are
//      secret references (${env:…}, ${file:…}) like every secret sluice takes;
//   2. the environment: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN;
//   3. the shared files: AWS_SHARED_CREDENTIALS_FILE (default ~/.aws/credentials) and
//      AWS_CONFIG_FILE (default ~/.aws/config, sections `[profile NAME]`), profile from the
//      option `profile`, else AWS_PROFILE, else `default`;
//   4. a web identity: AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN (AWS_ROLE_SESSION_NAME
//      optional), exchanged with STS's AssumeRoleWithWebIdentity at AWS_ENDPOINT_URL_STS (default
//      https://sts.<region>.amazonaws.com);
//   5. the instance metadata service, IMDSv2 (a session token PUT, then the role's credentials) at
//      AWS_EC2_METADATA_SERVICE_ENDPOINT (default http://169.254.169.254), unless
//      AWS_EC2_METADATA_DISABLED=true.
// Temporary credentials (4, 5, and 1–3 when they expire) are fetched again 5 minutes before they
// expire. Nothing here logs or prints a key, a secret or a token.
//
// Thread-safe: Get() may be called from any thread.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "sluice/core/status.h"
#include "sluice/storage/http_client.h"
#include "sluice/storage/sigv4.h"

namespace sluice::storage {

struct AwsCredentialSettings {
  std::optional<AwsCredentials> given;  // from the options (1)
  std::string profile;                  // "" → AWS_PROFILE or "default"
  std::string region;                   // for STS's default endpoint
};

class AwsCredentialProvider {
 public:
  // `http` sends the STS and metadata requests; it must outlive the provider.
  AwsCredentialProvider(AwsCredentialSettings settings, HttpClient* http);

  // Valid credentials for at least the next 5 minutes, or STORAGE_CREDENTIALS_NOT_FOUND listing
  // the places looked at, or STORAGE_ACCESS_DENIED when STS or the metadata service refused.
  Result<AwsCredentials> Get();

 private:
  Result<AwsCredentials> Resolve();

  const AwsCredentialSettings settings_;
  HttpClient* const http_;
  std::mutex mutex_;
  std::optional<AwsCredentials> cached_;
};

// The profile's keys in the shared files, or nullopt when the files or the profile lack them.
// Exposed for tests. INVALID_STORAGE_URI is never returned; a file that cannot be read counts as
// absent.
std::optional<AwsCredentials> CredentialsFromSharedFiles(const std::string& credentials_file,
                                                         const std::string& config_file, const std::string& profile);

}  // namespace sluice::storage
