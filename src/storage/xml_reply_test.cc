#include "sluice/storage/xml_reply.h"

#include <gtest/gtest.h>

#include "sluice/core/error_classes.h"

namespace sluice::storage {
namespace {

TEST(XmlReplyTest, ListingsWithEntitiesPrefixesAndPages) {
  const std::string xml =
      "<?xml version=\"1.0\"?><ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
      "<IsTruncated>true</IsTruncated><NextContinuationToken>tok&amp;en</NextContinuationToken>"
      "<Contents><Key>a/x &amp; y&#233;&#x1F600;</Key><LastModified>2009-10-12T17:50:30.000Z</LastModified>"
      "<Size>42</Size></Contents><Contents><Key>a/z</Key><Size>0</Size></Contents>"
      "<CommonPrefixes><Prefix>a/sub/</Prefix></CommonPrefixes><Prefix>a/</Prefix></ListBucketResult>";
  auto page = ParseListObjectsV2(xml);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->objects.size(), 2u);
  EXPECT_EQ(page->objects[0].key, "a/x & y\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_EQ(page->objects[0].size, 42);
  EXPECT_EQ(page->objects[0].last_modified_ms, 1255369830000);
  EXPECT_EQ(page->objects[1].key, "a/z");
  EXPECT_EQ(page->common_prefixes, std::vector<std::string>{"a/sub/"});
  EXPECT_TRUE(page->truncated);
  EXPECT_EQ(page->next_continuation_token, "tok&en");
}

TEST(XmlReplyTest, MalformedRepliesAreIoErrors) {
  const std::vector<std::string> bad = {
      "",
      "<Error>",
      "<ListBucketResult><Contents><Key>k</Key>",
      "<ListBucketResult><Contents><Size>1</Size></Contents></ListBucketResult>",
      "<ListBucketResult><Contents><Key>k</Key><Size>-1</Size></Contents></ListBucketResult>",
      "<ListBucketResult><Contents><Key>k</Key><Size>12x</Size></Contents></ListBucketResult>",
      "<ListBucketResult><Contents><Key>&bogus;</Key></Contents></ListBucketResult>",
      "<ListBucketResult><Contents><Key>&#xD800;</Key></Contents></ListBucketResult>",
      "<ListBucketResult><Contents><Key>&#0;</Key></Contents></ListBucketResult>",
      "<ListBucketResult><Contents><Key>& no end</Key></Contents></ListBucketResult>",
      "<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>",
  };
  for (const std::string& xml : bad) {
    auto page = ParseListObjectsV2(xml);
    ASSERT_FALSE(page.ok()) << xml;
    EXPECT_EQ(page.status().error_class(), errors::kIoError) << xml;
  }
}

TEST(XmlReplyTest, ErrorRepliesAndTimes) {
  ErrorReply reply = ParseErrorReply("<Error><Code>SlowDown</Code><Message>reduce &lt;rate&gt;</Message></Error>");
  EXPECT_EQ(reply.code, "SlowDown");
  EXPECT_EQ(reply.message, "reduce <rate>");
  EXPECT_EQ(ParseErrorReply("not xml").code, "");
  // <CodeX> is not <Code>.
  EXPECT_EQ(ParseErrorReply("<Error><CodeX>1</CodeX><Code>NoSuchKey</Code></Error>").code, "NoSuchKey");
  EXPECT_EQ(ParseStoreTime("Wed, 12 Oct 2009 17:50:30 GMT"), 1255369830000);
  EXPECT_EQ(ParseStoreTime("2009-10-12T17:50:30Z"), 1255369830000);
  EXPECT_EQ(ParseStoreTime("Wed, 12 Foo 2009 17:50:30 GMT"), std::nullopt);
  EXPECT_EQ(ParseStoreTime("yesterday"), std::nullopt);
}

}  // namespace
}  // namespace sluice::storage
