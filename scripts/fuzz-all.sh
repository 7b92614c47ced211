#!/usr/bin/env bash
# Usage: scripts/fuzz-all.sh SECONDS
#
# Builds every libFuzzer target (src/<layer>/*_fuzz.cc) with clang, ASan and UBSan, then runs
# each from its committed seeds (src/<layer>/fuzz_seeds/TARGET/) for SECONDS seconds, two at a
# time. Exits non-zero when any target finds a crash; its output and the reproducer (in
# <build>/artifacts/TARGET/) name the input. scripts/fuzz.sh runs one target.
set -euo pipefail
if [[ $# -ne 1 ]]; then
  echo "usage: $0 SECONDS" >&2
  exit 2
fi
seconds=$1
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FUZZ_BUILD_DIR:-$root/build-fuzz}
export CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=1
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
  -DCMAKE_CXX_COMPILER=clang++ -DSLUICE_FUZZ=ON -DSLUICE_ONLY_UNIT=ON >/dev/null
mapfile -t targets < <(find "$root/src" -name '*_fuzz.cc' -printf '%f\n' | sed 's/\.cc$//' | sort)
cmake --build "$build" -j"$(nproc)" --target "${targets[@]}"

run_one() {
  local target=$1 seconds=$2 root=$3 build=$4
  local source
  source=$(find "$root/src" -name "$target.cc" | head -n 1)
  # A corpus of this run's own: the run starts from the committed seeds alone, as on a new machine
  # (scripts/fuzz.sh keeps its corpus between runs in <build>/corpus).
  local corpus=$build/suite-corpus/$target artifacts=$build/artifacts/$target/
  rm -rf "$corpus"
  mkdir -p "$corpus" "$artifacts"
  # A fixed seed keeps the suite's runs alike, though not identical: how many inputs fit in the
  # time, the order in which a clone's file system lists the seeds, and values such as now()
  # still steer libFuzzer, so a run here before a push does not rule out a finding in CI.
  # Longer runs by hand (scripts/fuzz.sh) explore at random.
  # An input slower than 10 s is reported (libFuzzer's exit code 70) but does not fail the suite:
  # slowness is not a memory error, and the reproducer is kept in the artifacts.
  local args=(-max_total_time="$seconds" -seed=1 -timeout=10 -timeout_exitcode=70 -print_final_stats=1
              -artifact_prefix="$artifacts" -rss_limit_mb=2048)
  [[ -f ${source%.cc}.dict ]] && args+=(-dict="${source%.cc}.dict")
  local dirs=("$corpus")
  [[ -d $(dirname "$source")/fuzz_seeds/$target ]] && dirs+=("$(dirname "$source")/fuzz_seeds/$target")
  local status=0
  "$build/$target" "${args[@]}" "${dirs[@]}" >"$build/$target.log" 2>&1 || status=$?
  if [[ $status -eq 0 ]]; then
    echo "fuzz $target: $(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$build/$target.log" | grep -o '[0-9]*$') runs, no finding"
  elif [[ $status -eq 70 ]]; then
    echo "fuzz $target: an input took over 10 s (kept in $artifacts); no memory error"
  else
    echo "fuzz $target: FOUND A CRASH" >&2
    tail -n 60 "$build/$target.log" >&2
    return 1
  fi
}
export -f run_one
printf '%s\n' "${targets[@]}" | xargs -P 2 -I{} bash -c 'run_one "$@"' _ {} "$seconds" "$root" "$build"
