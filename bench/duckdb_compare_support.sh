# Sourced by the bench/*_duckdb_compare.sh scripts once they set `root`: a work folder removed on
# exit, the bench binaries built in ${SLUICE_BENCH_DIR:-build-bench} (Release), and DuckDB on one
# thread timing statements in one in-memory session (tests/tools/duckdb_timed.mjs).
build=${SLUICE_BENCH_DIR:-$root/build-bench}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# build_benches TARGET...: the test tools installed, the bench build configured when it is not,
# and the targets built.
build_benches() {
  bash "$root/scripts/install-test-tools.sh" >/dev/null
  if [[ ! -f "$build/build.ninja" ]]; then
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSLUICE_BENCH=ON >/dev/null
  fi
  cmake --build "$build" --target "$@" -j"$(nproc)" >/dev/null
}

# duck_lines SQL...: a `seconds=S sql=...` line per statement.
duck_lines() { (cd "$root/tests/tools" && node duckdb_timed.mjs "SET threads=1" "$@"); }
# duck SQL...: the seconds of the last statement.
duck() { duck_lines "$@" | tail -n 1 | sed 's/^seconds=\([0-9.]*\).*/\1/'; }
