#include "expr/kernel_util.h"

#include <algorithm>
#include <clocale>
#include <cwctype>

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

void AppendUtf8(uint32_t code_point, std::string* out) {
  if (code_point < 0x80) {
    out->push_back(static_cast<char>(code_point));
  } else if (code_point < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (code_point >> 6)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else if (code_point < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (code_point >> 12)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (code_point >> 18)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  }
}

// glibc's C.UTF-8 locale carries the Unicode character tables, so towupper_l/towlower_l give
// Unicode's one-to-one case mappings (what Java's toUpperCase does, minus the few mappings that
// change the length, like ß → SS). Null if the locale is missing: then only ASCII changes case.
static locale_t UnicodeCaseLocale() {
  static locale_t locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(nullptr));
  return locale;
}

// `text` with every character upper- or lower-cased into `out`. Bytes that are not well-formed
// UTF-8 are copied unchanged.
void ChangeCase(std::string_view text, bool upper, std::string* out) {
  out->clear();
  locale_t locale = UnicodeCaseLocale();
  size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    if (lead < 0x80) {
      char c = static_cast<char>(lead);
      if (upper && c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
      if (!upper && c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
      out->push_back(c);
      ++i;
      continue;
    }
    const size_t length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 0;
    bool well_formed = length != 0 && i + length <= text.size() && locale != nullptr;
    uint32_t code_point = length == 4 ? lead & 0x07 : length == 3 ? lead & 0x0F : lead & 0x1F;
    for (size_t k = 1; well_formed && k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      well_formed = (next & 0xC0) == 0x80;
      code_point = (code_point << 6) | (next & 0x3F);
    }
    if (!well_formed) {
      out->push_back(text[i]);
      ++i;
      continue;
    }
    const wint_t mapped = upper ? towupper_l(static_cast<wint_t>(code_point), locale)
                                : towlower_l(static_cast<wint_t>(code_point), locale);
    AppendUtf8(static_cast<uint32_t>(mapped), out);
    i += length;
  }
}

}  // namespace sluice::expr
