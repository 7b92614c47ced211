// The streams of a warehouse's catalog: named `catalog.schema.stream` definitions (the same YAML
// as a pipeline file's `streams:` entry), kept as
// `<warehouse>/_sluice/catalog/streams/<catalog.schema.stream>.yaml`, so that `sluice stream run
// NAME` needs nothing but the name. Each stream runs with its checkpoint and event log under
// `<warehouse>/_sluice/streams/<name>`.
//
// Errors: STREAM_ALREADY_EXISTS, STREAM_NOT_FOUND, INVALID_PIPELINE (the definition's problems,
// every one listed: shape, options, schemas, filter, exclusions), STREAM_UPDATE_NOT_ALLOWED and
// STREAM_SCHEMA_INCOMPATIBLE (stream_compatibility.h), IO_ERROR from the file system.
// Thread-safe; several processes may share a warehouse (Create publishes with put-if-absent;
// Update replaces the definition atomically, the last of two concurrent updates winning).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/file_system.h"
#include "sluice/core/status.h"
#include "sluice/engine/registry.h"
#include "sluice/pipeline/pipeline_spec.h"

namespace sluice::pipeline {

struct StoredStream {
  StreamSpec spec;
  std::string definition;  // the YAML as created
};

class StreamCatalog {
 public:
  // `warehouse` is an absolute path.
  StreamCatalog(std::shared_ptr<FileSystem> fs, std::string warehouse, const engine::Registry* registry);

  // Validates the definition as `sluice validate` would and stores it under its name.
  Result<StreamSpec> Create(std::string_view definition);
  // Replaces a stream's definition with `definition` (the same name) when only schema_config and
  // excluded_columns change, compatibly (stream_compatibility.h), and the ingestion table, if it
  // exists, can take the new schemas (fields added; a type it holds never changes). The stream's
  // next run ingests with the new definition; rows written before keep their shape.
  Result<StreamSpec> Update(std::string_view definition);
  Result<StoredStream> Get(std::string_view name) const;
  // Names in order, at most `max_results`, starting after `page_token` (a name; empty: from the
  // start).
  Result<std::vector<StoredStream>> List(size_t max_results = 100, std::string_view page_token = {}) const;
  // Removes the definition, the stream's checkpoint and events, and its ingestion table. A run of
  // the stream (`sluice stream run`, which follows its definition: StreamChange) stops when the
  // definition is gone; Delete waits up to `wait_for_run` for it to let go of the stream's
  // checkpoint before it deletes anything else, so no batch in progress lands in a deleted
  // table. CONCURRENT_QUERY when the run holds on longer (stop it and delete again: a deletion
  // that did not finish is taken up by the next Delete of the name, and no stream of that name can
  // be created until it finishes).
  Status Delete(std::string_view name, std::chrono::milliseconds wait_for_run = std::chrono::seconds(60));

  // What became of a stream whose definition was `definition`: the same, replaced (Update), or
  // deleted. A run polls this to follow its stream.
  enum class Change { kNone, kUpdated, kDeleted };
  Result<Change> ChangeSince(std::string_view name, std::string_view definition) const;

  // A pipeline that runs just this stream, with its storage in the catalog's area.
  PipelineSpec PipelineOf(const StreamSpec& stream) const;

 private:
  std::string PathOf(std::string_view name) const;
  // Where a definition waits while its stream is being deleted.
  std::string DeletingPathOf(std::string_view name) const;
  // <warehouse>/_sluice/streams/<name>/earlier_definitions: each definition an update replaced,
  // numbered in order, so that records written under one still decode (DecoderSpec::earlier_schemas).
  std::string EarlierDefinitionsOf(std::string_view name) const;
  // `spec`'s inline Avro key and value given the schemas of its earlier definitions, newest first.
  Status AttachEarlierSchemas(StreamSpec* spec) const;
  // INVALID_PIPELINE listing every problem `sluice validate` would find.
  Status Validate(const StreamSpec& stream) const;
  // STREAM_SCHEMA_INCOMPATIBLE when the existing ingestion table cannot take the stream's inline
  // schemas.
  Status CheckTableTakes(const StreamSpec& stream) const;
  // OK once no run holds the checkpoint at `checkpoint` (at once when there is none), or
  // CONCURRENT_QUERY after `wait`.
  Status WaitForRunToStop(const std::string& checkpoint, std::chrono::milliseconds wait) const;

  std::shared_ptr<FileSystem> fs_;
  std::string warehouse_;
  const engine::Registry* registry_;
};

}  // namespace sluice::pipeline
