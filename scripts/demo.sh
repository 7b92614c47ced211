#!/usr/bin/env bash
# The main job on a new machine: installs what is needed, builds the `sluice` command and runs the
# demo pipeline on the embedded defaults (embedded Kafka, embedded PostgreSQL, a local warehouse
# under ./sluice-demo). Arguments are passed to `sluice demo`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/install-deps.sh"
bash "$root/scripts/build.sh" --target sluice
exec "${SLUICE_BUILD_DIR:-$root/build}/sluice" demo "$@"
