#include "sluice/storage/azure_file_system.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>

#include <fmt/format.h>

#include "sluice/core/ascii.h"
#include "sluice/core/clock.h"
#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "sluice/storage/sigv4.h"
#include "sluice/storage/xml_reply.h"
#include "environment.h"

namespace sluice::storage {
namespace {

constexpr std::string_view kApiVersion = "2021-08-06";
// The storage emulator's well-known account (published with the emulator; not a secret).
constexpr std::string_view kEmulatorAccount = "devstoreaccount1";
constexpr std::string_view kEmulatorKey =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
constexpr std::string_view kEmulatorEndpoint = "http://127.0.0.1:10000/devstoreaccount1";

constexpr OptionSpec kAzureOptionSpecs[] = {
    {"account_name", OptionType::kString, std::nullopt, false,
     "the storage account of az:// paths; AZURE_STORAGE_ACCOUNT_NAME when absent"},
    {"account_key", OptionType::kSecret, std::nullopt, false, "a reference to the account key (Shared Key)"},
    {"sas_token", OptionType::kSecret, std::nullopt, false, "a reference to a shared access signature token"},
    {"connection_string", OptionType::kSecret, std::nullopt, false,
     "a reference to a connection string (AccountName, AccountKey or SharedAccessSignature, BlobEndpoint)"},
    {"endpoint", OptionType::kString, std::nullopt, false,
     "http(s)://host[:port][/path] of the Blob service; https://<account>.blob.core.windows.net when absent"},
    {"block_size", OptionType::kLong, "8388608", false, "bytes per staged block of a large file", {}, 1024 * 1024,
     4000.0 * 1024 * 1024},
};

std::span<const OptionSpec> AzureOptionSpecs() {
  static const std::vector<OptionSpec> specs = WithCommonStoreOptions(kAzureOptionSpecs);
  return specs;
}

// "Key=Value;Key=Value" (values may hold '=', as base64 keys end with it).
std::map<std::string, std::string> ParseConnectionString(std::string_view text) {
  std::map<std::string, std::string> fields;
  size_t at = 0;
  while (at <= text.size()) {
    size_t end = text.find(';', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view field = text.substr(at, end - at);
    const size_t equals = field.find('=');
    if (equals != std::string_view::npos) fields[std::string(field.substr(0, equals))] = field.substr(equals + 1);
    at = end + 1;
  }
  return fields;
}

}  // namespace

Result<std::string> DecodeAccountKey(std::string_view text) {
  for (char c : text) {
    if (Base64DigitValue(c) < 0 && c != '=') {
      return Status::Error(errors::kInvalidStorageUri, "the Azure account key is not base64");
    }
  }
  if (text.empty() || text.size() % 4 != 0) {
    return Status::Error(errors::kInvalidStorageUri, "the Azure account key is not base64");
  }
  std::string out(text.size() / 4 * 3, '\0');
  const int written = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                      reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  if (written < 0) return Status::Error(errors::kInvalidStorageUri, "the Azure account key is not base64");
  size_t padding = 0;
  while (padding < 2 && padding < text.size() && text[text.size() - 1 - padding] == '=') ++padding;
  out.resize(static_cast<size_t>(written) - padding);
  return out;
}

namespace {

std::string Base64(std::string_view bytes) {
  std::string out;
  AppendBase64(bytes, &out);
  return out;
}

bool Retriable(const HttpResponse& response) {
  return response.status == 408 || response.status == 429 || response.status == 500 || response.status == 502 ||
         response.status == 503 || response.status == 504;
}

class AzureStore final : public ObjectStore {
 public:
  struct Call {
    std::string method;
    std::string key;  // "" for the container itself
    std::vector<std::pair<std::string, std::string>> query;
    HttpHeaders headers;
    std::string_view body;
  };

