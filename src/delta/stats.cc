// The statistics JSON of a data file, built from the Parquet writer's per-file statistics.
#include <cmath>
#include <memory>

#include <fmt/format.h>

#include "delta/data_files.h"
#include "delta/json_writer.h"
#include "sluice/core/civil_date.h"
#include "sluice/core/compute.h"
#include "sluice/core/utf8.h"

namespace sluice::delta {
namespace {

constexpr size_t kStringPrefixLength = 32;  // characters

// A JSON object being built in schema order: leaves hold finished JSON values.
struct Node {
  std::vector<std::pair<std::string, std::unique_ptr<Node>>> children;
  std::string value;  // JSON text of a leaf

  Node* Child(const std::string& name) {
    for (auto& [child_name, child] : children) {
      if (child_name == name) return child.get();
    }
    children.emplace_back(name, std::make_unique<Node>());
    return children.back().second.get();
  }

  void Set(const std::vector<std::string>& path, std::string json) {
    Node* node = this;
    for (const std::string& name : path) node = node->Child(name);
    node->value = std::move(json);
  }

  void Append(std::string* out) const {
    if (children.empty()) {
      out->append(value);
      return;
    }
    out->push_back('{');
    bool first = true;
    for (const auto& [name, child] : children) {
      json::AppendKey(name, &first, out);
      child->Append(out);
    }
    out->push_back('}');
  }
};

std::string FormatDate(int64_t days) {
  const auto [year, month, day] = CivilFromDays(days);
  return fmt::format("{:04d}-{:02d}-{:02d}", year, month, day);
}

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// Milliseconds since the epoch as "yyyy-MM-ddTHH:mm:ss.SSS" (+ "Z" for UTC timestamps).
std::string FormatTimestampMs(int64_t ms, bool utc) {
  int64_t days = FloorDiv(ms, 86'400'000);
  int64_t in_day = ms - days * 86'400'000;
  return fmt::format("\"{}T{:02d}:{:02d}:{:02d}.{:03d}{}\"", FormatDate(days), in_day / 3'600'000,
                     in_day / 60'000 % 60, in_day / 1000 % 60, in_day % 1000, utc ? "Z" : "");
}

// The byte length of the first `characters` UTF-8 characters of `text` (all of it if shorter).
size_t PrefixBytes(std::string_view text, size_t characters) {
  size_t bytes = 0;
  for (size_t seen = 0; bytes < text.size() && seen < characters; ++seen) {
    auto lead = static_cast<unsigned char>(text[bytes]);
    size_t length = lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    bytes = std::min(text.size(), bytes + length);
  }
  return bytes;
}

// A bound as JSON, or "" when the column gets no bound of this kind.
std::string BoundJson(const parquet::ColumnStats& column, const parquet::StatValue& value, bool is_max) {
  std::string out;
  switch (column.type->id()) {
    case TypeId::kByte:
    case TypeId::kShort:
    case TypeId::kInteger:
    case TypeId::kLong: json::AppendInt(value.int_value, &out); return out;
    case TypeId::kFloat:
    case TypeId::kDouble:
      if (!std::isfinite(value.float_value)) return "";
      return fmt::format("{}", value.float_value);
    case TypeId::kDecimal: return DecimalText(value.decimal_value, column.type->scale());
    case TypeId::kDate: return fmt::format("\"{}\"", FormatDate(value.int_value));
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: {
      // Bounds are kept in milliseconds: round outward so they still bound the values.
      int64_t ms = FloorDiv(value.int_value, 1000);
      if (is_max && ms * 1000 != value.int_value) ++ms;
      return FormatTimestampMs(ms, column.type->id() == TypeId::kTimestamp);
    }
    case TypeId::kString: {
      std::string_view text = value.bytes;
      // A bound made valid by replacement would no longer bound the values: none is written.
      if (!IsValidUtf8(text)) return "";
      size_t prefix = PrefixBytes(text, kStringPrefixLength);
      if (prefix == text.size()) {
        json::AppendString(text, &out);
        return out;
      }
      if (!is_max) {
        json::AppendString(text.substr(0, prefix), &out);
        return out;
      }
      // The cut maximum followed by U+10FFFF, the greatest character, is still greater than the
      // value unless the value itself continues with U+10FFFF: then no bound is written.
      if (text.substr(prefix).starts_with("\xF4\x8F\xBF\xBF")) return "";
      json::AppendString(std::string(text.substr(0, prefix)) + "\xF4\x8F\xBF\xBF", &out);
      return out;
    }
    default: return "";  // boolean, binary: no bounds
  }
}

}  // namespace

std::string StatsJson(const parquet::FileStats& stats, int max_indexed_columns) {
  Node min_values, max_values, null_count;
  int indexed = 0;
  for (const parquet::ColumnStats& column : stats.columns) {
    if (indexed++ >= max_indexed_columns) break;
    if (column.in_repeated) continue;
    null_count.Set(column.path, std::to_string(column.null_count));
    if (column.min) {
      std::string bound = BoundJson(column, *column.min, false);
      if (!bound.empty()) min_values.Set(column.path, std::move(bound));
    }
    if (column.max) {
      std::string bound = BoundJson(column, *column.max, true);
      if (!bound.empty()) max_values.Set(column.path, std::move(bound));
    }
  }
  std::string out = "{\"numRecords\":" + std::to_string(stats.num_rows);
  for (auto [name, node] : {std::pair<std::string_view, Node*>{"minValues", &min_values},
                            {"maxValues", &max_values}, {"nullCount", &null_count}}) {
    out += fmt::format(",\"{}\":", name);
    if (node->children.empty()) {
      out += "{}";
    } else {
      node->Append(&out);
    }
  }
  out.push_back('}');
  return out;
}

}  // namespace sluice::delta
