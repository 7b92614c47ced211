// A schema field's metadata (its JSON object text, Field::metadata) edited member by member: what
// column mapping, type widening and ALTER COLUMN ... COMMENT write into it.
//
// Internal to the delta layer; pure functions, thread-safe.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace sluice::delta {

// The field's metadata object with the members `drop(key)` accepts left out and `extra` (a list of
// `"key":value` members) appended. Metadata that is not a JSON object is kept as it is.
std::string EditedMetadata(const std::string& metadata, const std::function<bool(std::string_view)>& drop,
                           const std::string& extra);

}  // namespace sluice::delta
