// JSON numbers that a double cannot carry exactly, kept as their text through simdjson's DOM
// parser (which holds every non-integer as a double and refuses integers beyond 64 bits): before
// parsing, each such number is rewritten as a JSON string of a mark and the number's text, which
// the JSON reader then converts as the number it was (a decimal exactly, a long or double from its
// text, a string field as Spark writes the number: core/jackson_text.h). Spark's reader takes them exactly (Jackson's
// BigDecimal), so `12345678901234567.89` into decimal(20,2) keeps every digit.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace sluice {

// `json` with every number of more than 15 significant digits written as the string
// "\u0000#<the number's text>". nullopt when it holds none, or when it holds a \u0000 escape of
// its own (a string that could read as marked: such a row keeps today's doubles). A text that is
// not JSON is marked as far as its strings and numbers can be told apart; the parser judges it.
std::optional<std::string> MarkInexactNumbers(std::string_view json);

// The number's text when `string` (a decoded JSON string) is a marked number; nullopt otherwise.
std::optional<std::string_view> MarkedNumber(std::string_view string);

}  // namespace sluice
