#include "expr/like.h"

#include <cctype>

#include <fmt/format.h>

#include "sluice/core/ascii.h"
#include "sluice/core/error_classes.h"

namespace sluice::expr {
namespace {

bool IsContinuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Bytes in the UTF-8 character starting at text[0].
size_t CharLength(std::string_view text) {
  size_t n = 1;
  while (n < text.size() && IsContinuation(text[n])) ++n;
  return n;
}

}  // namespace

Result<std::shared_ptr<const LikePattern>> LikePattern::Compile(std::string_view pattern, char escape, bool ignore_case) {
  auto p = std::make_shared<LikePattern>();
  p->ignore_case_ = ignore_case;
  std::string source = ignore_case ? AsciiLower(pattern) : std::string(pattern);
  for (size_t i = 0; i < source.size(); ++i) {
    char c = source[i];
    if (c == escape) {
      if (i + 1 == source.size() || (source[i + 1] != '%' && source[i + 1] != '_' && source[i + 1] != escape)) {
        return Status::Error(errors::kInvalidParameterValue,
                             fmt::format("the LIKE pattern '{}' has an invalid escape sequence at position {}", pattern, i + 1));
      }
      c = source[++i];
      if (p->pieces_.empty() || p->pieces_.back().kind != Piece::kLiteral) p->pieces_.push_back({Piece::kLiteral, ""});
      p->pieces_.back().text += c;
    } else if (c == '%') {
      if (p->pieces_.empty() || p->pieces_.back().kind != Piece::kAny) p->pieces_.push_back({Piece::kAny, ""});
    } else if (c == '_') {
      p->pieces_.push_back({Piece::kOne, ""});
    } else {
      if (p->pieces_.empty() || p->pieces_.back().kind != Piece::kLiteral) p->pieces_.push_back({Piece::kLiteral, ""});
      p->pieces_.back().text += c;
    }
  }
  const auto& ps = p->pieces_;
  auto lit = [&](size_t i) { return i < ps.size() && ps[i].kind == Piece::kLiteral; };
  auto any = [&](size_t i) { return i < ps.size() && ps[i].kind == Piece::kAny; };
  if (ps.empty()) {
    p->shape_ = Shape::kExact;
  } else if (ps.size() == 1 && lit(0)) {
    p->shape_ = Shape::kExact;
    p->literal_ = ps[0].text;
  } else if (ps.size() == 2 && lit(0) && any(1)) {
    p->shape_ = Shape::kPrefix;
    p->literal_ = ps[0].text;
  } else if (ps.size() == 2 && any(0) && lit(1)) {
    p->shape_ = Shape::kSuffix;
    p->literal_ = ps[1].text;
  } else if (ps.size() == 3 && any(0) && lit(1) && any(2)) {
    p->shape_ = Shape::kContains;
    p->literal_ = ps[1].text;
  } else if (ps.size() == 1 && any(0)) {
    p->shape_ = Shape::kPrefix;
  }
  return std::shared_ptr<const LikePattern>(std::move(p));
}

bool LikePattern::Matches(std::string_view input) const {
  std::string lowered;
  std::string_view text = input;
  if (ignore_case_) {
    lowered = AsciiLower(input);
    text = lowered;
  }
  switch (shape_) {
    case Shape::kExact: return text == literal_;
    case Shape::kPrefix: return text.substr(0, literal_.size()) == literal_;
    case Shape::kSuffix: return text.size() >= literal_.size() && text.substr(text.size() - literal_.size()) == literal_;
    case Shape::kContains: return text.find(literal_) != std::string_view::npos;
    case Shape::kGeneral: return MatchGeneral(text);
  }
  return false;
}

// Greedy matching with backtracking to the most recent '%' (linear for most patterns).
bool LikePattern::MatchGeneral(std::string_view text) const {
  size_t piece = 0, pos = 0;
  size_t star_piece = SIZE_MAX, star_pos = 0;
  while (true) {
    if (piece < pieces_.size()) {
      const Piece& p = pieces_[piece];
      if (p.kind == Piece::kAny) {
        star_piece = piece++;
        star_pos = pos;
        continue;
      }
      if (p.kind == Piece::kOne && pos < text.size()) {
        pos += CharLength(text.substr(pos));
        ++piece;
        continue;
      }
      if (p.kind == Piece::kLiteral && text.substr(pos, p.text.size()) == p.text) {
        pos += p.text.size();
        ++piece;
        continue;
      }
    } else if (pos == text.size()) {
      return true;
    }
    if (star_piece == SIZE_MAX || star_pos >= text.size()) return false;
    star_pos += CharLength(text.substr(star_pos));
    pos = star_pos;
    piece = star_piece + 1;
  }
}

namespace {

// The largest repetition count a pattern may give ({n}, {n,}, {n,m}), as RE2 bounds it, and the
// largest back reference (\N): libstdc++ overflows on numbers past a long's range (found by
// parser_fuzz) and builds a state per repetition.
constexpr int64_t kMaxRepetition = 1000;

// What the pattern's engine must not be given: repetition counts and back references past
// kMaxRepetition, and a quantifier right after a quantifier (`a**`, `a+{2}`, `a*?*`), which Java
// refuses as a dangling meta character and libstdc++ accepts as nested repetition that
// backtracks without end (parser_fuzz found `0***.****` taking minutes on a short string).
// A `?` after a quantifier makes it lazy, as in Java; Java's possessive `a*+` is refused too.
Status CheckPattern(std::string_view pattern) {
  // A run of digits from `from`, read up to the first digit past the bound; `end` is past the run.
  auto number_at = [&](size_t from, size_t* end) {
    int64_t value = 0;
    size_t j = from;
    for (; j < pattern.size() && pattern[j] >= '0' && pattern[j] <= '9' && value <= kMaxRepetition; ++j) {
      value = value * 10 + (pattern[j] - '0');
    }
    *end = j;
    return value;
  };
  auto too_large = [&](std::string_view what) {
    return Status::Error(errors::kInvalidParameterValue,
                         fmt::format("the regular expression '{}' has a {} over {}", pattern, what, kMaxRepetition));
  };
  auto dangling = [&](size_t at) {
    return Status::Error(errors::kInvalidParameterValue,
                         fmt::format("the regular expression '{}' has a dangling meta character '{}' at {} (a "
                                     "quantifier after a quantifier)",
                                     pattern, pattern[at], at));
  };
  bool in_class = false;
  bool in_repetition = false;  // inside {n,m}
  // After a quantifier: 1; after a quantifier made lazy by '?': 2; otherwise 0.
  int quantified = 0;
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c == '\\') {
      // \N is a back reference, read as a number the same way.
      size_t end;
      if (number_at(i + 1, &end) > kMaxRepetition) return too_large("back reference");
      i = std::max(i + 1, end - 1);
      quantified = 0;
    } else if (in_class) {
      in_class = c != ']';
    } else if (c == '[') {
      in_class = true;
      quantified = 0;
    } else if (c == '{') {
      // {n}, {n,} or {n,m}.
      size_t end;
      const bool counted = i + 1 < pattern.size() && pattern[i + 1] >= '0' && pattern[i + 1] <= '9';
      if (counted && quantified != 0) return dangling(i);
      if (number_at(i + 1, &end) > kMaxRepetition) return too_large("repetition count");
      if (end < pattern.size() && pattern[end] == ',' && number_at(end + 1, &end) > kMaxRepetition) {
        return too_large("repetition count");
      }
      in_repetition = counted;
      quantified = 0;
    } else if (c == '}' && in_repetition) {
      in_repetition = false;
      quantified = 1;
    } else if (c == '*' || c == '+') {
      if (quantified != 0) return dangling(i);
      quantified = 1;
    } else if (c == '?') {
      if (i > 0 && pattern[i - 1] == '(') {
        quantified = 0;  // a group's syntax: (?:, (?=, (?!
      } else if (quantified == 1) {
        quantified = 2;
      } else if (quantified == 2) {
        return dangling(i);
      } else {
        quantified = 1;
      }
    } else if (!in_repetition) {
      quantified = 0;
    }
  }
  return Status::OK();
}

}  // namespace

Result<std::shared_ptr<const RegexState>> CompileRegex(std::string_view pattern) {
  SLUICE_RETURN_IF_ERROR(CheckPattern(pattern));
  auto state = std::make_shared<RegexState>();
  // libstdc++'s regex scanner reads one character past the end of some malformed patterns (the
  // fuzzer found it with a group left open): a std::string ends in a NUL it may read, a view into
  // a column's bytes does not.
  const std::string terminated(pattern);
  try {
    state->regex = std::regex(terminated, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return Status::Error(errors::kInvalidParameterValue, fmt::format("the regular expression '{}' is invalid: {}", pattern, e.what()));
  }
  state->groups = static_cast<int>(state->regex.mark_count());
  return std::shared_ptr<const RegexState>(std::move(state));
}

}  // namespace sluice::expr
