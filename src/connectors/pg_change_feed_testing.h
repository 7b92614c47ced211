// Helpers of the change feed's integration tests: reading a history table in `_sort_by` order and
// replaying it into the rows it describes.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sluice/core/compute.h"
#include "sluice/delta/scan.h"
#include "sluice/delta/snapshot.h"

namespace sluice::connectors::cdf_testing {

// One history row: its change type, its source values (FormatValue text, "null" for null) and its
// metadata.
struct HistoryRow {
  std::string change_type;
  std::vector<std::string> values;
  int64_t lsn = 0;
  std::string xid;
  int64_t sort_by = 0;
  // "insert:1,a"
  std::string Text() const {
    std::string out = change_type + ":";
    for (size_t i = 0; i < values.size(); ++i) out += (i > 0 ? "," : "") + values[i];
    return out;
  }
};

struct History {
  std::vector<std::string> columns;  // source columns
  std::vector<std::string> types;    // their sluice types
  std::vector<HistoryRow> rows;      // by _sort_by
  std::vector<std::string> Texts() const {
    std::vector<std::string> out;
    for (const HistoryRow& row : rows) out.push_back(row.Text());
    return out;
  }
};

inline Result<History> ReadHistory(const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(delta::SnapshotPtr snapshot, delta::Snapshot::Load(LocalFileSystem(), path));
  SLUICE_ASSIGN_OR_RETURN(auto scan, delta::TableScan::Open(snapshot));
  History history;
  const TypePtr& schema = scan->schema();
  const int source_columns = schema->num_fields() - 5;
  for (int i = 0; i < source_columns; ++i) {
    history.columns.push_back(schema->field(i).name);
    history.types.push_back(schema->field(i).type->ToString());
  }
  for (;;) {
    SLUICE_ASSIGN_OR_RETURN(BatchPtr batch, scan->Next());
    if (batch == nullptr) break;
    for (int64_t r = 0; r < batch->num_rows(); ++r) {
      HistoryRow row;
      for (int i = 0; i < source_columns; ++i) row.values.push_back(FormatValue(*batch->column(i), r));
      row.change_type = FormatValue(*batch->column(source_columns), r);
      row.lsn = std::stoll(FormatValue(*batch->column(source_columns + 1), r));
      row.xid = FormatValue(*batch->column(source_columns + 2), r);
      row.sort_by = std::stoll(FormatValue(*batch->column(source_columns + 4), r));
      history.rows.push_back(std::move(row));
    }
  }
  std::sort(history.rows.begin(), history.rows.end(),
            [](const HistoryRow& a, const HistoryRow& b) { return a.sort_by < b.sort_by; });
  for (size_t i = 1; i < history.rows.size(); ++i) {
    if (history.rows[i].sort_by == history.rows[i - 1].sort_by) {
      return Status::Error("TEST_FAILURE", "two history rows share _sort_by " + std::to_string(history.rows[i].sort_by));
    }
  }
  return history;
}

// The rows a history describes, replayed in _sort_by order, as "v1,v2" strings.
inline std::multiset<std::string> Replay(const History& history) {
  std::multiset<std::string> rows;
  auto values = [](const HistoryRow& row) {
    std::string out;
    for (size_t i = 0; i < row.values.size(); ++i) out += (i > 0 ? "," : "") + row.values[i];
    return out;
  };
  for (const HistoryRow& row : history.rows) {
    if (row.change_type == "insert" || row.change_type == "update_postimage") {
      rows.insert(values(row));
    } else {
      auto found = rows.find(values(row));
      EXPECT_NE(found, rows.end()) << row.change_type << " of a row the history does not hold: " << values(row);
      if (found != rows.end()) rows.erase(found);
    }
  }
  return rows;
}

}  // namespace sluice::connectors::cdf_testing
