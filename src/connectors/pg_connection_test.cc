#include "sluice/connectors/pg_connection.h"

#include <gtest/gtest.h>

#include "sluice/core/error_classes.h"

namespace sluice::connectors {
namespace {

TypePtr SchemaWith(const std::vector<std::string>& names) {
  std::vector<Field> fields;
  for (const std::string& name : names) fields.push_back(Field{name, DataType::Long(), true});
  return DataType::Struct(std::move(fields)).value();
}

// PostgreSQL cuts names at 63 bytes: a longer column name is refused before any table is touched,
// whatever the characters (bytes count, not characters).
TEST(CheckPgColumnNames, RefusesNamesLongerThanPostgresKeeps) {
  std::string two_byte_letters;
  for (int i = 0; i < 32; ++i) two_byte_letters += "\xC3\xA9";  // 32 characters, 64 bytes
  for (std::vector<std::string> names : {std::vector<std::string>{std::string(64, 'a')},
                                         {"id", std::string(63, 'p') + "_first", std::string(63, 'p') + "_second"},
                                         {"ok", two_byte_letters}}) {
    Status status = CheckPgColumnNames(*SchemaWith(names));
    EXPECT_EQ(status.error_class(), errors::kInvalidSchema) << names.back();
    EXPECT_NE(status.message().find("shorter alias"), std::string_view::npos);
  }
  EXPECT_TRUE(CheckPgColumnNames(*SchemaWith({"id", std::string(63, 'a'), "\"quoted\" name"})).ok());
}

}  // namespace
}  // namespace sluice::connectors
