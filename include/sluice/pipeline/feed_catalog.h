// The change feeds of a warehouse's catalog: <warehouse>/_sluice/catalog/change_feeds/<name>.yaml,
// each the YAML of one `change_feeds:` entry of a pipeline file (docs/change-feed.md). `sluice cdf
// create` adds one, `sluice serve` runs them (catalog_server.h). Each keeps its run's event log
// under <warehouse>/_sluice/change_feeds/<name>.
//
// Stateless apart from the file system; safe to use from several threads.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sluice/core/file_system.h"
#include "sluice/engine/registry.h"
#include "sluice/pipeline/pipeline_spec.h"

namespace sluice::pipeline {

struct StoredChangeFeed {
  ChangeFeedSpec spec;
  std::string definition;  // the YAML as created
};

class FeedCatalog {
 public:
  // `warehouse` is an absolute path.
  FeedCatalog(std::shared_ptr<FileSystem> fs, std::string warehouse, const engine::Registry* registry);

  // Validates the definition as `sluice validate` would (INVALID_PIPELINE listing the problems)
  // and stores it; CDF_ALREADY_EXISTS when a feed of that name exists.
  Result<ChangeFeedSpec> Create(std::string_view definition);
  // CDF_NOT_FOUND naming the feed when there is none.
  Result<StoredChangeFeed> Get(std::string_view name) const;
  // Every feed, by name.
  Result<std::vector<StoredChangeFeed>> List() const;
  // Removes the definition; a feed `sluice serve` runs stops within a poll (its slot is kept, as
  // `sluice cdf stop` keeps it).
  Status Delete(std::string_view name);

  // A pipeline that runs just this feed, with its storage in the catalog's area.
  PipelineSpec PipelineOf(const ChangeFeedSpec& feed) const;

 private:
  std::string PathOf(std::string_view name) const;

  std::shared_ptr<FileSystem> fs_;
  std::string warehouse_;
  const engine::Registry* registry_;
};

}  // namespace sluice::pipeline