  AzureStore(std::string root, std::string account, std::string container, std::string key_bytes, AzureOptions options)
      : root_(std::move(root)),
        account_(std::move(account)),
        container_(std::move(container)),
        key_(std::move(key_bytes)),
        options_(std::move(options)),
        http_(options_.http) {
    const std::string& endpoint = options_.endpoint;
    const size_t scheme_end = endpoint.find("://") + 3;
    const size_t path_start = endpoint.find('/', scheme_end);
    base_url_ = endpoint.substr(0, path_start);
    path_prefix_ = path_start == std::string::npos ? "" : endpoint.substr(path_start);
    while (path_prefix_.ends_with('/')) path_prefix_.pop_back();
  }

  const std::string& root() const override { return root_; }
  std::string_view kind() const override { return "Azure Blob Storage"; }

  Result<std::string> Get(const std::string& key) override {
    SLUICE_ASSIGN_OR_RETURN(HttpResponse response, Send({"GET", key, {}, {}, {}}));
    if (response.status != 200) return Failure("Get Blob", key, response);
    return std::move(response.body);
  }

  Result<RangedBytes> GetRange(const std::string& key, int64_t offset, int64_t length) override {
    SLUICE_ASSIGN_OR_RETURN(
        HttpResponse response,
        Send({"GET", key, {}, {{"x-ms-range", fmt::format("bytes={}-{}", offset, offset + length - 1)}}, {}}));
    std::optional<RangedBytes> read = RangedAnswer(response, offset, length);
    if (!read) return Failure("Get Blob", key, response);
    return std::move(*read);
  }

  Status Put(const std::string& key, std::string_view data, bool if_absent, bool* ambiguous) override {
    HttpHeaders headers{{"x-ms-blob-type", "BlockBlob"}};
    if (if_absent) headers.emplace_back("If-None-Match", "*");
    SLUICE_ASSIGN_OR_RETURN(HttpResponse response, Send({"PUT", key, {}, std::move(headers), data}, ambiguous));
    if (response.status == 201) return Status::OK();
    if (if_absent && (response.status == 409 || response.status == 412) && ErrorCode(response) != "ContainerNotFound") {
      return Status::Error(errors::kFileAlreadyExists, fmt::format("{} already exists", Uri(key)));
    }
    return Failure("Put Blob", key, response);
  }

  Result<ListedObject> Head(const std::string& key) override {
    SLUICE_ASSIGN_OR_RETURN(HttpResponse head, Send({"HEAD", key, {}, {}, {}}));
    if (head.status != 200) return Failure("Get Blob Properties", key, head);
    return ListedObject{key, std::strtoll(std::string(head.Header("content-length")).c_str(), nullptr, 10),
                        ParseStoreTime(head.Header("last-modified")).value_or(0)};
  }

  Status List(const std::string& prefix, bool by_folder, const std::string& start_after,
              const std::function<bool(ListPage&)>& visit) override {
    (void)start_after;  // the Blob service cannot start after a key; ObjectStoreFileSystem filters
    std::string marker;
    do {
      std::vector<std::pair<std::string, std::string>> query{{"restype", "container"}, {"comp", "list"}};
      if (!prefix.empty()) query.emplace_back("prefix", prefix);
      if (by_folder) query.emplace_back("delimiter", "/");
      if (!marker.empty()) query.emplace_back("marker", marker);
      SLUICE_ASSIGN_OR_RETURN(HttpResponse response, Send({"GET", "", query, {}, {}}));
      if (response.status != 200) return Failure("List Blobs", prefix, response);
      SLUICE_ASSIGN_OR_RETURN(ListPage page, ParseListBlobs(response.body));
      marker = page.truncated ? page.next_continuation_token : "";
      if (!visit(page)) break;
    } while (!marker.empty());
    return Status::OK();
  }

  Status Delete(const std::string& key) override {
    SLUICE_ASSIGN_OR_RETURN(HttpResponse response, Send({"DELETE", key, {}, {}, {}}));
    if (response.status == 202 || response.status == 200) return Status::OK();
    if (response.status == 404 && ErrorCode(response) != "ContainerNotFound") return Status::OK();
    return Failure("Delete Blob", key, response);
  }

