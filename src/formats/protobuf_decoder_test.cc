// The Protobuf wire decoder, checked against values libprotobuf encoded.
#include <gtest/gtest.h>

#include "formats/protobuf_test_util.h"
#include "sluice/core/error_classes.h"

namespace sluice::formats {
namespace {

using testing::DecodeRows;
using testing::MakeTestDecoder;
using testing::ReferenceEncoder;

std::string Varint(uint64_t value) {
  std::string out;
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
  return out;
}

std::string Tag(uint32_t number, uint32_t wire_type) { return Varint((uint64_t{number} << 3) | wire_type); }

std::string LengthDelimited(uint32_t number, std::string_view bytes) {
  return Tag(number, 2) + Varint(bytes.size()) + std::string(bytes);
}

constexpr std::string_view kScalars = R"(
  syntax = "proto3";
  package t;
  enum Color { RED = 0; GREEN = 1; BLUE = 2; }
  message M {
    double d = 1; float f = 2; int32 i32 = 3; int64 i64 = 4; uint32 u32 = 5; uint64 u64 = 6;
    sint32 s32 = 7; sint64 s64 = 8; sfixed32 sf32 = 9; sfixed64 sf64 = 10; bool b = 11;
    string s = 12; bytes by = 13; Color color = 14;
    optional int32 maybe = 15;
  })";

TEST(ProtobufDecoderTest, DecodesEveryScalarTypeAtItsExtremes) {
  ReferenceEncoder encoder(kScalars);
  auto decoder = MakeTestDecoder(kScalars, "t.M");
  ASSERT_NE(decoder, nullptr);
  std::vector<std::string> rows = DecodeRows(
      *decoder,
      {encoder.Encode("t.M", R"(d: 2.5 f: -1.5 i32: -2147483648 i64: -9223372036854775808 u32: 4294967295
                                u64: 18446744073709551615 s32: -7 s64: -9000000000 sf32: -3 sf64: 5000000000
                                b: true s: "héllo" by: "\x00\xff" color: BLUE maybe: 0)"),
       encoder.Encode("t.M", R"(i32: 2147483647 i64: 9223372036854775807 s32: 2147483647 s64: 1)")});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0],
            R"({"d":2.5,"f":-1.5,"i32":-2147483648,"i64":-9223372036854775808,"u32":4294967295,)"
            R"("u64":18446744073709551615,"s32":-7,"s64":-9000000000,"sf32":-3,"sf64":5000000000,"b":true,)"
            R"("s":"héllo","by":"AP8=","color":"BLUE","maybe":0})");
  EXPECT_EQ(rows[1],
            R"({"d":0.0,"f":0.0,"i32":2147483647,"i64":9223372036854775807,"u32":0,"u64":0,"s32":2147483647,)"
            R"("s64":1,"sf32":0,"sf64":0,"b":false,"s":"","by":"","color":"RED","maybe":null})");
}

TEST(ProtobufDecoderTest, Proto3FieldsWithoutPresenceTakeTheirDefaultsAndMessagesAreNull) {
  constexpr std::string_view kProto = R"(
    syntax = "proto3";
    package t;
    enum Level { LEVEL_UNSPECIFIED = 0; HIGH = 1; }
    message Inner { int32 x = 1; }
    message M { int32 n = 1; string s = 2; bool b = 3; Level level = 4; optional string note = 5; Inner inner = 6;
                repeated int32 list = 7; map<string, int32> map = 8; })";
  auto decoder = MakeTestDecoder(kProto, "t.M");
  ASSERT_NE(decoder, nullptr);
  EXPECT_EQ(DecodeRows(*decoder, {""}),
            std::vector<std::string>{
                R"({"n":0,"s":"","b":false,"level":"LEVEL_UNSPECIFIED","note":null,"inner":null,"list":[],"map":{}})"});
}

