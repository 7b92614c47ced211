// The Azure Blob Storage file system against Azurite, which checks Shared Key and SAS signatures:
// wrong keys refused by class without the key in the message, SAS tokens, abfss:// paths reaching
// the same container as az://, and retries and lost replies through a fault-injecting proxy. The
// FileSystem contract itself runs on Azure in file_system_contract_integration_test.cc.
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <gtest/gtest.h>

#include <cstdlib>

#include <fmt/format.h>

#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "sluice/storage/azure_file_system.h"
#include "sluice/storage/file_systems.h"
#include "sluice/storage/sigv4.h"
#include "testing/azure_server.h"
#include "testing/faulty_http_proxy.h"

namespace sluice::storage {
namespace {

using testing::FaultyHttpProxy;
using Fault = FaultyHttpProxy::Fault;

constexpr const char* kAccount = "devstoreaccount1";
constexpr const char* kKey = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

// An account SAS for the blob service (the "Create an account SAS" layout of version 2020-12-06
// and later), signed here with the emulator's key: the test's stand-in for a token a user got
// from the portal.
std::string AccountSas(const std::string& permissions) {
  const std::string version = "2021-08-06", expiry = "2099-01-01T00:00:00Z";
  const std::string to_sign =
      fmt::format("{}\n{}\nb\nsco\n\n{}\n\nhttps,http\n{}\n\n", kAccount, permissions, expiry, version);
  const std::string key = DecodeAccountKey(kKey).value();
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(to_sign.data()),
       to_sign.size(), mac, &length);
  std::string signature;
  AppendBase64(std::string_view(reinterpret_cast<char*>(mac), length), &signature);
  return fmt::format("sv={}&ss=b&srt=sco&sp={}&se={}&spr=https,http&sig={}", version, permissions,
                     UriEncode(expiry, true), UriEncode(signature, true));
}

class AzureStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = &testing::AzureServer::Shared();
    container_uri_ = server_->NewContainerUri();
    container_ = container_uri_.substr(5);
  }

  std::shared_ptr<ObjectStoreFileSystem> With(std::map<std::string, std::string> options,
                                              const std::string& root = "") {
    auto parsed = AzureOptionsFrom(options);
    EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
    auto fs = NewAzureFileSystem(root.empty() ? container_uri_ : root, parsed.value());
    EXPECT_TRUE(fs.ok()) << fs.status().ToString();
    return fs.value();
  }
  std::string Path(const std::string& key) const { return container_uri_ + "/" + key; }

  testing::AzureServer* server_ = nullptr;
  std::string container_uri_, container_;
};

TEST_F(AzureStoreTest, AWrongKeyIsAccessDeniedWithoutTheKey) {
  // A well-formed key that is not the account's: the emulator refuses the signature.
  setenv("SLUICE_TEST_AZURE_WRONG_KEY", "d3Jvbmcta2V5LXRoYXQtbXVzdC1ub3QtYmUtcHJpbnRlZA==", 1);
  auto fs = With({{"account_name", kAccount}, {"endpoint", server_->endpoint()},
                  {"account_key", "${env:SLUICE_TEST_AZURE_WRONG_KEY}"}, {"max_retries", "0"}});
  for (Status status : {fs->ReadFile(Path("x")).status(), fs->AtomicWrite(Path("x"), "1"),
                        fs->PutIfAbsent(Path("y"), "1"), fs->List(Path("")).status()}) {
    EXPECT_EQ(status.error_class(), errors::kStorageAccessDenied) << status.ToString();
    EXPECT_NE(status.message().find("HTTP 403"), std::string_view::npos) << status.ToString();
    EXPECT_EQ(status.message().find("d3Jvbmcta2V5"), std::string_view::npos);
  }
  // The right key (from the environment's connection string) works on the same container.
  auto right = With({});
  EXPECT_TRUE(right->AtomicWrite(Path("x"), "1").ok());
}

