#include "sluice/storage/http_client.h"

#include <curl/curl.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "sluice/core/ascii.h"
#include "sluice/core/error_classes.h"

namespace sluice::storage {
namespace {

size_t AppendBody(char* data, size_t size, size_t count, void* out) {
  static_cast<std::string*>(out)->append(data, size * count);
  return size * count;
}

size_t AppendHeader(char* data, size_t size, size_t count, void* out) {
  std::string_view line(data, size * count);
  const size_t colon = line.find(':');
  if (line.starts_with("HTTP/")) {
    static_cast<HttpHeaders*>(out)->clear();  // a new response (after 100 Continue or a redirect)
  } else if (colon != std::string_view::npos) {
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' ')) value.remove_suffix(1);
    static_cast<HttpHeaders*>(out)->emplace_back(AsciiLower(line.substr(0, colon)), std::string(value));
  }
  return size * count;
}

std::string WithoutQuery(const std::string& url) { return url.substr(0, url.find('?')); }

}  // namespace

std::string_view HttpResponse::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (key == name) return value;
  }
  return {};
}

HttpClient::HttpClient(HttpClientOptions options) : options_(std::move(options)), owner_(getpid()) {
  static const CURLcode initialized = curl_global_init(CURL_GLOBAL_DEFAULT);
  (void)initialized;
}

HttpClient::~HttpClient() {
  for (void* handle : idle_) curl_easy_cleanup(static_cast<CURL*>(handle));
}

void* HttpClient::TakeHandle() {
  {
    std::lock_guard lock(mutex_);
    if (owner_ != getpid()) {
      idle_.clear();  // the parent's handles (and their sockets) stay the parent's
      owner_ = getpid();
    }
    if (!idle_.empty()) {
      void* handle = idle_.back();
      idle_.pop_back();
      return handle;
    }
  }
  return curl_easy_init();
}

void HttpClient::ReturnHandle(void* handle) {
  curl_easy_reset(static_cast<CURL*>(handle));  // keeps the handle's open connections
  std::lock_guard lock(mutex_);
  idle_.push_back(handle);
}

Result<HttpResponse> HttpClient::Send(const HttpRequest& request) {
  CURL* curl = static_cast<CURL*>(TakeHandle());
  if (curl == nullptr) return Status::Error(errors::kIoError, "cannot start an HTTP client (curl_easy_init)");
  struct Return {
    HttpClient* client;
    CURL* curl;
    ~Return() { client->ReturnHandle(curl); }
  } give_back{this, curl};

  curl_slist* headers = nullptr;
  for (const auto& [name, value] : request.headers) {
    headers = curl_slist_append(headers, fmt::format("{}: {}", name, value).c_str());
  }
  // No "Expect: 100-continue" round trip, and no content type curl would invent for a body.
  headers = curl_slist_append(headers, "Expect:");
  const bool typed = std::any_of(request.headers.begin(), request.headers.end(),
                                 [](const auto& header) { return AsciiLower(header.first) == "content-type"; });
  if (!typed && (request.method == "PUT" || request.method == "POST")) {
    headers = curl_slist_append(headers, "Content-Type: application/octet-stream");
  }
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> owned_headers(headers, &curl_slist_free_all);

  HttpResponse response;
  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options_.connect_timeout.count()));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.request_timeout.count()));
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, AppendBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &response.body);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, AppendHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &response.headers);
  if (!options_.ca_file.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, options_.ca_file.c_str());
  if (request.method == "HEAD") {
    curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  } else if (request.method != "GET") {
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  }
  if (request.method == "PUT" || request.method == "POST") {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.empty() ? "" : request.body.data());
  }
  char error[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
  const CURLcode code = curl_easy_perform(curl);
  if (code != CURLE_OK) {
    return Status::Error(errors::kIoError, fmt::format("{} {}: {}", request.method, WithoutQuery(request.url),
                                                       error[0] != 0 ? error : curl_easy_strerror(code)));
  }
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
  return response;
}

Result<HttpResponse> SendWithRetries(HttpClient& http, const RetryPolicy& policy,
                                     const std::function<Result<HttpRequest>()>& make,
                                     const std::function<bool(const HttpResponse&)>& retriable, bool* ambiguous,
                                     std::atomic<int64_t>* sent) {
  Status last_failure;
  for (int attempt = 0;; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(RetryDelay(attempt, policy.base_delay, policy.max_delay));
    SLUICE_ASSIGN_OR_RETURN(HttpRequest request, make());
    if (sent != nullptr) ++*sent;
    Result<HttpResponse> response = http.Send(request);
    const bool last = attempt >= policy.max_retries;
    if (!response.ok()) {
      last_failure = response.status();
      if (ambiguous != nullptr) *ambiguous = true;
      if (last) break;
      continue;
    }
    if (!last && retriable(*response)) {
      if (ambiguous != nullptr && response->status >= 500) *ambiguous = true;
      continue;
    }
    return response;
  }
  return last_failure.WithContext(fmt::format("after {} attempts", policy.max_retries + 1));
}

std::string HttpDate(int64_t unix_ms) {
  static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  const time_t seconds = static_cast<time_t>(unix_ms / 1000);
  struct tm utc;
  gmtime_r(&seconds, &utc);
  return fmt::format("{}, {:02d} {} {:04d} {:02d}:{:02d}:{:02d} GMT", kDays[utc.tm_wday], utc.tm_mday,
                     kMonths[utc.tm_mon], utc.tm_year + 1900, utc.tm_hour, utc.tm_min, utc.tm_sec);
}

std::chrono::milliseconds RetryDelay(int attempt, std::chrono::milliseconds base, std::chrono::milliseconds cap) {
  thread_local std::mt19937_64 random(std::random_device{}());
  int64_t delay = base.count();
  for (int i = 1; i < attempt && delay < cap.count(); ++i) delay *= 2;
  delay = std::min<int64_t>(delay, cap.count());
  return std::chrono::milliseconds(std::uniform_int_distribution<int64_t>(0, std::max<int64_t>(delay, 0))(random));
}

}  // namespace sluice::storage
