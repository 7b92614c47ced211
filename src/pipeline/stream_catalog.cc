#include "sluice/pipeline/stream_catalog.h"

#include <algorithm>
#include <thread>

#include <fmt/format.h>

#include "sluice/core/error_classes.h"
#include "sluice/core/path_names.h"
#include "sluice/delta/snapshot.h"
#include "sluice/delta/writer.h"
#include "sluice/engine/checkpoint.h"
#include "sluice/pipeline/stream_compatibility.h"
#include "sluice/pipeline/stream_schema_history.h"

namespace sluice::pipeline {
namespace {

// A stream's name is the catalog.schema.table of its ingestion table, and names files of the
// catalog: one of another form could point outside it.
Status CheckStreamName(std::string_view name) { return PipelineSpec{}.TablePath(name).status(); }

}  // namespace

StreamCatalog::StreamCatalog(std::shared_ptr<FileSystem> fs, std::string warehouse, const engine::Registry* registry)
    : fs_(std::move(fs)), warehouse_(std::move(warehouse)), registry_(registry) {}

std::string StreamCatalog::PathOf(std::string_view name) const {
  return warehouse_ + "/_sluice/catalog/streams/" + std::string(name) + ".yaml";
}

std::string StreamCatalog::DeletingPathOf(std::string_view name) const {
  return warehouse_ + "/_sluice/catalog/streams/" + std::string(name) + ".deleting";
}

std::string StreamCatalog::EarlierDefinitionsOf(std::string_view name) const {
  return warehouse_ + "/_sluice/streams/" + std::string(name) + "/earlier_definitions";
}

namespace {

// Adds the inline Avro schemas of `earlier` (its own, then those it kept) to `spec`'s, newest
// first, leaving out the current one and repeats.
void AddSchemasOf(const StreamSpec& earlier, StreamSpec* spec) {
  for (auto [part, before] : {std::pair{&spec->key_schema, &earlier.key_schema},
                              std::pair{&spec->value_schema, &earlier.value_schema}}) {
    if (!IsInlineAvro(*part) || !IsInlineAvro(*before)) continue;
    std::vector<std::string> schemas = {(*before)->schema};
    schemas.insert(schemas.end(), (*before)->earlier_schemas.begin(), (*before)->earlier_schemas.end());
    AddEarlierSchemas(schemas, &**part);
  }
}

}  // namespace

Status StreamCatalog::AttachEarlierSchemas(StreamSpec* spec) const {
  SLUICE_ASSIGN_OR_RETURN(std::vector<FileInfo> files, fs_->List(EarlierDefinitionsOf(spec->name)));
  std::sort(files.begin(), files.end(), [](const FileInfo& a, const FileInfo& b) { return a.path > b.path; });
  for (const FileInfo& file : files) {
    SLUICE_ASSIGN_OR_RETURN(std::string text, fs_->ReadFile(file.path));
    SLUICE_ASSIGN_OR_RETURN(StreamSpec earlier, ParseStreamSpec(text));
    AddSchemasOf(earlier, spec);
  }
  return Status::OK();
}

PipelineSpec StreamCatalog::PipelineOf(const StreamSpec& stream) const {
  PipelineSpec spec;
  spec.name = stream.name;
  spec.storage = warehouse_ + "/_sluice/streams/" + stream.name;
  spec.warehouse = warehouse_;
  spec.streams = {stream};
  return spec;
}

Status StreamCatalog::Validate(const StreamSpec& stream) const {
  return ProblemsOf("stream '" + stream.name + "'", ValidatePipeline(PipelineOf(stream), *registry_));
}

Result<StreamSpec> StreamCatalog::Create(std::string_view definition) {
  SLUICE_ASSIGN_OR_RETURN(StreamSpec stream, ParseStreamSpec(definition));
  SLUICE_RETURN_IF_ERROR(Validate(stream));
  SLUICE_RETURN_IF_ERROR(fs_->CreateDirectories(warehouse_ + "/_sluice/catalog/streams"));
  SLUICE_ASSIGN_OR_RETURN(bool being_deleted, fs_->Exists(DeletingPathOf(stream.name)));
  if (being_deleted) {
    return Status::Error(errors::kStreamAlreadyExists, "stream '" + stream.name +
                                                           "' is still being deleted; run `sluice stream delete " +
                                                           stream.name + "` again to finish it");
  }
  Status stored = fs_->PutIfAbsent(PathOf(stream.name), definition);
  if (stored.error_class() == errors::kFileAlreadyExists) {
    return Status::Error(errors::kStreamAlreadyExists,
                         "stream '" + stream.name + "' exists already; delete it first or pick another name");
  }
  SLUICE_RETURN_IF_ERROR(stored);
  return stream;
}

Result<StreamSpec> StreamCatalog::Update(std::string_view definition) {
  SLUICE_ASSIGN_OR_RETURN(StreamSpec stream, ParseStreamSpec(definition));
  SLUICE_ASSIGN_OR_RETURN(StoredStream stored, Get(stream.name));
  SLUICE_RETURN_IF_ERROR(CheckStreamUpdate(stored.spec, stream));
  // Records written under the stored definition (and those before it) keep decoding: validation
  // compiles each earlier schema against the new one.
  AddSchemasOf(stored.spec, &stream);
  SLUICE_RETURN_IF_ERROR(Validate(stream));
  SLUICE_RETURN_IF_ERROR(CheckTableTakes(stream));
  // The replaced definition is kept first: a crash between the two leaves a copy of the current
  // one among the earlier, which changes nothing.
  if (stored.definition != definition) {
    const std::string earlier = EarlierDefinitionsOf(stream.name);
    SLUICE_RETURN_IF_ERROR(fs_->CreateDirectories(earlier));
    SLUICE_ASSIGN_OR_RETURN(std::vector<FileInfo> kept, fs_->List(earlier));
    SLUICE_RETURN_IF_ERROR(fs_->PutIfAbsent(earlier + "/" + fmt::format("{:08}.yaml", kept.size()), stored.definition));
  }
  SLUICE_RETURN_IF_ERROR(fs_->AtomicWrite(PathOf(stream.name), definition));
  return stream;
}

Status StreamCatalog::CheckTableTakes(const StreamSpec& stream) const {
  SLUICE_ASSIGN_OR_RETURN(std::string table, PipelineOf(stream).TablePath(stream.table));
  SLUICE_ASSIGN_OR_RETURN(bool exists, fs_->Exists(table + "/_delta_log"));
  if (!exists) return Status::OK();
  SLUICE_ASSIGN_OR_RETURN(delta::SnapshotPtr snapshot, delta::Snapshot::Load(fs_, table));
  std::vector<Field> parts;
  for (const auto& [name, schema] : {std::pair{"key", &stream.key_schema}, std::pair{"value", &stream.value_schema}}) {
    if (!*schema || (*schema)->from_registry() || (*schema)->raw_bytes()) continue;
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<formats::Decoder> decoder, formats::MakeDecoder(**schema));
    parts.push_back(Field{name, decoder->type(), true});
  }
  SLUICE_ASSIGN_OR_RETURN(TypePtr incoming, DataType::Struct(std::move(parts)));
  // The stream's next batch widens a column the new schema widens (the ingestion sink writes
  // with widen_types).
  Result<TypePtr> merged = delta::MergeSchemas(snapshot->schema(), incoming, /*widen=*/true);
  if (!merged.ok()) {
    return Status::Error(errors::kStreamSchemaIncompatible, "the ingestion table " + stream.table +
                                                                " cannot take the new schema: " +
                                                                std::string(merged.status().message()));
  }
  return Status::OK();
}

