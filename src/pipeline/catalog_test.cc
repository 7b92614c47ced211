#include "sluice/pipeline/catalog.h"

#include <gtest/gtest.h>

#include "sluice/core/error_classes.h"
#include "testing/store_root.h"
#include "testing/temp_dir.h"

namespace sluice::pipeline {
namespace {

using Options = std::map<std::string, std::string>;

Connection OrdersDb() {
  return {"orders_db",
          "postgresql",
          {{"host", "db.internal"}, {"port", "6432"}, {"database", "orders"}, {"user", "loader"},
           {"password", "${env:ORDERS_DB_PASSWORD}"}}};
}

// Every test runs on the local disk and on S3 (moto on loopback).
class CatalogTest : public ::testing::TestWithParam<sluice::testing::Store> {
 protected:
  sluice::testing::StoreRoot dir_{GetParam()};
  Catalog catalog_{dir_.file_system(), dir_.path()};
};

TEST_P(CatalogTest, CreateThenGetReturnsTheSameConnection) {
  ASSERT_TRUE(catalog_.Create(OrdersDb()).ok());
  Result<Connection> got = catalog_.Get("orders_db");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->name, "orders_db");
  EXPECT_EQ(got->type, "postgresql");
  EXPECT_EQ(got->options, OrdersDb().options);
}

TEST_P(CatalogTest, KeepsEachConnectionInItsOwnJsonFileUnderTheWarehouse) {
  ASSERT_TRUE(catalog_.Create(OrdersDb()).ok());
  EXPECT_EQ(catalog_.PathOf("orders_db"), dir_.path() + "/_sluice/catalog/connections/orders_db.json");
  Result<std::string> text = dir_.file_system()->ReadFile(catalog_.PathOf("orders_db"));
  ASSERT_TRUE(text.ok());
  EXPECT_NE(text->find(R"("password":"${env:ORDERS_DB_PASSWORD}")"), std::string::npos) << *text;
}

TEST_P(CatalogTest, CanonicalizesFieldNamesAndType) {
  ASSERT_TRUE(catalog_.Create({"events", "Kafka", {{"Bootstrap_Servers", "b1:9092"}, {"SSL_KEY_PASSWORD", "${file:/run/key}"}}}).ok());
  Result<Connection> got = catalog_.Get("events");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->type, "kafka");
  EXPECT_EQ(got->options, (Options{{"bootstrap_servers", "b1:9092"}, {"ssl_key_password", "${file:/run/key}"}}));
}

TEST_P(CatalogTest, CreatingAnExistingNameFails) {
  ASSERT_TRUE(catalog_.Create(OrdersDb()).ok());
  Status again = catalog_.Create(OrdersDb());
  EXPECT_EQ(again.error_class(), errors::kConnectionAlreadyExists);
  EXPECT_NE(again.message().find("orders_db"), std::string_view::npos);
}

TEST_P(CatalogTest, RefusesALiteralPasswordWithoutRepeatingIt) {
  Connection literal = OrdersDb();
  literal.options["password"] = "hunter2";
  Status status = catalog_.Create(literal);
  EXPECT_EQ(status.error_class(), errors::kConnectionLiteralSecret);
  EXPECT_EQ(status.message().find("hunter2"), std::string_view::npos);
  EXPECT_FALSE(dir_.file_system()->Exists(catalog_.PathOf("orders_db")).value());
}

TEST_P(CatalogTest, RefusesSecretsThatAreOnlyPartlyAReference) {
  for (std::string value : std::vector<std::string>{"pre${env:X}", "${env:X}post", "${env:}", "${file:relative}", "${vault:x}", "${env:A}${env:B}"}) {
    Connection connection = OrdersDb();
    connection.options["password"] = value;
    EXPECT_EQ(catalog_.Create(connection).error_class(), errors::kConnectionLiteralSecret) << value;
  }
  EXPECT_EQ(catalog_.Create({"k", "kafka", {{"ssl_key_password", "plain"}}}).error_class(),
            errors::kConnectionLiteralSecret);
}

