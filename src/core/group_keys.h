// The keys of a stateful operator (an aggregation's groups, a deduplication's seen rows): each
// distinct key gets a dense id 0, 1, ... in order of first appearance, and its values are kept to
// be given back as columns. Keys are equal as Spark groups values: NULL equals NULL, NaN equals
// NaN, -0.0 equals 0.0 (and the kept value is 0.0). Internal to the layers above core (the
// engine's aggregation and deduplication, the Delta layer's MERGE join); not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sluice/core/column.h"
#include "sluice/core/record_batch.h"
#include "sluice/core/status.h"

namespace sluice {

// The bytes of row `row` of `column` appended to `out`: equal for values Spark groups together.
void AppendKey(const Column& column, int64_t row, std::string* out);

class GroupTable;

class GroupKeys {
 public:
  // `key_schema`: the key columns' fields (a struct; no fields: one key, present from the start).
  explicit GroupKeys(TypePtr key_schema);
  ~GroupKeys();

  // No keys (or the one empty key).
  void Clear();
  int64_t size() const;
  // The id of each of the `n` rows' keys (`keys`: one column per key field) in `groups`, new keys
  // added; `new_rows` gets the rows whose key was new, in order.
  Status Assign(const std::vector<ColumnPtr>& keys, int64_t n, std::vector<int32_t>* groups,
                std::vector<int64_t>* new_rows);
  // The id of each of the `n` rows' keys in `groups`, or -1 for a key not in the table; nothing
  // is added. A row whose key holds a NULL finds the NULL key, as in grouping.
  Status Find(const std::vector<ColumnPtr>& keys, int64_t n, std::vector<int32_t>* groups) const;
  // The key columns of `groups`, appended to `columns`.
  Status Append(const std::vector<int64_t>& groups, std::vector<ColumnPtr>* columns);
  int64_t memory_bytes() const;

 private:
  TypePtr key_schema_;
  std::unique_ptr<GroupTable> table_;
  std::vector<std::vector<ColumnPtr>> chunks_;  // per key column: the keys' values, in id order
};

}  // namespace sluice
