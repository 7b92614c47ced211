// The S3 file system against moto's S3 server, through a fault-injecting proxy: retries of failed
// requests, replies lost after the write happened, stores without conditional writes, refused
// credentials, leases, and credentials from STS's web identity exchange and the instance metadata
// service.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <thread>

#include "sluice/core/error_classes.h"
#include "sluice/storage/lease.h"
#include "sluice/storage/s3_file_system.h"
#include "testing/faulty_http_proxy.h"
#include "testing/s3_server.h"
#include "testing/scoped_environment.h"
#include "testing/temp_dir.h"

namespace sluice::storage {
namespace {

using testing::FaultyHttpProxy;
using Fault = FaultyHttpProxy::Fault;

class S3FaultsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = &testing::S3Server::Shared();
    bucket_uri_ = server_->NewBucketUri();
    bucket_ = bucket_uri_.substr(5);
    proxy_ = FaultyHttpProxy::Start(server_->port()).value();
  }

  std::shared_ptr<ObjectStoreFileSystem> Through(const std::string& endpoint, int max_retries = 5) {
    S3Options options = S3OptionsFrom({{"endpoint", endpoint}, {"retry_base_delay", "5ms"},
                                       {"retry_max_delay", "20ms"}, {"request_timeout", "1s"},
                                       {"max_retries", std::to_string(max_retries)}})
                            .value();
    return NewS3FileSystem(bucket_, options);
  }
  std::string Path(const std::string& key) const { return bucket_uri_ + "/" + key; }

  testing::S3Server* server_ = nullptr;
  std::string bucket_uri_, bucket_;
  std::unique_ptr<FaultyHttpProxy> proxy_;
};

TEST_F(S3FaultsTest, TransientFailuresAreRetried) {
  auto fs = Through(proxy_->endpoint());
  proxy_->Arm(Fault::kServiceUnavailable, "PUT", "", 2);
  proxy_->Arm(Fault::kResetBeforeForwarding, "PUT", "", 1);
  ASSERT_TRUE(fs->AtomicWrite(Path("t/a"), "hello").ok());
  proxy_->Arm(Fault::kSlowDown, "GET", "", 2);
  proxy_->Arm(Fault::kTruncateReply, "GET", "", 1);
  EXPECT_EQ(fs->ReadFile(Path("t/a")).value(), "hello");
  proxy_->Arm(Fault::kResetBeforeForwarding, "GET", "list-type", 2);
  EXPECT_EQ(fs->Stat(Path("t/a")).value().size, 5);
  proxy_->Arm(Fault::kServiceUnavailable, "GET", "list-type", 2);
  EXPECT_EQ(fs->List(Path("t")).value().size(), 1u);
  proxy_->Arm(Fault::kDelay, "GET", "", 1);  // slower than the 1 s request timeout: retried
  EXPECT_EQ(fs->ReadFile(Path("t/a")).value(), "hello");
  EXPECT_EQ(proxy_->faults_applied(), 11);
}

TEST_F(S3FaultsTest, RetriesEndAndTheFailureSaysWhy) {
  auto fs = Through(proxy_->endpoint(), /*max_retries=*/2);
  proxy_->Arm(Fault::kServiceUnavailable, "GET", "", 3);
  const int64_t before = proxy_->requests();
  auto read = fs->ReadFile(Path("t/none"));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().error_class(), errors::kIoError);
  EXPECT_NE(read.status().message().find("HTTP 503"), std::string_view::npos) << read.status().ToString();
  EXPECT_EQ(proxy_->requests() - before, 3);
  proxy_->Arm(Fault::kResetBeforeForwarding, "GET", "", 10);
  auto reset = fs->ReadFile(Path("t/none"));
  EXPECT_EQ(reset.status().error_class(), errors::kIoError);
  EXPECT_NE(reset.status().message().find("after 3 attempts"), std::string_view::npos) << reset.status().ToString();
}

