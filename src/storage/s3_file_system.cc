#include "sluice/storage/s3_file_system.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <future>
#include <thread>

#include <fmt/format.h>

#include "sluice/core/clock.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/options.h"
#include "sluice/storage/lease.h"
#include "sluice/storage/xml_reply.h"

namespace sluice::storage {
namespace {

using std::chrono::duration_cast;
using std::chrono::milliseconds;

constexpr OptionSpec kS3OptionSpecs[] = {
    {"endpoint", OptionType::kString, std::nullopt, false,
     "http(s)://host[:port] of an S3-compatible store; AWS's regional endpoint when absent"},
    {"region", OptionType::kString, std::nullopt, false, "the bucket's region; AWS_REGION, else us-east-1"},
    {"virtual_hosted_style", OptionType::kBool, std::nullopt, false,
     "bucket in the host name (true) or the path (false); true on AWS, false with an endpoint"},
    {"access_key_id", OptionType::kSecret, std::nullopt, false, "a reference to the access key id"},
    {"secret_access_key", OptionType::kSecret, std::nullopt, false, "a reference to the secret access key"},
    {"session_token", OptionType::kSecret, std::nullopt, false, "a reference to a session token"},
    {"profile", OptionType::kString, std::nullopt, false, "the profile of the shared credentials and config files"},
    {"max_retries", OptionType::kInt, "10", false, "retries of a failed request", {}, 0, 100},
    {"retry_base_delay", OptionType::kDuration, "100ms", false, "the first retry's longest wait"},
    {"retry_max_delay", OptionType::kDuration, "10s", false, "the longest wait between retries"},
    {"connect_timeout", OptionType::kDuration, "10s", false, "longest wait for a connection"},
    {"request_timeout", OptionType::kDuration, "60s", false, "longest wait for one request's answer"},
    {"multipart_part_size", OptionType::kLong, "16777216", false, "bytes per part of a multipart upload", {},
     5 * 1024 * 1024, 5.0 * 1024 * 1024 * 1024},
    {"lease_duration", OptionType::kDuration, "60s", false,
     "how long a checkpoint's lease outlives its last renewal (a killed process holds it that long)"},
    {"ca_file", OptionType::kString, std::nullopt, false, "a PEM bundle of the CAs that sign the store's certificate"},
};

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

bool Retriable(const HttpResponse& response) {
  if (response.status == 500 || response.status == 502 || response.status == 503 || response.status == 504 ||
      response.status == 429) {
    return true;
  }
  if (response.status == 400 || response.status == 409) {
    const std::string code = ParseErrorReply(response.body).code;
    return code == "RequestTimeout" || code == "SlowDown" || code == "OperationAborted" ||
           code == "ConditionalRequestConflict" || code == "InternalError";
  }
  return false;
}

std::string EncodedKeyPath(std::string_view prefix, std::string_view key) {
  return std::string(prefix) + "/" + UriEncode(key, false);
}

// The first kPrefetchBytes of the object come with the open (one ranged GET instead of a HEAD),
// so that a small file — a Delta checkpoint, a commit's data file — is read in one request
// whatever its reader asks for; reads past them are ranged GETs.
constexpr int64_t kPrefetchBytes = 1 << 20;

class S3RandomAccessFile final : public RandomAccessFile {
 public:
  S3RandomAccessFile(S3FileSystem* fs, std::string key, int64_t size, std::string prefix)
      : fs_(fs), key_(std::move(key)), size_(size), prefix_(std::move(prefix)) {}
  int64_t Size() const override { return size_; }
  Status ReadAt(int64_t offset, int64_t length, std::string* out) const override {
    out->clear();
    if (length == 0) return Status::OK();
    if (offset < 0 || length < 0 || offset + length > size_) {
      return Status::Error(errors::kIoError, fmt::format("{}: read of {} bytes at {} past its end ({} bytes)",
                                                         fs_->Uri(key_), length, offset, size_));
    }
    if (offset + length <= static_cast<int64_t>(prefix_.size())) {
      out->assign(prefix_, static_cast<size_t>(offset), static_cast<size_t>(length));
      return Status::OK();
    }
    S3FileSystem::Call call{"GET", key_, {}, {{"Range", fmt::format("bytes={}-{}", offset, offset + length - 1)}}, {}};
    SLUICE_ASSIGN_OR_RETURN(HttpResponse response, fs_->Send(call));
    if (response.status != 206 && response.status != 200) return fs_->Failure("GetObject", key_, response);
    if (response.status == 200) response.body = response.body.substr(std::min<size_t>(offset, response.body.size()));
    if (static_cast<int64_t>(response.body.size()) < length) {
      return Status::Error(errors::kIoError, fmt::format("{}: the store gave {} bytes of the {} asked for at {}",
                                                         fs_->Uri(key_), response.body.size(), length, offset));
    }
    response.body.resize(length);
    *out = std::move(response.body);
    return Status::OK();
  }

