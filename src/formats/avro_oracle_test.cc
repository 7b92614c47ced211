// The Avro decoder against an independent encoder: the Avro C library (Debian's libavro) writes
// random records of a schema using every kind, and the decoded columns must hold exactly the
// values it was given.
#include <avro.h>

#include <optional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sluice/core/builder.h"
#include "sluice/formats/avro.h"

namespace sluice::formats {
namespace {

constexpr std::string_view kSchema = R"({"type": "record", "name": "Event", "namespace": "oracle", "fields": [
  {"name": "id", "type": "long"},
  {"name": "small", "type": "int"},
  {"name": "ratio", "type": "float"},
  {"name": "amount", "type": "double"},
  {"name": "ok", "type": "boolean"},
  {"name": "name", "type": "string"},
  {"name": "blob", "type": "bytes"},
  {"name": "hash", "type": {"type": "fixed", "name": "Hash", "size": 4}},
  {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["CREATE", "UPDATE", "DELETE"]}},
  {"name": "note", "type": ["null", "string"]},
  {"name": "tags", "type": {"type": "array", "items": "string"}},
  {"name": "scores", "type": {"type": "map", "values": "long"}},
  {"name": "child", "type": ["null", {"type": "record", "name": "Child", "fields": [{"name": "depth", "type": "int"}]}]}]})";

struct Expected {
  int64_t id;
  int32_t small;
  float ratio;
  double amount;
  bool ok;
  std::string name;
  std::string blob;
  std::string hash;
  int kind;
  std::optional<std::string> note;
  std::vector<std::string> tags;
  std::vector<std::pair<std::string, int64_t>> scores;
  std::optional<int32_t> child_depth;
};

std::string RandomText(std::mt19937_64& rng, size_t max_length) {
  std::string text(rng() % (max_length + 1), ' ');
  for (char& c : text) c = static_cast<char>('a' + rng() % 26);
  return text;
}

Expected RandomRecord(std::mt19937_64& rng) {
  Expected e;
  e.id = static_cast<int64_t>(rng());
  e.small = static_cast<int32_t>(rng());
  e.ratio = static_cast<float>(rng() % 100000) / 7.0f;
  e.amount = static_cast<double>(static_cast<int64_t>(rng())) / 3.0;
  e.ok = rng() % 2 == 0;
  e.name = RandomText(rng, 40);
  e.blob = RandomText(rng, 300);  // long enough for two-byte lengths
  for (int i = 0; i < 4; ++i) e.hash.push_back(static_cast<char>(rng()));
  e.kind = static_cast<int>(rng() % 3);
  if (rng() % 3 != 0) e.note = RandomText(rng, 10);
  for (size_t i = rng() % 4; i > 0; --i) e.tags.push_back(RandomText(rng, 6));
  for (size_t i = rng() % 3; i > 0; --i) e.scores.emplace_back("k" + std::to_string(i), static_cast<int64_t>(rng() % 2000) - 1000);
  if (rng() % 2 == 0) e.child_depth = static_cast<int32_t>(rng() % 100);
  return e;
}

// Encodes `e` with libavro's generic values.
std::string EncodeWithLibavro(avro_value_iface_t* iface, const Expected& e) {
  avro_value_t record, field, item, branch;
  EXPECT_EQ(avro_generic_value_new(iface, &record), 0);
  avro_value_get_by_name(&record, "id", &field, nullptr);
  avro_value_set_long(&field, e.id);
  avro_value_get_by_name(&record, "small", &field, nullptr);
  avro_value_set_int(&field, e.small);
  avro_value_get_by_name(&record, "ratio", &field, nullptr);
  avro_value_set_float(&field, e.ratio);
  avro_value_get_by_name(&record, "amount", &field, nullptr);
  avro_value_set_double(&field, e.amount);
  avro_value_get_by_name(&record, "ok", &field, nullptr);
  avro_value_set_boolean(&field, e.ok);
  avro_value_get_by_name(&record, "name", &field, nullptr);
  avro_value_set_string_len(&field, e.name.c_str(), e.name.size() + 1);
  avro_value_get_by_name(&record, "blob", &field, nullptr);
  avro_value_set_bytes(&field, const_cast<char*>(e.blob.data()), e.blob.size());
  avro_value_get_by_name(&record, "hash", &field, nullptr);
  avro_value_set_fixed(&field, const_cast<char*>(e.hash.data()), e.hash.size());
  avro_value_get_by_name(&record, "kind", &field, nullptr);
  avro_value_set_enum(&field, e.kind);
  avro_value_get_by_name(&record, "note", &field, nullptr);
  if (e.note.has_value()) {
    avro_value_set_branch(&field, 1, &branch);
    avro_value_set_string_len(&branch, e.note->c_str(), e.note->size() + 1);
  } else {
    avro_value_set_branch(&field, 0, &branch);
    avro_value_set_null(&branch);
  }
  avro_value_get_by_name(&record, "tags", &field, nullptr);
  for (const std::string& tag : e.tags) {
    avro_value_append(&field, &item, nullptr);
    avro_value_set_string_len(&item, tag.c_str(), tag.size() + 1);
  }
  avro_value_get_by_name(&record, "scores", &field, nullptr);
  for (const auto& [key, score] : e.scores) {
    avro_value_add(&field, key.c_str(), &item, nullptr, nullptr);
    avro_value_set_long(&item, score);
  }
  avro_value_get_by_name(&record, "child", &field, nullptr);
  if (e.child_depth.has_value()) {
    avro_value_set_branch(&field, 1, &branch);
    avro_value_get_by_name(&branch, "depth", &item, nullptr);
    avro_value_set_int(&item, *e.child_depth);
  } else {
    avro_value_set_branch(&field, 0, &branch);
    avro_value_set_null(&branch);
  }
  std::string buffer(16384, '\0');
  avro_writer_t writer = avro_writer_memory(buffer.data(), static_cast<int64_t>(buffer.size()));
  EXPECT_EQ(avro_value_write(writer, &record), 0) << avro_strerror();
  buffer.resize(static_cast<size_t>(avro_writer_tell(writer)));
  avro_writer_free(writer);
  avro_value_decref(&record);
  return buffer;
}

