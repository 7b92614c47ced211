// EmbeddedPostgres: a private PostgreSQL 15 server started from the installed Debian binaries.
//
// Start() creates the cluster on first use (initdb into the data directory) and launches the
// postmaster listening on 127.0.0.1 only, on a free TCP port chosen at each start, with its unix
// socket inside the data directory, `wal_level=logical` and room for 20 replication slots and WAL
// senders. A superuser (default `sluice`) is trusted on loopback without a password: the server is
// for demos and tests on one machine, never for shared hosts.
//
// PostgreSQL refuses to run as root. When the calling process is root, initdb and the server run as
// an unprivileged OS user instead: `postgres` (created by Debian's postgresql packages) when it
// exists, otherwise `nobody`; EmbeddedPostgresOptions::os_user overrides the choice. The data
// directory is chowned to that user, and every parent directory must be searchable by it.
//
// The server runs in its own process group and receives SIGQUIT (immediate shutdown) if the thread
// that called Start() dies, so a killed sluice process never leaves an orphaned server holding the
// data directory. Start the server from a thread that lives as long as the server should.
//
// Every failure is reported as EMBEDDED_SERVICE_FAILED; when initdb or the server itself failed,
// the message ends with the last lines of its output.
// Not thread-safe: one owner drives Start/Stop; the accessors may be read concurrently while the
// server runs.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <string_view>

#include "sluice/core/status.h"

namespace sluice::connectors {

struct EmbeddedPostgresOptions {
  // Where the cluster lives; created (with parents) if absent. An existing directory must be empty
  // or hold a cluster made earlier by EmbeddedPostgres.
  std::string data_dir;
  std::string superuser = "sluice";
  // Turning fsync off makes tests several times faster and loses data on a machine crash (not on a
  // process crash): only tests should do it.
  bool fsync = true;
  std::chrono::milliseconds start_timeout = std::chrono::seconds(60);
  std::chrono::milliseconds stop_timeout = std::chrono::seconds(60);
  std::string bin_dir = "/usr/lib/postgresql/15/bin";
  // Used only when running as root; empty means `postgres` if it exists, else `nobody`.
  std::string os_user;
  // When running as root, the OS user may be unable to reach data_dir (e.g. under /root, mode
  // 0700). If set, the cluster then lives in /var/tmp/sluice-postgres-<hash of data_dir> instead
  // (data_dir() tells where); if not, Start() fails and says which directory is not searchable.
  bool relocate_if_unreachable = false;
};

class EmbeddedPostgres {
 public:
  explicit EmbeddedPostgres(EmbeddedPostgresOptions options);
  EmbeddedPostgres(const EmbeddedPostgres&) = delete;
  EmbeddedPostgres& operator=(const EmbeddedPostgres&) = delete;
  // Stops a running server (fast shutdown).
  ~EmbeddedPostgres();

  // Initializes the cluster if needed, starts the server and waits until it accepts connections.
  // Fails if this object already runs a server, or if another server runs on the data directory.
  Status Start();
  // Fast shutdown: disconnects clients, checkpoints and waits for the server to exit.
  Status Stop();
  // Kills the server and all its backends with SIGKILL, as a machine crash would. The next Start()
  // runs crash recovery.
  Status Kill9();
  // Stop() if running, then Start().
  Status Restart();

  // Creates a database owned by the superuser. Fails if it exists.
  Status CreateDatabase(std::string_view name);

  bool running() const { return pid_ > 0; }
  // The TCP port of the running server (0 when stopped); it changes at each Start().
  int port() const { return port_; }
  const std::string& host() const { return host_; }
  const std::string& superuser() const { return options_.superuser; }
  // Where the cluster lives: the absolute form of the data_dir option, or the relocated directory.
  const std::string& data_dir() const { return options_.data_dir; }
  // True when data_dir() differs from the requested directory (see relocate_if_unreachable).
  bool relocated() const { return relocated_; }
  // The OS user the server runs as: the current user unless the process is root.
  const std::string& os_user() const { return os_user_; }
  // The file the server writes its log to.
  std::string log_path() const;
  // A libpq keyword/value connection string for `database` on the running server.
  std::string ConnectionString(std::string_view database = "postgres") const;

 private:
  Status ResolveOsUser();
  Status EnsureReachable();
  Status PrepareDataDir(bool* needs_initdb);
  Status InitDb();
  Status FailIfDataDirInUse() const;
  Status LaunchAndWait(int port, bool* port_taken);
  Status WaitForExit(std::chrono::milliseconds timeout, bool* exited);
  Status Failure(std::string_view what) const;

  EmbeddedPostgresOptions options_;
  std::string host_ = "127.0.0.1";
  std::string os_user_;
  uid_t run_uid_ = 0;
  gid_t run_gid_ = 0;
  bool drop_privileges_ = false;
  bool relocated_ = false;
  pid_t pid_ = 0;
  int port_ = 0;
};

}  // namespace sluice::connectors