TEST_F(S3FaultsTest, APutIfAbsentWhoseReplyWasLostIsResolvedByReadingBack) {
  auto fs = Through(proxy_->endpoint());
  ASSERT_TRUE(fs->PutIfAbsent(Path("log/0.json"), "zero").ok());  // the conditional-write check is done
  for (int round = 1; round <= 3; ++round) {
    const std::string path = Path("log/" + std::to_string(round) + ".json");
    proxy_->Arm(round == 2 ? Fault::kTruncateReply : Fault::kLoseReply, "PUT", "log/" + std::to_string(round), 1);
    Status put = fs->PutIfAbsent(path, "commit " + std::to_string(round));
    ASSERT_TRUE(put.ok()) << put.ToString();  // our bytes landed: the commit is ours, once
    EXPECT_EQ(fs->ReadFile(path).value(), "commit " + std::to_string(round));
    // Another writer's bytes at the same place after a lost reply: not ours.
    proxy_->Arm(Fault::kLoseReply, "PUT", "log/" + std::to_string(round), 1);
    EXPECT_EQ(fs->PutIfAbsent(path, "another writer").error_class(), errors::kFileAlreadyExists);
  }
}

TEST_F(S3FaultsTest, AStoreWithoutConditionalWritesIsRefusedForCommits) {
  proxy_->set_strip_if_none_match(true);
  auto fs = Through(proxy_->endpoint());
  Status put = fs->PutIfAbsent(Path("t/_delta_log/00000000000000000000.json"), "{}");
  EXPECT_EQ(put.error_class(), errors::kStorageConditionalWriteUnsupported) << put.ToString();
  EXPECT_FALSE(fs->Exists(Path("t/_delta_log/00000000000000000000.json")).value());
  // Plain writes still work on such a store.
  EXPECT_TRUE(fs->AtomicWrite(Path("t/data.parquet"), "x").ok());
}

TEST_F(S3FaultsTest, RefusedCredentialsAreAccessDeniedWithoutTheSecret) {
  setenv("SLUICE_TEST_SECRET_KEY", "very-secret-value", 1);
  S3Options options = S3OptionsFrom({{"endpoint", proxy_->endpoint()},
                                     {"access_key_id", "${env:AWS_ACCESS_KEY_ID}"},
                                     {"secret_access_key", "${env:SLUICE_TEST_SECRET_KEY}"}})
                          .value();
  auto fs = NewS3FileSystem(bucket_, options);
  proxy_->Arm(Fault::kAccessDenied, "", "", 3);
  for (Status status : {fs->ReadFile(Path("x")).status(), fs->AtomicWrite(Path("x"), "1"), fs->List(Path("")).status()}) {
    EXPECT_EQ(status.error_class(), errors::kStorageAccessDenied);
    EXPECT_NE(status.message().find("InvalidAccessKeyId"), std::string_view::npos);
    EXPECT_EQ(status.message().find("very-secret-value"), std::string_view::npos);
  }
}

TEST_F(S3FaultsTest, LeasesAreExclusiveExpireAndAreLostWhenNotRenewed) {
  auto direct = Through(server_->endpoint());
  const std::string path = Path("checkpoint/lock");
  {
    auto first = TakeLease(direct, path, std::chrono::milliseconds(2000));
    ASSERT_TRUE(first.ok()) << first.status().ToString();
    auto second = TakeLease(direct, path, std::chrono::milliseconds(2000));
    ASSERT_FALSE(second.ok());
    EXPECT_EQ(second.status().error_class(), errors::kStorageLeaseHeld);
    EXPECT_NE(second.status().message().find("pid"), std::string_view::npos) << second.status().ToString();
    // Renewed while held: still held after more than its duration.
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    EXPECT_TRUE((*first)->Check().ok());
    EXPECT_EQ(TakeLease(direct, path, std::chrono::milliseconds(2000)).status().error_class(),
              errors::kStorageLeaseHeld);
  }
  // Released: the next taker need not wait.
  auto again = TakeLease(direct, path, std::chrono::milliseconds(2000));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  again->reset();

  // A holder that cannot renew (its store fails) loses the lease at its expiry; another takes it.
  auto stalled_fs = Through(proxy_->endpoint(), /*max_retries=*/0);
  auto stalled = TakeLease(stalled_fs, path, std::chrono::milliseconds(900));
  ASSERT_TRUE(stalled.ok()) << stalled.status().ToString();
  proxy_->Arm(Fault::kServiceUnavailable, "", "lock", 1000);
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  auto taker = TakeLease(direct, path, std::chrono::milliseconds(2000));
  ASSERT_TRUE(taker.ok()) << taker.status().ToString();
  EXPECT_EQ((*stalled)->Check().error_class(), errors::kStorageLeaseHeld);
  EXPECT_TRUE((*taker)->Check().ok());
}

