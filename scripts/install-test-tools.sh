#!/usr/bin/env bash
# Installs the independent engines the interoperability tests compare sluice against: DuckDB, from
# the npm registry as @duckdb/node-api, into tests/tools/node_modules at the versions pinned by
# tests/tools/package-lock.json; and pyarrow, from the Python package index, into the virtual
# environment tests/tools/venv at the versions pinned by tests/tools/requirements.txt. Quick and
# silent when they are already installed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tools="$root/tests/tools"

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "install-test-tools: node and npm are needed (Debian: apt-get install nodejs npm)" >&2
  exit 1
fi
# Installed already when the lock file's packages are present and load.
if [[ ! -d "$tools/node_modules/@duckdb/node-api" ]] ||
   ! (cd "$tools" && node -e "import('@duckdb/node-api').then(() => process.exit(0), () => process.exit(1))" 2>/dev/null); then
  echo "== installing DuckDB in $tools"
  (cd "$tools" && npm ci --no-audit --no-fund --loglevel=error)
fi

# The pinned packages are installed when pip has nothing left to do for the requirements.
venv="$tools/venv"
if [[ ! -x "$venv/bin/python" ]] || ! "$venv/bin/python" -c "import pyarrow" 2>/dev/null ||
   [[ "$("$venv/bin/python" -c 'import pyarrow; print(pyarrow.__version__)')" != \
      "$(sed -n 's/^pyarrow==//p' "$tools/requirements.txt")" ]]; then
  echo "== installing pyarrow in $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$tools/requirements.txt"
fi
