// LIKE patterns and regular expressions compiled once per expression. Internal to expr.
#pragma once

#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/status.h"
#include "expr/bound.h"

namespace sluice::expr {

// A LIKE pattern: '%' any run of characters, '_' exactly one (UTF-8) character, `escape`
// followed by '%', '_' or itself matches that character literally.
class LikePattern final : public CompiledState {
 public:
  // INVALID_PARAMETER_VALUE when the escape character ends the pattern or precedes another
  // character (as Spark).
  static Result<std::shared_ptr<const LikePattern>> Compile(std::string_view pattern, char escape, bool ignore_case);
  bool Matches(std::string_view text) const;

 private:
  enum class Shape : uint8_t { kExact, kPrefix, kSuffix, kContains, kGeneral };
  // One element of a general pattern: a literal run, '_' or '%'.
  struct Piece {
    enum Kind : uint8_t { kLiteral, kOne, kAny } kind;
    std::string text;
  };
  bool MatchGeneral(std::string_view text) const;

  Shape shape_ = Shape::kGeneral;
  bool ignore_case_ = false;
  std::string literal_;  // for the simple shapes
  std::vector<Piece> pieces_;
};

// std::regex compiled from a Java-style pattern (ECMAScript grammar, which agrees with Java for
// the common constructs: classes, quantifiers, groups, anchors, alternation).
struct RegexState final : public CompiledState {
  std::regex regex;
  int groups = 0;
};
// INVALID_PARAMETER_VALUE naming the pattern when it does not compile.
Result<std::shared_ptr<const RegexState>> CompileRegex(std::string_view pattern);

}  // namespace sluice::expr
