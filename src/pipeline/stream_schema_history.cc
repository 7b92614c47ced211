#include "sluice/pipeline/stream_schema_history.h"

#include <algorithm>

#include <fmt/format.h>

#include "sluice/core/error_classes.h"

namespace sluice::pipeline {
namespace {

std::string FolderOf(const PipelineSpec& spec, const StreamSpec& stream, std::string_view part) {
  return fmt::format("{}/schemas/streams/{}/{}", spec.storage, stream.name, part);
}

// The recorded schemas of one part, oldest first.
Result<std::vector<std::string>> Recorded(FileSystem& fs, const std::string& folder) {
  std::vector<std::string> schemas;
  SLUICE_ASSIGN_OR_RETURN(bool exists, fs.Exists(folder));
  if (!exists) return schemas;
  SLUICE_ASSIGN_OR_RETURN(std::vector<FileInfo> files, fs.List(folder));
  std::sort(files.begin(), files.end(), [](const FileInfo& a, const FileInfo& b) { return a.path < b.path; });
  for (const FileInfo& file : files) {
    if (!file.path.ends_with(".avsc")) continue;
    SLUICE_ASSIGN_OR_RETURN(std::string schema, fs.ReadFile(file.path));
    schemas.push_back(std::move(schema));
  }
  return schemas;
}

template <typename Visit>
Status ForEachInlineAvroPart(const PipelineSpec& spec, Visit&& visit) {
  for (size_t i = 0; i < spec.streams.size(); ++i) {
    for (auto [part, schema] : {std::pair{"key", &spec.streams[i].key_schema}, std::pair{"value", &spec.streams[i].value_schema}}) {
      if (IsInlineAvro(*schema)) SLUICE_RETURN_IF_ERROR(visit(i, part, FolderOf(spec, spec.streams[i], part)));
    }
  }
  return Status::OK();
}

}  // namespace

bool IsInlineAvro(const std::optional<formats::DecoderSpec>& spec) {
  return spec && spec->format == formats::SchemaFormat::kAvro && !spec->from_registry();
}

void AddEarlierSchemas(const std::vector<std::string>& schemas, formats::DecoderSpec* now) {
  for (const std::string& schema : schemas) {
    if (schema != now->schema &&
        std::find(now->earlier_schemas.begin(), now->earlier_schemas.end(), schema) == now->earlier_schemas.end()) {
      now->earlier_schemas.push_back(schema);
    }
  }
}

Status AttachRecordedSchemas(FileSystem& fs, PipelineSpec* spec) {
  return ForEachInlineAvroPart(*spec, [&](size_t i, std::string_view part, const std::string& folder) -> Status {
    SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> recorded, Recorded(fs, folder));
    std::reverse(recorded.begin(), recorded.end());  // newest first
    StreamSpec& stream = spec->streams[i];
    AddEarlierSchemas(recorded, part == "key" ? &*stream.key_schema : &*stream.value_schema);
    return Status::OK();
  });
}

Status RecordStreamSchemas(FileSystem& fs, const PipelineSpec& spec) {
  return ForEachInlineAvroPart(spec, [&](size_t i, std::string_view part, const std::string& folder) -> Status {
    const StreamSpec& stream = spec.streams[i];
    const std::string& now = part == "key" ? stream.key_schema->schema : stream.value_schema->schema;
    SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> recorded, Recorded(fs, folder));
    if (std::find(recorded.begin(), recorded.end(), now) != recorded.end()) return Status::OK();
    SLUICE_RETURN_IF_ERROR(fs.CreateDirectories(folder));
    Status written = fs.PutIfAbsent(fmt::format("{}/{:08}.avsc", folder, recorded.size()), now);
    // Another start of the pipeline recorded one at the same time: the next start records this.
    if (written.error_class() == errors::kFileAlreadyExists) return Status::OK();
    return written;
  });
}

}  // namespace sluice::pipeline
