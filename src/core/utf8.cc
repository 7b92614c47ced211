#include "sluice/core/utf8.h"

#include <cstdint>

#include <simdjson.h>

#include "sluice/core/column.h"

namespace sluice {
namespace {

// The length of the valid UTF-8 sequence at the start of `bytes`, or, when it is invalid, minus
// the length of its maximal invalid subpart (at least 1). Table 3-7 of the Unicode standard.
int SequenceAt(std::string_view bytes) {
  auto at = [&](size_t i) { return static_cast<unsigned char>(bytes[i]); };
  unsigned char lead = at(0);
  if (lead < 0x80) return 1;
  int length;
  unsigned char low = 0x80, high = 0xBF;  // the range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return -1;
  }
  for (int i = 1; i < length; ++i) {
    if (static_cast<size_t>(i) >= bytes.size()) return -i;
    unsigned char byte = at(static_cast<size_t>(i));
    unsigned char min = i == 1 ? low : 0x80, max = i == 1 ? high : 0xBF;
    if (byte < min || byte > max) return -i;
  }
  return length;
}

}  // namespace

bool IsValidUtf8(std::string_view bytes) { return simdjson::validate_utf8(bytes.data(), bytes.size()); }

void AppendValidUtf8(std::string* out, std::string_view bytes) {
  if (IsValidUtf8(bytes)) {
    out->append(bytes);
    return;
  }
  while (!bytes.empty()) {
    int length = SequenceAt(bytes);
    if (length > 0) {
      out->append(bytes.substr(0, static_cast<size_t>(length)));
      bytes.remove_prefix(static_cast<size_t>(length));
    } else {
      out->append("\xEF\xBF\xBD");
      bytes.remove_prefix(static_cast<size_t>(-length));
    }
  }
}

bool AllStringsAreUtf8(const Column& column) {
  for (const ColumnPtr& child : column.children) {
    if (!AllStringsAreUtf8(*child)) return false;
  }
  if (column.type->id() != TypeId::kString || column.length == 0) return true;
  // Fast path, one pass over the column's bytes: when they are valid UTF-8 together, each value
  // is valid unless a value starts on a continuation byte (a character cut in two).
  const auto* bytes = reinterpret_cast<const char*>(column.data.data());
  const int64_t begin = column.offsets[0], end = column.offsets[column.length];
  if (IsValidUtf8(std::string_view(bytes + begin, static_cast<size_t>(end - begin)))) {
    bool cut = false;
    for (int64_t row = 0; row < column.length && !cut; ++row) {
      int64_t at = column.offsets[row];
      cut = at < end && (static_cast<unsigned char>(bytes[at]) & 0xC0) == 0x80;
    }
    if (!cut) return true;
  }
  for (int64_t row = 0; row < column.length; ++row) {
    if (!column.IsNull(row) && !IsValidUtf8(column.View(row))) return false;
  }
  return true;
}

std::string MakeValidUtf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  AppendValidUtf8(&out, bytes);
  return out;
}

}  // namespace sluice
