#include "sluice/storage/azure_file_system.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "sluice/core/error_classes.h"
#include "sluice/storage/file_systems.h"
#include "sluice/storage/xml_reply.h"
#include "testing/scoped_environment.h"

namespace sluice::storage {
namespace {

// The string-to-sign layout of "Authorize with Shared Key": twelve standard header lines (empty
// when absent), the x-ms- headers sorted, then the account, the encoded path and the query
// parameters sorted by lower-cased name with their values decoded.
TEST(AzureSharedKeyTest, StringToSignFollowsTheDocumentedLayout) {
  const HttpHeaders headers{{"x-ms-version", "2009-09-19"}, {"x-ms-date", "Sun, 11 Oct 2009 21:49:13 GMT"}};
  EXPECT_EQ(AzureSharedKeyStringToSign("GET", headers, "myaccount", "/myaccount/mycontainer",
                                       {{"restype", "container"}, {"comp", "metadata"}, {"timeout", "20"}}),
            "GET\n\n\n\n\n\n\n\n\n\n\n\n"
            "x-ms-date:Sun, 11 Oct 2009 21:49:13 GMT\nx-ms-version:2009-09-19\n"
            "/myaccount/myaccount/mycontainer\ncomp:metadata\nrestype:container\ntimeout:20");
  // A PUT with a body, a type, a condition and a range; Content-Length 0 signs as empty; repeated
  // parameters are joined by commas in sorted order; names are lower-cased.
  const HttpHeaders put{{"Content-Type", "application/octet-stream"}, {"Content-Length", "5"},
                        {"If-None-Match", "*"}, {"X-MS-Blob-Type", "BlockBlob"}, {"x-ms-date", "D"}};
  EXPECT_EQ(AzureSharedKeyStringToSign("PUT", put, "acct", "/c/a%20b.json", {{"Comp", "block"}, {"blockid", "QQ=="}}),
            "PUT\n\n\n5\n\napplication/octet-stream\n\n\n\n*\n\n\n"
            "x-ms-blob-type:BlockBlob\nx-ms-date:D\n/acct/c/a%20b.json\nblockid:QQ==\ncomp:block");
  EXPECT_EQ(AzureSharedKeyStringToSign("PUT", {{"Content-Length", "0"}}, "a", "/c", {{"k", "2"}, {"k", "1"}}),
            "PUT\n\n\n\n\n\n\n\n\n\n\n\n/a/c\nk:1,2");
}

TEST(AzureSharedKeyTest, AuthorizationIsHmacSha256OfTheKeyBytes) {
  // HMAC-SHA256 with key "key" of the pangram (RFC 4231-style published value), base64.
  EXPECT_EQ(AzureSharedKeyAuthorization("acct", "key", "The quick brown fox jumps over the lazy dog"),
            "SharedKey acct:97yD9DBThCSxMpjmqm+xQ+9NWaFJRhdZl0edvC0aPNg=");
  EXPECT_EQ(DecodeAccountKey("a2V5").value(), "key");
  EXPECT_EQ(DecodeAccountKey("a2V5MQ==").value(), "key1");
  for (const char* bad : {"", "a2V", "a2V5!!==", "not base64"}) {
    EXPECT_EQ(DecodeAccountKey(bad).status().error_class(), errors::kInvalidStorageUri) << bad;
  }
}

// Each test starts from an environment without Azure's variables, restored when it ends.
class AzureOptionsTest : public ::testing::Test {
 protected:
  testing::ScopedEnvironment environment_{{{"AZURE_STORAGE_CONNECTION_STRING", nullptr},
                                           {"AZURE_STORAGE_ACCOUNT_NAME", nullptr},
                                           {"AZURE_STORAGE_ACCOUNT_KEY", nullptr},
                                           {"AZURE_STORAGE_SAS_TOKEN", nullptr}}};
};

TEST_F(AzureOptionsTest, OptionsComeBeforeTheConnectionStringAndTheEnvironment) {
  setenv("SLUICE_TEST_AZURE_CS",
         "DefaultEndpointsProtocol=http;AccountName=acct1;AccountKey=a2V5MQ==;BlobEndpoint=http://127.0.0.1:9/acct1;",
         1);
  auto from_string = AzureOptionsFrom({{"connection_string", "${env:SLUICE_TEST_AZURE_CS}"}});
  ASSERT_TRUE(from_string.ok()) << from_string.status().ToString();
  EXPECT_EQ(from_string->account_name, "acct1");
  EXPECT_EQ(from_string->account_key, "a2V5MQ==");
  EXPECT_EQ(from_string->endpoint, "http://127.0.0.1:9/acct1");

  // The environment: a connection string first, then the separate variables.
  setenv("AZURE_STORAGE_CONNECTION_STRING", "UseDevelopmentStorage=true", 1);
  auto emulator = AzureOptionsFrom({});
  ASSERT_TRUE(emulator.ok());
  EXPECT_EQ(emulator->account_name, "devstoreaccount1");
  EXPECT_EQ(emulator->endpoint, "http://127.0.0.1:10000/devstoreaccount1");
  unsetenv("AZURE_STORAGE_CONNECTION_STRING");
  setenv("AZURE_STORAGE_ACCOUNT_NAME", "acct2", 1);
  setenv("AZURE_STORAGE_SAS_TOKEN", "?sv=2021-08-06&sig=abc", 1);
  auto sas = AzureOptionsFrom({{"block_size", "2097152"}, {"max_retries", "2"}});
  ASSERT_TRUE(sas.ok());
  EXPECT_EQ(sas->account_name, "acct2");
  EXPECT_EQ(sas->sas_token, "sv=2021-08-06&sig=abc");
  EXPECT_TRUE(sas->account_key.empty());
  EXPECT_EQ(sas->settings.part_size, 2097152);
  EXPECT_EQ(sas->retry.max_retries, 2);
  // Given options win over the environment.
  setenv("SLUICE_TEST_AZURE_KEY", "a2V5", 1);
  auto given = AzureOptionsFrom({{"account_name", "acct3"}, {"account_key", "${env:SLUICE_TEST_AZURE_KEY}"},
                                 {"endpoint", "https://example.test/"}});
  ASSERT_TRUE(given.ok());
  EXPECT_EQ(given->account_name, "acct3");
  EXPECT_EQ(given->account_key, "a2V5");
  EXPECT_TRUE(given->sas_token.empty());
  EXPECT_EQ(given->endpoint, "https://example.test");
}

TEST_F(AzureOptionsTest, BadOptionsAreRefusedWithoutPrintingSecrets) {
  setenv("SLUICE_TEST_AZURE_BAD_KEY", "do-not-print-me", 1);
  auto not_base64 = AzureOptionsFrom({{"account_key", "${env:SLUICE_TEST_AZURE_BAD_KEY}"}});
  ASSERT_FALSE(not_base64.ok());
  EXPECT_EQ(not_base64.status().error_class(), errors::kInvalidStorageUri);
  EXPECT_EQ(not_base64.status().message().find("do-not-print-me"), std::string_view::npos);
  auto literal = AzureOptionsFrom({{"account_key", "a2V5"}});
  ASSERT_FALSE(literal.ok());
  EXPECT_EQ(literal.status().message().find("a2V5"), std::string_view::npos);
  EXPECT_EQ(AzureOptionsFrom({{"acount_name", "x"}}).status().error_class(), errors::kInvalidStorageUri);
  EXPECT_EQ(AzureOptionsFrom({{"endpoint", "ftp://x"}}).status().error_class(), errors::kInvalidStorageUri);
  EXPECT_EQ(AzureOptionsFrom({{"block_size", "10"}}).status().error_class(), errors::kInvalidStorageUri);
  EXPECT_EQ(AzureOptionsFrom({{"lease_duration", "10ms"}}).status().error_class(), errors::kInvalidStorageUri);
  EXPECT_EQ(ConfigureObjectStore("az://container-a", {{"nope", "1"}}).error_class(), errors::kInvalidStorageUri);

  // No account for az://, no credentials at all: refused at the first use, by class.
  auto no_account = NewAzureFileSystem("az://container-a", AzureOptionsFrom({}).value());
  EXPECT_EQ(no_account.status().error_class(), errors::kInvalidStorageUri);
  auto no_key = NewAzureFileSystem("abfss://container-a@acct.dfs.core.windows.net", AzureOptionsFrom({}).value());
  EXPECT_EQ(no_key.status().error_class(), errors::kStorageCredentialsNotFound);
  EXPECT_NE(no_key.status().message().find("AZURE_STORAGE_ACCOUNT_KEY"), std::string_view::npos);
}

TEST(AzureUriTest, ContainersAndAccountsAreChecked) {
  EXPECT_EQ(ResolvePath("az://my-container/warehouse/").value(), "az://my-container/warehouse");
  EXPECT_EQ(ResolvePath("abfss://data@acct.dfs.core.windows.net/t").value(), "abfss://data@acct.dfs.core.windows.net/t");
  for (const char* bad : {"az://", "az://ab/x", "az://Upper/x", "az://a--b/x", "az://-ab/x", "az://my_container/x",
                          "az://container/a//b", "az://container/../b", "abfss://data/x", "abfss://data@/x",
                          "abfss://Data@acct.dfs.core.windows.net/x", "abfss://data@nodots/x"}) {
    auto resolved = ResolvePath(bad);
    ASSERT_FALSE(resolved.ok()) << bad;
    EXPECT_EQ(resolved.status().error_class(), errors::kInvalidStorageUri) << bad;
  }
}

TEST(AzureListingTest, BlobsAndPrefixesAndMarkers) {
  auto page = ParseListBlobs(
      "<?xml version=\"1.0\"?><EnumerationResults ContainerName=\"c\"><Prefix>a/</Prefix><Blobs>"
      "<Blob><Name>a/x &amp; y.json</Name><Properties><Last-Modified>Sat, 05 Dec 2026 03:21:18 GMT</Last-Modified>"
      "<Content-Length>12</Content-Length><BlobType>BlockBlob</BlobType></Properties></Blob>"
      "<BlobPrefix><Name>a/sub/</Name></BlobPrefix></Blobs><NextMarker>2!opaque</NextMarker></EnumerationResults>");
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->objects.size(), 1u);
  EXPECT_EQ(page->objects[0].key, "a/x & y.json");
  EXPECT_EQ(page->objects[0].size, 12);
  EXPECT_EQ(page->objects[0].last_modified_ms, 1796440878000);
  EXPECT_EQ(page->common_prefixes, std::vector<std::string>{"a/sub/"});
  EXPECT_TRUE(page->truncated);
  EXPECT_EQ(page->next_continuation_token, "2!opaque");
  auto last = ParseListBlobs("<EnumerationResults><Blobs/><NextMarker/></EnumerationResults>");
  ASSERT_TRUE(last.ok());
  EXPECT_FALSE(last->truncated);
  for (const char* bad : {"<ListBucketResult/>", "<EnumerationResults><Blob><Name>x</Blob>",
                          "<EnumerationResults><Blob><Size>1</Size></Blob></EnumerationResults>",
                          "<EnumerationResults><Blob><Name>x</Name><Content-Length>-1</Content-Length></Blob>"
                          "</EnumerationResults>"}) {
    EXPECT_EQ(ParseListBlobs(bad).status().error_class(), errors::kIoError) << bad;
  }
}

}  // namespace
}  // namespace sluice::storage
