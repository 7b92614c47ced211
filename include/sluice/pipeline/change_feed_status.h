// What a pipeline shows of its change feeds: the feed's status.json (connectors::ChangeFeedStatus,
// rewritten by the feed after every flush) read into values, and those values as Prometheus
// metrics. The metrics are read at scrape time, so they are as fresh as the feed's last flush.
//
// Metrics, every one labelled {pipeline, feed}; per table also {table} (the source table,
// schema.name) and {history} (its history table):
//   sluice_change_feed_up                      gauge    1 while the feed runs, 0 otherwise
//   sluice_change_feed_confirmed_lsn           gauge    the LSN confirmed to the server
//   sluice_change_feed_slot_lag_bytes          gauge    WAL the server retains for the slot
//   sluice_change_feed_slot_lag_seconds        gauge    age of the oldest change not yet in Delta
//   sluice_change_feed_table_rows_captured     gauge    history rows written for the table
//   sluice_change_feed_table_committed_lsn     gauge    LSN of the last transaction in its history
//   sluice_change_feed_table_status            gauge    1, with the table's status as {status}
// An LSN is exposed as its 64-bit position (a double: exact up to 2^53 bytes of WAL).
//
// All functions are thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/status.h"

namespace sluice::pipeline {

struct ChangeFeedTableStatus {
  std::string source;   // schema.table in PostgreSQL
  std::string history;  // the history table's name in the feed's target schema
  std::string status;   // SNAPSHOTTING, STREAMING, SKIPPED, FAILED
  std::string reason;   // why, when SKIPPED or FAILED or not REPLICA IDENTITY FULL
  bool replica_identity_full = false;
  uint64_t committed_lsn = 0;
  int64_t rows = 0;
  int64_t last_write_ms = 0;
};

struct ChangeFeedStatusView {
  std::string status;  // the feed's: STREAMING, STOPPED, FAILED
  std::string error;   // why it FAILED; empty otherwise
  std::string slot_name;
  uint64_t confirmed_lsn = 0;
  int64_t slot_lag_bytes = 0;
  double slot_lag_seconds = 0;
  std::vector<ChangeFeedTableStatus> tables;
};

// Reads the content of a status.json. CDF_STATE_CORRUPT when it is not JSON of that shape.
Result<ChangeFeedStatusView> ParseChangeFeedStatus(std::string_view json);

// One change feed of a pipeline as the metrics see it: whether it runs, and its status.json when
// the feed has written one.
struct ChangeFeedSample {
  std::string feed;
  bool up = false;
  std::optional<ChangeFeedStatusView> status;
};

// The metrics above for `feeds`, in Prometheus' text exposition format (HELP and TYPE once per
// metric); empty when there are no feeds.
std::string ChangeFeedPrometheusText(std::string_view pipeline, std::span<const ChangeFeedSample> feeds);

// Whether the Delta table at `table_path` is named as a change feed names history tables
// (`lb_<table>_history`, `lb_<table>_history_<n>`) directly in `target_directory` (absolute,
// ChangeFeedConfig::target_directory()). Relative paths are taken from the working directory.
bool IsChangeFeedHistoryTable(const std::string& target_directory, const std::string& table_path);

// A Prometheus label value: backslash, double quote and newline escaped.
std::string PrometheusLabelValue(std::string_view value);

// "16/B374D880" for 0x16B374D880, as PostgreSQL writes an LSN.
std::string FormatLsn(uint64_t lsn);

}  // namespace sluice::pipeline