 private:
  S3FileSystem* const fs_;
  const std::string key_;
  const int64_t size_;
  const std::string prefix_;
};

// Buffers a part, then uploads it on a thread of its own while the writer fills the next one:
// at most one part in flight, so the memory held is two parts.
class S3WritableFile final : public WritableFile {
 public:
  S3WritableFile(S3FileSystem* fs, std::string key, int64_t part_size)
      : fs_(fs), key_(std::move(key)), part_size_(part_size) {}

  ~S3WritableFile() override {
    if (in_flight_.valid()) in_flight_.wait();
    if (!upload_id_.empty() && !closed_) {
      // Best effort: a failure leaves the parts to the bucket's lifecycle rule.
      (void)fs_->Send({"DELETE", key_, {{"uploadId", upload_id_}}, {}, {}});
    }
  }

  Status Append(std::string_view data) override {
    buffer_.append(data);
    written_ += static_cast<int64_t>(data.size());
    if (static_cast<int64_t>(buffer_.size()) >= part_size_) return StartPart();
    return Status::OK();
  }

  int64_t Tell() const override { return written_; }

  Status Close() override {
    if (closed_) return Status::OK();
    if (upload_id_.empty()) {
      SLUICE_RETURN_IF_ERROR(fs_->AtomicWrite(fs_->Uri(key_), buffer_));
      closed_ = true;
      return Status::OK();
    }
    if (!buffer_.empty()) SLUICE_RETURN_IF_ERROR(StartPart());
    SLUICE_RETURN_IF_ERROR(WaitForPart());
    std::string body = "<CompleteMultipartUpload>";
    for (size_t i = 0; i < etags_.size(); ++i) {
      body += fmt::format("<Part><PartNumber>{}</PartNumber><ETag>{}</ETag></Part>", i + 1, EscapeXml(etags_[i]));
    }
    body += "</CompleteMultipartUpload>";
    SLUICE_ASSIGN_OR_RETURN(HttpResponse response, fs_->Send({"POST", key_, {{"uploadId", upload_id_}}, {}, body}));
    // CompleteMultipartUpload may answer 200 with an <Error> body.
    if (response.status != 200 || response.body.find("<Error>") != std::string::npos) {
      return fs_->Failure("CompleteMultipartUpload", key_, response);
    }
    closed_ = true;
    return Status::OK();
  }

 private:
  static std::string EscapeXml(std::string_view text) {
    std::string out;
    for (char c : text) {
      if (c == '&') out += "&amp;";
      else if (c == '<') out += "&lt;";
      else if (c == '>') out += "&gt;";
      else out += c;
    }
    return out;
  }

  Status StartPart() {
    if (upload_id_.empty()) {
      SLUICE_ASSIGN_OR_RETURN(HttpResponse response, fs_->Send({"POST", key_, {{"uploads", ""}}, {}, {}}));
      if (response.status != 200) return fs_->Failure("CreateMultipartUpload", key_, response);
      SLUICE_ASSIGN_OR_RETURN(std::optional<std::string> id, XmlElement(response.body, "UploadId"));
      if (!id || id->empty()) return Status::Error(errors::kIoError, fs_->Uri(key_) + ": the store gave no UploadId");
      upload_id_ = *id;
    }
    SLUICE_RETURN_IF_ERROR(WaitForPart());
    const int number = static_cast<int>(etags_.size()) + 1;
    etags_.emplace_back();
    in_flight_part_ = std::move(buffer_);
    buffer_.clear();
    in_flight_ = std::async(std::launch::async, [this, number]() -> Status {
      S3FileSystem::Call call{"PUT", key_, {{"partNumber", std::to_string(number)}, {"uploadId", upload_id_}}, {},
                              in_flight_part_};
      SLUICE_ASSIGN_OR_RETURN(HttpResponse response, fs_->Send(call));
      if (response.status != 200) return fs_->Failure("UploadPart", key_, response);
      etags_[number - 1] = std::string(response.Header("etag"));
      return Status::OK();
    });
    return Status::OK();
  }