TEST(ProtobufDecoderTest, Proto2OptionalFieldsAbsentAreNull) {
  constexpr std::string_view kProto = R"(
    syntax = "proto2";
    package t;
    message M { optional int32 a = 1 [default = 7]; optional string b = 2; required int64 c = 3; repeated int32 d = 4; })";
  ReferenceEncoder encoder(kProto);
  auto decoder = MakeTestDecoder(kProto, "t.M");
  ASSERT_NE(decoder, nullptr);
  EXPECT_EQ(DecodeRows(*decoder, {encoder.Encode("t.M", "c: 3 d: 1 d: 2"), encoder.Encode("t.M", "a: 0 b: \"\" c: 0")}),
            (std::vector<std::string>{R"({"a":null,"b":null,"c":3,"d":[1,2]})", R"({"a":0,"b":"","c":0,"d":[]})"}));
}

TEST(ProtobufDecoderTest, RepeatedFieldsPackedAndUnpacked) {
  constexpr std::string_view kProto = R"(
    syntax = "proto3";
    package t;
    message M {
      repeated int32 packed_ints = 1;
      repeated sint64 unpacked = 2 [packed = false];
      repeated double doubles = 3;
      repeated float floats = 4 [packed = false];
      repeated string names = 5;
      repeated bool flags = 6;
    })";
  ReferenceEncoder encoder(kProto);
  auto decoder = MakeTestDecoder(kProto, "t.M");
  ASSERT_NE(decoder, nullptr);
  std::string message = encoder.Encode("t.M", R"(packed_ints: [1, -1, 300] unpacked: [-2, 2] doubles: [0.5, 1.5]
                                                  floats: [0.25] names: ["a", "", "c"] flags: [true, false])");
  // A reader must also take packed fields sent unpacked and unpacked ones sent packed.
  std::string swapped = Tag(1, 0) + Varint(5) + Tag(1, 0) + Varint(6) +
                        LengthDelimited(2, Varint(3) + Varint(4)) + LengthDelimited(3, std::string(8, '\0'));
  EXPECT_EQ(DecodeRows(*decoder, {message, swapped}),
            (std::vector<std::string>{
                R"({"packed_ints":[1,-1,300],"unpacked":[-2,2],"doubles":[0.5,1.5],"floats":[0.25],"names":["a","","c"],"flags":[true,false]})",
                R"({"packed_ints":[5,6],"unpacked":[-2,2],"doubles":[0.0],"floats":[],"names":[],"flags":[]})"}));
}

TEST(ProtobufDecoderTest, NestedMessagesRepeatedMessagesAndMaps) {
  constexpr std::string_view kProto = R"(
    syntax = "proto3";
    package t;
    message Point { int32 x = 1; int32 y = 2; }
    message Shape { string name = 1; repeated Point points = 2; }
    message M { Shape shape = 1; repeated Shape shapes = 2; map<string, int64> counts = 3; map<string, Point> named = 4; })";
  ReferenceEncoder encoder(kProto);
  auto decoder = MakeTestDecoder(kProto, "t.M");
  ASSERT_NE(decoder, nullptr);
  std::vector<std::string> rows = DecodeRows(
      *decoder, {encoder.Encode("t.M", R"(shape { name: "tri" points { x: 1 y: 2 } points { x: 3 } }
                                          shapes { name: "a" } shapes { points { y: -1 } }
                                          counts { key: "k" value: 9 }
                                          named { key: "origin" value { } } named { key: "p" value { x: 5 } })")});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0],
            R"({"shape":{"name":"tri","points":[{"x":1,"y":2},{"x":3,"y":0}]},)"
            R"("shapes":[{"name":"a","points":[]},{"name":"","points":[{"x":0,"y":-1}]}],)"
            R"("counts":{"k":9},"named":{"origin":{"x":0,"y":0},"p":{"x":5,"y":0}}})");
}

