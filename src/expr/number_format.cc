#include "expr/number_format.h"

#include <algorithm>
#include <array>

#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include "sluice/core/error_classes.h"

namespace sluice::expr {
namespace {

// Java's Character.isWhitespace over ASCII, as Spark skips blanks between digits.
bool IsBlank(char c) { return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1c' && c <= '\x1f'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// What starts `input` at `*at` for the digits of a number format, as Spark's parser reads them:
// a decimal digit of any script (Unicode's Nd: Java's Character.isDigit) as its value, a blank
// (Java's Character.isWhitespace) as kBlank, moving `*at` past it; else kOther, `*at` unmoved.
constexpr int kBlank = -1, kOther = -2;
int DigitOrBlankAt(std::string_view input, size_t* at) {
  const char ascii = input[*at];
  if (static_cast<unsigned char>(ascii) < 0x80) {
    if (!IsDigit(ascii) && !IsBlank(ascii)) return kOther;
    ++*at;
    return IsDigit(ascii) ? ascii - '0' : kBlank;
  }
  int32_t offset = static_cast<int32_t>(*at);
  UChar32 c;
  U8_NEXT(input.data(), offset, static_cast<int32_t>(input.size()), c);
  if (c < 0 || (!u_isdigit(c) && !u_isWhitespace(c))) return kOther;
  *at = static_cast<size_t>(offset);
  return u_isdigit(c) ? u_charDigitValue(c) : kBlank;
}

// Bubbles the character just appended left past the blanks before it ("  -" becomes "-  "
// read right to left: the sign moves next to the digits).
void AppendBeforeBlanks(std::string* out, char c) {
  out->push_back(c);
  for (size_t i = out->size() - 1; i >= 1 && (*out)[i - 1] == ' ' && (*out)[i] == c; --i) std::swap((*out)[i - 1], (*out)[i]);
}

// Appends a blank and moves it before any sign or opening bracket just written, so that the sign
// stays next to the digits that follow.
void AppendBlankBeforeSign(std::string* out) {
  out->push_back(' ');
  for (size_t i = out->size() - 1; i >= 1 && (*out)[i] == ' '; --i) {
    const char previous = (*out)[i - 1];
    if (previous != '+' && previous != '-' && previous != '<') break;
    std::swap((*out)[i - 1], (*out)[i]);
  }
}

// A decimal point with nothing after it (the end or a blank) becomes a blank.
void BlankLonePoint(std::string* out) {
  const size_t point = out->find('.');
  if (point != std::string::npos && (point + 1 == out->size() || (*out)[point + 1] == ' ')) (*out)[point] = ' ';
}

}  // namespace

Result<std::shared_ptr<const NumberFormat>> NumberFormat::Make(std::string_view format) {
  std::string upper(format);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::shared_ptr<NumberFormat> parsed(new NumberFormat(upper));
  std::vector<Token>& tokens = parsed->tokens_;
  // Digit runs and separators next to each other form one digit group.
  auto group_item = [&tokens](GroupItem item) {
    if (tokens.empty() || tokens.back().kind != Kind::kDigits) tokens.push_back(Token{Kind::kDigits, {}});
    tokens.back().items.push_back(item);
  };
  bool after_point = false;
  for (size_t i = 0; i < upper.size();) {
    const char c = upper[i];
    if (c == '0' || c == '9') {
      const size_t start = i;
      while (i < upper.size() && (upper[i] == '0' || upper[i] == '9')) ++i;
      group_item(GroupItem{static_cast<int>(i - start), c == '0' && !after_point});
      continue;
    }
    const bool two_letters = i + 1 < upper.size();
    if (c == ',' || c == 'G') {
      group_item(GroupItem{});
    } else if (c == '.' || c == 'D') {
      tokens.push_back(Token{Kind::kPoint, {}});
      after_point = true;
    } else if (c == '$') {
      tokens.push_back(Token{Kind::kDollar, {}});
    } else if (c == 'S') {
      tokens.push_back(Token{Kind::kSign, {}});
    } else if (c == 'M' && two_letters && upper[i + 1] == 'I') {
      tokens.push_back(Token{Kind::kMinus, {}});
      ++i;
    } else if (c == 'P' && two_letters && upper[i + 1] == 'R') {
      // The brackets wrap the whole number: the opening one reads before everything else.
      tokens.insert(tokens.begin(), Token{Kind::kOpenBracket, {}});
      tokens.push_back(Token{Kind::kCloseBracket, {}});
      ++i;
    } else {
      tokens.push_back(Token{Kind::kInvalid, {}, c});
    }
    ++i;
  }
  bool point_seen = false;
  for (const Token& token : tokens) {
    point_seen = point_seen || token.kind == Kind::kPoint;
    for (const GroupItem& item : token.items) {
      parsed->precision_ += item.digits;
      if (point_seen) parsed->scale_ += item.digits;
    }
  }
  SLUICE_RETURN_IF_ERROR(parsed->Check());
  return std::shared_ptr<const NumberFormat>(std::move(parsed));
}

Status NumberFormat::Check() const {
  auto invalid = [this](std::string_view sub_class, std::string_view detail) {
    return Status::Error(errors::kInvalidFormat,
                         std::string(sub_class) + ": the number format '" + text_ + "' is invalid: " + std::string(detail));
  };
  if (text_.empty()) return invalid("EMPTY", "a number format cannot be empty");
  auto first = [this](Kind kind) {
    auto it = std::find_if(tokens_.begin(), tokens_.end(), [kind](const Token& t) { return t.kind == kind; });
    return it == tokens_.end() ? -1 : static_cast<int>(it - tokens_.begin());
  };
  const int first_digits = first(Kind::kDigits);
  const int first_dollar = first(Kind::kDollar);
  const int first_point = first(Kind::kPoint);
  if (first_digits < 0) return invalid("WRONG_NUM_DIGIT", "a number format needs at least one digit (0 or 9)");
  if (first_digits < first_dollar) return invalid("CUR_MUST_BEFORE_DIGIT", "the currency sign $ must come before the digits");
  if (first_point >= 0 && first_point < first_dollar) {
    return invalid("CUR_MUST_BEFORE_DEC", "the currency sign $ must come before the decimal point");
  }
  for (size_t t = 0; t < tokens_.size(); ++t) {
    if (tokens_[t].kind != Kind::kDigits) continue;
    const std::vector<GroupItem>& items = tokens_[t].items;
    const bool before_point = first_point < 0 || static_cast<int>(t) < first_point;
    for (size_t i = 0; i < items.size(); ++i) {
      if (items[i].digits > 0) continue;
      if (!before_point) {
        return invalid("THOUSANDS_SEPS_MUST_BEFORE_DEC", "thousands separators (, or G) may not follow the decimal point");
      }
      if (i == 0 || i + 1 == items.size() || items[i - 1].digits == 0 || items[i + 1].digits == 0) {
        return invalid("CONT_THOUSANDS_SEPS", "thousands separators (, or G) must have digits on both sides");
      }
    }
  }
  constexpr std::array<std::pair<Kind, std::string_view>, 5> kOnce = {
      {{Kind::kPoint, ". or D"}, {Kind::kSign, "S"}, {Kind::kMinus, "MI"}, {Kind::kDollar, "$"}, {Kind::kCloseBracket, "PR"}}};
  for (const auto& once : kOnce) {
    const Kind kind = once.first;
    if (std::count_if(tokens_.begin(), tokens_.end(), [kind](const Token& t) { return t.kind == kind; }) > 1) {
      return invalid("WRONG_NUM_TOKEN", "at most one " + std::string(once.second) + " is allowed");
    }
  }
  // [PR's <] [MI|S] [$] [digits] [.|D] [digits] [$] [PR|MI|S], each optional, in this order.
  const std::vector<std::vector<Kind>> kSlots = {{Kind::kOpenBracket}, {Kind::kMinus, Kind::kSign}, {Kind::kDollar},
                                                 {Kind::kDigits},      {Kind::kPoint},              {Kind::kDigits},
                                                 {Kind::kDollar},      {Kind::kMinus, Kind::kSign, Kind::kCloseBracket}};
  size_t at = 0;
  for (const std::vector<Kind>& slot : kSlots) {
    if (at < tokens_.size() && std::find(slot.begin(), slot.end(), tokens_[at].kind) != slot.end()) ++at;
  }
  if (at < tokens_.size()) {
    const Token& token = tokens_[at];
    std::string what;
    switch (token.kind) {
      case Kind::kDigits: what = "digit sequence"; break;
      case Kind::kPoint: what = ". or D"; break;
      case Kind::kDollar: what = "$"; break;
      case Kind::kSign: what = "S"; break;
      case Kind::kMinus: what = "MI"; break;
      case Kind::kOpenBracket: case Kind::kCloseBracket: what = "PR"; break;
      case Kind::kInvalid: what = std::string("character '") + token.invalid + "'"; break;
    }
    return invalid("UNEXPECTED_TOKEN", "found an unexpected " + what +
                                           "; a number format is [MI|S] [$] [0|9|G|,]* [.|D] [0|9]* [$] [PR|MI|S]");
  }
  return Status::OK();
}

bool NumberFormat::ParseGroup(const Token& group, std::string_view input, size_t* at, bool after_point,
                              std::string* before, std::string* after) const {
  // Digits (blanks skipped) and separators: the size of each group of digits the input has.
  std::vector<int> sizes{0};
  size_t i = *at;
  while (i < input.size()) {
    const int digit = DigitOrBlankAt(input, &i);
    if (digit >= 0) {
      ++sizes.back();
      (after_point ? after : before)->push_back(static_cast<char>('0' + digit));
    } else if (digit == kOther && input[i] == ',') {
      sizes.push_back(0);
      ++i;
    } else if (digit == kOther) {
      break;
    }
  }
  *at = i;
  std::vector<GroupItem> runs;
  for (const GroupItem& item : group.items) {
    if (item.digits > 0) runs.push_back(item);
  }
  // Compared from the right: leading runs of the format may go unused.
  if (sizes.size() > runs.size()) return false;
  for (size_t k = 0; k < runs.size(); ++k) {
    const GroupItem& run = runs[runs.size() - 1 - k];
    const int actual = k < sizes.size() ? sizes[sizes.size() - 1 - k] : 0;
    if (run.exact ? actual != run.digits : actual > run.digits) return false;
  }
  return true;
}

NumberFormat::Parsed NumberFormat::Parse(std::string_view input, int128_t* unscaled) const {
  std::string before;
  std::string after;
  bool after_point = false;
  bool negative = false;
  bool opened = false;
  bool closed = false;
  size_t at = 0;
  for (const Token& token : tokens_) {
    const bool more = at < input.size();
    const char c = more ? input[at] : '\0';
    switch (token.kind) {
      case Kind::kDigits:
        if (!ParseGroup(token, input, &at, after_point, &before, &after)) return Parsed::kMismatch;
        break;
      case Kind::kPoint:  // the input need not have one
        if (more && c == '.') after_point = true, ++at;
        break;
      case Kind::kDollar:
        if (more && c != '$') return Parsed::kMismatch;
        if (more) ++at;
        break;
      case Kind::kSign:
        if (more && (c == '+' || c == '-')) negative = negative != (c == '-'), ++at;
        break;
      case Kind::kMinus:
        if (more && c == '-') negative = !negative, ++at;
        break;
      case Kind::kOpenBracket:
        if (more && c == '<') opened = true, ++at;
        break;
      case Kind::kCloseBracket:
        if (more && c == '>') {
          if (!opened) return Parsed::kMismatch;
          closed = true;
          negative = !negative;
          ++at;
        }
        break;
      case Kind::kInvalid: return Parsed::kMismatch;  // not after Check()
    }
  }
  if (at < input.size() || opened != closed || (before.empty() && after.empty())) return Parsed::kMismatch;
  // Without leading zeros, the digits and the scale's places must fit the precision.
  const size_t first_significant = std::min(before.find_first_not_of('0'), before.size());
  if (before.size() - first_significant + static_cast<size_t>(scale_) > static_cast<size_t>(precision_)) {
    return Parsed::kTooManyDigits;
  }
  int128_t value = 0;
  for (size_t i = first_significant; i < before.size(); ++i) value = value * 10 + (before[i] - '0');
  after.resize(static_cast<size_t>(scale_), '0');
  for (char d : after) value = value * 10 + (d - '0');
  *unscaled = negative ? -value : value;
  return Parsed::kValue;
}

void NumberFormat::Format(int128_t unscaled, int scale, std::string* out) const {
  const bool negative = unscaled < 0;
  const int128_t magnitude = negative ? -unscaled : unscaled;
  // The digits before the point without leading zeros (none for 0), after it without trailing.
  std::string whole;
  for (int128_t v = magnitude / Pow10(scale); v > 0; v /= 10) whole.insert(whole.begin(), static_cast<char>('0' + v % 10));
  std::string fraction(static_cast<size_t>(scale), '0');
  int128_t f = magnitude % Pow10(scale);
  for (int i = scale - 1; i >= 0; --i, f /= 10) fraction[static_cast<size_t>(i)] = static_cast<char>('0' + f % 10);
  while (!fraction.empty() && fraction.back() == '0') fraction.pop_back();

  const size_t places_before = static_cast<size_t>(precision_ - scale_);
  const size_t places_after = static_cast<size_t>(scale_);
  if (whole.size() > places_before || fraction.size() > places_after) {
    whole.assign(places_before, '#');
    fraction.assign(places_after, '#');
  }
  whole.insert(0, places_before - whole.size(), ' ');
  fraction.resize(places_after, '0');

  std::string& result = *out;
  result.clear();
  size_t next_whole = 0;
  size_t next_fraction = 0;
  bool after_point = false;
  for (const Token& token : tokens_) {
    switch (token.kind) {
      case Kind::kDigits:
        for (const GroupItem& item : token.items) {
          if (item.digits == 0) {  // a separator: a comma after a digit, else a blank
            if (!result.empty() && IsDigit(result.back())) {
              result.push_back(',');
            } else {
              AppendBlankBeforeSign(&result);
            }
            continue;
          }
          for (int d = 0; d < item.digits; ++d) {
            if (after_point) {
              result.push_back(fraction[next_fraction++]);
              continue;
            }
            const char c = whole[next_whole++];
            if (c != ' ') {
              result.push_back(c);
            } else if (item.exact) {
              result.push_back('0');
            } else {
              AppendBlankBeforeSign(&result);
            }
          }
        }
        break;
      case Kind::kPoint:
        if (!result.empty() && result.back() == ' ') result.back() = '0';  // no whole part: 0.5
        result.push_back('.');
        after_point = true;
        break;
      case Kind::kDollar: result.push_back('$'); break;
      case Kind::kSign:
        BlankLonePoint(&result);
        AppendBeforeBlanks(&result, negative ? '-' : '+');
        break;
      case Kind::kMinus:
        if (negative) {
          BlankLonePoint(&result);
          AppendBeforeBlanks(&result, '-');
        } else {
          result.push_back(' ');
        }
        break;
      case Kind::kOpenBracket:
        if (negative) result.push_back('<');
        break;
      case Kind::kCloseBracket:
        BlankLonePoint(&result);
        if (negative) {
          AppendBeforeBlanks(&result, '>');
        } else {
          result.append("  ");
        }
        break;
      case Kind::kInvalid: break;  // not after Check()
    }
  }
  BlankLonePoint(&result);
  if (result.empty() || result == "+" || result == "-") result = "0";
}

}  // namespace sluice::expr
