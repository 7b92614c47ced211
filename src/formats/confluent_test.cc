#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sluice/formats/confluent.h"

namespace sluice::formats {
namespace {

using std::string_literals::operator""s;

TEST(ConfluentHeaderTest, ReadsTheBigEndianSchemaIdAndLeavesThePayload) {
  int32_t id = 0;
  std::string_view rest;
  const std::string framed = "\x00\x00\x01\x02\x03payload"s;
  ASSERT_TRUE(ParseConfluentHeader(framed, &id, &rest));
  EXPECT_EQ(id, 0x010203);
  EXPECT_EQ(rest, "payload");
  const std::string largest = "\x00\x7f\xff\xff\xff"s;
  ASSERT_TRUE(ParseConfluentHeader(largest, &id, &rest));
  EXPECT_EQ(id, 0x7fffffff);
  EXPECT_EQ(rest, "");
}

TEST(ConfluentHeaderTest, RefusesAWrongMagicByteOrAShortValue) {
  int32_t id = 0;
  std::string_view rest;
  EXPECT_FALSE(ParseConfluentHeader("\x01\x00\x00\x00\x01x"s, &id, &rest));
  EXPECT_FALSE(ParseConfluentHeader("\x00\x00\x00\x01"s, &id, &rest));
  EXPECT_FALSE(ParseConfluentHeader("", &id, &rest));
  EXPECT_FALSE(ParseConfluentHeader("{\"json\": true}", &id, &rest));
}

TEST(ProtobufMessageIndexesTest, TheShortFormIsTheFirstMessage) {
  const std::string value = "\x00payload"s;
  std::string_view rest = value;
  std::vector<int32_t> indexes;
  ASSERT_TRUE(ParseProtobufMessageIndexes(&rest, &indexes));
  EXPECT_EQ(indexes, std::vector<int32_t>{0});
  EXPECT_EQ(rest, "payload");
}

TEST(ProtobufMessageIndexesTest, TheFullFormIsACountThenZigZagIndexes) {
  // count 2, indexes 1 and 70 (zig-zag: 2 -> 4, 1 -> 2, 70 -> 140 = 0x8c 0x01)
  const std::string value = "\x04\x02\x8c\x01payload"s;
  std::string_view rest = value;
  std::vector<int32_t> indexes = {9, 9, 9};
  ASSERT_TRUE(ParseProtobufMessageIndexes(&rest, &indexes));
  EXPECT_EQ(indexes, (std::vector<int32_t>{1, 70}));
  EXPECT_EQ(rest, "payload");
}

TEST(ProtobufMessageIndexesTest, RefusesTruncatedNegativeOrImplausiblePaths) {
  std::vector<int32_t> indexes;
  const std::string refused[] = {
      "\x04\x02"s,         // truncated: two indexes promised, one given
      "\x01"s,              // a negative count
      "\x02\x03"s,          // a negative index
      "\x82\x01"s,          // count 65
      std::string(11, '\xff'),  // a varint of 11 bytes
      ""s,
  };
  for (const std::string& value : refused) {
    std::string_view rest = value;
    EXPECT_FALSE(ParseProtobufMessageIndexes(&rest, &indexes)) << testing::PrintToString(value);
  }
}

}  // namespace
}  // namespace sluice::formats
