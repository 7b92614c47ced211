// Reading a change feed's status.json into values.
#include <simdjson.h>

#include <charconv>

#include <fmt/format.h>

#include "sluice/core/error_classes.h"
#include "sluice/pipeline/change_feed_status.h"
#include "sluice/storage/file_systems.h"

namespace sluice::pipeline {
namespace {

Status Corrupt(std::string what) {
  return Status::Error(errors::kCdfStateCorrupt, "change feed status.json: " + std::move(what));
}

// "X/Y", each part 1 to 8 hexadecimal digits.
Result<uint64_t> ParseLsn(std::string_view text) {
  size_t slash = text.find('/');
  auto part = [](std::string_view digits, uint64_t* value) {
    if (digits.empty() || digits.size() > 8) return false;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), *value, 16);
    return ec == std::errc() && end == digits.data() + digits.size();
  };
  uint64_t high = 0, low = 0;
  if (slash == std::string_view::npos || !part(text.substr(0, slash), &high) || !part(text.substr(slash + 1), &low)) {
    return Corrupt(fmt::format("'{}' is not an LSN", text));
  }
  return high << 32 | low;
}

}  // namespace

bool IsChangeFeedHistoryTable(const std::string& target_directory, const std::string& table_path) {
  // Both as every FileSystem call takes them: local paths absolute and normalized, URIs checked,
  // neither with a trailing '/'.
  const std::string table = storage::AbsolutePath(table_path);
  const std::string target = storage::AbsolutePath(target_directory);
  const size_t slash = table.rfind('/');
  if (slash == std::string::npos || table.substr(0, slash) != target) return false;
  const std::string name = table.substr(slash + 1);
  return name.starts_with("lb_") && name.find("_history") != std::string::npos;
}

std::string FormatLsn(uint64_t lsn) { return fmt::format("{:X}/{:X}", lsn >> 32, lsn & 0xFFFFFFFFu); }

Result<ChangeFeedStatusView> ParseChangeFeedStatus(std::string_view json) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(simdjson::padded_string(json)).get(root) != simdjson::SUCCESS) return Corrupt("not JSON");
  ChangeFeedStatusView view;
  std::string_view status, slot, confirmed;
  simdjson::dom::array tables;
  if (root["status"].get(status) || root["slot_name"].get(slot) || root["confirmed_lsn"].get(confirmed) ||
      root["slot_lag_bytes"].get(view.slot_lag_bytes) || root["slot_lag_seconds"].get(view.slot_lag_seconds) ||
      root["tables"].get(tables)) {
    return Corrupt("a feed needs status, slot_name, confirmed_lsn, slot_lag_bytes, slot_lag_seconds and tables");
  }
  view.status = status;
  if (std::string_view error; root["error"].get(error) == simdjson::SUCCESS) view.error = error;
  view.slot_name = slot;
  SLUICE_ASSIGN_OR_RETURN(view.confirmed_lsn, ParseLsn(confirmed));
  for (simdjson::dom::element item : tables) {
    ChangeFeedTableStatus table;
    std::string_view source, target, table_status, reason, committed;
    if (item["source"].get(source) || item["target"].get(target) || item["status"].get(table_status) ||
        item["replica_identity_full"].get(table.replica_identity_full) || item["committed_lsn"].get(committed) ||
        item["rows"].get(table.rows) || item["last_write_ms"].get(table.last_write_ms)) {
      return Corrupt("a table needs source, target, status, replica_identity_full, committed_lsn, rows and "
                     "last_write_ms");
    }
    if (item["reason"].get(reason) == simdjson::SUCCESS) table.reason = reason;
    table.source = source;
    table.history = target;
    table.status = table_status;
    SLUICE_ASSIGN_OR_RETURN(table.committed_lsn, ParseLsn(committed));
    view.tables.push_back(std::move(table));
  }
  return view;
}

}  // namespace sluice::pipeline
