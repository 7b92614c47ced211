#include "parquet/schema_conversion.h"

#include <gtest/gtest.h>

#include "sluice/core/error_classes.h"

namespace sluice::parquet {
namespace {

TypePtr Parse(std::string_view text) {
  Result<TypePtr> t = ParseTypeString(text);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return *t;
}

SchemaElement Leaf(std::string name, Type type, FieldRepetitionType rep) {
  SchemaElement e;
  e.name = std::move(name);
  e.type = type;
  e.repetition_type = rep;
  return e;
}

SchemaElement Group(std::string name, int children, std::optional<FieldRepetitionType> rep) {
  SchemaElement e;
  e.name = std::move(name);
  e.num_children = children;
  e.repetition_type = rep;
  return e;
}

constexpr auto kRequired = FieldRepetitionType::kRequired;
constexpr auto kOptional = FieldRepetitionType::kOptional;
constexpr auto kRepeated = FieldRepetitionType::kRepeated;

TEST(SchemaConversionTest, EveryScalarTypeMapsAsDocumented) {
  TypePtr schema = Parse(
      "struct<b:boolean,y:tinyint,s:smallint,i:int,l:bigint,f:float,d:double,d9:decimal(9,2),d18:decimal(18,0),"
      "d38:decimal(38,10),str:string,bin:binary,dt:date,ts:timestamp,ntz:timestamp_ntz>");
  Result<ParquetSchema> out = SchemaToParquet(schema);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const std::vector<SchemaElement>& e = out->elements;
  ASSERT_EQ(e.size(), 16u);
  EXPECT_EQ(e[0].name, "spark_schema");
  EXPECT_EQ(e[0].num_children, 15);
  EXPECT_EQ(e[1].type, Type::kBoolean);
  EXPECT_EQ(e[2].type, Type::kInt32);
  EXPECT_EQ(e[2].logical_type, LogicalType::Integer(8, true));
  EXPECT_EQ(e[2].converted_type, ConvertedType::kInt8);
  EXPECT_EQ(e[3].logical_type, LogicalType::Integer(16, true));
  EXPECT_EQ(e[4].type, Type::kInt32);
  EXPECT_FALSE(e[4].logical_type.has_value());
  EXPECT_EQ(e[5].type, Type::kInt64);
  EXPECT_EQ(e[6].type, Type::kFloat);
  EXPECT_EQ(e[7].type, Type::kDouble);
  EXPECT_EQ(e[8].type, Type::kInt32);
  EXPECT_EQ(e[8].logical_type, LogicalType::Decimal(9, 2));
  EXPECT_EQ(e[8].converted_type, ConvertedType::kDecimal);
  EXPECT_EQ(e[8].precision, 9);
  EXPECT_EQ(e[8].scale, 2);
  EXPECT_EQ(e[9].type, Type::kInt64);
  EXPECT_EQ(e[10].type, Type::kFixedLenByteArray);
  EXPECT_EQ(e[10].type_length, 16);
  EXPECT_EQ(e[11].type, Type::kByteArray);
  EXPECT_EQ(e[11].logical_type, LogicalType::Of(LogicalType::Kind::kString));
  EXPECT_EQ(e[11].converted_type, ConvertedType::kUtf8);
  EXPECT_EQ(e[12].type, Type::kByteArray);
  EXPECT_FALSE(e[12].logical_type.has_value());
  EXPECT_EQ(e[13].logical_type, LogicalType::Of(LogicalType::Kind::kDate));
  EXPECT_EQ(e[14].logical_type, LogicalType::Timestamp(true, TimeUnit::kMicros));
  EXPECT_EQ(e[14].converted_type, ConvertedType::kTimestampMicros);
  EXPECT_EQ(e[15].logical_type, LogicalType::Timestamp(false, TimeUnit::kMicros));
  EXPECT_FALSE(e[15].converted_type.has_value());
  for (size_t i = 1; i < e.size(); ++i) EXPECT_EQ(e[i].repetition_type, kOptional);

  Result<ParquetSchema> back = SchemaFromParquet(e);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back->type, *schema);
  ASSERT_EQ(back->leaves.size(), 15u);
  EXPECT_EQ(back->leaves[3].path, std::vector<std::string>{"i"});
  EXPECT_EQ(back->leaves[3].max_definition_level, 1);
}

TEST(SchemaConversionTest, DecimalWidthsAreMinimal) {
  EXPECT_EQ(DecimalByteWidth(1), 1);
  EXPECT_EQ(DecimalByteWidth(2), 1);
  EXPECT_EQ(DecimalByteWidth(3), 2);
  EXPECT_EQ(DecimalByteWidth(9), 4);
  EXPECT_EQ(DecimalByteWidth(10), 5);
  EXPECT_EQ(DecimalByteWidth(18), 8);
  EXPECT_EQ(DecimalByteWidth(19), 9);
  EXPECT_EQ(DecimalByteWidth(38), 16);
}

TEST(SchemaConversionTest, NestedTypesUseThreeLevelListsAndMapsWithLevels) {
  TypePtr schema = Parse("struct<a:array<int>,m:map<string,array<string>>,s:struct<x:int,y:array<struct<z:long>>>>");
  std::vector<Field> fields = schema->fields();
  fields[2].nullable = false;
  TypePtr with_required = *DataType::Struct(fields);
  Result<ParquetSchema> out = SchemaToParquet(with_required);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const std::vector<SchemaElement>& e = out->elements;
  // root, a, list, element, m, key_value, key, value, list, element, s, x, y, list, element, z
  ASSERT_EQ(e.size(), 16u);
  EXPECT_EQ(e[1].converted_type, ConvertedType::kList);
  EXPECT_EQ(e[2].name, "list");
  EXPECT_EQ(e[2].repetition_type, kRepeated);
  EXPECT_EQ(e[3].name, "element");
  EXPECT_EQ(e[4].logical_type, LogicalType::Of(LogicalType::Kind::kMap));
  EXPECT_EQ(e[5].name, "key_value");
  EXPECT_EQ(e[6].name, "key");
  EXPECT_EQ(e[6].repetition_type, kRequired);
  EXPECT_EQ(e[10].repetition_type, kRequired);

  const std::vector<LeafColumn>& leaves = out->leaves;
  ASSERT_EQ(leaves.size(), 5u);
  EXPECT_EQ(leaves[0].path, (std::vector<std::string>{"a", "list", "element"}));
  EXPECT_EQ(leaves[0].max_definition_level, 3);
  EXPECT_EQ(leaves[0].max_repetition_level, 1);
  EXPECT_EQ(leaves[1].path, (std::vector<std::string>{"m", "key_value", "key"}));
  EXPECT_EQ(leaves[1].max_definition_level, 2);
  EXPECT_EQ(leaves[1].max_repetition_level, 1);
  EXPECT_EQ(leaves[2].path, (std::vector<std::string>{"m", "key_value", "value", "list", "element"}));
  EXPECT_EQ(leaves[2].max_definition_level, 5);
  EXPECT_EQ(leaves[2].max_repetition_level, 2);
  EXPECT_EQ(leaves[3].path, (std::vector<std::string>{"s", "x"}));
  EXPECT_EQ(leaves[3].max_definition_level, 1);
  EXPECT_EQ(leaves[4].path, (std::vector<std::string>{"s", "y", "list", "element", "z"}));
  EXPECT_EQ(leaves[4].max_definition_level, 4);
  EXPECT_EQ(leaves[4].max_repetition_level, 1);

  const SchemaNode& a = out->fields[0];
  EXPECT_EQ(a.definition_level, 1);
  EXPECT_EQ(a.element_definition_level, 2);
  EXPECT_EQ(a.children[0].definition_level, 3);
  EXPECT_EQ(a.children[0].repetition_level, 1);
  EXPECT_EQ(a.children[0].leaf, 0);

  Result<ParquetSchema> back = SchemaFromParquet(e);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back->type, *with_required);
}

