// state.json and status.json of a change feed.
#include <simdjson.h>

#include <fmt/format.h>

#include "pg_change_feed_internal.h"
#include "sluice/core/error_classes.h"

namespace sluice::connectors::cdf {

namespace {

Status Corrupt(const std::string& path, std::string_view what) {
  return Status::Error(errors::kCdfStateCorrupt,
                       fmt::format("{} is not a change feed state: {}; remove the state directory and "
                                   "start the feed again (it re-snapshots every table)",
                                   path, what));
}

std::string ToLower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

}  // namespace

void AppendJsonString(std::string* out, std::string_view text) {
  out->push_back('"');
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(static_cast<char>(c));
    } else if (c < 0x20) {
      *out += fmt::format("\\u{:04x}", c);
    } else {
      out->push_back(static_cast<char>(c));
    }
  }
  out->push_back('"');
}

TableState* FeedState::FindTable(uint32_t oid) {
  for (TableState& table : tables) {
    if (table.oid == oid) return &table;
  }
  return nullptr;
}

namespace {

// The slot of the feed that owns the history name `claim` names: `slot` when the name was free
// (it is claimed for it now) or already its own.
Result<std::string> ClaimOwner(FileSystem& fs, const std::string& claim, const std::string& slot) {
  Status put = fs.PutIfAbsent(claim, slot);
  if (put.ok()) return slot;
  if (put.error_class() != errors::kFileAlreadyExists) return put;
  return fs.ReadFile(claim);
}

}  // namespace

