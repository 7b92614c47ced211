#!/usr/bin/env bash
# OPTIMIZE of a Delta table of FILES small files (default 10,000 appends of ROWS rows, 100 by
# default) by sluice, beside delta-rs (the `deltalake` package, `optimize.compact()`) compacting a
# copy of the same table, both on one thread (delta-rs: max_concurrent_tasks=1) and into files of
# the same target size (128 MiB), and beside the bare work: DuckDB copying the table's Parquet
# files into one (`SET threads=1`). Both tables are checked to hold every row afterwards.
#
#   bash bench/optimize_compare.sh [FILES] [ROWS]
#
# Builds optimize_bench in ${SLUICE_BENCH_DIR:-build-bench} (Release) when needed; needs the test
# tools (scripts/install-test-tools.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
files=${1:-10000}
rows=${2:-100}
source "$root/bench/duckdb_compare_support.sh"
build_benches optimize_bench
"$build/optimize_bench" make "$work/table" --files "$files" --rows "$rows"
cp -r "$work/table" "$work/table-rs"
duck_seconds=$(duck "COPY (FROM read_parquet('$work/table/*.parquet')) TO '$work/copied.parquet' (FORMAT parquet)")
sluice_out=$("$build/optimize_bench" run "$work/table")
rs_out=$("$root/tests/tools/venv/bin/python" - "$work/table-rs" <<'EOF'
import os
import sys
import time

from deltalake import DeltaTable

table = DeltaTable(sys.argv[1])
start = time.perf_counter()
metrics = table.optimize.compact(target_size=128 * 1024 * 1024, max_concurrent_tasks=1)
seconds = time.perf_counter() - start
rows = DeltaTable(sys.argv[1]).to_pyarrow_table().num_rows
print(f"seconds={seconds:.3f} files_removed={metrics['numFilesRemoved']} files_added={metrics['numFilesAdded']} rows={rows}",
      flush=True)
# deltalake's runtime threads abort the interpreter's normal exit here ("terminate called without
# an active exception"); the figure is out, so leave at once.
os._exit(0)
EOF
)
field() { sed "s/.*$2=\([0-9.]*\).*/\1/" <<<"$1"; }
expected=$((files * rows))
for out in "$sluice_out" "$rs_out"; do
  if [[ "$(field "$out" rows)" != "$expected" ]]; then
    echo "a compacted table does not hold the $expected rows: $out" >&2
    exit 1
  fi
done
s=$(field "$sluice_out" seconds)
r=$(field "$rs_out" seconds)
printf "optimize of %d files (%d rows)  sluice %7.3f s (%s files into %s)   delta-rs %7.3f s (%s files into %s)   DuckDB copy %7.3f s   ratio vs delta-rs: %.2fx, vs DuckDB: %.2fx\n" \
  "$files" "$expected" "$s" "$(field "$sluice_out" files_removed)" "$(field "$sluice_out" files_added)" \
  "$r" "$(field "$rs_out" files_removed)" "$(field "$rs_out" files_added)" "$duck_seconds" \
  "$(awk -v a="$r" -v b="$s" 'BEGIN { print a / b }')" "$(awk -v a="$duck_seconds" -v b="$s" 'BEGIN { print a / b }')"
