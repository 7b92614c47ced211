// Which tables sluice can read and write: the protocol versions and table features it implements
// (PROTOCOL.md, "Table Features", "Reader/Writer Version Requirements"), and the protocol it gives
// new tables. docs/delta.md lists the same in prose. Pure functions, thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "sluice/core/status.h"
#include "sluice/core/types.h"
#include "sluice/delta/actions.h"

namespace sluice::delta {

// OK when sluice can read the table; DELTA_PROTOCOL_UNSUPPORTED naming the first reader
// feature (or version) it does not implement, or a column mapping mode the protocol does not
// define.
Status CheckReadSupport(const Protocol& protocol, const Metadata& metadata);

// OK when sluice can also write the table. Legacy writer versions 3 to 6 and writer features
// are accepted when what they govern is not in use (no CHECK constraints, no column invariants,
// change data feed off, no generated or identity columns); DELTA_PROTOCOL_UNSUPPORTED naming the
// feature otherwise.
Status CheckWriteSupport(const Protocol& protocol, const Metadata& metadata);

// The table property by which writers mark rows deleted instead of rewriting files.
inline constexpr std::string_view kEnableDeletionVectors = "delta.enableDeletionVectors";
// The table property by which a new table tracks row ids (the rowTracking feature), and the
// configuration naming the columns where rewritten rows keep their ids and commit versions.
inline constexpr std::string_view kEnableRowTracking = "delta.enableRowTracking";
inline constexpr std::string_view kMaterializedRowIdColumn = "delta.rowTracking.materializedRowIdColumnName";
inline constexpr std::string_view kMaterializedRowCommitVersionColumn =
    "delta.rowTracking.materializedRowCommitVersionColumnName";

// Whether the table tracks row ids: its protocol lists the rowTracking writer feature.
bool TracksRowIds(const Protocol& protocol);

// The protocol of a new table with this schema and metadata: reader 1 / writer 2, or table
// features (writer 7; reader 3 when a feature readers need is listed, else reader 1) with
// `timestampNtz` when a timestamp_ntz column exists at any depth, `columnMapping` when
// delta.columnMapping.mode is name or id, `v2Checkpoint` when delta.checkpointPolicy is v2 and
// `deletionVectors` when delta.enableDeletionVectors is true (in both lists), and the writer features `rowTracking` and `domainMetadata` when
// delta.enableRowTracking is true; a table of features also lists for writers `invariants` when a
// struct field (at any depth) is not nullable and `appendOnly` when delta.appendOnly is true,
// which legacy writer version 2 implies.
Protocol ProtocolForNewTable(const DataType& schema, const Metadata& metadata);

// Whether the type or any type nested in it is timestamp_ntz.
bool ContainsTimestampNtz(const DataType& type);

// Whether a schema's JSON text records a column type change (delta.typeChanges in a field's
// metadata, the typeWidening feature).
bool RecordsTypeChanges(const std::string& schema_string);

// The protocol a table needs after its metadata changed to `metadata` (whose schema is `schema`):
// the timestampNtz feature once it has a timestamp_ntz column, the typeWidening feature once a
// column was widened (readers must then widen older files' values), the columnMapping feature
// once columns are mapped, the v2Checkpoint feature once delta.checkpointPolicy is v2, the
// deletionVectors feature once delta.enableDeletionVectors is true, and for writers `invariants` once a field is not nullable and
// `appendOnly` once delta.appendOnly is true. nullopt when the current protocol has what is needed, listed or implied
// by its legacy versions; else the current protocol as table features (reader 3 / writer 7, the
// features its legacy versions implied listed) with the needed ones added.
Result<std::optional<Protocol>> ProtocolForEvolvedSchema(const Protocol& current, const DataType& schema,
                                                         const Metadata& metadata);

}  // namespace sluice::delta
