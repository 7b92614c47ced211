// The operators a flow's SQL makes (engine/operator.h): WHERE, the SELECT list, GROUP BY with its
// aggregates and HAVING, and dropDuplicates. Each evaluates its expressions at the batch's time
// (BatchStart::timestamp_micros) and labels its binding errors with `context` (as "flow 'f'
// where"). Not thread-safe, as every operator.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sluice/engine/deduplication.h"
#include "sluice/engine/hash_aggregation.h"
#include "sluice/engine/operator.h"
#include "sluice/engine/sink.h"
#include "sluice/expr/expression.h"
#include "sluice/expr/generator.h"
#include "sluice/expr/select.h"

namespace sluice::engine {

// The rows for which `condition` is TRUE.
class FilterOperator final : public Operator {
 public:
  FilterOperator(expr::Expression condition, expr::SqlOptions sql, std::string context);
  std::string_view name() const override { return "filter"; }
  Result<TypePtr> Bind(const TypePtr& input) override;
  Status BeginBatch(const BatchStart& batch) override;
  Result<BatchPtr> Push(const BatchStart& batch, const BatchPtr& piece) override;

 private:
  expr::Expression condition_;
  expr::SqlOptions sql_;
  std::string context_;
  std::optional<expr::BoundExpression> bound_;
  // Kept across pieces so that filtering touches no fresh memory once it has grown.
  std::vector<int64_t> selection_;
  int64_t batch_rows_ = 0;  // rows of the batch's pieces so far: the next piece's first row number
};

// One column per item, named as the item says. INVALID_SCHEMA for two items of one name. An item
// that calls a generator (explode, posexplode, inline and their _outer forms; expr/generator.h)
// gives its columns in its place and several rows per input row, the other items repeated on each;
// several generators multiply, each applied to the rows the ones before it gave (as Spark 4).
class ProjectOperator final : public Operator {
 public:
  ProjectOperator(std::vector<expr::NamedExpression> items, expr::SqlOptions sql, std::string context);
  std::string_view name() const override { return generates_ ? "generate" : "project"; }
  Result<TypePtr> Bind(const TypePtr& input) override;
  Status BeginBatch(const BatchStart& batch) override;
  Result<BatchPtr> Push(const BatchStart& batch, const BatchPtr& piece) override;

 private:
  std::vector<expr::NamedExpression> items_;
  expr::SqlOptions sql_;
  std::string context_;
  bool generates_ = false;  // an item calls a generator
  // Per item, in order: its expression, or (for an item calling a generator) its generator.
  struct BoundItem {
    std::optional<expr::BoundExpression> expression;
    std::optional<expr::BoundGenerator> generator;
  };
  std::vector<BoundItem> bound_;
  // The output batch of the items' columns (an item may have several: a generator's).
  Result<BatchPtr> Assemble(std::vector<std::vector<ColumnPtr>> columns, int64_t length) const;
  TypePtr output_schema_;
  int64_t batch_rows_ = 0;  // rows of the batch's pieces so far: the next piece's first row number
};

// An aggregating SELECT (GROUP BY, aggregates, HAVING; its WHERE is a FilterOperator before it):
// pieces go into the groups, which it gives at the end of each batch as `mode` says (update: the
// groups the batch changed; complete: every group).
class AggregateOperator final : public Operator {
 public:
  AggregateOperator(expr::SelectStatement statement, OutputMode mode, expr::SqlOptions sql, std::string context);
  std::string_view name() const override { return "aggregate"; }
  Result<TypePtr> Bind(const TypePtr& input) override;
  Status BeginBatch(const BatchStart& batch) override;
  Result<BatchPtr> Push(const BatchStart& batch, const BatchPtr& piece) override;
  Result<BatchPtr> Finish(const BatchStart& batch) override;
  bool aggregates() const override { return true; }
  bool keeps_state() const override { return true; }
  StatefulOperator* state() override { return groups_.get(); }

 private:
  expr::SelectStatement statement_;
  OutputMode mode_;
  expr::SqlOptions sql_;
  std::string context_;
  std::unique_ptr<HashAggregation> groups_;
  BatchPtr no_rows_;  // of the output schema
};

// Spark's dropDuplicates(columns): the rows whose key no earlier row of the query had.
class DeduplicateOperator final : public Operator {
 public:
  DeduplicateOperator(std::vector<std::string> columns, expr::SqlOptions sql, std::string context);
  std::string_view name() const override { return "dedupe"; }
  Result<TypePtr> Bind(const TypePtr& input) override;
  Result<BatchPtr> Push(const BatchStart& /*batch*/, const BatchPtr& piece) override { return seen_->Filter(piece); }
  bool keeps_state() const override { return true; }
  StatefulOperator* state() override { return seen_.get(); }

 private:
  std::vector<std::string> columns_;
  expr::SqlOptions sql_;
  std::string context_;
  std::unique_ptr<Deduplication> seen_;
};

}  // namespace sluice::engine
