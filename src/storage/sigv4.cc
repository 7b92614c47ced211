#include "sluice/storage/sigv4.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <ctime>

#include <fmt/format.h>

#include "sluice/core/ascii.h"

namespace sluice::storage {
namespace {

std::string Hex(const unsigned char* bytes, size_t length) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(length * 2, '0');
  for (size_t i = 0; i < length; ++i) {
    out[2 * i] = kDigits[bytes[i] >> 4];
    out[2 * i + 1] = kDigits[bytes[i] & 15];
  }
  return out;
}

std::string HmacSha256(std::string_view key, std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()),
       data.size(), digest, &length);
  return std::string(reinterpret_cast<const char*>(digest), length);
}

// Lower-case name; value with surrounding spaces removed and inner runs of spaces made one.
std::string TrimValue(std::string_view value) {
  std::string out;
  bool space = false;
  for (char c : value) {
    if (c == ' ' || c == '\t') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

}  // namespace

std::string Sha256Hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha256(), nullptr);
  return Hex(digest, length);
}

std::string AmzDate(int64_t unix_ms) {
  std::time_t seconds = static_cast<std::time_t>(unix_ms / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[20];
  std::strftime(text, sizeof text, "%Y%m%dT%H%M%SZ", &utc);
  return text;
}

std::string UriEncode(std::string_view text, bool encode_slash) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
        c == '.' || c == '~' || (c == '/' && !encode_slash)) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kDigits[c >> 4];
      out += kDigits[c & 15];
    }
  }
  return out;
}

std::string CanonicalQuery(std::vector<std::pair<std::string, std::string>> query) {
  for (auto& [name, value] : query) {
    name = UriEncode(name, true);
    value = UriEncode(value, true);
  }
  std::sort(query.begin(), query.end());
  std::string out;
  for (const auto& [name, value] : query) {
    if (!out.empty()) out += '&';
    out += name;
    out += '=';
    out += value;
  }
  return out;
}

namespace {

struct CanonicalHeaders {
  std::string lines;   // "name:value\n" each
  std::string signed_names;  // "a;b;c"
};

CanonicalHeaders Canonicalize(const std::vector<std::pair<std::string, std::string>>& headers) {
  std::vector<std::pair<std::string, std::string>> sorted;
  sorted.reserve(headers.size());
  for (const auto& [name, value] : headers) sorted.emplace_back(AsciiLower(name), TrimValue(value));
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  CanonicalHeaders out;
  for (size_t i = 0; i < sorted.size(); ++i) {
    // Repeated names are one line, their values joined by commas in the order given.
    if (i > 0 && sorted[i].first == sorted[i - 1].first) {
      out.lines.back() = ',';
      out.lines += sorted[i].second + "\n";
      continue;
    }
    out.lines += sorted[i].first + ":" + sorted[i].second + "\n";
    if (!out.signed_names.empty()) out.signed_names += ';';
    out.signed_names += sorted[i].first;
  }
  return out;
}

}  // namespace

std::string CanonicalRequest(const SigV4Request& request) {
  CanonicalHeaders headers = Canonicalize(request.headers);
  return fmt::format("{}\n{}\n{}\n{}\n{}\n{}", request.method, request.encoded_path.empty() ? "/" : request.encoded_path,
                     CanonicalQuery(request.query), headers.lines, headers.signed_names, request.payload_sha256);
}

std::string SignV4(const AwsCredentials& credentials, const SigV4Scope& scope, std::string_view amz_date,
                   const SigV4Request& request) {
  const std::string_view day = amz_date.substr(0, 8);
  const std::string credential_scope = fmt::format("{}/{}/{}/aws4_request", day, scope.region, scope.service);
  const std::string string_to_sign = fmt::format("AWS4-HMAC-SHA256\n{}\n{}\n{}", amz_date, credential_scope,
                                                 Sha256Hex(CanonicalRequest(request)));
  std::string key = HmacSha256("AWS4" + credentials.secret_access_key, day);
  key = HmacSha256(key, scope.region);
  key = HmacSha256(key, scope.service);
  key = HmacSha256(key, "aws4_request");
  const std::string signature = HmacSha256(key, string_to_sign);
  return fmt::format("AWS4-HMAC-SHA256 Credential={}/{}, SignedHeaders={}, Signature={}", credentials.access_key_id,
                     credential_scope, Canonicalize(request.headers).signed_names,
                     Hex(reinterpret_cast<const unsigned char*>(signature.data()), signature.size()));
}

}  // namespace sluice::storage
