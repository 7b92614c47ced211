#include "sluice/expr/generator.h"

#include <gtest/gtest.h>

#include "expr/test_util.h"
#include "sluice/core/error_classes.h"

namespace sluice::expr {
namespace {

using testing::CurrentOptions;
using testing::EvalError;
using testing::Render;
using testing::SampleBatch;

// Each generated row of the sample batch as "input row: col, col, ...", and the columns'
// names and types as "name type, ...".
struct Generated {
  std::vector<std::string> rows;
  std::string fields;
};

Generated Generate(const std::string& item) {
  Generated out;
  Result<NamedExpression> named = ParseNamedExpression(item);
  EXPECT_TRUE(named.ok()) << named.status().ToString();
  EXPECT_TRUE(IsGeneratorCall(named->expression));
  Result<BoundGenerator> bound = BindGenerator(*named, SampleBatch()->schema(), CurrentOptions());
  EXPECT_TRUE(bound.ok()) << bound.status().ToString();
  if (!bound.ok()) return out;
  for (const Field& field : bound->fields()) {
    out.fields += (out.fields.empty() ? "" : ", ") + field.name + " " + field.type->ToString();
  }
  Result<GeneratedRows> rows = bound->Generate(*SampleBatch(), 0);
  EXPECT_TRUE(rows.ok()) << rows.status().ToString();
  std::vector<std::vector<std::string>> columns;
  for (const ColumnPtr& column : rows->columns) {
    EXPECT_EQ(column->length, static_cast<int64_t>(rows->parents.size()));
    columns.push_back(Render(*column));
  }
  for (size_t r = 0; r < rows->parents.size(); ++r) {
    std::string text = std::to_string(rows->parents[r]) + ":";
    for (size_t c = 0; c < columns.size(); ++c) text += (c > 0 ? ", " : " ") + columns[c][r];
    out.rows.push_back(std::move(text));
  }
  return out;
}

Status BindError(const std::string& item) {
  Result<NamedExpression> named = ParseNamedExpression(item);
  if (!named.ok()) return named.status();
  return BindGenerator(*named, SampleBatch()->schema(), CurrentOptions()).status();
}

using Rows = std::vector<std::string>;

// arr: [1, 2, 3], [], null, [null, 5]; m: {a: 1, b: 2}, {}, null, {c: null}.
TEST(GeneratorTest, ExplodeGivesARowPerElementAndTheOuterFormsARowOfNullsForNoElement) {
  Generated explode = Generate("explode(arr)");
  EXPECT_EQ(explode.fields, "col int");
  EXPECT_EQ(explode.rows, (Rows{"0: 1", "0: 2", "0: 3", "3: null", "3: 5"}));
  EXPECT_EQ(Generate("explode_outer(arr)").rows, (Rows{"0: 1", "0: 2", "0: 3", "1: null", "2: null", "3: null", "3: 5"}));

  Generated pos = Generate("posexplode(arr)");
  EXPECT_EQ(pos.fields, "pos int, col int");
  EXPECT_EQ(pos.rows, (Rows{"0: 0, 1", "0: 1, 2", "0: 2, 3", "3: 0, null", "3: 1, 5"}));
  EXPECT_EQ(Generate("posexplode_outer(arr)").rows,
            (Rows{"0: 0, 1", "0: 1, 2", "0: 2, 3", "1: null, null", "2: null, null", "3: 0, null", "3: 1, 5"}));
}

TEST(GeneratorTest, AMapExplodesIntoKeysAndValues) {
  Generated map = Generate("explode(m)");
  EXPECT_EQ(map.fields, "key string, value int");
  EXPECT_EQ(map.rows, (Rows{"0: a, 1", "0: b, 2", "3: c, null"}));
  EXPECT_EQ(Generate("posexplode_outer(m)").rows,
            (Rows{"0: 0, a, 1", "0: 1, b, 2", "1: null, null, null", "2: null, null, null", "3: 0, c, null"}));
}

TEST(GeneratorTest, InlineGivesAColumnPerFieldOfTheStructs) {
  Generated inlined = Generate("inline(array(named_struct('n', i, 's', s), named_struct('n', 0, 's', 'z')))");
  EXPECT_EQ(inlined.fields, "n int, s string");
  EXPECT_EQ(inlined.rows, (Rows{"0: 1, apple", "0: 0, z", "1: 2, Banana", "1: 0, z", "2: null, null", "2: 0, z",
                                "3: -4, ", "3: 0, z"}));
  EXPECT_EQ(Generate("inline_outer(CASE WHEN i > 0 THEN array(named_struct('n', i)) END)").rows,
            (Rows{"0: 1", "1: 2", "2: null", "3: null"}));
  EXPECT_EQ(Generate("inline(CASE WHEN i > 0 THEN array(named_struct('n', i)) END)").rows, (Rows{"0: 1", "1: 2"}));
}

// js: '{"a": {"b": [10, 20]}, "s": "x"}', '{"a": 1}', null, 'not json'.
TEST(GeneratorTest, JsonTupleGivesEachFieldAsTextInOneRowPerInputRow) {
  Generated tuple = Generate("json_tuple(js, 'a', 's', 'missing')");
  EXPECT_EQ(tuple.fields, "c0 string, c1 string, c2 string");
  EXPECT_EQ(tuple.rows, (Rows{"0: {\"b\":[10,20]}, x, null", "1: 1, null, null", "2: null, null, null",
                              "3: null, null, null"}));
  EXPECT_EQ(Generate("json_tuple('{\"k\": null, \"n\": 1.50, \"t\": true}', 'k', 'n', 't')").rows[0],
            "0: null, 1.5, true");
  EXPECT_EQ(Generate("json_tuple(js, 's') AS only_s").fields, "only_s string");
  EXPECT_EQ(BindError("json_tuple(js)").error_class(), errors::kWrongNumArgs);
  EXPECT_EQ(BindError("json_tuple(i, 'a')").error_class(), errors::kDatatypeMismatch);
  EXPECT_EQ(BindError("json_tuple(js, s)").error_class(), errors::kDatatypeMismatch);
  EXPECT_EQ(BindError("json_tuple(js, 'a', 'b') AS ab").error_class(), errors::kUdtfAliasNumberMismatch);
}

TEST(GeneratorTest, AnAliasNamesTheColumnOfAOneColumnGenerator) {
  EXPECT_EQ(Generate("explode(arr) AS item").fields, "item int");
  EXPECT_EQ(Generate("explode(sequence(1, 3)) n").fields, "n int");
  Status two = BindError("explode(m) AS entry");
  EXPECT_EQ(two.error_class(), errors::kUdtfAliasNumberMismatch) << two.ToString();
  EXPECT_NE(two.message().find("2 columns"), std::string::npos) << two.ToString();
}

TEST(GeneratorTest, WrongArgumentsAndNestedGeneratorsAreRefused) {
  EXPECT_EQ(BindError("explode(s)").error_class(), errors::kDatatypeMismatch);
  EXPECT_EQ(BindError("explode(i)").error_class(), errors::kDatatypeMismatch);
  EXPECT_EQ(BindError("inline(arr)").error_class(), errors::kDatatypeMismatch);
  EXPECT_EQ(BindError("inline(m)").error_class(), errors::kDatatypeMismatch);
  EXPECT_EQ(BindError("explode(arr, arr)").error_class(), errors::kWrongNumArgs);
  EXPECT_EQ(BindError("explode()").error_class(), errors::kWrongNumArgs);
  EXPECT_EQ(BindError("explode(array(explode(arr)))").error_class(), errors::kUnsupportedGenerator);
  EXPECT_EQ(BindError("explode(nope)").error_class(), errors::kUnresolvedColumn);
  // Anywhere but as a whole select item, a generator is refused by the binder.
  for (const char* sql : {"explode(arr) IS NULL", "size(explode(arr))", "coalesce(posexplode(arr), 1)"}) {
    EXPECT_EQ(EvalError(sql).error_class(), errors::kUnsupportedGenerator) << sql;
    EXPECT_NE(EvalError(sql).message().find("OUTSIDE_SELECT"), std::string::npos) << sql;
  }
  EXPECT_FALSE(IsGeneratorCall(Expression::Parse("size(explode(arr))").value()));
  EXPECT_TRUE(CallsGenerator(Expression::Parse("size(explode(arr))").value()));
}

}  // namespace
}  // namespace sluice::expr