Result<StoredStream> StreamCatalog::Get(std::string_view name) const {
  SLUICE_RETURN_IF_ERROR(CheckStreamName(name));
  Result<std::string> definition = fs_->ReadFile(PathOf(name));
  if (!definition.ok() && definition.status().error_class() == errors::kFileNotFound) {
    return Status::Error(errors::kStreamNotFound, "no stream named '" + std::string(name) + "' in the catalog of " +
                                                      warehouse_ + " (sluice stream list shows them)");
  }
  SLUICE_RETURN_IF_ERROR(definition.status());
  SLUICE_ASSIGN_OR_RETURN(StreamSpec spec, ParseStreamSpec(*definition));
  SLUICE_RETURN_IF_ERROR(AttachEarlierSchemas(&spec));
  return StoredStream{std::move(spec), *std::move(definition)};
}

Result<std::vector<StoredStream>> StreamCatalog::List(size_t max_results, std::string_view page_token) const {
  const std::string directory = warehouse_ + "/_sluice/catalog/streams";
  SLUICE_ASSIGN_OR_RETURN(bool exists, fs_->Exists(directory));
  std::vector<StoredStream> streams;
  if (!exists) return streams;
  SLUICE_ASSIGN_OR_RETURN(std::vector<FileInfo> files, fs_->List(directory));
  std::vector<std::string> names;
  for (const FileInfo& file : files) {
    std::string name = file.path.substr(file.path.rfind('/') + 1);
    if (!name.ends_with(".yaml")) continue;
    name.resize(name.size() - 5);
    if (name > page_token) names.push_back(std::move(name));
  }
  std::sort(names.begin(), names.end());
  if (names.size() > max_results) names.resize(max_results);
  for (const std::string& name : names) {
    SLUICE_ASSIGN_OR_RETURN(StoredStream stream, Get(name));
    streams.push_back(std::move(stream));
  }
  return streams;
}

