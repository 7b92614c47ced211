#!/usr/bin/env bash
# The change feed against pg_recvlogical (pgoutput, the same publication) reading the same WAL to
# /dev/null, and against Debezium (its embedded engine with the PostgreSQL connector, pgoutput,
# serializing each change to JSON written nowhere: bench/debezium), in one run on a private
# PostgreSQL 15 (`sluice postgres-embedded`).
#
#   bash bench/change_feed_bench.sh [INSERTS] [UPDATES]      (default 1000000 and 500000)
#
# Every consumer has a slot created before the writes; the writes (INSERTS rows in one INSERT,
# then UPDATES rows in one UPDATE, table with REPLICA IDENTITY FULL) run while none reads. Then
# each consumer, one after the other, reads from its slot: sluice into Delta history tables
# (flush_interval 1 second) until it has confirmed the WAL position after the writes,
# pg_recvlogical to /dev/null until that position, Debezium until it has handed over every change
# (its JVM's start included; the time from its first change to its last is printed too). Prints
# changes/s for each and the ratios sluice/pg_recvlogical and sluice/Debezium.
#
# Debezium's jars come from the Maven registry into bench/debezium/jars (bench/debezium/pom.xml)
# when the folder is missing; the harness is compiled with javac at every run.
#
# Uses `sluice` of ${SLUICE_BENCH_DIR:-build-bench}, building it (Release) when it is missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
inserts=${1:-1000000}
updates=${2:-500000}
build=${SLUICE_BENCH_DIR:-$root/build-bench}
pgbin=$(pg_config --bindir 2>/dev/null || echo /usr/lib/postgresql/15/bin)
[[ -x "$pgbin/pg_recvlogical" ]] || pgbin=/usr/lib/postgresql/15/bin
work=$(mktemp -d)
chmod o+x "$work"  # the server runs as another OS user when the bench runs as root
server_pid=""
feed_pid=""
debezium_pid=""
cleanup() {
  [[ -n "$feed_pid" ]] && kill "$feed_pid" 2>/dev/null && wait "$feed_pid" 2>/dev/null
  [[ -n "$debezium_pid" ]] && kill "$debezium_pid" 2>/dev/null && wait "$debezium_pid" 2>/dev/null
  [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

if [[ ! -x "$build/sluice" ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" --target sluice -j"$(nproc)" >/dev/null
fi
sluice="$build/sluice"

"$sluice" postgres-embedded --dir "$work/pg" >"$work/pg.out" 2>"$work/pg.err" &
server_pid=$!
for _ in $(seq 600); do [[ -s "$work/pg.out" ]] && break; sleep 0.2; done
[[ -s "$work/pg.out" ]] || { cat "$work/pg.err"; exit 1; }
conninfo=$(head -n 1 "$work/pg.out")
port=$(sed 's/.*port=\([0-9]*\).*/\1/' <<<"$conninfo")
user=$(sed "s/.*user='\([^']*\)'.*/\1/" <<<"$conninfo")
sql() { "$pgbin/psql" "host=127.0.0.1 port=$port user=$user dbname=postgres" -qtAX -c "$1"; }
feed=(--host 127.0.0.1 --port "$port" --user "$user" --schema public --target main.cdc --warehouse "$work/wh")

sql "CREATE TABLE bench (id bigint PRIMARY KEY, name text, qty int); ALTER TABLE bench REPLICA IDENTITY FULL"
# Sets up the publication and slot (the table is empty: no snapshot), then stops, keeping the slot.
"$sluice" cdf start "${feed[@]}" 2>"$work/feed.log" &
feed_pid=$!
for _ in $(seq 100); do [[ -s "$work/wh/main/cdc/_change_feeds/sluice_cdf_postgres_public/status.json" ]] && break; sleep 0.1; done
"$sluice" cdf stop "${feed[@]}" >/dev/null
wait "$feed_pid" || true
feed_pid=""
publication=sluice_cdf_postgres_public
"$pgbin/pg_recvlogical" -d "host=127.0.0.1 port=$port user=$user dbname=postgres" -S bench_recv --create-slot -P pgoutput

# Debezium: its jars, the harness compiled, and a first run that creates its slot and publication.
debezium="$root/bench/debezium"
if [[ ! -d "$debezium/jars" ]]; then
  (cd "$debezium" && mvn -q -B dependency:copy-dependencies -DoutputDirectory=jars -DincludeScope=runtime)
fi
javac -cp "$debezium/jars/*" -d "$work/debezium" "$debezium/DebeziumToNull.java"
debezium_run=(java -cp "$debezium/jars/*:$work/debezium" DebeziumToNull "$port" "$user" "$work")
"${debezium_run[@]}" 0 >"$work/debezium.out" 2>"$work/debezium.err" &
debezium_pid=$!
until [[ "$(sql "SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'bench_dbz'")" == 1 ]]; do
  kill -0 "$debezium_pid" 2>/dev/null || { cat "$work/debezium.err"; exit 1; }
  sleep 0.2
done
kill "$debezium_pid" && wait "$debezium_pid" 2>/dev/null || true
debezium_pid=""
until [[ "$(sql "SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'bench_dbz' AND active")" == 0 ]]; do sleep 0.1; done

echo "== writing $inserts inserts and $updates updates"
sql "INSERT INTO bench SELECT g, 'name ' || g, g % 1000 FROM generate_series(1, $inserts) g"
sql "UPDATE bench SET qty = qty + 1 WHERE id <= $updates"
target=$(sql "SELECT pg_current_wal_lsn()")
changes=$((inserts + updates))

confirmed_past() { sql "SELECT confirmed_flush_lsn >= '$target' FROM pg_replication_slots WHERE slot_name = '$1'"; }
now() { date +%s.%N; }

start=$(now)
"$pgbin/pg_recvlogical" -d "host=127.0.0.1 port=$port user=$user dbname=postgres" -S bench_recv --start \
  -o proto_version=1 -o publication_names="$publication" -E "$target" -f /dev/null -s 1 -F 0
recv_seconds=$(awk -v a="$start" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }')

start=$(now)
"$sluice" cdf start "${feed[@]}" 2>>"$work/feed.log" &
feed_pid=$!
until [[ "$(confirmed_past sluice_cdf_postgres_public)" == "t" ]]; do
  kill -0 "$feed_pid" 2>/dev/null || { cat "$work/feed.log"; exit 1; }
  sleep 0.05
done
sluice_seconds=$(awk -v a="$start" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }')
"$sluice" cdf stop "${feed[@]}" >/dev/null
wait "$feed_pid" || true
feed_pid=""

start=$(now)
debezium_line=$("${debezium_run[@]}" "$changes" 2>"$work/debezium.err") || { cat "$work/debezium.err"; exit 1; }
debezium_seconds=$(awk -v a="$start" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }')
debezium_steady=$(awk '{ print $6 }' <<<"$debezium_line")

rows=$("$sluice" cdf status --json "${feed[@]}" | sed -n 's/.*"rows":\([0-9]*\).*/\1/p' | head -n 1)
rate() { awk -v c="$changes" -v s="$1" 'BEGIN { printf "%.0f", c / s }'; }
printf "pg_recvlogical: %8.3f s  %10s changes/s\n" "$recv_seconds" "$(rate "$recv_seconds")"
printf "sluice cdf:     %8.3f s  %10s changes/s  (%s history rows)\n" "$sluice_seconds" "$(rate "$sluice_seconds")" "$rows"
printf "debezium:       %8.3f s  %10s changes/s  (first change to last: %s s, %s changes/s)\n" "$debezium_seconds" \
  "$(rate "$debezium_seconds")" "$debezium_steady" "$(rate "$debezium_steady")"
echo "ratio sluice/pg_recvlogical (changes/s): $(awk -v a="$recv_seconds" -v b="$sluice_seconds" 'BEGIN { printf "%.2f", a / b }')x"
echo "ratio sluice/debezium (changes/s): $(awk -v a="$debezium_seconds" -v b="$sluice_seconds" 'BEGIN { printf "%.2f", a / b }')x"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