TEST(ProtobufDecoderTest, AMapKeyWrittenTwiceKeepsItsLastValue) {
  constexpr std::string_view kProto = R"(
    syntax = "proto3"; package t;
    message V { int32 n = 1; }
    message M { map<string, V> m = 1; })";
  ReferenceEncoder encoder(kProto);
  auto decoder = MakeTestDecoder(kProto, "t.M");
  ASSERT_NE(decoder, nullptr);
  std::string small = encoder.Encode("t.M", R"(m { key: "a" value { n: 1 } } m { key: "b" value { n: 2 } })") +
                      encoder.Encode("t.M", R"(m { key: "a" value { n: 3 } } m { value { n: 4 } })") +
                      LengthDelimited(1, "");  // an entry with neither key nor value: key ""
  // Beyond 32 entries duplicates are found by sorting: 40 keys, each written twice, k0..k39 then
  // k39..k0, so the second round wins and its order stands.
  std::string large;
  std::string expected = "{\"m\":{";
  for (int i = 0; i < 40; ++i) {
    large += encoder.Encode("t.M", "m { key: \"k" + std::to_string(i) + "\" value { n: 0 } }");
  }
  for (int i = 39; i >= 0; --i) {
    large += encoder.Encode("t.M", "m { key: \"k" + std::to_string(i) + "\" value { n: " + std::to_string(i) + " } }");
    expected += "\"k" + std::to_string(i) + "\":{\"n\":" + std::to_string(i) + "}" + (i > 0 ? "," : "");
  }
  expected += "}}";
  EXPECT_EQ(DecodeRows(*decoder, {small, large}),
            (std::vector<std::string>{R"({"m":{"b":{"n":2},"a":{"n":3},"":null}})", expected}));
}

TEST(ProtobufDecoderTest, OneofMembersAreNullableAndTheLastSetWins) {
  constexpr std::string_view kProto = R"(
    syntax = "proto3";
    package t;
    message Card { string number = 1; }
    message M { oneof payment { string cash = 1; Card card = 2; int32 points = 3; } })";
  ReferenceEncoder encoder(kProto);
  auto decoder = MakeTestDecoder(kProto, "t.M");
  ASSERT_NE(decoder, nullptr);
  std::string card_then_points = encoder.Encode("t.M", R"(card { number: "4111" })") + encoder.Encode("t.M", "points: 0");
  EXPECT_EQ(DecodeRows(*decoder, {encoder.Encode("t.M", R"(cash: "")"), card_then_points, ""}),
            (std::vector<std::string>{R"({"cash":"","card":null,"points":null})",
                                      R"({"cash":null,"card":null,"points":0})",
                                      R"({"cash":null,"card":null,"points":null})"}));
}

TEST(ProtobufDecoderTest, WrappersAreNullableScalarsAndTimestampsAreTimestamps) {
  constexpr std::string_view kProto = R"(
    syntax = "proto3";
    package t;
    import "google/protobuf/timestamp.proto";
    import "google/protobuf/wrappers.proto";
    message M {
      google.protobuf.Int32Value i = 1; google.protobuf.UInt64Value u = 2; google.protobuf.StringValue s = 3;
      google.protobuf.BytesValue by = 4; google.protobuf.BoolValue b = 5; google.protobuf.DoubleValue d = 6;
      google.protobuf.Timestamp at = 7; repeated google.protobuf.Timestamp times = 8;
      repeated google.protobuf.Int64Value longs = 9;
    })";
  ReferenceEncoder encoder(kProto);
  auto decoder = MakeTestDecoder(kProto, "t.M");
  ASSERT_NE(decoder, nullptr);
  std::vector<std::string> rows = DecodeRows(
      *decoder, {encoder.Encode("t.M", R"(i { value: -5 } u { value: 18446744073709551615 } s { value: "x" }
                                          by { value: "\x01" } b { } d { value: 0.5 }
                                          at { seconds: 1767225600 nanos: 123456789 }
                                          times { } times { seconds: -1 } longs { value: 3 } longs { })"),
                 ""});
  EXPECT_EQ(rows, (std::vector<std::string>{
                      R"({"i":-5,"u":18446744073709551615,"s":"x","by":"AQ==","b":false,"d":0.5,)"
                      R"("at":"2026-01-01T00:00:00.123456Z","times":["1970-01-01T00:00:00Z","1969-12-31T23:59:59Z"],)"
                      R"("longs":[3,0]})",
                      R"({"i":null,"u":null,"s":null,"by":null,"b":null,"d":null,"at":null,"times":[],"longs":[]})"}));
}

