// Spark's number format strings, as to_number, try_to_number and to_char read them
// (docs/sql-expressions.md, "Number formats"):
//
//   [MI|S] [$] [0|9|G|,]* [.|D] [0|9]* [$] [PR|MI|S]        (letters in either case)
//
// A run of digits 0/9 matches up to as many digits (exactly as many when it starts with 0 before
// the decimal point); `,`/`G` separate digit groups and must stand between digits; `S` is an
// optional sign, `MI` an optional minus, `PR` angle brackets around a negative number. The format
// gives the decimal type: precision the digits it has, scale those after the point.
//
// Immutable once parsed; Parse and Format may be called from several threads.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "expr/bound.h"
#include "sluice/core/decimal.h"
#include "sluice/core/status.h"

namespace sluice::expr {

class NumberFormat final : public CompiledState {
 public:
  // INVALID_FORMAT.<EMPTY|WRONG_NUM_DIGIT|CUR_MUST_BEFORE_DIGIT|CUR_MUST_BEFORE_DEC|
  // CONT_THOUSANDS_SEPS|THOUSANDS_SEPS_MUST_BEFORE_DEC|WRONG_NUM_TOKEN|UNEXPECTED_TOKEN> for a
  // format Spark refuses (checked in that order, as Spark does).
  static Result<std::shared_ptr<const NumberFormat>> Make(std::string_view format);

  const std::string& text() const { return text_; }  // the format as given
  int precision() const { return precision_; }
  int scale() const { return scale_; }

  enum class Parsed {
    kValue,          // *unscaled is the value, at scale()
    kMismatch,       // the input does not match the format
    kTooManyDigits,  // it matches but needs more digits than precision() (digits before a
                     // format that starts at its point: '25' read by '.99')
  };
  // The value `input` spells. Blanks between digits are ignored.
  Parsed Parse(std::string_view input, int128_t* unscaled) const;
  // `unscaled` at `scale` written into *out as the format says: a value with more digits than the
  // format has places becomes '#' in every place.
  void Format(int128_t unscaled, int scale, std::string* out) const;

 private:
  enum class Kind { kDigits, kPoint, kDollar, kSign, kMinus, kOpenBracket, kCloseBracket, kInvalid };
  // One run of 0/9 in a digit group, or (digits == 0) a thousands separator.
  struct GroupItem {
    int digits = 0;
    bool exact = false;  // a run starting with 0 before the point: exactly `digits` digits
  };
  struct Token {
    Kind kind;
    std::vector<GroupItem> items;  // kDigits: left to right
    char invalid = 0;              // kInvalid: the character
  };

  explicit NumberFormat(std::string text) : text_(std::move(text)) {}
  Status Check() const;
  // Reads one digit group of the input from *at; false when the digits do not fit the group.
  bool ParseGroup(const Token& group, std::string_view input, size_t* at, bool after_point, std::string* before,
                  std::string* after) const;

  std::string text_;
  std::vector<Token> tokens_;
  int precision_ = 0;
  int scale_ = 0;
};

}  // namespace sluice::expr
