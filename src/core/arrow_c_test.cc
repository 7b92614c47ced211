#include "sluice/core/arrow_c.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "sluice/core/builder.h"
#include "sluice/core/compute.h"
#include "testing/columns.h"

namespace sluice {
namespace {

using testing::Fixed;
using testing::Strings;

// A batch of every type, each column with a null, nested columns with null rows, empty and
// non-empty arrays and maps.
BatchPtr EveryType() {
  TypePtr decimal = *DataType::Decimal(38, 4);
  TypePtr inner = *DataType::Struct({Field{"x", DataType::Integer()}, Field{"tags", DataType::Array(DataType::String())}});
  TypePtr array = DataType::Array(DataType::Long());
  TypePtr map = DataType::Map(DataType::String(), DataType::Double());
  TypePtr schema = *DataType::Struct({
      Field{"b", DataType::Boolean()},          Field{"i8", DataType::Byte()},
      Field{"i16", DataType::Short()},          Field{"i32", DataType::Integer()},
      Field{"i64", DataType::Long(), false},    Field{"f32", DataType::Float()},
      Field{"f64", DataType::Double()},         Field{"dec", decimal},
      Field{"s", DataType::String()},           Field{"bin", DataType::Binary()},
      Field{"d", DataType::Date()},             Field{"ts", DataType::Timestamp()},
      Field{"ntz", DataType::TimestampNtz()},   Field{"st", inner},
      Field{"arr", array},                      Field{"m", map},
  });
  std::vector<ColumnPtr> columns = {
      Fixed<uint8_t>(DataType::Boolean(), {1, std::nullopt, 0, 1}),
      Fixed<int8_t>(DataType::Byte(), {-128, 127, std::nullopt, 0}),
      Fixed<int16_t>(DataType::Short(), {-32768, std::nullopt, 1, 2}),
      Fixed<int32_t>(DataType::Integer(), {std::nullopt, 1, -2, 2147483647}),
      Fixed<int64_t>(DataType::Long(), {INT64_MIN, 0, 1, INT64_MAX}),
      Fixed<float>(DataType::Float(), {-0.0f, std::nullopt, 1.5f, NAN}),
      Fixed<double>(DataType::Double(), {INFINITY, -1e300, std::nullopt, 0.1}),
      Fixed<int128_t>(decimal, {int128_t(-1) * 1'000'000'000'000'000'000 * 1'000'000'000'000'000'000, std::nullopt,
                                12345, 0}),
      Strings({"héllo", "", std::nullopt, std::string("a\0b", 3)}),
      Strings({std::string("\xff\x00", 2), std::nullopt, "", "z"}, DataType::Binary()),
      Fixed<int32_t>(DataType::Date(), {-719162, 0, std::nullopt, 2932896}),
      Fixed<int64_t>(DataType::Timestamp(), {0, std::nullopt, -1, 1'700'000'000'000'000}),
      Fixed<int64_t>(DataType::TimestampNtz(), {std::nullopt, 86'400'000'000, 0, -5}),
  };
  {
    StructBuilder builder(inner);
    auto* x = static_cast<FixedWidthBuilder<int32_t>*>(builder.field_builder(0));
    auto* tags = static_cast<ListBuilder*>(builder.field_builder(1));
    auto* tag = static_cast<BinaryBuilder*>(tags->element_builder());
    x->Append(1);
    tag->Append("a");
    tag->AppendNull();
    tags->Append();
    builder.Append();
    builder.AppendNull();
    x->AppendNull();
    tags->Append();
    builder.Append();
    x->Append(4);
    tags->AppendNull();
    builder.Append();
    columns.push_back(builder.Finish());
  }
  {
    ListBuilder builder(array);
    auto* element = static_cast<FixedWidthBuilder<int64_t>*>(builder.element_builder());
    element->Append(1);
    element->AppendNull();
    builder.Append();
    builder.Append();
    builder.AppendNull();
    element->Append(3);
    builder.Append();
    columns.push_back(builder.Finish());
  }
  {
    ListBuilder builder(map);
    auto* key = static_cast<BinaryBuilder*>(builder.key_builder());
    auto* value = static_cast<FixedWidthBuilder<double>*>(builder.value_builder());
    key->Append("k");
    value->Append(1.0);
    key->Append("n");
    value->AppendNull();
    builder.Append();
    builder.AppendNull();
    builder.Append();
    key->Append("z");
    value->Append(-2.5);
    builder.Append();
    columns.push_back(builder.Finish());
  }
  return *RecordBatch::Make(schema, std::move(columns), 4);
}

std::string Rows(const RecordBatch& batch) { return PrettyPrint(batch, 100); }

TEST(ArrowCTest, EveryTypeRoundTripsWithNullsAndNesting) {
  BatchPtr batch = EveryType();
  ArrowSchema schema;
  ArrowArray array;
  ExportSchema(batch->schema(), &schema);
  ExportBatch(batch, &array);
  Result<TypePtr> type = ImportSchema(schema);
  ASSERT_TRUE(type.ok()) << type.status().ToString();
  EXPECT_EQ((*type)->ToString(), batch->schema()->ToString());
  EXPECT_FALSE((*type)->field(4).nullable);
  Result<BatchPtr> back = ImportBatch(schema, *type, array);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  for (const ColumnPtr& column : (*back)->columns()) EXPECT_TRUE(column->Validate().ok());
  EXPECT_EQ(Rows(**back), Rows(*batch));
  array.release(&array);
  schema.release(&schema);
  EXPECT_EQ(array.release, nullptr);
  EXPECT_EQ(schema.release, nullptr);
}

TEST(ArrowCTest, ExportedFormatsAreArrowsLargeTypes) {
  BatchPtr batch = EveryType();
  ArrowSchema schema;
  ExportSchema(batch->schema(), &schema);
  std::vector<std::string> formats;
  for (int64_t i = 0; i < schema.n_children; ++i) formats.push_back(schema.children[i]->format);
  EXPECT_EQ(formats, (std::vector<std::string>{"b", "c", "s", "i", "l", "f", "g", "d:38,4", "U", "Z", "tdD", "tsu:UTC",
                                               "tsu:", "+s", "+L", "+m"}));
  const ArrowSchema& map = *schema.children[15];
  ASSERT_EQ(map.n_children, 1);
  EXPECT_STREQ(map.children[0]->format, "+s");
  EXPECT_STREQ(map.children[0]->children[0]->name, "key");
  EXPECT_EQ(map.children[0]->children[0]->flags & ARROW_FLAG_NULLABLE, 0);
  EXPECT_STREQ(map.children[0]->children[1]->name, "value");
  schema.release(&schema);
}

TEST(ArrowCTest, ValuesAreSharedAndValidityBecomesBits) {
  BatchPtr batch = EveryType();
  ArrowArray array;
  ExportBatch(batch, &array);
  // Zero-copy: the exported buffers are the columns' own.
  EXPECT_EQ(array.children[4]->buffers[1], batch->column(4)->data.data());       // long
  EXPECT_EQ(array.children[7]->buffers[1], batch->column(7)->data.data());       // decimal
  EXPECT_EQ(array.children[8]->buffers[1], batch->column(8)->offsets.data());    // string offsets
  EXPECT_EQ(array.children[8]->buffers[2], batch->column(8)->data.data());       // string bytes
  EXPECT_EQ(array.children[14]->buffers[1], batch->column(14)->offsets.data());  // array offsets
  // The long column has no nulls: no validity buffer.
  EXPECT_EQ(array.children[4]->buffers[0], nullptr);
  EXPECT_EQ(array.children[4]->null_count, 0);
  // Booleans {1, null, 0, 1}: values bits 0b1001 and validity bits 0b1101.
  EXPECT_EQ(static_cast<const uint8_t*>(array.children[0]->buffers[1])[0] & 0x0f, 0b1001);
  EXPECT_EQ(static_cast<const uint8_t*>(array.children[0]->buffers[0])[0] & 0x0f, 0b1101);
  EXPECT_EQ(array.children[0]->null_count, 1);
  // A consumer may move a child out and release it after the parent.
  ArrowArray moved = *array.children[8];
  array.children[8]->release = nullptr;
  array.release(&array);
  std::string_view second(static_cast<const char*>(moved.buffers[2]), 6);
  EXPECT_EQ(second.substr(0, 6), "héllo");
  moved.release(&moved);
}

TEST(ArrowCTest, AStreamYieldsItsBatchesThenEnds) {
  BatchPtr batch = EveryType();
  ArrowArrayStream stream;
  ExportStream(batch->schema(), {batch, Slice(batch, 1, 2), RecordBatch::Empty(batch->schema())}, &stream);
  Result<ImportedStream> imported = ImportStream(&stream);
  ASSERT_TRUE(imported.ok()) << imported.status().ToString();
  EXPECT_EQ(stream.release, nullptr);
  ASSERT_EQ(imported->batches.size(), 3u);
  EXPECT_EQ(Rows(*imported->batches[0]), Rows(*batch));
  EXPECT_EQ(Rows(*imported->batches[1]), Rows(*Slice(batch, 1, 2)));
  EXPECT_EQ(imported->batches[2]->num_rows(), 0);
}

// Hand-made arrays as other producers lay them out: 32-bit offsets, offsets into the arrays,
// a null struct row over valid children, unsigned and nanosecond columns.
struct HandMade {
  ArrowSchema schema{};
  ArrowSchema* schema_children[4];
  ArrowSchema fields[4]{};
  ArrowSchema struct_children_storage[1]{};
  ArrowSchema* struct_children[1];
  ArrowArray array{};
  ArrowArray* array_children[4];
  ArrowArray columns[4]{};
  ArrowArray struct_child_storage{};
  ArrowArray* struct_child[1];
  const void* top_buffers[1] = {nullptr};
  int32_t offsets[5] = {0, 1, 3, 3, 6};
  char bytes[7] = "abcdef";
  uint8_t string_validity = 0b1011;  // row 2 null
  const void* string_buffers[3];
  uint64_t unsigned_values[5] = {0, 1, 18446744073709551615ull, 7, 8};
  const void* unsigned_buffers[2];
  int64_t nanos[5] = {-1, 1999, 0, -1000, 5};
  const void* nano_buffers[2];
  uint8_t struct_validity = 0b1101;  // row 1 null
  const void* struct_buffers[1];
  int32_t child_values[5] = {10, 11, 12, 13, 14};
  const void* child_buffers[2];

  static void NoRelease(ArrowSchema* s) { s->release = nullptr; }
  static void NoReleaseArray(ArrowArray* a) { a->release = nullptr; }

  HandMade() {
    const char* formats[4] = {"u", "L", "tsn:Europe/Paris", "+s"};
    const char* names[4] = {"s", "u", "t", "st"};
    for (int i = 0; i < 4; ++i) {
      fields[i] = ArrowSchema{formats[i], names[i], nullptr, ARROW_FLAG_NULLABLE, 0, nullptr, nullptr, NoRelease, nullptr};
      schema_children[i] = &fields[i];
    }
    struct_children_storage[0] = ArrowSchema{"i", "x", nullptr, ARROW_FLAG_NULLABLE, 0, nullptr, nullptr, NoRelease, nullptr};
    struct_children[0] = &struct_children_storage[0];
    fields[3].n_children = 1;
    fields[3].children = struct_children;
    schema = ArrowSchema{"+s", "", nullptr, 0, 4, schema_children, nullptr, NoRelease, nullptr};

    string_buffers[0] = &string_validity;
    string_buffers[1] = offsets;
    string_buffers[2] = bytes;
    columns[0] = ArrowArray{4, 1, 0, 3, 0, string_buffers, nullptr, nullptr, NoReleaseArray, nullptr};
    unsigned_buffers[0] = nullptr;
    unsigned_buffers[1] = unsigned_values;
    // One more row at the front, skipped by the column's own offset.
    columns[1] = ArrowArray{4, 0, 1, 2, 0, unsigned_buffers, nullptr, nullptr, NoReleaseArray, nullptr};
    nano_buffers[0] = nullptr;
    nano_buffers[1] = nanos;
    columns[2] = ArrowArray{4, 0, 0, 2, 0, nano_buffers, nullptr, nullptr, NoReleaseArray, nullptr};
    child_buffers[0] = nullptr;
    child_buffers[1] = child_values;
    struct_child_storage = ArrowArray{5, 0, 1, 2, 0, child_buffers, nullptr, nullptr, NoReleaseArray, nullptr};
    struct_child[0] = &struct_child_storage;
    struct_buffers[0] = &struct_validity;
    columns[3] = ArrowArray{4, 1, 0, 1, 1, struct_buffers, struct_child, nullptr, NoReleaseArray, nullptr};
    for (int i = 0; i < 4; ++i) array_children[i] = &columns[i];
    array = ArrowArray{4, 0, 0, 1, 4, top_buffers, array_children, nullptr, NoReleaseArray, nullptr};
  }
};

TEST(ArrowCTest, ImportReadsOtherProducersLayouts) {
  HandMade made;
  Result<TypePtr> type = ImportSchema(made.schema);
  ASSERT_TRUE(type.ok()) << type.status().ToString();
  EXPECT_EQ((*type)->ToString(), "struct<s:string,u:decimal(20,0),t:timestamp,st:struct<x:int>>");
  // The batch from row 1 on (the top-level offset applies to every column beneath it).
  made.array.offset = 1;
  made.array.length = 3;
  Result<BatchPtr> batch = ImportBatch(made.schema, *type, made.array);
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  const RecordBatch& b = **batch;
  EXPECT_EQ(b.column(0)->View(0), "bc");
  EXPECT_TRUE(b.column(0)->IsNull(1));
  EXPECT_EQ(b.column(0)->View(2), "def");
  EXPECT_EQ(b.column(1)->Value<int128_t>(0), int128_t(18446744073709551615ull));
  EXPECT_EQ(b.column(2)->Value<int64_t>(0), 1);    // 1999 ns
  EXPECT_EQ(b.column(2)->Value<int64_t>(2), -1);   // -1000 ns
  // Struct row 1 of the source (row 0 here) is null: its child is null there although valid below.
  EXPECT_TRUE(b.column(3)->IsNull(0));
  EXPECT_TRUE(b.column(3)->children[0]->IsNull(0));
  EXPECT_EQ(b.column(3)->children[0]->Value<int32_t>(1), 13);  // child offset 1 + row 2
  for (const ColumnPtr& column : b.columns()) EXPECT_TRUE(column->Validate().ok());
}

TEST(ArrowCTest, MalformedAndUnsupportedArraysAreRefusedByClass) {
  {
    HandMade made;
    made.offsets[2] = 0;  // descending
    TypePtr type = *ImportSchema(made.schema);
    EXPECT_EQ(ImportBatch(made.schema, type, made.array).status().error_class(), "INVALID_ARGUMENT");
  }
  {
    HandMade made;
    made.string_buffers[1] = nullptr;
    TypePtr type = *ImportSchema(made.schema);
    EXPECT_EQ(ImportBatch(made.schema, type, made.array).status().error_class(), "INVALID_ARGUMENT");
  }
  {
    HandMade made;
    made.columns[1].length = 2;  // fewer rows than the batch
    TypePtr type = *ImportSchema(made.schema);
    EXPECT_EQ(ImportBatch(made.schema, type, made.array).status().error_class(), "INVALID_ARGUMENT");
  }
  {
    HandMade made;
    made.fields[0].flags = 0;  // not nullable, but row 2 is null
    TypePtr type = *ImportSchema(made.schema);
    EXPECT_EQ(ImportBatch(made.schema, type, made.array).status().error_class(), "INVALID_ARGUMENT");
  }
  for (const char* format : {"+ud:0,1", "tiM", "d:40,2,256", "+w:4", "+r", "vx", ""}) {
    HandMade made;
    made.fields[1].format = format;
    Result<TypePtr> type = ImportSchema(made.schema);
    ASSERT_FALSE(type.ok()) << format;
    EXPECT_EQ(type.status().error_class(), "NOT_IMPLEMENTED") << format;
    EXPECT_NE(type.status().message().find("'u'"), std::string_view::npos) << type.status().ToString();
  }
  {
    HandMade made;
    made.schema.format = "i";
    EXPECT_EQ(ImportSchema(made.schema).status().error_class(), "INVALID_ARGUMENT");
  }
}

}  // namespace
}  // namespace sluice
