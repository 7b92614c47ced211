#include "testing/faulty_http_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <optional>

#include <fmt/format.h>

#include "sluice/core/ascii.h"
#include "sluice/core/error_classes.h"

namespace sluice::testing {
namespace {

bool SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t sent = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (sent <= 0) return false;
    data.remove_prefix(static_cast<size_t>(sent));
  }
  return true;
}

// Reads one request: head and Content-Length body. False when the connection ends first.
bool ReadRequest(int fd, std::string* head, std::string* body) {
  std::string data;
  char chunk[65536];
  size_t head_end = std::string::npos;
  while ((head_end = data.find("\r\n\r\n")) == std::string::npos) {
    ssize_t got = ::recv(fd, chunk, sizeof chunk, 0);
    if (got <= 0) return false;
    data.append(chunk, static_cast<size_t>(got));
  }
  *head = data.substr(0, head_end + 2);  // ends with one CRLF
  size_t length = 0;
  const std::string lower = AsciiLower(*head);
  if (size_t at = lower.find("\r\ncontent-length:"); at != std::string::npos) {
    length = std::stoul(lower.substr(at + 17, lower.find("\r\n", at + 2) - at - 17));
  }
  *body = data.substr(head_end + 4);
  while (body->size() < length) {
    ssize_t got = ::recv(fd, chunk, sizeof chunk, 0);
    if (got <= 0) return false;
    body->append(chunk, static_cast<size_t>(got));
  }
  return true;
}

// The head without the headers named (lower-case), plus Connection: close.
std::string Rewrite(const std::string& head, const std::vector<std::string>& drop) {
  std::string out;
  size_t at = 0;
  bool first = true;
  while (at < head.size()) {
    size_t end = head.find("\r\n", at);
    std::string line = head.substr(at, end - at);
    at = end + 2;
    if (!first) {
      std::string name = AsciiLower(line.substr(0, line.find(':')));
      bool dropped = name == "connection";
      for (const std::string& d : drop) dropped = dropped || name == d;
      if (dropped) continue;
    }
    first = false;
    out += line + "\r\n";
  }
  return out + "Connection: close\r\n\r\n";
}

std::string Forward(int upstream_port, const std::string& head, const std::string& body) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(upstream_port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string reply;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 && SendAll(fd, head) &&
      SendAll(fd, body)) {
    char chunk[65536];
    for (ssize_t got; (got = ::recv(fd, chunk, sizeof chunk, 0)) > 0;) reply.append(chunk, static_cast<size_t>(got));
  }
  ::close(fd);
  return reply;
}

std::string Answer(int status, const std::string& reason, const std::string& body) {
  return fmt::format("HTTP/1.1 {} {}\r\nContent-Type: application/xml\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
                     status, reason, body.size(), body);
}

}  // namespace

Result<std::unique_ptr<FaultyHttpProxy>> FaultyHttpProxy::Start(int upstream_port) {
  std::unique_ptr<FaultyHttpProxy> proxy(new FaultyHttpProxy());
  proxy->upstream_port_ = upstream_port;
  proxy->listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (::bind(proxy->listener_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(proxy->listener_, 64) != 0 ||
      ::getsockname(proxy->listener_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    return Status::Error(errors::kIoError, "the test proxy cannot listen");
  }
  proxy->port_ = ntohs(address.sin_port);
  FaultyHttpProxy* self = proxy.get();
  proxy->acceptor_ = std::thread([self] {
    while (!self->stopping_) {
      int client = ::accept(self->listener_, nullptr, nullptr);
      if (client < 0) continue;
      std::lock_guard lock(self->mutex_);
      if (self->stopping_) {
        ::close(client);
        break;
      }
      self->open_clients_.push_back(client);
      self->threads_.emplace_back([self, client] { self->Serve(client); });
    }
  });
  return proxy;
}

FaultyHttpProxy::~FaultyHttpProxy() {
  stopping_ = true;
  ::shutdown(listener_, SHUT_RDWR);
  ::close(listener_);
  acceptor_.join();
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mutex_);
    for (int client : open_clients_) ::shutdown(client, SHUT_RDWR);
    threads = std::move(threads_);
  }
  for (std::thread& thread : threads) thread.join();
}

std::string FaultyHttpProxy::endpoint() const { return fmt::format("http://127.0.0.1:{}", port_); }

void FaultyHttpProxy::Arm(Fault fault, const std::string& method, const std::string& target_substring, int times) {
  std::lock_guard lock(mutex_);
  armed_.push_back({fault, method, target_substring, times});
}

std::optional<FaultyHttpProxy::Fault> FaultyHttpProxy::Take(const std::string& method, const std::string& target) {
  std::lock_guard lock(mutex_);
  for (auto it = armed_.begin(); it != armed_.end(); ++it) {
    if ((it->method.empty() || it->method == method) && target.find(it->target_substring) != std::string::npos) {
      Fault fault = it->fault;
      if (--it->remaining == 0) armed_.erase(it);
      ++faults_applied_;
      return fault;
    }
  }
  return std::nullopt;
}

void FaultyHttpProxy::Serve(int client) {
  std::string head, body;
  if (ReadRequest(client, &head, &body)) {
    ++requests_;
    const size_t method_end = head.find(' ');
    const std::string method = head.substr(0, method_end);
    const std::string target = head.substr(method_end + 1, head.find(' ', method_end + 1) - method_end - 1);
    std::optional<Fault> fault = Take(method, target);
    std::vector<std::string> drop;
    if (strip_if_none_match_) drop.push_back("if-none-match");
    const std::string forwarded = Rewrite(head, drop);
    if (!fault) {
      SendAll(client, Forward(upstream_port_, forwarded, body));
    } else {
      switch (*fault) {
        case Fault::kServiceUnavailable:
          SendAll(client, Answer(503, "Service Unavailable", ""));
          break;
        case Fault::kSlowDown:
          SendAll(client, Answer(503, "Slow Down",
                                 "<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>"));
          break;
        case Fault::kResetBeforeForwarding:
          break;
        case Fault::kLoseReply:
          (void)Forward(upstream_port_, forwarded, body);
          break;
        case Fault::kTruncateReply: {
          const std::string reply = Forward(upstream_port_, forwarded, body);
          SendAll(client, std::string_view(reply).substr(0, reply.size() / 2 + 1));
          break;
        }
        case Fault::kAccessDenied:
          SendAll(client, Answer(403, "Forbidden",
                                 "<Error><Code>InvalidAccessKeyId</Code><Message>The AWS Access Key Id you provided "
                                 "does not exist in our records.</Message></Error>"));
          break;
        case Fault::kDelay:
          std::this_thread::sleep_for(std::chrono::milliseconds(1500));
          SendAll(client, Forward(upstream_port_, forwarded, body));
          break;
      }
    }
  }
  ::shutdown(client, SHUT_RDWR);
  std::lock_guard lock(mutex_);
  ::close(client);
  std::erase(open_clients_, client);
}

}  // namespace sluice::testing
