// AzureServer: Azure Blob Storage on loopback for the object-store tests: Azurite's blob service
// (`azurite-blob`, from the npm registry into tests/tools/node_modules by
// scripts/install-test-tools.sh; another executable with SLUICE_AZURITE_BLOB), in memory. Azurite
// checks Shared Key signatures, so a request sluice signs wrongly fails here as it would on Azure.
//
// One server per test process (Shared()), started on first use on a free port, its log in a
// temporary folder, killed with the process. The environment gets AZURE_STORAGE_CONNECTION_STRING
// naming the emulator's well-known account and this server's endpoint, so DefaultFileSystem()
// reaches `az://` paths with no options, and the variables delta-rs reads for the emulator
// (AZURE_STORAGE_USE_EMULATOR, AZURITE_BLOB_STORAGE_URL, the account's name and key).
// Thread-safe.
#pragma once

#include <sys/types.h>

#include <string>

#include "sluice/core/status.h"

namespace sluice::testing {

class AzureServer {
 public:
  // The process's server; aborts the test binary with the server's log when it cannot start.
  static AzureServer& Shared();

  // "http://127.0.0.1:<port>/devstoreaccount1", the Blob service's endpoint.
  std::string endpoint() const;
  // The emulator's connection string (account, key, endpoint).
  std::string connection_string() const;
  // Creates a container; OK when it exists.
  Status CreateContainer(const std::string& container);
  // A fresh container with a unique name ("sluice-test-<pid>-<n>"), as "az://<container>".
  std::string NewContainerUri();

 private:
  AzureServer() = default;

  std::string directory_;
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace sluice::testing
