// Deduplication: Spark's dropDuplicates(columns) over a stream. A row passes when no earlier row
// of the query (in this batch or any before, as the state says) had its key; the keys seen are the
// operator's state, kept for the life of the query (no watermark bounds them yet): in memory, or,
// given a StateBacking (the rocksdb state store), only the batch's keys, a key new to memory
// looked up in the backing.
//
//   SLUICE_ASSIGN_OR_RETURN(auto dedup, Deduplication::Make({"id", "value.user"}, schema, {}));
//   SLUICE_ASSIGN_OR_RETURN(BatchPtr first_seen, dedup->Filter(piece));
//
// Keys are equal as Spark compares them for grouping (NULL equals NULL, NaN equals NaN). Not
// thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sluice/core/record_batch.h"
#include "sluice/core/status.h"
#include "sluice/engine/stateful_operator.h"
#include "sluice/expr/expression.h"

namespace sluice {
class GroupKeys;
}  // namespace sluice

namespace sluice::engine {


class Deduplication final : public StatefulOperator {
 public:
  // `columns` name the key: columns, dot paths into structs, or any expression of a row, bound to
  // `schema` (UNRESOLVED_COLUMN and the expression errors otherwise; INVALID_ARGUMENT for none).
  static Result<std::unique_ptr<Deduplication>> Make(const std::vector<std::string>& columns, const TypePtr& schema,
                                                     expr::SqlOptions options);
  ~Deduplication() override;

  // The rows of `rows` (of the schema bound to) whose key is new, in order.
  Result<BatchPtr> Filter(const BatchPtr& rows);

  std::string_view name() const override { return "dedupe"; }
  const TypePtr& state_schema() const override { return state_schema_; }
  int num_key_columns() const override { return state_schema_->num_fields(); }
  Result<BatchPtr> State() override;
  Result<BatchPtr> ChangedState() override;
  Status Load(const RecordBatch& state) override;
  void ClearChanges() override { changed_from_ = num_rows(); }
  void Reset() override;
  int64_t num_rows() const override;
  int64_t num_changed() const override;
  int64_t memory_bytes() const override;

 private:
  Deduplication(std::vector<expr::BoundExpression> keys, TypePtr state_schema);
  // The ids of the keys added since ClearChanges() that the backing did not hold.
  std::vector<int64_t> ChangedIds() const;
  Result<BatchPtr> Keys(const std::vector<int64_t>& ids);

  std::vector<expr::BoundExpression> keys_;
  TypePtr state_schema_;
  std::unique_ptr<GroupKeys> seen_;
  int64_t changed_from_ = 0;  // keys from this id on are new since ClearChanges()
  std::vector<uint8_t> stored_;  // by id: the backing held the key (it is not a change)
};

}  // namespace sluice::engine
