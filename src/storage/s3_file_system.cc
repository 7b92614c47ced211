#include "sluice/storage/s3_file_system.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <mutex>

#include <fmt/format.h>

#include "sluice/core/clock.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/options.h"
#include "sluice/storage/sigv4.h"
#include "sluice/storage/xml_reply.h"
#include "environment.h"

namespace sluice::storage {
namespace {

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
    {"multipart_part_size", OptionType::kLong, "8388608", false, "bytes per part of a multipart upload", {},
     5 * 1024 * 1024, 5.0 * 1024 * 1024 * 1024},
};

std::span<const OptionSpec> S3OptionSpecs() {
  static const std::vector<OptionSpec> specs = WithCommonStoreOptions(kS3OptionSpecs);
  return specs;
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

class S3Store final : public ObjectStore {
 public:
  S3Store(std::string bucket, S3Options options)
      : bucket_(std::move(bucket)),
        root_("s3://" + bucket_),
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
    } else {
      host_ = host;
      path_prefix_ = "/" + bucket_;
    }
    base_url_ = endpoint.substr(0, scheme_end) + host_;
  }

  const std::string& root() const override { return root_; }
  std::string_view kind() const override { return "S3"; }

  Result<std::string> Get(const std::string& key) override {
    SLUICE_ASSIGN_OR_RETURN(HttpResponse response, Send({"GET", key, {}, {}, {}}));
    if (response.status != 200) return Failure("GetObject", key, response);
    return std::move(response.body);
  }

  Result<RangedBytes> GetRange(const std::string& key, int64_t offset, int64_t length) override {
    SLUICE_ASSIGN_OR_RETURN(HttpResponse response,
                            Send({"GET", key, {}, {{"Range", fmt::format("bytes={}-{}", offset, offset + length - 1)}}, {}}));
    std::optional<RangedBytes> read = RangedAnswer(response, offset, length);
    if (!read) return Failure("GetObject", key, response);
    return std::move(*read);
  }

  Status Put(const std::string& key, std::string_view data, bool if_absent, bool* ambiguous) override {
    HttpHeaders headers;
    if (if_absent) headers.emplace_back("If-None-Match", "*");
    SLUICE_ASSIGN_OR_RETURN(HttpResponse response, Send({"PUT", key, {}, std::move(headers), data}, ambiguous));
    if (response.status == 200) return Status::OK();
    if (if_absent && response.status == 412) {
      return Status::Error(errors::kFileAlreadyExists, fmt::format("{} already exists", Uri(key)));
    }
    return Failure("PutObject", key, response);
  }

  Result<ListedObject> Head(const std::string& key) override {
    SLUICE_ASSIGN_OR_RETURN(HttpResponse head, Send({"HEAD", key, {}, {}, {}}));
    if (head.status != 200) return Failure("HeadObject", key, head);
    return ListedObject{key, std::strtoll(std::string(head.Header("content-length")).c_str(), nullptr, 10),
                        ParseStoreTime(head.Header("last-modified")).value_or(0)};
  }

  Status List(const std::string& prefix, bool by_folder, const std::string& start_after,
              const std::function<bool(ListPage&)>& visit) override {
    std::string token;
    do {
      std::vector<std::pair<std::string, std::string>> query{{"list-type", "2"}, {"prefix", prefix}};
      if (by_folder) query.emplace_back("delimiter", "/");
      if (!start_after.empty()) query.emplace_back("start-after", start_after);
      if (!token.empty()) query.emplace_back("continuation-token", token);
      SLUICE_ASSIGN_OR_RETURN(HttpResponse response, Send({"GET", "", query, {}, {}}));
      if (response.status != 200) return Failure("ListObjectsV2", prefix, response);
      SLUICE_ASSIGN_OR_RETURN(ListPage page, ParseListObjectsV2(response.body));
      token = page.truncated ? page.next_continuation_token : "";
      if (!visit(page)) break;
    } while (!token.empty());
    return Status::OK();
  }

  Status Delete(const std::string& key) override {
    SLUICE_ASSIGN_OR_RETURN(HttpResponse response, Send({"DELETE", key, {}, {}, {}}));
    if (response.status != 204 && response.status != 200 && response.status != 404) {
      return Failure("DeleteObject", key, response);
    }
    return Status::OK();
  }

  Result<std::unique_ptr<PartUpload>> StartUpload(const std::string& key) override;

  struct Call {
    std::string method;
    std::string key;
    std::vector<std::pair<std::string, std::string>> query;
    HttpHeaders headers;
    std::string_view body;
  };

