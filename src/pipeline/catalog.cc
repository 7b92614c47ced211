#include "sluice/pipeline/catalog.h"

#include "sluice/core/ascii.h"
#include "sluice/core/edit_distance.h"
#include "sluice/core/json_text.h"

#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <span>

#include "sluice/core/error_classes.h"
#include "sluice/core/options.h"

namespace sluice::pipeline {

namespace {

struct ConnectionType {
  std::string_view name;
  std::span<const std::string_view> fields;
};

constexpr std::string_view kPostgresFields[] = {"host",    "port",        "database", "user",  "password",
                                                "sslmode", "sslrootcert", "sslcert",  "sslkey"};
constexpr std::string_view kKafkaFields[] = {"bootstrap_servers", "sasl_mechanism",           "user",
                                             "password",          "ssl_ca_location",          "ssl_certificate_location",
                                             "ssl_key_location",  "ssl_key_password"};
constexpr ConnectionType kTypes[] = {{"postgresql", kPostgresFields}, {"kafka", kKafkaFields}};

constexpr std::string_view kSecretFields[] = {"password", "ssl_key_password"};
constexpr size_t kMaxNameLength = 63;
constexpr std::string_view kJsonSuffix = ".json";

bool IsSecretField(std::string_view field) {
  return std::find(std::begin(kSecretFields), std::end(kSecretFields), field) != std::end(kSecretFields);
}

Status NameError(std::string_view name, std::string why) {
  return Status::Error(errors::kInvalidConnectionName, "connection name `" + std::string(name) + "` " + why +
                                                           ": use a letter or `_`, then letters, digits or `_`");
}

Status CheckName(std::string_view name) {
  if (name.empty()) return NameError(name, "is empty");
  if (name.size() > kMaxNameLength) return NameError(name, "is longer than 63 characters");
  if (std::isdigit(static_cast<unsigned char>(name[0]))) return NameError(name, "starts with a digit");
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') {
      return NameError(name, "contains `" + std::string(1, c) + "`");
    }
  }
  return Status::OK();
}

std::string ToJson(const Connection& connection) {
  std::string out = "{\"name\":";
  auto append_string = [&out](std::string_view value) { AppendJsonString(&out, value); };
  append_string(connection.name);
  out += ",\"type\":";
  append_string(connection.type);
  out += ",\"options\":{";
  bool first = true;
  for (const auto& [field, value] : connection.options) {
    if (!first) out += ',';
    first = false;
    append_string(field);
    out += ':';
    append_string(value);
  }
  out += "}}\n";
  return out;
}

// The connection in `path`, which must be the one its file name says (`name`.json).
Result<Connection> FromJson(const std::string& path, const std::string& text, std::string_view expected_name) {
  auto corrupt = [&path](std::string_view why) {
    return Status::Error(errors::kConnectionCorrupt, path + ": " + std::string(why));
  };
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(simdjson::padded_string(text)).get(doc) != simdjson::SUCCESS) return corrupt("not JSON");
  Connection connection;
  std::string_view name, type;
  simdjson::dom::object options;
  if (doc["name"].get(name) != simdjson::SUCCESS) return corrupt("no string `name`");
  if (doc["type"].get(type) != simdjson::SUCCESS) return corrupt("no string `type`");
  if (doc["options"].get(options) != simdjson::SUCCESS) return corrupt("no object `options`");
  if (name != expected_name) {
    return corrupt("holds connection `" + std::string(name) + "`, not `" + std::string(expected_name) +
                   "` as its file name says; rename the file or fix its name");
  }
  connection.name = name;
  connection.type = type;
  for (auto [key, element] : options) {
    std::string_view value;
    if (element.get(value) != simdjson::SUCCESS) return corrupt("option `" + std::string(key) + "` is not a string");
    connection.options.emplace(key, value);
  }
  Result<Connection> valid = ValidateConnection(connection);
  if (!valid.ok()) return corrupt(valid.status().ToString());
  return valid;
}

}  // namespace

