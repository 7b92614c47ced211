#include "parquet/shred.h"

namespace sluice::parquet {

Shredder::Slots& Shredder::At(size_t depth) {
  if (slots_.size() <= depth) slots_.resize(depth + 1);
  return slots_[depth];
}

const SchemaNode* Shredder::Shred(const SchemaNode& node, const Column& column, int64_t begin, int64_t end,
                                  std::vector<LeafEntries>* out) {
  violation_ = nullptr;
  Slots& s = At(0);
  s.Clear();
  int64_t n = end - begin;
  s.row.resize(n);
  s.def.assign(n, 0);
  s.rep.assign(n, 0);
  for (int64_t i = 0; i < n; ++i) s.row[i] = begin + i;
  Visit(node, column, 0, out);
  return violation_;
}

// Lists and maps: one position per entry of a present, non-empty list; an empty list keeps one
// position that ends at the list's definition level.
void Shredder::Expand(const SchemaNode& node, const Column& column, size_t depth) {
  Slots& out = At(depth + 1);  // first: At() may move the slots, so take `in` after it
  const Slots& in = slots_[depth];
  out.Clear();
  int16_t continued_rep = node.children[0].repetition_level;
  for (size_t i = 0; i < in.row.size(); ++i) {
    int64_t row = in.row[i];
    if (row < 0) {
      out.row.push_back(-1);
      out.def.push_back(in.def[i]);
      out.rep.push_back(in.rep[i]);
      continue;
    }
    int64_t b = column.offsets[row], e = column.offsets[row + 1];
    if (b == e) {
      out.row.push_back(-1);
      out.def.push_back(node.definition_level);
      out.rep.push_back(in.rep[i]);
      continue;
    }
    for (int64_t k = b; k < e; ++k) {
      out.row.push_back(k);
      out.def.push_back(node.element_definition_level);
      out.rep.push_back(k == b ? in.rep[i] : continued_rep);
    }
  }
}

void Shredder::Visit(const SchemaNode& node, const Column& column, size_t depth, std::vector<LeafEntries>* out) {
  {
    Slots& s = slots_[depth];
    const bool has_nulls = column.null_count > 0;
    for (size_t i = 0; i < s.row.size(); ++i) {
      int64_t row = s.row[i];
      if (row < 0) continue;
      if (has_nulls && column.IsNull(row)) {
        if (!node.nullable) {
          if (violation_ == nullptr) violation_ = &node;
          s.def[i] = node.definition_level;  // keeps the levels consistent; the write fails anyway
          s.row[i] = -1;
          continue;
        }
        s.def[i] = static_cast<int16_t>(node.definition_level - 1);
        s.row[i] = -1;
      } else {
        s.def[i] = node.definition_level;
      }
    }
  }

  switch (node.type->id()) {
    case TypeId::kStruct:
      for (size_t c = 0; c < node.children.size(); ++c) {
        Slots& child = At(depth + 1);
        child = slots_[depth];
        Visit(node.children[c], *column.children[c], depth + 1, out);
      }
      return;
    case TypeId::kArray:
      Expand(node, column, depth);
      Visit(node.children[0], *column.children[0], depth + 1, out);
      return;
    case TypeId::kMap:
      Expand(node, column, depth);
      Visit(node.children[0], *column.children[0], depth + 1, out);
      Expand(node, column, depth);
      Visit(node.children[1], *column.children[1], depth + 1, out);
      return;
    default: {
      const Slots& s = slots_[depth];
      LeafEntries& leaf = (*out)[node.leaf];
      leaf.column = &column;
      leaf.def_levels.insert(leaf.def_levels.end(), s.def.begin(), s.def.end());
      leaf.rep_levels.insert(leaf.rep_levels.end(), s.rep.begin(), s.rep.end());
      for (int64_t row : s.row) {
        if (row >= 0) leaf.value_rows.push_back(row);
      }
      return;
    }
  }
}

}  // namespace sluice::parquet
