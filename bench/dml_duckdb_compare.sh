#!/usr/bin/env bash
# sluice's MERGE and DELETE (copy-on-write, and with deletion vectors: `_dv`, on a Delta table of
# FILES Parquet files) beside DuckDB
# doing the same to the same rows, both on one thread: ROWS target rows (default 10 million), a
# MERGE of 1% updates and 1% inserts whose ids are spread over the whole table or clustered in one
# range, and a DELETE of 1% spread. DuckDB works on its own in-memory table loaded from the same
# Parquet file; since sluice's result is Parquet files, DuckDB's time to write its whole table back
# to Parquet is shown too (the work a copy-on-write of every file does).
#
#   bash bench/dml_duckdb_compare.sh [ROWS] [FILES]
#
# Builds dml_bench in ${SLUICE_BENCH_DIR:-build-bench} (Release) when needed; needs the test tools
# (scripts/install-test-tools.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rows=${1:-10000000}
files=${2:-80}
source "$root/bench/duckdb_compare_support.sh"
build_benches dml_bench
onepct=$((rows / 100))
rowsql="id::BIGINT AS id, (id % 1000)::BIGINT AS qty, 'item-' || (id % 5000)::VARCHAR AS name"
duck_lines "COPY (SELECT $rowsql FROM range(0, $rows) t(id)) TO '$work/target.parquet' (FORMAT parquet)" \
  "COPY (SELECT id, qty + 1 AS qty, name FROM (SELECT $rowsql FROM range(0, $rows, 100) t(id))
         UNION ALL SELECT $rowsql FROM range($rows, $rows + $onepct) t(id)) TO '$work/spread.parquet' (FORMAT parquet)" \
  "COPY (SELECT id, qty + 1 AS qty, name FROM (SELECT $rowsql FROM range($((rows / 2)), $((rows / 2 + onepct))) t(id))
         UNION ALL SELECT $rowsql FROM range($rows, $rows + $onepct) t(id)) TO '$work/clustered.parquet' (FORMAT parquet)" >/dev/null

merge="MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
duck_run() {  # $1: source file or empty for the delete; prints the operation's and the write-back's seconds
  local op="$merge"
  [[ -z "$1" ]] && op="DELETE FROM t WHERE id % 100 = 50"
  duck_lines "CREATE TABLE t AS FROM '$work/target.parquet'" "CREATE TABLE s AS FROM '${1:-$work/spread.parquet}'" "$op" \
    "COPY t TO '$work/out.parquet' (FORMAT parquet)" | awk 'NR >= 4 { sub(/^seconds=/, ""); sub(/ .*/, ""); printf "%s ", $0 }'
}
read -r duck_spread duck_spread_write <<<"$(duck_run "$work/spread.parquet")"
read -r duck_clustered duck_clustered_write <<<"$(duck_run "$work/clustered.parquet")"
read -r duck_delete duck_delete_write <<<"$(duck_run "")"
sluice_out=$("$build/dml_bench" "$work/target.parquet" "$work/spread.parquet" "$work/clustered.parquet" --files "$files")
field() { grep "op=$1 " <<<"$sluice_out" | sed "s/.* $2=\([0-9.]*\).*/\1/"; }
for op in merge_spread merge_clustered delete_spread merge_spread_dv merge_clustered_dv delete_spread_dv; do
  case $op in
    merge_spread*) d=$duck_spread; w=$duck_spread_write ;;
    merge_clustered*) d=$duck_clustered; w=$duck_clustered_write ;;
    delete_spread*) d=$duck_delete; w=$duck_delete_write ;;
  esac
  s=$(field $op seconds)
  printf "%-18s sluice %7.3f s (%s files rewritten)   DuckDB %7.3f s + write-back %7.3f s   ratio vs DuckDB op: %.2fx, vs op + write-back: %.2fx\n" \
    "$op" "$s" "$(field $op files_removed)" "$d" "$w" "$(awk -v a="$d" -v b="$s" 'BEGIN { print a / b }')" \
    "$(awk -v a="$d" -v w="$w" -v b="$s" 'BEGIN { print (a + w) / b }')"
done
for op in merge_spread merge_clustered delete_spread; do
  awk -v c="$(field $op seconds)" -v d="$(field ${op}_dv seconds)" -v o="$op" \
    'BEGIN { printf "%-18s deletion vectors vs copy-on-write: %.1fx\n", o, c / d }'
done
