#!/usr/bin/env bash
# The whole test suite on a new machine: installs what is needed, builds, runs the unit and
# integration tests (PostgreSQL servers and Kafka mock clusters are started by the tests
# themselves), then builds the unit tests with AddressSanitizer + UndefinedBehaviorSanitizer and
# with ThreadSanitizer and runs them again, and runs every fuzz target from its committed seeds
# (scripts/fuzz-all.sh: 20 seconds each). Exits non-zero when
# anything fails.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc)

bash "$root/scripts/install-deps.sh"
if [[ -f "$root/scripts/install-test-tools.sh" ]]; then
  bash "$root/scripts/install-test-tools.sh"
fi

echo "== build"
bash "$root/scripts/build.sh"
echo "== unit and integration tests"
(cd "${SLUICE_BUILD_DIR:-$root/build}" && ctest --output-on-failure -j"$jobs")

echo "== Python package: pip install, then its pytest suites"
# `pip install .` as a user runs it, into the test tools' virtual environment (which holds the
# build tools and pyarrow at pinned versions), building in the build directory above so that only
# the Python module is compiled again.
venv="$root/tests/tools/venv"
export CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=1
"$venv/bin/pip" install --quiet --disable-pip-version-check --no-build-isolation \
  -Cbuild-dir="${SLUICE_BUILD_DIR:-$root/build}" "$root"
(cd "$root/python/tests" && "$venv/bin/python" -m pytest -q -p no:cacheprovider)

echo "== unit tests under ASan + UBSan"
asan=${SLUICE_ASAN_BUILD_DIR:-$root/build-asan}
export CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=1
# Line tables (-g1) are all the sanitizers need for readable stack traces.
cmake -S "$root" -B "$asan" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DSLUICE_SANITIZE=ON \
  -DSLUICE_ONLY_UNIT=ON >/dev/null
cmake --build "$asan" -j"$jobs" --target unit_tests
(cd "$asan" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j"$jobs" -L unit)

echo "== threaded tests under ThreadSanitizer"
# The unit tests (the piece pipe, pipeline runs) and the PostgreSQL integration tests that run
# threads of their own (the real-time writer's tasks, the change feed, flows reading its history,
# the batch writer's sending thread and partitioned batch reads).
# Tests on librdkafka's mock cluster are left out: Debian's librdkafka starts threads TSan's
# runtime does not know, and its allocator crashes in them.
tsan=${SLUICE_TSAN_BUILD_DIR:-$root/build-tsan}
cmake -S "$root" -B "$tsan" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DSLUICE_TSAN=ON >/dev/null
cmake --build "$tsan" -j"$jobs" --target unit_tests connectors_integration_tests pipeline_integration_tests
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$root/scripts/tsan.supp"
(cd "$tsan" && ctest --output-on-failure -j"$jobs" -L unit)
"$tsan/connectors_integration_tests" --gtest_brief=1 \
  --gtest_filter='PostgresSinkRealTimeTest.*:PostgresSinkTest.*:PgUpsertWriterTest.*:ChangeFeedTest.*:PgBatchTest.*'
"$tsan/pipeline_integration_tests" --gtest_brief=1 \
  --gtest_filter='ChangeFeedPipelineTest.*:CopyIntegrationTest.*:PipelineCrashTest.*:*AggregationCrashTest.*:CatalogServerFeedTest.*'
unset TSAN_OPTIONS

echo "== fuzz targets: 20 s each"
bash "$root/scripts/fuzz-all.sh" 20
