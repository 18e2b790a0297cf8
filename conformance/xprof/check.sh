#!/usr/bin/env bash
# Checks that the real xprof (2.24.2) reads every XSpace in conformance/xplane/, as given and as
# re-encoded by profkit: its trace_viewer tool must return JSON with traceEvents, not None. First,
# that the OpStats schema under proto/xprof/ is xprof's own (conformance/xprof/protos.py). Last,
# that `profkit xprof TOOL` writes what xprof's tools return (conformance/xprof/tools_check.py).
#
# Usage: conformance/xprof/check.sh            (from anywhere in the repository)
#        BLESS=1 conformance/xprof/check.sh    also saves xprof's output as
#                                              conformance/xplane/<case>/xprof.trace_viewer.json
#        CONFORMANCE_CASE=TEXT conformance/xprof/check.sh   only the cases whose name contains TEXT
# The venv lives in <repo>/.oracle/xprof (git-ignored) and is reused when it already holds xprof
# 2.24.2, so CI can cache it. Set XPROF_VENV to use another one.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="${XPROF_VENV:-$repo/.oracle/xprof}"
version="2.24.2"

has_xprof() {
    "$venv/bin/python" - "$version" <<'PY' 2>/dev/null
import sys
from importlib.metadata import version
import xprof.convert.raw_to_tool_data  # noqa: F401  (fails when the native part is missing)
sys.exit(0 if version("xprof") == sys.argv[1] else 1)
PY
}

if ! has_xprof; then
    echo "installing xprof $version into $venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --no-deps "xprof==$version" protobuf six
    has_xprof || { echo "xprof $version did not install into $venv" >&2; exit 1; }
fi

cd "$repo"
# The OpStats schema profkit-xprof compiles (proto/xprof/) is xprof's: the vendored files are what
# xprof's descriptors print, and what protox compiles of them equals those descriptors.
fds="${CARGO_TARGET_DIR:-$repo/target}/op_stats_schema.fds"
cargo run -q -p profkit-xprof --example op_stats_schema > "$fds"
"$venv/bin/python" "$here/protos.py" "$repo" --check --compare "$fds"
# The part of XLA's HLO schema profkit decodes (proto/xla/) keeps XLA's fields: checked against
# XLA's descriptors as TensorFlow ships them, where a TensorFlow venv is at hand (TF_VENV).
tf_venv="${TF_VENV:-$repo/.oracle/tensorflow}"
if [ -x "$tf_venv/bin/python" ]; then
    "$tf_venv/bin/python" "$here/hlo_subset_check.py" "$repo"
fi
"$venv/bin/python" "$here/check.py" --repo "$repo"
# xprof's other tools, live, against `profkit xprof TOOL` on the same cases, and memory_profile
# on its own cases (conformance/xprof-tools/memory_profile/).
"$venv/bin/python" "$here/tools_check.py" --repo "$repo"
exec "$venv/bin/python" "$here/memory_profile_check.py"
