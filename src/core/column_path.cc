// RecordBatch::ColumnAt: resolves a dot path through struct columns the way Spark resolves
// column names: an exact match first, else the one field equal ignoring ASCII case. When a name
// does not resolve, the error lists the existing paths closest to it (by edit distance), so a
// typo in a pipeline file shows the intended name.
#include <algorithm>
#include <cctype>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "sluice/core/column_path.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/record_batch.h"

namespace sluice {
namespace {

constexpr size_t kMaxSuggestions = 5;

// `name` in back quotes, a back quote inside doubled.
std::string Quoted(std::string_view name) {
  std::string quoted = "`";
  for (char c : name) {
    if (c == '`') quoted.push_back('`');
    quoted.push_back(c);
  }
  return quoted + "`";
}

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

}  // namespace

std::string ColumnPathPart(std::string_view name) {
  return name.find_first_of(".`") == std::string_view::npos ? std::string(name) : Quoted(name);
}

namespace {

// Names separated by `separator`, each as it is or in back quotes (a back quote inside doubled);
// with `trim`, blanks around a name are not part of it. `what` names the text in errors.
Result<std::vector<std::string>> SplitNames(std::string_view text, char separator, bool trim, std::string_view what) {
  std::vector<std::string> parts;
  size_t i = 0;
  auto skip_blanks = [&] {
    while (trim && i < text.size() && IsBlank(text[i])) ++i;
  };
  while (true) {
    std::string part;
    skip_blanks();
    if (i < text.size() && text[i] == '`') {
      ++i;
      while (true) {
        if (i >= text.size()) {
          return Status::Error(errors::kInvalidArgument, fmt::format("unterminated back quote in {} `{}`", what, text));
        }
        if (text[i] == '`') {
          if (i + 1 < text.size() && text[i + 1] == '`') {
            part.push_back('`');
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        part.push_back(text[i++]);
      }
      skip_blanks();
    } else {
      while (i < text.size() && text[i] != separator) part.push_back(text[i++]);
      while (trim && !part.empty() && IsBlank(part.back())) part.pop_back();
    }
    if (part.empty()) return Status::Error(errors::kInvalidArgument, fmt::format("empty name in {} `{}`", what, text));
    parts.push_back(std::move(part));
    if (i == text.size()) return parts;
    if (text[i] != separator) {
      return Status::Error(errors::kInvalidArgument,
                           fmt::format("expected '{}' after a back-quoted name in `{}`", separator, text));
    }
    ++i;
  }
}

}  // namespace

Result<std::vector<std::string>> ParseColumnPath(std::string_view path) {
  return SplitNames(path, '.', false, "column path");
}

std::string ColumnListItem(std::string_view name) {
  const bool plain = !name.empty() && name.find_first_of(",`") == std::string_view::npos && !IsBlank(name.front()) &&
                     !IsBlank(name.back());
  return plain ? std::string(name) : Quoted(name);
}

Result<std::vector<std::string>> ParseColumnList(std::string_view list) {
  return SplitNames(list, ',', true, "column list");
}

namespace {

std::string QuoteIfNeeded(std::string_view name) {
  bool plain = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
  return plain ? std::string(name) : Quoted(name);
}

void CollectPaths(const DataType& type, const std::string& prefix, std::vector<std::string>* out) {
  for (const Field& field : type.fields()) {
    std::string path = prefix.empty() ? QuoteIfNeeded(field.name) : prefix + "." + QuoteIfNeeded(field.name);
    out->push_back(path);
    if (field.type->id() == TypeId::kStruct) CollectPaths(*field.type, path, out);
  }
}

size_t EditDistanceIgnoreCase(std::string_view a, std::string_view b) {
  std::vector<size_t> previous(b.size() + 1);
  std::vector<size_t> current(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) == std::tolower(static_cast<unsigned char>(b[j - 1]));
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (same ? 0 : 1)});
    }
    std::swap(previous, current);
  }
  return previous[b.size()];
}

Status Unresolved(const DataType& schema, std::string_view path, std::string_view why) {
  std::vector<std::string> candidates;
  CollectPaths(schema, "", &candidates);
  std::vector<std::pair<size_t, std::string>> ranked;
  for (std::string& candidate : candidates) {
    ranked.emplace_back(EditDistanceIgnoreCase(path, candidate), std::move(candidate));
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string suggestions;
  for (size_t i = 0; i < ranked.size() && i < kMaxSuggestions; ++i) {
    if (i > 0) suggestions.append(", ");
    suggestions.append("`" + ranked[i].second + "`");
  }
  return Status::Error(errors::kUnresolvedColumn,
                       fmt::format("a column with name `{}` cannot be resolved: {}. Did you mean one of the following? [{}]",
                                   path, why, suggestions));
}

// The child of a struct column, with the parent's null rows made null in it too.
ColumnPtr StructChild(const Column& parent, int index) {
  const ColumnPtr& child = parent.children[index];
  if (parent.null_count == 0) return child;
  bool consistent = true;
  for (int64_t row = 0; row < parent.length && consistent; ++row) consistent = parent.IsValid(row) || child->IsNull(row);
  if (consistent) return child;
  auto masked = std::make_shared<Column>(*child);
  if (masked->validity.empty()) masked->validity.assign(masked->length, 1);
  masked->null_count = 0;
  for (int64_t row = 0; row < masked->length; ++row) {
    if (parent.IsNull(row)) masked->validity[row] = 0;
    masked->null_count += masked->validity[row] == 0;
  }
  return masked;
}

int ResolveField(const DataType& type, std::string_view name) {
  int index = type.FieldIndex(name);
  return index >= 0 ? index : type.FieldIndexIgnoreCase(name);
}

}  // namespace

Result<ColumnPtr> RecordBatch::ColumnAt(std::string_view path) const {
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> parts, ParseColumnPath(path));
  int index = ResolveField(*schema_, parts[0]);
  if (index == -2) return Unresolved(*schema_, path, fmt::format("`{}` matches several columns", parts[0]));
  if (index < 0) return Unresolved(*schema_, path, fmt::format("there is no column `{}`", parts[0]));
  ColumnPtr column = columns_[index];
  for (size_t i = 1; i < parts.size(); ++i) {
    const DataType& type = *column->type;
    if (type.id() != TypeId::kStruct) {
      return Unresolved(*schema_, path, fmt::format("`{}` is {}, not a struct", parts[i - 1], type.ToString()));
    }
    int child = ResolveField(type, parts[i]);
    if (child == -2) return Unresolved(*schema_, path, fmt::format("`{}` matches several fields", parts[i]));
    if (child < 0) {
      return Unresolved(*schema_, path, fmt::format("`{}` has no field `{}`", parts[i - 1], parts[i]));
    }
    column = StructChild(*column, child);
  }
  return column;
}

}  // namespace sluice
