#include <gtest/gtest.h>

#include <string>
#include <variant>

#include "sluice/core/error_classes.h"
#include "sluice/expr/dml.h"
#include "sluice/expr/select.h"

namespace sluice::expr {
namespace {

MergeStatement Merge(const std::string& sql) {
  auto parsed = ParseDml(sql);
  EXPECT_TRUE(parsed.ok()) << sql << ": " << parsed.status().ToString();
  if (!parsed.ok() || !std::holds_alternative<MergeStatement>(*parsed)) return MergeStatement{};
  return std::get<MergeStatement>(*parsed);
}

TEST(DmlParseTest, AMergeKeepsItsTablesAliasesConditionAndClausesInOrder) {
  MergeStatement merge = Merge(
      "merge with schema evolution into main.shop.`inventory` AS t\n"
      "USING updates s ON t.id = s.id AND t.day = s.day\n"
      "WHEN MATCHED AND s.op = 'd' THEN DELETE\n"
      "WHEN MATCHED THEN UPDATE SET t.qty = t.qty + s.qty, note = 'x'\n"
      "WHEN NOT MATCHED BY TARGET AND s.qty > 0 THEN INSERT (id, qty) VALUES (s.id, s.qty)\n"
      "WHEN NOT MATCHED THEN INSERT *\n"
      "WHEN NOT MATCHED BY SOURCE AND t.qty = 0 THEN DELETE\n"
      "WHEN NOT MATCHED BY SOURCE THEN UPDATE SET qty = 0;");
  EXPECT_EQ(merge.target, (std::vector<std::string>{"main", "shop", "inventory"}));
  EXPECT_EQ(merge.target_alias, "t");
  EXPECT_EQ(merge.source, (std::vector<std::string>{"updates"}));
  EXPECT_EQ(merge.source_alias, "s");
  EXPECT_TRUE(merge.with_schema_evolution);
  EXPECT_EQ(merge.on.Conjuncts().size(), 2u);
  ASSERT_EQ(merge.clauses.size(), 6u);
  EXPECT_EQ(merge.clauses[0].match, MergeMatch::kMatched);
  EXPECT_EQ(merge.clauses[0].action, MergeActionKind::kDelete);
  EXPECT_EQ(merge.clauses[0].condition->ToSql(), "(s.op = 'd')");
  EXPECT_EQ(merge.clauses[1].action, MergeActionKind::kUpdate);
  ASSERT_EQ(merge.clauses[1].assignments.size(), 2u);
  EXPECT_EQ(merge.clauses[1].assignments[0].column, (std::vector<std::string>{"t", "qty"}));
  EXPECT_EQ(merge.clauses[1].assignments[0].value.ToSql(), "(t.qty + s.qty)");
  EXPECT_EQ(merge.clauses[2].match, MergeMatch::kNotMatched);
  EXPECT_EQ(merge.clauses[2].action, MergeActionKind::kInsert);
  EXPECT_EQ(merge.clauses[2].assignments[1].column, (std::vector<std::string>{"qty"}));
  EXPECT_EQ(merge.clauses[2].assignments[1].value.ToSql(), "s.qty");
  EXPECT_EQ(merge.clauses[3].action, MergeActionKind::kInsertAll);
  EXPECT_EQ(merge.clauses[4].match, MergeMatch::kNotMatchedBySource);
  EXPECT_EQ(merge.clauses[5].action, MergeActionKind::kUpdate);
  EXPECT_FALSE(merge.clauses[5].condition.has_value());
}

TEST(DmlParseTest, WithoutAnAliasTheTableNamesLastPartQualifiesColumns) {
  MergeStatement merge = Merge("MERGE INTO delta.`/data/people` USING main.cdc.people_updates ON people.id = people_updates.id "
                               "WHEN MATCHED THEN UPDATE SET *");
  EXPECT_EQ(merge.target, (std::vector<std::string>{"delta", "/data/people"}));
  EXPECT_EQ(merge.target_alias, "/data/people");
  EXPECT_EQ(merge.source_alias, "people_updates");
  EXPECT_EQ(merge.clauses[0].action, MergeActionKind::kUpdateAll);
}

TEST(DmlParseTest, UpdateAndDeleteStatements) {
  auto update = ParseDml("UPDATE main.shop.orders o SET status = 'late', o.fee = fee * 2 WHERE due < current_date()");
  ASSERT_TRUE(update.ok()) << update.status().ToString();
  const auto& u = std::get<UpdateStatement>(*update);
  EXPECT_EQ(u.target_alias, "o");
  ASSERT_EQ(u.assignments.size(), 2u);
  EXPECT_EQ(u.assignments[1].column, (std::vector<std::string>{"o", "fee"}));
  ASSERT_TRUE(u.where.has_value());
  auto del = ParseDml("delete from orders");
  ASSERT_TRUE(del.ok()) << del.status().ToString();
  EXPECT_FALSE(std::get<DeleteStatement>(*del).where.has_value());
  EXPECT_EQ(std::get<DeleteStatement>(*del).target_alias, "orders");
  auto del_where = ParseDml("DELETE FROM orders AS x WHERE x.id IN (1, 2);");
  ASSERT_TRUE(del_where.ok()) << del_where.status().ToString();
  EXPECT_EQ(std::get<DeleteStatement>(*del_where).where->ToSql(), "(x.id IN (1, 2))");
}

TEST(DmlParseTest, WrongStatementsNameTheirPlaceOrTheirClass) {
  struct Case {
    const char* sql;
    std::string_view error;
  };
  const Case cases[] = {
      {"MERGE INTO t USING s ON t.id = s.id", errors::kParseSyntaxError},
      {"MERGE INTO t USING s WHEN MATCHED THEN DELETE", errors::kParseSyntaxError},
      {"MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN INSERT *", errors::kParseSyntaxError},
      {"MERGE INTO t USING s ON t.id = s.id WHEN NOT MATCHED THEN DELETE", errors::kParseSyntaxError},
      {"MERGE INTO t USING s ON t.id = s.id WHEN NOT MATCHED BY SOURCE THEN UPDATE SET *", errors::kParseSyntaxError},
      {"MERGE INTO t USING s ON t.id = s.id WHEN NOT MATCHED BY NOBODY THEN INSERT *", errors::kParseSyntaxError},
      {"MERGE INTO t USING s ON t.id = s.id WHEN NOT MATCHED THEN INSERT (a, b) VALUES (1)", errors::kParseSyntaxError},
      {"MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET a = ", errors::kParseSyntaxError},
      {"MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE trailing", errors::kParseSyntaxError},
      {"UPDATE t WHERE a = 1", errors::kParseSyntaxError},
      {"DELETE t WHERE a = 1", errors::kParseSyntaxError},
      {"SELECT * FROM t", errors::kParseSyntaxError},
      {"MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE WHEN MATCHED AND s.x THEN DELETE",
       errors::kNonLastMatchedClauseOmitCondition},
      {"MERGE INTO t USING s ON t.id = s.id WHEN NOT MATCHED THEN INSERT * WHEN NOT MATCHED BY TARGET THEN INSERT *",
       errors::kNonLastNotMatchedByTargetClauseOmitCondition},
      {"MERGE INTO t USING s ON t.id = s.id WHEN NOT MATCHED BY SOURCE THEN DELETE "
       "WHEN MATCHED THEN DELETE WHEN NOT MATCHED BY SOURCE AND t.x THEN DELETE",
       errors::kNonLastNotMatchedBySourceClauseOmitCondition},
  };
  for (const Case& c : cases) {
    auto parsed = ParseDml(c.sql);
    ASSERT_FALSE(parsed.ok()) << c.sql;
    EXPECT_EQ(parsed.status().error_class(), c.error) << c.sql << ": " << parsed.status().ToString();
  }
  // A syntax error says where.
  auto at = ParseDml("MERGE INTO t USING s ON t.id = s.id\nWHEN MATCHED THEN INSERT *");
  EXPECT_NE(at.status().message().find("2:19"), std::string::npos) << at.status().ToString();
}

TEST(DmlParseTest, AClauseActionAloneIsCheckedAgainstItsKind) {
  auto update = ParseMergeAction(MergeMatch::kMatched, "UPDATE SET a = s.a + 1, b = NULL");
  ASSERT_TRUE(update.ok()) << update.status().ToString();
  EXPECT_EQ(update->assignments.size(), 2u);
  EXPECT_TRUE(ParseMergeAction(MergeMatch::kNotMatched, "INSERT *").ok());
  EXPECT_TRUE(ParseMergeAction(MergeMatch::kNotMatchedBySource, "delete").ok());
  EXPECT_FALSE(ParseMergeAction(MergeMatch::kNotMatched, "DELETE").ok());
  EXPECT_FALSE(ParseMergeAction(MergeMatch::kMatched, "UPDATE SET * extra").ok());
  EXPECT_FALSE(ParseMergeAction(MergeMatch::kNotMatchedBySource, "UPDATE SET *").ok());
}

}  // namespace
}  // namespace sluice::expr

