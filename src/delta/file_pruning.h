// Which data files of a table can hold rows that pass a filter, judged without reading them:
// from each file's partition values and from the min/max statistics in its `add.stats`.
//
// The filter is split at its top-level ANDs. A conjunct that reads only partition columns is
// evaluated on the file's partition values. A conjunct comparing one data column with a constant
// (`amount > 10`, `day = DATE '2026-01-31'`) is checked against the column's bounds. Everything
// else (OR across columns, functions of data columns, missing statistics) keeps the file: pruning
// only ever skips files that certainly hold no passing row, so the scan still filters the rows.
//
// Bounds are used conservatively: timestamps' millisecond bounds are widened by a millisecond,
// long strings' maximum only when it carries the cut marker sluice writes (other writers may cut
// it without one), floating-point maximums never (NaN is greater than every number in Spark SQL
// and statistics leave it out), decimals never (their bounds are JSON numbers that a double
// cannot hold exactly).
//
// Internal to the delta layer. A FilePruner is immutable and thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/column.h"

#include "sluice/core/status.h"
#include "sluice/core/types.h"
#include "sluice/delta/actions.h"
#include "sluice/expr/expression.h"

namespace sluice::delta {

class FilePruner {
 public:
  // `filter` must bind to `table_schema` as a predicate (the errors of expr::BindPredicate).
  // `table_schema` is the table's, with column mapping metadata: statistics and partition values
  // are looked up by physical names.
  static Result<FilePruner> Make(const expr::Expression& filter, const TypePtr& table_schema,
                                 const std::vector<std::string>& partition_columns);

  // False only when no row of `file` can pass the filter.
  bool MayMatch(const AddFile& file) const;

 private:
  // A conjunct over partition columns only, bound to a schema of just those columns.
  struct PartitionTest {
    std::vector<Field> fields;
    std::vector<std::string> physical_names;  // of fields: the keys of add.partitionValues
    TypePtr schema;
    expr::BoundExpression predicate;
  };
  // A column-constant comparison, as predicates that must hold for the column's minimum
  // (`c <= k` for `c = k`, `c < k` ...) or maximum (`c >= k`, `c > k` ...) when any row passes.
  struct BoundsTest {
    std::string stats_pointer;  // JSON pointer of the column below minValues / maxValues
    TypePtr type;
    TypePtr schema;  // struct<bound: type>
    std::optional<expr::BoundExpression> on_min;
    std::optional<expr::BoundExpression> on_max;
  };

  bool PassesPartitionTest(const PartitionTest& test, const AddFile& file) const;

  std::vector<PartitionTest> partition_tests_;
  std::vector<BoundsTest> bounds_tests_;
};

// The distinct non-null values of a join key column, sorted, to rule out files none of whose rows
// can hold one of them: a file's partition value (for a partition column) or the range of its
// minValues/maxValues must contain one of the values. Bounds are used as FilePruner uses them
// (a string maximum cut at 32 characters only with sluice's marker). Immutable once made.
class KeyValues {
 public:
  // nullopt unless the column is of an integer type (byte, short, int, long), date or string.
  static std::optional<KeyValues> Of(const Column& column);

  // False only when `file` certainly holds none of the values in the column at `path` (physical
  // names, column_mapping.h PhysicalPath; one name for a partition column).
  bool MayBeIn(const AddFile& file, const std::vector<std::string>& path) const;

 private:
  // A partition value or statistics bound as a number (an integer, or a date's day number).
  std::optional<int64_t> NumberOf(std::string_view text) const;

  bool numeric_ = false;  // integers and dates, as numbers_
  bool dates_ = false;
  std::vector<int64_t> numbers_;
  std::vector<std::string> texts_;
};

}  // namespace sluice::delta
