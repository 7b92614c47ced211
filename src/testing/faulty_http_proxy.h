// FaultyHttpProxy: an HTTP/1.1 proxy on loopback between sluice and an object store for the
// tests of retries and lost replies. Each request is forwarded to the upstream store on a
// connection of its own, unless a fault armed for it says otherwise:
//   kServiceUnavailable   answer 503 without forwarding
//   kSlowDown             answer 503 with S3's SlowDown error, without forwarding
//   kResetBeforeForwarding close the client's connection without forwarding
//   kLoseReply            forward (the store acts on the request), then close the client's
//                         connection without a reply: a write that happened, reply lost
//   kTruncateReply        forward, then send half the store's reply and close
//   kDelay                wait 1.5 s, then forward
//   kAccessDenied         answer 403 with S3's InvalidAccessKeyId error, without forwarding
// With strip_if_none_match set, If-None-Match headers are dropped on the way (a store without
// conditional writes). Requests are answered one per connection (Connection: close).
//
// Thread-safe: faults may be armed while clients send.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "sluice/core/status.h"

namespace sluice::testing {

class FaultyHttpProxy {
 public:
  enum class Fault { kServiceUnavailable, kSlowDown, kResetBeforeForwarding, kLoseReply, kTruncateReply, kDelay,
                     kAccessDenied };

  // Listens on a free loopback port, forwarding to 127.0.0.1:`upstream_port`.
  static Result<std::unique_ptr<FaultyHttpProxy>> Start(int upstream_port);
  ~FaultyHttpProxy();

  std::string endpoint() const;  // "http://127.0.0.1:<port>"

  // Arms `fault` for the next `times` requests whose method is `method` ("" any) and whose
  // request target contains `target_substring` ("" any). Faults apply in the order armed.
  void Arm(Fault fault, const std::string& method = "", const std::string& target_substring = "", int times = 1);
  void set_strip_if_none_match(bool strip) { strip_if_none_match_ = strip; }
  // Requests received, and those that met an armed fault.
  int64_t requests() const { return requests_.load(); }
  int64_t faults_applied() const { return faults_applied_.load(); }

 private:
  struct Armed {
    Fault fault;
    std::string method;
    std::string target_substring;
    int remaining;
  };
  FaultyHttpProxy() = default;
  void Serve(int client);
  std::optional<Fault> Take(const std::string& method, const std::string& target);

  int listener_ = -1;
  int port_ = 0;
  int upstream_port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> strip_if_none_match_{false};
  std::atomic<int64_t> requests_{0};
  std::atomic<int64_t> faults_applied_{0};
  std::mutex mutex_;
  std::vector<Armed> armed_;
  std::vector<std::thread> threads_;
  std::vector<int> open_clients_;
  std::thread acceptor_;
};

}  // namespace sluice::testing