Result<Connection> ValidateConnection(const Connection& connection) {
  SLUICE_RETURN_IF_ERROR(CheckName(connection.name));
  const ConnectionType* type = nullptr;
  for (const ConnectionType& candidate : kTypes) {
    if (EqualsIgnoreCase(candidate.name, connection.type)) type = &candidate;
  }
  if (type == nullptr) {
    return Status::Error(errors::kInvalidOptions, "connection `" + connection.name + "`: unknown type `" +
                                                      connection.type + "`; the types are postgresql and kafka");
  }
  Connection out{connection.name, std::string(type->name), {}};
  for (const auto& [field, value] : connection.options) {
    auto known = std::find_if(type->fields.begin(), type->fields.end(),
                              [&given = field](std::string_view f) { return EqualsIgnoreCase(f, given); });
    if (known == type->fields.end()) {
      std::string list;
      for (std::string_view f : type->fields) list += (list.empty() ? "" : ", ") + std::string(f);
      return Status::Error(errors::kInvalidOptions, "connection `" + connection.name + "`: unknown " + out.type +
                                                        " field `" + field + "`; the fields are " + list);
    }
    std::string canonical(*known);
    if (value.empty()) {
      return Status::Error(errors::kInvalidOptions,
                           "connection `" + connection.name + "`: field `" + canonical + "` is empty");
    }
    if (IsSecretField(canonical) && !IsSecretReference(value)) {
      // The value is never echoed: it may be the very secret that must not be stored.
      return Status::Error(errors::kConnectionLiteralSecret,
                           "connection `" + connection.name + "`: field `" + canonical +
                               "` must be a reference, ${env:NAME} or ${file:/absolute/path}, not the secret itself");
    }
    if (!out.options.emplace(canonical, value).second) {
      return Status::Error(errors::kInvalidOptions,
                           "connection `" + connection.name + "`: field `" + canonical + "` is given twice");
    }
  }
  return out;
}

Catalog::Catalog(std::shared_ptr<FileSystem> fs, std::string warehouse)
    : fs_(std::move(fs)), directory_(std::move(warehouse) + "/_sluice/catalog/connections") {}

std::string Catalog::PathOf(std::string_view name) const {
  return directory_ + "/" + std::string(name) + std::string(kJsonSuffix);
}

Status Catalog::Create(const Connection& connection) {
  SLUICE_ASSIGN_OR_RETURN(Connection valid, ValidateConnection(connection));
  SLUICE_RETURN_IF_ERROR(fs_->CreateDirectories(directory_));
  Status put = fs_->PutIfAbsent(PathOf(valid.name), ToJson(valid));
  if (put.error_class() == errors::kFileAlreadyExists) {
    return Status::Error(errors::kConnectionAlreadyExists,
                         "connection `" + valid.name + "` already exists; delete it first to replace it");
  }
  return put;
}

Result<Connection> Catalog::Get(std::string_view name) const {
  SLUICE_RETURN_IF_ERROR(CheckName(name));
  std::string path = PathOf(name);
  Result<std::string> text = fs_->ReadFile(path);
  if (text.ok()) return FromJson(path, *text, name);
  if (text.status().error_class() != errors::kFileNotFound) return text.status();

  SLUICE_ASSIGN_OR_RETURN(std::vector<FileInfo> files, fs_->List(directory_));
  std::vector<std::pair<size_t, std::string>> close;
  for (const FileInfo& file : files) {
    std::string_view base = std::string_view(file.path).substr(file.path.rfind('/') + 1);
    if (file.is_directory || !base.ends_with(kJsonSuffix)) continue;
    base.remove_suffix(kJsonSuffix.size());
    size_t distance = EditDistance(name, base);
    if (distance <= std::max<size_t>(2, name.size() / 3)) close.emplace_back(distance, base);
  }
  std::sort(close.begin(), close.end());
  std::string message = "no connection named `" + std::string(name) + "`";
  if (!close.empty()) {
    message += "; did you mean ";
    for (size_t i = 0; i < close.size() && i < 3; ++i) message += (i ? ", `" : "`") + close[i].second + "`";
    message += "?";
  }
  message += " (`sluice connection list` shows them all)";
  return Status::Error(errors::kConnectionNotFound, message);
}

