#include "sluice/pipeline/stream_catalog.h"

#include <gtest/gtest.h>


#include "sluice/connectors/register_formats.h"
#include "sluice/core/error_classes.h"
#include "testing/store_root.h"

namespace sluice::pipeline {
namespace {

std::string Definition(const std::string& name, const std::string& extra = "") {
  return "name: " + name +
         "\nsource: {format: kafka, options: {bootstrap_servers: \"127.0.0.1:9\", subscribe: events}}\n"
         "schema_config:\n  value: {format: json, schema: '{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\"}}}'}\n"
         "ingestion_config: {table: " + name + "_table}\n" + extra;
}

// The catalog of streams on the local disk and on the object stores (testing/store_root.h).
class StreamCatalogTest : public ::testing::TestWithParam<testing::Store> {
 protected:
  testing::StoreRoot dir_{GetParam()};
  std::shared_ptr<FileSystem> fs_ = dir_.file_system();
  StreamCatalog catalog_{fs_, dir_.Join("warehouse"), &connectors::AllFormatsRegistry()};
};

TEST_P(StreamCatalogTest, CreateThenGetGivesTheDefinitionBack) {
  auto created = catalog_.Create(Definition("main.raw.orders"));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(created->table, "main.raw.orders_table");
  EXPECT_TRUE(fs_->Exists(dir_.Join("warehouse/_sluice/catalog/streams/main.raw.orders.yaml")).value());
  auto stored = catalog_.Get("main.raw.orders");
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  EXPECT_EQ(stored->definition, Definition("main.raw.orders"));
  EXPECT_EQ(stored->spec.source.options.at("subscribe"), "events");
  PipelineSpec pipeline = catalog_.PipelineOf(stored->spec);
  EXPECT_EQ(pipeline.storage, dir_.Join("warehouse/_sluice/streams/main.raw.orders"));
  EXPECT_EQ(pipeline.TablePath(stored->spec.table).value(), dir_.Join("warehouse/main/raw/orders_table"));
}

// A name given to get, delete or follow a stream names files of the catalog: one that is not a
// catalog.schema.table of path names is refused, and nothing outside the catalog is read or moved.
TEST_P(StreamCatalogTest, NamesThatWouldLeaveTheCatalogAreRefused) {
  ASSERT_TRUE(fs_->CreateDirectories(dir_.Join("victim")).ok());
  ASSERT_TRUE(fs_->AtomicWrite(dir_.Join("victim/x.yaml"), Definition("main.raw.x")).ok());
  for (std::string name : {"../../../victim/x", "a.b/../../c", "..", "a..b", "main.raw.orders/x", ""}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(catalog_.Get(name).status().error_class(), errors::kInvalidPipeline);
    EXPECT_EQ(catalog_.Delete(name, std::chrono::milliseconds(0)).error_class(), errors::kInvalidPipeline);
    EXPECT_EQ(catalog_.ChangeSince(name, "").status().error_class(), errors::kInvalidPipeline);
  }
  EXPECT_TRUE(fs_->Exists(dir_.Join("victim/x.yaml")).value());
}

TEST_P(StreamCatalogTest, ANameIsTakenOnce) {
  ASSERT_TRUE(catalog_.Create(Definition("main.raw.orders")).ok());
  EXPECT_EQ(catalog_.Create(Definition("main.raw.orders")).status().error_class(), errors::kStreamAlreadyExists);
}

TEST_P(StreamCatalogTest, AnInvalidDefinitionIsNotStoredAndEveryProblemIsListed) {
  Result<StreamSpec> created = catalog_.Create(Definition("only.two"));
  EXPECT_EQ(created.status().error_class(), errors::kInvalidPipeline);
  EXPECT_NE(created.status().ToString().find("2 problem(s)"), std::string::npos) << created.status().ToString();
  EXPECT_NE(created.status().ToString().find("stream 'only.two' name"), std::string::npos) << created.status().ToString();
  EXPECT_NE(created.status().ToString().find("stream 'only.two' ingestion_config"), std::string::npos)
      << created.status().ToString();
  created = catalog_.Create(Definition("main.raw.x", "excluded_columns: [value.missing]\n"));
  EXPECT_NE(created.status().ToString().find("UNRESOLVED_COLUMN"), std::string::npos) << created.status().ToString();
  EXPECT_EQ(catalog_.Create("name: x\nunknown_key: 1\n").status().error_class(), errors::kInvalidPipeline);
  EXPECT_TRUE(catalog_.List()->empty());
}

// `format: binary` keeps a part's raw bytes and takes no schema; other formats need one.
TEST_P(StreamCatalogTest, FormatBinaryTakesNoSchema) {
  auto with_key = [](const std::string& key) {
    return "name: main.raw.k\nsource: {format: kafka, options: {bootstrap_servers: \"127.0.0.1:9\", subscribe: e}}\n"
           "schema_config:\n  key: " + key + "\ningestion_config: {table: main.raw.k}\n";
  };
  auto created = catalog_.Create(with_key("{format: binary}"));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  ASSERT_TRUE(created->key_schema.has_value());
  EXPECT_EQ(created->key_schema->format, formats::SchemaFormat::kBinary);
  for (const std::string refused : {"{format: binary, schema: x}", "{format: binary, message_name: m}",
                                    "{format: bytes}", "{format: json}"}) {
    SCOPED_TRACE(refused);
    EXPECT_EQ(catalog_.Create(with_key(refused)).status().error_class(), errors::kInvalidPipeline);
  }
}

TEST_P(StreamCatalogTest, ListsByNameInPages) {
  for (const char* name : {"main.raw.c", "main.raw.a", "main.raw.b"}) ASSERT_TRUE(catalog_.Create(Definition(name)).ok());
  auto first = catalog_.List(2);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->size(), 2u);
  EXPECT_EQ((*first)[0].spec.name, "main.raw.a");
  EXPECT_EQ((*first)[1].spec.name, "main.raw.b");
  auto rest = catalog_.List(2, "main.raw.b");
  ASSERT_TRUE(rest.ok());
  ASSERT_EQ(rest->size(), 1u);
  EXPECT_EQ((*rest)[0].spec.name, "main.raw.c");
}

TEST_P(StreamCatalogTest, DeleteRemovesTheDefinitionAndTheIngestionTable) {
  ASSERT_TRUE(catalog_.Create(Definition("main.raw.orders")).ok());
  ASSERT_TRUE(fs_->AtomicWrite(dir_.Join("warehouse/main/raw/orders_table/_delta_log/00000000000000000000.json"),
                               "{}").ok());
  ASSERT_TRUE(catalog_.Delete("main.raw.orders").ok());
  EXPECT_FALSE(fs_->Exists(dir_.Join("warehouse/main/raw/orders_table")).value());
  EXPECT_EQ(catalog_.Get("main.raw.orders").status().error_class(), errors::kStreamNotFound);
  EXPECT_EQ(catalog_.Delete("main.raw.orders").error_class(), errors::kStreamNotFound);
}

INSTANTIATE_TEST_SUITE_P(Stores, StreamCatalogTest, ::testing::ValuesIn(testing::kAllStores), testing::StoreName);

}  // namespace
}  // namespace sluice::pipeline
