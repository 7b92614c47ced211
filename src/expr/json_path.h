// get_json_object's paths, as Spark reads and evaluates them: `$`, then `.name`, `['name']`,
// `[n]` and the array wildcard `[*]`. Paths without a wildcard are evaluated on demand by
// kernels_json.cc; a wildcard gathers several matches, evaluated here over the parsed document
// with Spark's (Hive's) rules: the matches of a wildcard form an array, written bare when there
// is one (`$.a[*]` of `{"a":["x"]}` is `"x"`, quotes kept), none at all when there are none; two
// consecutive wildcards flatten one level (`$.a[*][*]` of `[[1,2],[3]]` is `[1,2,3]`); a field
// whose value is null matches nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>

namespace sluice::expr {

// One step of a JSON path: a field name, an array index, or the array wildcard.
struct PathStep {
  std::string field;
  int64_t index = -1;  // >= 0 for an array step
  bool wildcard = false;
};

// The steps of `path`; nullopt for a path outside Spark's subset (which matches nothing),
// including the field wildcards `.*` and `['*']`, which match nothing in Spark either.
std::optional<std::vector<PathStep>> ParseJsonPath(std::string_view path);

bool HasWildcard(const std::vector<PathStep>& steps);

// The text get_json_object gives for `steps` (holding a wildcard) over `document`: false when
// nothing matches. Values are written as Spark writes them (compact, integers as written, other
// numbers as Java's Double.toString); a string result outside any array is its bare text.
bool EvaluateWildcardPath(simdjson::dom::element document, const std::vector<PathStep>& steps, std::string* out);

}  // namespace sluice::expr
