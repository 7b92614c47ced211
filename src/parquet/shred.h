// Shredding: turning sluice columns into the definition levels, repetition levels and values of
// Parquet leaf columns (the record shredding of the Dremel paper), one node level at a time over
// whole runs of rows rather than row by row.
#pragma once

#include <cstdint>
#include <vector>

#include "parquet/schema_conversion.h"
#include "sluice/core/column.h"

namespace sluice::parquet {

// The entries of one leaf column for a run of rows.
struct LeafEntries {
  const Column* column = nullptr;   // the leaf's sluice column (a child column when nested)
  std::vector<int16_t> def_levels;  // one per entry
  std::vector<int16_t> rep_levels;  // one per entry
  std::vector<int64_t> value_rows;  // rows of `column` of the entries that carry a value, in order
  void Clear() {
    column = nullptr;
    def_levels.clear();
    rep_levels.clear();
    value_rows.clear();
  }
};

// Reuses its buffers between calls: steady-state shredding allocates nothing. Not synchronized.
class Shredder {
 public:
  // Appends the entries of rows [begin, end) of `column` (whose schema node is `node`, a
  // top-level field) to out[leaf] for every leaf under the node. Returns the first node declared
  // non-nullable that holds a null where its parent is present, or nullptr.
  const SchemaNode* Shred(const SchemaNode& node, const Column& column, int64_t begin, int64_t end,
                          std::vector<LeafEntries>* out);

 private:
  // Positions at one depth: the row of the node's column (or -1 once the position has ended
  // above, at the definition level in def) and the position's repetition level.
  struct Slots {
    std::vector<int64_t> row;
    std::vector<int16_t> def;
    std::vector<int16_t> rep;
    void Clear() {
      row.clear();
      def.clear();
      rep.clear();
    }
  };

  void Visit(const SchemaNode& node, const Column& column, size_t depth, std::vector<LeafEntries>* out);
  void Expand(const SchemaNode& node, const Column& column, size_t depth);
  Slots& At(size_t depth);

  std::vector<Slots> slots_;
  const SchemaNode* violation_ = nullptr;
};

}  // namespace sluice::parquet