  Result<HttpResponse> Send(const Call& call, bool* ambiguous = nullptr) {
    const std::string payload_hash = Sha256Hex(call.body);
    const std::string path = call.key.empty() ? path_prefix_ + "/" : path_prefix_ + "/" + UriEncode(call.key, false);
    const std::string query = CanonicalQuery(call.query);
    const std::string url = base_url_ + path + (query.empty() ? "" : "?" + query);
    return SendWithRetries(
        http_, options_.retry,
        [&]() -> Result<HttpRequest> {
          SLUICE_ASSIGN_OR_RETURN(AwsCredentials credentials, credentials_.Get());
          const std::string amz_date = AmzDate(SystemClock()->NowMicros() / 1000);
          SigV4Request signing{call.method, path, call.query, call.headers, payload_hash};
          signing.headers.emplace_back("host", host_);
          signing.headers.emplace_back("x-amz-date", amz_date);
          signing.headers.emplace_back("x-amz-content-sha256", payload_hash);
          if (!credentials.session_token.empty()) {
            signing.headers.emplace_back("x-amz-security-token", credentials.session_token);
          }
          HttpRequest request{call.method, url, signing.headers, call.body};
          request.headers.emplace_back("Authorization",
                                       SignV4(credentials, {options_.region, "s3"}, amz_date, signing));
          return request;
        },
        Retriable, ambiguous, &requests_sent_);
  }

  Status Failure(std::string_view operation, const std::string& key, const HttpResponse& response) const {
    const bool absent = response.status == 404 && ParseErrorReply(response.body).code != "NoSuchBucket";
    return StoreFailure(*this, operation, key, response, absent);
  }

 private:
  const std::string bucket_;
  const std::string root_;
  const S3Options options_;
  HttpClient http_;
  AwsCredentialProvider credentials_;
  std::string base_url_;     // scheme://host[:port]
  std::string host_;         // the Host header
  std::string path_prefix_;  // "/bucket" for path-style, "" for virtual-hosted
};

class S3MultipartUpload final : public PartUpload {
 public:
  S3MultipartUpload(S3Store* store, std::string key, std::string upload_id)
      : store_(store), key_(std::move(key)), upload_id_(std::move(upload_id)) {}

  Status UploadPart(int number, std::string_view data) override {
    S3Store::Call call{"PUT", key_, {{"partNumber", std::to_string(number)}, {"uploadId", upload_id_}}, {}, data};
    SLUICE_ASSIGN_OR_RETURN(HttpResponse response, store_->Send(call));
    if (response.status != 200) return store_->Failure("UploadPart", key_, response);
    std::lock_guard lock(mutex_);
    if (etags_.size() < static_cast<size_t>(number)) etags_.resize(number);
    etags_[number - 1] = std::string(response.Header("etag"));
    return Status::OK();
  }

  Status Complete(int parts) override {
    std::string body = "<CompleteMultipartUpload>";
    {
      std::lock_guard lock(mutex_);
      for (int i = 0; i < parts; ++i) {
        body += fmt::format("<Part><PartNumber>{}</PartNumber><ETag>{}</ETag></Part>", i + 1, EscapeXml(etags_.at(i)));
      }
    }
    body += "</CompleteMultipartUpload>";
    SLUICE_ASSIGN_OR_RETURN(HttpResponse response, store_->Send({"POST", key_, {{"uploadId", upload_id_}}, {}, body}));
    // CompleteMultipartUpload may answer 200 with an <Error> body.
    if (response.status != 200 || response.body.find("<Error>") != std::string::npos) {
      return store_->Failure("CompleteMultipartUpload", key_, response);
    }
    return Status::OK();
  }

  void Abort() override {
    // Best effort: a failure leaves the parts to the bucket's lifecycle rule.
    (void)store_->Send({"DELETE", key_, {{"uploadId", upload_id_}}, {}, {}});
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

  S3Store* const store_;
  const std::string key_;
  const std::string upload_id_;
  std::mutex mutex_;
  std::vector<std::string> etags_;
};

Result<std::unique_ptr<PartUpload>> S3Store::StartUpload(const std::string& key) {
  SLUICE_ASSIGN_OR_RETURN(HttpResponse response, Send({"POST", key, {{"uploads", ""}}, {}, {}}));
  if (response.status != 200) return Failure("CreateMultipartUpload", key, response);
  SLUICE_ASSIGN_OR_RETURN(std::optional<std::string> id, XmlElement(response.body, "UploadId"));
  if (!id || id->empty()) return Status::Error(errors::kIoError, Uri(key) + ": the store gave no UploadId");
  return std::unique_ptr<PartUpload>(new S3MultipartUpload(this, key, std::move(*id)));
}

}  // namespace

Result<S3Options> S3OptionsFrom(const std::map<std::string, std::string>& given) {
  SLUICE_ASSIGN_OR_RETURN(ValidatedOptions validated,
                          ValidateOptions("S3 store", S3OptionSpecs(), given, errors::kInvalidStorageUri));
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
  SLUICE_ASSIGN_OR_RETURN(CommonStoreOptions common, CommonStoreOptionsFrom(validated, "S3"));
  options.retry = common.retry;
  options.http = common.http;
  options.settings = common.settings;
  options.settings.part_size = validated.GetInt64("multipart_part_size");
  return options;
}

std::shared_ptr<ObjectStoreFileSystem> NewS3FileSystem(std::string bucket, S3Options options) {
  const ObjectStoreSettings settings = options.settings;
  return std::make_shared<ObjectStoreFileSystem>(std::make_unique<S3Store>(std::move(bucket), std::move(options)),
                                                 settings);
}

}  // namespace sluice::storage
