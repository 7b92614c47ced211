// AWS Signature Version 4: the Authorization header of a request to S3, STS or any AWS-compatible
// service (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html).
// Pure functions over their arguments: thread-safe, no I/O, no clock (the caller passes the time).
//
//   SigV4Request request{"GET", "/my-key", {{"list-type", "2"}}, {{"host", "b.s3.amazonaws.com"},
//                        {"x-amz-date", "20260101T000000Z"}, {"x-amz-content-sha256", hash}}, hash};
//   std::string authorization = SignV4(credentials, {"eu-west-1", "s3"}, "20260101T000000Z", request);
//
// Every header given is signed (names lower-cased, values' surrounding and repeated spaces
// trimmed, sorted by name); the caller sends the same headers beside the returned Authorization
// value. The result never contains the secret key; it is a MAC computed from it.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::storage {

struct AwsCredentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token = {};  // empty for long-term keys
  int64_t expires_at_ms = 0;  // 0: does not expire
};

struct SigV4Scope {
  std::string region;   // "us-east-1"
  std::string service;  // "s3", "sts"
};

struct SigV4Request {
  std::string method;
  // The path exactly as sent on the wire: already percent-encoded (UriEncode(key, false)), with a
  // leading '/'. S3 signs it as sent, without encoding it a second time.
  std::string encoded_path;
  // Query parameters, raw (not encoded): the signer encodes and sorts them. A parameter without a
  // value ("?uploads") has an empty value.
  std::vector<std::pair<std::string, std::string>> query;
  std::vector<std::pair<std::string, std::string>> headers;
  // Hex SHA-256 of the body, or "UNSIGNED-PAYLOAD".
  std::string payload_sha256;
};

// The value of the Authorization header. `amz_date` is the request time as "YYYYMMDDTHHMMSSZ"
// (it must equal the x-amz-date header the request carries).
std::string SignV4(const AwsCredentials& credentials, const SigV4Scope& scope, std::string_view amz_date,
                   const SigV4Request& request);

// The canonical request the signature is computed over (for tests and for diagnosing a store that
// answers SignatureDoesNotMatch).
std::string CanonicalRequest(const SigV4Request& request);

// RFC 3986 percent-encoding as SigV4 requires: letters, digits and `-_.~` stay, every other byte
// becomes %XY (upper-case hex); `/` stays unless `encode_slash`.
std::string UriEncode(std::string_view text, bool encode_slash);

// The query string as sent and signed: parameters encoded, sorted by name then value, joined by &.
std::string CanonicalQuery(std::vector<std::pair<std::string, std::string>> query);

std::string Sha256Hex(std::string_view data);
// "YYYYMMDDTHHMMSSZ" for a Unix time in milliseconds.
std::string AmzDate(int64_t unix_ms);

}  // namespace sluice::storage
