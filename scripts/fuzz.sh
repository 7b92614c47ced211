#!/usr/bin/env bash
# Usage: scripts/fuzz.sh TARGET SECONDS
#
# Builds the libFuzzer target TARGET (a src/<layer>/TARGET.cc file) with clang, ASan and UBSan in
# a build directory of its own ($FUZZ_BUILD_DIR, default build-fuzz in the repository), then
# runs it for SECONDS seconds. The corpus grows in <build>/corpus/TARGET and is kept between runs;
# the inputs in src/<layer>/fuzz_seeds/TARGET/ seed it, and src/<layer>/TARGET.dict, when present,
# is given to libFuzzer as its dictionary. Exits non-zero
# when the fuzzer finds a crash (the reproducer is written to <build>/artifacts/TARGET/).
set -euo pipefail
if [[ $# -ne 2 ]]; then
  echo "usage: $0 TARGET SECONDS" >&2
  exit 2
fi
target=$1
seconds=$2
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FUZZ_BUILD_DIR:-$root/build-fuzz}

source=$(find "$root/src" -name "$target.cc" -path "*_fuzz.cc" | head -n 1)
if [[ -z $source ]]; then
  echo "no fuzz target $target: expected src/<layer>/$target.cc" >&2
  exit 2
fi

if [[ ! -f $build/build.ninja ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
    -DCMAKE_CXX_COMPILER=clang++ -DSLUICE_FUZZ=ON -DSLUICE_ONLY_UNIT=ON >/dev/null
fi
cmake --build "$build" --target "$target" -j2

corpus=$build/corpus/$target
artifacts=$build/artifacts/$target/
mkdir -p "$corpus" "$artifacts"
args=(-max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$artifacts")
dict=${source%.cc}.dict
if [[ -f $dict ]]; then
  args+=(-dict="$dict")
fi
dirs=("$corpus")
seeds=$(dirname "$source")/fuzz_seeds/$target
if [[ -d $seeds ]]; then
  dirs+=("$seeds")
fi
"$build/$target" "${args[@]}" "${dirs[@]}"
