// The compatibility rules of `sluice stream update`, one test per rule, through the catalog.
#include <gtest/gtest.h>

#include <filesystem>

#include "sluice/connectors/register_formats.h"
#include "sluice/core/builder.h"
#include "sluice/core/error_classes.h"
#include "sluice/delta/snapshot.h"
#include "sluice/delta/writer.h"
#include "sluice/pipeline/stream_catalog.h"
#include "sluice/pipeline/stream_compatibility.h"
#include "testing/temp_dir.h"

namespace sluice::pipeline {
namespace {

std::string Definition(const std::string& value_schema, const std::string& extra = "") {
  return "name: main.raw.orders\n"
         "source: {format: kafka, options: {bootstrap_servers: \"127.0.0.1:9\", subscribe: orders}}\n"
         "schema_config:\n  value: " + value_schema + "\n"
         "ingestion_config: {table: main.raw.orders}\n" + extra;
}

std::string Json(const std::string& properties, const std::string& required = "[]") {
  return "{format: json, schema: '{\"type\":\"object\",\"properties\":{" + properties + "},\"required\":" + required +
         "}'}";
}

std::string Avro(const std::string& fields) {
  return "{format: avro, schema: '{\"type\":\"record\",\"name\":\"Order\",\"fields\":[" + fields + "]}'}";
}

std::string Proto(const std::string& fields) {
  return "{format: protobuf, message_name: shop.Order, schema: 'syntax = \"proto3\"; package shop; message Order { " +
         fields + " }'}";
}

class StreamUpdateTest : public ::testing::Test {
 protected:
  // Creates the stream afresh with `before`, updates it to `after`: OK or the refusal.
  Status Update(const std::string& before, const std::string& after) {
    if (catalog_.Get("main.raw.orders").ok()) {
      EXPECT_TRUE(catalog_.Delete("main.raw.orders").ok());
    }
    Result<StreamSpec> created = catalog_.Create(before);
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    return catalog_.Update(after).status();
  }

  void ExpectRefused(const std::string& before, const std::string& after, std::string_view error_class,
                     const std::string& message_part) {
    Status status = Update(before, after);
    EXPECT_EQ(status.error_class(), error_class) << status.ToString();
    EXPECT_NE(status.message().find(message_part), std::string::npos) << status.ToString();
    EXPECT_EQ(catalog_.Get("main.raw.orders")->definition, before) << "a refused update changes nothing";
  }

