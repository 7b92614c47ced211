#include "parquet/record_assembly.h"

#include <cstring>

namespace sluice::parquet {
namespace {

int FirstLeaf(const SchemaNode& node) { return node.leaf >= 0 ? node.leaf : FirstLeaf(node.children[0]); }

// Definition / repetition level of an entry; an absent level array means every entry is at 0
// (repetition) or at the maximum (definition).
struct Levels {
  const int16_t* def;
  const int16_t* rep;
  int64_t n;
  int16_t max_def;
  int16_t Def(int64_t i) const { return def ? def[i] : max_def; }
  int16_t Rep(int64_t i) const { return rep ? rep[i] : 0; }
};

Levels LevelsOf(const LeafData& data, int16_t max_def) {
  return Levels{data.def_levels.empty() ? nullptr : data.def_levels.data(),
                data.rep_levels.empty() ? nullptr : data.rep_levels.data(), data.num_entries, max_def};
}

Status ShapeMismatch(const SchemaNode& node) {
  return CorruptData("the columns under " + node.name + " disagree about its number of values");
}

class Assembler {
 public:
  explicit Assembler(std::vector<LeafData>& leaves) : leaves_(leaves) {}

  Result<ColumnPtr> Build(const SchemaNode& node, int16_t exists_at) {
    if (node.leaf >= 0) return BuildLeaf(node, exists_at);
    if (node.type->id() == TypeId::kStruct) return BuildStruct(node, exists_at);
    return BuildList(node, exists_at);
  }

 private:
  Levels FirstLeafLevels(const SchemaNode& node) {
    const int leaf = FirstLeaf(node);
    return LevelsOf(leaves_[leaf], MaxDef(node));
  }
  // The maximum definition level of the node's first leaf: the deepest definition_level on the
  // path to it.
  static int16_t MaxDef(const SchemaNode& node) {
    return node.leaf >= 0 ? node.definition_level : MaxDef(node.children[0]);
  }

  Result<ColumnPtr> BuildLeaf(const SchemaNode& node, int16_t exists_at) {
    LeafData& data = leaves_[node.leaf];
    const Levels levels = LevelsOf(data, node.definition_level);
    auto column = std::make_shared<Column>();
    column->type = node.type;
    const int width = node.type->byte_width();
    if (!levels.def) {
      // Required all the way down: one value per entry.
      if (data.num_values != data.num_entries) return ShapeMismatch(node);
      column->length = data.num_entries;
      column->data = std::move(data.data);
      if (width == 0) column->offsets = std::move(data.offsets);
      return ColumnPtr(std::move(column));
    }
    // Rows and their validity in one pass over the levels.
    std::vector<uint8_t> validity;
    validity.reserve(static_cast<size_t>(levels.n));
    int64_t nulls = 0;
    for (int64_t i = 0; i < levels.n; ++i) {
      const int16_t def = levels.def[i];
      if (def < exists_at) continue;
      const bool valid = def >= node.definition_level;
      validity.push_back(valid);
      nulls += !valid;
    }
    const int64_t length = static_cast<int64_t>(validity.size());
    if (length - nulls != data.num_values) return ShapeMismatch(node);
    column->length = length;
    column->null_count = nulls;
    if (width == 0) {
      // Bytes stay where they are; only the offsets are spread over the rows.
      column->offsets.resize(static_cast<size_t>(length) + 1);
      column->offsets[0] = 0;
      int64_t value = 0;
      for (int64_t row = 0; row < length; ++row) {
        if (validity[row]) ++value;
        column->offsets[row + 1] = data.offsets[value];
      }
      column->data = std::move(data.data);
    } else {
      // Spread the dense values over the rows in place, from the back.
      std::vector<uint8_t>& values = data.data;
      values.resize(static_cast<size_t>(length) * width);
      int64_t value = data.num_values;
      for (int64_t row = length - 1; row >= 0 && value < row + 1; --row) {
        uint8_t* dst = values.data() + row * width;
        if (validity[row]) {
          --value;
          std::memmove(dst, values.data() + value * width, width);
        } else {
          std::memset(dst, 0, width);
        }
      }
      column->data = std::move(values);
    }
    if (nulls > 0) column->validity = std::move(validity);
    return ColumnPtr(std::move(column));
  }

  Result<ColumnPtr> BuildStruct(const SchemaNode& node, int16_t exists_at) {
    const Levels levels = FirstLeafLevels(node);
    auto column = std::make_shared<Column>();
    column->type = node.type;
    std::vector<uint8_t> validity;
    int64_t nulls = 0;
    for (int64_t i = 0; i < levels.n; ++i) {
      const int16_t def = levels.Def(i);
      if (def < exists_at || levels.Rep(i) > node.repetition_level) continue;
      const bool valid = def >= node.definition_level;
      validity.push_back(valid);
      nulls += !valid;
    }
    column->length = static_cast<int64_t>(validity.size());
    column->null_count = nulls;
    if (nulls > 0) column->validity = std::move(validity);
    for (const SchemaNode& child : node.children) {
      SLUICE_ASSIGN_OR_RETURN(ColumnPtr built, Build(child, exists_at));
      if (built->length != column->length) return ShapeMismatch(node);
      column->children.push_back(std::move(built));
    }
    return ColumnPtr(std::move(column));
  }

  // Arrays and maps.
  Result<ColumnPtr> BuildList(const SchemaNode& node, int16_t exists_at) {
    const Levels levels = FirstLeafLevels(node);
    auto column = std::make_shared<Column>();
    column->type = node.type;
    std::vector<uint8_t> validity;
    int64_t nulls = 0;
    int64_t elements = 0;
    const int16_t element_rep = static_cast<int16_t>(node.repetition_level + 1);
    for (int64_t i = 0; i < levels.n; ++i) {
      const int16_t def = levels.Def(i);
      const int16_t rep = levels.Rep(i);
      if (rep <= node.repetition_level && def >= exists_at) {
        column->offsets.push_back(elements);
        const bool valid = def >= node.definition_level;
        validity.push_back(valid);
        nulls += !valid;
      }
      if (rep <= element_rep && def >= node.element_definition_level) {
        if (column->offsets.empty()) return CorruptData("list element before its list in " + node.name);
        ++elements;
      }
    }
    column->offsets.push_back(elements);
    column->length = static_cast<int64_t>(validity.size());
    column->null_count = nulls;
    if (nulls > 0) column->validity = std::move(validity);
    for (const SchemaNode& child : node.children) {
      SLUICE_ASSIGN_OR_RETURN(ColumnPtr built, Build(child, node.element_definition_level));
      if (built->length != elements) return ShapeMismatch(node);
      column->children.push_back(std::move(built));
    }
    return ColumnPtr(std::move(column));
  }

  std::vector<LeafData>& leaves_;
};

}  // namespace

Result<ColumnPtr> AssembleColumn(const SchemaNode& node, std::vector<LeafData>& leaves, int64_t num_rows) {
  Assembler assembler(leaves);
  SLUICE_ASSIGN_OR_RETURN(ColumnPtr column, assembler.Build(node, 0));
  if (column->length != num_rows) {
    return CorruptData("column " + node.name + " has " + std::to_string(column->length) + " rows, its row group " +
                       std::to_string(num_rows));
  }
  return column;
}

}  // namespace sluice::parquet
