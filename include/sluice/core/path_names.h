// Names that become one segment of a path: flow, stream, sink, pipeline and change-feed names,
// the parts of `catalog.schema.table`. One alphabet for all of them, so that no name a user gives
// can reach outside the folder it is placed in: 1 to 255 bytes of ASCII letters, digits, `_` and
// `-`, not starting with `-` (never `.`, `..`, a `/`, a NUL or a control character).
// Pure functions, thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace sluice {

// The reason `name` is not a path name ("is empty", "contains `/`", ...), or "" when it is one.
std::string PathNameProblem(std::string_view name);

// Whether `path` is `root` or below it once both are normalized lexically ("." dropped, each ".."
// taking away the segment before it, repeated slashes one; links are not followed). Every path
// sluice derives from names and then writes or deletes is checked with it, so that a name that
// passed PathNameProblem by a mistake still cannot reach outside its root.
bool StaysUnder(std::string_view root, std::string_view path);

}  // namespace sluice