namespace sluice::expr {
namespace {

TEST(StatementEndTest, ASemicolonMayEndAStatementButNotAnExpression) {
  auto select = ParseSelect("SELECT item, count(*) FROM STREAM(main.shop.orders) GROUP BY item;");
  ASSERT_TRUE(select.ok()) << select.status().ToString();
  EXPECT_EQ(select->from_name(), "main.shop.orders");
  EXPECT_EQ(ParseSelect("SELECT * FROM t; SELECT * FROM u").status().error_class(), errors::kParseSyntaxError);
  EXPECT_EQ(Expression::Parse("a > 1;").status().error_class(), errors::kParseSyntaxError);
  EXPECT_TRUE(ParseDml("DELETE FROM t;").ok());
}

TEST(SelectWithoutFromTest, ItemsAreOverOneRowAndEveryClauseButFromStays) {
  for (std::string_view sql : {"SELECT 1 AS id", "select 1 as id, 'a' s;", "SELECT count(*) AS n",
                               "SELECT 1 AS one WHERE false", "SELECT 2 AS two GROUP BY 1 HAVING true",
                               "SELECT `from` FROM t"}) {
    Result<SelectStatement> select = ParseSelect(sql);
    ASSERT_TRUE(select.ok()) << sql << ": " << select.status().ToString();
    EXPECT_EQ(select->from.empty(), sql.find(" FROM ") == std::string_view::npos) << sql;
  }
  Result<SelectStatement> counted = ParseSelect("SELECT count(*) AS n WHERE 1 = 1");
  ASSERT_TRUE(counted.ok());
  EXPECT_TRUE(counted->is_aggregation());
  EXPECT_TRUE(counted->where.has_value());
  EXPECT_EQ(counted->items.at(0).name, "n");
  // `SELECT *` needs a FROM; a FROM needs its table; nothing may follow the statement.
  for (std::string_view sql : {"SELECT *", "SELECT * WHERE true", "SELECT 1 FROM", "SELECT 1 AS a b c",
                               "SELECT 1 FROM t u v", "SELECT", "SELECT 1,"}) {
    EXPECT_EQ(ParseSelect(sql).status().error_class(), errors::kParseSyntaxError) << sql;
  }
  EXPECT_NE(ParseSelect("SELECT 1 AS a b c").status().message().find("FROM, WHERE, GROUP BY, HAVING"),
            std::string_view::npos);
}

}  // namespace
}  // namespace sluice::expr
