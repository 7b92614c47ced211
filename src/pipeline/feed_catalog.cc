#include "sluice/pipeline/feed_catalog.h"

#include "sluice/core/error_classes.h"
#include "sluice/core/path_names.h"

namespace sluice::pipeline {
namespace {

Status CheckFeedName(std::string_view name) {
  if (std::string problem = PathNameProblem(name); !problem.empty()) {
    return Status::Error(errors::kInvalidPipeline, "change feed name '" + std::string(name) + "' " + problem);
  }
  return Status::OK();
}

}  // namespace

FeedCatalog::FeedCatalog(std::shared_ptr<FileSystem> fs, std::string warehouse, const engine::Registry* registry)
    : fs_(std::move(fs)), warehouse_(std::move(warehouse)), registry_(registry) {}

std::string FeedCatalog::PathOf(std::string_view name) const {
  return warehouse_ + "/_sluice/catalog/change_feeds/" + std::string(name) + ".yaml";
}

PipelineSpec FeedCatalog::PipelineOf(const ChangeFeedSpec& feed) const {
  PipelineSpec spec;
  spec.name = feed.name;
  spec.storage = warehouse_ + "/_sluice/change_feeds/" + feed.name;
  spec.warehouse = warehouse_;
  spec.change_feeds = {feed};
  return spec;
}

Result<ChangeFeedSpec> FeedCatalog::Create(std::string_view definition) {
  // The parse refuses a name that is not a path name.
  SLUICE_ASSIGN_OR_RETURN(ChangeFeedSpec feed, ParseChangeFeedSpec(definition));
  SLUICE_RETURN_IF_ERROR(
      ProblemsOf("change feed '" + feed.name + "'", ValidatePipeline(PipelineOf(feed), *registry_)));
  SLUICE_RETURN_IF_ERROR(fs_->CreateDirectories(warehouse_ + "/_sluice/catalog/change_feeds"));
  Status stored = fs_->PutIfAbsent(PathOf(feed.name), definition);
  if (stored.error_class() == errors::kFileAlreadyExists) {
    return Status::Error(errors::kCdfAlreadyExists,
                         "change feed '" + feed.name + "' exists already; delete it first or pick another name");
  }
  SLUICE_RETURN_IF_ERROR(stored);
  return feed;
}

Result<StoredChangeFeed> FeedCatalog::Get(std::string_view name) const {
  SLUICE_RETURN_IF_ERROR(CheckFeedName(name));
  Result<std::string> definition = fs_->ReadFile(PathOf(name));
  if (!definition.ok() && definition.status().error_class() == errors::kFileNotFound) {
    return Status::Error(errors::kCdfNotFound, "no change feed named '" + std::string(name) + "' in the catalog of " +
                                                   warehouse_ + " (sluice cdf list shows them)");
  }
  SLUICE_RETURN_IF_ERROR(definition.status());
  SLUICE_ASSIGN_OR_RETURN(ChangeFeedSpec spec, ParseChangeFeedSpec(*definition));
  return StoredChangeFeed{std::move(spec), *std::move(definition)};
}

Result<std::vector<StoredChangeFeed>> FeedCatalog::List() const {
  SLUICE_ASSIGN_OR_RETURN(std::vector<FileInfo> files, fs_->List(warehouse_ + "/_sluice/catalog/change_feeds"));
  std::vector<StoredChangeFeed> feeds;
  for (const FileInfo& file : files) {
    std::string name = file.path.substr(file.path.rfind('/') + 1);
    if (!name.ends_with(".yaml")) continue;
    name.resize(name.size() - 5);
    SLUICE_ASSIGN_OR_RETURN(StoredChangeFeed feed, Get(name));
    feeds.push_back(std::move(feed));
  }
  return feeds;
}

Status FeedCatalog::Delete(std::string_view name) {
  SLUICE_RETURN_IF_ERROR(Get(name).status());
  return fs_->Delete(PathOf(name));
}

}  // namespace sluice::pipeline