TEST(ProtobufDecoderTest, ATimestampOutsideItsDocumentedRangeIsNull) {
  constexpr std::string_view kProto = R"(
    syntax = "proto3"; package t; import "google/protobuf/timestamp.proto";
    message M { google.protobuf.Timestamp at = 1; })";
  ReferenceEncoder encoder(kProto);
  auto decoder = MakeTestDecoder(kProto, "t.M");
  ASSERT_NE(decoder, nullptr);
  DecodeStats stats;
  EXPECT_EQ(DecodeRows(*decoder,
                       {encoder.Encode("t.M", "at { seconds: 253402300800 }"), encoder.Encode("t.M", "at { nanos: -1 }"),
                        encoder.Encode("t.M", "at { seconds: 253402300799 nanos: 999999999 }")},
                       &stats),
            (std::vector<std::string>{R"({"at":null})", R"({"at":null})", R"({"at":"9999-12-31T23:59:59.999999Z"})"}));
  EXPECT_EQ(stats.mismatched_fields, 2);
  EXPECT_EQ(stats.malformed, 0);
}

TEST(ProtobufDecoderTest, AnEnumNumberTheSchemaDoesNotNameIsKeptAsItsNumber) {
  constexpr std::string_view kProto = "syntax = \"proto3\"; package t; enum E { A = 0; B = 1; } message M { E e = 1; }";
  auto decoder = MakeTestDecoder(kProto, "t.M");
  ASSERT_NE(decoder, nullptr);
  EXPECT_EQ(DecodeRows(*decoder, {Tag(1, 0) + Varint(1), Tag(1, 0) + Varint(42), Tag(1, 0) + Varint(uint64_t(-3))}),
            (std::vector<std::string>{R"({"e":"B"})", R"({"e":"42"})", R"({"e":"-3"})"}));
}

TEST(ProtobufDecoderTest, TheLastScalarWinsAndRepeatedOccurrencesOfAMessageMerge) {
  constexpr std::string_view kProto = R"(
    syntax = "proto3"; package t;
    message Inner { int32 a = 1; int32 b = 2; repeated int32 c = 3; }
    message M { int32 n = 1; Inner inner = 2; })";
  ReferenceEncoder encoder(kProto);
  auto decoder = MakeTestDecoder(kProto, "t.M");
  ASSERT_NE(decoder, nullptr);
  std::string concatenated = encoder.Encode("t.M", "n: 1 inner { a: 1 c: 1 }") + encoder.Encode("t.M", "n: 2 inner { b: 2 c: 2 }");
  EXPECT_EQ(DecodeRows(*decoder, {concatenated}),
            std::vector<std::string>{R"({"n":2,"inner":{"a":1,"b":2,"c":[1,2]}})"});
}

TEST(ProtobufDecoderTest, UnknownFieldsAndUnexpectedWireTypesAreSkipped) {
  constexpr std::string_view kWriter = R"(
    syntax = "proto3"; package t;
    message Extra { string deep = 1; }
    message M { int32 kept = 1; double gone = 2; Extra extra = 3; fixed32 f32 = 4; fixed64 f64 = 5; string s = 6; })";
  constexpr std::string_view kReader = "syntax = \"proto3\"; package t; message M { int32 kept = 1; string s = 6; }";
  ReferenceEncoder encoder(kWriter);
  auto decoder = MakeTestDecoder(kReader, "t.M");
  ASSERT_NE(decoder, nullptr);
  std::string mismatched = Tag(1, 2) + Varint(1) + "x" + Tag(6, 0) + Varint(3);
  EXPECT_EQ(DecodeRows(*decoder, {encoder.Encode("t.M", R"(kept: 4 gone: 1.5 extra { deep: "x" } f32: 1 f64: 2 s: "s")"),
                                  mismatched}),
            (std::vector<std::string>{R"({"kept":4,"s":"s"})", R"({"kept":0,"s":""})"}));
}

TEST(ProtobufDecoderTest, FieldsOfEmptyMessageTypesAreSkippedButStillChecked) {
  constexpr std::string_view kProto = R"(
    syntax = "proto3"; package t; import "google/protobuf/empty.proto";
    message M { int32 a = 1; google.protobuf.Empty ok = 2; })";
  ReferenceEncoder encoder(kProto);
  auto decoder = MakeTestDecoder(kProto, "t.M");
  ASSERT_NE(decoder, nullptr);
  DecodeStats stats;
  EXPECT_EQ(DecodeRows(*decoder, {encoder.Encode("t.M", "a: 1 ok { }"), Tag(1, 0) + Varint(2) + Tag(2, 2) + Varint(4)},
                       &stats),
            (std::vector<std::string>{R"({"a":1})", "null"}));
  EXPECT_EQ(stats.malformed, 1);
}