Status StreamCatalog::Delete(std::string_view name, std::chrono::milliseconds wait_for_run) {
  SLUICE_RETURN_IF_ERROR(CheckStreamName(name));
  // The definition moves aside first: a run of the stream sees it gone and stops, and a deletion
  // cut short is found again by the next Delete.
  const std::string deleting = DeletingPathOf(name);
  SLUICE_ASSIGN_OR_RETURN(bool resumed, fs_->Exists(deleting));
  std::string definition;
  if (resumed) {
    SLUICE_ASSIGN_OR_RETURN(definition, fs_->ReadFile(deleting));
  } else {
    SLUICE_ASSIGN_OR_RETURN(StoredStream stream, Get(name));
    definition = std::move(stream.definition);
    SLUICE_RETURN_IF_ERROR(fs_->Rename(PathOf(name), deleting, /*no_replace=*/true));
  }
  SLUICE_ASSIGN_OR_RETURN(StreamSpec spec, ParseStreamSpec(definition));
  PipelineSpec pipeline = PipelineOf(spec);
  SLUICE_RETURN_IF_ERROR(WaitForRunToStop(pipeline.CheckpointOf(spec), wait_for_run));
  SLUICE_ASSIGN_OR_RETURN(std::string table, pipeline.TablePath(spec.table));
  if (!StaysUnder(warehouse_, table) || !StaysUnder(warehouse_ + "/_sluice/streams", pipeline.storage)) {
    return Status::Error(errors::kInvalidPipeline, "stream '" + spec.name + "' names paths outside the warehouse");
  }
  SLUICE_RETURN_IF_ERROR(fs_->DeleteRecursively(table));
  SLUICE_RETURN_IF_ERROR(fs_->DeleteRecursively(pipeline.storage));
  return fs_->Delete(deleting);
}

Status StreamCatalog::WaitForRunToStop(const std::string& checkpoint, std::chrono::milliseconds wait) const {
  SLUICE_ASSIGN_OR_RETURN(bool exists, fs_->Exists(checkpoint + "/metadata"));
  if (!exists) return Status::OK();
  const auto deadline = std::chrono::steady_clock::now() + wait;
  while (true) {
    // A run holds its checkpoint's lock until it has stopped; taking it proves there is none.
    Result<std::unique_ptr<engine::Checkpoint>> taken = engine::Checkpoint::Open(fs_, checkpoint);
    if (taken.ok()) return Status::OK();
    if (taken.status().error_class() != errors::kConcurrentQuery) return taken.status();
    if (std::chrono::steady_clock::now() >= deadline) {
      return Status::Error(errors::kConcurrentQuery,
                           "a run of the stream still holds its checkpoint " + checkpoint +
                               "; stop it and run `sluice stream delete` again to finish the deletion");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

Result<StreamCatalog::Change> StreamCatalog::ChangeSince(std::string_view name, std::string_view definition) const {
  SLUICE_RETURN_IF_ERROR(CheckStreamName(name));
  Result<std::string> now = fs_->ReadFile(PathOf(name));
  if (!now.ok() && now.status().error_class() == errors::kFileNotFound) return Change::kDeleted;
  SLUICE_RETURN_IF_ERROR(now.status());
  return *now == definition ? Change::kNone : Change::kUpdated;
}

}  // namespace sluice::pipeline
