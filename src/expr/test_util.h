// Helpers for the expr tests: small columns from literal values (testing/columns.h), one shared
// sample batch, and results rendered as text (FormatValue, "null" for nulls) so that expectations
// read as SQL.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sluice/core/builder.h"
#include "sluice/core/compute.h"
#include "sluice/core/record_batch.h"
#include "sluice/expr/expression.h"
#include "testing/columns.h"

namespace sluice::expr::testing {

using sluice::testing::Fixed;
using sluice::testing::Strings;

// Renders every row: FormatValue, or "null".
inline std::vector<std::string> Render(const Column& c) {
  std::vector<std::string> out;
  for (int64_t i = 0; i < c.length; ++i) out.push_back(c.IsNull(i) ? "null" : FormatValue(c, i));
  return out;
}

// The sample batch most tests use (4 rows):
//   i int          1, 2, null, -4
//   l bigint       10, null, 30, 40
//   d double       1.5, -2.0, null, NaN
//   s string       'apple', 'Banana', null, ''
//   b boolean      true, false, null, true
//   dec decimal(10,2)  1.50, -2.25, null, 100.00
//   dt date        2026-01-31, null, 2024-02-29, 1969-12-31
//   ts timestamp   2026-01-31 10:30:15.5, null, 2024-02-29 00:00:00, 1969-12-31 23:59:59
//   value struct<event_type: string, amount: double, user: struct<email: string>>
//                  {transaction, 12.5, {a@x.io}}, {refund, 3.0, {null}}, null, {transaction, 9.99, {d@x.io}}
//   arr array<int> [1, 2, 3], [], null, [null, 5]
//   m map<string,int>  {a: 1, b: 2}, {}, null, {c: null}
//   js string      '{"a": {"b": [10, 20]}, "s": "x"}', '{"a": 1}', null, 'not json'
//   `weird name` int  7, 8, 9, 10
BatchPtr SampleBatch();

// The options Eval, EvalError and TypeOf bind with: Spark 4's defaults (ANSI mode), or non-ANSI
// within the lifetime of a NonAnsiMode, for the tests of that mode's answers.
SqlOptions CurrentOptions();
class NonAnsiMode {
 public:
  NonAnsiMode();
  ~NonAnsiMode();
  NonAnsiMode(const NonAnsiMode&) = delete;
  NonAnsiMode& operator=(const NonAnsiMode&) = delete;
};

// Parses, binds to the sample batch and evaluates; failures are reported as test failures.
std::vector<std::string> Eval(const std::string& sql, const BatchPtr& batch = SampleBatch());
// The error of parse + bind + evaluate, or OK.
Status EvalError(const std::string& sql, const BatchPtr& batch = SampleBatch());
// The bound result type as a simple string ("int", "decimal(11,2)").
std::string TypeOf(const std::string& sql, const BatchPtr& batch = SampleBatch());

}  // namespace sluice::expr::testing
