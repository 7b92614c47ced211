#!/usr/bin/env bash
# Installs the independent peers the integration tests run beside sluice: DuckDB, from the npm
# registry as @duckdb/node-api, and Azurite, the Azure Blob Storage emulator the object-store tests
# run, into tests/tools/node_modules at the versions pinned by
# tests/tools/package-lock.json; pyarrow, from the Python package index, into the virtual
# environment tests/tools/venv at the versions pinned by tests/tools/requirements.txt (pyarrow,
# pyspark, deltalake, and moto, whose S3 server the object-store tests run); and an Apache
# Kafka broker, from the Maven registry, into tests/tools/kafka/libs/<version> at the versions listed
# in tests/tools/kafka/versions; and Spark with Delta Lake, pyspark into tests/tools/delta-spark/venv
# (tests/tools/delta-spark/requirements.txt) and the Delta jars from the Maven registry into
# tests/tools/delta-spark/jars (tests/tools/delta-spark/pom.xml); and the Delta kernel's test
# tables, from the delta_kernel crate on crates.io (tests/tools/delta-kernel/crate), into
# tests/tools/delta-kernel/tables, and delta-rs's, from the deltalake source distribution on the
# Python package index (tests/tools/delta-rs/sdist), into tests/tools/delta-rs/tables. Java, Maven, curl and zstd come from scripts/install-deps.sh.
# Quick and silent when they are already installed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tools="$root/tests/tools"

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "install-test-tools: node and npm are needed (Debian: apt-get install nodejs npm)" >&2
  exit 1
fi
# Installed already when the lock file's packages are present and load.
if [[ ! -d "$tools/node_modules/@duckdb/node-api" ]] || [[ ! -x "$tools/node_modules/.bin/azurite-blob" ]] ||
   ! (cd "$tools" && node -e "import('@duckdb/node-api').then(() => process.exit(0), () => process.exit(1))" 2>/dev/null); then
  echo "== installing DuckDB and Azurite in $tools"
  (cd "$tools" && npm ci --no-audit --no-fund --loglevel=error)
fi

# The pinned packages are installed when the requirements the venv was last installed from are
# these (a copy is kept beside it) and pyarrow loads.
venv="$tools/venv"
if [[ ! -x "$venv/bin/python" ]] || ! "$venv/bin/python" -c "import pyarrow" 2>/dev/null ||
   ! cmp -s "$tools/requirements.txt" "$venv/installed-requirements.txt"; then
  echo "== installing pyarrow, pyspark, deltalake and moto in $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$tools/requirements.txt"
  cp "$tools/requirements.txt" "$venv/installed-requirements.txt"
fi

# Each broker version is installed when its Kafka jar is in its folder.
kafka="$tools/kafka"
for version in $(grep -v '^#' "$kafka/versions"); do
  if [[ ! -f "$kafka/libs/$version/kafka_2.13-$version.jar" ]]; then
    echo "== installing the Kafka $version broker in $kafka/libs/$version"
    rm -rf "$kafka/libs/$version"
    (cd "$kafka" && mvn -q -B -Dkafka.version="$version" dependency:copy-dependencies \
      -DoutputDirectory="libs/$version" -DincludeScope=runtime)
  fi
done

# Spark with Delta Lake, in a virtual environment of its own (Delta follows Spark's releases later
# than the conformance oracle above does).
delta_spark="$tools/delta-spark"
if [[ ! -x "$delta_spark/venv/bin/python" ]] || ! "$delta_spark/venv/bin/python" -c "import pyspark" 2>/dev/null ||
   ! cmp -s "$delta_spark/requirements.txt" "$delta_spark/venv/installed-requirements.txt"; then
  echo "== installing pyspark for Delta Lake in $delta_spark/venv"
  python3 -m venv "$delta_spark/venv"
  "$delta_spark/venv/bin/pip" install --quiet --disable-pip-version-check -r "$delta_spark/requirements.txt"
  cp "$delta_spark/requirements.txt" "$delta_spark/venv/installed-requirements.txt"
fi
if ! ls "$delta_spark"/jars/delta-spark_*.jar >/dev/null 2>&1; then
  echo "== installing the Delta Lake jars in $delta_spark/jars"
  rm -rf "$delta_spark/jars"
  (cd "$delta_spark" && mvn -q -B dependency:copy-dependencies -DoutputDirectory=jars -DexcludeTransitive=true)
fi

# The Delta kernel's test tables: the crate's tests/data, its .tar.zst tables unpacked beside the
# others. Installed when the version recorded beside them is the pinned one.
kernel="$tools/delta-kernel"
read -r crate_version crate_sha256 < <(grep -v '^#' "$kernel/crate")
if ! cmp -s <(echo "$crate_version") "$kernel/tables/.version" 2>/dev/null; then
  echo "== installing the Delta kernel's test tables (delta_kernel $crate_version) in $kernel/tables"
  download=$(mktemp -d)
  curl -sSfL --retry 3 -o "$download/delta_kernel.crate" \
    "https://static.crates.io/crates/delta_kernel/delta_kernel-$crate_version.crate"
  echo "$crate_sha256  $download/delta_kernel.crate" | sha256sum -c --quiet
  tar -xzf "$download/delta_kernel.crate" -C "$download" "delta_kernel-$crate_version/tests/data"
  rm -rf "$kernel/tables"
  mv "$download/delta_kernel-$crate_version/tests/data" "$kernel/tables"
  for packed in "$kernel/tables"/*.tar.zst; do
    tar --zstd -xf "$packed" -C "$kernel/tables" --warning=no-unknown-keyword
    rm "$packed"
  done
  echo "$crate_version" > "$kernel/tables/.version"
  rm -rf "$download"
fi

# delta-rs's test tables: the source distribution's crates/test/tests/data.
delta_rs="$tools/delta-rs"
read -r sdist_version sdist_path sdist_sha256 < <(grep -v '^#' "$delta_rs/sdist")
if ! cmp -s <(echo "$sdist_version") "$delta_rs/tables/.version" 2>/dev/null; then
  echo "== installing delta-rs's test tables (deltalake $sdist_version) in $delta_rs/tables"
  download=$(mktemp -d)
  curl -sSfL --retry 3 -o "$download/deltalake.tar.gz" "https://files.pythonhosted.org/$sdist_path"
  echo "$sdist_sha256  $download/deltalake.tar.gz" | sha256sum -c --quiet
  tar -xzf "$download/deltalake.tar.gz" -C "$download" "deltalake-$sdist_version/crates/test/tests/data"
  rm -rf "$delta_rs/tables"
  mv "$download/deltalake-$sdist_version/crates/test/tests/data" "$delta_rs/tables"
  echo "$sdist_version" > "$delta_rs/tables/.version"
  rm -rf "$download"
fi
