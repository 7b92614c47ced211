#!/usr/bin/env bash
# Installs the independent engines the interoperability tests compare sluice against (DuckDB,
# from the npm registry as @duckdb/node-api) into tests/tools/node_modules, at the versions
# pinned by tests/tools/package-lock.json. Quick and silent when they are already installed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tools="$root/tests/tools"

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "install-test-tools: node and npm are needed (Debian: apt-get install nodejs npm)" >&2
  exit 1
fi
# Installed already when the lock file's packages are present and load.
if [[ -d "$tools/node_modules/@duckdb/node-api" ]] &&
   (cd "$tools" && node -e "import('@duckdb/node-api').then(() => process.exit(0), () => process.exit(1))" 2>/dev/null); then
  exit 0
fi
echo "== installing test tools in $tools"
(cd "$tools" && npm ci --no-audit --no-fund --loglevel=error)
