#!/usr/bin/env bash
# Batch copies between PostgreSQL and Delta against psql's \copy and against Apache Spark's JDBC
# reader and writer with Delta Lake (the peer users would pick), in one run on a private
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
# as text. Then Spark (bench/spark_jdbc_copy.py) on the same server and rows: its JDBC read of the
# table into a new Delta table over one connection (local[1], fetchsize 10000), and split 2 and 4
# ways on id (numPartitions, local[2] and local[4]), and its JDBC write of sluice's Delta table
# into a new table (local[1], batchsize 10000, reWriteBatchedInserts=true). Each Spark copy is
# checked (row count and sum(amount); for the write, a fingerprint of every column against the
# source, as for sluice's write) before its figure is printed. Prints rows/s for each, Spark's both
# for the copy alone and with its session's start-up (JVM, jars, session), and the ratios
# sluice/psql and sluice/Spark (above 1: sluice is faster), with the machine's load average before
# and after (a busy machine skews both sides).
#
# Spark runs on the tests' Spark and Delta Lake (tests/tools/delta-spark: the venv's pyspark and the
# Delta jars, from scripts/install-test-tools.sh) with Java (JAVA_HOME or the PATH), and the
# PostgreSQL JDBC driver resolved from the Maven registry into bench/spark-jdbc/jars
# (bench/spark-jdbc/pom.xml) when it is not there. When any of them is missing, the script says
# that Spark was not measured and why, and prints the rest.
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
# Every column summed up, so that a copy that loses or mangles rows cannot look fast.
fingerprint() {
  sql "SELECT count(*), sum(id), sum(amount), sum(length(name)), count(*) FILTER (WHERE shipped),
              min(placed_at), max(placed_at) FROM $1"
}
source_fingerprint=$(fingerprint bench)
[[ "$(fingerprint bench_out)" == "$source_fingerprint" ]] || { echo "bench_out does not hold the rows of bench"; exit 1; }

# Spark: its JDBC read into Delta (one connection, then split 2 and 4 ways) and its JDBC write of
# sluice's Delta table into a new table, each run in a process of its own.
spark_python="$root/tests/tools/delta-spark/venv/bin/python"
spark_driver="$root/bench/spark-jdbc"
spark_skipped=""
if [[ ! -x "$spark_python" ]] || ! "$spark_python" -c "import pyspark" 2>/dev/null; then
  spark_skipped="no pyspark in tests/tools/delta-spark/venv (scripts/install-test-tools.sh installs it)"
elif ! ls "$root"/tests/tools/delta-spark/jars/delta-spark_*.jar >/dev/null 2>&1; then
  spark_skipped="no Delta Lake jars in tests/tools/delta-spark/jars (scripts/install-test-tools.sh installs them)"
