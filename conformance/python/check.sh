#!/usr/bin/env bash
# The profkit Python package against real Python clients: builds the wheel with maturin, installs
# it into a venv with pyarrow, pandas, pytest and protobuf, and runs the pytest files here on the
# conformance cases (test_profkit.py: the CLI's answers and errors; test_protobuf_peer.py: Python
# protobuf's view of every XSpace case; test_large.py: a large file streamed with bounded memory).
#
# Usage: conformance/python/check.sh [pytest args]     (from anywhere in the repository)
# The venv lives in <repo>/.oracle/python (git-ignored) and is reused when it has the pinned
# versions, so CI can cache it; PYTHON_VENV names another. The wheel is rebuilt on every run.
# PROFKIT_PY_LARGE_MB sizes the large file (512 by default; the benchmark uses several GB).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="${PYTHON_VENV:-$repo/.oracle/python}"
pins=(maturin==1.16.0 pyarrow==26.0.1 pandas==3.1.1 pytest==9.2.0 protobuf==7.36.2 grpcio-tools==1.85.1 tqdm==4.70.1)

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

cd "$repo"
wheels="$repo/target/wheels"
rm -f "$wheels"/profkit-*.whl
# Release: the large-file test streams hundreds of megabytes.
"$venv/bin/maturin" build --quiet --release -m crates/profkit-python/Cargo.toml -o "$wheels" -i "$venv/bin/python"
"$venv/bin/python" -m pip install --quiet --force-reinstall --no-deps "$wheels"/profkit-*.whl

cd "$here"
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider "$@" .
