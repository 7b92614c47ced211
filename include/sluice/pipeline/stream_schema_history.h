// The inline Avro schemas a pipeline-file stream has had, so that records written under an
// earlier one keep decoding after the file changes (formats::DecoderSpec::earlier_schemas), as
// catalog streams keep theirs (stream_catalog.h, which adds them with AddEarlierSchemas too).
//
// Each start of a pipeline records the key and value schemas of its streams that are inline
// Avro, in <storage>/schemas/streams/<stream>/<key|value>/<n>.avsc (numbered in order, a schema
// recorded once), and gives every stream the schemas recorded before that differ from its own,
// newest first. An earlier schema the new one cannot read is found when the decoder is built
// (validation), and the pipeline does not start.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sluice/core/file_system.h"
#include "sluice/pipeline/pipeline_spec.h"

namespace sluice::pipeline {

// Whether the key or value is decoded with an inline Avro schema: the one kind whose records do
// not name their writer schema, so that earlier schemas must be kept (registry records name it;
// JSON and Protobuf carry field names or numbers).
bool IsInlineAvro(const std::optional<formats::DecoderSpec>& spec);
// Adds `schemas` (newest first) to `now`'s earlier schemas, leaving out its own and repeats.
void AddEarlierSchemas(const std::vector<std::string>& schemas, formats::DecoderSpec* now);

// Adds the recorded schemas to each stream's inline Avro key and value specs.
Status AttachRecordedSchemas(FileSystem& fs, PipelineSpec* spec);
// Records each stream's current inline Avro schemas that are not recorded yet.
Status RecordStreamSchemas(FileSystem& fs, const PipelineSpec& spec);

}  // namespace sluice::pipeline
