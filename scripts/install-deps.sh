#!/usr/bin/env bash
# Installs every Debian 12 package that building, testing and running sluice needs.
# Idempotent, and quick when everything is present. Run as root (or with sudo).
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build pkg-config ccache clang libclang-rt-14-dev git
  # libraries
  librdkafka-dev libpq-dev libsimdjson-dev libprotobuf-dev libprotoc-dev protobuf-compiler libzstd-dev
  libsnappy-dev zlib1g-dev libyaml-cpp-dev libcli11-dev libfmt-dev libspdlog-dev
  libcurl4-openssl-dev libssl-dev prometheus-cpp-dev libicu-dev librocksdb-dev
  # tcmalloc, the allocator of the sluice binary
  libgoogle-perftools-dev
  # tests and benchmarks
  googletest libgtest-dev libgmock-dev libbenchmark-dev libavro-dev
  # services the tests and the demo start
  postgresql-15 postgresql-client-15
  # PostGIS, whose types the PostgreSQL tests read as their text form
  postgresql-15-postgis-3
  # DuckDB (the independent reader in interoperability tests) comes from npm, pyarrow from the
  # Python package index into a virtual environment
  nodejs npm python3 python3-venv
  # the Python package (pip install .) builds against Python's headers
  python3-dev
  # the real Kafka broker of the integration tests runs on Java (its jars come from the Maven
  # registry); the tests make its certificates with openssl
  openjdk-17-jre-headless maven openssl
  # the CLI test renders `sluice man` with groff to check the page
  groff-base
  # the Delta kernel's test tables come as a crate from crates.io, some packed with zstd
  curl zstd
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
# A node from elsewhere on PATH (with its own npm) serves as well as Debian's.
if command -v node >/dev/null && command -v npm >/dev/null; then
  filtered=()
  for p in "${missing[@]}"; do [[ "$p" == nodejs || "$p" == npm ]] || filtered+=("$p"); done
  missing=("${filtered[@]}")
fi
# So does a Java 17 or newer and a Maven from elsewhere (the machine's JDK).
if command -v java >/dev/null && command -v mvn >/dev/null &&
   java -version 2>&1 | grep -Eq 'version "(1[7-9]|[2-9][0-9])'; then
  filtered=()
  for p in "${missing[@]}"; do [[ "$p" == openjdk-17-jre-headless || "$p" == maven ]] || filtered+=("$p"); done
  missing=("${filtered[@]}")
fi

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""
  [[ $(id -u) -eq 0 ]] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