TEST(SchemaConversionTest, LegacyListShapesFollowTheBackwardCompatibilityRules) {
  SchemaElement list_annotated = Group("a", 1, kOptional);
  list_annotated.converted_type = ConvertedType::kList;
  SchemaElement two_level = list_annotated;
  std::vector<SchemaElement> e = {Group("root", 4, std::nullopt),
                                  // optional group a (LIST) { repeated int32 element; }
                                  two_level, Leaf("element", Type::kInt32, kRepeated),
                                  // optional group b (LIST) { repeated group array { optional int32 x; } }
                                  Group("b", 1, kOptional), Group("array", 1, kRepeated),
                                  Leaf("x", Type::kInt32, kOptional),
                                  // repeated int64 c;
                                  Leaf("c", Type::kInt64, kRepeated),
                                  // required group d (MAP) { repeated group map (MAP_KEY_VALUE) { required binary key (UTF8); optional int32 value; } }
                                  Group("d", 1, kRequired), Group("map", 2, kRepeated),
                                  Leaf("key", Type::kByteArray, kRequired), Leaf("value", Type::kInt32, kOptional)};
  e[3].converted_type = ConvertedType::kList;
  e[7].converted_type = ConvertedType::kMap;
  e[8].converted_type = ConvertedType::kMapKeyValue;
  e[9].converted_type = ConvertedType::kUtf8;
  Result<ParquetSchema> out = SchemaFromParquet(e);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->type->ToString(),
            "struct<a:array<int>,b:array<struct<x:int>>,c:array<bigint>,d:map<string,int>>");
  EXPECT_FALSE(out->type->field(0).type->contains_null());
  EXPECT_FALSE(out->type->field(1).type->contains_null());
  EXPECT_FALSE(out->type->field(2).nullable);
  EXPECT_FALSE(out->type->field(3).nullable);

  ASSERT_EQ(out->leaves.size(), 5u);
  EXPECT_EQ(out->leaves[0].max_definition_level, 2);  // a optional + repeated
  EXPECT_EQ(out->leaves[1].max_definition_level, 3);  // b optional + repeated + x optional
  EXPECT_EQ(out->leaves[2].max_definition_level, 1);
  EXPECT_EQ(out->leaves[2].max_repetition_level, 1);
  EXPECT_EQ(out->leaves[3].max_definition_level, 1);  // d required + repeated
  EXPECT_EQ(out->leaves[4].max_definition_level, 2);

  const SchemaNode& c = out->fields[2];
  EXPECT_EQ(c.definition_level, 0);
  EXPECT_EQ(c.element_definition_level, 1);
  EXPECT_EQ(c.children[0].definition_level, 1);
  EXPECT_EQ(c.children[0].repetition_level, 1);
}

