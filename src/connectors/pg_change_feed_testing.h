// Helpers of the change feed's integration tests: a fixture running a feed on a fresh database,
// reading a history table in `_sort_by` order and replaying it into the rows it describes, and
// reading status.json.
#pragma once

#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "sluice/connectors/pg_change_feed.h"
#include "sluice/connectors/pgoutput.h"
#include "sluice/connectors/testing/postgres_fixture.h"
#include "sluice/core/compute.h"
#include "sluice/delta/scan.h"
#include "sluice/delta/snapshot.h"
#include "sluice/storage/file_systems.h"
#include "testing/temp_dir.h"

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
  SLUICE_ASSIGN_OR_RETURN(delta::SnapshotPtr snapshot, delta::Snapshot::Load(storage::DefaultFileSystem(), path));
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

// The entry of `source` in status.json's `tables`, its string fields by key; empty when absent.
inline std::map<std::string, std::string> TableStatusIn(const std::string& json, const std::string& source) {
  simdjson::dom::parser parser;
  simdjson::padded_string padded(json);
  simdjson::dom::element root;
  simdjson::dom::array tables;
  if (parser.parse(padded).get(root) || root["tables"].get(tables)) {
    ADD_FAILURE() << "status.json does not parse: " << json;
    return {};
  }
  for (simdjson::dom::element table : tables) {
    std::string_view name;
    if (table["source"].get(name) || name != source) continue;
    std::map<std::string, std::string> fields;
    simdjson::dom::object object;
    if (table.get_object().get(object)) continue;
    for (simdjson::dom::key_value_pair field : object) {
      std::string_view text;
      if (field.value.get(text) == simdjson::SUCCESS) fields[std::string(field.key)] = std::string(text);
    }
    return fields;
  }
  return {};
}

// Each test gets a fresh database and warehouse; StartFeed runs a feed on a thread of its own.
class ChangeFeedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = testing::PostgresTestDatabase::Create();
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(*db);
  }

  void TearDown() override {
    if (thread_.joinable() && !run_ended_.load()) StopFeed();
    if (thread_.joinable()) thread_.join();
    feed_.reset();
    Status dropped = DropChangeFeedSlot(Config());
    EXPECT_TRUE(dropped.ok()) << dropped.ToString();
  }

  ChangeFeedConfig Config() const {
    ChangeFeedConfig config;
    config.conninfo = db_->connection_string();
    config.schema = "public";
    config.warehouse = warehouse_;
    config.target_catalog = "main";
    config.target_schema = "cdc";
    config.slot_name = "cdf_" + db_->name();
    config.publication_name = config.slot_name;
    config.flush_interval = std::chrono::milliseconds(100);
    return config;
  }

  std::string HistoryPath(const std::string& name) const { return warehouse_ + "/main/cdc/" + name; }

  History Read(const std::string& name) {
    auto history = ReadHistory(HistoryPath(name));
    EXPECT_TRUE(history.ok()) << history.status().ToString();
    return history.ok() ? *history : History{};
  }

  void Execute(std::string_view sql) {
    Status status = db_->Execute(sql);
    ASSERT_TRUE(status.ok()) << status.ToString();
  }

  void StartFeed() {
    auto feed = PgChangeFeed::Start(Config());
    ASSERT_TRUE(feed.ok()) << feed.status().ToString();
    feed_ = std::move(*feed);
    stop_ = false;
    run_ended_ = false;
    thread_ = std::thread([this] {
      run_status_ = feed_->Run(stop_);
      run_ended_ = true;
    });
  }

  void StopFeed() {
    stop_ = true;
    thread_.join();
    EXPECT_TRUE(run_status_.ok()) << run_status_.ToString();
    feed_.reset();
  }

  // Waits (bounded) for the feed to end by itself, and returns how it ended.
  Status FeedEnds() {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!run_ended_.load() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!run_ended_.load()) return Status::Error("TEST_FAILURE", "the feed did not end within 30 s");
    thread_.join();
    feed_.reset();
    return run_status_;
  }

  // One entry of status.json's `tables` by its source (`public.items`): "status", "target",
  // "reason" ... as text (absent keys absent); empty when the table is not listed.
  std::map<std::string, std::string> TableStatus(const std::string& source) {
    auto status = ChangeFeedStatus(Config());
    EXPECT_TRUE(status.ok()) << status.status().ToString();
    if (!status.ok()) return {};
    return TableStatusIn(*status, source);
  }

  // Waits until everything written so far is confirmed, hence in Delta.
  void CatchUp() {
    auto text = db_->QueryValue("SELECT pg_current_wal_lsn()");
    ASSERT_TRUE(text.ok()) << text.status().ToString();
    auto lsn = ParseLsn(*text);
    ASSERT_TRUE(lsn.ok());
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (feed_->confirmed_lsn() < *lsn && std::chrono::steady_clock::now() < deadline && !stop_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ASSERT_GE(feed_->confirmed_lsn(), *lsn) << "the feed did not catch up with " << *text << ": "
                                            << run_status_.ToString();
  }

  // The source rows as the history renders them ("v1,v2").
  std::multiset<std::string> SourceRows(const std::string& select) {
    auto rows = db_->Query(select);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    std::multiset<std::string> out;
    if (!rows.ok()) return out;
    for (const auto& row : *rows) {
      std::string text;
      for (size_t i = 0; i < row.size(); ++i) text += (i > 0 ? "," : "") + (row[i] == "NULL" ? "null" : row[i]);
      out.insert(text);
    }
    return out;
  }

  std::unique_ptr<testing::PostgresTestDatabase> db_;
  sluice::testing::TempDir dir_;
  // The warehouse of the feed: a local folder, or an object store's (ChangeFeedOnStoresTest).
  std::string warehouse_ = dir_.path();
  std::unique_ptr<PgChangeFeed> feed_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> run_ended_{false};
  std::thread thread_;
  Status run_status_;
};


}  // namespace sluice::connectors::cdf_testing