TEST_P(CatalogTest, RefusesUnknownTypesAndFields) {
  Status type = catalog_.Create({"x", "mysql", {}});
  EXPECT_EQ(type.error_class(), errors::kInvalidOptions);
  EXPECT_NE(type.message().find("postgresql and kafka"), std::string_view::npos);

  Status field = catalog_.Create({"x", "postgresql", {{"dbname", "orders"}}});
  EXPECT_EQ(field.error_class(), errors::kInvalidOptions);
  EXPECT_NE(field.message().find("`dbname`"), std::string_view::npos);
  EXPECT_NE(field.message().find("database"), std::string_view::npos);

  EXPECT_EQ(catalog_.Create({"x", "kafka", {{"sslmode", "require"}}}).error_class(), errors::kInvalidOptions);
  EXPECT_EQ(catalog_.Create({"x", "postgresql", {{"host", ""}}}).error_class(), errors::kInvalidOptions);
  EXPECT_EQ(catalog_.Create({"x", "postgresql", {{"host", "a"}, {"HOST", "b"}}}).error_class(), errors::kInvalidOptions);
}

TEST_P(CatalogTest, NamesAreSimpleIdentifiers) {
  for (const std::string& bad : std::vector<std::string>{"", "1db", "orders-db", "../etc", "a b", "a.b", std::string(64, 'a')}) {
    Connection connection = OrdersDb();
    connection.name = bad;
    EXPECT_EQ(catalog_.Create(connection).error_class(), errors::kInvalidConnectionName) << bad;
    EXPECT_EQ(catalog_.Get(bad).status().error_class(), errors::kInvalidConnectionName) << bad;
  }
  for (const std::string& good : std::vector<std::string>{"_x", "Orders_DB_2", std::string(63, 'a')}) {
    Connection connection = OrdersDb();
    connection.name = good;
    EXPECT_TRUE(catalog_.Create(connection).ok()) << good;
  }
}

TEST_P(CatalogTest, GetOfAMissingNameSuggestsCloseNames) {
  ASSERT_TRUE(catalog_.Create(OrdersDb()).ok());
  ASSERT_TRUE(catalog_.Create({"events", "kafka", {{"bootstrap_servers", "b:9092"}}}).ok());
  Result<Connection> missing = catalog_.Get("order_db");
  EXPECT_EQ(missing.status().error_class(), errors::kConnectionNotFound);
  EXPECT_NE(missing.status().message().find("did you mean `orders_db`?"), std::string_view::npos)
      << missing.status().message();
  EXPECT_EQ(missing.status().message().find("events"), std::string_view::npos);

  Result<Connection> far = catalog_.Get("warehouse_api");
  EXPECT_EQ(far.status().error_class(), errors::kConnectionNotFound);
  EXPECT_EQ(far.status().message().find("did you mean"), std::string_view::npos);
}

TEST_P(CatalogTest, ListIsSortedAndEmptyForANewWarehouse) {
  std::vector<Status> unreadable;
  Result<std::vector<Connection>> empty = catalog_.List(&unreadable);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
  ASSERT_TRUE(catalog_.Create(OrdersDb()).ok());
  ASSERT_TRUE(catalog_.Create({"events", "kafka", {{"bootstrap_servers", "b:9092"}}}).ok());
  Result<std::vector<Connection>> all = catalog_.List(&unreadable);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].name, "events");
  EXPECT_EQ((*all)[1].name, "orders_db");
  EXPECT_TRUE(unreadable.empty());
}

// A bad file is named and the others are still listed, whatever is wrong with it; a file holding
// another connection than its name says is one of them.
TEST_P(CatalogTest, AnUnreadableFileIsNamedAndTheRestListed) {
  ASSERT_TRUE(catalog_.Create(OrdersDb()).ok());
  ASSERT_TRUE(catalog_.Create({"events", "kafka", {{"bootstrap_servers", "b:9092"}}}).ok());
  auto fs = dir_.file_system();
  ASSERT_TRUE(fs->AtomicWrite(catalog_.PathOf("garbled"), "{not json").ok());
  ASSERT_TRUE(fs->AtomicWrite(catalog_.PathOf("renamed"), fs->ReadFile(catalog_.PathOf("events")).value()).ok());
  ASSERT_TRUE(fs->AtomicWrite(catalog_.PathOf("typeless"), R"({"name":"typeless","options":{}})").ok());
  std::vector<Status> unreadable;
  Result<std::vector<Connection>> listed = catalog_.List(&unreadable);
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].name, "events");
  EXPECT_EQ((*listed)[1].name, "orders_db");
  ASSERT_EQ(unreadable.size(), 3u);
  std::string all;
  for (const Status& status : unreadable) {
    EXPECT_EQ(status.error_class(), errors::kConnectionCorrupt);
    all += status.ToString() + "\n";
  }
  for (const char* file : {"garbled.json", "renamed.json", "typeless.json"}) {
    EXPECT_NE(all.find(file), std::string::npos) << all;
  }
  EXPECT_NE(all.find("holds connection `events`, not `renamed`"), std::string::npos) << all;
  EXPECT_EQ(catalog_.Get("renamed").status().error_class(), errors::kConnectionCorrupt);
}

