#include "sluice/pipeline/metrics_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "sluice/core/error_classes.h"

namespace sluice::pipeline {
namespace {

constexpr size_t kMaxRequestBytes = 8192;
constexpr int kRequestTimeoutMs = 2000;

Status SocketError(const std::string& what, int error) {
  return Status::Error(errors::kIoError, "metrics endpoint: " + what + ": " + std::strerror(error));
}

void SendAll(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    sent += static_cast<size_t>(n);
  }
}

std::string Response(int code, const char* reason, const std::string& content_type, const std::string& body) {
  return "HTTP/1.1 " + std::to_string(code) + " " + reason + "\r\nContent-Type: " + content_type +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
}

}  // namespace

Result<std::unique_ptr<MetricsServer>> MetricsServer::Start(const std::string& address, int port,
                                                            std::function<std::string()> metrics,
                                                            std::function<bool()> ready) {
  sockaddr_in socket_address{};
  socket_address.sin_family = AF_INET;
  socket_address.sin_port = htons(static_cast<uint16_t>(port));
  if (port < 0 || port > 65535 || ::inet_pton(AF_INET, address.c_str(), &socket_address.sin_addr) != 1) {
    return Status::Error(errors::kInvalidArgument,
                         "metrics endpoint: '" + address + ":" + std::to_string(port) + "' is not an IPv4 address and port");
  }
  int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0) return SocketError("socket", errno);
  int reuse = 1;
  ::setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &reuse, sizeof(reuse));
  if (::bind(listener, reinterpret_cast<sockaddr*>(&socket_address), sizeof(socket_address)) != 0 ||
      ::listen(listener, 16) != 0) {
    int error = errno;
    ::close(listener);
    return SocketError("cannot listen on " + address + ":" + std::to_string(port), error);
  }
  socklen_t length = sizeof(socket_address);
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&socket_address), &length);
  int wake[2];
  if (::pipe2(wake, O_CLOEXEC) != 0) {
    int error = errno;
    ::close(listener);
    return SocketError("pipe", error);
  }
  return std::unique_ptr<MetricsServer>(new MetricsServer(listener, wake[0], wake[1], ntohs(socket_address.sin_port),
                                                          std::move(metrics), std::move(ready)));
}

MetricsServer::MetricsServer(int listener, int wake_read, int wake_write, int port,
                             std::function<std::string()> metrics, std::function<bool()> ready)
    : listener_(listener),
      wake_read_(wake_read),
      wake_write_(wake_write),
      port_(port),
      metrics_(std::move(metrics)),
      ready_(std::move(ready)) {
  thread_ = std::thread([this] { Serve(); });
}

MetricsServer::~MetricsServer() {
  char byte = 0;
  while (::write(wake_write_, &byte, 1) < 0 && errno == EINTR) {
  }
  thread_.join();
  ::close(listener_);
  ::close(wake_read_);
  ::close(wake_write_);
}

void MetricsServer::Serve() {
  while (true) {
    pollfd fds[2] = {{listener_, POLLIN, 0}, {wake_read_, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    if ((fds[0].revents & POLLIN) == 0) continue;
    int client = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    Answer(client);
    ::close(client);
  }
}

void MetricsServer::Answer(int client) {
  std::string request;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kRequestTimeoutMs);
  while (request.find("\r\n\r\n") == std::string::npos) {
    if (request.size() >= kMaxRequestBytes) {
      SendAll(client, Response(431, "Request Header Fields Too Large", "text/plain", "request too large\n"));
      return;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd fd{client, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&fd, 1, static_cast<int>(left.count())) <= 0) return;
    char buffer[1024];
    ssize_t n = ::recv(client, buffer, sizeof(buffer), 0);
    if (n <= 0) return;
    request.append(buffer, static_cast<size_t>(n));
  }
  const size_t line_end = request.find("\r\n");
  const std::string line = request.substr(0, line_end);
  const size_t method_end = line.find(' ');
  const size_t target_end = method_end == std::string::npos ? std::string::npos : line.find(' ', method_end + 1);
  if (target_end == std::string::npos) {
    SendAll(client, Response(400, "Bad Request", "text/plain", "malformed request line\n"));
    return;
  }
  const std::string method = line.substr(0, method_end);
  std::string target = line.substr(method_end + 1, target_end - method_end - 1);
  target = target.substr(0, target.find('?'));
  if (method != "GET") {
    SendAll(client, Response(405, "Method Not Allowed", "text/plain", "only GET\n"));
  } else if (target == "/metrics") {
    SendAll(client, Response(200, "OK", "text/plain; version=0.0.4; charset=utf-8", metrics_()));
  } else if (target == "/ready") {
    bool ready = ready_();
    SendAll(client, ready ? Response(200, "OK", "text/plain", "ready\n")
                          : Response(503, "Service Unavailable", "text/plain", "not ready\n"));
  } else {
    SendAll(client, Response(404, "Not Found", "text/plain", "try /metrics or /ready\n"));
  }
}

}  // namespace sluice::pipeline
