// How far apart two names are, for "did you mean ...?" suggestions in error messages.
#pragma once

#include <cstddef>
#include <string_view>

namespace sluice {

// The Levenshtein distance: the fewest single-byte insertions, deletions and substitutions that
// turn `a` into `b`. Time O(|a|·|b|), memory O(|b|); meant for names, not documents.
size_t EditDistance(std::string_view a, std::string_view b);

}  // namespace sluice
