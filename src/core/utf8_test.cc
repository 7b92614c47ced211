#include "sluice/core/utf8.h"

#include <random>

#include <gtest/gtest.h>

#include "sluice/core/builder.h"
#include "sluice/core/json_text.h"

namespace sluice {
namespace {

TEST(Utf8Test, ValidTextIsKnownAsSuch) {
  for (std::string_view text : {"", "plain", "caf\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80", "\xF4\x8F\xBF\xBF",
                                "\xED\x9F\xBF", "\xEE\x80\x80"}) {
    EXPECT_TRUE(IsValidUtf8(text)) << text;
    EXPECT_EQ(MakeValidUtf8(text), text);
  }
}

// Every kind of invalid sequence, with its replacement: one U+FFFD per maximal invalid subpart.
TEST(Utf8Test, EachInvalidSubpartBecomesOneReplacementCharacter) {
  const std::string r = "\xEF\xBF\xBD";
  struct Case {
    std::string_view bytes;
    std::string expected;
  };
  for (const Case& c : std::vector<Case>{
           {"\xFF", r},                          // never a lead byte
           {"\xFF\x41", r + "A"},                // the reported case: CAST(X'FF41' AS STRING)
           {"\xFF\xFE\x80", r + r + r},          // a CSV file's bytes
           {"\x80", r},                          // a lone continuation byte
           {"\xC0\xAF", r + r},                  // an overlong '/'
           {"\xC3", r},                          // truncated at the end
           {"\xE2\x82", r},                      // truncated 3-byte sequence: one subpart
           {"\xE2\x82" "A", r + "A"},            // cut short by an ASCII byte
           {"\xED\xA0\x80", r + r + r},          // a UTF-16 surrogate (U+D800)
           {"\xF4\x90\x80\x80", r + r + r + r},  // above U+10FFFF
           {"\xF0\x9F\x98", r},                  // truncated 4-byte sequence
           {"a\xF0\x9F\x98\x80\xFF" "b", "a\xF0\x9F\x98\x80" + r + "b"},
       }) {
    EXPECT_FALSE(IsValidUtf8(c.bytes));
    std::string made = MakeValidUtf8(c.bytes);
    EXPECT_EQ(made, c.expected);
    EXPECT_TRUE(IsValidUtf8(made));
  }
}

// Any bytes at all give valid UTF-8, and JSON text that parses.
TEST(Utf8Test, RandomBytesAlwaysBecomeValidTextAndValidJson) {
  std::mt19937 random(20261201);
  for (int round = 0; round < 2000; ++round) {
    std::string bytes(random() % 24, '\0');
    for (char& c : bytes) c = static_cast<char>(random() % 256);
    std::string made = MakeValidUtf8(bytes);
    ASSERT_TRUE(IsValidUtf8(made));
    if (IsValidUtf8(bytes)) {
      EXPECT_EQ(made, bytes);
    }
    std::string json = JsonString(bytes);
    ASSERT_TRUE(IsValidUtf8(json));
    ASSERT_TRUE(IsSingleLineJson(json)) << json;
  }
}

// Valid bytes cut between two values make both invalid, though the column's bytes are valid
// together; invalid bytes under a null row do not count.
TEST(Utf8Test, EveryStringOfAColumnIsChecked) {
  auto column = [](const std::vector<std::optional<std::string>>& values) {
    BinaryBuilder builder(DataType::String());
    for (const auto& value : values) value ? builder.Append(*value) : builder.AppendNull();
    return builder.Finish();
  };
  EXPECT_TRUE(AllStringsAreUtf8(*column({"caf\xC3\xA9", "", std::nullopt, "\xF0\x9F\x98\x80"})));
  EXPECT_TRUE(AllStringsAreUtf8(*column({})));
  EXPECT_FALSE(AllStringsAreUtf8(*column({"caf\xC3", "\xA9"})));  // é cut in two
  EXPECT_FALSE(AllStringsAreUtf8(*column({"ok", "\xFF"})));
  EXPECT_FALSE(AllStringsAreUtf8(*column({"\xE2\x82", "\xAC", "x"})));
  ListBuilder list(DataType::Array(DataType::String()));
  static_cast<BinaryBuilder*>(list.element_builder())->Append("\xC0\xAF");
  list.Append();
  EXPECT_FALSE(AllStringsAreUtf8(*list.Finish()));
  Int64Builder numbers(DataType::Long());
  numbers.Append(1);
  EXPECT_TRUE(AllStringsAreUtf8(*numbers.Finish()));
}

TEST(Utf8Test, JsonStringsNeverCarryInvalidBytes) {
  EXPECT_EQ(JsonString("\xFF\x41"), "\"\xEF\xBF\xBD" "A\"");
  EXPECT_EQ(JsonString("caf\xC3\xA9\n"), "\"caf\xC3\xA9\\n\"");
}

}  // namespace
}  // namespace sluice
