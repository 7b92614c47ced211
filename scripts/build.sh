#!/usr/bin/env bash
# Configures and builds sluice into build/ (or $SLUICE_BUILD_DIR), as a Release build without
# debug info unless $SLUICE_BUILD_TYPE says otherwise (RelWithDebInfo for debugging): the suite
# builds twice on small machines and debug info roughly doubles link time. Extra arguments are
# passed to `cmake --build`, e.g. `--target sluice`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${SLUICE_BUILD_DIR:-$root/build}
# Compiler cache entries are keyed on paths relative to the checkout, so clones share them.
export CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=1
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="${SLUICE_BUILD_TYPE:-Release}" >/dev/null
cmake --build "$build" -j"$(nproc)" "$@"
