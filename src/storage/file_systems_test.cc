#include "sluice/storage/file_systems.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "sluice/core/error_classes.h"
#include "sluice/storage/aws_credentials.h"
#include "sluice/storage/s3_file_system.h"
#include "testing/scoped_environment.h"
#include "testing/temp_dir.h"

namespace sluice::storage {
namespace {

TEST(ResolvePathTest, UrisAreCheckedAndLocalPathsMadeAbsolute) {
  EXPECT_EQ(ResolvePath("s3://my-bucket/warehouse/").value(), "s3://my-bucket/warehouse");
  EXPECT_EQ(ResolvePath("s3://my.bucket.1").value(), "s3://my.bucket.1");
  EXPECT_EQ(ResolvePath("file:///tmp/x/../y/").value(), "/tmp/y");
  EXPECT_EQ(ResolvePath("/tmp//a/./b").value(), "/tmp/a/b");
  EXPECT_EQ(ResolvePath("rel/dir").value(), (std::filesystem::current_path() / "rel/dir").string());
  for (const char* bad : {"s3://", "s3://UPPER/x", "s3://ab/x", "s3://bucket/a//b", "s3://bucket/a/../b",
                          "s3://bucket/./b", "s3://-bucket/x", "gs://bucket/x", "http://host/x", "file://relative",
                          ""}) {
    auto resolved = ResolvePath(bad);
    ASSERT_FALSE(resolved.ok()) << bad;
    EXPECT_EQ(resolved.status().error_class(), errors::kInvalidStorageUri) << bad;
  }
  EXPECT_TRUE(IsObjectStoreUri("s3://b/x"));
  EXPECT_TRUE(IsObjectStoreUri("abfss://c@a.dfs.core.windows.net/x"));
  EXPECT_FALSE(IsObjectStoreUri("/s3://x"));
}

TEST(S3OptionsTest, OptionsAreValidatedAndSecretsAreReferences) {
  setenv("SLUICE_TEST_S3_KEY", "AKIDTEST", 1);
  setenv("SLUICE_TEST_S3_SECRET", "do-not-print-me", 1);
  auto options = S3OptionsFrom({{"endpoint", "http://127.0.0.1:9000/"},
                                {"region", "eu-west-3"},
                                {"access_key_id", "${env:SLUICE_TEST_S3_KEY}"},
                                {"secret_access_key", "${env:SLUICE_TEST_S3_SECRET}"},
                                {"max_retries", "3"},
                                {"request_timeout", "5s"}});
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->endpoint, "http://127.0.0.1:9000");
  EXPECT_EQ(options->region, "eu-west-3");
  EXPECT_EQ(options->credentials.given->secret_access_key, "do-not-print-me");
  EXPECT_EQ(options->retry.max_retries, 3);
  EXPECT_EQ(options->http.request_timeout.count(), 5000);

  auto unknown = S3OptionsFrom({{"endpiont", "http://x"}});
  EXPECT_EQ(unknown.status().error_class(), errors::kInvalidStorageUri);
  EXPECT_NE(unknown.status().message().find("endpoint"), std::string_view::npos);  // the suggestion
  auto literal = S3OptionsFrom({{"access_key_id", "AKIDTEST"}, {"secret_access_key", "do-not-print-me"}});
  ASSERT_FALSE(literal.ok());
  EXPECT_EQ(literal.status().message().find("do-not-print-me"), std::string_view::npos);
  auto half = S3OptionsFrom({{"access_key_id", "${env:SLUICE_TEST_S3_KEY}"}});
  EXPECT_EQ(half.status().error_class(), errors::kInvalidStorageUri);
  EXPECT_EQ(S3OptionsFrom({{"endpoint", "ftp://x"}}).status().error_class(), errors::kInvalidStorageUri);
  EXPECT_EQ(S3OptionsFrom({{"multipart_part_size", "1024"}}).status().error_class(), errors::kInvalidStorageUri);
  EXPECT_EQ(ConfigureObjectStore("s3://bucket-a", {{"nope", "1"}}).error_class(), errors::kInvalidStorageUri);
  EXPECT_EQ(ConfigureObjectStore("/local/path", {}).error_class(), errors::kInvalidStorageUri);
  EXPECT_TRUE(ConfigureObjectStore("s3://bucket-a/prefix", {{"region", "eu-west-1"}}).ok());
}

TEST(AwsCredentialsTest, SharedFilesByProfile) {
  testing::TempDir dir;
  std::ofstream(dir.Join("credentials")) << "# comment\n[default]\naws_access_key_id = AKID1\n"
                                            "aws_secret_access_key=SECRET1\n\n[work]\n"
                                            "aws_access_key_id=AKID2\naws_secret_access_key = SECRET2\n"
                                            "aws_session_token = TOKEN2\n";
  std::ofstream(dir.Join("config")) << "[default]\nregion = eu-west-1\n[profile other]\n"
                                       "aws_access_key_id = AKID3\naws_secret_access_key = SECRET3\n";
  auto first = CredentialsFromSharedFiles(dir.Join("credentials"), dir.Join("config"), "default");
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->access_key_id, "AKID1");
  EXPECT_EQ(first->secret_access_key, "SECRET1");
  auto work = CredentialsFromSharedFiles(dir.Join("credentials"), dir.Join("config"), "work");
  ASSERT_TRUE(work.has_value());
  EXPECT_EQ(work->session_token, "TOKEN2");
  auto other = CredentialsFromSharedFiles(dir.Join("credentials"), dir.Join("config"), "other");
  ASSERT_TRUE(other.has_value());
  EXPECT_EQ(other->access_key_id, "AKID3");
  EXPECT_FALSE(CredentialsFromSharedFiles(dir.Join("credentials"), dir.Join("config"), "absent").has_value());
  EXPECT_FALSE(CredentialsFromSharedFiles(dir.Join("none"), dir.Join("none"), "default").has_value());
}

TEST(AwsCredentialsTest, NothingFoundNamesThePlacesButNoSecret) {
  testing::TempDir dir;
  const std::string none = dir.Join("none");
  testing::ScopedEnvironment environment({{"AWS_ACCESS_KEY_ID", nullptr},
                                          {"AWS_SECRET_ACCESS_KEY", nullptr},
                                          {"AWS_WEB_IDENTITY_TOKEN_FILE", nullptr},
                                          {"AWS_PROFILE", nullptr},
                                          {"AWS_SHARED_CREDENTIALS_FILE", none.c_str()},
                                          {"AWS_CONFIG_FILE", none.c_str()},
                                          {"AWS_EC2_METADATA_DISABLED", "true"}});
  HttpClient http({});
  AwsCredentialProvider provider({}, &http);
  auto credentials = provider.Get();
  ASSERT_FALSE(credentials.ok());
  EXPECT_EQ(credentials.status().error_class(), errors::kStorageCredentialsNotFound);
  EXPECT_NE(credentials.status().message().find("AWS_ACCESS_KEY_ID"), std::string_view::npos);
  // The environment's keys come next; given ones win over them.
  setenv("AWS_ACCESS_KEY_ID", "AKIDENV", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "SECRETENV", 1);
  EXPECT_EQ(AwsCredentialProvider({}, &http).Get()->access_key_id, "AKIDENV");
  AwsCredentialSettings given;
  given.given = AwsCredentials{"AKIDGIVEN", "S"};
  EXPECT_EQ(AwsCredentialProvider(given, &http).Get()->access_key_id, "AKIDGIVEN");
}

}  // namespace
}  // namespace sluice::storage