  Result<std::unique_ptr<PartUpload>> StartUpload(const std::string& key) override;

  Result<HttpResponse> Send(const Call& call, bool* ambiguous = nullptr) {
    const std::string path = path_prefix_ + "/" + container_ + (call.key.empty() ? "" : "/" + UriEncode(call.key, false));
    std::string query = CanonicalQuery(call.query);
    if (!options_.sas_token.empty()) query += (query.empty() ? "" : "&") + options_.sas_token;
    const std::string url = base_url_ + path + (query.empty() ? "" : "?" + query);
    return SendWithRetries(
        http_, options_.retry,
        [&]() -> Result<HttpRequest> {
          HttpRequest request{call.method, url, call.headers, call.body};
          request.headers.emplace_back("x-ms-date", HttpDate(SystemClock()->NowMicros() / 1000));
          request.headers.emplace_back("x-ms-version", std::string(kApiVersion));
          if (call.method == "PUT" || call.method == "POST") {
            // Sent explicitly so that the signed value is the sent one.
            request.headers.emplace_back("Content-Type", "application/octet-stream");
            request.headers.emplace_back("Content-Length", std::to_string(call.body.size()));
          }
          if (options_.sas_token.empty()) {
            const std::string to_sign =
                AzureSharedKeyStringToSign(call.method, request.headers, account_, path, call.query);
            request.headers.emplace_back("Authorization", AzureSharedKeyAuthorization(account_, key_, to_sign));
          }
          return request;
        },
        Retriable, ambiguous, &requests_sent_);
  }

  // The service's error code, from the body or (for HEAD) the x-ms-error-code header.
  static std::string ErrorCode(const HttpResponse& response) {
    std::string code = ParseErrorReply(response.body).code;
    return code.empty() ? std::string(response.Header("x-ms-error-code")) : code;
  }

  Status Failure(std::string_view operation, const std::string& key, const HttpResponse& response) const {
    HttpResponse described = response;
    if (described.body.empty() && !response.Header("x-ms-error-code").empty()) {
      described.body = fmt::format("<Error><Code>{}</Code></Error>", response.Header("x-ms-error-code"));
    }
    const bool absent = response.status == 404 && ErrorCode(response) != "ContainerNotFound";
    return StoreFailure(*this, operation, key, described, absent);
  }

 private:
  const std::string root_;
  const std::string account_;
  const std::string container_;
  const std::string key_;  // the account key's bytes; empty with a SAS token
  const AzureOptions options_;
  HttpClient http_;
  std::string base_url_;     // scheme://host[:port]
  std::string path_prefix_;  // the endpoint's path ("/devstoreaccount1" on the emulator) or ""
};

// Blocks staged with Put Block under ids of one length, published by Put Block List.
class AzureBlockUpload final : public PartUpload {
 public:
  AzureBlockUpload(AzureStore* store, std::string key) : store_(store), key_(std::move(key)) {}

  static std::string BlockId(int number) { return Base64(fmt::format("sluice-block-{:08d}", number)); }

  Status UploadPart(int number, std::string_view data) override {
    SLUICE_ASSIGN_OR_RETURN(HttpResponse response,
                            store_->Send({"PUT", key_, {{"comp", "block"}, {"blockid", BlockId(number)}}, {}, data}));
    if (response.status != 201) return store_->Failure("Put Block", key_, response);
    return Status::OK();
  }

  Status Complete(int parts) override {
    std::string body = "<?xml version=\"1.0\" encoding=\"utf-8\"?><BlockList>";
    for (int number = 1; number <= parts; ++number) body += "<Latest>" + BlockId(number) + "</Latest>";
    body += "</BlockList>";
    SLUICE_ASSIGN_OR_RETURN(HttpResponse response, store_->Send({"PUT", key_, {{"comp", "blocklist"}}, {}, body}));
    if (response.status != 201) return store_->Failure("Put Block List", key_, response);
    return Status::OK();
  }

  void Abort() override {}  // uncommitted blocks are discarded by the service after a week

