// Delta's SQL data-manipulation statements, parsed: MERGE, UPDATE and DELETE.
//
//   MERGE [WITH SCHEMA EVOLUTION] INTO target [[AS] t] USING source [[AS] s] ON t.id = s.id
//     WHEN MATCHED [AND cond] THEN UPDATE SET * | UPDATE SET col = expr, ... | DELETE
//     WHEN NOT MATCHED [BY TARGET] [AND cond] THEN INSERT * | INSERT (col, ...) VALUES (expr, ...)
//     WHEN NOT MATCHED BY SOURCE [AND cond] THEN UPDATE SET col = expr, ... | DELETE
//   UPDATE target [[AS] t] SET col = expr, ... [WHERE cond]
//   DELETE FROM target [[AS] t] [WHERE cond]
//
// Table names are dotted names (`main.shop.orders`) or Spark's path form (delta.`/data/t`).
// Parsing checks the grammar and the clause rules Spark's analyzer applies before any table is
// read; what columns mean is checked when the statement is bound to its tables (delta/dml.h).
// Errors: PARSE_SYNTAX_ERROR with line:column; NON_LAST_MATCHED_CLAUSE_OMIT_CONDITION,
// NON_LAST_NOT_MATCHED_BY_TARGET_CLAUSE_OMIT_CONDITION and
// NON_LAST_NOT_MATCHED_BY_SOURCE_CLAUSE_OMIT_CONDITION when a clause without a condition is
// followed by another of its kind (which could then never apply).
// The values are immutable once made and safe to share between threads.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "sluice/core/status.h"
#include "sluice/expr/expression.h"

namespace sluice::expr {

// `col = expr` of a SET list, or one column of an INSERT with its value.
struct Assignment {
  std::vector<std::string> column;  // the column's path as written: `t.amount`, `amount`, `value.total`
  Expression value;
};

enum class MergeMatch {
  kMatched,             // a target row the ON condition pairs with a source row
  kNotMatched,          // a source row no target row pairs with (BY TARGET)
  kNotMatchedBySource,  // a target row no source row pairs with
};

enum class MergeActionKind {
  kUpdate,     // UPDATE SET col = expr, ...
  kUpdateAll,  // UPDATE SET *: every target column from the source column of its name
  kDelete,
  kInsert,     // INSERT (col, ...) VALUES (expr, ...); unlisted columns are NULL
  kInsertAll,  // INSERT *: every target column from the source column of its name
};

struct MergeClause {
  MergeMatch match = MergeMatch::kMatched;
  std::optional<Expression> condition = std::nullopt;  // AND cond
  MergeActionKind action = MergeActionKind::kDelete;
  std::vector<Assignment> assignments = {};  // kUpdate and kInsert
};

struct MergeStatement {
  std::vector<std::string> target;  // the table name's parts, as written
  std::string target_alias;         // as given, else the table name's last part (as in Spark)
  std::vector<std::string> source;
  std::string source_alias;
  bool with_schema_evolution = false;
  Expression on = Expression(nullptr);  // set by the parser
  std::vector<MergeClause> clauses;  // in the order written
};

struct UpdateStatement {
  std::vector<std::string> target = {};
  std::string target_alias = {};
  std::vector<Assignment> assignments = {};
  std::optional<Expression> where = std::nullopt;
};

struct DeleteStatement {
  std::vector<std::string> target = {};
  std::string target_alias = {};
  std::optional<Expression> where = std::nullopt;
};

using DmlStatement = std::variant<MergeStatement, UpdateStatement, DeleteStatement>;

// One MERGE, UPDATE or DELETE statement, an optional `;` at the end.
Result<DmlStatement> ParseDml(std::string_view sql);

// The action of one clause, as a pipeline's merge settings write it apart from its WHEN:
// `UPDATE SET *`, `UPDATE SET a = s.a, b = 0`, `DELETE`, `INSERT *`, `INSERT (a, b) VALUES (s.a, 0)`.
// The clause's `match` decides which actions are allowed (PARSE_SYNTAX_ERROR otherwise).
Result<MergeClause> ParseMergeAction(MergeMatch match, std::string_view action);

// The clause rules of a whole MERGE (also for clauses built one by one): at least one clause,
// only the last of each kind without a condition, the actions each kind allows.
Status CheckMergeClauses(const std::vector<MergeClause>& clauses);

}  // namespace sluice::expr
