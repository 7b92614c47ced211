// Evaluation kernels, one function per family of ops. Internal to expr.
//
// Each takes the node (for its op, type and flags) and its already evaluated arguments, and
// returns the result for `rows` rows. They loop over value arrays; none dispatches per row.
#pragma once

#include <vector>

#include "sluice/core/status.h"
#include "expr/bound.h"

namespace sluice::expr {

Result<Datum> EvalArithmetic(const BoundNode& node, const std::vector<Datum>& args, int64_t rows);
Datum EvalComparison(const BoundNode& node, const std::vector<Datum>& args, int64_t rows);
Datum EvalLogic(const BoundNode& node, const std::vector<Datum>& args, int64_t rows);
Datum EvalIn(const BoundNode& node, const std::vector<Datum>& args, int64_t rows);
// CASE, coalesce, greatest, least: each row takes one argument's value.
Result<Datum> EvalChoice(const BoundNode& node, const std::vector<Datum>& args, int64_t rows);
Result<Datum> EvalStringFunction(const BoundNode& node, const std::vector<Datum>& args, int64_t rows);
Result<Datum> EvalFormatString(const BoundNode& node, const std::vector<Datum>& args, int64_t rows);
// to_number, try_to_number, to_char over decimals: by the node's NumberFormat.
Result<Datum> EvalNumberFormat(const BoundNode& node, const std::vector<Datum>& args, int64_t rows);
Result<Datum> EvalMathFunction(const BoundNode& node, const std::vector<Datum>& args, int64_t rows);
Result<Datum> EvalDatetimeFunction(const BoundNode& node, const std::vector<Datum>& args, int64_t rows, int64_t now_micros);
Result<Datum> EvalNestedFunction(const BoundNode& node, const std::vector<Datum>& args, int64_t rows);
// get_json_object, from_json, to_json, schema_of_json, json_array_length, json_object_keys.
Result<Datum> EvalJsonFunction(const BoundNode& node, const std::vector<Datum>& args, int64_t rows);
// transform, filter, exists, forall, aggregate, zip_with: they evaluate their own arguments, the
// lambda bodies once per batch over all elements of all rows.
Result<Datum> EvalHigherOrderFunction(const BoundNode& node, const EvalInput& input);
// flatten, get, array_insert, sequence, arrays_zip, map_from_arrays, map_concat.
Result<Datum> EvalCollectionFunction(const BoundNode& node, const std::vector<Datum>& args, int64_t rows);
// uuid(): a version 4 UUID per row, drawn from the evaluation's now_micros (fixed per batch), the
// row's position and the call's salt, so that a replayed batch gets the same values.
Result<Datum> EvalUuid(const BoundNode& node, const EvalInput& input);
Result<Datum> EvalRandom(const BoundNode& node, const EvalInput& input);
Result<Datum> EvalHashFunction(const BoundNode& node, const std::vector<Datum>& args, int64_t rows);

// Per-row equality and ordering of two rows of one atomic type, as Spark compares them
// (NaN equals NaN and sorts above every number; strings compare as unsigned bytes).
bool RowsEqual(const Column& a, int64_t ra, const Column& b, int64_t rb);
int CompareRows(const Column& a, int64_t ra, const Column& b, int64_t rb);

}  // namespace sluice::expr
