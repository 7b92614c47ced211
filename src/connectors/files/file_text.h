// Reading the text forms of values in csv and json files. The writers use core's FormatValue text
// (AppendValue; AppendValueJson in json files), and every form they write reads back to the same
// value:
//   boolean          true | false (read case-insensitively)
//   integral         decimal digits with an optional sign, within the type's range
//   float, double    Java's Double.toString ("1.5", "1.0E20"), also any decimal or exponent
//                    form; NaN, Infinity, -Infinity
//   decimal(p,s)     [-]digits[.digits], at most s fraction digits and p digits in all (json
//                    files write it quoted, and read it quoted or bare)
//   string           the bytes as they are
//   binary           base64 (standard alphabet, padded)
//   date             [-]YYYY-MM-DD
//   timestamp        YYYY-MM-DDThh:mm:ss[.ffffff]Z; read as any ISO-8601 text ParseIsoTimestamp
//                    takes (core/iso_datetime.h: a space for T, fewer fraction digits, an
//                    offset ±hh:mm / ±hhmm / ±hh; absent: UTC)
//   timestamp_ntz    as timestamp without the zone (an offset or Z is refused)
// Nested values (struct, array, map) are JSON text (json: the JSON value itself): objects for
// structs and maps, arrays for arrays; map keys are the text of their key.
//
// Pure functions, thread-safe; the parsers append into builders without allocating per value.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "sluice/core/builder.h"
#include "sluice/core/column.h"

namespace sluice::connectors::file_text {

// Parses `text` as a value of the builder's (non-nested) type and appends it. False, with the
// reason in `*why` (for an error message), when the text is no value of that type.
bool AppendScalar(ColumnBuilder* builder, std::string_view text, std::string* why);

// Parses `text`, one JSON value, into the builder (any type; JSON null appends a null). False
// with `*why` as AppendScalar. Defined in file_json.cc.
bool AppendJsonText(ColumnBuilder* builder, std::string_view text, std::string* why);

}  // namespace sluice::connectors::file_text
