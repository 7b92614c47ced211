#include "sluice/expr/generator.h"

#include <fmt/format.h>

#include <array>
#include <string_view>

#include "expr/ast.h"
#include "expr/json_functions.h"
#include "sluice/core/builder.h"
#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"

namespace sluice::expr {
namespace {

struct GeneratorName {
  std::string_view name;
  bool outer;
  bool position;
  bool is_inline;
  bool json_tuple = false;
};

constexpr std::array<GeneratorName, 7> kGenerators = {{
    {"explode", false, false, false},
    {"explode_outer", true, false, false},
    {"posexplode", false, true, false},
    {"posexplode_outer", true, true, false},
    {"inline", false, false, true},
    {"inline_outer", true, false, true},
    {"json_tuple", false, false, false, true},
}};

const GeneratorName* FindGenerator(const Node& node) {
  if (node.kind != NodeKind::kCall) return nullptr;
  // (IsGeneratorFunction below says the same of a name.)
  for (const GeneratorName& g : kGenerators) {
    if (g.name == node.name) return &g;
  }
  return nullptr;
}

bool AnyGenerator(const Node& node) {
  if (FindGenerator(node) != nullptr) return true;
  for (const NodePtr& arg : node.args) {
    if (AnyGenerator(*arg)) return true;
  }
  return false;
}

// `column` with one null row appended: the row the outer forms take for an input without elements.
Result<ColumnPtr> WithNullRow(const ColumnPtr& column) {
  std::array<ColumnPtr, 2> parts = {column, MakeNullColumn(column->type, 1)};
  return Concatenate(parts);
}

}  // namespace

bool IsGeneratorFunction(std::string_view name) {
  for (const GeneratorName& g : kGenerators) {
    if (g.name == name) return true;
  }
  return false;
}

bool IsGeneratorCall(const Expression& expression) { return FindGenerator(expression.node()) != nullptr; }
bool CallsGenerator(const Expression& expression) { return AnyGenerator(expression.node()); }

// json_tuple's binding: its arguments differ from the others' (a JSON string, then field names).
Result<BoundGenerator> BindJsonTuple(const NamedExpression& item, const TypePtr& input_schema, SqlOptions options);

Result<BoundGenerator> BindGenerator(const NamedExpression& item, const TypePtr& input_schema, SqlOptions options) {
  const Node& call = item.expression.node();
  const GeneratorName* name = FindGenerator(call);
  if (name == nullptr) return Status::Error(errors::kInternalError, item.expression.ToSql() + " is no generator");
  if (name->json_tuple) return BindJsonTuple(item, input_schema, options);
  if (call.args.size() != 1) {
    return Status::Error(errors::kWrongNumArgs, fmt::format("{} takes 1 argument, got {} at {}:{}", name->name,
                                                            call.args.size(), call.line, call.column));
  }
  const Expression argument(call.args[0]);
  if (CallsGenerator(argument)) {
    return Status::Error(errors::kUnsupportedGenerator,
                         fmt::format("NESTED_IN_EXPRESSIONS: a generator cannot be nested in an expression, as in {}",
                                     item.expression.ToSql()));
  }
  SLUICE_ASSIGN_OR_RETURN(BoundExpression bound, Bind(argument, input_schema, options));
  const TypePtr& type = bound.result_type();
  BoundGenerator generator;
  generator.outer_ = name->outer;
  generator.position_ = name->position;
  generator.inline_ = name->is_inline;
  if (generator.position_) generator.fields_.push_back(Field{"pos", DataType::Integer(), generator.outer_});
  const bool is_array = type->id() == TypeId::kArray;
  if (name->is_inline) {
    if (!is_array || type->element_type()->id() != TypeId::kStruct) {
      return Status::Error(errors::kDatatypeMismatch, fmt::format("{} takes an array of structs, not {}: {}",
                                                                  name->name, type->ToString(), item.expression.ToSql()));
    }
    for (const Field& field : type->element_type()->fields()) {
      generator.fields_.push_back(Field{field.name, field.type, true});
    }
  } else if (is_array) {
    generator.fields_.push_back(Field{"col", type->element_type(), true});
  } else if (type->id() == TypeId::kMap) {
    generator.fields_.push_back(Field{"key", type->key_type(), generator.outer_});
    generator.fields_.push_back(Field{"value", type->value_type(), true});
  } else {
    return Status::Error(errors::kDatatypeMismatch, fmt::format("{} takes an array or a map, not {}: {}", name->name,
                                                                type->ToString(), item.expression.ToSql()));
  }
  // An alias names the column of a one-column generator (Spark's default name otherwise).
  const bool aliased = item.name != item.expression.ToSql();
  if (aliased) {
    if (generator.fields_.size() != 1) {
      return Status::Error(errors::kUdtfAliasNumberMismatch,
                           fmt::format("{} gives {} columns, which one alias cannot name: {} AS {}", name->name,
                                       generator.fields_.size(), item.expression.ToSql(), item.name));
    }
    generator.fields_[0].name = item.name;
  }
  generator.argument_ = std::move(bound);
  return generator;
}

Result<BoundGenerator> BindJsonTuple(const NamedExpression& item, const TypePtr& input_schema, SqlOptions options) {
  const Node& call = item.expression.node();
  if (call.args.size() < 2) {
    return Status::Error(errors::kWrongNumArgs,
                         fmt::format("json_tuple takes a JSON string and at least one field name, got {} argument(s) "
                                     "at {}:{}",
                                     call.args.size(), call.line, call.column));
  }
  const Expression json(call.args[0]);
  if (CallsGenerator(json)) {
    return Status::Error(errors::kUnsupportedGenerator,
                         "NESTED_IN_EXPRESSIONS: a generator cannot be nested in an expression, as in " +
                             item.expression.ToSql());
  }
  SLUICE_ASSIGN_OR_RETURN(BoundExpression bound, Bind(json, input_schema, options));
  if (bound.result_type()->id() != TypeId::kString) {
    return Status::Error(errors::kDatatypeMismatch, fmt::format("json_tuple reads a string, not {}: {}",
                                                                bound.result_type()->ToString(), item.expression.ToSql()));
  }
  BoundGenerator generator;
  generator.json_tuple_ = true;
  for (size_t i = 1; i < call.args.size(); ++i) {
    const Node& field = *call.args[i];
    if (field.kind != NodeKind::kLiteral || field.literal.type == nullptr ||
        field.literal.type->id() != TypeId::kString) {
      return Status::Error(errors::kDatatypeMismatch,
                           fmt::format("json_tuple's field names are string literals; argument {} is {}", i + 1,
                                       PrintSql(field)));
    }
    generator.json_fields_.push_back(field.literal.text);
    generator.fields_.push_back(Field{"c" + std::to_string(i - 1), DataType::String(), true});
  }
  if (item.name != item.expression.ToSql() && generator.fields_.size() == 1) generator.fields_[0].name = item.name;
  if (item.name != item.expression.ToSql() && generator.fields_.size() > 1) {
    return Status::Error(errors::kUdtfAliasNumberMismatch,
                         fmt::format("json_tuple gives {} columns, which one alias cannot name: {} AS {}",
                                     generator.fields_.size(), item.expression.ToSql(), item.name));
  }
  generator.argument_ = std::move(bound);
  return generator;
}

Result<GeneratedRows> BoundGenerator::Generate(const RecordBatch& batch, int64_t now_micros, int64_t first_row) const {
  SLUICE_ASSIGN_OR_RETURN(ColumnPtr values, argument_->Evaluate(batch, now_micros, first_row));
  GeneratedRows out;
  if (json_tuple_) {
    // One row for every input row, as Spark's json_tuple gives.
    out.parents.resize(static_cast<size_t>(values->length));
    for (int64_t row = 0; row < values->length; ++row) out.parents[static_cast<size_t>(row)] = row;
    out.columns = JsonTupleColumns(values, json_fields_);
    return out;
  }
  std::vector<int64_t> elements;  // into the list's children; -1: the outer form's row of nulls
  std::vector<int32_t> positions;
  bool any_null_row = false;
  for (int64_t row = 0; row < values->length; ++row) {
    const int64_t begin = values->IsNull(row) ? 0 : values->offsets[row];
    const int64_t end = values->IsNull(row) ? 0 : values->offsets[row + 1];
    if (begin == end) {
      if (!outer_) continue;
      out.parents.push_back(row);
      elements.push_back(-1);
      positions.push_back(-1);
      any_null_row = true;
      continue;
    }
    for (int64_t e = begin; e < end; ++e) {
      out.parents.push_back(row);
      elements.push_back(e);
      positions.push_back(static_cast<int32_t>(e - begin));
    }
  }
  std::vector<ColumnPtr> sources = values->children;  // array: elements; map: keys, values
  if (inline_) sources = sources[0]->children;
  if (any_null_row && !sources.empty()) {
    // Every source has one row per element, so the appended null row has one index in all.
    const int64_t null_row = sources[0]->length;
    for (int64_t& e : elements) {
      if (e < 0) e = null_row;
    }
    for (ColumnPtr& source : sources) {
      SLUICE_ASSIGN_OR_RETURN(source, WithNullRow(source));
    }
  }
  if (position_) {
    Int32Builder pos(DataType::Integer());
    for (int32_t p : positions) {
      if (p < 0) {
        pos.AppendNull();
      } else {
        pos.Append(p);
      }
    }
    out.columns.push_back(pos.Finish());
  }
  for (const ColumnPtr& source : sources) out.columns.push_back(Take(source, elements));
  return out;
}

}  // namespace sluice::expr