// The other backward-compatibility rules of the LogicalTypes document: a repeated group of several
// fields is the element; a repeated group of one field named `<list>_tuple` is the element; any
// other repeated group of one field holds the element (the standard three-level list); a bare
// repeated group is an array of required structs.
TEST(SchemaConversionTest, RepeatedGroupsFollowTheRemainingListRules) {
  std::vector<SchemaElement> e = {Group("root", 4, std::nullopt),
                                  // optional group e (LIST) { repeated group e_tuple { required int32 x; } }
                                  Group("e", 1, kOptional), Group("e_tuple", 1, kRepeated),
                                  Leaf("x", Type::kInt32, kRequired),
                                  // optional group f (LIST) { repeated group pair { required int32 a; optional binary b (UTF8); } }
                                  Group("f", 1, kOptional), Group("pair", 2, kRepeated), Leaf("a", Type::kInt32, kRequired),
                                  Leaf("b", Type::kByteArray, kOptional),
                                  // optional group g (LIST) { repeated group list { optional int32 element; } }
                                  Group("g", 1, kOptional), Group("list", 1, kRepeated),
                                  Leaf("element", Type::kInt32, kOptional),
                                  // repeated group h { optional int64 y; }
                                  Group("h", 1, kRepeated), Leaf("y", Type::kInt64, kOptional)};
  e[1].converted_type = ConvertedType::kList;
  e[4].converted_type = ConvertedType::kList;
  e[7].converted_type = ConvertedType::kUtf8;
  e[8].converted_type = ConvertedType::kList;
  Result<ParquetSchema> out = SchemaFromParquet(e);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->type->ToString(),
            "struct<e:array<struct<x:int>>,f:array<struct<a:int,b:string>>,g:array<int>,h:array<struct<y:bigint>>>");
  EXPECT_FALSE(out->type->field(0).type->contains_null()) << "a _tuple group's elements are required";
  EXPECT_FALSE(out->type->field(1).type->contains_null()) << "a group of several fields' elements are required";
  EXPECT_TRUE(out->type->field(2).type->contains_null()) << "the standard list keeps its element's repetition";
  EXPECT_FALSE(out->type->field(3).type->contains_null());
  EXPECT_FALSE(out->type->field(3).nullable);
}

