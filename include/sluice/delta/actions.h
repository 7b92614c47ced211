// The actions of the Delta transaction log (PROTOCOL.md, "Actions"), their JSON form and parsing.
//
// A commit file `_delta_log/<version>.json` holds one action per line. Serialization writes the
// protocol's exact field names; optional fields that are unset are omitted. Parsing accepts what
// other writers produce: unknown action kinds and unknown fields are skipped (the protocol
// requires it), missing required fields and fields of the wrong JSON type fail with
// DELTA_LOG_CORRUPT naming the line and field. Parsing never crashes on any input.
//
// All functions are thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "sluice/core/status.h"

namespace sluice::delta {

using StringMap = std::map<std::string, std::string>;
// Partition values: a null partition value is std::nullopt (JSON null).
using PartitionValues = std::map<std::string, std::optional<std::string>>;

struct Protocol {
  int32_t min_reader_version = 1;
  int32_t min_writer_version = 2;
  // Present only for reader version 3 / writer version 7.
  std::optional<std::vector<std::string>> reader_features;
  std::optional<std::vector<std::string>> writer_features;

  bool operator==(const Protocol&) const = default;
};

struct Format {
  std::string provider = "parquet";
  StringMap options;

  bool operator==(const Format&) const = default;
};

// The schema of a metaData action that has none: Databricks' declarative pipelines create their
// tables with such a placeholder and set the schema in a later commit.
inline constexpr std::string_view kEmptySchemaString = R"({"type":"struct","fields":[]})";

struct Metadata {
  std::string id;
  std::optional<std::string> name;
  std::optional<std::string> description;
  Format format;
  std::string schema_string;  // Spark StructType JSON (kEmptySchemaString when the action has none)
  std::vector<std::string> partition_columns;
  StringMap configuration;
  std::optional<int64_t> created_time;  // ms since the epoch

  bool operator==(const Metadata&) const = default;
};

struct DeletionVectorDescriptor {
  std::string storage_type;  // "u", "i" or "p"
  std::string path_or_inline_dv;
  std::optional<int32_t> offset;
  int32_t size_in_bytes = 0;
  int64_t cardinality = 0;

  // The protocol's uniqueId: storageType + pathOrInlineDv, plus "@" + offset when present.
  std::string UniqueId() const;
  bool operator==(const DeletionVectorDescriptor&) const = default;
};

struct AddFile {
  std::string path;  // URI-encoded, relative to the table root (or absolute)
  PartitionValues partition_values;
  int64_t size = 0;
  int64_t modification_time = 0;
  bool data_change = true;
  std::optional<std::string> stats;  // the statistics JSON document, as text
  std::optional<StringMap> tags;
  std::optional<DeletionVectorDescriptor> deletion_vector;
  std::optional<int64_t> base_row_id;
  std::optional<int64_t> default_row_commit_version;
  std::optional<std::string> clustering_provider;

  bool operator==(const AddFile&) const = default;
};

struct RemoveFile {
  std::string path;
  std::optional<int64_t> deletion_timestamp;
  bool data_change = true;
  std::optional<bool> extended_file_metadata;
  std::optional<PartitionValues> partition_values;
  std::optional<int64_t> size;
  std::optional<std::string> stats;
  std::optional<StringMap> tags;
  std::optional<DeletionVectorDescriptor> deletion_vector;
  std::optional<int64_t> base_row_id;
  std::optional<int64_t> default_row_commit_version;

  bool operator==(const RemoveFile&) const = default;
};

struct AddCdcFile {
  std::string path;
  PartitionValues partition_values;
  int64_t size = 0;
  bool data_change = false;
  std::optional<StringMap> tags;

  bool operator==(const AddCdcFile&) const = default;
};

struct SetTransaction {
  std::string app_id;
  int64_t version = 0;
  std::optional<int64_t> last_updated;

  bool operator==(const SetTransaction&) const = default;
};

// Commit provenance. Writers may store any JSON here; the fields sluice writes and reads are
// typed, and operationParameters / operationMetrics values that are not JSON strings are kept
// as their compact JSON text.
struct CommitInfo {
  std::optional<int64_t> timestamp;
  std::optional<int64_t> in_commit_timestamp;
  std::string operation;
  StringMap operation_parameters;
  std::optional<StringMap> operation_metrics;
  std::optional<int64_t> read_version;
  std::optional<std::string> isolation_level;
  std::optional<bool> is_blind_append;
  std::optional<std::string> engine_info;
  std::optional<std::string> txn_id;

  bool operator==(const CommitInfo&) const = default;
};

struct DomainMetadata {
  std::string domain;
  std::string configuration;
  bool removed = false;

  bool operator==(const DomainMetadata&) const = default;
};

using Action =
    std::variant<CommitInfo, Protocol, Metadata, AddFile, RemoveFile, AddCdcFile, SetTransaction, DomainMetadata>;

// One action as a single line of JSON (no newline), e.g. {"txn":{"appId":"a","version":3}}.
std::string SerializeAction(const Action& action);
// The content of a commit file: every action on its own line, each line ending in '\n'.
std::string SerializeActions(const std::vector<Action>& actions);

// Parses the content of a commit file, appending its actions in order. Blank lines are skipped.
// `source` names the file in error messages. DELTA_LOG_CORRUPT on malformed content.
Status ParseActions(std::string_view text, std::string_view source, std::vector<Action>* actions);

// `_delta_log/_last_checkpoint` (PROTOCOL.md, "Last Checkpoint File Schema").
struct LastCheckpoint {
  int64_t version = 0;
  int64_t size = 0;  // number of actions in the checkpoint
  std::optional<int64_t> parts = std::nullopt;
  std::optional<int64_t> size_in_bytes = std::nullopt;
  std::optional<int64_t> num_of_add_files = std::nullopt;

  bool operator==(const LastCheckpoint&) const = default;
};

std::string SerializeLastCheckpoint(const LastCheckpoint& last_checkpoint);
// DELTA_LOG_CORRUPT when the text is not a valid _last_checkpoint document.
Result<LastCheckpoint> ParseLastCheckpoint(std::string_view text);

// The name of a commit file inside _delta_log: "%020d.json".
std::string CommitFileName(int64_t version);
// The version of a commit file name ("00000000000000000012.json" -> 12), or -1 when the name is
// not exactly a commit file name.
int64_t ParseCommitFileName(std::string_view name);

}  // namespace sluice::delta
