// A loopback HTTP server that answers as Confluent Schema Registry's REST API documents
// (https://docs.confluent.io/platform/current/schema-registry/develop/api.html), for tests of
// the registry client and of decoders that fetch schemas. Header-only: tests include it.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace sluice::formats::testing {

struct Response {
  int status = 200;
  std::string body;
};

// One thread serving one request per connection ("Connection: close").
class FakeRegistry {
 public:
  using Handler = std::function<Response(const std::string& path, const std::string& authorization)>;

  explicit FakeRegistry(Handler handler) : handler_(std::move(handler)) {
    listener_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    socklen_t length = sizeof(address);
    getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    EXPECT_EQ(listen(listener_, 16), 0);
    thread_ = std::thread([this] { Serve(); });
  }
  ~FakeRegistry() {
    stop_ = true;
    thread_.join();
    close(listener_);
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<std::string> paths() {
    std::lock_guard lock(mutex_);
    return paths_;
  }

 private:
  void Serve() {
    while (!stop_) {
      pollfd ready{listener_, POLLIN, 0};
      if (poll(&ready, 1, 20) <= 0) continue;
      int connection = accept(listener_, nullptr, nullptr);
      if (connection < 0) continue;
      std::string request;
      char buffer[4096];
      while (request.find("\r\n\r\n") == std::string::npos) {
        ssize_t n = read(connection, buffer, sizeof(buffer));
        if (n <= 0) break;
        request.append(buffer, static_cast<size_t>(n));
      }
      size_t path_start = request.find(' ') + 1;
      std::string path = request.substr(path_start, request.find(' ', path_start) - path_start);
      std::string authorization;
      if (size_t at = request.find("Authorization: "); at != std::string::npos) {
        authorization = request.substr(at + 15, request.find("\r\n", at) - at - 15);
      }
      {
        std::lock_guard lock(mutex_);
        paths_.push_back(path);
      }
      Response response = handler_(path, authorization);
      std::string text = "HTTP/1.1 " + std::to_string(response.status) + " X\r\nContent-Type: application/vnd.schemaregistry.v1+json\r\n" +
                         "Content-Length: " + std::to_string(response.body.size()) + "\r\nConnection: close\r\n\r\n" + response.body;
      EXPECT_EQ(write(connection, text.data(), text.size()), static_cast<ssize_t>(text.size()));
      close(connection);
    }
  }

  Handler handler_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mutex_;
  std::vector<std::string> paths_;
};

}  // namespace sluice::formats::testing