Result<std::vector<Connection>> Catalog::List(std::vector<Status>* unreadable) const {
  SLUICE_ASSIGN_OR_RETURN(std::vector<FileInfo> files, fs_->List(directory_));
  std::vector<Connection> out;
  for (const FileInfo& file : files) {
    if (file.is_directory || !file.path.ends_with(kJsonSuffix)) continue;
    SLUICE_ASSIGN_OR_RETURN(std::string text, fs_->ReadFile(file.path));
    std::string_view base = std::string_view(file.path).substr(file.path.rfind('/') + 1);
    base.remove_suffix(kJsonSuffix.size());
    Result<Connection> connection = FromJson(file.path, text, base);
    if (!connection.ok()) {
      unreadable->push_back(connection.status());
      continue;
    }
    out.push_back(std::move(connection).value());
  }
  std::sort(out.begin(), out.end(), [](const Connection& a, const Connection& b) { return a.name < b.name; });
  return out;
}

Status Catalog::Delete(std::string_view name) {
  SLUICE_RETURN_IF_ERROR(Get(name).status());
  return fs_->Delete(PathOf(name));
}

std::string Describe(const Connection& connection) {
  std::string out = "name: " + connection.name + "\ntype: " + connection.type + "\n";
  for (const auto& [field, value] : connection.options) {
    out += field + ": ";
    out += IsSecretField(field) ? "***** (from " + value + ")" : value;
    out += '\n';
  }
  return out;
}

std::string DescribeJson(const Connection& connection) {
  std::string options, secrets;
  for (const auto& [field, value] : connection.options) {
    std::string& into = IsSecretField(field) ? secrets : options;
    into += (into.empty() ? "" : ",") + JsonString(field) + ":" + JsonString(value);
  }
  return "{\"name\":" + JsonString(connection.name) + ",\"type\":" + JsonString(connection.type) + ",\"options\":{" +
         options + "},\"secrets\":{" + secrets + "}}";
}

std::function<Result<Connection>(std::string_view name)> OwnThenCatalog(const std::map<std::string, Connection>& own,
                                                                        const Catalog& catalog) {
  return [&own, &catalog](std::string_view name) -> Result<Connection> {
    auto found = own.find(std::string(name));
    if (found != own.end()) return ValidateConnection(found->second);
    return catalog.Get(name);
  };
}

Result<std::map<std::string, std::string>> ExpandConnection(const std::map<std::string, std::string>& options,
                                                            const Catalog& catalog, std::string_view format) {
  return ExpandConnection(options, [&catalog](std::string_view name) { return catalog.Get(name); }, format);
}

Result<std::map<std::string, std::string>> ExpandConnection(
    const std::map<std::string, std::string>& options,
    const std::function<Result<Connection>(std::string_view name)>& lookup, std::string_view format) {
  auto named = std::find_if(options.begin(), options.end(),
                            [](const auto& option) { return EqualsIgnoreCase(option.first, "connection"); });
  if (named == options.end()) return options;
  SLUICE_ASSIGN_OR_RETURN(Connection connection, lookup(named->second));
  if (!format.empty() && !EqualsIgnoreCase(format, connection.type)) {
    return Status::Error(errors::kInvalidOptions, "connection `" + connection.name + "` is a " + connection.type +
                                                      " connection; a " + std::string(format) + " format cannot use it");
  }
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : options) {
    if (key != named->first) out.emplace(key, value);
  }
  for (const auto& [field, value] : connection.options) {
    bool given = std::any_of(out.begin(), out.end(), [&name = field](const auto& option) { return EqualsIgnoreCase(option.first, name); });
    if (!given) out.emplace(field, value);
  }
  return out;
}

}  // namespace sluice::pipeline
