#include "sluice/core/decimal.h"

#include <cctype>

namespace sluice {
namespace {

struct Pow10Table {
  int128_t values[39];
  constexpr Pow10Table() : values() {
    values[0] = 1;
    for (int i = 1; i <= 38; ++i) values[i] = values[i - 1] * 10;
  }
};
constexpr Pow10Table kPow10;

__extension__ typedef unsigned __int128 uint128_t;

int128_t Abs(int128_t v) { return v < 0 ? -v : v; }

}  // namespace

int128_t Pow10(int n) { return kPow10.values[n]; }

bool FitsPrecision(int128_t value, int precision) { return Abs(value) < kPow10.values[precision]; }

int128_t DivideRoundHalfUp(int128_t a, int128_t b) {
  int128_t q = a / b;
  int128_t r = a % b;
  if (Abs(r) * 2 >= Abs(b)) q += ((a < 0) != (b < 0)) ? -1 : 1;
  return q;
}

int128_t DivideRoundHalfEven(int128_t a, int128_t b) {
  int128_t q = a / b;
  int128_t r = a % b;
  const int128_t twice = Abs(r) * 2;
  if (twice > Abs(b) || (twice == Abs(b) && q % 2 != 0)) q += ((a < 0) != (b < 0)) ? -1 : 1;
  return q;
}

std::optional<int128_t> Rescale(int128_t value, int from_scale, int to_scale) {
  if (to_scale == from_scale) return value;
  if (to_scale > from_scale) {
    int diff = to_scale - from_scale;
    if (diff > 38) return std::nullopt;
    int128_t out;
    if (__builtin_mul_overflow(value, kPow10.values[diff], &out)) return std::nullopt;
    return out;
  }
  const unsigned diff = static_cast<unsigned>(from_scale - to_scale);
  if (diff > 38) return 0;
  return DivideRoundHalfUp(value, kPow10.values[diff]);
}

std::optional<int128_t> ParseDecimal(std::string_view text, int precision, int scale) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  bool negative = false;
  if (!text.empty() && (text[0] == '-' || text[0] == '+')) {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  int128_t value = 0;
  int digits_after_point = 0;
  int significant = 0;
  bool any_digit = false, seen_point = false;
  int exponent = 0;
  bool round_up = false;  // the first dropped digit beyond 38 significant ones was >= 5
  bool dropped = false;
  size_t i = 0;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c == '.') {
      if (seen_point) return std::nullopt;
      seen_point = true;
      continue;
    }
    if (c < '0' || c > '9') break;
    any_digit = true;
    if (significant == 0 && c == '0') {
      if (seen_point) ++digits_after_point;
      continue;
    }
    if (significant >= 38) {
      if (!dropped) round_up = c >= '5';
      dropped = true;
      if (!seen_point) ++exponent;
      continue;
    }
    value = value * 10 + (c - '0');
    ++significant;
    if (seen_point) ++digits_after_point;
  }
  if (!any_digit) return std::nullopt;
  if (i < text.size()) {
    if (text[i] != 'e' && text[i] != 'E') return std::nullopt;
    ++i;
    bool exp_negative = false;
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) exp_negative = text[i++] == '-';
    if (i == text.size()) return std::nullopt;
    int e = 0;
    for (; i < text.size(); ++i) {
      if (text[i] < '0' || text[i] > '9') return std::nullopt;
      e = e * 10 + (text[i] - '0');
      if (e > 1000) return std::nullopt;
    }
    exponent += exp_negative ? -e : e;
  }
  if (round_up) ++value;
  int value_scale = digits_after_point - exponent;
  std::optional<int128_t> scaled;
  if (value_scale < -38) {
    scaled = value == 0 ? std::optional<int128_t>(0) : std::nullopt;
  } else if (value_scale < 0) {
    scaled = Rescale(value, 0, -value_scale);
    if (scaled) scaled = Rescale(*scaled, 0, scale);
  } else {
    scaled = Rescale(value, value_scale, scale);
  }
  if (!scaled || !FitsPrecision(*scaled, precision)) return std::nullopt;
  return negative ? -*scaled : *scaled;
}

}  // namespace sluice
