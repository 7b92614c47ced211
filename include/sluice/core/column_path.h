// Column paths as users write them ("value.user.email", "`a.b`.c"): what RecordBatch::ColumnAt
// resolves, and what commands that name nested columns take.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/status.h"

namespace sluice {

// The names along a column path: parts separated by dots, a part in back quotes when it holds a
// dot (a back quote inside doubled). INVALID_ARGUMENT for an empty part or an unterminated quote.
Result<std::vector<std::string>> ParseColumnPath(std::string_view path);

// `name` as one part of a column path: as it is, or in back quotes (a back quote inside doubled)
// when it holds a dot or a back quote, so that ParseColumnPath gives it back whole.
std::string ColumnPathPart(std::string_view name);

}  // namespace sluice