  Status WaitForPart() {
    if (!in_flight_.valid()) return Status::OK();
    return in_flight_.get();
  }

  S3FileSystem* const fs_;
  const std::string key_;
  const int64_t part_size_;
  std::string buffer_;
  std::string in_flight_part_;
  std::future<Status> in_flight_;
  std::string upload_id_;
  std::vector<std::string> etags_;
  int64_t written_ = 0;
  bool closed_ = false;
};

}  // namespace

Result<S3Options> S3OptionsFrom(const std::map<std::string, std::string>& given) {
  SLUICE_ASSIGN_OR_RETURN(ValidatedOptions validated,
                          ValidateOptions("S3 store", kS3OptionSpecs, given, errors::kInvalidStorageUri));
  S3Options options;
  if (validated.Has("endpoint")) {
    options.endpoint = validated.GetString("endpoint");
  } else if (!Env("AWS_ENDPOINT_URL_S3").empty()) {
    options.endpoint = Env("AWS_ENDPOINT_URL_S3");
  } else {
    options.endpoint = Env("AWS_ENDPOINT_URL");
  }
  while (!options.endpoint.empty() && options.endpoint.back() == '/') options.endpoint.pop_back();
  if (!options.endpoint.empty() && !options.endpoint.starts_with("http://") && !options.endpoint.starts_with("https://")) {
    return Status::Error(errors::kInvalidStorageUri,
                         fmt::format("S3 endpoint `{}` is not an http:// or https:// address", options.endpoint));
  }
  std::string region = validated.Has("region") ? validated.GetString("region") : Env("AWS_REGION");
  if (region.empty()) region = Env("AWS_DEFAULT_REGION");
  if (!region.empty()) options.region = region;
  if (validated.Has("virtual_hosted_style")) options.virtual_hosted_style = validated.GetBool("virtual_hosted_style");
  const bool has_key = validated.Has("access_key_id"), has_secret = validated.Has("secret_access_key");
  if (has_key != has_secret) {
    return Status::Error(errors::kInvalidStorageUri,
                         "S3 options `access_key_id` and `secret_access_key` are given together or not at all");
  }
  if (has_key) {
    options.credentials.given = AwsCredentials{validated.GetSecret("access_key_id"),
                                               validated.GetSecret("secret_access_key"),
                                               validated.Has("session_token") ? validated.GetSecret("session_token") : ""};
  }
  if (validated.Has("profile")) options.credentials.profile = validated.GetString("profile");
  options.credentials.region = options.region;
  options.max_retries = static_cast<int>(validated.GetInt64("max_retries"));
  options.retry_base_delay = duration_cast<milliseconds>(validated.GetDuration("retry_base_delay"));
  options.retry_max_delay = duration_cast<milliseconds>(validated.GetDuration("retry_max_delay"));
  options.http.connect_timeout = duration_cast<milliseconds>(validated.GetDuration("connect_timeout"));
  options.http.request_timeout = duration_cast<milliseconds>(validated.GetDuration("request_timeout"));
  options.multipart_part_size = validated.GetInt64("multipart_part_size");
  options.lease_duration = duration_cast<milliseconds>(validated.GetDuration("lease_duration"));
  if (options.lease_duration.count() < 300) {
    return Status::Error(errors::kInvalidStorageUri, "S3 option `lease_duration` is at least 300ms");
  }
  if (validated.Has("ca_file")) options.http.ca_file = validated.GetString("ca_file");
  return options;
}

S3FileSystem::S3FileSystem(std::string bucket, S3Options options)
    : bucket_(std::move(bucket)),
      options_(std::move(options)),
      http_(options_.http),
      credentials_(options_.credentials, &http_) {
  const bool virtual_hosted = options_.virtual_hosted_style.value_or(options_.endpoint.empty());
  std::string endpoint =
      options_.endpoint.empty() ? fmt::format("https://s3.{}.amazonaws.com", options_.region) : options_.endpoint;
  const size_t scheme_end = endpoint.find("://") + 3;
  std::string host = endpoint.substr(scheme_end);
  host = host.substr(0, host.find('/'));
  if (virtual_hosted) {
    host_ = bucket_ + "." + host;
    base_url_ = endpoint.substr(0, scheme_end) + host_;
  } else {
    host_ = host;
    base_url_ = endpoint.substr(0, scheme_end) + host_;
    path_prefix_ = "/" + bucket_;
  }
}

S3FileSystem::~S3FileSystem() = default;

Result<std::string> S3FileSystem::KeyOf(const std::string& path) const {
  const std::string root = "s3://" + bucket_;
  if (path == root || path == root + "/") return std::string();
  if (!path.starts_with(root + "/")) {
    return Status::Error(errors::kInvalidStorageUri, fmt::format("`{}` is not in bucket {}", path, bucket_));
  }
  std::string key = path.substr(root.size() + 1);
  while (!key.empty() && key.back() == '/') key.pop_back();
  return key;
}

Result<HttpResponse> S3FileSystem::Send(const Call& call, bool* ambiguous) {
  const std::string payload_hash = Sha256Hex(call.body);
  const std::string path = call.key.empty() ? path_prefix_ + "/" : EncodedKeyPath(path_prefix_, call.key);
  const std::string query = CanonicalQuery(call.query);
  const std::string url = base_url_ + path + (query.empty() ? "" : "?" + query);
  Status last_failure;
  for (int attempt = 0;; ++attempt) {
    if (attempt > 0) {
      std::this_thread::sleep_for(RetryDelay(attempt, options_.retry_base_delay, options_.retry_max_delay));
    }
    SLUICE_ASSIGN_OR_RETURN(AwsCredentials credentials, credentials_.Get());
    const std::string amz_date = AmzDate(SystemClock()->NowMicros() / 1000);
    SigV4Request signing{call.method, path, call.query, call.headers, payload_hash};
    signing.headers.emplace_back("host", host_);
    signing.headers.emplace_back("x-amz-date", amz_date);
    signing.headers.emplace_back("x-amz-content-sha256", payload_hash);
    if (!credentials.session_token.empty()) signing.headers.emplace_back("x-amz-security-token", credentials.session_token);
    HttpRequest request{call.method, url, signing.headers, call.body};
    request.headers.emplace_back("Authorization", SignV4(credentials, {options_.region, "s3"}, amz_date, signing));
    ++requests_sent_;
    Result<HttpResponse> response = http_.Send(request);
    const bool last = attempt >= options_.max_retries;
    if (!response.ok()) {
      last_failure = response.status();
      if (ambiguous != nullptr) *ambiguous = true;
      if (last) break;
      continue;
    }
    if (Retriable(*response) && !last) {
      if (ambiguous != nullptr && response->status >= 500) *ambiguous = true;
      continue;
    }
    return response;
  }
  return last_failure.WithContext(fmt::format("after {} attempts", options_.max_retries + 1));
}

Status S3FileSystem::Failure(std::string_view operation, const std::string& key, const HttpResponse& response) const {
  const ErrorReply reply = ParseErrorReply(response.body);
  const std::string detail = fmt::format("S3 {} {}: HTTP {}{}{}", operation, Uri(key), response.status,
                                         reply.code.empty() ? "" : " " + reply.code,
                                         reply.message.empty() ? "" : " (" + reply.message + ")");
  if (response.status == 404 && reply.code != "NoSuchBucket") return Status::Error(errors::kFileNotFound, detail);
  if (response.status == 401 || response.status == 403) return Status::Error(errors::kStorageAccessDenied, detail);
  return Status::Error(errors::kIoError, detail);
}

Result<std::string> S3FileSystem::ReadFile(const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(std::string key, KeyOf(path));
  SLUICE_ASSIGN_OR_RETURN(HttpResponse response, Send({"GET", key, {}, {}, {}}));
  if (response.status != 200) return Failure("GetObject", key, response);
  return std::move(response.body);
}

Result<std::unique_ptr<RandomAccessFile>> S3FileSystem::OpenForRead(const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(std::string key, KeyOf(path));
  SLUICE_ASSIGN_OR_RETURN(HttpResponse response,
                          Send({"GET", key, {}, {{"Range", fmt::format("bytes=0-{}", kPrefetchBytes - 1)}}, {}}));
  int64_t size = 0;
  if (response.status == 206) {
    // Content-Range: bytes 0-1048575/123456789
    const std::string_view range = response.Header("content-range");
    const size_t slash = range.rfind('/');
    if (slash == std::string_view::npos) return Failure("GetObject (no Content-Range)", key, response);
    size = std::strtoll(std::string(range.substr(slash + 1)).c_str(), nullptr, 10);
  } else if (response.status == 200) {
    size = static_cast<int64_t>(response.body.size());
  } else if (response.status == 416) {
    response.body.clear();  // an empty object: no byte range is satisfiable
  } else {
    return Failure("GetObject", key, response);
  }
  if (static_cast<int64_t>(response.body.size()) > size) response.body.resize(static_cast<size_t>(size));
  return std::unique_ptr<RandomAccessFile>(new S3RandomAccessFile(this, key, size, std::move(response.body)));
}

Result<std::unique_ptr<WritableFile>> S3FileSystem::OpenForWrite(const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(std::string key, KeyOf(path));
  return std::unique_ptr<WritableFile>(new S3WritableFile(this, key, options_.multipart_part_size));
}

Status S3FileSystem::AtomicWrite(const std::string& path, std::string_view data) {
  SLUICE_ASSIGN_OR_RETURN(std::string key, KeyOf(path));
  SLUICE_ASSIGN_OR_RETURN(HttpResponse response, Send({"PUT", key, {}, {}, data}));
  if (response.status != 200) return Failure("PutObject", key, response);
  return Status::OK();
}

Status S3FileSystem::CheckConditionalWrites(const std::string& near_key) {
  std::lock_guard lock(probe_mutex_);
  if (conditional_writes_checked_) return Status::OK();
  const size_t slash = near_key.rfind('/');
  const std::string probe = (slash == std::string::npos ? "" : near_key.substr(0, slash + 1)) +
                            fmt::format("_sluice_conditional_write_probe_{}", std::chrono::steady_clock::now()
                                                                                 .time_since_epoch()
                                                                                 .count());
  const HttpHeaders condition{{"If-None-Match", "*"}};
  SLUICE_ASSIGN_OR_RETURN(HttpResponse first, Send({"PUT", probe, {}, condition, "1"}));
  if (first.status != 200) return Failure("PutObject (conditional write check)", probe, first);
  SLUICE_ASSIGN_OR_RETURN(HttpResponse second, Send({"PUT", probe, {}, condition, "2"}));
  (void)Send({"DELETE", probe, {}, {}, {}});
  if (second.status != 412) {
    return Status::Error(errors::kStorageConditionalWriteUnsupported,
                         fmt::format("the store behind s3://{} does not honour If-None-Match: * on PutObject "
                                     "(a second conditional write answered HTTP {}), so concurrent commits could "
                                     "overwrite each other; see docs/storage.md",
                                     bucket_, second.status));
  }
  conditional_writes_checked_ = true;
  return Status::OK();
}

Status S3FileSystem::PutIfAbsent(const std::string& path, std::string_view data) {
  SLUICE_ASSIGN_OR_RETURN(std::string key, KeyOf(path));
  SLUICE_RETURN_IF_ERROR(CheckConditionalWrites(key));
  bool ambiguous = false;
  SLUICE_ASSIGN_OR_RETURN(HttpResponse response, Send({"PUT", key, {}, {{"If-None-Match", "*"}}, data}, &ambiguous));
  if (response.status == 200) return Status::OK();
  if (response.status == 412) {
    if (ambiguous) {
      // An earlier attempt may have written the object and lost its reply: ours if the bytes are.
      Result<std::string> existing = ReadFile(path);
      if (existing.ok() && *existing == data) return Status::OK();
    }
    return Status::Error(errors::kFileAlreadyExists, fmt::format("{} already exists", path));
  }
  return Failure("PutObject", key, response);
}

Result<FileInfo> S3FileSystem::Stat(const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(std::string key, KeyOf(path));
  if (key.empty()) return FileInfo{Uri(""), 0, 0, true};
  // One listing answers for a file and a folder at once (a HEAD would need a listing after it to
  // tell a folder from nothing): the key itself, or `key/` among the common prefixes.
  SLUICE_ASSIGN_OR_RETURN(HttpResponse listing,
                          Send({"GET", "", {{"list-type", "2"}, {"prefix", key}, {"delimiter", "/"}}, {}, {}}));
  if (listing.status != 200) return Failure("ListObjectsV2", key, listing);
  SLUICE_ASSIGN_OR_RETURN(ListPage page, ParseListObjectsV2(listing.body));
  for (const ListedObject& object : page.objects) {
    if (object.key == key) return FileInfo{Uri(key), object.size, object.last_modified_ms, false};
  }
  for (const std::string& common : page.common_prefixes) {
    if (common == key + "/") return FileInfo{Uri(key), 0, 0, true};
  }
  if (page.truncated) {
    // More than a page of keys extend this one: ask for the object, then for the folder.
    SLUICE_ASSIGN_OR_RETURN(HttpResponse head, Send({"HEAD", key, {}, {}, {}}));
    if (head.status == 200) {
      return FileInfo{Uri(key), std::strtoll(std::string(head.Header("content-length")).c_str(), nullptr, 10),
                      ParseStoreTime(head.Header("last-modified")).value_or(0), false};
    }
    SLUICE_ASSIGN_OR_RETURN(HttpResponse folder,
                            Send({"GET", "", {{"list-type", "2"}, {"prefix", key + "/"}, {"max-keys", "1"}}, {}, {}}));
    if (folder.status != 200) return Failure("ListObjectsV2", key, folder);
    SLUICE_ASSIGN_OR_RETURN(ListPage inside, ParseListObjectsV2(folder.body));
    if (!inside.objects.empty() || !inside.common_prefixes.empty()) return FileInfo{Uri(key), 0, 0, true};
  }
  return Status::Error(errors::kFileNotFound, fmt::format("{} does not exist", path));
}

Result<bool> S3FileSystem::Exists(const std::string& path) {
  Result<FileInfo> info = Stat(path);
  if (info.ok()) return true;
  if (info.status().error_class() == errors::kFileNotFound) return false;
  return info.status();
}

Status S3FileSystem::ListPages(const std::string& prefix, bool by_folder,
                               const std::function<void(ListPage&)>& visit) {
  std::string token;
  do {
    std::vector<std::pair<std::string, std::string>> query{{"list-type", "2"}, {"prefix", prefix}};
    if (by_folder) query.emplace_back("delimiter", "/");
    if (!token.empty()) query.emplace_back("continuation-token", token);
    SLUICE_ASSIGN_OR_RETURN(HttpResponse response, Send({"GET", "", query, {}, {}}));
    if (response.status != 200) return Failure("ListObjectsV2", prefix, response);
    SLUICE_ASSIGN_OR_RETURN(ListPage page, ParseListObjectsV2(response.body));
    visit(page);
    token = page.truncated ? page.next_continuation_token : "";
  } while (!token.empty());
  return Status::OK();
}

Result<std::vector<FileInfo>> S3FileSystem::List(const std::string& directory, std::string_view prefix) {
  SLUICE_ASSIGN_OR_RETURN(std::string key, KeyOf(directory));
  std::vector<FileInfo> entries;
  SLUICE_RETURN_IF_ERROR(
      ListPages((key.empty() ? "" : key + "/") + std::string(prefix), /*by_folder=*/true, [&](ListPage& page) {
        for (ListedObject& object : page.objects) {
          if (object.key.ends_with('/')) continue;  // a "folder" marker another tool made
          entries.push_back(FileInfo{Uri(object.key), object.size, object.last_modified_ms, false});
        }
        for (std::string& common : page.common_prefixes) {
          if (common.ends_with('/')) common.pop_back();
          entries.push_back(FileInfo{Uri(common), 0, 0, true});
        }
      }));
  std::sort(entries.begin(), entries.end(), [](const FileInfo& a, const FileInfo& b) { return a.path < b.path; });
  return entries;
}

Status S3FileSystem::Delete(const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(std::string key, KeyOf(path));
  SLUICE_ASSIGN_OR_RETURN(HttpResponse response, Send({"DELETE", key, {}, {}, {}}));
  if (response.status != 204 && response.status != 200 && response.status != 404) {
    return Failure("DeleteObject", key, response);
  }
  return Status::OK();
}

Status S3FileSystem::DeleteRecursively(const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(std::string key, KeyOf(path));
  std::vector<std::string> keys;
  SLUICE_RETURN_IF_ERROR(ListPages(key.empty() ? "" : key + "/", /*by_folder=*/false, [&](ListPage& page) {
    for (ListedObject& object : page.objects) keys.push_back(std::move(object.key));
  }));
  for (const std::string& each : keys) SLUICE_RETURN_IF_ERROR(Delete(Uri(each)));
  if (!key.empty()) return Delete(path);
  return Status::OK();
}

Status S3FileSystem::CreateDirectories(const std::string& path) { return KeyOf(path).status(); }

Status S3FileSystem::Rename(const std::string& from, const std::string& to, bool no_replace) {
  SLUICE_ASSIGN_OR_RETURN(std::string data, ReadFile(from));
  SLUICE_RETURN_IF_ERROR(no_replace ? PutIfAbsent(to, data) : AtomicWrite(to, data));
  return Delete(from);
}

Result<std::unique_ptr<FileLock>> S3FileSystem::Lock(const std::string& path) {
  SLUICE_RETURN_IF_ERROR(KeyOf(path).status());
  return TakeLease(shared_from_this(), path, options_.lease_duration);
}

}  // namespace sluice::storage