// Spark's legacy layout (spark.sql.parquet.writeLegacyFormat, and Hive/Impala-era writers): a list
// as `repeated group bag { optional <type> array; }`, a map as `repeated group map (MAP_KEY_VALUE)`
// with `key` and `value`.
TEST(SchemaConversionTest, SparksLegacyListAndMapLayoutsRead) {
  std::vector<SchemaElement> e = {Group("spark_schema", 2, std::nullopt),
                                  // optional group scores (LIST) { repeated group bag { optional int32 array; } }
                                  Group("scores", 1, kOptional), Group("bag", 1, kRepeated),
                                  Leaf("array", Type::kInt32, kOptional),
                                  // optional group tags (MAP) { repeated group map (MAP_KEY_VALUE) { required binary key (UTF8); optional binary value (UTF8); } }
                                  Group("tags", 1, kOptional), Group("map", 2, kRepeated),
                                  Leaf("key", Type::kByteArray, kRequired), Leaf("value", Type::kByteArray, kOptional)};
  e[1].converted_type = ConvertedType::kList;
  e[4].converted_type = ConvertedType::kMap;
  e[5].converted_type = ConvertedType::kMapKeyValue;
  e[6].converted_type = ConvertedType::kUtf8;
  e[7].converted_type = ConvertedType::kUtf8;
  Result<ParquetSchema> out = SchemaFromParquet(e);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->type->ToString(), "struct<scores:array<int>,tags:map<string,string>>");
  EXPECT_TRUE(out->type->field(0).type->contains_null()) << "the bag's element keeps its optional repetition";
  EXPECT_EQ(out->leaves[0].max_definition_level, 3);
  EXPECT_EQ(out->leaves[0].max_repetition_level, 1);
}

TEST(SchemaConversionTest, LegacyAndUnsignedAnnotationsMapLikeSpark) {
  std::vector<SchemaElement> e = {Group("root", 7, std::nullopt), Leaf("u8", Type::kInt32, kOptional),
                                  Leaf("u32", Type::kInt32, kOptional), Leaf("u64", Type::kInt64, kOptional),
                                  Leaf("ms", Type::kInt64, kOptional),  Leaf("old", Type::kInt96, kOptional),
                                  Leaf("dec", Type::kByteArray, kOptional), Leaf("uuid", Type::kFixedLenByteArray, kOptional)};
  e[1].converted_type = ConvertedType::kUint8;
  e[2].logical_type = LogicalType::Integer(32, false);
  e[3].converted_type = ConvertedType::kUint64;
  e[4].converted_type = ConvertedType::kTimestampMillis;
  e[6].converted_type = ConvertedType::kDecimal;
  e[6].precision = 20;
  e[6].scale = 3;
  e[7].type_length = 16;
  e[7].logical_type = LogicalType::Of(LogicalType::Kind::kUuid);
  Result<ParquetSchema> out = SchemaFromParquet(e);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->type->ToString(),
            "struct<u8:smallint,u32:bigint,u64:decimal(20,0),ms:timestamp,old:timestamp,dec:decimal(20,3),uuid:binary>");
}

TEST(SchemaConversionTest, MalformedTreesAreCorrupt) {
  std::vector<std::vector<SchemaElement>> bad = {
      {},
      {Leaf("root", Type::kInt32, kRequired)},
      {Group("root", 2, std::nullopt), Leaf("a", Type::kInt32, kOptional)},
      {Group("root", 1, std::nullopt), Leaf("a", Type::kInt32, kOptional), Leaf("extra", Type::kInt32, kOptional)},
      {Group("root", 1, std::nullopt), Group("l", 1, kOptional), Leaf("x", Type::kInt32, kOptional)},
      {Group("root", 1, std::nullopt), Group("g", -1, kOptional)},
  };
  bad[4][1].converted_type = ConvertedType::kList;  // a LIST whose child is not repeated
  for (const auto& elements : bad) {
    Result<ParquetSchema> out = SchemaFromParquet(elements);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().error_class(), errors::kParquetCorruptFile) << out.status().ToString();
  }
  std::vector<SchemaElement> deep = {Group("root", 1, std::nullopt)};
  for (int i = 0; i < 1000; ++i) deep.push_back(Group("g", 1, kOptional));
  deep.push_back(Leaf("x", Type::kInt32, kOptional));
  EXPECT_EQ(SchemaFromParquet(deep).status().error_class(), errors::kParquetCorruptFile);
}

TEST(SchemaConversionTest, EmptyStructsCannotBeWritten) {
  TypePtr schema = *DataType::Struct({Field{"s", *DataType::Struct({}), true, "{}"}});
  EXPECT_EQ(SchemaToParquet(schema).status().error_class(), errors::kParquetUnsupportedFeature);
}

}  // namespace
}  // namespace sluice::parquet
