// UTF-8 validity: the one rule for the bytes of string values. A string column holds valid UTF-8
// (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF); every path that makes
// strings from outside bytes checks them with IsValidUtf8, and the JSON writers (AppendJsonString)
// never emit an invalid byte, so no value can make a log, a table's commit or an event unparsable.
// Pure functions, thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace sluice {

bool IsValidUtf8(std::string_view bytes);

// Appends `bytes` with each maximal invalid subsequence replaced by U+FFFD (the WHATWG/Unicode
// "maximal subpart" practice, as Spark's make_valid_utf8 does). Valid input is appended as it is.
void AppendValidUtf8(std::string* out, std::string_view bytes);
std::string MakeValidUtf8(std::string_view bytes);

struct Column;
// Whether every string of `column` (nested strings included, nulls skipped) is valid UTF-8.
bool AllStringsAreUtf8(const Column& column);

}  // namespace sluice
