// What the Delta log benches share: a table of `versions` commits written directly as log files
// (one add of a 1000-byte file each; protocol and metadata in version 0), without data files, to
// time snapshot loads on any file system.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "sluice/core/file_system.h"
#include "sluice/core/types.h"
#include "sluice/delta/actions.h"
#include "sluice/delta/log.h"

namespace sluice::bench {

inline void WriteSyntheticLog(const std::vector<std::pair<std::shared_ptr<FileSystem>, std::string>>& tables,
                              int versions) {
  delta::Metadata metadata;
  metadata.id = "5b1f0e2a-3c4d-4e5f-8a9b-0c1d2e3f4a5b";
  metadata.schema_string = ParseTypeString("struct<id:bigint,name:string>").value()->ToJson();
  for (int v = 0; v < versions; ++v) {
    std::vector<delta::Action> actions;
    delta::CommitInfo info;
    info.timestamp = 1800000000000 + v;
    info.operation = "WRITE";
    actions.emplace_back(info);
    if (v == 0) {
      actions.emplace_back(delta::Protocol{});
      actions.emplace_back(metadata);
    }
    delta::AddFile add;
    add.path = "part-" + std::to_string(v) + ".snappy.parquet";
    add.size = 1000;
    add.modification_time = 1800000000000 + v;
    add.stats = R"({"numRecords":10,"minValues":{"id":0},"maxValues":{"id":9},"nullCount":{"id":0}})";
    actions.emplace_back(add);
    const std::string text = delta::SerializeActions(actions);
    for (const auto& [fs, table] : tables) {
      Status written = fs->PutIfAbsent(delta::CommitPath(table, v), text);
      if (!written.ok()) {
        std::fprintf(stderr, "commit: %s\n", written.ToString().c_str());
        std::exit(1);
      }
    }
  }
}

}  // namespace sluice::bench