 private:
  AzureStore* const store_;
  const std::string key_;
};

Result<std::unique_ptr<PartUpload>> AzureStore::StartUpload(const std::string& key) {
  return std::unique_ptr<PartUpload>(new AzureBlockUpload(this, key));
}

}  // namespace

std::string AzureSharedKeyStringToSign(std::string_view method, const HttpHeaders& headers, std::string_view account,
                                       std::string_view encoded_path,
                                       const std::vector<std::pair<std::string, std::string>>& query) {
  auto header = [&](std::string_view name) -> std::string {
    for (const auto& [key, value] : headers) {
      if (AsciiLower(key) == name) return value;
    }
    return "";
  };
  std::string length = header("content-length");
  if (length == "0") length.clear();
  std::string out = fmt::format("{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n", method, header("content-encoding"),
                                header("content-language"), length, header("content-md5"), header("content-type"),
                                header("date"), header("if-modified-since"), header("if-match"),
                                header("if-none-match"), header("if-unmodified-since"), header("range"));
  std::vector<std::pair<std::string, std::string>> ms_headers;
  for (const auto& [key, value] : headers) {
    std::string name = AsciiLower(key);
    if (name.starts_with("x-ms-")) ms_headers.emplace_back(std::move(name), value);
  }
  std::sort(ms_headers.begin(), ms_headers.end());
  for (const auto& [name, value] : ms_headers) out += name + ":" + value + "\n";
  out += fmt::format("/{}{}", account, encoded_path);
  std::map<std::string, std::vector<std::string>> parameters;
  for (const auto& [name, value] : query) parameters[AsciiLower(name)].push_back(value);
  for (auto& [name, values] : parameters) {
    std::sort(values.begin(), values.end());
    out += "\n" + name + ":";
    for (size_t i = 0; i < values.size(); ++i) out += (i == 0 ? "" : ",") + values[i];
  }
  return out;
}

std::string AzureSharedKeyAuthorization(std::string_view account, std::string_view key,
                                        std::string_view string_to_sign) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(string_to_sign.data()), string_to_sign.size(), mac, &length);
  return fmt::format("SharedKey {}:{}", account, Base64(std::string_view(reinterpret_cast<char*>(mac), length)));
}

