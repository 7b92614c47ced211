#include "expr/kernel_util.h"

#include <algorithm>

#include <unicode/ucasemap.h>

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

namespace {

// Runs one of ICU's UTF-8 case mappings of `text` into `out`, growing it when the result is longer.
template <typename Mapping>
void MapCase(Mapping mapping, std::string_view text, std::string* out) {
  out->resize(text.size() + 16);
  for (;;) {
    UErrorCode error = U_ZERO_ERROR;
    const int32_t length = mapping(out->data(), static_cast<int32_t>(out->size()), text.data(),
                                   static_cast<int32_t>(text.size()), &error);
    if (error == U_BUFFER_OVERFLOW_ERROR) {
      out->resize(static_cast<size_t>(length));
      continue;
    }
    // Mapping well-formed text cannot fail otherwise (ill-formed bytes are copied unchanged).
    out->resize(U_SUCCESS(error) ? static_cast<size_t>(length) : 0);
    return;
  }
}

// The root locale's case mappings (no language's special rules), as Spark's ICU case mappings use.
// Upper- and lower-casing take a const map, which threads may share.
const UCaseMap* RootCaseMap() {
  static const UCaseMap* map = [] {
    UErrorCode error = U_ZERO_ERROR;
    return ucasemap_open("", 0, &error);
  }();
  return map;
}

bool IsAscii(std::string_view text) {
  for (char c : text) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

}  // namespace

void ChangeCase(std::string_view text, bool upper, std::string* out) {
  if (IsAscii(text)) {
    out->assign(text);
    for (char& c : *out) {
      if (upper && c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
      if (!upper && c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
    }
    return;
  }
  const UCaseMap* map = RootCaseMap();
  MapCase(
      [&](char* dest, int32_t capacity, const char* src, int32_t length, UErrorCode* error) {
        return upper ? ucasemap_utf8ToUpper(map, dest, capacity, src, length, error)
                     : ucasemap_utf8ToLower(map, dest, capacity, src, length, error);
      },
      text, out);
}

void TitleCaseWord(std::string_view word, std::string* out) {
  // Title-casing changes the map's state (its break iterator), so each thread has its own; the
  // whole word is one unit: no break iterator is consulted.
  thread_local UCaseMap* map = [] {
    UErrorCode error = U_ZERO_ERROR;
    return ucasemap_open("", U_TITLECASE_WHOLE_STRING | U_TITLECASE_NO_BREAK_ADJUSTMENT, &error);
  }();
  MapCase(
      [&](char* dest, int32_t capacity, const char* src, int32_t length, UErrorCode* error) {
        return ucasemap_utf8ToTitle(map, dest, capacity, src, length, error);
      },
      word, out);
}

}  // namespace sluice::expr
