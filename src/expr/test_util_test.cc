// The sample batch shared by the expr tests, and the helpers that evaluate against it.
#include "expr/test_util.h"

#include <cmath>

namespace sluice::expr::testing {

BatchPtr SampleBatch() {
  static BatchPtr batch = [] {
    TypePtr user = *DataType::Struct({{"email", DataType::String()}});
    TypePtr value = *DataType::Struct({{"event_type", DataType::String()}, {"amount", DataType::Double()}, {"user", user}});
    TypePtr dec = *DataType::Decimal(10, 2);
    TypePtr arr = DataType::Array(DataType::Integer());
    TypePtr map = DataType::Map(DataType::String(), DataType::Integer());

    StructBuilder value_builder(value);
    auto* event_type = static_cast<BinaryBuilder*>(value_builder.field_builder(0));
    auto* amount = static_cast<DoubleBuilder*>(value_builder.field_builder(1));
    auto* user_builder = static_cast<StructBuilder*>(value_builder.field_builder(2));
    auto* email = static_cast<BinaryBuilder*>(user_builder->field_builder(0));
    event_type->Append("transaction"), amount->Append(12.5), email->Append("a@x.io"), user_builder->Append(), value_builder.Append();
    event_type->Append("refund"), amount->Append(3.0), email->AppendNull(), user_builder->Append(), value_builder.Append();
    value_builder.AppendNull();
    event_type->Append("transaction"), amount->Append(9.99), email->Append("d@x.io"), user_builder->Append(), value_builder.Append();

    ListBuilder arr_builder(arr);
    auto* elements = static_cast<Int32Builder*>(arr_builder.element_builder());
    elements->Append(1), elements->Append(2), elements->Append(3), arr_builder.Append();
    arr_builder.Append();
    arr_builder.AppendNull();
    elements->AppendNull(), elements->Append(5), arr_builder.Append();

    ListBuilder map_builder(map);
    auto* keys = static_cast<BinaryBuilder*>(map_builder.key_builder());
    auto* values = static_cast<Int32Builder*>(map_builder.value_builder());
    keys->Append("a"), values->Append(1), keys->Append("b"), values->Append(2), map_builder.Append();
    map_builder.Append();
    map_builder.AppendNull();
    keys->Append("c"), values->AppendNull(), map_builder.Append();

    constexpr int64_t kDay = 86'400'000'000LL;
    std::vector<Field> fields = {
        {"i", DataType::Integer()}, {"l", DataType::Long()},  {"d", DataType::Double()},   {"s", DataType::String()},
        {"b", DataType::Boolean()}, {"dec", dec},             {"dt", DataType::Date()},    {"ts", DataType::Timestamp()},
        {"value", value},           {"arr", arr},             {"m", map},                  {"js", DataType::String()},
        {"weird name", DataType::Integer()}};
    std::vector<ColumnPtr> columns = {
        Fixed<int32_t>(DataType::Integer(), {1, 2, std::nullopt, -4}),
        Fixed<int64_t>(DataType::Long(), {10, std::nullopt, 30, 40}),
        Fixed<double>(DataType::Double(), {1.5, -2.0, std::nullopt, std::nan("")}),
        Strings({"apple", "Banana", std::nullopt, ""}),
        Fixed<uint8_t>(DataType::Boolean(), {1, 0, std::nullopt, 1}),
        Fixed<int128_t>(dec, {150, -225, std::nullopt, 10000}),
        Fixed<int32_t>(DataType::Date(), {20484, std::nullopt, 19782, -1}),
        Fixed<int64_t>(DataType::Timestamp(), {20484 * kDay + 37815500000LL, std::nullopt, 19782 * kDay, -1000000}),
        value_builder.Finish(),
        arr_builder.Finish(),
        map_builder.Finish(),
        Strings({R"({"a": {"b": [10, 20]}, "s": "x"})", R"({"a": 1})", std::nullopt, "not json"}),
        Fixed<int32_t>(DataType::Integer(), {7, 8, 9, 10}),
    };
    return *RecordBatch::Make(*DataType::Struct(fields), columns, 4);
  }();
  return batch;
}

namespace {
thread_local bool non_ansi = false;
}  // namespace

SqlOptions CurrentOptions() { return SqlOptions{.ansi = !non_ansi}; }
NonAnsiMode::NonAnsiMode() { non_ansi = true; }
NonAnsiMode::~NonAnsiMode() { non_ansi = false; }

std::vector<std::string> Eval(const std::string& sql, const BatchPtr& batch) {
  auto parsed = Expression::Parse(sql);
  if (!parsed.ok()) {
    ADD_FAILURE() << sql << ": " << parsed.status().ToString();
    return {};
  }
  auto bound = Bind(*parsed, batch->schema(), CurrentOptions());
  if (!bound.ok()) {
    ADD_FAILURE() << sql << ": " << bound.status().ToString();
    return {};
  }
  auto result = bound->Evaluate(*batch);
  if (!result.ok()) {
    ADD_FAILURE() << sql << ": " << result.status().ToString();
    return {};
  }
  Status valid = (*result)->Validate();
  EXPECT_TRUE(valid.ok()) << sql << ": " << valid.ToString();
  EXPECT_TRUE((*result)->type->Equals(*bound->result_type())) << sql;
  return Render(**result);
}

Status EvalError(const std::string& sql, const BatchPtr& batch) {
  SLUICE_ASSIGN_OR_RETURN(Expression parsed, Expression::Parse(sql));
  SLUICE_ASSIGN_OR_RETURN(BoundExpression bound, Bind(parsed, batch->schema(), CurrentOptions()));
  SLUICE_ASSIGN_OR_RETURN(ColumnPtr result, bound.Evaluate(*batch));
  return Status::OK();
}

std::string TypeOf(const std::string& sql, const BatchPtr& batch) {
  auto parsed = Expression::Parse(sql);
  if (!parsed.ok()) return parsed.status().ToString();
  auto bound = Bind(*parsed, batch->schema(), CurrentOptions());
  if (!bound.ok()) return bound.status().ToString();
  return bound->result_type()->ToString();
}

}  // namespace sluice::expr::testing
