// Type widening (PROTOCOL.md, "Type Widening"): a column's type changed to a wider one without
// rewriting a file. The change is recorded in the field's `delta.typeChanges` metadata; readers
// widen the values of files written before it as they read them.
//
// The widenings, as the protocol defines them (values kept exactly):
//   byte < short < integer < long; float < double;
//   byte, short, integer to double;
//   date to timestamp_ntz (midnight);
//   byte, short, integer to a decimal with at least 10 digits before the point, long to one with
//   at least 20 (what Parquet readers convert 32- and 64-bit integers to);
//   a decimal to one with at least its scale and at least its digits before the point.
// Writers apply the first two rows by themselves when schema evolution meets wider data
// (IsAutomaticTypeWidening); the others only when asked for (ALTER COLUMN ... TYPE), as Delta
// does, so that integers do not silently become decimals. Readers also widen an integral type to
// any decimal with room for its digits (3, 5, 10, 20 before the point), which the feature's
// preview recorded (ReadsWidened).
//
// Internal to the delta layer; pure functions, thread-safe.
#pragma once

#include <string>
#include <vector>

#include "sluice/core/column.h"
#include "sluice/core/status.h"
#include "sluice/core/types.h"

namespace sluice::delta {

// Whether `from` to `to` is one of the widenings above: what sluice records.
bool IsTypeWidening(const DataType& from, const DataType& to);

// Whether a change from `from` to `to`, recorded by any writer, is read widened: the widenings
// above and the preview's integral-to-decimal changes.
bool ReadsWidened(const DataType& from, const DataType& to);

// Whether schema evolution widens `from` to `to` by itself: byte < short < integer < long,
// float < double.
bool IsAutomaticTypeWidening(const DataType& from, const DataType& to);

// A change of a column's type, as delta.typeChanges records it; `field_path` is relative to the
// struct field whose metadata holds it ("" for the field itself, "element", "key.value", ...).
struct TypeChange {
  std::string field_path;
  TypePtr from, to;
};

// `metadata` (a field's metadata JSON object) with `changes` appended to its delta.typeChanges
// (types named as in a schema's JSON: "integer", "decimal(10,2)").
std::string WithTypeChanges(const std::string& metadata, const std::vector<TypeChange>& changes);

// The values of `column` as the wider `target` (ReadsWidened(column.type, target)); shares the
// validity. INTERNAL_ERROR for another pair of types.
Result<ColumnPtr> WidenColumn(const Column& column, const TypePtr& target);

}  // namespace sluice::delta
