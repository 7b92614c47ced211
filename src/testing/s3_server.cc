#include "testing/s3_server.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <mutex>

#include <fmt/format.h>

#include "sluice/core/error_classes.h"
#include "sluice/storage/http_client.h"
#include "testing/child_process.h"
#include "testing/paths.h"

namespace sluice::testing {
namespace {

std::string Executable() {
  const char* given = std::getenv("SLUICE_MOTO_SERVER");
  if (given != nullptr && *given != '\0') return given;
  return SourceDir() + "/tests/tools/venv/bin/moto_server";
}

}  // namespace

S3Server& S3Server::Shared() {
  static S3Server* server = [] {
    auto* made = new S3Server();
    char pattern[] = "/tmp/sluice-s3-XXXXXX";
    made->directory_ = mkdtemp(pattern) != nullptr ? pattern : "/tmp";
    made->port_ = FreePort();
    Status started = made->Launch();
    if (!started.ok()) {
      std::fprintf(stderr, "the S3 server (moto) did not start: %s\n", started.ToString().c_str());
      std::abort();
    }
    setenv("AWS_ACCESS_KEY_ID", "sluice-test-key", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "sluice-test-secret", 1);
    setenv("AWS_REGION", "us-east-1", 1);
    setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
    setenv("AWS_ENDPOINT_URL", made->endpoint().c_str(), 1);
    setenv("AWS_ALLOW_HTTP", "true", 1);  // for delta-rs, the independent reader of the tests
    return made;
  }();
  return *server;
}

std::string S3Server::endpoint() const { return fmt::format("http://127.0.0.1:{}", port_); }

Status S3Server::Launch() {
  SLUICE_ASSIGN_OR_RETURN(pid_, SpawnHttpServer({Executable(), "-H", "127.0.0.1", "-p", std::to_string(port_)},
                                                directory_ + "/moto.log", endpoint() + "/", "moto_server"));
  return Status::OK();
}

void S3Server::Restart() {
  kill(-pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  Status started = Launch();
  if (!started.ok()) {
    std::fprintf(stderr, "the S3 server (moto) did not restart: %s\n", started.ToString().c_str());
    std::abort();
  }
}

Status S3Server::CreateBucket(const std::string& bucket) {
  storage::HttpClient http({});
  SLUICE_ASSIGN_OR_RETURN(storage::HttpResponse answer, http.Send({"PUT", endpoint() + "/" + bucket, {}, {}}));
  if (answer.status != 200 && answer.status != 409) {
    return Status::Error(errors::kIoError, fmt::format("CreateBucket {}: HTTP {} {}", bucket, answer.status, answer.body));
  }
  return Status::OK();
}

std::string S3Server::NewBucketUri() {
  static std::atomic<int> next{0};
  const std::string bucket = fmt::format("sluice-test-{}-{}", getpid(), next++);
  Status created = CreateBucket(bucket);
  if (!created.ok()) {
    std::fprintf(stderr, "%s\n", created.ToString().c_str());
    std::abort();
  }
  return "s3://" + bucket;
}

}  // namespace sluice::testing