Result<std::string> ClaimHistoryName(FileSystem& fs, const std::string& claims_directory, const FeedState& state,
                                     std::string_view source_name) {
  // A PostgreSQL name may hold any character; the history table's is a path name (PathNameProblem),
  // each other byte an underscore (a name made alike by this is told apart by a suffix below).
  std::string base = "lb_";
  for (char c : ToLower(source_name)) base += (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ? c : '_';
  base += "_history";
  auto taken_here = [&](const std::string& name) {
    for (const TableState& table : state.tables) {
      if (table.history_name == name) return true;
    }
    return false;
  };
  SLUICE_RETURN_IF_ERROR(fs.CreateDirectories(claims_directory));
  for (int n = 0;; ++n) {
    std::string candidate = n == 0 ? base : fmt::format("{}_{}", base, n);
    if (taken_here(candidate)) continue;
    // A claim of this feed's that a crash kept out of state.json is this feed's still.
    SLUICE_ASSIGN_OR_RETURN(std::string owner, ClaimOwner(fs, claims_directory + "/" + candidate, state.slot_name));
    if (owner == state.slot_name) return candidate;
  }
}

Status ClaimHistoryNames(FileSystem& fs, const std::string& claims_directory, const FeedState& state) {
  SLUICE_RETURN_IF_ERROR(fs.CreateDirectories(claims_directory));
  for (const TableState& table : state.tables) {
    SLUICE_ASSIGN_OR_RETURN(std::string owner,
                            ClaimOwner(fs, claims_directory + "/" + table.history_name, state.slot_name));
    if (owner != state.slot_name) {
      return Status::Error(errors::kCdfHistoryNameTaken,
                           fmt::format("the history table {} of change feed {} (for {}.{}) is written by change feed "
                                       "{} too; give one of the feeds another target",
                                       table.history_name, state.slot_name, table.source_schema, table.source_name,
                                       owner));
    }
  }
  return Status::OK();
}

Status WriteState(FileSystem& fs, const std::string& path, const FeedState& state) {
  std::string out = "{\"slot_name\":";
  AppendJsonString(&out, state.slot_name);
  out += fmt::format(",\"slot_dropped\":{},\"commit_lsn\":{},\"end_lsn\":{},\"next_sort_by\":{},\"tables\":[",
                     state.slot_dropped, state.commit_lsn, state.end_lsn, state.next_sort_by);
  bool first_table = true;
  for (const TableState& table : state.tables) {
    if (!first_table) out += ',';
    first_table = false;
    out += fmt::format("{{\"oid\":{},\"source_schema\":", table.oid);
    AppendJsonString(&out, table.source_schema);
    out += ",\"source_name\":";
    AppendJsonString(&out, table.source_name);
    out += ",\"history_name\":";
    AppendJsonString(&out, table.history_name);
    out += fmt::format(",\"replica_identity\":\"{}\",\"status\":", table.replica_identity);
    AppendJsonString(&out, table.status);
    out += ",\"reason\":";
    AppendJsonString(&out, table.reason);
    out += ",\"error\":";
    AppendJsonString(&out, table.error);
    out += fmt::format(",\"committed_lsn\":{},\"rows\":{},\"last_write_ms\":{},\"columns\":[", table.committed_lsn,
                       table.rows, table.last_write_ms);
    for (size_t i = 0; i < table.columns.size(); ++i) {
      if (i > 0) out += ',';
      out += "{\"name\":";
      AppendJsonString(&out, table.columns[i].name);
      out += fmt::format(",\"type_oid\":{},\"type_modifier\":{}}}", table.columns[i].type_oid,
                         table.columns[i].type_modifier);
    }
    out += "]}";
  }
  out += "]}\n";
  return fs.AtomicWrite(path, out);
}

Result<std::optional<FeedState>> ReadState(FileSystem& fs, const std::string& path) {
  auto text = fs.ReadFile(path);
  if (!text.ok()) {
    if (text.status().error_class() == errors::kFileNotFound) return std::optional<FeedState>();
    return text.status();
  }
  simdjson::dom::parser parser;
  simdjson::padded_string padded(*text);
  simdjson::dom::element root;
  if (parser.parse(padded).get(root) != simdjson::SUCCESS) return Corrupt(path, "not JSON");
  FeedState state;
  std::string_view slot;
  uint64_t commit_lsn = 0, end_lsn = 0;
  int64_t next_sort_by = 0;
  bool dropped = false;
  simdjson::dom::array tables;
  if (root["slot_name"].get(slot) || root["slot_dropped"].get(dropped) || root["commit_lsn"].get(commit_lsn) ||
      root["end_lsn"].get(end_lsn) || root["next_sort_by"].get(next_sort_by) || root["tables"].get(tables)) {
    return Corrupt(path, "a field is missing or has the wrong type");
  }
  state.slot_name = slot;
  state.slot_dropped = dropped;
  state.commit_lsn = commit_lsn;
  state.end_lsn = end_lsn;
  state.next_sort_by = next_sort_by;
  for (simdjson::dom::element item : tables) {
    TableState table;
    uint64_t oid = 0;
    std::string_view source_schema, source_name, history_name, identity, status, reason;
    uint64_t committed = 0;
    int64_t rows = 0, last_write = 0;
    simdjson::dom::array columns;
    if (item["oid"].get(oid) || item["source_schema"].get(source_schema) || item["source_name"].get(source_name) ||
        item["history_name"].get(history_name) || item["replica_identity"].get(identity) ||
        item["status"].get(status) || item["reason"].get(reason) || item["committed_lsn"].get(committed) ||
        item["rows"].get(rows) || item["last_write_ms"].get(last_write) || item["columns"].get(columns) ||
        identity.size() != 1 || oid > UINT32_MAX) {
      return Corrupt(path, "a table entry is malformed");
    }
    table.oid = static_cast<uint32_t>(oid);
    table.source_schema = source_schema;
    table.source_name = source_name;
    // Names written before they were path names may hold spaces and other bytes; none may leave the
    // target folder.
    if (history_name.empty() || history_name == "." || history_name == ".." ||
        history_name.find_first_of(std::string_view("/\0", 2)) != std::string_view::npos) {
      return Corrupt(path, "a history table name would leave the target folder");
    }
    table.history_name = history_name;
    table.replica_identity = identity[0];
    table.status = status;
    table.reason = reason;
    // Absent from the files of earlier versions.
    std::string_view error;
    if (item["error"].get(error) == simdjson::SUCCESS) table.error = error;
    table.committed_lsn = committed;
    table.rows = rows;
    table.last_write_ms = last_write;
    for (simdjson::dom::element column : columns) {
      std::string_view name;
      uint64_t type_oid = 0;
      int64_t modifier = 0;
      if (column["name"].get(name) || column["type_oid"].get(type_oid) || column["type_modifier"].get(modifier) ||
          type_oid > UINT32_MAX || modifier < INT32_MIN || modifier > INT32_MAX) {
        return Corrupt(path, "a column entry is malformed");
      }
      table.columns.push_back({std::string(name), static_cast<uint32_t>(type_oid), static_cast<int32_t>(modifier)});
    }
    state.tables.push_back(std::move(table));
  }
  return std::optional<FeedState>(std::move(state));
}

std::string StatusJson(const FeedState& state, const FeedLag& lag, std::string_view feed_status,
                       std::string_view feed_error, const std::vector<SkippedTable>& skipped) {
  std::string out = "{\"status\":";
  AppendJsonString(&out, feed_status);
  if (!feed_error.empty()) {
    out += ",\"error\":";
    AppendJsonString(&out, feed_error);
  }
  out += ",\"slot_name\":";
  AppendJsonString(&out, state.slot_name);
  out += fmt::format(",\"slot_dropped\":{},\"confirmed_lsn\":\"{}\",\"slot_lag_bytes\":{},\"slot_lag_seconds\":{:.3f},"
                     "\"tables\":[",
                     state.slot_dropped, FormatLsn(state.end_lsn), lag.bytes, lag.seconds);
  bool first = true;
  for (const TableState& table : state.tables) {
    if (!first) out += ',';
    first = false;
    out += "\n  {\"source\":";
    AppendJsonString(&out, table.source_schema + "." + table.source_name);
    out += ",\"target\":";
    AppendJsonString(&out, table.history_name);
    out += ",\"status\":";
    AppendJsonString(&out, table.status);
    // The reason of a FAILED status is its error; otherwise why the history is incomplete.
    const std::string& reason = table.status == kFailed && !table.error.empty() ? table.error : table.reason;
    if (!reason.empty()) {
      out += ",\"reason\":";
      AppendJsonString(&out, reason);
    }
    out += fmt::format(",\"replica_identity_full\":{},\"committed_lsn\":\"{}\",\"last_write_ms\":{},\"rows\":{}}}",
                       table.replica_identity == 'f', FormatLsn(table.committed_lsn), table.last_write_ms, table.rows);
  }
  // Every field of a captured table's entry, so that readers need no special case.
  for (const SkippedTable& table : skipped) {
    if (!first) out += ',';
    first = false;
    out += "\n  {\"source\":";
    AppendJsonString(&out, table.schema + "." + table.name);
    out += ",\"target\":\"\",\"status\":";
    AppendJsonString(&out, kSkipped);
    out += ",\"reason\":";
    AppendJsonString(&out, table.reason);
    out += ",\"replica_identity_full\":false,\"committed_lsn\":\"0/0\",\"last_write_ms\":0,\"rows\":0}";
  }
  out += "]}\n";
  return out;
}

}  // namespace sluice::connectors::cdf