TEST(ProtobufDecoderTest, MalformedValuesBecomeNullRowsAndAreCounted) {
  constexpr std::string_view kSchema = R"(
    syntax = "proto3"; package t;
    message Inner { string s = 1; }
    message M { int32 a = 1; repeated sfixed32 b = 2; Inner inner = 3; string s = 4; })";
  auto decoder = MakeTestDecoder(kSchema, "t.M");
  ASSERT_NE(decoder, nullptr);
  std::vector<std::optional<std::string>> values = {
      Tag(1, 0) + Varint(1),                                // 0: fine
      Tag(1, 0) + std::string(11, '\xff'),                  // 1: a varint longer than 10 bytes
      Tag(1, 0) + "\x80",                                   // 2: a varint cut short
      Tag(4, 2) + Varint(5) + "abc",                        // 3: a length past the end
      Tag(9, 3) + Tag(9, 4),                                // 4: a group (unknown field, still refused)
      Tag(0, 0) + Varint(1),                                // 5: field number 0
      LengthDelimited(2, std::string(5, '\0')),             // 6: a packed sfixed32 run of 5 bytes
      LengthDelimited(4, "\xc3\x28"),                       // 7: a string that is not UTF-8
      LengthDelimited(3, Tag(1, 2) + Varint(9)),            // 8: a nested message that is cut short
      Tag(7, 6),                                            // 9: wire type 6
      std::nullopt,                                         // 10: a null (tombstone): null, not malformed
      Tag(9, 1) + "1234567",                                // 11: a fixed64 of 7 bytes
  };
  DecodeStats stats;
  std::vector<std::string> rows = DecodeRows(*decoder, values, &stats);
  ASSERT_EQ(rows.size(), values.size());
  EXPECT_EQ(rows[0], R"({"a":1,"b":[],"inner":null,"s":""})");
  for (size_t i = 1; i < rows.size(); ++i) EXPECT_EQ(rows[i], "null") << "row " << i;
  EXPECT_EQ(stats.rows, 12);
  EXPECT_EQ(stats.malformed, 10);
  EXPECT_EQ(stats.malformed_rows, (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 11}));
}

TEST(ProtobufDecoderTest, EveryTruncationIsMalformedExactlyWhenLibprotobufRefusesIt) {
  constexpr std::string_view kProto = R"(
    syntax = "proto3"; package t;
    import "google/protobuf/timestamp.proto";
    message Inner { string name = 1; repeated sint32 values = 2; }
    message M {
      int64 id = 1; string text = 2; Inner inner = 3; repeated Inner inners = 4; map<string, Inner> by_key = 5;
      double d = 6; google.protobuf.Timestamp at = 7; repeated uint64 big = 8;
    })";
  ReferenceEncoder encoder(kProto);
  auto decoder = MakeTestDecoder(kProto, "t.M");
  ASSERT_NE(decoder, nullptr);
  std::string full = encoder.Encode("t.M", R"(id: 300 text: "tëxt" inner { name: "n" values: [-1, 1000] }
                                              inners { name: "a" } inners { values: 5 }
                                              by_key { key: "k" value { name: "v" } } d: 1.25
                                              at { seconds: 1 nanos: 1000 } big: [1, 18446744073709551615])");
  std::vector<std::optional<std::string>> prefixes;
  for (size_t size = 0; size < full.size(); ++size) prefixes.push_back(full.substr(0, size));
  DecodeStats stats;
  std::vector<std::string> rows = DecodeRows(*decoder, prefixes, &stats);
  ASSERT_EQ(rows.size(), prefixes.size());
  int64_t refused = 0;
  for (size_t size = 0; size < prefixes.size(); ++size) {
    bool parses = encoder.Parses("t.M", *prefixes[size]);
    refused += parses ? 0 : 1;
    EXPECT_EQ(rows[size] != "null", parses) << "prefix of " << size << " bytes";
  }
  EXPECT_GT(refused, static_cast<int64_t>(full.size()) / 2);
  EXPECT_EQ(stats.malformed, refused);
}