  testing::TempDir dir_;
  StreamCatalog catalog_{LocalFileSystem(), dir_.Join("warehouse"), &connectors::AllFormatsRegistry()};
};

TEST_F(StreamUpdateTest, JsonMayAddOptionalFieldsRemoveFieldsAndChangeExclusions) {
  const std::string before = Definition(Json(R"("id":{"type":"integer"},"note":{"type":"string"})"));
  const std::string after =
      Definition(Json(R"("id":{"type":"integer"},"email":{"type":"string"})"), "excluded_columns: [value.email]\n");
  ASSERT_TRUE(Update(before, after).ok());
  auto stored = catalog_.Get("main.raw.orders");
  EXPECT_EQ(stored->definition, after);
  EXPECT_EQ(stored->spec.excluded_columns, std::vector<std::string>{"value.email"});
}

TEST_F(StreamUpdateTest, JsonRefusesARequiredNewFieldAChangedTypeAndAMovedField) {
  const std::string before = Definition(Json(R"("id":{"type":"integer"},"note":{"type":"string"})"));
  ExpectRefused(before, Definition(Json(R"("id":{"type":"integer"},"note":{"type":"string"},"n":{"type":"integer"})", R"(["n"])")),
                errors::kStreamSchemaIncompatible, "value.n is added as a required field");
  ExpectRefused(before, Definition(Json(R"("id":{"type":"string"},"note":{"type":"string"})")),
                errors::kStreamSchemaIncompatible, "value.id changes type from bigint to string");
  ExpectRefused(before, Definition(Json(R"("note":{"type":"string"},"id":{"type":"integer"})")),
                errors::kStreamSchemaIncompatible, "moves before a field it followed");
}

TEST_F(StreamUpdateTest, NestedFieldsFollowTheSameRules) {
  const std::string before = Definition(Json(R"("card":{"type":"object","properties":{"brand":{"type":"string"}}})"));
  ExpectRefused(before, Definition(Json(R"("card":{"type":"object","properties":{"brand":{"type":"boolean"}}})")),
                errors::kStreamSchemaIncompatible, "value.card.brand changes type from string to boolean");
}

TEST_F(StreamUpdateTest, AvroMayWidenIntToLongAndDropTrailingFieldsOnly) {
  const std::string before =
      Definition(Avro(R"({"name":"id","type":"int"},{"name":"note","type":"string"},{"name":"tag","type":"string"})"));
  ASSERT_TRUE(Update(before, Definition(Avro(R"({"name":"id","type":"long"},{"name":"note","type":"string"})"))).ok());
}

TEST_F(StreamUpdateTest, AvroRefusesAddedAndNonTrailingRemovedFields) {
  const std::string before = Definition(Avro(R"({"name":"id","type":"int"},{"name":"note","type":"string"})"));
  ExpectRefused(before,
                Definition(Avro(R"({"name":"id","type":"int"},{"name":"note","type":"string"},)"
                                R"({"name":"email","type":["null","string"],"default":null})")),
                errors::kStreamSchemaIncompatible, "value.email is added");
  ExpectRefused(before, Definition(Avro(R"({"name":"note","type":"string"})")), errors::kStreamSchemaIncompatible,
                "value.id is removed before note");
  ExpectRefused(before, Definition(Avro(R"({"name":"id","type":"string"},{"name":"note","type":"string"})")),
                errors::kStreamSchemaIncompatible, "value.id changes type from int to string");
}

TEST_F(StreamUpdateTest, ProtobufMayAddRemoveWidenAndReorderFields) {
  const std::string before = Definition(Proto("int32 id = 1; string note = 2; string tag = 3;"));
  ASSERT_TRUE(Update(before, Definition(Proto("string email = 4; int64 id = 1; string note = 2;"))).ok());
  ExpectRefused(before, Definition(Proto("string id = 1; string note = 2;")), errors::kStreamSchemaIncompatible,
                "value.id changes type from int to string");
}

TEST_F(StreamUpdateTest, OnlySchemasAndExclusionsMayChange) {
  const std::string before = Definition(Json(R"("id":{"type":"integer"})"));
  ExpectRefused(before, Definition(Json(R"("id":{"type":"integer"})"), "record_type_filter: value.id > 0\n"),
                errors::kStreamUpdateNotAllowed, "changes record_type_filter");
  std::string other_topic = before;
  other_topic.replace(other_topic.find("subscribe: orders"), 17, "subscribe: payments");
  ExpectRefused(before, other_topic, errors::kStreamUpdateNotAllowed, "changes source");
  ExpectRefused(before, Definition(Avro(R"({"name":"id","type":"long"})")), errors::kStreamSchemaIncompatible,
                "changes from an inline json schema to an inline avro schema");
  EXPECT_EQ(catalog_.Update(Definition(Json(R"("id":{"type":"integer"})")).replace(6, 15, "main.raw.nothing"))
                .status()
                .error_class(),
            errors::kStreamNotFound);
}

// A part whose schema a Schema Registry holds evolves there (new versions of its subject, taken
// up while the stream runs): an update may not change where it comes from, however small.
TEST_F(StreamUpdateTest, ARegistryPartRefusesEveryChangeOfItsSchemaConfig) {
  auto registry = [](const std::string& extra) {
    return "{schema_registry: {url: \"http://127.0.0.1:9\", format: avro" + extra + "}}";
  };
  const std::string before = Definition(registry(""));
  for (const std::string& extra : {std::string(", version: 2"), std::string(", subject: other"),
                                   std::string(", timeout: 3s"),
                                   std::string(", subject_name_strategy: RecordNameStrategy, record_name: a.B")}) {
    SCOPED_TRACE(extra);
    ExpectRefused(before, Definition(registry(extra)), errors::kStreamUpdateNotAllowed, "Schema Registry");
  }
  ExpectRefused(before, Definition("{schema_registry: {url: \"http://127.0.0.1:9\", format: protobuf}}"),
                errors::kStreamUpdateNotAllowed, "schema_config.value");
  ExpectRefused(before, Definition(Avro(R"({"name":"id","type":"long"})")), errors::kStreamSchemaIncompatible,
                "changes from a registry schema to an inline avro schema");
  // The same definition again is an update still.
  Status same = Update(before, before);
  EXPECT_TRUE(same.ok()) << same.ToString();
}

// A registry locator names its subject's schema type: without `format` it is refused.
TEST_F(StreamUpdateTest, ARegistryLocatorWithoutFormatIsRefused) {
  Result<StreamSpec> created = catalog_.Create(Definition("{schema_registry: {url: \"http://127.0.0.1:9\"}}"));
  ASSERT_FALSE(created.ok());
  EXPECT_NE(created.status().message().find("format"), std::string::npos) << created.status().ToString();
}

// An existing ingestion table takes a widening (its next batch widens the column); a change the
// table cannot store, an int field become a string, is refused naming the column.
TEST_F(StreamUpdateTest, AnExistingIngestionTableTakesAWideningAndRefusesOtherTypeChanges) {
  const std::string before = Definition(Avro(R"({"name":"id","type":"int"},{"name":"note","type":"string"})"));
  ASSERT_TRUE(catalog_.Create(before).ok());
  // The table as the stream's first batch left it: value.id an integer column.
  TypePtr value = DataType::Struct({Field{"id", DataType::Integer(), true}, Field{"note", DataType::String(), true}})
                      .value();
  TypePtr schema = DataType::Struct({Field{"value", value, true}}).value();
  BatchPtr empty = RecordBatch::Make(schema, {MakeNullColumn(value, 0)}, 0).value();
  ASSERT_TRUE(delta::WriteTable(LocalFileSystem(), dir_.Join("warehouse/main/raw/orders"), {empty}).ok());
  Status widened =
      catalog_.Update(Definition(Avro(R"({"name":"id","type":"long"},{"name":"note","type":"string"})"))).status();
  EXPECT_TRUE(widened.ok()) << widened.ToString();
  // The catalog's compatibility rules refuse an int field made a string; the table's would too.
  Status status =
      catalog_.Update(Definition(Avro(R"({"name":"id","type":"long"},{"name":"note","type":"int"})"))).status();
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("note"), std::string::npos) << status.ToString();
}

// Each update keeps the definition it replaces; the stream's inline Avro value then decodes records
// of every earlier schema (newest first). A new stream of the same name starts without them.
TEST_F(StreamUpdateTest, UpdatesKeepEarlierInlineSchemasNewestFirstUntilTheStreamIsDeleted) {
  const std::string v1 = R"({"name":"id","type":"int"},{"name":"note","type":"string"})";
  const std::string v2 = R"({"name":"id","type":"long"},{"name":"note","type":"string"})";
  const std::string v3 = R"({"name":"id","type":"long"})";
  auto schema_of = [](const std::string& fields) {
    return "{\"type\":\"record\",\"name\":\"Order\",\"fields\":[" + fields + "]}";
  };
  ASSERT_TRUE(Update(Definition(Avro(v1)), Definition(Avro(v2))).ok());
  Result<StreamSpec> third = catalog_.Update(Definition(Avro(v3)));
  ASSERT_TRUE(third.ok()) << third.status().ToString();
  EXPECT_EQ(third->value_schema->earlier_schemas, (std::vector<std::string>{schema_of(v2), schema_of(v1)}));
  auto stored = catalog_.Get("main.raw.orders");
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  EXPECT_EQ(stored->spec.value_schema->schema, schema_of(v3));
  EXPECT_EQ(stored->spec.value_schema->earlier_schemas, (std::vector<std::string>{schema_of(v2), schema_of(v1)}));
  // Updating to the same definition again keeps nothing new.
  ASSERT_TRUE(catalog_.Update(Definition(Avro(v3))).ok());
  EXPECT_EQ(catalog_.Get("main.raw.orders")->spec.value_schema->earlier_schemas.size(), 2u);

  ASSERT_TRUE(catalog_.Delete("main.raw.orders").ok());
  ASSERT_TRUE(catalog_.Create(Definition(Avro(v3))).ok());
  EXPECT_TRUE(catalog_.Get("main.raw.orders")->spec.value_schema->earlier_schemas.empty());
}

// A Protobuf widening must keep the field's wire encoding: int32 -> int64 and sint32 -> sint64
// read old values as they were written; int32 -> sint64 or sfixed32 -> sfixed64 would not.
TEST_F(StreamUpdateTest, ProtobufWideningsMustKeepTheWireEncoding) {
  EXPECT_TRUE(Update(Definition(Proto("int32 n = 1;")), Definition(Proto("int64 n = 1;"))).ok());
  EXPECT_TRUE(Update(Definition(Proto("sint32 n = 1;")), Definition(Proto("sint64 n = 1;"))).ok());
  EXPECT_TRUE(Update(Definition(Proto("uint32 n = 1;")), Definition(Proto("int64 n = 1;"))).ok());
  ExpectRefused(Definition(Proto("int32 n = 1;")), Definition(Proto("sint64 n = 1;")),
                errors::kStreamSchemaIncompatible, "n (field 1) changes its wire encoding");
  ExpectRefused(Definition(Proto("sfixed32 n = 1;")), Definition(Proto("sfixed64 n = 1;")),
                errors::kStreamSchemaIncompatible, "n (field 1) changes its wire encoding");
  ExpectRefused(Definition(Proto("message Inner { int32 v = 1; } Inner inner = 1;")),
                Definition(Proto("message Inner { sint64 v = 1; } Inner inner = 1;")),
                errors::kStreamSchemaIncompatible, "inner.v (field 1) changes its wire encoding");
}

}  // namespace
}  // namespace sluice::pipeline
