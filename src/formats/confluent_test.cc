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
  ASSERT_TRUE(ParseConfluentHeader("\x00\x00\x01\x02\x03payload"s, &id, &rest));
  EXPECT_EQ(id, 0x010203);
  EXPECT_EQ(rest, "payload");
  ASSERT_TRUE(ParseConfluentHeader("\x00\x7f\xff\xff\xff"s, &id, &rest));
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
  std::string_view rest = "\x00payload"s;
  std::vector<int32_t> indexes;
  ASSERT_TRUE(ParseProtobufMessageIndexes(&rest, &indexes));
  EXPECT_EQ(indexes, std::vector<int32_t>{0});
  EXPECT_EQ(rest, "payload");
}

TEST(ProtobufMessageIndexesTest, TheFullFormIsACountThenZigZagIndexes) {
  // count 2, indexes 1 and 70 (zig-zag: 2 -> 4, 1 -> 2, 70 -> 140 = 0x8c 0x01)
  std::string_view rest = "\x04\x02\x8c\x01payload"s;
  std::vector<int32_t> indexes = {9, 9, 9};
  ASSERT_TRUE(ParseProtobufMessageIndexes(&rest, &indexes));
  EXPECT_EQ(indexes, (std::vector<int32_t>{1, 70}));
  EXPECT_EQ(rest, "payload");
}

TEST(ProtobufMessageIndexesTest, RefusesTruncatedNegativeOrImplausiblePaths) {
  std::vector<int32_t> indexes;
  std::string_view truncated = "\x04\x02"s;
  EXPECT_FALSE(ParseProtobufMessageIndexes(&truncated, &indexes));
  std::string_view negative_count = "\x01"s;
  EXPECT_FALSE(ParseProtobufMessageIndexes(&negative_count, &indexes));
  std::string_view negative_index = "\x02\x03"s;
  EXPECT_FALSE(ParseProtobufMessageIndexes(&negative_index, &indexes));
  std::string_view too_deep = "\x82\x01"s;  // count 65
  EXPECT_FALSE(ParseProtobufMessageIndexes(&too_deep, &indexes));
  std::string_view overlong = std::string(11, '\xff');
  EXPECT_FALSE(ParseProtobufMessageIndexes(&overlong, &indexes));
  std::string_view empty;
  EXPECT_FALSE(ParseProtobufMessageIndexes(&empty, &indexes));
}

}  // namespace
}  // namespace sluice::formats
