// The Protobuf schema -> column type mapping, and the schemas that are refused before any data
// moves.
#include <gtest/gtest.h>

#include "formats/protobuf_test_util.h"
#include "sluice/core/error_classes.h"

namespace sluice::formats {
namespace {

std::string TypeOf(std::string_view proto_text, std::string_view message_name) {
  Result<std::unique_ptr<ProtobufDecoder>> decoder = ProtobufDecoder::Make(proto_text, message_name);
  if (!decoder.ok()) return decoder.status().ToString();
  return (*decoder)->type()->ToString();
}

Status MakeStatus(std::string_view proto_text, std::string_view message_name = "t.M") {
  Result<std::unique_ptr<ProtobufDecoder>> decoder = ProtobufDecoder::Make(proto_text, message_name);
  return decoder.ok() ? Status::OK() : decoder.status();
}

TEST(ProtobufSchemaTest, MapsEveryScalarTypeWithoutLosingRange) {
  constexpr std::string_view kProto = R"(
    syntax = "proto3";
    package t;
    enum Color { RED = 0; GREEN = 1; }
    message M {
      double d = 1; float f = 2; int32 i32 = 3; int64 i64 = 4; uint32 u32 = 5; uint64 u64 = 6;
      sint32 s32 = 7; sint64 s64 = 8; sfixed32 sf32 = 9; sfixed64 sf64 = 10; bool b = 11;
      string s = 12; bytes by = 13; Color color = 14;
    })";
  EXPECT_EQ(TypeOf(kProto, "t.M"),
            "struct<d:double,f:float,i32:int,i64:bigint,u32:bigint,u64:decimal(20,0),s32:int,s64:bigint,"
            "sf32:int,sf64:bigint,b:boolean,s:string,by:binary,color:string>");
}

TEST(ProtobufSchemaTest, MapsNestedRepeatedMapsWellKnownTypesAndOneofs) {
  constexpr std::string_view kProto = R"(
    syntax = "proto3";
    package t;
    import "google/protobuf/timestamp.proto";
    import "google/protobuf/wrappers.proto";
    message Inner { string name = 1; }
    message M {
      Inner inner = 1;
      repeated int64 ids = 2;
      repeated Inner inners = 3;
      map<string, int32> counts = 4;
      map<string, Inner> by_name = 5;
      google.protobuf.Timestamp at = 6;
      google.protobuf.Int32Value maybe_int = 7;
      google.protobuf.UInt64Value maybe_big = 8;
      google.protobuf.StringValue maybe_text = 9;
      oneof choice { string text = 10; Inner nested = 11; }
      repeated google.protobuf.Timestamp times = 12;
    })";
  EXPECT_EQ(TypeOf(kProto, "t.M"),
            "struct<inner:struct<name:string>,ids:array<bigint>,inners:array<struct<name:string>>,"
            "counts:map<string,int>,by_name:map<string,struct<name:string>>,at:timestamp,maybe_int:int,"
            "maybe_big:decimal(20,0),maybe_text:string,text:string,nested:struct<name:string>,"
            "times:array<timestamp>>");
}

TEST(ProtobufSchemaTest, AcceptsProto2AndALeadingDotInTheMessageName) {
  constexpr std::string_view kProto = R"(
    syntax = "proto2";
    package t;
    message M { optional int32 a = 1; required string b = 2; repeated bool c = 3; })";
  EXPECT_EQ(TypeOf(kProto, ".t.M"), "struct<a:int,b:string,c:array<boolean>>");
}

TEST(ProtobufSchemaTest, LeavesOutFieldsOfMessageTypesWithoutFields) {
  constexpr std::string_view kProto = R"(
    syntax = "proto3";
    package t;
    import "google/protobuf/empty.proto";
    message Nothing {}
    message OnlyNothing { Nothing n = 1; }
    message M {
      int32 a = 1;
      oneof result { google.protobuf.Empty ok = 2; string error = 3; }
      repeated Nothing many = 4;
      map<string, Nothing> by_key = 5;
      OnlyNothing nested = 6;
    })";
  EXPECT_EQ(TypeOf(kProto, "t.M"), "struct<a:int,error:string>");
  EXPECT_EQ(MakeStatus(kProto, "t.OnlyNothing").error_class(), errors::kProtobufUnsupportedField);
  EXPECT_EQ(MakeStatus(kProto, "t.Nothing").error_class(), errors::kProtobufUnsupportedField);
}

