#!/usr/bin/env bash
# Checks profkit's Chrome trace import against HolisticTraceAnalysis 0.5.0, the real client of
# PyTorch profiler (Kineto) traces: for every Kineto trace of the corpus with GPU kernels, the
# kernels profkit puts on each GPU stream line agree with HTA's parse on their count and total
# duration (see check.py); HTA loads the traces profkit writes back with the original's rows; and
# `profkit hta` gives HTA's own analyses' frames on those traces (see hta_analyses.py).
#
# Usage: conformance/chrome/check.sh        (from anywhere in the repository)
# The venv lives in <repo>/.oracle/hta (git-ignored) and is reused when it already imports
# HolisticTraceAnalysis 0.5.0, so CI can cache it. Set HTA_VENV to use another one.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="${HTA_VENV:-$repo/.oracle/hta}"
version="0.5.0"

has_hta() {
    "$venv/bin/python" - "$version" <<'PY' >/dev/null 2>&1
import sys
from importlib.metadata import version
import hta.common.trace
sys.exit(0 if version("HolisticTraceAnalysis") == sys.argv[1] else 1)
PY
}

if ! has_hta; then
    echo "installing HolisticTraceAnalysis $version into $venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet "HolisticTraceAnalysis==$version"
    has_hta || { echo "HolisticTraceAnalysis $version did not install into $venv" >&2; exit 1; }
fi

cd "$repo"
cargo build --quiet -p profkit
"$venv/bin/python" "$here/check.py" --repo "$repo" "$@"
# HTA's analyses (breakdowns, overlap, launch statistics, trace counters) against profkit hta.
exec "$venv/bin/python" "$here/hta_analyses.py" --repo "$repo"
