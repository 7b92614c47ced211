#include "core/json_exact_numbers.h"

#include <cctype>

namespace sluice {
namespace {

// The mark as it stands in JSON text, and decoded. A row holding the NUL escape of its own is not
// marked.
constexpr std::string_view kNulEscape = "\\u0000";
constexpr std::string_view kMarkText = "\\u0000#";
constexpr std::string_view kMark = std::string_view("\0#", 2);
// Doubles carry every number of up to 15 significant digits exactly through its shortest text.
constexpr int kExactDigits = 15;

bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// The end of the string whose opening quote is json[i] (after its closing quote, or the text's end).
size_t StringEnd(std::string_view json, size_t i) {
  for (++i; i < json.size(); ++i) {
    if (json[i] == '\\') {
      ++i;
    } else if (json[i] == '"') {
      return i + 1;
    }
  }
  return json.size();
}

// The end of the number token starting at json[i] ([-] digits [. digits] [e|E [+|-] digits]), and
// its significant digits (leading zeros not counted).
size_t NumberEnd(std::string_view json, size_t i, int* significant) {
  *significant = 0;
  bool leading = true;
  auto digits = [&] {
    for (; i < json.size() && IsDigit(json[i]); ++i) {
      leading = leading && json[i] == '0';
      if (!leading) ++*significant;
    }
  };
  if (i < json.size() && json[i] == '-') ++i;
  digits();
  if (i < json.size() && json[i] == '.') {
    ++i;
    digits();
  }
  if (i < json.size() && (json[i] == 'e' || json[i] == 'E')) {
    ++i;
    if (i < json.size() && (json[i] == '+' || json[i] == '-')) ++i;
    while (i < json.size() && IsDigit(json[i])) ++i;
  }
  return i;
}

// Whether `json` holds a run of more than kExactDigits digits and points: the least any number
// to mark spans. Most rows have none and need no closer look.
bool HasLongDigitRun(std::string_view json) {
  int run = 0;
  for (char c : json) {
    run = (static_cast<unsigned char>(c - '0') < 10 || c == '.') ? run + 1 : 0;
    if (run > kExactDigits) return true;
  }
  return false;
}

}  // namespace

std::optional<std::string> MarkInexactNumbers(std::string_view json) {
  if (!HasLongDigitRun(json)) return std::nullopt;
  if (json.find(kNulEscape) != std::string_view::npos) return std::nullopt;
  std::string out;
  bool marked = false;
  size_t copied = 0;  // json[0, copied) is in `out`
  size_t i = 0;
  while (i < json.size()) {
    const char c = json[i];
    if (c == '"') {
      i = StringEnd(json, i);
    } else if (c == '-' || IsDigit(c)) {
      int significant = 0;
      const size_t end = NumberEnd(json, i, &significant);
      if (significant > kExactDigits) {
        if (!marked) out.reserve(json.size() + 16);
        marked = true;
        out.append(json.substr(copied, i - copied));
        out.push_back('"');
        out.append(kMarkText);
        out.append(json.substr(i, end - i));
        out.push_back('"');
        copied = end;
      }
      i = end > i ? end : i + 1;
    } else if (std::isalpha(static_cast<unsigned char>(c))) {
      while (i < json.size() && std::isalnum(static_cast<unsigned char>(json[i]))) ++i;  // true, false, null
    } else {
      ++i;
    }
  }
  if (!marked) return std::nullopt;
  out.append(json.substr(copied));
  return out;
}

std::optional<std::string_view> MarkedNumber(std::string_view string) {
  if (!string.starts_with(kMark)) return std::nullopt;
  return string.substr(kMark.size());
}

}  // namespace sluice