TEST(ProtobufDecoderTest, DecodersAreReusableAcrossBatches) {
  constexpr std::string_view kProto = "syntax = \"proto3\"; package t; message M { repeated string s = 1; }";
  ReferenceEncoder encoder(kProto);
  auto decoder = MakeTestDecoder(kProto, "t.M");
  ASSERT_NE(decoder, nullptr);
  EXPECT_EQ(DecodeRows(*decoder, {encoder.Encode("t.M", R"(s: "a")")}), std::vector<std::string>{R"({"s":["a"]})"});
  EXPECT_EQ(DecodeRows(*decoder, {encoder.Encode("t.M", R"(s: ["b", "c"])"), std::nullopt}),
            (std::vector<std::string>{R"({"s":["b","c"]})", "null"}));
}

constexpr std::string_view kFramedSchema = R"(
  syntax = "proto3"; package t;
  message A { int32 x = 1; }
  message B { message C { string s = 1; } C c = 1; })";

// Confluent's frame: magic byte, schema id 7, then the message-index path as zig-zag varints.
// The single byte 0 is the short form of the path [0].
const std::string kShortPath(1, '\0');

std::string Framed(std::string_view path, std::string_view payload) {
  return std::string("\0\0\0\0\x07", 5) + std::string(path) + std::string(payload);
}

TEST(ProtobufDecoderTest, ConfluentFramedValuesMustNameTheDecodersMessage) {
  Result<std::unique_ptr<ProtobufDecoder>> nested =
      ProtobufDecoder::Make(kFramedSchema, "t.B.C", {}, ProtobufFraming::kConfluent);
  ASSERT_TRUE(nested.ok()) << nested.status().ToString();
  EXPECT_EQ((*nested)->message_indexes(), (std::vector<int32_t>{1, 0}));
  std::string payload = LengthDelimited(1, "hi");
  std::string path_1_0 = Varint(4) + Varint(2) + Varint(0);  // count 2, then 1 and 0, zig-zag
  DecodeStats stats;
  EXPECT_EQ(DecodeRows(**nested, {Framed(path_1_0, payload), Framed(kShortPath, payload), payload}, &stats),
            (std::vector<std::string>{R"({"s":"hi"})", "null", "null"}));
  EXPECT_EQ(stats.malformed_rows, (std::vector<int64_t>{1, 2}));

  Result<std::unique_ptr<ProtobufDecoder>> first =
      ProtobufDecoder::Make(kFramedSchema, "t.A", {}, ProtobufFraming::kConfluent);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  std::string x = Tag(1, 0) + Varint(3);
  // The long form of the path [0] says the same as the short one.
  EXPECT_EQ(DecodeRows(**first, {Framed(kShortPath, x), Framed(Varint(2) + Varint(0), x)}),
            (std::vector<std::string>{R"({"x":3})", R"({"x":3})"}));
}

TEST(ProtobufDecoderTest, AMessageIndexPathNamesAMessageOfTheSchema) {
  EXPECT_EQ(ProtobufMessageNameAt(kFramedSchema, std::vector<int32_t>{0}).value_or(""), "t.A");
  EXPECT_EQ(ProtobufMessageNameAt(kFramedSchema, std::vector<int32_t>{1, 0}).value_or(""), "t.B.C");
  for (const std::vector<int32_t>& path : {std::vector<int32_t>{2}, {1, 1}, {}}) {
    EXPECT_EQ(ProtobufMessageNameAt(kFramedSchema, path).status().error_class(), errors::kProtobufMessageNotFound);
  }
}

TEST(ProtobufDecoderTest, RefusesAnInputColumnThatIsNotBytes) {
  auto decoder = MakeTestDecoder("syntax = \"proto3\"; package t; message M { int32 a = 1; }", "t.M");
  ASSERT_NE(decoder, nullptr);
  Int64Builder longs(DataType::Long());
  longs.Append(1);
  Result<ColumnPtr> decoded = decoder->Decode(*longs.Finish(), nullptr);
  EXPECT_EQ(decoded.status().error_class(), errors::kInvalidArgument);
}

}  // namespace
}  // namespace sluice::formats
