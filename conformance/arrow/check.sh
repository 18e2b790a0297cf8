#!/usr/bin/env bash
# Checks profkit's Parquet datasets (`profkit convert ... --to parquet`) against real readers:
# DuckDB and pyarrow read the dataset of every XSpace, Chrome and Paddle conformance case and find
# the event counts and durations `profkit inspect --json` reports; Spark (local mode) runs the
# SQL of docs/scale.md over a dataset of several hosts and gets DuckDB's answers (see check.py).
#
# Usage: conformance/arrow/check.sh        (from anywhere in the repository)
# The venv lives in <repo>/.oracle/arrow (git-ignored) and is reused when it already has the
# pinned versions, so CI can cache it; ARROW_VENV names another one. Spark needs Java 17 or later:
# when `java` is missing, a headless JRE is installed from Debian's packages.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="${ARROW_VENV:-$repo/.oracle/arrow}"
pins=(duckdb==2.0.0 pyarrow==26.0.1 pyspark==4.3.0)

has_clients() {
    "$venv/bin/python" - "${pins[@]}" <<'PY' >/dev/null 2>&1
import sys
from importlib.metadata import version
sys.exit(0 if all(version(p.split("==")[0]) == p.split("==")[1] for p in sys.argv[1:]) else 1)
PY
}

if ! has_clients; then
    echo "installing ${pins[*]} into $venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet "${pins[@]}"
    has_clients || { echo "the clients did not install into $venv" >&2; exit 1; }
fi

java_major() {
    java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1
}
if ! command -v java >/dev/null 2>&1 || [ "$(java_major)" -lt 17 ]; then
    echo "installing a headless Java runtime for Spark"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless >/dev/null
fi

cd "$repo"
# Spark in local mode talks to itself only.
export SPARK_LOCAL_IP="${SPARK_LOCAL_IP:-127.0.0.1}"
cargo build -q -p profkit
exec "$venv/bin/python" "$here/check.py" --repo "$repo" --profkit "${CARGO_TARGET_DIR:-$repo/target}/debug/profkit" "$@"