elif ! [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/java" ]] && ! command -v java >/dev/null; then
  spark_skipped="no Java (no java on the PATH, and JAVA_HOME names none)"
elif ! ls "$spark_driver"/jars/postgresql-*.jar >/dev/null 2>&1; then
  if ! command -v mvn >/dev/null; then
    spark_skipped="no PostgreSQL JDBC driver in bench/spark-jdbc/jars, and no mvn to resolve it"
  elif ! (cd "$spark_driver" && mvn -q -B dependency:copy-dependencies -DoutputDirectory=jars \
            -DexcludeTransitive=true) >"$work/mvn.log" 2>&1; then
    spark_skipped="mvn could not resolve the PostgreSQL JDBC driver (bench/spark-jdbc/pom.xml): $(grep -m 1 ERROR \
      "$work/mvn.log" || tail -n 1 "$work/mvn.log")"
  fi
fi
spark_field() { "$spark_python" -c 'import json, sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }
# spark_copy NAME MODE ARGS...: runs one copy, checks it, and keeps its time (spark_seconds[NAME])
# and its time with the session's start-up (spark_total[NAME]).
declare -A spark_seconds spark_total
spark_copy() {
  local name=$1 out
  shift
  [[ -z "$spark_skipped" ]] || return 0
  if ! out=$("$spark_python" "$root/bench/spark_jdbc_copy.py" "$@" 2>"$work/spark-$name.err" | tail -n 1) ||
     [[ "$out" != "{"* ]]; then
    spark_skipped="its $name failed: $(grep -m 1 -E 'Exception|Error' "$work/spark-$name.err" || tail -n 1 "$work/spark-$name.err")"
    return 0
  fi
  if [[ "$(spark_field "$out" rows)" != "$rows" || "$(spark_field "$out" sum_amount)" != "$source_amount" ]]; then
    spark_skipped="its $name gave $(spark_field "$out" rows) rows of sum(amount) $(spark_field "$out" sum_amount), not $rows rows of $source_amount"
    return 0
  fi
  spark_version=$(spark_field "$out" spark)
  spark_seconds[$name]=$(awk -v s="$(spark_field "$out" seconds)" 'BEGIN { printf "%.3f", s }')
  spark_total[$name]=$(awk -v s="$(spark_field "$out" seconds)" -v u="$(spark_field "$out" startup_seconds)" \
    'BEGIN { printf "%.3f", s + u }')
}
if [[ -z "$spark_skipped" ]]; then
  source_amount=$(sql "SELECT sum(amount) FROM bench")
  jdbc_url="jdbc:postgresql://127.0.0.1:$port/postgres"
  spark_copy read read "$jdbc_url" "$user" bench "$work/spark/read"
  for connections in 2 4; do
    spark_copy "read$connections" read-split "$connections" "$jdbc_url" "$user" bench "$work/spark/read$connections"
  done
  sql "CREATE TABLE bench_spark (LIKE bench)"
  spark_copy write write "$SLUICE_WAREHOUSE/main/bench/copy" "$jdbc_url" "$user" bench_spark
  if [[ -z "$spark_skipped" && "$(fingerprint bench_spark)" != "$source_fingerprint" ]]; then
    spark_skipped="its write left bench_spark unlike bench: $(fingerprint bench_spark | tr '\n' ' ')"
  fi
fi

# ", Nx spark (Mx with its start-up)" for a sluice time against Spark's copy NAME, when measured.
versus_spark() {
  [[ -z "$spark_skipped" ]] || return 0
  printf ", %sx spark (%sx with its start-up)" "$(ratio "$1" "${spark_seconds[$2]}")" "$(ratio "$1" "${spark_total[$2]}")"
}
# Spark's line for its copy NAME.
spark_line() {
  printf "%-34s %9s s %12s rows/s   with its session's start-up: %s s, %s rows/s\n" "$1" "${spark_seconds[$2]}" \
    "$(rate "${spark_seconds[$2]}")" "${spark_total[$2]}" "$(rate "${spark_total[$2]}")"
}

if [[ -n "$spark_skipped" ]]; then
  echo "Spark was not measured: $spark_skipped"
else
  echo "Spark $spark_version, $(basename "$(ls "$root"/tests/tools/delta-spark/jars/delta-spark_*.jar | head -n 1)" .jar)," \
    "$(basename "$(ls "$spark_driver"/jars/postgresql-*.jar | head -n 1)" .jar)"
fi
printf "%-34s %9s s %12s rows/s\n" "psql \\copy (query) TO /dev/null" "$psql_read" "$(rate "$psql_read")"
if [[ -z "$spark_skipped" ]]; then
  spark_line "spark jdbc postgres -> delta" read
  for connections in 2 4; do
    spark_line "spark ... $connections partitions, local[$connections]" "read$connections"
  done
fi
printf "%-34s %9s s %12s rows/s   %sx psql%s\n" "sluice copy postgres -> delta" "$sluice_read" "$(rate "$sluice_read")" \
  "$(ratio "$sluice_read" "$psql_read")" "$(versus_spark "$sluice_read" read)"
for connections in 2 4; do
  printf "%-34s %9s s %12s rows/s   %sx psql, %sx one connection%s\n" "sluice copy ... $connections connections" \
    "${sluice_parallel[$connections]}" "$(rate "${sluice_parallel[$connections]}")" \
    "$(ratio "${sluice_parallel[$connections]}" "$psql_read")" "$(ratio "${sluice_parallel[$connections]}" "$sluice_read")" \
    "$(versus_spark "${sluice_parallel[$connections]}" "read$connections")"
done
printf "%-34s %9s s %12s rows/s   %sx psql, %sx one connection\n" "sluice copy ... 16 ranges, 4/batch" \
  "$sluice_resumable" "$(rate "$sluice_resumable")" "$(ratio "$sluice_resumable" "$psql_read")" \
  "$(ratio "$sluice_resumable" "$sluice_read")"
printf "%-34s %9s s %12s rows/s\n" "psql \\copy ... FROM file" "$psql_write" "$(rate "$psql_write")"
[[ -n "$spark_skipped" ]] || spark_line "spark jdbc delta -> postgres" write
printf "%-34s %9s s %12s rows/s   %sx psql%s\n" "sluice copy delta -> postgres" "$sluice_write" "$(rate "$sluice_write")" \
  "$(ratio "$sluice_write" "$psql_write")" "$(versus_spark "$sluice_write" write)"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