TEST_P(CatalogTest, DeleteRemovesTheConnection) {
  ASSERT_TRUE(catalog_.Create(OrdersDb()).ok());
  ASSERT_TRUE(catalog_.Delete("orders_db").ok());
  EXPECT_EQ(catalog_.Get("orders_db").status().error_class(), errors::kConnectionNotFound);
  EXPECT_EQ(catalog_.Delete("orders_db").error_class(), errors::kConnectionNotFound);
  EXPECT_TRUE(catalog_.Create(OrdersDb()).ok());
}

TEST_P(CatalogTest, AFileSluiceDidNotWriteIsReportedAsCorrupt) {
  ASSERT_TRUE(dir_.file_system()->AtomicWrite(catalog_.PathOf("broken"), "{\"name\":\"broken\"}").ok());
  Result<Connection> got = catalog_.Get("broken");
  EXPECT_EQ(got.status().error_class(), errors::kConnectionCorrupt);
  EXPECT_NE(got.status().message().find("broken.json"), std::string_view::npos);

  ASSERT_TRUE(dir_.file_system()
                  ->AtomicWrite(catalog_.PathOf("leaky"),
                                R"({"name":"leaky","type":"postgresql","options":{"password":"hunter2"}})")
                  .ok());
  Result<Connection> leaky = catalog_.Get("leaky");
  EXPECT_EQ(leaky.status().error_class(), errors::kConnectionCorrupt);
  EXPECT_EQ(leaky.status().message().find("hunter2"), std::string_view::npos);
}

TEST(DescribeTest, RedactsSecretsAndShowsTheirReference) {
  EXPECT_EQ(Describe(OrdersDb()),
            "name: orders_db\n"
            "type: postgresql\n"
            "database: orders\n"
            "host: db.internal\n"
            "password: ***** (from ${env:ORDERS_DB_PASSWORD})\n"
            "port: 6432\n"
            "user: loader\n");
}

TEST_P(CatalogTest, ExpandConnectionMergesFieldsAndExplicitOptionsWin) {
  ASSERT_TRUE(catalog_.Create(OrdersDb()).ok());
  Result<Options> expanded =
      ExpandConnection({{"Connection", "orders_db"}, {"dbtable", "public.orders"}, {"HOST", "replica.internal"}},
                       catalog_, "postgresql");
  ASSERT_TRUE(expanded.ok()) << expanded.status().ToString();
  EXPECT_EQ(*expanded, (Options{{"HOST", "replica.internal"},
                                {"database", "orders"},
                                {"dbtable", "public.orders"},
                                {"password", "${env:ORDERS_DB_PASSWORD}"},
                                {"port", "6432"},
                                {"user", "loader"}}));
}

TEST_P(CatalogTest, ExpandConnectionLeavesOptionsWithoutAConnectionAlone) {
  Options options{{"host", "h"}, {"dbtable", "t"}};
  Result<Options> expanded = ExpandConnection(options, catalog_);
  ASSERT_TRUE(expanded.ok());
  EXPECT_EQ(*expanded, options);
}

TEST_P(CatalogTest, ExpandConnectionFailsForAnUnknownConnectionOrAnotherType) {
  EXPECT_EQ(ExpandConnection({{"connection", "nope"}}, catalog_).status().error_class(), errors::kConnectionNotFound);
  ASSERT_TRUE(catalog_.Create({"events", "kafka", {{"bootstrap_servers", "b:9092"}}}).ok());
  Result<Options> wrong = ExpandConnection({{"connection", "events"}}, catalog_, "postgresql");
  EXPECT_EQ(wrong.status().error_class(), errors::kInvalidOptions);
  EXPECT_NE(wrong.status().message().find("kafka connection"), std::string_view::npos);
}

INSTANTIATE_TEST_SUITE_P(Stores, CatalogTest, ::testing::ValuesIn(sluice::testing::kAllStores),
                         sluice::testing::StoreName);

}  // namespace
}  // namespace sluice::pipeline
