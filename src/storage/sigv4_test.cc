// SigV4 against the vectors AWS publishes: the SigV4 test suite (get-vanilla, ...) and the worked
// examples of the S3 API reference (sig-v4-header-based-auth).
#include "sluice/storage/sigv4.h"

#include <gtest/gtest.h>

namespace sluice::storage {
namespace {

constexpr std::string_view kEmptySha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

std::string SignatureOf(const std::string& authorization) {
  return authorization.substr(authorization.rfind("Signature=") + 10);
}

// The SigV4 test suite: AKIDEXAMPLE, 2015-08-30T12:36:00Z, us-east-1, service "service".
struct SuiteCase {
  std::string name;
  std::string method;
  std::vector<std::pair<std::string, std::string>> query;
  std::string signature;
};

TEST(SigV4Test, TheAwsTestSuite) {
  const AwsCredentials credentials{"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"};
  const std::vector<SuiteCase> cases = {
      {"get-vanilla", "GET", {}, "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"},
      {"get-vanilla-query-order-key-case",
       "GET",
       {{"Param2", "value2"}, {"Param1", "value1"}},
       "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"},
      {"post-vanilla", "POST", {}, "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"},
  };
  for (const SuiteCase& c : cases) {
    SigV4Request request{c.method, "/", c.query, {{"Host", "example.amazonaws.com"}, {"X-Amz-Date", "20150830T123600Z"}},
                         std::string(kEmptySha256)};
    std::string authorization = SignV4(credentials, {"us-east-1", "service"}, "20150830T123600Z", request);
    EXPECT_EQ(SignatureOf(authorization), c.signature) << c.name;
    EXPECT_TRUE(authorization.starts_with(
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, "))
        << authorization;
  }
}

// The S3 reference's examples: AKIAIOSFODNN7EXAMPLE, 2013-05-24, examplebucket.
class S3ExamplesTest : public ::testing::Test {
 protected:
  std::string Sign(SigV4Request request) {
    return SignatureOf(SignV4(credentials_, {"us-east-1", "s3"}, "20130524T000000Z", request));
  }
  const AwsCredentials credentials_{"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"};
  const std::pair<std::string, std::string> host_{"Host", "examplebucket.s3.amazonaws.com"};
  const std::pair<std::string, std::string> date_{"x-amz-date", "20130524T000000Z"};
};

TEST_F(S3ExamplesTest, GetObjectWithARange) {
  SigV4Request request{"GET", "/test.txt", {},
                       {host_, {"Range", "bytes=0-9"}, {"x-amz-content-sha256", std::string(kEmptySha256)}, date_},
                       std::string(kEmptySha256)};
  EXPECT_EQ(Sha256Hex(CanonicalRequest(request)), "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972");
  EXPECT_EQ(Sign(request), "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}

TEST_F(S3ExamplesTest, PutObjectWhoseKeyNeedsEncoding) {
  const std::string payload = Sha256Hex("Welcome to Amazon S3.");
  EXPECT_EQ(payload, "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
  SigV4Request request{"PUT", "/" + UriEncode("test$file.text", false), {},
                       {{"Date", "Fri, 24 May 2013 00:00:00 GMT"}, host_, {"x-amz-content-sha256", payload}, date_,
                        {"x-amz-storage-class", "REDUCED_REDUNDANCY"}},
                       payload};
  EXPECT_EQ(request.encoded_path, "/test%24file.text");
  EXPECT_EQ(Sign(request), "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");
}

TEST_F(S3ExamplesTest, GetBucketLifecycleAndListObjects) {
  SigV4Request lifecycle{"GET", "/", {{"lifecycle", ""}},
                         {host_, {"x-amz-content-sha256", std::string(kEmptySha256)}, date_}, std::string(kEmptySha256)};
  EXPECT_EQ(Sign(lifecycle), "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");
  SigV4Request list{"GET", "/", {{"prefix", "J"}, {"max-keys", "2"}},
                    {host_, {"x-amz-content-sha256", std::string(kEmptySha256)}, date_}, std::string(kEmptySha256)};
  EXPECT_EQ(Sign(list), "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
  // A different body, key, region or header value is a different signature.
  SigV4Request other = list;
  other.query[0].second = "K";
  EXPECT_NE(Sign(other), Sign(list));
  EXPECT_NE(SignatureOf(SignV4(credentials_, {"eu-west-1", "s3"}, "20130524T000000Z", list)), Sign(list));
}

TEST(SigV4EncodingTest, KeysQueriesAndHeaderValues) {
  EXPECT_EQ(UriEncode("a b+c/d~e_f.g-h", false), "a%20b%2Bc/d~e_f.g-h");
  EXPECT_EQ(UriEncode("a/b", true), "a%2Fb");
  EXPECT_EQ(UriEncode("100%", false), "100%25");
  EXPECT_EQ(UriEncode("\xc3\xa9=&?#", true), "%C3%A9%3D%26%3F%23");
  EXPECT_EQ(CanonicalQuery({{"b", "2"}, {"a", "x y"}, {"uploads", ""}, {"a", "1"}}), "a=1&a=x%20y&b=2&uploads=");
  // Header values are trimmed and inner runs of spaces made one; names are lower-cased.
  SigV4Request request{"GET", "/", {}, {{"X-Custom", "  a   b  "}, {"host", "h"}}, std::string(kEmptySha256)};
  EXPECT_NE(CanonicalRequest(request).find("\nhost:h\nx-custom:a b\n\nhost;x-custom\n"), std::string::npos)
      << CanonicalRequest(request);
  EXPECT_EQ(AmzDate(1369353600000), "20130524T000000Z");
}

}  // namespace
}  // namespace sluice::storage
