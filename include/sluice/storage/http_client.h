// HttpClient: one HTTP exchange over libcurl, for the object-store file systems. Connections are
// kept alive in a pool of curl handles, so a commit costs a request, not a TLS handshake.
//
// Thread-safe: any thread may Send at any time; each exchange takes a handle of the pool (or a new
// one) for its duration. Send makes one attempt: retries belong to the callers, which sign each
// attempt afresh (RetryDelay gives their back-off).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sluice/core/status.h"

namespace sluice::storage {

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method;  // GET, HEAD, PUT, POST, DELETE
  std::string url;
  HttpHeaders headers;
  std::string_view body;  // not owned; must outlive Send
};

struct HttpResponse {
  long status = 0;
  HttpHeaders headers;  // names lower-cased
  std::string body;
  // The first header of that (lower-case) name, or "".
  std::string_view Header(std::string_view name) const;
};

struct HttpClientOptions {
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds request_timeout{60'000};
  // A CA bundle for stores with private certificates; empty: the system's.
  std::string ca_file;
};

class HttpClient {
 public:
  explicit HttpClient(HttpClientOptions options);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // One exchange. A response of any status is OK here (the caller reads its status); a request
  // that got no complete response (refused, reset, timed out, DNS) is IO_ERROR with curl's reason,
  // the method and the URL without its query.
  Result<HttpResponse> Send(const HttpRequest& request);

 private:
  void* TakeHandle();
  void ReturnHandle(void* handle);

  const HttpClientOptions options_;
  std::mutex mutex_;
  std::vector<void*> idle_;  // CURL*
  // The process the idle handles belong to: a forked child must not share its parent's
  // connections, so it starts with none.
  pid_t owner_ = 0;
};

// When a request is tried again: after a failure to get an answer, and after an answer the
// caller's `retriable` accepts, up to `max_retries` times.
struct RetryPolicy {
  int max_retries = 10;
  std::chrono::milliseconds base_delay{100};
  std::chrono::milliseconds max_delay{10'000};
};

// Sends the request `make` builds — afresh for each attempt, so that each is signed at its own
// time — with RetryDelay's back-off between attempts, and returns the first answer `retriable`
// refuses (or the last one). IO_ERROR when no attempt got an answer. `ambiguous` (when not null)
// is set when an attempt before the returned answer may have reached the store: its connection
// was lost after sending, or it was answered with a 5xx. `sent` counts every attempt.
Result<HttpResponse> SendWithRetries(HttpClient& http, const RetryPolicy& policy,
                                     const std::function<Result<HttpRequest>()>& make,
                                     const std::function<bool(const HttpResponse&)>& retriable, bool* ambiguous,
                                     std::atomic<int64_t>* sent);

// RFC 7231's IMF-fixdate of a Unix time in milliseconds: "Sat, 05 Dec 2026 03:21:15 GMT".
std::string HttpDate(int64_t unix_ms);

// How long to wait before retry number `attempt` (1-based): exponential from `base`, capped at
// `cap`, with full jitter (a uniform draw in [0, delay]), so that writers that failed together do
// not retry together.
std::chrono::milliseconds RetryDelay(int attempt, std::chrono::milliseconds base, std::chrono::milliseconds cap);

}  // namespace sluice::storage
