#!/usr/bin/env bash
# The engines on the files themselves: Spark (profkit's data source), DuckDB and Polars read the
# conformance cases and a cluster of hosts straight from the profiles, and agree row for row with
# the Parquet dataset `profkit convert --to parquet` writes and with `profkit inspect --json`;
# docs/scale.md's queries give the same answers from the files as from the dataset (check.py).
#
# Usage: conformance/engines/check.sh        (from anywhere in the repository)
# Uses the venv of the Parquet check (<repo>/.oracle/arrow, ARROW_VENV elsewhere: DuckDB, pyarrow,
# Spark) with Polars added, and the wheel conformance/python/check.sh builds (built here when it
# is missing), installed into that venv.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="${ARROW_VENV:-$repo/.oracle/arrow}"
polars_pin=polars==2.1.0
cd "$repo"

if ! "$venv/bin/python" -c "import duckdb, pyarrow, pyspark" >/dev/null 2>&1; then
    echo "the Parquet check's venv ($venv) is missing: run conformance/arrow/check.sh first" >&2
    exit 1
fi
"$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('polars') != '${polars_pin#*==}')" 2>/dev/null \
    || "$venv/bin/pip" install --quiet "$polars_pin"

target="${CARGO_TARGET_DIR:-$repo/target}"
wheel="$(ls "$target"/wheels/profkit-*.whl 2>/dev/null | head -1 || true)"
if [ -z "$wheel" ]; then
    build="${PYTHON_VENV:-$repo/.oracle/python}"
    [ -x "$build/bin/maturin" ] || { python3 -m venv "$build"; "$build/bin/pip" install --quiet maturin==1.16.0; }
    "$build/bin/maturin" build --quiet --release -m crates/profkit-python/Cargo.toml -o "$target/wheels" -i "$build/bin/python"
    wheel="$(ls "$target"/wheels/profkit-*.whl | head -1)"
fi
"$venv/bin/pip" install --quiet --force-reinstall --no-deps "$wheel"

if ! command -v java >/dev/null 2>&1; then
    echo "installing a Java runtime for Spark (Debian's openjdk-17-jre-headless)"
    apt-get update -qq && apt-get install -y -qq openjdk-17-jre-headless >/dev/null
fi

# Spark in local mode talks to itself only.
export SPARK_LOCAL_IP="${SPARK_LOCAL_IP:-127.0.0.1}"
cargo build -q -p profkit
exec "$venv/bin/python" "$here/check.py" --repo "$repo" --profkit "$target/debug/profkit" "$@"
