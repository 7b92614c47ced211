#include "testing/azure_server.h"

#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>

#include <fmt/format.h>

#include "sluice/core/clock.h"
#include "sluice/core/error_classes.h"
#include "sluice/storage/azure_file_system.h"
#include "sluice/storage/http_client.h"
#include "testing/child_process.h"
#include "testing/paths.h"

namespace sluice::testing {
namespace {

// The emulator's published development account.
constexpr const char* kAccount = "devstoreaccount1";
constexpr const char* kKey = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

std::string Executable() {
  const char* given = std::getenv("SLUICE_AZURITE_BLOB");
  if (given != nullptr && *given != '\0') return given;
  return SourceDir() + "/tests/tools/node_modules/.bin/azurite-blob";
}

}  // namespace

AzureServer& AzureServer::Shared() {
  static AzureServer* server = [] {
    auto* made = new AzureServer();
    char pattern[] = "/tmp/sluice-azure-XXXXXX";
    made->directory_ = mkdtemp(pattern) != nullptr ? pattern : "/tmp";
    made->port_ = FreePort();
    Result<pid_t> started = SpawnHttpServer(
        {Executable(), "--blobHost", "127.0.0.1", "--blobPort", std::to_string(made->port_), "--inMemoryPersistence",
         "--extentMemoryLimit", "2048", "--disableTelemetry", "--silent"},
        made->directory_ + "/azurite.log", made->endpoint(), "azurite-blob");
    if (!started.ok()) {
      std::fprintf(stderr, "the Azure Blob Storage emulator (Azurite) did not start: %s\n",
                   started.status().ToString().c_str());
      std::abort();
    }
    made->pid_ = *started;
    setenv("AZURE_STORAGE_CONNECTION_STRING", made->connection_string().c_str(), 1);
    // For delta-rs, the independent reader of the tests, which finds the emulator by these.
    setenv("AZURE_STORAGE_USE_EMULATOR", "true", 1);
    setenv("AZURITE_BLOB_STORAGE_URL", fmt::format("http://127.0.0.1:{}", made->port_).c_str(), 1);
    setenv("AZURE_STORAGE_ACCOUNT_NAME", kAccount, 1);
    setenv("AZURE_STORAGE_ACCOUNT_KEY", kKey, 1);
    return made;
  }();
  return *server;
}

std::string AzureServer::endpoint() const { return fmt::format("http://127.0.0.1:{}/{}", port_, kAccount); }

std::string AzureServer::connection_string() const {
  return fmt::format("DefaultEndpointsProtocol=http;AccountName={};AccountKey={};BlobEndpoint={};", kAccount, kKey,
                     endpoint());
}

Status AzureServer::CreateContainer(const std::string& container) {
  const std::string path = fmt::format("/{}/{}", kAccount, container);
  const std::vector<std::pair<std::string, std::string>> query{{"restype", "container"}};
  storage::HttpHeaders headers{{"x-ms-date", storage::HttpDate(SystemClock()->NowMicros() / 1000)},
                               {"x-ms-version", "2021-08-06"},
                               {"Content-Length", "0"},
                               {"Content-Type", "application/octet-stream"}};
  SLUICE_ASSIGN_OR_RETURN(std::string key, storage::DecodeAccountKey(kKey));
  headers.emplace_back("Authorization",
                       storage::AzureSharedKeyAuthorization(
                           kAccount, key, storage::AzureSharedKeyStringToSign("PUT", headers, kAccount, path, query)));
  storage::HttpClient http({});
  SLUICE_ASSIGN_OR_RETURN(storage::HttpResponse answer,
                          http.Send({"PUT", fmt::format("http://127.0.0.1:{}{}?restype=container", port_, path),
                                     headers, {}}));
  if (answer.status != 201 && answer.status != 409) {
    return Status::Error(errors::kIoError,
                         fmt::format("Create Container {}: HTTP {} {}", container, answer.status, answer.body));
  }
  return Status::OK();
}

std::string AzureServer::NewContainerUri() {
  static std::atomic<int> next{0};
  const std::string container = fmt::format("sluice-test-{}-{}", getpid(), next++);
  Status created = CreateContainer(container);
  if (!created.ok()) {
    std::fprintf(stderr, "%s\n", created.ToString().c_str());
    std::abort();
  }
  return "az://" + container;
}

}  // namespace sluice::testing