TEST(AvroOracleTest, DecodesExactlyWhatLibavroEncoded) {
  avro_schema_t schema;
  ASSERT_EQ(avro_schema_from_json_length(kSchema.data(), kSchema.size(), &schema), 0) << avro_strerror();
  avro_value_iface_t* iface = avro_generic_class_from_schema(schema);
  std::mt19937_64 rng(20240229);
  std::vector<Expected> records;
  BinaryBuilder encoded(DataType::Binary());
  for (int i = 0; i < 300; ++i) {
    records.push_back(RandomRecord(rng));
    encoded.Append(EncodeWithLibavro(iface, records.back()));
  }
  avro_value_iface_decref(iface);
  avro_schema_decref(schema);

  std::unique_ptr<Decoder> decoder = MakeAvroDecoder(*ParseAvroSchema(kSchema)).value();
  DecodeStats stats;
  ColumnPtr column = *decoder->Decode(*encoded.Finish(), &stats);
  ASSERT_TRUE(column->Validate().ok());
  ASSERT_EQ(stats.malformed, 0);
  const char* kKinds[] = {"CREATE", "UPDATE", "DELETE"};
  const Column& tags = *column->children[10];
  const Column& scores = *column->children[11];
  const Column& child = *column->children[12];
  for (size_t row = 0; row < records.size(); ++row) {
    const Expected& e = records[row];
    SCOPED_TRACE(row);
    EXPECT_EQ(column->children[0]->Value<int64_t>(row), e.id);
    EXPECT_EQ(column->children[1]->Value<int32_t>(row), e.small);
    EXPECT_EQ(column->children[2]->Value<float>(row), e.ratio);
    EXPECT_EQ(column->children[3]->Value<double>(row), e.amount);
    EXPECT_EQ(column->children[4]->Value<uint8_t>(row), e.ok ? 1 : 0);
    EXPECT_EQ(column->children[5]->View(row), e.name);
    EXPECT_EQ(column->children[6]->View(row), e.blob);
    EXPECT_EQ(column->children[7]->View(row), e.hash);
    EXPECT_EQ(column->children[8]->View(row), kKinds[e.kind]);
    if (e.note.has_value()) {
      EXPECT_EQ(column->children[9]->View(row), *e.note);
    } else {
      EXPECT_TRUE(column->children[9]->IsNull(row));
    }
    ASSERT_EQ(tags.offsets[row + 1] - tags.offsets[row], static_cast<int64_t>(e.tags.size()));
    for (size_t i = 0; i < e.tags.size(); ++i) EXPECT_EQ(tags.children[0]->View(tags.offsets[row] + i), e.tags[i]);
    ASSERT_EQ(scores.offsets[row + 1] - scores.offsets[row], static_cast<int64_t>(e.scores.size()));
    for (size_t i = 0; i < e.scores.size(); ++i) {
      EXPECT_EQ(scores.children[0]->View(scores.offsets[row] + i), e.scores[i].first);
      EXPECT_EQ(scores.children[1]->Value<int64_t>(scores.offsets[row] + i), e.scores[i].second);
    }
    if (e.child_depth.has_value()) {
      EXPECT_EQ(child.children[0]->Value<int32_t>(row), *e.child_depth);
    } else {
      EXPECT_TRUE(child.IsNull(row));
    }
  }
}

}  // namespace
}  // namespace sluice::formats
