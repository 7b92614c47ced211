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

// Top-level column names separated by commas ("day, region", "`a,b`, c"), blanks around a name
// not part of it; a name in back quotes when it holds a comma, a back quote or blanks at its ends.
// INVALID_ARGUMENT for an empty name or an unterminated quote.
Result<std::vector<std::string>> ParseColumnList(std::string_view list);

// `name` as one item of a column list: as it is, or in back quotes when ParseColumnList would
// not give it back whole.
std::string ColumnListItem(std::string_view name);

// `name` as one part of a column path: as it is, or in back quotes (a back quote inside doubled)
// when it holds a dot or a back quote, so that ParseColumnPath gives it back whole.
std::string ColumnPathPart(std::string_view name);

}  // namespace sluice
