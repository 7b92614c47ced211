#include "sluice/pipeline/copy.h"

#include <gtest/gtest.h>

#include "sluice/core/error_classes.h"

namespace sluice::pipeline {
namespace {

using Options = std::map<std::string, std::string>;

TEST(ParseEndpointSpecTest, ReadsTheFormatAndItsOptions) {
  Result<CopyEndpoint> spec = ParseEndpointSpec("postgresql:connection=shop,dbtable=public.customers,num_partitions=4");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->format, "postgresql");
  EXPECT_EQ(spec->options, (Options{{"connection", "shop"}, {"dbtable", "public.customers"}, {"num_partitions", "4"}}));
}

TEST(ParseEndpointSpecTest, QuotedValuesKeepCommasEqualsAndDoubledQuotes) {
  Result<CopyEndpoint> spec =
      ParseEndpointSpec("postgresql:query='SELECT a, b FROM t WHERE s = ''new'' AND x=1',connection=shop");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->options, (Options{{"query", "SELECT a, b FROM t WHERE s = 'new' AND x=1"}, {"connection", "shop"}}));
}

TEST(ParseEndpointSpecTest, AnUnquotedValueRunsToTheNextCommaAndMayBeEmpty) {
  Result<CopyEndpoint> spec = ParseEndpointSpec("delta:path=/data/t=1,mergeSchema=");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->options, (Options{{"path", "/data/t=1"}, {"mergeSchema", ""}}));
}

TEST(ParseEndpointSpecTest, AFormatAloneHasNoOptions) {
  Result<CopyEndpoint> spec = ParseEndpointSpec("postgresql");
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->format, "postgresql");
  EXPECT_TRUE(spec->options.empty());
}

TEST(ParseEndpointSpecTest, ABareThreePartNameIsADeltaTableOfTheWarehouse) {
  Result<CopyEndpoint> spec = ParseEndpointSpec("main.bronze.customers");
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->format, "delta");
  EXPECT_EQ(spec->options, (Options{{"table", "main.bronze.customers"}}));
}

TEST(ParseEndpointSpecTest, MalformedSpecsNameThePosition) {
  struct Case {
    std::string spec;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {":a=1", "at character 1: no format before `:`"},
           {"postgresql:query", "at character 17: expected `=` after `query`"},
           {"postgresql:query='SELECT 1", "at character 18: a quoted value has no closing quote"},
           {"postgresql:query='SELECT 1'x", "at character 28: expected `,` after a quoted value"},
           {"postgresql:a=1,", "at character 16: expected an option after `,`"},
           {"postgresql:=1", "at character 12: expected an option name"},
           {"postgresql:a=1,A=2", "at character 16: option `A` is given twice"},
           {"post gres:a=1", "at character 5: a format name is"},
       }) {
    Result<CopyEndpoint> spec = ParseEndpointSpec(c.spec);
    EXPECT_EQ(spec.status().error_class(), errors::kInvalidArgument) << c.spec;
    EXPECT_NE(spec.status().message().find(c.message), std::string_view::npos) << spec.status().message();
  }
}

// A malformed spec is not echoed: a value in it may be a secret typed in by mistake.
TEST(ParseEndpointSpecTest, AMalformedSpecIsNotEchoed) {
  for (std::string spec : {"postgresql:password=hunter2,query", "postgresql:password=hunter2,query='x",
                           "postgresql:password=hunter2,,a=1", "postgresql:password=hunter2,password=hunter2"}) {
    Result<CopyEndpoint> parsed = ParseEndpointSpec(spec);
    ASSERT_FALSE(parsed.ok()) << spec;
    EXPECT_EQ(parsed.status().message().find("hunter2"), std::string_view::npos) << parsed.status().message();
  }
}

}  // namespace
}  // namespace sluice::pipeline