TEST(ProtobufSchemaTest, ResolvesImportsGivenAsFiles) {
  std::vector<ProtobufSourceFile> imports = {
      {"common/address.proto", "syntax = \"proto3\"; package common; message Address { string city = 1; }"}};
  Result<std::unique_ptr<ProtobufDecoder>> decoder = ProtobufDecoder::Make(
      R"(syntax = "proto3"; package t; import "common/address.proto"; message M { common.Address home = 1; })", "t.M",
      imports);
  ASSERT_TRUE(decoder.ok()) << decoder.status().ToString();
  EXPECT_EQ((*decoder)->type()->ToString(), "struct<home:struct<city:string>>");
}

TEST(ProtobufSchemaTest, RefusesTypesWithoutAColumnMappingNamingTheFieldPath) {
  struct Case {
    std::string_view field;
    std::string_view expected_path;
  };
  const Case cases[] = {
      {"google.protobuf.Duration took = 1;", "`took`"},
      {"google.protobuf.Struct attributes = 1;", "`attributes`"},
      {"google.protobuf.Any payload = 1;", "`payload`"},
      {"fixed32 f = 1;", "`f`"},
      {"fixed64 f = 1;", "`f`"},
      {"map<int32, string> by_id = 1;", "`by_id`"},
      {"Holder holder = 1;", "`holder.inner.late`"},
      {"repeated M children = 1;", "`children`"},
  };
  for (const Case& c : cases) {
    std::string proto = R"(
      syntax = "proto3";
      package t;
      import "google/protobuf/duration.proto";
      import "google/protobuf/struct.proto";
      import "google/protobuf/any.proto";
      message Holder { Inner inner = 1; }
      message Inner { google.protobuf.Duration late = 1; }
      message M { )" + std::string(c.field) + " }";
    Status status = MakeStatus(proto);
    EXPECT_EQ(status.error_class(), errors::kProtobufUnsupportedField) << c.field << ": " << status.ToString();
    EXPECT_NE(status.message().find(c.expected_path), std::string_view::npos) << status.ToString();
  }
}

TEST(ProtobufSchemaTest, RefusesGroups) {
  Status status = MakeStatus(R"(
    syntax = "proto2";
    package t;
    message M { optional group Result = 1 { optional string url = 2; } })");
  EXPECT_EQ(status.error_class(), errors::kProtobufUnsupportedField) << status.ToString();
}

TEST(ProtobufSchemaTest, ASyntaxErrorGivesLineAndColumn) {
  Status status = MakeStatus("syntax = \"proto3\";\npackage t;\nmessage M { int32 a = ; }");
  EXPECT_EQ(status.error_class(), errors::kProtobufSchemaInvalid);
  EXPECT_NE(status.message().find("schema.proto:3:"), std::string_view::npos) << status.ToString();
}

TEST(ProtobufSchemaTest, UnresolvedTypesAndImportsAreInvalidSchemas) {
  EXPECT_EQ(MakeStatus("syntax = \"proto3\"; package t; message M { Missing m = 1; }").error_class(),
            errors::kProtobufSchemaInvalid);
  EXPECT_EQ(MakeStatus("syntax = \"proto3\"; package t; import \"nowhere.proto\"; message M {}").error_class(),
            errors::kProtobufSchemaInvalid);
}

TEST(ProtobufSchemaTest, AnUnknownMessageNameListsTheMessagesThatExist) {
  Status status = MakeStatus("syntax = \"proto3\"; package t; message M { message N {} } message O {}", "t.Event");
  EXPECT_EQ(status.error_class(), errors::kProtobufMessageNotFound);
  EXPECT_NE(status.message().find("t.M, t.M.N, t.O"), std::string_view::npos) << status.ToString();
}

TEST(ProtobufSchemaTest, AWellKnownTypeIsNotAStreamMessage) {
  Status status = MakeStatus("syntax = \"proto3\"; import \"google/protobuf/timestamp.proto\";",
                             "google.protobuf.Timestamp");
  EXPECT_EQ(status.error_class(), errors::kProtobufUnsupportedField) << status.ToString();
  status = MakeStatus("syntax = \"proto3\"; import \"google/protobuf/duration.proto\";", "google.protobuf.Duration");
  EXPECT_EQ(status.ToString(),
            "PROTOBUF_UNSUPPORTED_FIELD: the message has type google.protobuf.Duration, which has no column mapping; "
            "use another type");
}

TEST(ProtobufSchemaTest, MakeDecoderBuildsTheProtobufDecoderFromASpec) {
  DecoderSpec spec;
  spec.format = SchemaFormat::kProtobuf;
  spec.schema = "syntax = \"proto3\"; package t; message M { string a = 1; }";
  spec.message_name = "t.M";
  Result<std::unique_ptr<Decoder>> decoder = MakeProtobufDecoder(spec);
  ASSERT_TRUE(decoder.ok()) << decoder.status().ToString();
  EXPECT_EQ((*decoder)->type()->ToString(), "struct<a:string>");
}

}  // namespace
}  // namespace sluice::formats
