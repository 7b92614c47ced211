// Test data for the file formats' tests: a batch holding every sluice type, and a registry of
// the formats. For tests only.
#pragma once

#include <cmath>
#include <initializer_list>
#include <limits>

#include "sluice/connectors/files/formats.h"
#include "sluice/core/builder.h"
#include "sluice/core/record_batch.h"

namespace sluice::connectors::file_testing {

// A new registry holding the engine's own formats and those `registrations` add, for a test's
// static registry (the names are distinct, so registration cannot fail).
inline engine::Registry* RegistryOf(std::initializer_list<Status (*)(engine::Registry*)> registrations) {
  auto* made = new engine::Registry();
  (void)engine::RegisterBuiltinFormats(made);
  for (auto registration : registrations) (void)registration(made);
  return made;
}

// The engine's own formats and the file formats, registered on first use.
inline engine::Registry& FileFormatsRegistry() {
  static engine::Registry* registry = RegistryOf({RegisterFileFormats});
  return *registry;
}

inline TypePtr Decimal(int precision, int scale) { return DataType::Decimal(precision, scale).value(); }

// Three rows of every sluice type: ordinary values, extremes (with characters that need quoting
// or escaping), and nulls in every column.
inline BatchPtr EveryTypeBatch() {
  TypePtr point = DataType::Struct({{"x", DataType::Integer()}, {"label", DataType::String()}}).value();
  TypePtr schema = DataType::Struct({
                                        {"flag", DataType::Boolean()},
                                        {"tiny", DataType::Byte()},
                                        {"small", DataType::Short()},
                                        {"count", DataType::Integer()},
                                        {"id", DataType::Long()},
                                        {"ratio", DataType::Float()},
                                        {"score", DataType::Double()},
                                        {"price", Decimal(38, 10)},
                                        {"name", DataType::String()},
                                        {"blob", DataType::Binary()},
                                        {"day", DataType::Date()},
                                        {"at", DataType::Timestamp()},
                                        {"local", DataType::TimestampNtz()},
                                        {"point", point},
                                        {"tags", DataType::Array(DataType::String())},
                                        {"counts", DataType::Map(DataType::String(), DataType::Long())},
                                    })
                        .value();
  std::vector<std::unique_ptr<ColumnBuilder>> b;
  for (const Field& field : schema->fields()) b.push_back(ColumnBuilder::Make(field.type));
  auto& flag = static_cast<BooleanBuilder&>(*b[0]);
  auto& tiny = static_cast<Int8Builder&>(*b[1]);
  auto& small = static_cast<Int16Builder&>(*b[2]);
  auto& count = static_cast<Int32Builder&>(*b[3]);
  auto& id = static_cast<Int64Builder&>(*b[4]);
  auto& ratio = static_cast<FloatBuilder&>(*b[5]);
  auto& score = static_cast<DoubleBuilder&>(*b[6]);
  auto& price = static_cast<DecimalBuilder&>(*b[7]);
  auto& name = static_cast<BinaryBuilder&>(*b[8]);
  auto& blob = static_cast<BinaryBuilder&>(*b[9]);
  auto& day = static_cast<Int32Builder&>(*b[10]);
  auto& at = static_cast<Int64Builder&>(*b[11]);
  auto& local = static_cast<Int64Builder&>(*b[12]);
  auto& points = static_cast<StructBuilder&>(*b[13]);
  auto& tags = static_cast<ListBuilder&>(*b[14]);
  auto& counts = static_cast<ListBuilder&>(*b[15]);
  auto append_point = [&](int32_t x, std::string_view label) {
    static_cast<Int32Builder*>(points.field_builder(0))->Append(x);
    static_cast<BinaryBuilder*>(points.field_builder(1))->Append(label);
    points.Append();
  };

  flag.Append(1);
  tiny.Append(-7);
  small.Append(1234);
  count.Append(-56789);
  id.Append(1234567890123);
  ratio.Append(1.5f);
  score.Append(0.1);
  price.Append(static_cast<int128_t>(12345678901) * 1000);  // 1.2345678901000
  name.Append("plain");
  blob.Append(std::string_view("\x00\x01\xff", 3));
  day.Append(19723);                 // 2024-01-01
  at.Append(1704067200123456);       // 2024-01-01T00:00:00.123456Z
  local.Append(1704110400000000);    // 2024-01-01T12:00:00
  append_point(1, "a");
  static_cast<BinaryBuilder*>(tags.element_builder())->Append("red");
  static_cast<BinaryBuilder*>(tags.element_builder())->Append("blue");
  tags.Append();
  static_cast<BinaryBuilder*>(counts.key_builder())->Append("k");
  static_cast<Int64Builder*>(counts.value_builder())->Append(3);
  counts.Append();

  flag.Append(0);
  tiny.Append(-128);
  small.Append(32767);
  count.Append(std::numeric_limits<int32_t>::min());
  id.Append(std::numeric_limits<int64_t>::max());
  ratio.Append(std::numeric_limits<float>::infinity());
  score.Append(std::nan(""));
  int128_t largest = 1;
  for (int i = 0; i < 38; ++i) largest *= 10;
  price.Append(-(largest - 1));  // -9999999999999999999999999999.9999999999
  name.Append("comma, \"quote\" \\ back\nslash and line");
  blob.Append("");
  day.Append(-719162);               // 0001-01-01
  at.Append(-1);                     // 1969-12-31T23:59:59.999999Z
  local.Append(253402300799999999);  // 9999-12-31T23:59:59.999999
  append_point(-2, "");
  tags.Append();
  counts.Append();

  for (auto& builder : b) builder->AppendNull();

  std::vector<ColumnPtr> columns;
  for (auto& builder : b) columns.push_back(builder->Finish());
  return RecordBatch::Make(schema, std::move(columns), 3).value();
}

}  // namespace sluice::connectors::file_testing
