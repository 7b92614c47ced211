// The catalog: named connections kept under the warehouse, so that pipelines and commands say
// `connection: orders_db` instead of repeating hosts and credentials.
//
//   Catalog catalog(LocalFileSystem(), "/var/lib/sluice/warehouse");
//   SLUICE_RETURN_IF_ERROR(catalog.Create({"orders_db", "postgresql",
//       {{"host", "db.internal"}, {"database", "orders"}, {"user", "loader"},
//        {"password", "${env:ORDERS_DB_PASSWORD}"}}}));
//   SLUICE_ASSIGN_OR_RETURN(auto options, ExpandConnection({{"connection", "orders_db"},
//                                                           {"dbtable", "public.orders"}}, catalog));
//
// Storage: one JSON file per connection, `<warehouse>/_sluice/catalog/connections/<name>.json`,
// written through the FileSystem interface: Create publishes with PutIfAbsent (of two racing
// creators exactly one succeeds), so a reader never sees a half-written connection.
//
// Connections: a name (a simple identifier: a letter or `_`, then letters, digits or `_`, at most
// 63 characters; names are case-sensitive), a type (`postgresql` or `kafka`, the format that uses
// it) and option fields named exactly as that format's options:
//   postgresql: host, port, database, user, password, sslmode, sslrootcert, sslcert, sslkey
//   kafka:      bootstrap_servers, sasl_mechanism, user, password, ssl_ca_location,
//               ssl_certificate_location, ssl_key_location, ssl_key_password
// Field names match case-insensitively and are stored in the spelling above. Secret fields
// (`password`, `ssl_key_password`) hold only a reference, `${env:NAME}` or `${file:/absolute/path}`,
// resolved by the format when it starts; a literal secret is refused, so no secret is ever stored
// in the catalog or shown by Describe.
//
// Errors: CONNECTION_ALREADY_EXISTS, CONNECTION_NOT_FOUND (listing the closest existing names),
// CONNECTION_LITERAL_SECRET, INVALID_CONNECTION_NAME, INVALID_OPTIONS (unknown type or field, empty
// value), CONNECTION_CORRUPT (a stored file that sluice did not write), IO_ERROR from the file system.
//
// A Catalog is thread-safe (it holds no state beyond its paths); several processes may share a
// warehouse.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/file_system.h"
#include "sluice/core/status.h"

namespace sluice::pipeline {

struct Connection {
  std::string name;
  std::string type;                            // "postgresql" or "kafka"
  std::map<std::string, std::string> options;  // field -> value (secrets as references)
};

class Catalog {
 public:
  // `warehouse` is an absolute path; the catalog lives below it and is created on first write.
  Catalog(std::shared_ptr<FileSystem> fs, std::string warehouse);

  // Validates and stores `connection`; its field names are canonicalized first.
  Status Create(const Connection& connection);
  Result<Connection> Get(std::string_view name) const;
  // Every connection that reads back, sorted by name. A file that does not (malformed, or holding
  // another name than its file's) is left out, its CONNECTION_CORRUPT error added to `*unreadable`,
  // so one bad file does not hide the others.
  Result<std::vector<Connection>> List(std::vector<Status>* unreadable) const;
  // CONNECTION_NOT_FOUND when there is no such connection.
  Status Delete(std::string_view name);

  // The file that holds connection `name`.
  std::string PathOf(std::string_view name) const;

 private:
  std::shared_ptr<FileSystem> fs_;
  std::string directory_;
};

// Checks a connection without storing it: its name, type and fields as described above. Returns
// the connection with its field names canonicalized.
Result<Connection> ValidateConnection(const Connection& connection);

// Multi-line `field: value` text of a connection, with every secret field shown as `*****` followed
// by the reference it is resolved from.
std::string Describe(const Connection& connection);
// The same as one JSON object: {"name", "type", "options": {field: value}, "secrets": {field:
// reference}}; a secret's value is never in a connection, only the reference it is resolved from.
std::string DescribeJson(const Connection& connection);

// A format's options with the connection they name merged in: when `options` has a `connection`
// key (any case), the named connection's fields are added under their canonical names, unless the
// options already give that field (any case): explicit options win. The `connection` key itself is
// removed. Options without a `connection` key are returned unchanged. When `format` is not empty
// and differs from the connection's type, fails with INVALID_OPTIONS (a kafka connection cannot
// serve a postgresql source). An unknown connection fails with CONNECTION_NOT_FOUND.
Result<std::map<std::string, std::string>> ExpandConnection(const std::map<std::string, std::string>& options,
                                                            const Catalog& catalog, std::string_view format = {});
// As above, with the connection found by `lookup` (a pipeline file's own connections come before
// the catalog's).
Result<std::map<std::string, std::string>> ExpandConnection(
    const std::map<std::string, std::string>& options,
    const std::function<Result<Connection>(std::string_view name)>& lookup, std::string_view format = {});

// A lookup that finds a connection among `own` (a pipeline or project file's, checked as the
// catalog checks its connections) before `catalog`'s. Both must outlive it.
std::function<Result<Connection>(std::string_view name)> OwnThenCatalog(const std::map<std::string, Connection>& own,
                                                                        const Catalog& catalog);

}  // namespace sluice::pipeline
