#include "expr/json_path.h"

#include <charconv>

#include "core/jackson_text.h"

namespace sluice::expr {
namespace {

using simdjson::dom::element;

// How a match is written (Spark's WriteStyle): a top-level string bare (kRaw), strings quoted
// inside an array of matches (kQuoted), arrays spliced into the enclosing one (kFlatten).
enum class Style { kRaw, kQuoted, kFlatten };

// Compact JSON text with Jackson's commas: a value written inside an open array follows a comma
// unless it is the array's first.
class Writer {
 public:
  void BeginArray() {
    Separate();
    text_.push_back('[');
    first_.push_back(true);
  }
  void EndArray() {
    text_.push_back(']');
    first_.pop_back();
  }
  // `json` as one value.
  void Raw(std::string_view json) {
    Separate();
    text_.append(json);
  }
  // `value` copied, strings quoted unless kRaw.
  void Copy(element value, Style style) {
    Separate();
    Append(value, style);
  }
  const std::string& text() const { return text_; }

 private:
  void Separate() {
    if (first_.empty()) return;
    if (!first_.back()) text_.push_back(',');
    first_.back() = false;
  }
  void Append(element value, Style style) {
    if (style == Style::kRaw && value.is_string()) {
      text_.append(std::string_view(value));
    } else {
      AppendJacksonText(value, false, &text_);
    }
  }

  std::string text_;
  std::vector<bool> first_;  // per open array: whether nothing is in it yet
};

using Steps = std::vector<PathStep>;

// Spark's evaluatePath: writes what steps[i...] match in `value` to `out`; whether anything did.
bool Evaluate(element value, const Steps& steps, size_t i, Style style, Writer& out) {
  if (i == steps.size()) {
    if (style == Style::kFlatten && value.is_array()) {
      bool dirty = false;
      for (element item : simdjson::dom::array(value)) dirty |= Evaluate(item, steps, i, style, out);
      return dirty;
    }
    out.Copy(value, style);
    return true;
  }
  const PathStep& step = steps[i];
  if (!step.wildcard && step.index < 0) {  // a field
    simdjson::dom::object object;
    if (value.get_object().get(object) != simdjson::SUCCESS) return false;
    for (auto [key, item] : object) {
      // The first field of the name whose value is not null and matches the rest.
      if (key == step.field && !item.is_null() && Evaluate(item, steps, i + 1, style, out)) return true;
    }
    return false;
  }
  simdjson::dom::array array;
  if (value.get_array().get(array) != simdjson::SUCCESS) return false;
  const bool wildcard_next = i + 1 < steps.size() && steps[i + 1].wildcard;
  if (!step.wildcard) {  // an index
    element item;
    if (array.at(static_cast<size_t>(step.index)).get(item) != simdjson::SUCCESS) return false;
    return Evaluate(item, steps, i + 1, wildcard_next ? Style::kQuoted : style, out);
  }
  if (wildcard_next) {  // [*][*]: the matches of the inner elements spliced into one array
    bool dirty = false;
    out.BeginArray();
    for (element item : array) dirty |= Evaluate(item, steps, i + 2, Style::kFlatten, out);
    out.EndArray();
    return dirty;
  }
  if (style == Style::kQuoted) {
    bool dirty = false;
    out.BeginArray();
    for (element item : array) dirty |= Evaluate(item, steps, i + 1, Style::kQuoted, out);
    out.EndArray();
    return dirty;
  }
  // The matches gathered apart: an array of them, or the one alone.
  Writer matches;
  int dirty = 0;
  matches.BeginArray();
  for (element item : array) {
    dirty += Evaluate(item, steps, i + 1, style == Style::kRaw ? Style::kQuoted : Style::kFlatten, matches) ? 1 : 0;
  }
  matches.EndArray();
  const std::string& text = matches.text();
  if (dirty > 1) out.Raw(text);
  if (dirty == 1) out.Raw(std::string_view(text).substr(1, text.size() - 2));
  return dirty > 0;
}

}  // namespace

std::optional<std::vector<PathStep>> ParseJsonPath(std::string_view path) {
  if (path.empty() || path[0] != '$') return std::nullopt;
  std::vector<PathStep> steps;
  size_t i = 1;
  while (i < path.size()) {
    if (path[i] == '.') {
      size_t start = ++i;
      while (i < path.size() && path[i] != '.' && path[i] != '[') ++i;
      if (i == start || path.substr(start, i - start) == "*") return std::nullopt;
      steps.push_back({std::string(path.substr(start, i - start)), -1});
    } else if (path[i] == '[') {
      ++i;
      if (path.substr(i).starts_with("*]")) {
        steps.push_back({"", -1, true});
        i += 2;
      } else if (i < path.size() && path[i] == '\'') {
        size_t end = path.find('\'', i + 1);
        if (end == std::string_view::npos || end + 1 >= path.size() || path[end + 1] != ']') return std::nullopt;
        if (path.substr(i + 1, end - i - 1) == "*") return std::nullopt;
        steps.push_back({std::string(path.substr(i + 1, end - i - 1)), -1});
        i = end + 2;
      } else {
        int64_t index = 0;
        auto [p, ec] = std::from_chars(path.data() + i, path.data() + path.size(), index);
        if (ec != std::errc() || p == path.data() + path.size() || *p != ']' || index < 0) return std::nullopt;
        steps.push_back({"", index});
        i = static_cast<size_t>(p - path.data()) + 1;
      }
    } else {
      return std::nullopt;
    }
  }
  return steps;
}

bool HasWildcard(const std::vector<PathStep>& steps) {
  for (const PathStep& step : steps) {
    if (step.wildcard) return true;
  }
  return false;
}

bool EvaluateWildcardPath(element document, const std::vector<PathStep>& steps, std::string* out) {
  Writer writer;
  if (!Evaluate(document, steps, 0, Style::kRaw, writer)) return false;
  *out = writer.text();
  return true;
}

}  // namespace sluice::expr