TEST_F(AzureStoreTest, ASasTokenAuthorizesWithoutTheKey) {
  setenv("SLUICE_TEST_AZURE_SAS", AccountSas("rwdlac").c_str(), 1);
  auto fs = With({{"account_name", kAccount}, {"endpoint", server_->endpoint()},
                  {"sas_token", "${env:SLUICE_TEST_AZURE_SAS}"}, {"max_retries", "0"}});
  ASSERT_TRUE(fs->PutIfAbsent(Path("t/_delta_log/00000000000000000000.json"), "{}").ok());
  EXPECT_EQ(fs->PutIfAbsent(Path("t/_delta_log/00000000000000000000.json"), "{}").error_class(),
            errors::kFileAlreadyExists);
  auto writer = fs->OpenForWrite(Path("t/data.bin")).value();
  const std::string big(3 * 1024 * 1024 + 17, 'z');
  ASSERT_TRUE(writer->Append(big).ok());
  ASSERT_TRUE(writer->Close().ok());
  EXPECT_EQ(fs->ReadFile(Path("t/data.bin")).value(), big);
  EXPECT_EQ(fs->List(Path("t")).value().size(), 2u);
  ASSERT_TRUE(fs->DeleteRecursively(Path("t")).ok());
  EXPECT_FALSE(fs->Exists(Path("t/data.bin")).value());
  // A read-only token cannot write: refused by class.
  setenv("SLUICE_TEST_AZURE_SAS_READ", AccountSas("rl").c_str(), 1);
  auto reader = With({{"account_name", kAccount}, {"endpoint", server_->endpoint()},
                      {"sas_token", "${env:SLUICE_TEST_AZURE_SAS_READ}"}, {"max_retries", "0"}});
  EXPECT_EQ(reader->AtomicWrite(Path("u"), "1").error_class(), errors::kStorageAccessDenied);
  EXPECT_TRUE(reader->List(Path("")).ok());
}

TEST_F(AzureStoreTest, AbfssPathsReachTheSameContainer) {
  const std::string abfss = fmt::format("abfss://{}@{}.dfs.core.windows.net", container_, kAccount);
  ASSERT_TRUE(ResolvePath(abfss + "/t/a.json").ok());
  auto fs = With({}, abfss);
  ASSERT_TRUE(fs->AtomicWrite(abfss + "/t/a.json", "through abfss").ok());
  EXPECT_EQ(DefaultFileSystem()->ReadFile(Path("t/a.json")).value(), "through abfss");
  auto listed = DefaultFileSystem()->List(abfss + "/t").value();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].path, abfss + "/t/a.json");
}

TEST_F(AzureStoreTest, TransientFailuresAreRetriedAndLostRepliesResolved) {
  auto proxy = FaultyHttpProxy::Start(std::stoi(server_->endpoint().substr(server_->endpoint().rfind(':') + 1)));
  ASSERT_TRUE(proxy.ok());
  auto fs = With({{"endpoint", (*proxy)->endpoint() + "/" + kAccount}, {"retry_base_delay", "5ms"},
                  {"retry_max_delay", "20ms"}, {"request_timeout", "1s"}, {"max_retries", "5"}});
  (*proxy)->Arm(Fault::kServiceUnavailable, "PUT", "", 2);
  (*proxy)->Arm(Fault::kResetBeforeForwarding, "PUT", "", 1);
  ASSERT_TRUE(fs->AtomicWrite(Path("t/a"), "hello").ok());
  (*proxy)->Arm(Fault::kTruncateReply, "GET", "", 1);
  (*proxy)->Arm(Fault::kDelay, "GET", "", 1);
  EXPECT_EQ(fs->ReadFile(Path("t/a")).value(), "hello");
  (*proxy)->Arm(Fault::kServiceUnavailable, "GET", "comp=list", 2);
  EXPECT_EQ(fs->List(Path("t")).value().size(), 1u);
  EXPECT_EQ((*proxy)->faults_applied(), 7);

  ASSERT_TRUE(fs->PutIfAbsent(Path("log/0.json"), "zero").ok());  // the conditional-write check is done
  for (int round = 1; round <= 2; ++round) {
    const std::string path = Path("log/" + std::to_string(round) + ".json");
    (*proxy)->Arm(round == 2 ? Fault::kTruncateReply : Fault::kLoseReply, "PUT", "log/" + std::to_string(round), 1);
    Status put = fs->PutIfAbsent(path, "commit " + std::to_string(round));
    ASSERT_TRUE(put.ok()) << put.ToString();
    EXPECT_EQ(fs->ReadFile(path).value(), "commit " + std::to_string(round));
    (*proxy)->Arm(Fault::kLoseReply, "PUT", "log/" + std::to_string(round), 1);
    EXPECT_EQ(fs->PutIfAbsent(path, "another writer").error_class(), errors::kFileAlreadyExists);
  }
}

}  // namespace
}  // namespace sluice::storage