// A web identity (a Kubernetes service account's token) exchanged with STS (moto's) for temporary
// credentials, which then sign S3 requests with their session token.
TEST_F(S3FaultsTest, WebIdentityCredentialsComeFromSts) {
  testing::TempDir dir;
  std::ofstream(dir.Join("token")) << "eyJhbGciOiJSUzI1NiJ9.e30.c2lnbmF0dXJl\n";
  const std::string none = dir.Join("none"), token = dir.Join("token"), sts = server_->endpoint();
  testing::ScopedEnvironment environment({{"AWS_ACCESS_KEY_ID", nullptr},
                                 {"AWS_SECRET_ACCESS_KEY", nullptr},
                                 {"AWS_SHARED_CREDENTIALS_FILE", none.c_str()},
                                 {"AWS_CONFIG_FILE", none.c_str()},
                                 {"AWS_WEB_IDENTITY_TOKEN_FILE", token.c_str()},
                                 {"AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/sluice-writer"},
                                 {"AWS_ENDPOINT_URL_STS", sts.c_str()}});
  HttpClient http({});
  AwsCredentialProvider provider({}, &http);
  auto credentials = provider.Get();
  ASSERT_TRUE(credentials.ok()) << credentials.status().ToString();
  EXPECT_TRUE(credentials->access_key_id.starts_with("ASIA")) << credentials->access_key_id;
  EXPECT_FALSE(credentials->secret_access_key.empty());
  EXPECT_FALSE(credentials->session_token.empty());
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch()).count();
  EXPECT_GT(credentials->expires_at_ms, now_ms + 10 * 60 * 1000);  // STS's default hour, roughly
  // The same provider answers from its cache while they are fresh.
  EXPECT_EQ(provider.Get()->access_key_id, credentials->access_key_id);
}

// The instance metadata service, IMDSv2 (moto's server answers its token and credentials paths):
// a session token first, then the role's temporary credentials, which then sign S3 requests.
TEST_F(S3FaultsTest, InstanceMetadataCredentialsComeWithASessionToken) {
  testing::TempDir dir;
  const std::string none = dir.Join("none"), metadata = proxy_->endpoint();
  testing::ScopedEnvironment environment({{"AWS_ACCESS_KEY_ID", nullptr},
                                 {"AWS_SECRET_ACCESS_KEY", nullptr},
                                 {"AWS_SHARED_CREDENTIALS_FILE", none.c_str()},
                                 {"AWS_CONFIG_FILE", none.c_str()},
                                 {"AWS_EC2_METADATA_DISABLED", "false"},
                                 {"AWS_EC2_METADATA_SERVICE_ENDPOINT", metadata.c_str()}});
  const int64_t before = proxy_->requests();
  HttpClient http({});
  AwsCredentialProvider provider({}, &http);
  auto credentials = provider.Get();
  ASSERT_TRUE(credentials.ok()) << credentials.status().ToString();
  EXPECT_EQ(credentials->access_key_id, "test-key");
  EXPECT_EQ(credentials->session_token, "test-session-token");
  EXPECT_GT(credentials->expires_at_ms, 0);
  EXPECT_EQ(proxy_->requests() - before, 3);  // the token, the role's name, its credentials
  // A file system whose credentials come from there works (moto accepts them).
  auto fs = Through(server_->endpoint());
  ASSERT_TRUE(fs->AtomicWrite(Path("imds/a"), "x").ok());
  EXPECT_EQ(fs->ReadFile(Path("imds/a")).value(), "x");
  // Disabled, the service is not asked, and nothing found says where it looked.
  testing::ScopedEnvironment disabled(std::map<std::string, const char*>{{"AWS_EC2_METADATA_DISABLED", "true"}});
  auto none_found = AwsCredentialProvider({}, &http).Get();
  EXPECT_EQ(none_found.status().error_class(), errors::kStorageCredentialsNotFound);
}

}  // namespace
}  // namespace sluice::storage