Result<AzureOptions> AzureOptionsFrom(const std::map<std::string, std::string>& given) {
  SLUICE_ASSIGN_OR_RETURN(ValidatedOptions validated,
                          ValidateOptions("Azure store", AzureOptionSpecs(), given, errors::kInvalidStorageUri));
  AzureOptions options;
  const bool own_credentials = validated.Has("account_key") || validated.Has("sas_token");
  std::map<std::string, std::string> connection;
  if (validated.Has("connection_string")) {
    connection = ParseConnectionString(validated.GetSecret("connection_string"));
  } else if (!own_credentials) {
    connection = ParseConnectionString(Env("AZURE_STORAGE_CONNECTION_STRING"));
  }
  if (connection.contains("UseDevelopmentStorage") && AsciiLower(connection["UseDevelopmentStorage"]) == "true") {
    connection.emplace("AccountName", kEmulatorAccount);
    connection.emplace("AccountKey", kEmulatorKey);
    connection.emplace("BlobEndpoint", kEmulatorEndpoint);
  }
  auto first = [](std::initializer_list<std::string> candidates) {
    for (const std::string& candidate : candidates) {
      if (!candidate.empty()) return candidate;
    }
    return std::string();
  };
  options.account_name = first({validated.Has("account_name") ? validated.GetString("account_name") : "",
                                connection["AccountName"], Env("AZURE_STORAGE_ACCOUNT_NAME")});
  if (validated.Has("account_key")) {
    options.account_key = validated.GetSecret("account_key");
  } else if (validated.Has("sas_token")) {
    options.sas_token = validated.GetSecret("sas_token");
  } else if (!connection["AccountKey"].empty() || !connection["SharedAccessSignature"].empty()) {
    options.account_key = connection["AccountKey"];
    options.sas_token = connection["SharedAccessSignature"];
  } else {
    options.account_key = Env("AZURE_STORAGE_ACCOUNT_KEY");
    if (options.account_key.empty()) options.sas_token = Env("AZURE_STORAGE_SAS_TOKEN");
  }
  if (options.sas_token.starts_with('?')) options.sas_token.erase(0, 1);
  if (!options.account_key.empty()) options.sas_token.clear();
  if (!options.account_key.empty()) SLUICE_RETURN_IF_ERROR(DecodeAccountKey(options.account_key).status());
  options.endpoint = validated.Has("endpoint") ? validated.GetString("endpoint") : connection["BlobEndpoint"];
  if (options.endpoint.empty() && !connection["AccountName"].empty()) {
    const std::string protocol = connection["DefaultEndpointsProtocol"].empty() ? "https" : connection["DefaultEndpointsProtocol"];
    const std::string suffix = connection["EndpointSuffix"].empty() ? "core.windows.net" : connection["EndpointSuffix"];
    options.endpoint = fmt::format("{}://{}.blob.{}", protocol, connection["AccountName"], suffix);
  }
  while (options.endpoint.ends_with('/')) options.endpoint.pop_back();
  if (!options.endpoint.empty() && !options.endpoint.starts_with("http://") && !options.endpoint.starts_with("https://")) {
    return Status::Error(errors::kInvalidStorageUri,
                         fmt::format("Azure endpoint `{}` is not an http:// or https:// address", options.endpoint));
  }
  SLUICE_ASSIGN_OR_RETURN(CommonStoreOptions common, CommonStoreOptionsFrom(validated, "Azure"));
  options.retry = common.retry;
  options.http = common.http;
  options.settings = common.settings;
  options.settings.part_size = validated.GetInt64("block_size");
  return options;
}

Result<std::shared_ptr<ObjectStoreFileSystem>> NewAzureFileSystem(const std::string& root, AzureOptions options) {
  // "az://container" or "abfss://container@account.dfs.core.windows.net"
  const size_t scheme_end = root.find("://") + 3;
  std::string container = root.substr(scheme_end);
  std::string account = options.account_name;
  std::string default_endpoint;
  if (root.starts_with("abfss://")) {
    const size_t at = container.find('@');
    std::string host = container.substr(at + 1);
    container.resize(at);
    account = host.substr(0, host.find('.'));
    if (const size_t dfs = host.find(".dfs."); dfs != std::string::npos) host.replace(dfs, 5, ".blob.");
    default_endpoint = "https://" + host;
  } else if (!account.empty()) {
    default_endpoint = fmt::format("https://{}.blob.core.windows.net", account);
  }
  if (account.empty()) {
    return Status::Error(errors::kInvalidStorageUri,
                         fmt::format("`{}` names no storage account: give `account_name` in its object_stores section, "
                                     "a connection string or AZURE_STORAGE_ACCOUNT_NAME; see docs/storage.md",
                                     root));
  }
  if (options.account_key.empty() && options.sas_token.empty()) {
    return Status::Error(errors::kStorageCredentialsNotFound,
                         fmt::format("no credentials for {} (account {}): looked at the options account_key, "
                                     "sas_token and connection_string, then AZURE_STORAGE_CONNECTION_STRING, "
                                     "AZURE_STORAGE_ACCOUNT_KEY and AZURE_STORAGE_SAS_TOKEN",
                                     root, account));
  }
  std::string key;
  if (!options.account_key.empty()) {
    SLUICE_ASSIGN_OR_RETURN(key, DecodeAccountKey(options.account_key));
  }
  if (options.endpoint.empty()) options.endpoint = default_endpoint;
  const ObjectStoreSettings settings = options.settings;
  auto store = std::make_unique<AzureStore>(root, std::move(account), std::move(container), std::move(key),
                                            std::move(options));
  return std::make_shared<ObjectStoreFileSystem>(std::move(store), settings);
}

}  // namespace sluice::storage
