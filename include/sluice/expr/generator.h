// Spark's generators: functions of a select list that give several rows for one input row.
//
//   explode(array)      one row per element, column `col`       (map: columns `key`, `value`)
//   posexplode(array)   the same with the element's position first, column `pos` (int, from 0)
//   inline(array<struct>)  one row per element, one column per field of the struct
//   json_tuple(json, 'f1', 'f2', ...)  one row, string columns c0, c1, ...: each top-level field's
//                       value as get_json_object gives it (NULL when the text is no JSON object)
//
// A null or empty array or map gives no row; the `_outer` forms (explode_outer, posexplode_outer,
// inline_outer) give one row of nulls instead. The other items of the select list are repeated
// on every row their input row gave. A one-column generator takes its item's alias as the
// column's name (UDTF_ALIAS_NUMBER_MISMATCH for one alias on several columns). As in Spark, a
// generator is a whole item of a select list: UNSUPPORTED_GENERATOR for one nested in an expression
// or outside a select list (WHERE, GROUP BY, an aggregation, an expectation).
//
// BoundGenerator is an immutable value, safe to use from several threads at once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/record_batch.h"
#include "sluice/core/status.h"
#include "sluice/expr/expression.h"

namespace sluice::expr {

// Whether `name` (lower case) is a generator's.
bool IsGeneratorFunction(std::string_view name);
// Whether `expression` is a call of a generator.
bool IsGeneratorCall(const Expression& expression);
// Whether a generator is called anywhere in `expression` (at its top or inside).
bool CallsGenerator(const Expression& expression);

// What a generator gives for a batch: for each output row, the input row it came from
// (ascending), and the generator's columns.
struct GeneratedRows {
  std::vector<int64_t> parents;
  std::vector<ColumnPtr> columns;
};

class BoundGenerator {
 public:
  // The generator's columns, named as above (or by `alias`).
  const std::vector<Field>& fields() const { return fields_; }
  // The rows `batch` generates at `now_micros`; `first_row` as BoundExpression::Evaluate's.
  Result<GeneratedRows> Generate(const RecordBatch& batch, int64_t now_micros, int64_t first_row = 0) const;

 private:
  friend Result<BoundGenerator> BindGenerator(const NamedExpression&, const TypePtr&, SqlOptions);
  friend Result<BoundGenerator> BindJsonTuple(const NamedExpression&, const TypePtr&, SqlOptions);
  bool outer_ = false;
  bool json_tuple_ = false;
  std::vector<std::string> json_fields_;
  bool position_ = false;
  bool inline_ = false;
  std::optional<BoundExpression> argument_;
  std::vector<Field> fields_;
};

// Binds the generator call of `item` (IsGeneratorCall) to `input_schema`. DATATYPE_MISMATCH for an
// argument of the wrong type; WRONG_NUM_ARGS; UNSUPPORTED_GENERATOR for a generator inside its
// arguments.
Result<BoundGenerator> BindGenerator(const NamedExpression& item, const TypePtr& input_schema, SqlOptions options = {});

}  // namespace sluice::expr
