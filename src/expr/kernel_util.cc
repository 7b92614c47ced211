#include "expr/kernel_util.h"

#include <algorithm>

#include "sluice/core/compute.h"

namespace sluice::expr {

std::shared_ptr<Column> NewFixedColumn(const TypePtr& type, int64_t rows) {
  auto column = std::make_shared<Column>();
  column->type = type;
  column->length = rows;
  column->data.assign(static_cast<size_t>(rows * type->byte_width()), 0);
  return column;
}

ColumnPtr GatherChild(const ColumnPtr& source, const TypePtr& type, std::vector<int64_t> indices) {
  std::vector<ColumnPtr> parts{source, MakeNullColumn(type, 1)};
  ColumnPtr all = Concatenate(parts).value_or(nullptr);
  for (int64_t& index : indices) {
    if (index < 0) index = source->length;
  }
  return Take(all, indices);
}

std::vector<uint8_t> CombinedValidity(const std::vector<Datum>& inputs, int64_t rows) {
  std::vector<uint8_t> validity;
  for (const Datum& d : inputs) {
    if (d.column->validity.empty()) continue;
    if (d.scalar) {
      if (d.column->validity[0] == 0) validity.assign(static_cast<size_t>(rows), 0);
      continue;
    }
    const uint8_t* v = d.column->validity.data() + d.offset;
    if (validity.empty()) {
      validity.assign(v, v + rows);
    } else {
      uint8_t* out = validity.data();
      for (int64_t i = 0; i < rows; ++i) out[i] &= v[i];
    }
  }
  return validity;
}

void SetValidity(Column* column, std::vector<uint8_t> validity) {
  if (validity.empty()) {
    column->validity.clear();
    column->null_count = 0;
    return;
  }
  int64_t valid = 0;
  for (uint8_t v : validity) valid += v;
  column->null_count = column->length - valid;
  if (column->null_count == 0) {
    column->validity.clear();
  } else {
    column->validity = std::move(validity);
  }
}

Datum ArrayOf(const TypePtr& type, std::vector<int64_t> offsets, ColumnPtr elements, std::vector<uint8_t> validity) {
  auto out = std::make_shared<Column>();
  out->type = type;
  out->length = static_cast<int64_t>(offsets.size()) - 1;
  out->offsets = std::move(offsets);
  out->children.push_back(std::move(elements));
  SetValidity(out.get(), std::move(validity));
  return Datum{out, false};
}

Datum GatherListBuilder::Make(const TypePtr& type, const std::vector<ColumnPtr>& sources) {
  auto out = std::make_shared<Column>();
  out->type = type;
  out->length = static_cast<int64_t>(offsets_.size()) - 1;
  out->offsets = std::move(offsets_);
  if (sources.size() == 1) {
    out->children.push_back(GatherChild(sources[0], type->element_type(), std::move(indices_)));
  } else {
    out->children.push_back(GatherChild(sources[0], type->key_type(), indices_));
    out->children.push_back(GatherChild(sources[1], type->value_type(), std::move(indices_)));
  }
  SetValidity(out.get(), std::move(validity_));
  return Datum{out, false};
}

}  // namespace sluice::expr
