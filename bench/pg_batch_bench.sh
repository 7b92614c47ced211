#!/usr/bin/env bash
# Batch copies between PostgreSQL and Delta against psql's \copy, in one run on a private
# PostgreSQL 15 (`sluice postgres-embedded`).
#
#   bash bench/pg_batch_bench.sh [ROWS]        (default 500000; the reference figure is 5000000)
#
# The table: id bigint, name text, amount numeric(12,2), placed_at timestamptz, shipped boolean.
# Read: `sluice copy` of the whole table into a Delta table of a fresh warehouse, over one
# connection, split by block ranges over 2 and 4 (num_partitions), and resumable (16 ranges, 4 per
# batch: partitions_per_batch, a commit per batch), next to
# `psql \copy (SELECT * FROM bench) TO /dev/null`. Write: `sluice copy` of that Delta table into a new
# table (mode append: binary COPY), next to `psql \copy bench_in FROM file` of the same rows dumped
# as text. Prints rows/s for each and the ratio sluice/psql (above 1: sluice is faster), with the
# machine's load average before and after (a busy machine skews both sides).
#
# Builds `sluice` in ${SLUICE_BENCH_DIR:-build-bench} (Release) when needed, unless SLUICE_BIN names
# the binary to measure.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rows=${1:-500000}
build=${SLUICE_BENCH_DIR:-$root/build-bench}
pgbin=/usr/lib/postgresql/15/bin
work=$(mktemp -d)
chmod o+x "$work"  # the server runs as an unprivileged OS user when we are root
server_pid=""
cleanup() {
  [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

sluice=${SLUICE_BIN:-}
if [[ -z "$sluice" ]]; then
  if [[ ! -x "$build/sluice" ]]; then
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  fi
  cmake --build "$build" --target sluice -j"$(nproc)" >/dev/null
  sluice="$build/sluice"
fi

"$sluice" postgres-embedded --dir "$work/pg" >"$work/pg.out" 2>"$work/pg.err" &
server_pid=$!
for _ in $(seq 300); do [[ -s "$work/pg.out" ]] && break; sleep 0.2; done
[[ -s "$work/pg.out" ]] || { echo "the PostgreSQL server did not start:"; cat "$work/pg.err"; exit 1; }
conninfo=$(head -n 1 "$work/pg.out")
port=$(sed 's/.*port=\([0-9]*\).*/\1/' <<<"$conninfo")
user=$(sed "s/.*user='\([^']*\)'.*/\1/" <<<"$conninfo")
psql_conn="host=127.0.0.1 port=$port user=$user dbname=postgres"
sql() { "$pgbin/psql" "$psql_conn" -qtAX -v ON_ERROR_STOP=1 -c "$1"; }
export SLUICE_WAREHOUSE="$work/wh"
"$sluice" connection create bench --type postgresql -o host=127.0.0.1 -o "port=$port" -o "user=$user" \
  -o database=postgres >/dev/null

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }
rate() { awk -v n="$rows" -v s="$1" 'BEGIN { printf "%.0f", n / s }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b / a }'; }

echo "== $rows rows (load average before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores)"
sql "CREATE TABLE bench (id bigint PRIMARY KEY, name text, amount numeric(12,2), placed_at timestamptz, shipped boolean);
     INSERT INTO bench SELECT g, 'customer ' || g, (g % 100000) / 100.0,
                              '2024-01-01'::timestamptz + g * interval '1 second', g % 3 = 0
                       FROM generate_series(1, $rows) g"
sql "VACUUM ANALYZE bench"
sql "CREATE TABLE bench_in (LIKE bench)"

start=$(now)
sql "\\copy (SELECT * FROM bench) TO /dev/null"
psql_read=$(elapsed "$start")
start=$(now)
"$sluice" copy --from postgresql:connection=bench,dbtable=bench --to main.bench.copy >/dev/null
sluice_read=$(elapsed "$start")
# The same read split by block ranges over 2 and 4 connections under one snapshot.
declare -A sluice_parallel
for connections in 2 4; do
  start=$(now)
  "$sluice" copy --from "postgresql:connection=bench,dbtable=bench,num_partitions=$connections" \
    --to "main.bench.copy$connections" >/dev/null
  sluice_parallel[$connections]=$(elapsed "$start")
done
# Resumable: 16 block ranges, 4 per batch (4 connections at a time, a Delta commit per batch,
# the checkpoint kept so that a killed copy resumes batch by batch).
start=$(now)
"$sluice" copy --from "postgresql:connection=bench,dbtable=bench,num_partitions=16,partitions_per_batch=4" \
  --to main.bench.resumable --checkpoint "$work/resumable" >/dev/null
sluice_resumable=$(elapsed "$start")

sql "\\copy bench TO '$work/bench.txt'"
start=$(now)
sql "\\copy bench_in FROM '$work/bench.txt'"
psql_write=$(elapsed "$start")
start=$(now)
"$sluice" copy --from main.bench.copy --to postgresql:connection=bench,dbtable=bench_out,mode=append >/dev/null
sluice_write=$(elapsed "$start")
[[ "$(sql "SELECT count(*) FROM bench_out")" == "$rows" ]] || { echo "bench_out does not hold $rows rows"; exit 1; }

printf "%-34s %9s s %12s rows/s\n" "psql \\copy (query) TO /dev/null" "$psql_read" "$(rate "$psql_read")"
printf "%-34s %9s s %12s rows/s   %sx psql\n" "sluice copy postgres -> delta" "$sluice_read" "$(rate "$sluice_read")" \
  "$(ratio "$sluice_read" "$psql_read")"
for connections in 2 4; do
  printf "%-34s %9s s %12s rows/s   %sx psql, %sx one connection\n" "sluice copy ... $connections connections" \
    "${sluice_parallel[$connections]}" "$(rate "${sluice_parallel[$connections]}")" \
    "$(ratio "${sluice_parallel[$connections]}" "$psql_read")" "$(ratio "${sluice_parallel[$connections]}" "$sluice_read")"
done
printf "%-34s %9s s %12s rows/s   %sx psql, %sx one connection\n" "sluice copy ... 16 ranges, 4/batch" \
  "$sluice_resumable" "$(rate "$sluice_resumable")" "$(ratio "$sluice_resumable" "$psql_read")" \
  "$(ratio "$sluice_resumable" "$sluice_read")"
printf "%-34s %9s s %12s rows/s\n" "psql \\copy ... FROM file" "$psql_write" "$(rate "$psql_write")"
printf "%-34s %9s s %12s rows/s   %sx psql\n" "sluice copy delta -> postgres" "$sluice_write" "$(rate "$sluice_write")" \
  "$(ratio "$sluice_write" "$psql_write")"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
