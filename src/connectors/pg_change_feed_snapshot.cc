// The change feed's snapshots: the tables of a schema as the catalog lists them, and a table's rows
// copied into its history table through a cursor, so memory stays bounded by one fetch.
#include <algorithm>
#include <charconv>
#include <chrono>

#include <fmt/format.h>

#include "pg_change_feed_internal.h"
#include "sluice/core/error_classes.h"

namespace sluice::connectors::cdf {

namespace {

constexpr int kFetchRows = 10000;

template <typename T>
Result<T> ParseNumber(const std::optional<std::string>& text, std::string_view what) {
  T value{};
  if (text) {
    auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
    if (ec == std::errc() && end == text->data() + text->size()) return value;
  }
  return Status::Error(errors::kPgQueryFailed, fmt::format("the server returned an unexpected {}", what));
}

}  // namespace

Result<std::vector<SourceColumn>> ListColumns(PgConnection& conn, uint32_t oid) {
  SLUICE_ASSIGN_OR_RETURN(PgRows rows,
                          conn.Query("SELECT attname, atttypid::bigint, atttypmod FROM pg_attribute "
                                     "WHERE attrelid = $1::oid AND attnum > 0 AND NOT attisdropped "
                                     "AND attgenerated = '' ORDER BY attnum",
                                     {std::to_string(oid)}));
  std::vector<SourceColumn> columns;
  for (const auto& row : rows) {
    if (row.size() != 3 || !row[0]) return Status::Error(errors::kPgQueryFailed, "unexpected pg_attribute row");
    SLUICE_ASSIGN_OR_RETURN(int64_t type_oid, ParseNumber<int64_t>(row[1], "type oid"));
    SLUICE_ASSIGN_OR_RETURN(int32_t modifier, ParseNumber<int32_t>(row[2], "type modifier"));
    columns.push_back({*row[0], static_cast<uint32_t>(type_oid), modifier});
  }
  return columns;
}

Result<std::vector<CatalogTable>> ListTables(PgConnection& conn, const std::string& schema) {
  SLUICE_ASSIGN_OR_RETURN(PgRows rows,
                          conn.Query("SELECT c.oid::bigint, n.nspname, c.relname, c.relreplident FROM pg_class c "
                                     "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 "
                                     "AND c.relkind IN ('r', 'p') AND c.relpersistence = 'p' "
                                     "AND NOT c.relispartition ORDER BY c.relname",
                                     {schema}));
  std::vector<CatalogTable> tables;
  for (const auto& row : rows) {
    if (row.size() != 4 || !row[1] || !row[2] || !row[3] || row[3]->size() != 1) {
      return Status::Error(errors::kPgQueryFailed, "unexpected pg_class row");
    }
    CatalogTable table;
    SLUICE_ASSIGN_OR_RETURN(int64_t oid, ParseNumber<int64_t>(row[0], "table oid"));
    table.oid = static_cast<uint32_t>(oid);
    table.schema = *row[1];
    table.name = *row[2];
    table.replica_identity = (*row[3])[0];
    SLUICE_ASSIGN_OR_RETURN(table.columns, ListColumns(conn, table.oid));
    tables.push_back(std::move(table));
  }
  return tables;
}

Result<std::vector<SkippedTable>> ListSkippedTables(PgConnection& conn, const std::string& schema,
                                                    const FeedState& state) {
  SLUICE_ASSIGN_OR_RETURN(PgRows rows,
                          conn.Query("SELECT c.oid::bigint, c.relname, c.relkind, c.relpersistence FROM pg_class c "
                                     "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 "
                                     "AND c.relkind IN ('r', 'p', 'f', 'm') AND NOT c.relispartition "
                                     "ORDER BY c.relname",
                                     {schema}));
  std::vector<SkippedTable> skipped;
  for (const auto& row : rows) {
    if (row.size() != 4 || !row[1] || !row[2] || !row[3] || row[2]->size() != 1 || row[3]->size() != 1) {
      return Status::Error(errors::kPgQueryFailed, "unexpected pg_class row");
    }
    SLUICE_ASSIGN_OR_RETURN(int64_t oid, ParseNumber<int64_t>(row[0], "table oid"));
    const char kind = (*row[2])[0];
    std::string reason;
    if (kind == 'f') {
      reason = "a foreign table: its rows live outside this server's write-ahead log, so no publication can publish it";
    } else if (kind == 'm') {
      reason = "a materialized view: publications do not publish materialized views";
    } else if ((*row[3])[0] == 'u') {
      reason = "UNLOGGED: its changes never reach the write-ahead log, so logical replication cannot capture them";
    } else if (std::find_if(state.tables.begin(), state.tables.end(), [&](const TableState& table) {
                 return table.oid == static_cast<uint32_t>(oid);
               }) == state.tables.end()) {
      reason = "empty so far: its history table appears with its first row";
    } else {
      continue;
    }
    skipped.push_back({schema, *row[1], std::move(reason)});
  }
  return skipped;
}

Result<int64_t> SnapshotTable(PgConnection& conn, const CatalogTable& table, Lsn snapshot_lsn, HistoryTable* history,
                              int64_t* next_sort_by, int64_t chunk_rows) {
  std::string select = "SELECT ";
  for (size_t i = 0; i < table.columns.size(); ++i) {
    if (i > 0) select += ", ";
    select += QuoteIdentifier(table.columns[i].name);
  }
  if (table.columns.empty()) select += "NULL";
  select += " FROM " + QuoteIdentifier(table.schema) + "." + QuoteIdentifier(table.name);
  SLUICE_RETURN_IF_ERROR(conn.Execute("DECLARE sluice_cdf_snapshot NO SCROLL CURSOR FOR " + select));
  const int64_t now = std::chrono::duration_cast<std::chrono::microseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  std::vector<TupleValue> tuple;
  int64_t copied = 0;
  for (;;) {
    SLUICE_ASSIGN_OR_RETURN(PgRows rows, conn.Query(fmt::format("FETCH {} FROM sluice_cdf_snapshot", kFetchRows)));
    if (rows.empty()) break;
    for (const auto& row : rows) {
      tuple.clear();
      for (size_t i = 0; i < table.columns.size() && i < row.size(); ++i) {
        if (row[i]) {
          tuple.push_back({TupleValue::Kind::kText, *row[i]});
        } else {
          tuple.push_back({TupleValue::Kind::kNull, {}});
        }
      }
      history->Append("insert", tuple, nullptr, snapshot_lsn, std::nullopt, now, (*next_sort_by)++);
      ++copied;
      if (history->buffered_rows() >= chunk_rows) SLUICE_RETURN_IF_ERROR(history->Flush().status());
    }
  }
  SLUICE_RETURN_IF_ERROR(conn.Execute("CLOSE sluice_cdf_snapshot"));
  return copied;
}

}  // namespace sluice::connectors::cdf
