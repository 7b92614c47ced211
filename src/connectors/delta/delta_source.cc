#include <simdjson.h>

#include <charconv>

#include "sluice/core/error_classes.h"
#include "sluice/delta/scan.h"
#include "sluice/delta/snapshot.h"
#include "sluice/delta/source.h"
#include "sluice/connectors/delta/formats.h"

namespace sluice::connectors {

using engine::ReadLimit;
using engine::Source;
using engine::SourceContext;

namespace {

// "latest" or a version number.
std::optional<int64_t> ParseStartingVersion(std::string_view text, bool* latest) {
  *latest = text == "latest";
  if (*latest) return std::nullopt;
  int64_t version = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), version);
  if (ec != std::errc() || end != text.data() + text.size() || version < 0) return std::nullopt;
  return version;
}

std::string StartingVersionProblem(std::string_view text) {
  bool latest = false;
  if (ParseStartingVersion(text, &latest) || latest) return "";
  return "must be a version number or latest";
}

constexpr OptionSpec kOptions[] = {
    {"path", OptionType::kString, std::nullopt, true, "directory of the Delta table"},
    {"startingVersion", OptionType::kString, std::nullopt, false,
     "first version whose added files are read: a number, or latest (only later commits); without it, the table as "
     "of its latest version, then its later commits",
     {}, std::nullopt, std::nullopt, StartingVersionProblem},
    {"maxFilesPerTrigger", OptionType::kLong, "1000", false, "most data files in one batch", {}, 1},
    {"ignoreDeletes", OptionType::kBool, "false", false, "pass over commits that only remove data"},
    {"skipChangeCommits", OptionType::kBool, "false", false,
     "pass over every commit that removes data (updates, merges, overwrites), its added files included"},
};

// {"version":V,"index":I}, with "snapshot":true while the table's snapshot at V is being read.
std::string Format(const delta::SourceOffset& offset) {
  return "{\"version\":" + std::to_string(offset.version) + ",\"index\":" + std::to_string(offset.index) +
         (offset.snapshot ? ",\"snapshot\":true}" : "}");
}

Result<delta::SourceOffset> Parse(const std::string& text) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  delta::SourceOffset offset;
  bool snapshot = false;
  if (parser.parse(simdjson::padded_string(text)).get(doc) != simdjson::SUCCESS ||
      doc["version"].get(offset.version) != simdjson::SUCCESS || doc["index"].get(offset.index) != simdjson::SUCCESS ||
      offset.version < 0 || offset.index < 0) {
    return Status::Error(errors::kSourceOffsetInvalid, "not a delta source offset: " + text);
  }
  simdjson::dom::element flag;
  if (doc["snapshot"].get(flag) == simdjson::SUCCESS && flag.get(snapshot) != simdjson::SUCCESS) {
    return Status::Error(errors::kSourceOffsetInvalid, "not a delta source offset: " + text);
  }
  offset.snapshot = snapshot;
  return offset;
}

class DeltaStreamSource final : public Source {
 public:
  DeltaStreamSource(std::string path, delta::SourceOptions options) : path_(std::move(path)), options_(options) {}

  std::string description() const override { return "DeltaSource[" + path_ + "]"; }
  TypePtr schema() const override { return schema_; }

  Status Open(const SourceContext& context) override {
    file_system_ = context.file_system;
    state_path_ = context.state_directory + "/initial";
    SLUICE_ASSIGN_OR_RETURN(delta::SnapshotPtr snapshot, delta::Snapshot::Load(file_system_, path_));
    schema_ = delta::ScannedSchema(snapshot->schema());
    SLUICE_ASSIGN_OR_RETURN(source_, delta::DeltaSource::Open(file_system_, path_, options_));
    // A query resumed from its checkpoint started where its first run recorded.
    Result<std::string> recorded = file_system_->ReadFile(state_path_);
    if (recorded.ok()) {
      SLUICE_ASSIGN_OR_RETURN(delta::SourceOffset initial, Parse(*recorded));
      source_->StartedAt(initial.version);
    } else if (recorded.status().error_class() != errors::kFileNotFound) {
      return recorded.status();
    }
    return Status::OK();
  }

  Result<std::string> InitialOffset() override {
    // "latest" resolves differently on every run; the first run's answer is the one that counts.
    Status written = file_system_->PutIfAbsent(state_path_, Format(source_->initial_offset()));
    if (!written.ok() && written.error_class() != errors::kFileAlreadyExists) return written;
    SLUICE_ASSIGN_OR_RETURN(std::string initial, file_system_->ReadFile(state_path_));
    SLUICE_ASSIGN_OR_RETURN(delta::SourceOffset offset, Parse(initial));
    source_->StartedAt(offset.version);
    return initial;
  }

  Result<std::string> LatestOffset(const std::string& start, const ReadLimit& limit) override {
    SLUICE_ASSIGN_OR_RETURN(delta::SourceOffset from, Parse(start));
    std::optional<delta::SourceOffset> bound;
    if (limit.not_beyond) {
      SLUICE_ASSIGN_OR_RETURN(bound, Parse(*limit.not_beyond));
    }
    delta::SourceOffset end = from;
    // Without a limit, keep planning until the log has nothing more.
    while (true) {
      SLUICE_ASSIGN_OR_RETURN(delta::SourceOffset next, source_->LatestOffset(end));
      if (bound && next > *bound) next = *bound;
      if (next <= end) break;
      end = next;
      if (!limit.all_available) break;
    }
    return Format(end);
  }

  Result<std::vector<BatchPtr>> Read(const std::string& start, const std::string& end) override {
    SLUICE_ASSIGN_OR_RETURN(delta::SourceOffset from, Parse(start));
    SLUICE_ASSIGN_OR_RETURN(delta::SourceOffset to, Parse(end));
    SLUICE_ASSIGN_OR_RETURN(std::vector<BatchPtr> batches, source_->Read(from, to));
    if (!batches.empty()) schema_ = batches.front()->schema();
    return batches;
  }

  Status Commit(const std::string&) override { return Status::OK(); }

 private:
  std::string path_;
  delta::SourceOptions options_;
  std::shared_ptr<FileSystem> file_system_;
  std::string state_path_;
  TypePtr schema_;
  std::unique_ptr<delta::DeltaSource> source_;
};

}  // namespace

const std::span<const OptionSpec> kDeltaSourceOptions = kOptions;

Result<std::unique_ptr<Source>> MakeDeltaSource(const ValidatedOptions& options) {
  delta::SourceOptions source;
  if (options.Has("startingVersion")) {
    bool latest = false;  // the option table has checked the text
    std::optional<int64_t> version = ParseStartingVersion(options.GetString("startingVersion"), &latest);
    source.start = latest ? delta::SourceOptions::Start::kLatest : delta::SourceOptions::Start::kVersion;
    source.starting_version = version.value_or(0);
  }
  source.max_files_per_trigger = options.GetInt64("maxFilesPerTrigger");  // at least 1, by the option table
  source.ignore_deletes = options.GetBool("ignoreDeletes");
  source.skip_change_commits = options.GetBool("skipChangeCommits");
  return std::unique_ptr<Source>(new DeltaStreamSource(options.GetString("path"), source));
}

}  // namespace sluice::connectors
