// The Prometheus exposition of a pipeline's change feeds.
#include <functional>

#include "sluice/core/json_text.h"
#include "sluice/pipeline/change_feed_status.h"

namespace sluice::pipeline {

std::string PrometheusLabelValue(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (c == '\\' || c == '"') out += '\\';
    out += c;
  }
  return out;
}

namespace {

void Header(std::string* text, const char* name, const char* type, const char* help) {
  *text += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

}  // namespace

std::string ChangeFeedPrometheusText(std::string_view pipeline, std::span<const ChangeFeedSample> feeds) {
  if (feeds.empty()) return "";
  const std::string pipeline_label = "pipeline=\"" + PrometheusLabelValue(pipeline) + "\"";
  auto feed_labels = [&](const ChangeFeedSample& feed) {
    return "{" + pipeline_label + ",feed=\"" + PrometheusLabelValue(feed.feed) + "\"";
  };
  std::string text;

  Header(&text, "sluice_change_feed_up", "gauge", "1 while the change feed runs, 0 otherwise.");
  for (const ChangeFeedSample& feed : feeds) text += "sluice_change_feed_up" + feed_labels(feed) + "} " + (feed.up ? "1" : "0") + "\n";

  struct FeedMetric {
    const char* name;
    const char* help;
    std::function<double(const ChangeFeedStatusView&)> value;
  };
  const FeedMetric feed_metrics[] = {
      {"sluice_change_feed_confirmed_lsn", "LSN the feed confirmed to the server (everything before it is in Delta).",
       [](const ChangeFeedStatusView& s) { return static_cast<double>(s.confirmed_lsn); }},
      {"sluice_change_feed_slot_lag_bytes", "WAL the server retains for the feed's replication slot.",
       [](const ChangeFeedStatusView& s) { return static_cast<double>(s.slot_lag_bytes); }},
      {"sluice_change_feed_slot_lag_seconds", "Age of the oldest change not yet confirmed, at the last flush.",
       [](const ChangeFeedStatusView& s) { return s.slot_lag_seconds; }},
  };
  for (const FeedMetric& metric : feed_metrics) {
    Header(&text, metric.name, "gauge", metric.help);
    for (const ChangeFeedSample& feed : feeds) {
      if (feed.status) text += metric.name + feed_labels(feed) + "} " + JsonDouble(metric.value(*feed.status)) + "\n";
    }
  }

  struct TableMetric {
    const char* name;
    const char* help;
    std::function<double(const ChangeFeedTableStatus&)> value;
  };
  const TableMetric table_metrics[] = {
      {"sluice_change_feed_table_rows_captured", "History rows written for the source table.",
       [](const ChangeFeedTableStatus& t) { return static_cast<double>(t.rows); }},
      {"sluice_change_feed_table_committed_lsn", "LSN of the last transaction in the table's history.",
       [](const ChangeFeedTableStatus& t) { return static_cast<double>(t.committed_lsn); }},
  };
  auto table_labels = [&](const ChangeFeedSample& feed, const ChangeFeedTableStatus& table) {
    return feed_labels(feed) + ",table=\"" + PrometheusLabelValue(table.source) + "\",history=\"" +
           PrometheusLabelValue(table.history) + "\"";
  };
  for (const TableMetric& metric : table_metrics) {
    Header(&text, metric.name, "gauge", metric.help);
    for (const ChangeFeedSample& feed : feeds) {
      if (!feed.status) continue;
      for (const ChangeFeedTableStatus& table : feed.status->tables) {
        text += metric.name + table_labels(feed, table) + "} " + JsonDouble(metric.value(table)) + "\n";
      }
    }
  }
  Header(&text, "sluice_change_feed_table_status", "gauge",
         "1 for the table's status (SNAPSHOTTING, STREAMING, SKIPPED, FAILED) in the status label.");
  for (const ChangeFeedSample& feed : feeds) {
    if (!feed.status) continue;
    for (const ChangeFeedTableStatus& table : feed.status->tables) {
      text += "sluice_change_feed_table_status" + table_labels(feed, table) + ",status=\"" +
              PrometheusLabelValue(table.status) + "\"} 1\n";
    }
  }
  return text;
}

}  // namespace sluice::pipeline
