#!/usr/bin/env bash
# Checks profkit against the real paddlepaddle 3.3.1: `profkit report` of the legacy Profile files
# Paddle writes has the rows, order and calls of the report Paddle prints, profkit decodes its
# node trees completely, and `profkit report` of its node trees (and of its Chrome traces) prints
# the tables `Profiler.summary()` prints (see check.py for the programs and the checks).
#
# Usage: conformance/paddle/check.sh                 (from anywhere in the repository)
#        conformance/paddle/check.sh --save DIR      also saves the static program's Profile and
#                                                    report into DIR (input.pb, paddle-report.txt)
#        conformance/paddle/check.sh --save-summary DIR   also saves the static summary run as a
#                                                    conformance case into DIR
# The venv lives in <repo>/.oracle/paddle (git-ignored) and is reused when it already imports
# paddle 3.3.1, so CI can cache it. Set PADDLE_VENV to use another one.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="${PADDLE_VENV:-$repo/.oracle/paddle}"
version="3.3.1"

has_paddle() {
    "$venv/bin/python" - "$version" <<'PY' >/dev/null 2>&1
import sys
import paddle
sys.exit(0 if paddle.__version__ == sys.argv[1] else 1)
PY
}

if ! has_paddle; then
    echo "installing paddlepaddle $version into $venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet "paddlepaddle==$version"
    has_paddle || { echo "paddlepaddle $version did not install into $venv" >&2; exit 1; }
fi

cd "$repo"
exec "$venv/bin/python" "$here/check.py" --repo "$repo" "$@"
