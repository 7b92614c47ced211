// PrettyPrint: Spark's Dataset.show() layout. Cells are right-aligned in columns at least three
// characters wide; a cell longer than the truncation (20) is cut to 3 less and ends in "..." (below
// 4, cut without it, as Spark's show(n, truncate)); widths count
// UTF-8 code points, not bytes. Line breaks and tabs in values are shown escaped so that one row
// stays one line.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "sluice/core/compute.h"

namespace sluice {
namespace {

constexpr size_t kMinWidth = 3;

size_t CodePoints(std::string_view text) {
  size_t count = 0;
  for (char c : text) count += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return count;
}

// The byte length of the first `points` code points of `text`.
size_t PrefixBytes(std::string_view text, size_t points) {
  size_t seen = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      if (seen == points) return i;
      ++seen;
    }
  }
  return text.size();
}

std::string Cell(std::string_view value, int64_t truncate) {
  std::string cell;
  cell.reserve(value.size());
  for (char c : value) {
    switch (c) {
      case '\n': cell.append("\\n"); break;
      case '\r': cell.append("\\r"); break;
      case '\t': cell.append("\\t"); break;
      default: cell.push_back(c);
    }
  }
  const auto limit = static_cast<size_t>(std::max<int64_t>(truncate, 0));
  if (limit > 0 && CodePoints(cell) > limit) {
    cell.resize(PrefixBytes(cell, limit < 4 ? limit : limit - 3));
    if (limit >= 4) cell.append("...");
  }
  return cell;
}

}  // namespace

std::string PrettyPrint(const RecordBatch& batch, int64_t max_rows, int64_t truncate) {
  const int64_t shown = std::clamp<int64_t>(batch.num_rows(), 0, std::max<int64_t>(max_rows, 0));
  const int columns = batch.num_columns();
  // rows[0] is the header.
  std::vector<std::vector<std::string>> rows(shown + 1);
  for (int c = 0; c < columns; ++c) rows[0].push_back(Cell(batch.field(c).name, truncate));
  for (int64_t r = 0; r < shown; ++r) {
    for (int c = 0; c < columns; ++c) rows[r + 1].push_back(Cell(FormatValue(*batch.column(c), r), truncate));
  }
  std::vector<size_t> widths(columns, kMinWidth);
  for (const auto& row : rows) {
    for (int c = 0; c < columns; ++c) widths[c] = std::max(widths[c], CodePoints(row[c]));
  }

  std::string separator = "+";
  for (size_t width : widths) separator.append(width, '-').push_back('+');
  separator.push_back('\n');

  std::string out = separator;
  for (size_t r = 0; r < rows.size(); ++r) {
    out.push_back('|');
    for (int c = 0; c < columns; ++c) {
      out.append(widths[c] - CodePoints(rows[r][c]), ' ');
      out.append(rows[r][c]);
      out.push_back('|');
    }
    out.push_back('\n');
    if (r == 0) out.append(separator);
  }
  out.append(separator);
  if (batch.num_rows() > shown) {
    out.append(fmt::format("only showing top {} {}\n", shown, shown == 1 ? "row" : "rows"));
  }
  return out;
}

}  // namespace sluice
